"""Reading a source file exactly as it is, and replacing it without ever losing data.

A file is decoded the way Python decodes it (UTF-8 BOM, PEP 263 cookie) and encoded back the same way;
newlines are never translated. A write goes to a temporary file in the same folder, is flushed to disk
and renamed over the original, so a reader (or a crash) sees either the old or the new file, never a
truncated one; the original's content is checked again just before the rename. The new file keeps the
original's owner and group (where permitted), mode (setuid, setgid and sticky bits included) and
extended attributes (ACLs, SELinux labels, capabilities).

A file with other hard links is rewritten in place instead, so that every name sees the fix (a rename
would leave the other names on the old content): its original content is first saved beside it
(`.NAME.*.tenfix-backup`, flushed to disk), and removed once the new content is on disk. The file is
grown first (the bytes past the original's end), so a disk that is full or a file-size limit stops the
write before any original byte is touched; only then is the rest written over. Writes are unbuffered, so
a failed one leaves nothing to be flushed later; if a write fails, the original is written back, and if
even that fails the message (one line) names the backup.
"""
from __future__ import annotations

import codecs
import contextlib
import errno
import io
import os
import signal
import stat
import threading
import tokenize
from dataclasses import dataclass
from typing import Optional

BOM = codecs.BOM_UTF8


class FileError(Exception):
    """A file left untouched; the message is one line, fit to show a user."""


@dataclass(frozen=True)
class SourceFile:
    data: bytes  # the bytes as read, to detect a change before writing
    text: str  # decoded, BOM removed, newlines as in the file
    encoding: str  # the codec to encode the text back with
    bom: bool

    def encode(self, text: str) -> bytes:
        try:
            body = text.encode(self.encoding)
        except UnicodeEncodeError as exc:
            raise FileError(f"the fixed text cannot be encoded as {self.encoding}: {exc.reason}") from None
        return BOM + body if self.bom else body


def decode(data: bytes) -> SourceFile:
    """Decode source bytes as the interpreter would; FileError when they cannot be decoded."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown codec in the cookie, or a BOM with a non-UTF-8 cookie
        raise FileError(f"cannot decode: {exc}") from None
    bom = data.startswith(BOM)
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    body = data[len(BOM):] if bom else data
    try:
        text = body.decode(encoding)
    except (UnicodeError, LookupError) as exc:  # punycode and idna raise plain UnicodeError
        raise FileError(" ".join(f"cannot decode as {encoding}: {exc}".split())) from None
    return SourceFile(data, text, encoding, bom)


def read(path: str) -> SourceFile:
    try:
        data = read_regular(path)
    except OSError as exc:
        raise FileError(f"cannot read: {exc.strerror or exc}") from None
    return decode(data)


def read_regular(path: str, limit: Optional[int] = None) -> bytes:
    """A regular file's bytes (at most `limit`). A FIFO, a device or a socket would block or never end:
    OSError, without opening it. The check happens on the opened file, so a swap cannot slip one in."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with open(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a socket)")
        return fh.read() if limit is None else fh.read(limit)


def replace(path: str, original: bytes, new: bytes) -> None:
    """Atomically replace the file `path` (a symlink's target) holding `original` with `new`; a file with
    other hard links is rewritten in place (see the module's docstring).

    Raises FileError, leaving the file's content as it was, when it is read-only, was changed or removed
    since it was read, or the write fails (disk full).
    """
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except OSError as exc:
        raise FileError(f"not written: {exc.strerror or exc} (it was removed since it was read)") from None
    if not stat.S_IMODE(st.st_mode) & 0o222 or not os.access(target, os.W_OK):
        raise FileError("not written: the file is read-only")
    folder = os.path.dirname(target) or "."
    with interrupts_deferred():  # Ctrl-C lands before or after the write, never in the middle
        if st.st_nlink > 1:
            _rewrite_in_place(target, folder, new, original)
        else:
            _replace_atomically(target, folder, new, original, st)


def _replace_atomically(target: str, folder: str, new: bytes, original: bytes, st: os.stat_result) -> None:
    fd, tmp = _beside(target, folder, ".tenfix", "cannot create a temporary file beside it")
    try:
        _write_synced(fd, new)
        _keep_owner(tmp, st)  # before chmod: a change of owner clears the setuid and setgid bits
        _copy_xattrs(target, tmp)
        os.chmod(tmp, stat.S_IMODE(st.st_mode))
        _refuse_if_changed(target, original)
        os.replace(tmp, target)
    except FileError:
        _remove(tmp)
        raise
    except OSError as exc:
        _remove(tmp)
        raise FileError(f"not written: {exc.strerror or exc}; the original is untouched") from None
    except BaseException:  # KeyboardInterrupt: the original is untouched or already fully replaced
        _remove(tmp)
        raise
    _sync_folder(folder)


def _rewrite_in_place(target: str, folder: str, new: bytes, original: bytes) -> None:
    backup = _backup(target, folder, original)
    try:
        fd = os.open(target, os.O_RDWR)
    except OSError as exc:
        _remove(backup)
        raise FileError(f"not written: {exc.strerror or exc}; the original is untouched") from None
    try:
        _overwrite(fd, new, original, backup)
    finally:
        _close(fd)  # unbuffered: closing flushes nothing, so it cannot fail the write a second time
    _remove(backup)


def _overwrite(fd: int, new: bytes, original: bytes, backup: str) -> None:
    """Write `new` over the file open at `fd`, which must hold `original`; on failure put it back."""
    try:
        current = _read_all(fd)
    except OSError as exc:
        _remove(backup)
        raise FileError(f"not written: {exc.strerror or exc}; the original is untouched") from None
    if current != original:
        _remove(backup)
        raise FileError("not written: the file changed since it was read")
    size = len(original)
    try:  # grow first: past the original's end, so a failure here leaves every original byte as it was
        _write_at(fd, new[size:], size)
        os.fsync(fd)
    except OSError as exc:
        _restore(fd, original, backup, exc, rewrite=False)
    try:
        _write_at(fd, new[:size], 0)
        os.ftruncate(fd, len(new))
        os.fsync(fd)
    except OSError as exc:
        _restore(fd, original, backup, exc, rewrite=True)


def _restore(fd: int, original: bytes, backup: str, exc: OSError, rewrite: bool) -> None:
    """Put `original` back after the failed write `exc` (only cut back to its length unless `rewrite`);
    raise FileError saying where the content is."""
    try:
        if rewrite:
            _write_at(fd, original, 0)
        os.ftruncate(fd, len(original))
        os.fsync(fd)
    except OSError:
        raise FileError(f"not written: {exc.strerror or exc}; the file may be damaged, its original "
                        f"content is saved in {backup}") from None
    _remove(backup)
    raise FileError(f"not written: {exc.strerror or exc}; the original is untouched") from None


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _write_at(fd: int, data: bytes, offset: int) -> None:
    """All of `data` at `offset`, unbuffered (a short write is continued; an error raises OSError)."""
    os.lseek(fd, offset, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _backup(target: str, folder: str, original: bytes) -> str:
    fd, backup = _beside(target, folder, ".tenfix-backup", "cannot save a backup beside it")
    try:
        _write_synced(fd, original)
    except OSError as exc:
        _remove(backup)
        raise FileError(f"not written: cannot save a backup beside it: {exc.strerror or exc}") from None
    _sync_folder(folder)
    return backup


def _beside(target: str, folder: str, suffix: str, why: str) -> tuple[int, str]:
    """A new hidden file next to `target` (same folder, so a rename replaces it atomically)."""
    try:
        import tempfile  # imported to write: a run that only reads never needs it

        return tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=suffix, dir=folder)
    except OSError as exc:
        raise FileError(f"not written: {why}: {exc.strerror or exc}") from None


def _write_synced(fd: int, data: bytes) -> None:
    """All of `data` into the new file open at `fd`, on disk; the descriptor is closed."""
    try:
        _write_at(fd, data, 0)
        os.fsync(fd)
    finally:
        _close(fd)


def _close(fd: int) -> None:
    """Close a descriptor whose data is already synced (or given up): a late error there changes nothing."""
    try:
        os.close(fd)
    except OSError:
        pass


_deferring = []  # non-empty while a block defers SIGINT: nested blocks leave it to the outermost


@contextlib.contextmanager
def interrupts_deferred():
    """Hold SIGINT until the block ends, then raise KeyboardInterrupt (main thread only), so a
    write and the bookkeeping around it happen entirely or not at all."""
    if _deferring or threading.current_thread() is not threading.main_thread():
        yield
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda *_: caught.append(True))
    _deferring.append(True)
    try:
        yield
    finally:
        _deferring.pop()
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _refuse_if_changed(target: str, original: bytes) -> None:
    try:
        with open(target, "rb") as fh:
            current = fh.read()
    except FileNotFoundError:
        raise FileError("not written: the file was removed since it was read") from None
    if current != original:
        raise FileError("not written: the file changed since it was read")


def _keep_owner(tmp: str, st: os.stat_result) -> None:
    if hasattr(os, "chown") and (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
        try:
            os.chown(tmp, st.st_uid, st.st_gid)
        except OSError:
            pass  # not permitted: the fixed file belongs to whoever runs the fixer


def _copy_xattrs(source: str, dest: str) -> None:
    """Extended attributes, where the platform and the file system have them."""
    if not hasattr(os, "listxattr"):
        return
    try:
        names = os.listxattr(source)
    except OSError:
        return  # not supported here
    for name in names:
        try:
            os.setxattr(dest, name, os.getxattr(source, name))
        except OSError:
            pass  # not permitted (another namespace, a read-only label): keep the rest


def _remove(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _sync_folder(folder: str) -> None:
    """Make the rename itself durable; not every platform can open a folder."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
