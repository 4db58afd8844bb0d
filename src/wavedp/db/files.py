"""The ``.wdb`` folder's files (``database.py`` describes the layout): their names, the header's
text, where a database may be written and how a finished one is put in place. No NumPy."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import zlib
from collections.abc import Iterator

from .. import partfiles
from ..alphabets import DNA_LETTERS
from ..errors import InputError

FORMAT = "wavedp-db"
VERSION = 4
HEADER = "header.json"
#: the header's last key: its own CRC-32
SEAL = "header_crc32"
#: a finished data folder's name starts so (the header names the current one)
DATA = "data-"
#: the file whose lock serializes the finishing of concurrent builds of one database
LOCK = ".lock"
#: the canonical protein letters (Biopython's BLOSUM62 alphabet); code k is letter k
PROTEIN_LETTERS = "ARNDCQEGHILKMFPSTWYVBZX*"
ALPHABETS = {"protein": PROTEIN_LETTERS, "dna": DNA_LETTERS}
#: data file name -> little-endian dtype: the files a builder streams in file order
STREAMED = {
    "residues.u8": "<u1",
    "offsets.i64": "<i8",
    "lengths.i32": "<i4",
    "ids.txt": "<u1",
    "id_offsets.i64": "<i8",
    "titles.txt": "<u1",
    "title_offsets.i64": "<i8",
}
#: and those it writes from the lengths at the end: the sequences longest first
SORTED = {
    "order.i32": "<i4",
    "runs.i64": "<i8",
}
FILES = {**STREAMED, **SORTED}


def make_header(alphabet: str, sequences: int, residues: int, longest: int,
                composition: list[int], source: str, files: dict[str, tuple[int, int]], *,
                id_bytes: int, title_bytes: int) -> dict:
    """A database's header: its counts, the ``composition`` (each letter's count), the
    input file's name and each data file's (size, CRC-32) in ``files``. :func:`finish` adds
    the data folder's name and :func:`header_text` the header's own CRC-32."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "alphabet": alphabet,
        "letters": ALPHABETS[alphabet],
        "sequences": sequences,
        "residues": residues,
        "longest": longest,
        "id_bytes": id_bytes,
        "title_bytes": title_bytes,
        "composition": composition,
        "source": os.path.basename(source),
        "files": {name: {"bytes": size, "crc32": f"{crc:08x}"}
                  for name, (size, crc) in files.items()},
    }


def header_text(header: dict) -> str:
    """JSON with one top-level key per line, the last one ``SEAL``: the CRC-32 of every byte
    before its line (so every bit of the header is checked)."""
    rows = (f" {json.dumps(key)}: {json.dumps(value)}" for key, value in header.items()
            if key != SEAL)
    body = "{\n" + ",\n".join(rows) + ",\n"
    return body + _seal_row(zlib.crc32(body.encode("utf-8")))


def _seal_row(crc: int) -> str:
    return f' "{SEAL}": "{crc:08x}"\n}}\n'


def parse_header(raw: bytes) -> dict:
    """The header of :func:`header_text`'s bytes; ValueError (the reason) where its seal is
    missing or does not match, or it is not JSON."""
    cut = raw.rfind(f'\n "{SEAL}": "'.encode("ascii"))
    if cut < 0:
        raise ValueError("it has no checksum line")
    body = raw[:cut + 1]
    if raw[cut + 1:] != _seal_row(zlib.crc32(body)).encode("ascii"):
        raise ValueError("its checksum does not match")
    header = json.loads(raw.decode("utf-8"))
    if not isinstance(header, dict):
        raise ValueError("it is not a JSON object")
    return header


def is_database(path: str) -> bool:
    """Whether ``path`` is a wavedp database folder (its header says so)."""
    try:
        with open(os.path.join(path, HEADER), encoding="utf-8") as fh:
            return json.load(fh).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def _building(path: str) -> bool:
    """Whether the folder ``path`` holds only a build's own entries (a first build runs)."""
    try:
        names = os.listdir(path)
    except OSError:
        return False
    return bool(names) and all(n == LOCK or (n.startswith(".") and n.endswith(partfiles.PART))
                               for n in names)


def check_target(out: str, source: str | None = None) -> None:
    """A database may be written at ``out``: its folder exists, nothing but an older database
    (or another build of it) is there, and the input ``source`` is not inside it."""
    if not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        raise InputError(f"cannot write database {out}: the folder "
                         f"{os.path.dirname(out)} does not exist")
    if os.path.lexists(out) and not (os.path.isdir(out) and (is_database(out)
                                                              or _building(out))):
        raise InputError(f"cannot write database {out}: it exists and is not a wavedp "
                         "database (not replacing it)")
    if source is not None and os.path.realpath(source).startswith(
            os.path.realpath(out) + os.sep):
        raise InputError(f"cannot write database {out}: the input {source} is inside it")


def umask() -> int:
    """This process's umask (read without changing it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def making(source: str, out: str) -> Iterator[str]:
    """A temporary data folder inside ``out`` (made where missing) for a database of
    ``source`` to be written into (after :func:`check_target`); removed if the block fails
    (with ``out`` where this call made it; an OSError becomes one InputError naming
    ``out``). The block ends with :func:`finish`. Readers of a database already at ``out``
    see it whole until then."""
    check_target(out, source)
    made = False
    try:
        try:
            os.mkdir(out)
            made = True
        except FileExistsError:
            pass
        _, tmp = partfiles.make(out, "data", directory=True)
    except OSError as exc:
        if made:
            _unmake(out)
        raise InputError(f"cannot write database {out}: {exc.strerror or exc}") from None
    try:
        yield tmp
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if made:
            _unmake(out)
        if isinstance(exc, OSError):  # disk full, permission lost, rename refused
            raise InputError(f"cannot write database {out}: {exc.strerror or exc}") from None
        raise


def _unmake(out: str) -> None:
    """The folder ``out`` that a failed first build made, removed unless another build
    has entries there."""
    with contextlib.suppress(OSError):
        if os.listdir(out) == [LOCK]:
            os.unlink(os.path.join(out, LOCK))
        os.rmdir(out)


def finish(tmp: str, out: str, header: dict) -> None:
    """Put the finished data folder ``tmp`` (from :func:`making`) in place: it becomes a data
    folder of its own name, then ``header``, naming it, replaces ``out``'s header in one
    rename, and the data of the database it replaces are removed. Concurrent builds of one
    database finish one at a time (under ``LOCK``); a reader whose data folder was removed
    meanwhile reads the header again (``Database.open``)."""
    name = DATA + secrets.token_hex(8)
    final = os.path.join(out, name)
    os.chmod(tmp, 0o777 & ~umask())  # mkdtemp made it private
    fd, part = partfiles.make(out, "header")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(header_text({**header, "data": name}))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(part, 0o666 & ~umask())
        with _locked(out):  # a finished data folder not named by the header is stale
            os.rename(tmp, final)
            try:
                os.replace(part, os.path.join(out, HEADER))
            except BaseException:
                shutil.rmtree(final, ignore_errors=True)
                raise
            part = None
            _remove_replaced(out, name)
    finally:
        if part is not None:
            with contextlib.suppress(OSError):
                os.unlink(part)


@contextlib.contextmanager
def _locked(out: str) -> Iterator[None]:
    """``out``'s LOCK file held exclusively."""
    fd = os.open(os.path.join(out, LOCK), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _remove_replaced(out: str, keep: str) -> None:
    """The data folders other than ``keep`` that a finished build left, removed from
    ``out``; builds under way are left alone."""
    with contextlib.suppress(OSError):
        for entry in os.listdir(out):
            path = os.path.join(out, entry)
            with contextlib.suppress(OSError):
                if entry.startswith(DATA) and entry != keep:
                    shutil.rmtree(path)
