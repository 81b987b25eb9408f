"""The alias-write query TEN101, TEN102 and TEN103 share: which writes reach which storage through
which steps, and which sources count as still used."""
from __future__ import annotations

import ast
import textwrap

import pytest

from flake8_tensorcopy.analysis.aliasing import alias_writes, returned_alias
from flake8_tensorcopy.analysis.facts import FileFacts
from flake8_tensorcopy.rules.context import Context
from flake8_tensorcopy.engine.core import analyse
from flake8_tensorcopy.rules import BY_CODE


def lines(code: str, source: str) -> list[int]:
    return [f.line for f in analyse(textwrap.dedent(source), "t.py", [BY_CODE[code]]).findings]


@pytest.mark.parametrize("source, expected", [
    ("""
     import torch
     class Cell:
         def remember(self):
             z = self.h.detach()
             z.mul_(2)
     """, [6]),  # an attribute of self outlives the method
    ("""
     import torch
     def remember(out):
         z = out.h.detach()
         z.mul_(2)
     """, [5]),  # the caller still holds `out`
    ("""
     import torch
     def remember(make):
         out = make()
         z = out.h.detach()
         z.mul_(2)
         return z
     """, []),  # a local whose attribute nobody reads again
])
def test_attribute_sources(source, expected):
    assert lines("TEN101", source) == expected


def test_a_statement_that_rebinds_the_source_frees_it():
    source = """
    import torch
    def load(read, path):
        pos = read(path)
        pos = torch.from_numpy(pos.values).div_(1000.0)
        return pos
    """
    assert lines("TEN103", source) == []
    kept = source.replace("        pos = torch", "        out = torch").replace("return pos", "return out, pos")
    assert lines("TEN103", kept) == [5]


def test_next_loop_iteration_counts_as_a_later_use():
    source = """
    import torch
    def run(n):
        x = torch.ones(3, requires_grad=True)
        for _ in range(n):
            y = x.sigmoid()
            loss = y.sum()
            d = y.data
            d.mul_(0)
            loss.backward()
    """
    assert lines("TEN102", source) == [9]


def test_a_loop_that_rebinds_the_source_first_does_not_read_the_old_one():
    source = """
    import torch
    def attack(x, restarts, step):
        best = None
        for _ in range(restarts):
            adv = step(x) + torch.zeros(1)
            if best is None:
                best = adv.detach()
            wrong = adv.sum(1) > 0
            best[wrong] = adv[wrong]
        return best
    """
    assert lines("TEN101", source) == []
    rebound_sometimes = """
    import torch
    def attack(x, restarts, step):
        best = None
        adv = x.exp()
        for _ in range(restarts):
            if x.sum() > 0:
                adv = step(x) + torch.zeros(1)
            if best is None:
                best = adv.detach()
            wrong = adv.sum(1) > 0
            best[wrong] = adv[wrong]
        return best
    """
    assert lines("TEN101", rebound_sometimes) == [12]


def writes(source: str) -> list[tuple[int, str, str, str]]:
    """(line, how, family, source) of each alias write the shared query finds, over every statement."""
    tree = ast.parse(textwrap.dedent(source))
    facts = FileFacts(tree, textwrap.dedent(source), (ast.Assign, ast.AugAssign, ast.Expr), None)
    found = []
    for node, frame in facts.nodes:
        for w in alias_writes(node, Context(facts, frame, node, BY_CODE["TEN103"])):
            found.append((node.lineno, w.how, w.alias.family, ast.unparse(w.alias.source)))
    return found


@pytest.mark.parametrize("value, family", [
    ("y.detach()", "detach"),
    ("y.detach().view(-1)", "detach"),
    ("y[0].detach().cpu()", "detach"),
    ("y.detach().to(device)", "detach"),
    ("torch.detach(y)", "detach"),
    ("y.data", "data"),
    ("y.data.t()", "data"),
    ("y.detach().cpu().numpy()", "numpy"),
    ("y.numpy().transpose(1, 0)[:, 0]", "numpy"),
    ("y.numpy().reshape(-1)", "numpy"),
    ("torch.from_numpy(arr).to(device)", "from_numpy"),
    ("torch.from_numpy(arr).cpu().detach()", "from_numpy"),
    ("torch.from_numpy(arr.T)", "from_numpy"),
])
def test_the_query_follows_views_and_moves_that_keep_memory(value, family):
    source = f"""
    import torch
    def f(y, arr, device):
        z = {value}
        z += 1
    """
    found = writes(source)
    assert [(line, how, fam) for line, how, fam, _ in found] == [(5, "name", family)]


@pytest.mark.parametrize("value", [
    "y.clone().detach()",  # a copy first
    "y.detach().double()",  # a cast
    "y.detach()[y > 0]",  # a mask
    "y.detach()[[0, 1]]",  # a list index
    "y.detach().cuda()",  # a CPU tensor copied to the GPU
    "y.detach().to(device, copy=True)",
    "torch.from_numpy(arr).float()",
    "torch.from_numpy(arr).to(device, torch.float32)",
    "torch.from_numpy(arr).to('cuda')",
    "torch.from_numpy(arr).pin_memory()",
    "torch.from_numpy(arr).to(other)",  # another tensor's dtype and device
    "torch.as_tensor(arr)",  # arr is not known to be an array here
    "f(y).detach()",  # a fresh temporary
    "y.view(-1)",  # a view, but nothing creates an alias
])
def test_the_query_stops_at_copies(value):
    source = f"""
    import torch
    def f(y, arr, device, other):
        z = {value}
        z += 1
    """
    assert writes(source) == []


def test_numpy_writers_count_for_arrays_only():
    source = """
    import numpy as np
    import torch
    def f(y):
        a = y.numpy()
        a.sort()
        np.copyto(a, 0)
        z = y.detach()
        z.sort()
    """
    assert [(line, how) for line, how, _, _ in writes(source)] == [(6, "name"), (7, "name")]


def test_from_numpy_moved_to_the_device_aliases_the_array():
    """The ART miss, with the array read after the write: on a CPU run `.to(device)` returns the tensor."""
    source = """
    import torch
    def predict(model, x, device, norm):
        t = torch.from_numpy(x).to(device)
        t /= norm
        return model(t), x.mean()
    """
    assert lines("TEN103", source) == [5]
    assert lines("TEN103", source.replace("to(device)", "to(device, torch.float32)")) == []
    assert lines("TEN103", source.replace(", x.mean()", "")) == []  # only the caller could read x


def test_as_tensor_of_a_known_array():
    source = """
    import numpy as np
    import torch
    def f(path):
        arr = np.load(path)
        t = torch.as_tensor(arr)
        t.mul_(2)
        return arr
    """
    assert lines("TEN103", source) == [7]
    assert lines("TEN103", source.replace("np.load(path)", "[1.0, 2.0]")) == []


def test_data_inside_from_numpy_is_the_array_not_a_tensor_alias():
    source = """
    import torch
    class Set:
        def scaled(self):
            x = torch.from_numpy(self.data)
            x /= 2
            return x
    """
    assert writes(source) == [(6, "name", "from_numpy", "self.data")]


# ---- aliases built in a helper function (returned_alias) ---------------------------------------------
def returned(source: str, name: str, index=None):
    """What the query says def `name` of `source` returns: (parameter, ops, side) or None."""
    source = textwrap.dedent(source)
    facts = FileFacts(ast.parse(source), source, (), None)
    fn = next(n for n in ast.walk(facts.tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    got = returned_alias(fn, Context(facts, facts.module_frame, fn, BY_CODE["TEN103"]), index)
    return got and (got.param, [s.op for s in got.steps], got.side)


def line_of(source: str, text: str) -> int:
    return textwrap.dedent(source).splitlines().index(text.join(["    ", ""])) + 1


HELPERS = """
import numpy as np
import torch

def to_numpy(array, detach=False):
    if isinstance(array, torch.Tensor):
        array = array.cpu()
        if detach:
            array = array.detach()
    return np.asarray(array)

def cast(x, y=None):
    if isinstance(x, np.ndarray):
        x_tensor = torch.from_numpy(x)
    else:
        x_tensor = x
    return x_tensor, y

def either(x):
    return torch.from_numpy(x) if isinstance(x, np.ndarray) else x.detach()

def array_or_copy(x):
    return x if isinstance(x, np.ndarray) else np.array(x)

def alias_or_copy(x):
    return torch.from_numpy(x) if isinstance(x, np.ndarray) else torch.tensor(x)

def copied(t):
    return t.detach().cpu().numpy().copy()

def cloned(a):
    t = torch.from_numpy(a)
    return t.clone()

def to_gpu(a):
    t = torch.from_numpy(a)
    if torch.cuda.is_available():
        t = t.cuda()
    return t

def two_params(a, b):
    if a is None:
        return torch.from_numpy(b)
    return torch.from_numpy(a)

def identity(x):
    return x
"""


@pytest.mark.parametrize("name, index, expected", [
    # padertorch's to_numpy: every binding of `array` that reaches the return comes from the parameter;
    # the path through .cpu() and .detach() is the one that crosses (np.asarray of a tensor)
    ("to_numpy", None, ("array", ["move", "detach", "asarray"], "ndarray")),
    ("cast", 0, ("x", ["from_numpy"], "tensor")),  # ART's cast_inputs_to_pt: the tuple's first element
    ("cast", 1, None),  # y is returned as it is: no alias is made
    ("either", None, ("x", ["from_numpy"], "tensor")),  # both branches of `a if c else b` share
    ("array_or_copy", None, None),  # x itself or a copy: no NumPy/torch alias on any path
    ("alias_or_copy", None, None),  # an alias on one path, a copy on the other
    ("copied", None, None),
    ("cloned", None, None),
    ("to_gpu", None, None),  # .cuda() copies on the path that takes it
    ("two_params", None, None),  # aliases of different parameters
    ("identity", None, None),  # nothing creates an alias
])
def test_what_a_helper_returns(name, index, expected):
    assert returned(HELPERS, name, index) == expected


@pytest.mark.usefixtures("every_fix_offered")  # a fix the rules withhold shows the mechanics
def test_writes_through_a_helpers_alias():
    source = HELPERS + """
def log_audio(signal, writer):
    data = to_numpy(signal, detach=True)
    data /= 2
    writer.add(signal)

def prep(x, y, flip):
    x_tensor, y_tensor = cast(x, y)
    if flip:
        x_tensor = torch.permute(x_tensor, (0, 3, 1, 2))
    x_tensor /= 255
    return x_tensor, x.shape

def copies(x):
    a = array_or_copy(x)
    a /= 2
    return x
"""
    audio, prep = line_of(source, "data /= 2"), line_of(source, "x_tensor /= 255")
    assert [w[:4] for w in writes(source)] == [(audio, "name", "asarray", "signal"), (prep, "name", "from_numpy", "x")]
    findings = analyse(textwrap.dedent(source), "t.py", [BY_CODE["TEN103"]]).findings
    assert [f.line for f in findings] == [audio, prep]
    assert "(to_numpy() returns np.asarray(array.cpu().detach()))" in findings[0].message
    assert "(cast() returns torch.from_numpy(x))" in findings[1].message
    assert findings[0].fix is None  # fix from proof: nothing proves `signal` a tensor (a parameter, no caller)
    source = source.replace("def log_audio(signal, writer):", "def log_audio(writer):\n    signal = torch.ones(3)")
    proven = analyse(textwrap.dedent(source), "t.py", [BY_CODE["TEN103"]]).findings
    assert proven[0].fix.edits[0].text == "to_numpy(signal, detach=True).copy()"
    assert findings[1].fix is None  # a copy in the `if flip` branch would leave the other path aliased


def test_an_element_of_a_helpers_tuple_has_no_site_to_copy():
    source = HELPERS + """
def prep(x, y):
    x_tensor, y_tensor = cast(x, y)
    x_tensor /= 255
    return x_tensor, x.shape
"""
    findings = analyse(textwrap.dedent(source), "t.py", [BY_CODE["TEN103"]]).findings
    assert [(f.line, f.fix) for f in findings] == [(line_of(source, "x_tensor /= 255"), None)]


def test_a_helper_in_a_neighbouring_module(tmp_path):
    """padertorch: `from padertorch.utils import to_numpy`, read from the package beside the file."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils.py").write_text(textwrap.dedent(HELPERS))
    user = textwrap.dedent("""
    import torch
    from pkg.utils import to_numpy, array_or_copy

    def audio(signal):
        data = to_numpy(signal, detach=True)
        data /= data.max()
        return data, signal

    def quiet(signal):
        data = array_or_copy(signal)
        data /= data.max()
        return data, signal
    """)
    path = tmp_path / "pkg" / "summary.py"
    path.write_text(user)
    findings = analyse(user, str(path), [BY_CODE["TEN103"]]).findings
    assert [f.line for f in findings] == [7]
    assert analyse(user, "<stdin>", [BY_CODE["TEN103"]]).findings == []  # nothing on disk beside it


@pytest.mark.usefixtures("every_fix_offered")  # a fix the rules withhold shows the mechanics
def test_detach_and_data_aliases_built_in_a_helper():
    """TEN101 reads the same helper summaries (no fix for a tuple's element); TEN102 leaves them: its fix
    would rewrite the helper's `.data`. (TEN103 makes the `/=` lines hot in a file that names numpy().)"""
    source = """
    import torch
    def detached(t):
        return t.detach(), t.data
    def one(t):
        return t.detach()
    def run(y, h):
        z, d = detached(y)
        z /= 2
        d /= 2
        u = one(h)
        u /= 2
        return y, h, h.numpy()
    """
    rules = [BY_CODE["TEN101"], BY_CODE["TEN102"], BY_CODE["TEN103"]]
    findings = analyse(textwrap.dedent(source), "t.py", rules).findings
    assert [(f.line, f.code, f.fix is None) for f in findings] == [(9, "TEN101", True), (12, "TEN101", False)]


def test_an_alias_made_in_the_file_keeps_its_own_source():
    """`t = either(a); img = t.numpy()`: the alias is made here, of t (which the function reads again)."""
    source = HELPERS + """
def show(a):
    t = either(a)
    img = t.numpy()
    img *= 2
    return t
"""
    assert [w[1:] for w in writes(source)] == [("name", "numpy", "t")]


@pytest.mark.parametrize("expr, expected", [
    ("torch.zeros(3)", True), ("torch.randn(2, 3)", True), ("x.exp()", True), ("x.clone()", True),
    ("x", False), ("x.view(-1)", False), ("torch.narrow(x, 0, 0, 1)", False), ("x.detach()", False),
    ("torch.from_numpy(a)", False), ("make(x)", False),
])
def test_fresh_storage_is_what_torch_declares_a_new_tensor(expr, expected):
    from flake8_tensorcopy.analysis.aliasing import fresh
    from tests.support.analysis_tools import context_at

    node, ctx = context_at(f"import torch\nx = torch.ones(3)\ny = {expr}  # <-\n")
    assert fresh(node.value, ctx) is expected
