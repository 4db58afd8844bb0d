"""The ``.wdb`` folder's files (``database.py`` describes the layout): their names, the header's
text, where a database may be written and how a finished one is put in place. No NumPy:
makedb's parallel builder writes databases before NumPy is imported."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator

from .. import partfiles
from ..alphabets import DNA_LETTERS
from ..errors import InputError

FORMAT = "wavedp-db"
VERSION = 1
HEADER = "header.json"
#: the canonical protein letters (Biopython's BLOSUM62 alphabet); code k is letter k
PROTEIN_LETTERS = "ARNDCQEGHILKMFPSTWYVBZX*"
ALPHABETS = {"protein": PROTEIN_LETTERS, "dna": DNA_LETTERS}
#: data file name -> little-endian dtype
FILES = {
    "residues.u8": "<u1",
    "offsets.i64": "<i8",
    "lengths.i32": "<i4",
    "ids.txt": "<u1",
    "id_offsets.i64": "<i8",
}


def make_header(alphabet: str, sequences: int, residues: int, longest: int, id_bytes: int,
                composition: list[int], source: str, files: dict[str, tuple[int, int]]) -> dict:
    """A database's header: its counts, the ``composition`` (each letter's count), the
    input file's name and each data file's (size, CRC-32) in ``files``."""
    return {
        "format": FORMAT,
        "version": VERSION,
        "alphabet": alphabet,
        "letters": ALPHABETS[alphabet],
        "sequences": sequences,
        "residues": residues,
        "longest": longest,
        "id_bytes": id_bytes,
        "composition": composition,
        "source": os.path.basename(source),
        "files": {name: {"bytes": size, "crc32": f"{crc:08x}"}
                  for name, (size, crc) in files.items()},
    }


def header_text(header: dict) -> str:
    """JSON with one top-level key per line."""
    rows = (f" {json.dumps(key)}: {json.dumps(value)}" for key, value in header.items())
    return "{\n" + ",\n".join(rows) + "\n}\n"


def is_database(path: str) -> bool:
    """Whether ``path`` is a wavedp database folder (its header says so)."""
    try:
        with open(os.path.join(path, HEADER), encoding="utf-8") as fh:
            return json.load(fh).get("format") == FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def check_target(out: str, source: str | None = None) -> None:
    """A database may be written at ``out``: its folder exists, nothing but an older database
    is there, and the input ``source`` is not inside it."""
    if not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        raise InputError(f"cannot write database {out}: the folder "
                         f"{os.path.dirname(out)} does not exist")
    if os.path.lexists(out) and not (os.path.isdir(out) and is_database(out)):
        raise InputError(f"cannot write database {out}: it exists and is not a wavedp "
                         "database (not replacing it)")
    if source is not None and os.path.realpath(source).startswith(
            os.path.realpath(out) + os.sep):
        raise InputError(f"cannot write database {out}: the input {source} is inside it")


def install(tmp: str, out: str) -> None:
    """Move the finished folder ``tmp`` onto ``out``, replacing an older database there."""
    check_target(out)
    if not os.path.lexists(out):
        os.rename(tmp, out)
        return
    old = f"{tmp}.old"
    os.rename(out, old)
    try:
        os.rename(tmp, out)
    except BaseException:
        os.rename(old, out)
        raise
    if os.path.islink(old):
        os.unlink(old)
    else:
        shutil.rmtree(old, ignore_errors=True)


def umask() -> int:
    """This process's umask (read without changing it)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def making(source: str, out: str) -> Iterator[str]:
    """A temporary folder beside ``out`` for a database of ``source`` to be written into
    (after :func:`check_target`); removed if the block fails (an OSError becomes one
    InputError naming ``out``). The block ends with :func:`finish`."""
    check_target(out, source)
    parent, base = os.path.split(os.path.abspath(out))
    try:
        _, tmp = partfiles.make(parent, base, directory=True)
    except OSError as exc:
        raise InputError(f"cannot write database {out}: {exc.strerror or exc}") from None
    try:
        yield tmp
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):  # disk full, permission lost, rename refused
            raise InputError(f"cannot write database {out}: {exc.strerror or exc}") from None
        raise


def finish(tmp: str, out: str, header: dict) -> None:
    """Write ``header`` into the finished folder ``tmp`` and put it in place at ``out``."""
    with open(os.path.join(tmp, HEADER), "w", encoding="utf-8") as fh:
        fh.write(header_text(header))
    os.chmod(tmp, 0o777 & ~umask())  # mkdtemp made it private
    install(tmp, out)
