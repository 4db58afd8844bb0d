"""The output contract of every command (``docs/design.md``, "Outputs").

- Standard output (no ``-o``, or ``-o -``) is written as the results come.
- A regular file (or a path where nothing is yet) is written to a temporary file beside it,
  ``.NAME.PID.RANDOM.part``, renamed onto it at the end: the file is whole or untouched. A
  symlink is followed: its target is replaced, the link stays. A name ending in ``.gz`` is
  written gzip-compressed.
- Anything else that is not a folder (a device such as ``/dev/null``, a FIFO, a socket,
  ``/dev/stdout``) is written in place, as the results come.
- Checked before any work: the output is not a folder, its folder exists (no folder is ever
  created), and it is none of the inputs (the same file, or a file inside a ``.wdb`` folder
  being read).
- A temporary file is removed when the command fails or is stopped (Ctrl-C, SIGTERM, SIGHUP:
  ``wavedp.cli`` turns the signals into exceptions); one left by a process that died without
  cleaning up (``kill -9``) is removed by the next run writing to that output.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO, TextIO

from .. import partfiles, stops
from ..errors import InputError


class OutputError(InputError):
    """The output could not be written (a full disk, a closed device): one line, status 2."""


@dataclass(frozen=True)
class Target:
    """A checked output: ``path`` as given (None: standard output), ``real`` the file that is
    written (symlinks followed), ``kind`` ``stdout``, ``file`` (replaced atomically) or
    ``stream`` (written in place)."""

    path: str | None
    real: str | None
    kind: str

    @property
    def name(self) -> str:
        """How messages name the output."""
        return self.path if self.path is not None else "standard output"


def target(path: str | None, inputs: Sequence[str | os.PathLike] = ()) -> Target:
    """The output ``path`` checked against the contract before any work (an InputError
    otherwise); ``inputs`` are the files and ``.wdb`` folders the command reads (``-``:
    standard input)."""
    if path is None or path == "-":
        return Target(None, None, "stdout")
    if _is_stream_name(path):
        _check_not_input(path, path, inputs)  # /dev/fd/0 may be an input file itself
        return Target(path, path, "stream")
    real = os.path.realpath(path)
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise InputError(f"cannot write output file {path}: {exc.strerror or exc}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"cannot write output file {path}: it is a folder")
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise InputError(f"cannot write output file {path}: the folder {os.path.dirname(path)} "
                         "does not exist")
    _check_not_input(path, real, inputs)
    if mode is not None and not stat.S_ISREG(mode):
        return Target(path, real, "stream")
    return Target(path, real, "file")


def _is_stream_name(path: str) -> bool:
    """Whether ``path`` names this process's own streams (resolving such a link gives a pipe
    or a terminal, not a file to replace)."""
    return path in ("/dev/stdout", "/dev/stderr") or path.startswith(("/dev/fd/",
                                                                        "/proc/self/fd/"))


def _identity(source: str) -> tuple[int, int] | None:
    """(device, inode) of the regular file ``source`` names (``-``: what standard input
    reads, where it is a file), else None."""
    try:
        st = os.fstat(sys.stdin.fileno()) if source == "-" else os.stat(source)
    except (OSError, ValueError, AttributeError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _check_not_input(path: str, real: str, inputs: Sequence[str | os.PathLike]) -> None:
    """An InputError where the output is one of the inputs, by what it is (device and inode:
    also through another name, ``/dev/fd/N`` or standard input), or a file inside a
    ``.wdb`` folder being read."""
    written = _identity(real)
    for given in inputs:
        source = os.fspath(given)
        name = "standard input" if source == "-" else source
        if written is not None and _identity(source) == written:
            raise InputError(f"output file {path} would overwrite the input {name}: "
                             "write the output elsewhere")
        if source != "-" and os.path.isdir(source) and \
                real.startswith(os.path.realpath(source) + os.sep):
            raise InputError(f"output file {path} would overwrite the input {source}: "
                             "write the output elsewhere")


@contextlib.contextmanager
def opened(out: Target, binary: bool = False) -> Iterator[TextIO | BinaryIO]:
    """A text stream (``binary``: a byte stream) to write ``out`` through, under the
    contract; a failure to write is an :class:`OutputError` naming the output."""
    if out.kind == "stdout":
        stream = sys.stdout.buffer if binary else sys.stdout
        with _write_errors(out):
            yield stream
            stream.flush()
        return
    if out.kind == "stream":
        try:
            fh = (open(out.real, "wb") if binary  # noqa: SIM115
                  else open(out.real, "w", encoding="utf-8", newline="\n"))
        except OSError as exc:
            raise OutputError(f"cannot write output file {out.name}: "
                              f"{exc.strerror or exc}") from None
        with _write_errors(out), fh:
            yield fh
        return
    assert out.real is not None
    folder, base = os.path.split(out.real)
    try:
        fd, tmp = partfiles.make(folder, base)
    except OSError as exc:
        raise OutputError(f"cannot write output file {out.name}: no temporary file can be "
                          f"made in its folder ({exc.strerror or exc})") from None
    try:
        raw = os.fdopen(fd, "wb")
        with _write_errors(out), (raw if binary else _text(raw, out.real)) as fh:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # the mode a plain open() would have given
            yield fh
        stops.raise_if_stopped()  # a stop swallowed on the way: the output is not put in place
        with _write_errors(out):
            os.replace(tmp, out.real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _text(raw: BinaryIO, path: str) -> Iterator[TextIO]:
    """``partfiles.text_writer``, closed at the end with its file."""
    fh = partfiles.text_writer(raw, path)
    try:
        yield fh
    finally:
        fh.close()
        raw.close()


@contextlib.contextmanager
def _write_errors(out: Target) -> Iterator[None]:
    """OSError while writing (not a closed pipe: the command line ends quietly on that) as
    an OutputError naming the output."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            raise
        raise OutputError(f"cannot write {'to ' if out.kind == 'stdout' else 'output file '}"
                          f"{out.name}: {exc.strerror or exc}") from None


def write_text(target: Target | None, content: str | None) -> None:
    """``content`` written to ``target`` under the contract (a file replaced whole); nothing
    where either is None."""
    if target is None or content is None:
        return
    with opened(target) as out:
        out.write(content)
