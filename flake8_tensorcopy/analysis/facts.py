"""One walk over a module's syntax tree that collects the facts every rule reads.

The walk records, for each scope (module, class body, function), where each name is bound and
loaded, in source order; the import aliases of the file; which loops are training loops; and, for
every node a rule asked for, the context it sits in (scope, enclosing function and class, grad
mode, enclosing loops, isinstance guards). Rules then run over those nodes; nothing walks twice.
"""
from __future__ import annotations

import ast
import bisect
import functools
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterator, Optional

from . import api
from .bindings import Bind, Binding, Pos, end_of, pos_of
from .flow import Flow
from ..text import python_line_ends

MATCH_CASE = getattr(ast, "match_case", ())  # Python 3.10+

GRAD_OFF_CALLS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"}
)
GRAD_ON_CALLS = frozenset({"torch.enable_grad", "torch.autograd.enable_grad"})
SET_GRAD = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
TENSOR_TYPES = frozenset({"torch.Tensor"}) | PARAMETER_CLASSES
TRAINING_CALLS = frozenset({"backward", "step"})
GRAD_CALLS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})  # autograd's functions that backpropagate
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class Scope:
    node: ast.AST
    parent: Optional["Scope"]
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    loads: dict[str, list[Pos]] = field(default_factory=dict)
    backward_names: set[str] = field(default_factory=set)  # names with `.backward()` called on them
    backward_at: dict[str, list[Pos]] = field(default_factory=dict)  # name -> where those calls are
    backward_paths: set[str] = field(default_factory=set)  # attribute paths backpropagated: `out.loss.backward()`
    backward_plain: set[str] = field(default_factory=set)  # ...but as a factor of a product (`(err * w)`)
    starts: dict[str, list[Pos]] = field(default_factory=dict)  # where each binding starts, by name
    unsorted: set[str] = field(default_factory=set)  # names whose bindings were not met in source order
    flow: Optional[object] = None  # the control-flow graph (flow.Flow), built when first asked
    grad_switches: dict = field(default_factory=dict)  # statement `torch.set_grad_enabled(b)`: start -> grad off
    params: Optional[frozenset] = None  # the names the scope's def binds as parameters, once asked

    def is_param(self, name: str) -> bool:
        """`name` is a parameter of the scope's def (the set is made once, after the walk)."""
        if self.params is None:
            self.params = frozenset(n for n, bs in self.bindings.items() if any(b.kind == Bind.ARG for b in bs))
        return name in self.params

    def bind(self, b: Binding) -> None:
        self.bindings.setdefault(b.name, []).append(b)
        starts = self.starts.setdefault(b.name, [])
        if starts and b.pos < starts[-1]:
            self.unsorted.add(b.name)
        starts.append(b.pos)

    def _latest_first(self, name: str, pos: Pos) -> Iterator[Binding]:
        """The bindings of `name` that start at or before `pos`, the latest first (found by bisection: a
        name bound thousands of times, as in a notebook, made each question scan them all)."""
        bindings = self.bindings.get(name)
        if not bindings:
            return
        end = len(bindings) if name in self.unsorted else bisect.bisect_right(self.starts[name], pos)
        for i in range(end - 1, -1, -1):
            yield bindings[i]

    def binding_before(self, name: str, pos: Pos) -> Optional[Binding]:
        """The last binding of `name` in this scope that starts before `pos`, else the enclosing scope's."""
        for b in self._latest_first(name, pos):  # source order: the first from the end that is complete at `pos`
            if b.end <= pos:  # (`x = f(x)`: the read inside the statement sees the earlier binding)
                return b
        scope = self.parent
        while scope is not None:  # an enclosing scope's name: its last binding
            if scope.bindings.get(name):
                return scope.bindings[name][-1]
            scope = scope.parent
        return None

    def origin(self, name: str, pos: Pos) -> Optional[Binding]:
        """The binding of `name` in this scope that gave it its current object at `pos`:
        augmented assignments (`z += 1`) keep the object, so they are skipped."""
        for b in self._latest_first(name, pos):
            if b.end <= pos and b.kind != Bind.AUG:
                return b
        return None

    def reaching(self, name: str, pos: Pos) -> list[Binding]:
        """The bindings of `name` in this scope that may give its value at `pos`, from the scope's
        control-flow graph (analysis/flow.py). Where `pos` is in no statement of the graph (a decorator):
        the last one in source order, and while that one sits in a conditional body that does not hold
        `pos`, the ones before it."""
        if name not in self.bindings:
            return []
        found = self._flow().reaching(name, pos)
        if found is not None:
            return found
        found = []
        for b in self._latest_first(name, pos):
            if b.end <= pos and b.kind != Bind.AUG:  # `x = f(x)`: the read inside sees the earlier binding
                found.append(b)
                if b.block is None or b.block[0] <= pos <= b.block[1]:
                    break
        return found

    def read_later(self, name: str, pos: Pos) -> Optional[bool]:
        """Whether a path from `pos` reads `name` before rebinding it (analysis/flow.py); None when `pos`
        is in no statement of the graph."""
        return self._flow().read_later(name, pos)

    def escapes(self, start: Pos, stops: list[Pos]) -> Optional[bool]:
        """Whether a path from the statement at `start` leaves the scope without passing one at `stops`
        (analysis/flow.py); None when `start` is in no statement of the graph."""
        return self._flow().escapes(start, stops)

    def passes_again(self, start: Pos, loop: ast.AST, stops: list[Pos]) -> Optional[bool]:
        """Whether a path from the statement at `start` runs the next pass of `loop` and comes back to it
        without passing one at `stops` (analysis/flow.py); None when a position is in no statement."""
        return self._flow().passes_again(start, loop, stops)

    def reaches(self, start: Pos, end: Pos) -> bool:
        """Whether a path leads from the statement at `start` to the one at `end` (analysis/flow.py)."""
        return self._flow().reaches(start, end)

    def grad_off_at(self, pos: Pos) -> bool:
        """Whether a statement `torch.set_grad_enabled(False)` of this scope turned grad off on every path
        to `pos` (and no `set_grad_enabled(True)` turned it back on)."""
        return bool(self.grad_switches) and self._flow().grad_off_at(pos)

    def _flow(self):
        if self.flow is None:
            self.flow = Flow(self)
        return self.flow

    def loads_after(self, name: str, pos: Pos) -> list[Pos]:
        return [p for p in self.loads.get(name, ()) if p > pos]

    def loads_between(self, name: str, start: Pos, end: Pos) -> list[Pos]:
        return [p for p in self.loads.get(name, ()) if start < p < end]


@dataclass(frozen=True)
class Frame:
    """Where a node sits. Frames are immutable and shared, so recording one per node is cheap."""

    scope: Scope
    func: Optional[ast.AST] = None  # innermost FunctionDef / AsyncFunctionDef / Lambda
    cls: Optional[ast.ClassDef] = None
    grad_disabled: bool = False
    loops: tuple[ast.AST, ...] = ()
    guards: frozenset = frozenset()  # names proven to be tensors by an enclosing isinstance check
    funcs: tuple[ast.AST, ...] = ()  # all enclosing functions, outermost first
    block: Optional[tuple[Pos, Pos]] = None  # innermost conditional body (if / loop / except / case)


class FileFacts:
    """Facts about one file; `nodes` lists (node, frame) for the node types that were asked for."""

    tensor_functions: frozenset = frozenset()  # user-declared tensor-returning functions (config)
    cell_ends: frozenset = frozenset()  # a notebook's program: the lines that end a code cell (set by the engine)
    path: Optional[str] = None  # where the file is, for the modules it imports (analysis/project.py)

    def __init__(self, tree: ast.Module, source: str, wanted: tuple[type, ...],
                 hot_lines: Optional[list[int]] = None):
        """`hot_lines`, sorted, are the lines where some rule's trigger text occurs: a function or
        class that holds none of them is bound but not walked (no rule could fire inside it)."""
        self.tree = tree
        self._hot = hot_lines
        self.source = python_line_ends(source)
        self.aliases: dict[str, str] = {}
        self.training_loops: set[int] = set()
        self.no_grad_loops: set[int] = set()  # ids of `for` loops that run under no_grad / inference_mode
        self.classes_with_state_dict: set[str] = set()
        self.discarded: set[int] = set()  # ids of calls that are a whole statement: result unused
        self.elements: dict[int, Binding] = {}  # id(name read in a comprehension) -> the generator binding it
        self.memo: dict = {}  # evidence answers per (question, expression, position, frame): each once
        self._indexes: dict = {}
        self.nodes: list[tuple[ast.AST, Frame]] = []
        self.module_scope = Scope(tree, None)
        self.module_frame = Frame(self.module_scope)
        self._wanted = wanted
        self._frames: dict[int, Frame] = {}  # id(def) -> the frame inside it (its body's)
        self._outer: dict[int, Frame] = {}  # id(def) -> the frame it is defined in, walked or not
        self._walk(tree)

    @functools.cached_property
    def lines(self) -> list[str]:
        """The physical lines, split when a rule first reads them (most files report nothing)."""
        return physical_lines(self.source)

    # ---- indexes: a subtree walked once, however many nodes ask about it ---------------------
    def index(self, build: Callable, root: ast.AST, *args):
        """`build(self, root, *args)`, computed once per file. Rules ask the same question about a whole
        function for every node they check; walking it each time was quadratic in its size."""
        key = (build, id(root), args)
        if key not in self._indexes:
            self._indexes[key] = build(self, root, *args)
        return self._indexes[key]

    def at(self, root: ast.AST, pos: Pos) -> Optional[ast.AST]:
        """The outermost node of `root` that starts at `pos` (None when none does)."""
        return self.index(_links, root)[1].get(pos)

    def grad_off(self, frame: "Frame", pos: Pos) -> bool:
        """Grad is off at `pos` of the function (or module) whose frame is `frame`: the frame's mode, then
        every `with` around `pos` from the outermost in (`no_grad()`, `enable_grad()`), or a
        `torch.set_grad_enabled(False)` of the scope on every path to it."""
        grad = frame.grad_disabled
        root = frame.func if frame.func is not None else self.tree
        around = self.enclosing(root, pos) if pos in self.index(_links, root)[1] else []
        for node in reversed(around):
            for item in node.items if isinstance(node, (ast.With, ast.AsyncWith)) else ():
                grad = self.grad_after(item.context_expr, grad)
        return grad or frame.scope.grad_off_at(pos)

    def enclosing(self, root: ast.AST, pos: Pos) -> list[ast.AST]:
        """The nodes of `root` that hold the node starting at `pos`, innermost first (below `root`);
        every node of `root` when no node starts there."""
        parents, starts = self.index(_links, root)
        node = starts.get(pos)
        if node is None:
            return list(walk(root))
        found = []
        while id(node) in parents:
            node = parents[id(node)]
            found.append(node)
        return found

    # ---- names -------------------------------------------------------------------------------
    def qualname(self, expr: ast.AST) -> Optional[str]:
        """`th.nn.functional.relu` -> 'torch.nn.functional.relu' through the file's import aliases."""
        parts = []
        while isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        base = self.aliases.get(expr.id)
        if base is None:
            if expr.id in ("torch", "copy", "numpy"):
                base = expr.id
            elif expr.id == "np":
                base = "numpy"
            else:
                return None
        parts.append(base)
        return ".".join(reversed(parts))

    def _import(self, node: ast.AST) -> None:
        """Record import aliases as the walk meets them (imports come before their uses)."""
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.aliases[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    self.aliases.setdefault(top, top)
        elif node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    # ---- the walk ----------------------------------------------------------------------------
    def _walk(self, tree: ast.Module) -> None:
        wanted = self._wanted
        record = self.nodes.append
        stack: list[tuple[ast.AST, Frame]] = [(tree, self.module_frame)]
        while stack:
            node, frame = stack.pop()
            if isinstance(node, wanted):
                record((node, frame))
            children = self._children(node, frame)
            stack.extend(reversed(children))

    def function_frame(self, node: ast.AST) -> Optional[Frame]:
        """The frame inside def `node` (for summaries of what it returns and how it is called). A def the
        walk skipped (no trigger text) is walked now, once, binding its names without giving rules its
        nodes; a method of a class the walk skipped is walked in that class's frame."""
        frame = self._frames.get(id(node))
        if frame is None and id(node) in self._outer:
            hot, self._hot = self._hot, None  # walk everything inside, record nothing
            try:
                stack = [(node, self._outer[id(node)])]
                while stack:
                    child, at = stack.pop()
                    stack.extend(reversed(self._children(child, at)))
            finally:
                self._hot = hot
            frame = self._frames.get(id(node))
        return frame

    def _children(self, node: ast.AST, frame: Frame) -> list[tuple[ast.AST, Frame]]:
        visit = VISIT.get(type(node))
        if visit is not None:
            return visit(self, node, frame)
        return [] if type(node) is ast.Constant else _plain(node, frame)  # binds and changes nothing

    def _name(self, node: ast.Name, frame: Frame) -> list:
        if isinstance(node.ctx, ast.Load):
            frame.scope.loads.setdefault(node.id, []).append((node.lineno, node.col_offset))
        return []

    def _class(self, node: ast.ClassDef, frame: Frame) -> list:
        scope = frame.scope
        if any(isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == "state_dict" for f in node.body):
            self.classes_with_state_dict.add(node.name)
        if scope is not None:
            scope.bind(Binding(node.name, pos_of(node), end_of(node), Bind.OTHER, node=node))
        inner = Frame(Scope(node, scope), frame.func, node, frame.grad_disabled, (), frame.guards, frame.funcs)
        if self._cold(node):  # its methods are walked when a summary asks (function_frame)
            self._outer.update((id(d), inner) for d in node.body if isinstance(d, DEFS))
            return []
        outer = [(d, frame) for d in node.decorator_list] + [(b, frame) for b in node.bases]
        outer += [(k, frame) for k in node.keywords]
        return outer + [(s, inner) for s in node.body]

    def _assign(self, node: ast.AST, frame: Frame) -> list:
        self._bind_assign(node, frame)
        return _plain(node, frame)

    def _for(self, node: ast.AST, frame: Frame) -> list:
        if frame.grad_disabled:
            self.no_grad_loops.add(id(node))
        for name in _target_names(node.target):
            frame.scope.bind(Binding(name, pos_of(node), pos_of(node.iter), Bind.FOR, value=node.iter, node=node))
        loop = _replace(frame, loops=frame.loops + (node,), block=_span(node.body))
        return [(node.target, frame), (node.iter, frame)] + [(s, loop) for s in node.body] + [
            (s, _branch(frame, node.orelse)) for s in node.orelse
        ]

    def _while(self, node: ast.While, frame: Frame) -> list:
        loop = _replace(frame, loops=frame.loops + (node,), block=_span(node.body))
        return [(node.test, frame)] + [(s, loop) for s in node.body] + [
            (s, _branch(frame, node.orelse)) for s in node.orelse
        ]

    def _with(self, node: ast.AST, frame: Frame) -> list:
        grad = frame.grad_disabled
        for item in node.items:
            grad = self.grad_after(item.context_expr, grad)
            if item.optional_vars is not None:
                for name in _target_names(item.optional_vars):
                    frame.scope.bind(Binding(name, pos_of(node), end_of(item.context_expr), Bind.WITH, node=node))
        inner = frame if grad == frame.grad_disabled else _replace(frame, grad_disabled=grad)
        return [(i, frame) for i in node.items] + [(s, inner) for s in node.body]

    def _if(self, node: ast.If, frame: Frame) -> list:
        guarded = _tensor_guards(node.test, self)
        body = _branch(frame, node.body, frame.guards | guarded)
        orelse = _branch(frame, node.orelse)
        return [(node.test, frame)] + [(s, body) for s in node.body] + [(s, orelse) for s in node.orelse]

    def _imports(self, node: ast.AST, frame: Frame) -> list:
        self._import(node)
        for a in node.names:
            name = a.asname or a.name.split(".")[0]
            frame.scope.bind(Binding(name, pos_of(node), end_of(node), Bind.IMPORT, node=node))
        return _plain(node, frame)

    def _delete(self, node: ast.Delete, frame: Frame) -> list:
        for t in node.targets:
            for name in _target_names(t):
                frame.scope.bind(Binding(name, pos_of(node), end_of(node), Bind.DEL, node=node))
        return _plain(node, frame)

    def _except(self, node: ast.ExceptHandler, frame: Frame) -> list:
        if node.name:
            frame.scope.bind(Binding(node.name, pos_of(node), pos_of(node), Bind.OTHER, node=node))
        handler = _branch(frame, node.body)
        return ([(node.type, frame)] if node.type else []) + [(s, handler) for s in node.body]

    def _case(self, node: ast.AST, frame: Frame) -> list:
        case = _branch(frame, node.body)
        return [(node.pattern, frame)] + ([(node.guard, frame)] if node.guard else []) + [
            (s, case) for s in node.body]

    def _expr(self, node: ast.Expr, frame: Frame) -> list:
        if isinstance(node.value, ast.Call):
            self.discarded.add(id(node.value))
            call = node.value
            if self.qualname(call.func) in SET_GRAD and len(call.args) == 1 and isinstance(call.args[0], ast.Constant):
                frame.scope.grad_switches[pos_of(node)] = call.args[0].value is False
        return _plain(node, frame)

    def _comprehension(self, node: ast.AST, frame: Frame) -> list:
        """A comprehension's variables live in its own scope: each read of one (in a later generator's
        iterable, a condition, the element) is recorded with the generator binding it, an element of that
        generator's iterable (`p` of `{n: p.clone() for n, p in model.named_parameters()}`)."""
        bound: dict[str, Binding] = {}
        for i, gen in enumerate(node.generators):
            if i:
                self._element_reads(gen.iter, bound)
            for name in _target_names(gen.target):
                bound[name] = Binding(name, pos_of(node), pos_of(node), Bind.FOR, value=gen.iter, node=gen,
                                      grad_off=frame.grad_disabled)
            for cond in gen.ifs:
                self._element_reads(cond, bound)
        for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
            self._element_reads(part, bound)
        return _plain(node, frame)

    def _element_reads(self, expr: ast.AST, bound: dict) -> None:
        """Record the reads in `expr` of the names `bound` binds (not inside a lambda, which has its own)."""
        todo = [expr]
        while todo:
            node = todo.pop()
            if isinstance(node, ast.Name) and node.id in bound and isinstance(node.ctx, ast.Load):
                self.elements[id(node)] = bound[node.id]
            elif not isinstance(node, ast.Lambda):
                todo.extend(children(node))

    def _call(self, node: ast.Call, frame: Frame) -> list:
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if (isinstance(func, ast.Attribute) and last in TRAINING_CALLS
                or last == "grad" and self.qualname(func) in GRAD_CALLS):  # `torch.autograd.grad(...)`, `grad(...)`
            self.training_loops.update(id(loop) for loop in frame.loops)
        if isinstance(func, ast.Attribute) and func.attr == "backward":
            for target in [func.value] + node.args[:1]:  # loss.backward(), accelerator.backward(loss)
                roots = _backward_roots(target)
                frame.scope.backward_plain.update(roots - _factors(target))
                frame.scope.backward_names.update(roots)
                if isinstance(target, ast.Attribute) and dotted(target) is not None:
                    frame.scope.backward_paths.add(dotted(target))
                for name in roots:
                    frame.scope.backward_at.setdefault(name, []).append(pos_of(node))
        return _plain(node, frame)

    def _cold(self, node: ast.AST) -> bool:
        """No trigger text between the first decorator and the end of this def / class."""
        if self._hot is None:
            return False
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        i = bisect.bisect_left(self._hot, start)
        return i == len(self._hot) or self._hot[i] > node.end_lineno

    def _function(self, node: ast.AST, frame: Frame) -> list[tuple[ast.AST, Frame]]:
        scope = frame.scope
        if not isinstance(node, ast.Lambda):
            if id(node) in self._frames:
                return []  # walked on demand already
            if id(node) not in self._outer:  # (bound already when walked on demand)
                scope.bind(Binding(node.name, pos_of(node), end_of(node), Bind.OTHER, node=node))
                self._outer[id(node)] = frame
            if self._cold(node):
                return []
        inner_scope = Scope(node, scope)
        grad = frame.grad_disabled
        decorators = getattr(node, "decorator_list", [])
        for d in decorators:
            grad = self.grad_after(d, grad)
        args = node.args
        for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
            if a is not None:
                inner_scope.bind(Binding(a.arg, pos_of(node), pos_of(node), Bind.ARG, annotation=a.annotation, node=a))
        inner = Frame(inner_scope, node, frame.cls, grad, (), frame.guards, frame.funcs + (node,))
        self._frames[id(node)] = inner
        outer = [(d, frame) for d in decorators] + [(d, frame) for d in args.defaults + args.kw_defaults if d]
        outer += [(a.annotation, frame) for a in args.posonlyargs + args.args + args.kwonlyargs if a.annotation]
        body = node.body if isinstance(node.body, list) else [node.body]
        return outer + [(s, inner) for s in body]

    def _bind_assign(self, node: ast.AST, frame: Frame) -> None:
        scope, off = frame.scope, frame.grad_disabled
        if isinstance(node, ast.Assign):
            targets, value, kind, ann = node.targets, node.value, Bind.ASSIGN, None
        elif isinstance(node, ast.AnnAssign):
            targets, value, kind, ann = [node.target], node.value, Bind.ANNASSIGN, node.annotation
        elif isinstance(node, ast.AugAssign):
            targets, value, kind, ann = [node.target], None, Bind.AUG, None
        else:
            targets, value, kind, ann = [node.target], node.value, Bind.ASSIGN, None
        for t in targets:
            if isinstance(t, ast.Name):
                scope.bind(Binding(t.id, pos_of(node), end_of(node), kind, value, ann, node, off, frame.block))
            elif (isinstance(t, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))
                  and len(t.elts) == len(value.elts) and not any(isinstance(e, ast.Starred) for e in t.elts)):
                for elt, part in zip(t.elts, value.elts):  # `x, y = t["x"], t["y"]`: element by element
                    if isinstance(elt, ast.Name):
                        scope.bind(Binding(elt.id, pos_of(node), end_of(node), kind, part, None, node, off,
                                           frame.block))
                    else:
                        for name in _target_names(elt):
                            scope.bind(Binding(name, pos_of(node), end_of(node), Bind.OTHER, node=node))
            elif isinstance(t, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in t.elts):
                for i, elt in enumerate(t.elts):  # `emb, labels = extract(...)`: the element a function returns
                    for name in _target_names(elt):
                        index = i if isinstance(elt, ast.Name) else None
                        how = Bind.UNPACK if index is not None else Bind.OTHER
                        scope.bind(Binding(name, pos_of(node), end_of(node), how, value, None, node, off, frame.block,
                                           index))
            else:
                for name in _target_names(t):
                    scope.bind(Binding(name, pos_of(node), end_of(node), Bind.OTHER, node=node))

    def grad_after(self, expr: ast.expr, grad: bool) -> bool:
        """Grad mode inside `with expr:` or under decorator `expr`, given the mode outside."""
        call = expr.func if isinstance(expr, ast.Call) else expr
        q = self.qualname(call)
        if q in GRAD_OFF_CALLS:
            if (isinstance(expr, ast.Call) and expr.args and _is_false_const(expr.args[0])
                    and q.endswith("inference_mode")):
                return grad
            return True
        if q in GRAD_ON_CALLS:
            return False
        if q in SET_GRAD and isinstance(expr, ast.Call) and expr.args:
            arg = expr.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, bool):
                return not arg.value
        return grad

    # ---- helpers rules use -------------------------------------------------------------------
    def segment(self, node: ast.AST) -> str:
        """ast.get_source_segment from the lines, without re-splitting the whole file per call."""
        end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        if end_line is None or end_col is None or not 0 < node.lineno <= end_line <= len(self.lines):
            return ""
        chunk = [line.encode("utf-8") for line in self.lines[node.lineno - 1:end_line]]
        chunk[-1] = chunk[-1][:end_col]
        chunk[0] = chunk[0][node.col_offset:]
        return b"".join(chunk).decode("utf-8", "replace")


# The node types the walk looks at itself, and how; it passes through every other node.
VISIT = {ast.Name: FileFacts._name, ast.FunctionDef: FileFacts._function, ast.AsyncFunctionDef: FileFacts._function,
         ast.Lambda: FileFacts._function, ast.ClassDef: FileFacts._class, ast.Assign: FileFacts._assign,
         ast.AnnAssign: FileFacts._assign, ast.AugAssign: FileFacts._assign, ast.NamedExpr: FileFacts._assign,
         ast.For: FileFacts._for, ast.AsyncFor: FileFacts._for, ast.While: FileFacts._while,
         ast.With: FileFacts._with, ast.AsyncWith: FileFacts._with, ast.If: FileFacts._if,
         ast.Import: FileFacts._imports, ast.ImportFrom: FileFacts._imports, ast.Delete: FileFacts._delete,
         ast.ExceptHandler: FileFacts._except, ast.Expr: FileFacts._expr, ast.Call: FileFacts._call,
         ast.ListComp: FileFacts._comprehension, ast.SetComp: FileFacts._comprehension,
         ast.GeneratorExp: FileFacts._comprehension, ast.DictComp: FileFacts._comprehension}
if MATCH_CASE:
    VISIT[MATCH_CASE] = FileFacts._case


def _plain(node: ast.AST, frame: Frame) -> list[tuple[ast.AST, Frame]]:
    return [(c, frame) for c in children(node)]


# Fields that never hold a node: names, numbers, strings; and the expression context (Load / Store / Del),
# a node no rule looks at (rules read `.ctx`). TypeAlias.name (3.12) is an expression.
LEAF_FIELDS = frozenset({"ctx", "id", "attr", "arg", "name", "module", "level", "conversion", "is_async", "kind",
                         "tag", "type_comment", "rest", "kwd_attrs"})
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def children(node: ast.AST) -> list[ast.AST]:
    """ast.iter_child_nodes(node) without the expression contexts, as a list; twice as fast."""
    fields = _NODE_FIELDS.get(type(node))
    if fields is None:
        kind = type(node)
        leaves = LEAF_FIELDS - {"name"} if kind.__name__ == "TypeAlias" else LEAF_FIELDS
        if kind in (ast.Constant, ast.MatchSingleton):
            leaves = leaves | {"value"}
        fields = _NODE_FIELDS[kind] = tuple(f for f in kind._fields if f not in leaves)
    found = []
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            found.append(value)
        elif type(value) is list:
            found += [v for v in value if isinstance(v, ast.AST)]
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk (breadth first, `node` first) without the expression contexts; twice as fast."""
    todo = deque([node])
    while todo:
        node = todo.popleft()
        todo.extend(children(node))
        yield node


def _tensor_guards(test: ast.expr, facts: FileFacts) -> frozenset:
    """Names an `if` test proves to be tensors: `isinstance(x, torch.Tensor)` or `torch.is_tensor(x)`,
    alone or as a conjunct of `and`; not under `not` / `or`, nor with a non-tensor type in the tuple."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return frozenset().union(*(_tensor_guards(v, facts) for v in test.values))
    if not (isinstance(test, ast.Call) and test.args):
        return frozenset()
    types = test.args[1] if len(test.args) == 2 else None
    if facts.qualname(test.func) == "torch.is_tensor" or (
        isinstance(test.func, ast.Name) and test.func.id == "isinstance" and types is not None
        and all(facts.qualname(t) in TENSOR_TYPES or _last(t) in ("Tensor", "Parameter")
                for t in (types.elts if isinstance(types, ast.Tuple) else [types]))
    ):
        key = guard_key(test.args[0])
        return frozenset({key}) if key else frozenset()
    return frozenset()


def _last(expr: ast.AST) -> Optional[str]:
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Name):
        return expr.id
    return None


def _links(facts: "FileFacts", root: ast.AST) -> tuple[dict[int, ast.AST], dict[Pos, ast.AST]]:
    """Each node's parent (by id) below `root`, and the outermost node starting at each position."""
    parents: dict[int, ast.AST] = {}
    starts: dict[Pos, ast.AST] = {}
    todo = deque([root])
    while todo:  # breadth first: outer nodes first
        node = todo.popleft()
        if hasattr(node, "lineno"):
            starts.setdefault((node.lineno, node.col_offset), node)
        below = children(node)
        for child in below:
            parents[id(child)] = node
        todo.extend(below)
    return parents, starts


def dotted(expr: ast.AST) -> Optional[str]:
    """'self.model.weight' for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return None


def guard_key(expr: ast.AST) -> Optional[str]:
    """How an isinstance guard names its subject: 'x', 'self.h', or "batch['img']" for a constant subscript."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        inner = guard_key(expr.value)
        return f"{inner}[{expr.slice.value!r}]" if inner else None
    return dotted(expr)


def _backward_roots(expr: ast.AST) -> set[str]:
    """Names a backward pass runs through: `loss` in `loss.backward()`, `(a + b).mean().backward()`,
    `torch.stack(losses).sum().backward()`, `scaler.scale(loss).backward()` (not `scaler`: a method that
    is not a tensor's takes the value as an argument)."""
    if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
        base = _base_name(expr)
        return {base} if base else set()
    if isinstance(expr, ast.BinOp):
        return _backward_roots(expr.left) | _backward_roots(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _backward_roots(expr.operand)
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and api.method(func.attr) is not None:
            return _backward_roots(func.value)
        return set().union(*(_backward_roots(a) for a in expr.args))
    return set()


def _factors(expr: ast.AST) -> set[str]:
    """The roots of a backward target that it only multiplies or divides another root by (`(err * w)`: both
    `err` and `w`): which of them holds the graph the backward does not say (`w` may be a number)."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and api.method(expr.func.attr) is not None:
        return _factors(expr.func.value)  # (err * w).mean()
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
        left, right = _backward_roots(expr.left), _backward_roots(expr.right)
        return left | right if left and right else _factors(expr.left) | _factors(expr.right)
    return set()


def _base_name(expr: ast.AST) -> Optional[str]:
    """The name at the root of `a.b(...)[i].c`, if there is one."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        elif isinstance(expr, ast.Call):
            expr = expr.func
        else:
            return None


base_name = _base_name


def _target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for e in target.elts:
            yield from _target_names(e)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def target_path(target: ast.AST, name: str) -> Optional[tuple[int, ...]]:
    """Where `name` sits in an unpacking target: () for `name` itself, (1,) for `n, name`, (1, 0) for
    `i, (name, y)`; None when it is not there plainly (a starred or attribute target)."""
    if isinstance(target, ast.Name):
        return () if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        for i, e in enumerate(target.elts):
            inner = target_path(e, name)
            if inner is not None:
                return (i,) + inner
    return None


def _is_false_const(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is False


def self_attribute(node: ast.AST, subscripts: bool = False) -> Optional[str]:
    """`attr` of `self.attr` (and of `self.attr[key]...` with `subscripts`), else None."""
    while subscripts and isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def assigned(stmt: ast.AST, whole: bool = True) -> list[tuple[ast.expr, ast.expr]]:
    """(target, value) of an assignment, for each target of `a = b = v` and element by element for
    `self.a, self.b = x, y`; an element of a tuple target whose value is not seen (`self.h, self.c =
    self.rnn(x)`) gets the whole value, or is left out without `whole`."""
    found = []
    for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):
        if isinstance(target, (ast.Tuple, ast.List)):
            value = stmt.value
            same = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
            found += [(t, value.elts[i] if same else value) for i, t in enumerate(target.elts) if same or whole]
        else:
            found.append((target, stmt.value))
    return found


ADDERS = {"append": 0, "appendleft": 0, "insert": 1}  # container methods: the argument kept as an entry


def entry_added(node: ast.AST) -> Optional[tuple[ast.expr, ast.expr]]:
    """(container, entry) of `c.append(v)`, `c.appendleft(v)`, `c.insert(i, v)`; None for anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        index = ADDERS.get(node.func.attr)
        if index is not None and len(node.args) == index + 1:
            return node.func.value, node.args[index]
    return None


def within(stmts: list, pos: Pos) -> bool:
    """`pos` lies in the statements `stmts` (a non-empty body)."""
    return pos_of(stmts[0]) <= pos <= end_of(stmts[-1])


def _span(body: list) -> Optional[tuple[Pos, Pos]]:
    return (pos_of(body[0]), end_of(body[-1])) if body else None


def _branch(frame: Frame, body: list, guards: frozenset = None) -> Frame:
    """The frame of a conditional body: its bindings may not happen."""
    return _replace(frame, block=_span(body), guards=frame.guards if guards is None else guards)


def _replace(frame: Frame, **changes) -> Frame:
    values = {f: getattr(frame, f) for f in ("scope", "func", "cls", "grad_disabled", "loops", "guards", "funcs",
                                             "block")}
    values.update(changes)
    return Frame(**values)


LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lines_of(pattern: re.Pattern, source: str) -> list[tuple[int, str]]:
    """(line, group 1, else the match) of each match of `pattern`, counting lines ("\\n") once over the text."""
    found, line, last = [], 1, 0
    for m in pattern.finditer(source):
        line += source.count("\n", last, m.start())
        last = m.start()
        found.append((line, m.group(1) if pattern.groups else m.group()))
    return found


def physical_lines(source: str) -> list[str]:
    """The lines as Python numbers them (ends kept): only \\r\\n, \\r and \\n end a line, whereas
    str.splitlines also splits at form feeds, \\x1c-\\x1e, \\x85 and \\u2028, shifting every line after."""
    return LINE.findall(source)
