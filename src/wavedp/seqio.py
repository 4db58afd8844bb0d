"""Reading FASTA and FASTQ files (plain or gzipped) through pyfastx.

pyfastx's ``Fastx`` iterator reads sequentially and writes no index file beside the input.
It is lenient where wavedp must not be: it stops without an error at a broken FASTQ record
and at truncated or damaged gzip data. So gzipped files are decompressed once more by Python's
``gzip`` (which checks length and CRC), FASTQ files get a line-count check, and a doubtful
FASTQ file is re-read strictly by Biopython to name the fault. Every problem becomes a
one-line ``InputError`` naming the file.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import functools
import gzip
import io
import os
import shutil
import sys
import tempfile
import zlib
from collections.abc import Iterator
from typing import BinaryIO

import pyfastx

from .errors import InputError

_GZIP_MAGIC = b"\x1f\x8b"
_KINDS = {ord(">"): "fasta", ord("@"): "fastq"}
#: bytes no FASTA/FASTQ text holds: the control characters but tab, line feed and carriage
#: return (a NUL would silently end a record where the parser reads C strings)
CONTROL = frozenset([*range(9), 11, 12, *range(14, 32), 127])
#: every other byte, for ``bytes.translate`` to delete: what is left are control bytes
NOT_CONTROL = bytes(b for b in range(256) if b not in CONTROL)
#: the checks read this many bytes at a time
CHUNK = 1 << 20


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == _GZIP_MAGIC


def open_bytes(path: str) -> BinaryIO:
    """Open ``path`` for reading bytes, decompressing gzip transparently."""
    return gzip.open(path, "rb") if _is_gzip(path) else open(path, "rb")


def _stream_errors(path: str, exc: Exception) -> InputError:
    if isinstance(exc, (gzip.BadGzipFile, zlib.error, EOFError)):
        return InputError(f"file {path}: damaged gzip data ({exc})")
    if isinstance(exc, UnicodeDecodeError):
        return InputError(f"file {path}: not a text FASTA/FASTQ file ({_undecodable(path)})")
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return InputError(f"cannot read file {path}: {reason}")


def _undecodable(path: str) -> str:
    """Where the first byte of ``path`` that is not UTF-8 text is: its line and column and
    the record whose header or sequence holds it (the file read in pieces, twice)."""
    decoder, offset, at = codecs.getincrementaldecoder("utf-8")(), 0, None
    with open_bytes(path) as fh:
        while at is None and (chunk := fh.read(CHUNK)):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:  # exc.object: the bytes held back, then chunk
                at = offset - (len(exc.object) - len(chunk)) + exc.start
            offset += len(chunk)
    if at is None:
        return "undecodable bytes"
    line, start, header, seen, after_line_end, byte = 1, 0, b"", 0, True, 0
    with open_bytes(path) as fh:  # the line, where it starts and the last header line before
        while seen <= at and (chunk := fh.read(CHUNK)):
            part = chunk[:at + 1 - seen]
            byte = part[-1]
            heads = [k + 1 for k in (part.rfind(b"\n>"), part.rfind(b"\n@")) if k >= 0]
            if after_line_end and part[:1] in (b">", b"@"):
                heads.append(0)
            if heads:
                h = max(heads)
                end = part.find(b"\n", h)
                header = part[h:end if end >= 0 else len(part)]
            line += part.count(b"\n")
            if b"\n" in part:
                start = seen + part.rfind(b"\n") + 1
            after_line_end = chunk.endswith(b"\n")
            seen += len(chunk)
    name = header[1:].split(None, 1)[0].decode("utf-8", "replace") if len(header) > 1 else "?"
    return (f"byte 0x{byte:02x} at line {line}, column {at - start + 1}, in record {name!r}, "
            "is not UTF-8 text")


def sniff(path: str) -> str:
    """``fasta`` or ``fastq`` from the first non-blank character; InputError otherwise."""
    if os.path.isdir(path):
        raise InputError(f"cannot read file {path}: it is a directory")
    try:
        with open_bytes(path) as fh:
            while chunk := fh.read(1 << 16):
                text = chunk.lstrip()
                if text:
                    first = text[0]
                    break
            else:
                raise InputError(f"file {path}: no records (the file is empty or blank)")
    except InputError:
        raise
    except (OSError, EOFError, zlib.error) as exc:
        raise _stream_errors(path, exc) from None
    if first not in _KINDS:
        shown = repr(chr(first)) if 32 < first < 127 else f"byte 0x{first:02x}"
        raise InputError(
            f"file {path}: not FASTA or FASTQ (first non-blank character is {shown}, "
            "expected '>' or '@')"
        )
    return _KINDS[first]


def _content_lines(path: str) -> int:
    """Number of lines from the first to the last non-blank line (reads the whole file)."""
    first = last = 0
    with open_bytes(path) as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                first = first or number
                last = number
    return last - first + 1 if last else 0


def _check_bytes(path: str) -> bool:
    """Read the whole file (decompressed), so truncated or damaged gzip data raises, and a
    control byte is an InputError naming its record and position; whether a line ends in a
    carriage return alone (old Mac line ends)."""
    offset, lone, last = 0, False, b""
    with open_bytes(path) as fh:
        while chunk := fh.read(CHUNK):
            if chunk.translate(None, NOT_CONTROL):
                at = offset + next(k for k, b in enumerate(chunk) if b in CONTROL)
                raise _control_byte(path, at)
            offset += len(chunk)
            if not lone and b"\r" in last + chunk:
                joined = last + chunk
                lone = joined.count(b"\r") > joined.count(b"\r\n") + joined.endswith(b"\r")
            last = chunk[-1:]
    return lone or last == b"\r"


def _line_feeds(path: str) -> str:
    """A temporary copy of ``path`` (decompressed) with every carriage return a line feed
    (a CRLF line end becomes a blank line, which no record keeps), removed when the process
    ends."""
    fd, copy = tempfile.mkstemp(prefix="wavedp-lf-", suffix=".txt")
    _temporary(copy)
    with open_bytes(path) as src, os.fdopen(fd, "wb") as out:
        while chunk := src.read(CHUNK):
            out.write(chunk.replace(b"\r", b"\n"))
    return copy


def _control_byte(path: str, at: int) -> InputError:
    """The InputError of the control byte at decompressed offset ``at``: its record (the
    last header line before it), line and position in the sequence (or the header)."""
    with open_bytes(path) as fh:
        head = fh.read(at + 1)
    lines = head.split(b"\n")
    header, residues = None, 0
    for line in lines[:-1]:
        if line[:1] in (b">", b"@"):
            header, residues = line, 0
        else:
            residues += len(line.rstrip(b"\r"))
    last = lines[-1]
    byte = f"0x{head[-1]:02x}"
    if last[:1] in (b">", b"@") or header is None:
        return InputError(f"file {path}, line {len(lines)}: control byte {byte} in a header "
                          "(FASTA/FASTQ text holds none)")
    name = header[1:].split(maxsplit=1)[0].decode("ascii", "replace") if len(header) > 1 else ""
    return InputError(f"file {path}, record {name!r}, position {residues + len(last)}: control "
                      f"byte {byte} in the sequence (FASTA/FASTQ text holds none)")


def _leading_blank_bytes(raw: BinaryIO) -> int:
    offset = 0
    for line in raw:
        if line.strip():
            break
        offset += len(line)
    return offset


def _fastq_fault(path: str, parsed: int) -> str:
    """Biopython's strict reading of a FASTQ file: the fault it finds, as text."""
    from Bio.SeqIO.QualityIO import FastqGeneralIterator

    try:
        with open_bytes(path) as raw:
            raw.seek(_leading_blank_bytes(raw))  # Biopython wants '@' on the first line
            with io.TextIOWrapper(raw, "ascii", "replace") as handle:
                count = sum(1 for _ in FastqGeneralIterator(handle))
    except ValueError as exc:
        return str(exc).rstrip(".")
    if count != parsed:
        return f"read {parsed} of {count} records"
    return ""


def _check_fastq_record(path: str, k: int, record: tuple) -> None:
    name, seq = record[0], record[1]
    qual = record[2] if len(record) > 2 else None
    if qual is None or len(qual) != len(seq):
        raise InputError(
            f"file {path}: malformed FASTQ record {k} ({name!r}): "
            "missing '+' line or quality string of the wrong length"
        )


def _check_fastq_layout(path: str, count: int, last: str | None) -> None:
    """After the last record: every content line accounted for, or Biopython names the fault."""
    if _content_lines(path) == 4 * count:
        return  # the common four-line layout, every line accounted for
    fault = _fastq_fault(path, count)
    if fault:
        where = f" after record {count} ({last!r})" if count else ""
        raise InputError(f"file {path}: malformed FASTQ{where}: {fault}")


def _records(path: str, kind: str, titles: bool = False) -> Iterator[tuple[str, ...]]:
    """The records of a sniffed file; ``iter_records`` translates I/O and parser errors."""
    mark = ">" if kind == "fasta" else "@"
    count, last = 0, None
    for count, record in enumerate(pyfastx.Fastx(path, format=kind, comment=titles), 1):
        if kind == "fastq":
            _check_fastq_record(path, count, record)
        last = record[0]
        if not last:
            raise InputError(f"file {path}: record {count} has no id (nothing after '{mark}')")
        text = record[1]
        if "\r" in text:  # pyfastx keeps the \r of a CRLF line holding nothing else
            text = text.replace("\r", "")
        if titles:
            yield last, text, (record[-1] or "").rstrip("\r")
        else:
            yield last, text
    if kind == "fastq":
        _check_fastq_layout(path, count, last)
    if not count:
        raise InputError(f"file {path}: no {kind.upper()} records")


#: the path that names standard input
STDIN = "-"


def whole_title(rid: str, title: str) -> str:
    """A record's header line after its mark: the id, then the title where it has one."""
    return f"{rid} {title}" if title else rid


def iter_records(path: str | os.PathLike, shown: str | None = None, *, titles: bool = False
                 ) -> Iterator[tuple[str, ...]]:
    """Stream the records of a FASTA or FASTQ file (plain or gzipped) as (id, text) pairs;
    ``-`` reads standard input (copied once to a temporary file: the checks read it twice).

    ``shown``: how messages name ``path`` (a copy of standard input: ``standard input``).
    ``titles``: (id, text, title) triples, the title the header line after the id and one
    space or tab (empty where there is none).

    One record at a time (memory is bounded by the longest record). The id is the first word
    of the header line. The file is first read once whole (decompressed) to check a gzip
    file's integrity and that no control byte is in it (a NUL would end a record silently); a
    FASTQ file is line-counted after its last record. Raises InputError for a missing,
    unreadable, empty or malformed file, at the point where the fault is found.
    """
    path = os.fspath(path)
    if path == STDIN:
        yield from iter_records(stdin_copy(), "standard input", titles=titles)
        return
    if shown is not None:  # a copy, named as the user gave it
        try:
            yield from iter_records(path, titles=titles)
        except InputError as exc:
            raise InputError(str(exc).replace(f"file {path}", shown)
                             .replace(path, shown)) from None
        return
    kind = sniff(path)
    try:
        lone = _check_bytes(path)
        if lone:  # line ends of a carriage return alone: read through a copy
            copy = _line_feeds(path)
            try:
                yield from _records(copy, kind, titles)
            except InputError as exc:
                raise InputError(str(exc).replace(copy, path)) from None
            return
        yield from _records(path, kind, titles)
    except InputError:
        raise
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise _stream_errors(path, exc) from None
    except (RuntimeError, ValueError, IndexError) as exc:  # pyfastx's own complaints
        raise InputError(f"file {path}: malformed {kind.upper()} ({exc})") from None


@functools.cache
def stdin_copy() -> str:
    """Standard input, read once into a temporary file that is removed when the process
    ends (standard input can be read only once)."""
    try:
        fd, path = tempfile.mkstemp(prefix="wavedp-stdin-", suffix=".txt")
        _temporary(path)
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, CHUNK)
    except OSError as exc:
        raise InputError(f"cannot read standard input: {exc.strerror or exc}") from None
    return path


@contextlib.contextmanager
def text_file(text: str) -> Iterator[str]:
    """The path of a temporary file holding ``text`` (FASTA or FASTQ a client sent), so the
    record reader reads it; removed on leaving."""
    with tempfile.NamedTemporaryFile("w", suffix=".fa", encoding="utf-8", delete=False) as fh:
        fh.write(text)
    try:
        yield fh.name
    finally:
        _remove(fh.name)


#: this process's temporary files, removed when it ends (:func:`remove_temporaries`)
_TEMPORARIES: list[str] = []


def _temporary(path: str) -> None:
    """``path`` removed when the process ends: by the exit handlers, or by a stopped
    command (``remove_temporaries``), which ends without running them."""
    _TEMPORARIES.append(path)
    atexit.register(_remove, path)


def remove_temporaries() -> None:
    """Remove this process's temporary files now."""
    while _TEMPORARIES:
        _remove(_TEMPORARIES.pop())


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def read_records(path: str | os.PathLike) -> list[tuple[str, str]]:
    """All records of a FASTA or FASTQ file (plain or gzipped) as (id, sequence text) pairs.

    The id is the first word of the header line. Raises InputError for a missing,
    unreadable, empty or malformed file.
    """
    return list(iter_records(path))


def fasta_chunks(path: str | os.PathLike, block: int = CHUNK, checked: bool = True
                 ) -> Iterator[tuple[memoryview, int]]:
    """The bytes of a FASTA file cut into pieces of whole records (about ``block`` bytes each),
    each with the 1-based number of its first record, so pieces can be parsed in parallel.
    Control bytes, FASTQ, a damaged stream and an empty file are InputErrors here.
    ``checked`` False leaves the control bytes to the parser (``fasta_parser.parse_piece``
    finds them in its own pass) and numbers no records (every piece's number is 0)."""
    path = os.fspath(path)
    if path == STDIN:
        yield from fasta_chunks(stdin_copy(), block, checked)
        return
    if sniff(path) != "fasta":
        raise InputError(f"file {path}: FASTQ, not FASTA")
    first, offset = 1, 0
    parts: list[bytes] = []  # what follows the last cut, as read (joined once, at a cut)
    try:
        with open_bytes(path) as fh:
            while True:
                raw = fh.read(block)
                if checked and raw.translate(None, NOT_CONTROL):
                    at = offset + next(k for k, b in enumerate(raw) if b in CONTROL)
                    raise _control_byte(path, at)
                offset += len(raw)
                chunk = raw.lstrip() if first == 1 and not parts else raw  # blank lines first
                window = (parts[-1][-1:] if parts else b"") + chunk
                found = max(window.rfind(b"\n>"), window.rfind(b"\r>"))
                if raw and found < 0:  # no record ends in this block: read on
                    if chunk:
                        parts.append(chunk)
                    continue
                data = b"".join(parts) + chunk
                cut = len(data) if not raw else len(data) - len(window) + found + 1
                if cut:
                    piece = memoryview(data)[:cut]
                    yield piece, first if checked else 0
                    first += 1 if not checked else data.count(b"\n>", 0, cut) + \
                        data.count(b"\r>", 0, cut) + 1  # a record per header line
                    del piece  # one piece alive here at a time
                parts = [data[cut:]] if cut < len(data) else []
                if not raw:
                    break
    except InputError:
        raise
    except (OSError, EOFError, zlib.error) as exc:
        raise _stream_errors(path, exc) from None
    if first == 1:
        raise InputError(f"file {path}: no FASTA records")
