"""Reaching bindings from a control-flow graph of one scope's statements.

`Flow(scope)` builds the graph once, when a rule first asks which bindings of a name may give it its
value at a point: branches, loops (to a fixed point: a binding late in a loop body reaches a read at its
top on the next pass), `break` / `continue` / `return` / `raise`, `try` (any statement of the body may
jump to a handler or the `finally`), `with`, `match`. A node is a simple statement or the header of a
compound one (an `if` test, a `for` iterator and its target, ...); nested defs and classes are one node
(their bodies are other scopes). Augmented assignments keep the object, so they neither give nor kill.

Reaching bindings are found as a compiler builds SSA form, so memory and time grow with the statements,
not with statements x bindings (bit masks per node took 3.4 GB for 100k assignments in one scope): the
dominator tree of the graph, then per name asked, the joins where its bindings meet (the iterated
dominance frontier of the nodes binding it). The value at a node is that of the nearest node above it
in the dominator tree that binds the name or joins it; a join's value is the union of what its
predecessors give, through loops too.
"""
from __future__ import annotations

import ast
import bisect
from typing import Optional

from .bindings import Bind, Pos, end_of, pos_of

LOOPS = (ast.For, ast.AsyncFor, ast.While)
TRY = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)
MATCH = getattr(ast, "Match", ())


class Flow:
    def __init__(self, scope):
        self.scope = scope
        self.starts: list[Pos] = []  # node spans, in creation order (sorted before lookups)
        self.ends: list[Pos] = []
        self.succ: list[list[int]] = []
        self._loops: list[tuple[int, list[int]]] = []  # (continue target, break sources) of enclosing loops
        self.exits: set[int] = set()  # where the scope is left normally: a `return`, the end of its body
        self._finally = 0  # inside a `try` with a `finally` (a `return` there runs the `finally` first)
        self._roots: list[int] = []  # nodes made with no predecessor (the entry, code after a `return`)
        self._build(scope.node)
        self.bindings = [b for bs in scope.bindings.values() for b in bs if b.kind != Bind.AUG]
        self._order = sorted(range(len(self.starts)), key=lambda i: self.starts[i])
        self._sorted_starts = [self.starts[i] for i in self._order]
        self._place_bindings()
        self._dominators()
        self._joins: dict[str, tuple] = {}  # name -> (its definers sorted by preorder, their preorders, joins)
        self._join_values: dict[tuple[str, int], tuple] = {}
        self._live: dict[str, tuple] = {}
        self._grad_off: Optional[list[bool]] = None

    # ---- the graph ---------------------------------------------------------------------------
    def _node(self, start: Pos, end: Pos, preds: list[int]) -> int:
        i = len(self.starts)
        if not preds:
            self._roots.append(i)
        self.starts.append(start)
        self.ends.append(end)
        self.succ.append([])
        for p in preds:
            self.succ[p].append(i)
        return i

    def _link(self, preds: list[int], to: int) -> None:
        for p in preds:
            self.succ[p].append(to)

    def _build(self, node: ast.AST) -> None:
        start = pos_of(node) if hasattr(node, "lineno") else (0, 0)
        self.entry = self._node(start, start, [])  # parameters are bound here
        body = node.body if isinstance(getattr(node, "body", None), list) else [node.body]
        if isinstance(node, ast.Lambda):
            self.exits.add(self._node(pos_of(node.body), end_of(node.body), [self.entry]))
        else:
            self.exits.update(self._block(body, [self.entry]))

    def _block(self, stmts: list, preds: list[int]) -> list[int]:
        for s in stmts:
            preds = self._stmt(s, preds)
        return preds

    def _stmt(self, s: ast.stmt, preds: list[int]) -> list[int]:
        if isinstance(s, ast.If):
            test = self._node(pos_of(s.test), end_of(s.test), preds)
            return self._block(s.body, [test]) + self._block(s.orelse, [test])
        if isinstance(s, LOOPS):
            return self._loop(s, preds)
        if isinstance(s, TRY):
            return self._try(s, preds)
        if isinstance(s, (ast.With, ast.AsyncWith)):
            head = self._node(pos_of(s), end_of(s.items[-1].context_expr), preds)
            return self._block(s.body, [head])
        if MATCH and isinstance(s, MATCH):
            subject = self._node(pos_of(s), end_of(s.subject), preds)
            outs, last = [], subject
            for case in s.cases:
                head = case.guard if case.guard is not None else case.pattern
                last = self._node(pos_of(case.pattern), end_of(head), [last])
                outs += self._block(case.body, [last])
            return outs + [last]
        node = self._node(pos_of(s), end_of(s), preds)
        if isinstance(s, ast.Return) and not self._finally:
            self.exits.add(node)
        if isinstance(s, (ast.Return, ast.Raise)):
            return []
        if isinstance(s, (ast.Break, ast.Continue)) and self._loops:
            head, breaks = self._loops[-1]
            (breaks.append(node) if isinstance(s, ast.Break) else self._link([node], head))
            return []
        return [node]

    def _loop(self, s: ast.AST, preds: list[int]) -> list[int]:
        if isinstance(s, ast.While):
            head = self._node(pos_of(s.test), end_of(s.test), preds)
            first = head
            forever = isinstance(s.test, ast.Constant) and bool(s.test.value)
        else:  # the iterator is evaluated once; `head` asks for the next element; `first` binds the target
            it = self._node(pos_of(s.iter), end_of(s.iter), preds)
            head = self._node(pos_of(s.iter), pos_of(s.iter), [it])
            first = self._node(pos_of(s), pos_of(s), [head])  # the For binding's position
            forever = False
        breaks: list[int] = []
        self._loops.append((head, breaks))
        self._link(self._block(s.body, [first]), head)
        self._loops.pop()
        return ([] if forever else self._block(s.orelse, [head])) + breaks

    def _try(self, s: ast.AST, preds: list[int]) -> list[int]:
        first = len(self.starts)
        self._finally += bool(s.finalbody)
        outs = self._block(s.orelse, self._block(s.body, preds))
        raising = list(preds) + list(range(first, len(self.starts)))  # any point of the body may raise
        handlers_first = len(self.starts)
        for h in s.handlers:
            head = self._node(pos_of(h), end_of(h.type) if h.type is not None else pos_of(h), raising)
            outs += self._block(h.body, [head])
        self._finally -= bool(s.finalbody)
        if not s.finalbody:
            return outs
        abrupt = raising + list(range(handlers_first, len(self.starts)))  # returns and raises pass through
        return self._block(s.finalbody, sorted(set(outs + abrupt)))

    # ---- reaching bindings ---------------------------------------------------------------------
    def _node_at(self, pos: Pos) -> Optional[int]:
        k = bisect.bisect_right(self._sorted_starts, pos) - 1
        while k >= 0:
            i = self._order[k]
            if self.ends[i] >= pos:
                return i
            if self.starts[i] < pos:
                return None
            k -= 1
        return None

    def _place_bindings(self) -> None:
        """Per node, the binding of each name it gives (the latest in the node wins) and the bindings made
        inside it; per name, the nodes that bind it."""
        self._rank = {id(b): k for k, b in enumerate(self.bindings)}
        self._gen: dict[int, dict[str, object]] = {}
        self._inside: dict[int, list] = {}  # node -> the bindings made inside it (not parameters)
        self._binders: dict[str, list[int]] = {}
        for b in sorted(self.bindings, key=lambda b: b.pos):
            i = self.entry if b.kind == Bind.ARG else self._node_at(b.pos)
            if i is None:
                continue
            if b.kind != Bind.ARG:
                self._inside.setdefault(i, []).append(b)
            names = self._gen.setdefault(i, {})
            if b.name not in names:
                self._binders.setdefault(b.name, []).append(i)
            names[b.name] = b

    def _dominators(self) -> None:
        """The dominator tree (Cooper, Harvey and Kennedy's iteration over reverse postorder) below a root
        that leads to every node made with no predecessor; its preorder, and each node's dominance frontier."""
        n = len(self.starts)
        root = n
        succ = self.succ + [self._roots]
        self.preds: list[list[int]] = [[] for _ in range(n + 1)]
        for i, out in enumerate(succ):
            for j in out:
                self.preds[j].append(i)
        post, seen, stack = [], [False] * (n + 1), [(root, 0)]
        seen[root] = True
        while stack:  # postorder, without recursion
            i, k = stack.pop()
            if k < len(succ[i]):
                stack.append((i, k + 1))
                j = succ[i][k]
                if not seen[j]:
                    seen[j] = True
                    stack.append((j, 0))
            else:
                post.append(i)
        number = [0] * (n + 1)
        for k, i in enumerate(post):
            number[i] = k
        idom = [-1] * (n + 1)
        idom[root] = root
        changed = True
        while changed:
            changed = False
            for i in reversed(post[:-1]):
                new = -1
                for p in self.preds[i]:
                    if idom[p] == -1:
                        continue
                    if new == -1:
                        new = p
                        continue
                    a, b = p, new
                    while a != b:
                        while number[a] < number[b]:
                            a = idom[a]
                        while number[b] < number[a]:
                            b = idom[b]
                    new = a
                if new != idom[i]:
                    idom[i], changed = new, True
        self.idom = idom
        children: list[list[int]] = [[] for _ in range(n + 1)]
        for i in range(n):
            children[idom[i]].append(i)
        self.pre, self.end = [0] * (n + 1), [0] * (n + 1)
        counter, stack = 0, [(root, False)]
        while stack:
            i, done = stack.pop()
            if done:
                self.end[i] = counter
                continue
            self.pre[i] = counter
            counter += 1
            stack.append((i, True))
            stack.extend((c, False) for c in reversed(children[i]))
        self.frontier: dict[int, set[int]] = {}
        for j in range(n):
            if len(self.preds[j]) > 1:
                for p in self.preds[j]:
                    while p != idom[j] and p != root:
                        self.frontier.setdefault(p, set()).add(j)
                        p = idom[p]

    def _definers(self, name: str) -> tuple:
        """(nodes that bind `name` or join its bindings, sorted by preorder; their preorders; the joins;
        each definer's nearest definer above it in the dominator tree)."""
        known = self._joins.get(name)
        if known is not None:
            return known
        binders = self._binders.get(name, [])
        joins: set[int] = set()
        work, done = list(binders), set(binders)
        while work:  # the iterated dominance frontier
            for j in self.frontier.get(work.pop(), ()):
                if j not in joins:
                    joins.add(j)
                    if j not in done:
                        done.add(j)
                        work.append(j)
        definers = sorted(done | joins, key=self.pre.__getitem__)
        above, stack = {}, []
        for d in definers:
            while stack and not self.pre[d] < self.end[stack[-1]]:
                stack.pop()
            above[d] = stack[-1] if stack else None
            stack.append(d)
        known = self._joins[name] = (definers, [self.pre[d] for d in definers], joins, above)
        return known

    def _exit(self, name: str, i: int):
        """What `name` holds leaving node `i`: ("b", binding), ("join", node), or None (unbound)."""
        b = self._gen.get(i, {}).get(name) if i < len(self.starts) else None
        return ("b", b) if b is not None else self._entry(name, i)

    def _entry(self, name: str, i: int):
        """What `name` holds entering node `i`: a join there, else the nearest definer strictly above it."""
        if i >= len(self.starts):
            return None
        definers, pres, joins, above = self._definers(name)
        if i in joins:
            return ("join", i)
        k = bisect.bisect_left(pres, self.pre[i]) - 1
        d = definers[k] if k >= 0 else None
        while d is not None and not self.pre[i] < self.end[d]:
            d = above[d]
        if d is None:
            return None
        b = self._gen.get(d, {}).get(name)
        return ("b", b) if b is not None else ("join", d)

    def _values(self, name: str, value) -> tuple:
        """The bindings `value` stands for: itself, or every binding that reaches a join, through joins."""
        if value is None:
            return ()
        if value[0] == "b":
            return (value[1],)
        key = (name, value[1])
        if key not in self._join_values:
            found, seen, stack = {}, {value[1]}, [value[1]]
            while stack:
                j = stack.pop()
                for p in self.preds[j]:
                    got = self._exit(name, p)
                    if got is None:
                        continue
                    if got[0] == "b":
                        found[id(got[1])] = got[1]
                    elif (name, got[1]) in self._join_values:
                        found.update((id(b), b) for b in self._join_values[(name, got[1])])
                    elif got[1] not in seen:
                        seen.add(got[1])
                        stack.append(got[1])
            self._join_values[key] = tuple(found.values())
        return self._join_values[key]

    def reaching(self, name: str, pos: Pos) -> Optional[list]:
        """The bindings of `name` in this scope that may give its value at `pos`, in source order; None
        when `pos` is in no node (the caller falls back to source order)."""
        i = self._node_at(pos)
        if i is None:
            return None
        inside = [b for b in self._inside.get(i, ()) if b.name == name and b.end <= pos]
        if inside:  # `if (n := len(x)) and n > 1`: bound earlier in the same node
            return inside[-1:]
        found = self._values(name, self._entry(name, i))
        return sorted(found, key=lambda b: (b.pos, self._rank[id(b)]))

    # ---- paths -----------------------------------------------------------------------------------
    def escapes(self, start: Pos, stops: list[Pos]) -> Optional[bool]:
        """Whether some path from the statement at `start` leaves the scope (a `return`, the end of its body)
        without passing a statement at one of `stops`; a `raise` does not count. None when `start` is in
        no node."""
        i = self._node_at(start)
        if i is None:
            return None
        blocked = {self._node_at(p) for p in stops}
        return any(j in self.exits for j in self._after(i, blocked, itself=True))

    def reaches(self, start: Pos, end: Pos) -> bool:
        """Whether some path leads from the statement at `start` to the one at `end`."""
        i, j = self._node_at(start), self._node_at(end)
        return i is not None and j is not None and j in self._after(i, set(), itself=False)

    def passes_again(self, start: Pos, loop: ast.AST, stops: list[Pos]) -> Optional[bool]:
        """Whether some path from the statement at `start` runs the next pass of `loop` and comes back to
        `start` without passing a statement at one of `stops`: what `start` did outlives a pass the stops do
        not end. None when a position is in no node."""
        i = self._node_at(start)
        head = self._node_at(pos_of(loop.test) if isinstance(loop, ast.While) else pos_of(loop))
        if i is None or head is None:
            return None
        blocked = {self._node_at(p) for p in stops} - {None, head}
        if i in blocked:
            return False
        return head in self._after(i, blocked, itself=False) and i in self._after(head, blocked, itself=True)

    def _after(self, i: int, blocked: set, itself: bool) -> set[int]:
        """The nodes some path from node `i` reaches without entering a `blocked` one (with `i` itself)."""
        seen, stack = ({i} if itself else set()), [i]
        while stack:
            for j in self.succ[stack.pop()]:
                if j not in seen and j not in blocked:
                    seen.add(j)
                    stack.append(j)
        return seen

    # ---- reads later (liveness) ----------------------------------------------------------------
    def read_later(self, name: str, pos: Pos) -> Optional[bool]:
        """Whether some path from `pos` reads `name` before a binding of `name` replaces it (a loop's next
        pass included); None when `pos` is in no node."""
        i = self._node_at(pos)
        if i is None:
            return None
        live = self._live.get(name)
        if live is None:
            live = self._live[name] = self._liveness(name)
        reads, live_in = live
        return any(p > pos for p in reads.get(i, ())) or any(live_in[j] for j in self.succ[i])

    def _liveness(self, name: str) -> tuple[dict[int, list[Pos]], list[bool]]:
        """Where each node reads `name`, and for each node whether `name` is read there or on some path
        after it before it is rebound."""
        n = len(self.starts)
        reads: dict[int, list[Pos]] = {}
        for p in self.scope.loads.get(name, ()):
            i = self._node_at(p)
            if i is not None:
                reads.setdefault(i, []).append(p)
        binds = [False] * n
        for b in self.scope.bindings.get(name, ()):
            i = None if b.kind in (Bind.AUG, Bind.ARG) else self._node_at(b.pos)
            if i is not None:
                binds[i] = True
        live = [i in reads for i in range(n)]
        changed = True
        while changed:  # backwards: nodes in reverse source order
            changed = False
            for i in range(n - 1, -1, -1):
                if not live[i] and not binds[i] and any(live[j] for j in self.succ[i]):
                    live[i] = changed = True
        return reads, live

    # ---- grad mode ------------------------------------------------------------------------------
    def grad_off_at(self, pos: Pos) -> bool:
        """Whether every path to `pos` passes a statement `torch.set_grad_enabled(False)` of this scope
        after any `set_grad_enabled(True)`."""
        i = self._node_at(pos)
        if i is None:
            return False
        if self._grad_off is None:
            self._grad_off = self._grad_mode()
        return self._grad_off[i]

    def _grad_mode(self) -> list[bool]:
        n = len(self.starts)
        switch: dict[int, bool] = {}
        for start, off in self.scope.grad_switches.items():
            i = self._node_at(start)
            if i is not None:
                switch[i] = off
        preds: list[list[int]] = [[] for _ in range(n)]
        for i, succ in enumerate(self.succ):
            for j in succ:
                preds[j].append(i)
        off_in = [i != self.entry for i in range(n)]  # "off on every path": from all-true down to the answer
        changed = True
        while changed:
            changed = False
            for i in range(n):
                if i == self.entry:
                    continue
                value = bool(preds[i]) and all(switch.get(p, off_in[p]) for p in preds[i])
                if value != off_in[i]:
                    off_in[i], changed = value, True
        return off_in
