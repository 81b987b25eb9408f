"""What trains a module, read from the code: calls that update its weights (`loss.backward()`,
`optimizer.step()`, a call named for training that involves the module, a trainer's `run` / `fit`) and
where they are in a function; and loops that train the torch way (backpropagate, step an optimizer, or
call a training step of the file), each such fact about a loop computed once per file.
"""
from __future__ import annotations

import ast

from . import frameworks, names, optimizers, project, summaries
from .facts import GRAD_CALLS, Bind, base_name, children, dotted, pos_of, walk
from .position import Position

MAX_DEPTH = 3  # package defs followed from a call that passes them the module
LOOPS = (ast.For, ast.AsyncFor, ast.While)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

TRAINER_RUNS = frozenset({"run", "fit", "train", "learn"})
MODE_SWITCH = frozenset({"train", "eval"})
WORDS = ("backward", "step", "grad", "training_step")  # one of them is in the text of a module that trains


def training_calls(ctx, module) -> list:
    """Positions of the training calls in the function (or the module), sorted."""
    return ctx.facts.index(_trainings, ctx.frame.func if ctx.frame.func is not None else ctx.facts.tree, module)


def _trainings(facts, root, module) -> list:
    body = root.body if isinstance(root.body, list) else [root.body]
    frame = facts.function_frame(root) if root is not facts.tree else None
    frame = frame or facts.module_frame
    calls = [n for stmt in body for n in walk(stmt)
             if isinstance(n, ast.Call) and is_training_call(n, module, facts, frame.scope, frame)]
    return sorted(pos_of(n) for n in _updating(calls, module, root, frame.scope, facts))


def _updating(calls: list, module, root, scope, facts) -> list:
    """The training calls that may change `module`'s weights. Where every optimizer step of the code is
    known to update other modules only (`opt = SGD(student.parameters())`) and `module` shares no
    parameters with them (analysis/optimizers.py), its backward passes and steps change nothing of it:
    a teacher's snapshot does not move with the student's training."""
    if module in (None, "self"):
        return calls
    steps = [c for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr == "step"]
    stepped = [optimizers.stepped(c, scope, facts) for c in steps]
    if not steps or any(s is None or module in s for s in stepped):
        return calls
    if not optimizers.kept_apart(module, root, scope, frozenset().union(*stepped), facts):
        return calls
    return [c for c in calls if not (isinstance(c.func, ast.Attribute) and c.func.attr in ("step", "backward"))]


def is_training_call(call: ast.Call, module, facts, scope, frame=None, depth: int = 0) -> bool:
    """`loss.backward()`, `optimizer.step()`; a framework's training entry point given the module
    (analysis/frameworks.py: `trainer.fit(model)`, `Trainer(model=model).train()`); a def of the package
    passed the module whose body trains it (`run_epoch(model, loader)`, with `frame`); a call named for
    training (`fit`, `train_epoch`) that involves the module (its receiver or an argument, or a function of
    the file that reads it); a trainer's or engine's `run` / `fit` / `train` (`trainer.run(loader)`)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if not name:
        return False
    if module is not None and (frameworks.trains_argument(call, module)
                               or _framework_built(func, module, call, scope, facts)):
        return True
    mode_switch = not call.keywords and (not call.args or (
        len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, bool)))
    if (isinstance(func, ast.Attribute) and name in TRAINER_RUNS and _built_with(func.value, module, call, scope)
            and not (name in MODE_SWITCH and mode_switch)):
        return True  # sbs = StepByStep(model, loss_fn, optimizer); sbs.train(n_epochs)
    if name in MODE_SWITCH and isinstance(func, ast.Attribute) and len(call.args) <= 1 and not call.keywords:
        return False  # model.train() / model.eval(): a mode switch, no update
    if name == "backward":
        return not differentiable_grad(call)  # `backward(create_graph=True)`: gradients to differentiate, no update
    if name == "step":
        return not (isinstance(func, ast.Attribute) and names.OTHER_OBJECT(dotted(func.value)))
    if isinstance(func, ast.Attribute) and names.TRAINER(base_name(func.value)) and name in TRAINER_RUNS:
        return True
    if frame is not None and module is not None and _package_def_trains(call, module, facts, frame, depth):
        return True
    if not names.TRAINING_FUNC(name):
        return False
    if frame is not None:
        fn = summaries.callee(call, Position(facts, frame, pos_of(call)), pos_of(call))
        if isinstance(fn, summaries.DEFS) and not code_trains(fn, facts, depth):
            return False  # the package's code of `train_step` / `fit` trains nothing, whatever its name says
    if module is None:
        return True
    involved = {n.id for n in walk(call) if isinstance(n, ast.Name)}
    return module in involved or (isinstance(func, ast.Name) and _reads_global(func.id, module, facts))


def code_trains(fn, facts, depth: int = 0) -> bool:
    """The code of def `fn` (of the file of `facts`, or of a neighbouring module) runs a training step: a
    backward, an optimizer's step, a trainer's run, a framework method that trains what it is given, or a def
    of the package it calls that does. A call of code the package does not hold counts when named for
    training: there the name is all the evidence."""
    home = project.home(fn) or facts
    key = ("code-trains", id(fn))
    if key not in home.memo:
        home.memo[key] = False  # recursion trains nothing
        inner = home.function_frame(fn)
        home.memo[key] = any(isinstance(n, ast.Call) and _call_trains(n, home, inner, depth)
                             for stmt in fn.body for n in walk(stmt))
    return home.memo[key]


def _call_trains(call: ast.Call, facts, frame, depth: int) -> bool:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if isinstance(func, ast.Attribute) and (
            name == "backward" and not differentiable_grad(call)
            or (name == "step" and not names.OTHER_OBJECT(dotted(func.value)))
            or name in frameworks.TRAINS_ARGUMENT or (names.TRAINER(base_name(func.value)) and name in TRAINER_RUNS)):
        return True
    if facts.qualname(func) in GRAD_CALLS:
        return not differentiable_grad(call)
    fn = summaries.callee(call, Position(facts, frame, pos_of(call)), pos_of(call)) if frame is not None else None
    if isinstance(fn, summaries.DEFS):
        return depth < MAX_DEPTH and code_trains(fn, facts, depth + 1)
    return bool(name) and names.TRAINING_FUNC(name)


def _built_with(recv, module, call, scope) -> bool:
    """`recv` is a name bound (before `call`) to an object built with the module as an argument."""
    if module is None or not isinstance(recv, ast.Name):
        return False
    b = scope.binding_before(recv.id, pos_of(call))
    made = b.value if b is not None and b.kind == Bind.ASSIGN else None
    return isinstance(made, ast.Call) and any(isinstance(a, ast.Name) and a.id == module
                                              for a in made.args + [k.value for k in made.keywords])


def _framework_built(func, module: str, call: ast.Call, scope, facts) -> bool:
    """`trainer.train()` on `trainer = Trainer(model=module, ...)` (bound before the call), or
    `Trainer(model=module).train()`: a framework object built with the module, running the method that
    trains it."""
    if not isinstance(func, ast.Attribute):
        return False
    made = func.value
    if isinstance(made, ast.Name):
        b = scope.binding_before(made.id, pos_of(call))
        made = b.value if b is not None and b.kind == Bind.ASSIGN else None
    return frameworks.built_trainer_method(made, module, facts.qualname) == func.attr


def _package_def_trains(call: ast.Call, module: str, facts, frame, depth: int) -> bool:
    """`call` runs a def of the package (the file or a neighbouring module) that is passed the module for
    a parameter and trains that parameter: a training call of its own body (a backward, an optimizer
    step, a framework's fit) or of a def it passes the parameter on to."""
    if depth >= MAX_DEPTH or not any(_is_name(a, module) for a in call.args + [k.value for k in call.keywords]):
        return False
    fn = summaries.callee(call, Position(facts, frame, pos_of(call)), pos_of(call))
    if not isinstance(fn, summaries.DEFS):
        return False
    params = [p.arg for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    given = [p for p in params if _is_name(summaries.passed(fn, p, call), module)]
    return any(trains_parameter(fn, p, facts, frame, depth + 1) for p in given)


def trains_parameter(fn, param: str, facts, frame, depth: int = 0) -> bool:
    """Def `fn` (of the file of `facts`, or of a neighbouring module) trains what its caller passes for
    `param`: a call of its own body trains it (is_training_call, with the parameter as the module)."""
    home = project.home(fn) or facts
    key = ("trains-parameter", id(fn), param)
    if key not in home.memo:
        home.memo[key] = False  # recursion trains nothing
        inner = home.function_frame(fn)
        home.memo[key] = inner is not None and any(
            isinstance(n, ast.Call) and is_training_call(n, param, home, inner.scope, inner, depth)
            for stmt in fn.body for n in walk(stmt))
    return home.memo[key]


def _is_name(expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


def _reads_global(function: str, name: str, facts) -> bool:
    """A module-level function of the file that reads `name` (a notebook's `train()` using `model`)."""
    return name in facts.index(_global_reads, facts.tree).get(function, ())


def _global_reads(facts, tree) -> dict:
    found: dict = {}
    for d in tree.body:
        if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.setdefault(d.name, set()).update(n.id for n in walk(d) if isinstance(n, ast.Name))
    return found


def torch_training(loop, ctx) -> bool:
    return per_loop(ctx, loop, "torch-training", trains)


def calls_step(loop, ctx) -> bool:
    """The loop calls a training step of the file (`self.train_one_batch(x, y)`): a def that calls
    `backward()` once, outside any loop of its own (a def that loops over batches is an epoch, not a step)."""
    return per_loop(ctx, loop, "calls-step", lambda loop, ctx: any(
        isinstance(n, ast.Call) and is_step(summaries.callee(n, ctx, pos_of(n)), ctx) for n in walk(loop)))


def is_step(fn, ctx) -> bool:
    """`fn` (of the file, or of a neighbouring module: asked in its own file) trains once per call: its body
    backpropagates or steps an optimizer, or calls, outside any loop of its own, a def of the package that
    is a step (`self.apply_gradients(loss)`); no loop of its body trains (a def that loops over batches is
    an epoch, not a step). Each def is asked once per file; a def calling itself is no step through that call."""
    if not isinstance(fn, summaries.DEFS):
        return False
    home = project.home(fn)
    if home is not None:
        frame = home.function_frame(fn)
        if frame is None:
            return False
        ctx = Position(home, frame, pos_of(fn))
    key = ("is-step", id(fn))
    memo = ctx.facts.memo
    if key not in memo:
        memo[key] = False
        memo[key] = (trains(fn, ctx) or _steps_through_a_call(fn, ctx)) and not any(
            isinstance(n, LOOPS) and trains(n, ctx) for n in walk(fn))
    return memo[key]


def _steps_through_a_call(fn, ctx) -> bool:
    """A call in `fn`'s body, outside its loops and nested defs, runs a def that is a step."""
    frame = ctx.facts.function_frame(fn)
    if frame is None:
        return False
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, LOOPS + SCOPES):
            continue
        if isinstance(node, ast.Call):
            inner = Position(ctx.facts, frame, pos_of(node))
            if is_step(summaries.callee(node, inner, inner.pos), inner):
                return True
        stack.extend(children(node))
    return False


def trains(loop, ctx) -> bool:
    """The loop backpropagates or steps an optimizer the torch way: `loss.backward()`,
    `accelerator.backward(loss)`, `torch.autograd.grad(...)` (neither with `create_graph=True`),
    `optimizer.step()`; a hand-written `model.backward(out, y, lr)` or `env.step(action)` alone does not
    make a torch training loop."""
    if not any(q == "torch" or q.startswith("torch.") for q in ctx.facts.aliases.values()):
        return False
    for n in walk(loop):
        if not isinstance(n, ast.Call):
            continue
        func = n.func
        if isinstance(func, ast.Attribute):
            if func.attr == "backward" and len(n.args) <= 1 and not differentiable_grad(n):
                return True
            if func.attr == "step" and names.OPTIMIZER_NAME(_receiver_name(func.value)):
                return True
        if ctx.facts.qualname(func) in GRAD_CALLS and not differentiable_grad(n):
            return True
    return False


def differentiable_grad(call: ast.Call) -> bool:
    """`torch.autograd.grad(..., create_graph=True)`, `loss.backward(create_graph=True)`: gradients that are
    themselves part of a graph (a meta-learning inner step, a gradient penalty), computed to be
    backpropagated later, not a step."""
    return any(k.arg == "create_graph" and not (isinstance(k.value, ast.Constant) and not k.value.value)
               for k in call.keywords)


def _receiver_name(expr) -> str:
    while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
        if isinstance(expr, ast.Attribute):
            return expr.attr
        expr = expr.value if isinstance(expr, ast.Subscript) else expr.func
    return expr.id if isinstance(expr, ast.Name) else ""


def steps_optimizer(loop, ctx) -> bool:
    return per_loop(ctx, loop, "steps", lambda loop, _: steps([loop]))


def steps(stmts) -> bool:
    """Some node of `stmts` steps an optimizer (`opt.step()`, `self.optimizer.step()`)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "step"
               and names.OPTIMIZER_NAME(_receiver_name(n.func.value)) for s in stmts for n in walk(s))


def over_models(loop, ctx) -> bool:
    """A `for` loop over models, not over steps: it steps optimizers, and each one it steps is the one its
    target selects (`for k in agents: opts[k].step()`, `for agent in agents: agent.optimizer.step()`), so
    a pass updates another model, each once per pass of the loop around it."""
    return per_loop(ctx, loop, "over-models", _over_models)


def _over_models(loop, ctx) -> bool:
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    target = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
    stepped = [n.func.value for n in walk(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "step" and names.OPTIMIZER_NAME(_receiver_name(n.func.value))]
    return bool(stepped) and all(_selected_by(recv, target) for recv in stepped)


def _selected_by(recv, target: set) -> bool:
    """`opts[k]` or `k.optimizer` (`k.opts["actor"]`) for a name `k` of `target`."""
    if isinstance(recv, ast.Subscript) and isinstance(recv.slice, ast.Name) and recv.slice.id in target:
        return True
    while isinstance(recv, (ast.Attribute, ast.Subscript)):
        recv = recv.value
    return isinstance(recv, ast.Name) and recv.id in target


def calls_backward(loop, ctx) -> bool:
    """The loop backpropagates: `x.backward()`, `torch.autograd.grad(...)` or `torch.autograd.backward(...)`,
    not a differentiable step (`create_graph=True`)."""
    return per_loop(ctx, loop, "backward", lambda loop, ctx: any(
        isinstance(n, ast.Call) and not differentiable_grad(n) and (
            isinstance(n.func, ast.Attribute) and n.func.attr == "backward" or ctx.facts.qualname(n.func) in GRAD_CALLS)
        for n in walk(loop)))


def per_loop(ctx, loop, question: str, answer):
    """A fact about a loop (or function), computed once per file (every accumulation in it asks)."""
    key = ("loop-fact", question, id(loop))
    if key not in ctx.facts.memo:
        ctx.facts.memo[key] = answer(loop, ctx)
    return ctx.facts.memo[key]
