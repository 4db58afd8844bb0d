"""Output files: the temporary files and folders beside an output, ``.NAME.PID.RANDOM.part``,
renamed onto it when it is whole (made here, and removed where the process that made them is
gone: a run killed before it could clean up), and the text stream an output file is written
through (gzip-compressed by its name)."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import shutil
import tempfile
from typing import BinaryIO, TextIO

#: the suffix of every temporary output
PART = ".part"


def make(folder: str, base: str, directory: bool = False) -> tuple[int | None, str]:
    """A new temporary file (its descriptor and path) or folder (None and its path) for the
    output ``base`` in ``folder``; stale ones of dead processes are removed first. OSError
    where none can be made."""
    remove_stale(folder, base)
    prefix = f".{base}.{os.getpid()}."
    if directory:
        return None, tempfile.mkdtemp(prefix=prefix, suffix=PART, dir=folder)
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=PART, dir=folder)
    return fd, path


def remove_stale(folder: str, base: str) -> None:
    """Remove the temporary outputs ``.BASE.PID.*.part`` in ``folder`` whose process is gone."""
    prefix = f".{base}."
    try:
        names = [n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(PART)]
    except OSError:
        return
    for name in names:
        pid = name[len(prefix):].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (another user's counts as alive)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class _Whole(gzip.GzipFile):
    """A gzip stream that compresses its text as one piece: a flush (after each query of a
    search) would end a deflate block, so the bytes would depend on how the text came."""

    def flush(self, zlib_mode: int = 0) -> None:
        """Nothing: the stream is flushed whole when it closes."""


def text_writer(raw: BinaryIO, path: str) -> TextIO:
    """A UTF-8 text stream over ``raw``, gzip-compressed where ``path`` ends in ``.gz`` (no
    name or time stamp in the gzip header and no flush inside the stream: the same output
    gives the same bytes, however it was written)."""
    if path.endswith(".gz"):
        raw = _Whole(filename="", mode="wb", fileobj=raw, mtime=0)
    return io.TextIOWrapper(raw, encoding="utf-8", newline="\n")


def finish(fh: TextIO) -> None:
    """Flush a :func:`text_writer` stream to its file, a gzip stream's trailer included; the
    file stays open (for its caller to fsync)."""
    fh.flush()
    if isinstance(fh.buffer, gzip.GzipFile):
        fh.buffer.close()  # writes the trailer; leaves the file it wraps open
