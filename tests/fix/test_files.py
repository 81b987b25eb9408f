"""The fixer keeps what it does not fix: encoding, BOM, newlines, final newline, mode, symlinks;
and it leaves alone (exit 2, said on stderr) what it cannot read, decode or parse."""
from __future__ import annotations

import os
import stat

import pytest

from tests.support.fix_tools import BAD, FIXED, leftovers, run_fix


def write(path, data: bytes):
    path.write_bytes(data)
    return path


def test_fixes_in_place(tmp_path, capsys):
    f = write(tmp_path / "a.py", BAD.encode())
    code, out, err = run_fix(capsys, "--unsafe-fixes", f)
    assert code == 0 and f.read_text() == FIXED
    assert f"{f}:10:12: TEN201 " in out and "[fixed, unsafe]" in out
    assert leftovers(tmp_path) == []


def test_utf8_bom_kept(tmp_path, capsys):
    f = write(tmp_path / "a.py", b"\xef\xbb\xbf" + BAD.encode())
    assert run_fix(capsys, "--unsafe-fixes", f)[0] == 0
    assert f.read_bytes() == b"\xef\xbb\xbf" + FIXED.encode()


def test_latin1_cookie_kept(tmp_path, capsys):
    text = "# -*- coding: latin-1 -*-\n" + BAD.replace("return copy", "s = 'café'; return copy")
    f = write(tmp_path / "a.py", text.encode("latin-1"))
    assert run_fix(capsys, "--unsafe-fixes", f)[0] == 0
    assert f.read_bytes() == text.replace("copy.deepcopy(t)", "t.detach().clone()").encode("latin-1")


def test_crlf_kept(tmp_path, capsys):
    f = write(tmp_path / "a.py", BAD.replace("\n", "\r\n").encode())
    assert run_fix(capsys, "--unsafe-fixes", f)[0] == 0
    assert f.read_bytes() == FIXED.replace("\n", "\r\n").encode()


def test_missing_final_newline_kept(tmp_path, capsys):
    f = write(tmp_path / "a.py", BAD.rstrip("\n").encode())
    assert run_fix(capsys, "--unsafe-fixes", f)[0] == 0
    assert f.read_bytes() == FIXED.rstrip("\n").encode()


def test_mode_kept(tmp_path, capsys):
    f = write(tmp_path / "a.py", BAD.encode())
    os.chmod(f, 0o751)
    assert run_fix(capsys, "--unsafe-fixes", f)[0] == 0
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o751 and f.read_text() == FIXED


@pytest.mark.parametrize("data, says", [
    (BAD.encode() + b"x = y.detach()(\n", "cannot parse at line 11"),
    (BAD.encode() + b"s = '\xff\xfe'\n", "cannot decode as utf-8"),
    (b"# -*- coding: no-such-codec -*-\n" + BAD.encode(), "cannot decode"),
    (b"\xef\xbb\xbf# -*- coding: latin-1 -*-\n" + BAD.encode(), "cannot decode"),
])
def test_unreadable_input_untouched_exit_2(tmp_path, capsys, data, says):
    f = write(tmp_path / "a.py", data)
    ok = write(tmp_path / "b.py", BAD.encode())
    code, _, err = run_fix(capsys, "--unsafe-fixes", "-j", "1", f, ok)
    assert code == 2 and f.read_bytes() == data
    assert f"{f}: " in err and says in err and "file left untouched" in err
    assert ok.read_text() == FIXED  # one bad file costs only itself


def test_missing_path_exit_2(tmp_path, capsys):
    code, _, err = run_fix(capsys, tmp_path / "nope.py")
    assert code == 2 and "No such file" in err


def test_symlink_out_of_the_tree_is_skipped_and_said(tmp_path, capsys):
    outside = write(tmp_path / "outside.py", BAD.encode())
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link.py").symlink_to(outside)
    (tree / "linkdir").symlink_to(tmp_path)
    code, _, err = run_fix(capsys, "--unsafe-fixes", tree)
    assert outside.read_text() == BAD and code == 0
    assert f"{tree / 'link.py'}: skipped: a symlink to {outside}, outside {tree}" in err
    assert f"{tree / 'linkdir'}: skipped: a symlink to" in err


def test_symlink_inside_the_tree_fixes_its_target_once_and_stays_a_link(tmp_path, capsys):
    target = write(tmp_path / "b_target.py", BAD.encode())
    link = tmp_path / "a_link.py"
    link.symlink_to(target.name)
    code, out, _ = run_fix(capsys, "--unsafe-fixes", tmp_path)
    assert code == 0 and target.read_text() == FIXED
    assert link.is_symlink() and os.readlink(link) == target.name
    assert out.count("[fixed, unsafe]") == 1


def test_named_symlink_is_followed_and_kept(tmp_path, capsys):
    target = write(tmp_path / "real.py", BAD.encode())
    link = tmp_path / "named.py"
    link.symlink_to(target)
    assert run_fix(capsys, "--unsafe-fixes", link)[0] == 0
    assert link.is_symlink() and target.read_text() == FIXED
