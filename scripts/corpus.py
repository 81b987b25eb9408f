"""Build the ecosystem corpus: the .py files of pinned PyTorch-ecosystem releases.

Used by scripts/ecosystem.py and scripts/bench.py. Each package lands in
<corpus>/<package>/ atomically (unpacked into a temporary directory, then renamed).
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import io
import importlib.util
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tokenize
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "ecosystem" / "corpus.toml"
DEFAULT_CORPUS = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "flake8-tensorcopy" / "corpus"


def load_pins() -> tuple[str, dict[str, str]]:
    """Return (torch version, {package: version}) from ecosystem/corpus.toml."""
    data = tomllib.loads(PINS.read_text())
    return data["torch"], dict(data["packages"])


def python_files(root: Path) -> list[str]:
    """Every .py file under root, sorted (hidden folders and __pycache__ skipped)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        found += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    return found


def engine_digest() -> str:
    """A hash of the linter's own files (code and data): two runs with the same digest analyse alike."""
    h = hashlib.sha256()
    package = ROOT / "flake8_tensorcopy"
    for path in sorted(p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def files_stamp(paths: list[str]) -> str:
    """A hash of the files' names, sizes and modification times: a changed corpus gets another stamp."""
    h = hashlib.sha256()
    for path in sorted(paths):
        st = os.stat(path)
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def read_source(path: str) -> str:
    """A file's text in its declared encoding (PEP 263), without a BOM."""
    with open(path, "rb") as fh:
        data = fh.read()
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding).lstrip("\ufeff")


def extract_py(archive: Path, dest: Path) -> int:
    """Extract the .py members of a wheel or sdist into dest; return how many."""
    count = 0
    if archive.suffix == ".whl" or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if n.endswith(".py")]
            strip = archive.suffix == ".zip"
            for name in names:
                rel = name.split("/", 1)[1] if strip and "/" in name else name
                if rel.startswith("build/"):
                    continue  # a stale copy of the package left by a local build (botorch 0.18.1's wheel)
                _write(dest / rel, zf.read(name))
                count += 1
    else:
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                if member.isfile() and member.name.endswith(".py") and "/" in member.name:
                    rel = member.name.split("/", 1)[1]  # sdists have one top-level directory
                    if rel.startswith("build/"):
                        continue  # a stale copy of the package left by a local build
                    _write(dest / rel, tf.extractfile(member).read())
                    count += 1
    return count


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def replace_tree(tmp: Path, final: Path) -> None:
    """Swap tmp into place as final (rename is atomic; an old copy is removed after)."""
    old = None
    if final.exists():
        old = final.with_name(final.name + f".old-{os.getpid()}")
        final.rename(old)
    tmp.rename(final)
    if old is not None:
        shutil.rmtree(old)


def fetch_package(name: str, version: str, corpus: Path, folder: str = "", wheel_only: bool = False) -> int:
    """Download name==version without dependencies and keep its .py files in corpus/folder (default: name).
    wheel_only: never an sdist (whose metadata pip would have to build)."""
    with tempfile.TemporaryDirectory(dir=corpus, prefix=f".{name}-") as work:
        work = Path(work)
        only_binary = ["--only-binary", ":all:"] if wheel_only else []
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", *only_binary, "-d", str(work / "dl"),
             f"{name}=={version}"],
            check=True, capture_output=wheel_only,
        )
        (archive,) = list((work / "dl").iterdir())
        tree = work / "tree"
        count = extract_py(archive, tree)
        replace_tree(tree, corpus / (folder or name))
    return count


def copy_torch(version: str, corpus: Path) -> int:
    """Copy the installed torch's .py files (it must be the pinned version)."""
    installed = importlib.metadata.version("torch").split("+")[0]
    if installed != version:
        raise RuntimeError(f"installed torch is {installed}, corpus pins {version}")
    src = Path(importlib.util.find_spec("torch").origin).parent
    with tempfile.TemporaryDirectory(dir=corpus, prefix=".torch-") as work:
        tree = Path(work) / "tree"
        count = 0
        for path in src.rglob("*.py"):
            _write(tree / "torch" / path.relative_to(src), path.read_bytes())
            count += 1
        replace_tree(tree, corpus / "torch")
    return count


def build(corpus: Path, only: list[str] | None = None, force: bool = False) -> dict[str, str]:
    """Build every missing package (all of them with force); return {package: status}."""
    corpus.mkdir(parents=True, exist_ok=True)
    torch_version, packages = load_pins()
    wanted = {"torch": torch_version, **packages}
    status = {}
    for name, version in wanted.items():
        if only and name not in only:
            continue
        if (corpus / name).is_dir() and not force:
            status[name] = "cached"
            continue
        try:
            count = copy_torch(version, corpus) if name == "torch" else fetch_package(name, version, corpus)
            status[name] = f"{count} files"
        except (subprocess.CalledProcessError, RuntimeError, ValueError, OSError) as exc:
            status[name] = f"FAILED: {exc}"
        print(f"{name}=={version}: {status[name]}", file=sys.stderr, flush=True)
    return status


def git_head() -> str:
    """The checkout's `git describe` (for dated reports), or 'no git'."""
    try:
        return subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "no git"
