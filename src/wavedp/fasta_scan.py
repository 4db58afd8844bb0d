"""FASTA files read in pieces of whole records, each scanned by one compiled loop: each
record's letters (line ends dropped), length and id. The loop holds no interpreter lock, so
pieces scan on several cores at once: the reader of ``align --pairs``, whose millions of
short records the record reader takes about 2 microseconds each to read.

The records are the record reader's (``seqio.iter_records``: the id is the header's first
word; ``\\r`` ends a line like ``\\n``). A fault (a control byte, a header without an id,
text before the first header, a damaged stream) is named by the record reader, which meets
it first as it reads from the start."""

from __future__ import annotations

import os
import zlib
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from numba import njit

from .alphabets import INVALID
from .errors import InputError
from .seqio import CONTROL, iter_records, open_bytes

#: bytes a piece, and the pieces scanned at once
PIECE = 1 << 22
THREADS = min(8, os.cpu_count() or 1)

#: what a scan keeps beside each record's length and id (``_scan``'s ``keep``)
LENGTHS, LETTERS, BOTH, CODES = 0, 1, 2, 3  # nothing more; letters; letters and codes; codes

_CONTROL = np.zeros(256, np.uint8)
_CONTROL[sorted(CONTROL)] = 1
_IDENTITY = np.arange(256, dtype=np.uint8)


class Records(NamedTuple):
    """A piece's records: their letters one after another, each one's length, their ids
    (each followed by a newline), the 1-based number of the first, and the letters
    translated by a table (None without one) with the count of those it marks INVALID."""

    letters: np.ndarray
    lengths: np.ndarray
    ids: bytes
    first: int
    codes: np.ndarray | None = None
    invalid: int = 0


@njit(cache=True, nogil=True)
def _scan(buf, control, lut, letters, codes, lengths, ids, keep):  # pragma: no cover - compiled
    """Fills ``lengths`` and ``ids`` from ``buf``, and by ``keep`` (LENGTHS, LETTERS, BOTH or
    CODES) ``letters`` and ``codes`` (``lut`` of each letter); returns (fault, records,
    letters, id bytes, codes INVALID), fault 0 or 1 (named by the record reader). A line of
    letters is one inner loop (about 1.5 times as fast as a loop that asks at each byte
    what the line is)."""
    n = buf.size
    r, w, v, i, bad = -1, 0, 0, 0, 0
    while i < n:
        c = buf[i]
        if c == 10 or c == 13:
            i += 1
            continue
        if c == 62 and (i == 0 or buf[i - 1] == 10 or buf[i - 1] == 13):  # a header line
            r += 1
            lengths[r] = 0
            j = i + 1
            while j < n and buf[j] != 32 and buf[j] != 9 and buf[j] != 10 and buf[j] != 13:
                ids[v] = buf[j]
                v += 1
                j += 1
            if j == i + 1:
                return 1, r + 1, w, v, bad
            ids[v] = 10
            v += 1
            while j < n and buf[j] != 10 and buf[j] != 13:
                if control[buf[j]]:
                    return 1, r + 1, w, v, bad
                j += 1
            i = j
            continue
        if r < 0:  # before the first header: blank space only
            if control[c] or (c != 32 and c != 9):
                return 1, 0, w, v, bad
            i += 1
            continue
        j = i  # a line of letters, to its end
        if keep == LENGTHS:
            while j < n and buf[j] != 10 and buf[j] != 13:
                if control[buf[j]]:
                    return 1, r + 1, w, v, bad
                j += 1
            lengths[r] += j - i
        elif keep == LETTERS:
            while j < n and buf[j] != 10 and buf[j] != 13:
                if control[buf[j]]:
                    return 1, r + 1, w, v, bad
                letters[w] = buf[j]
                w += 1
                j += 1
            lengths[r] += j - i
        elif keep == CODES:  # BOTH's loop less the letters' store (one loop with the
            # store under a test of keep: that mode 10-15% slower on the 2-core machine)
            while j < n:
                c = buf[j]
                if c == 10 or c == 13:
                    break
                if control[c]:
                    return 1, r + 1, w, v, bad
                code = lut[c]
                codes[w] = code
                bad += code == INVALID
                w += 1
                j += 1
            lengths[r] += j - i
        else:
            while j < n:
                c = buf[j]
                if c == 10 or c == 13:
                    break
                if control[c]:
                    return 1, r + 1, w, v, bad
                letters[w] = c
                code = lut[c]
                codes[w] = code
                bad += code == INVALID
                w += 1
                j += 1
            lengths[r] += j - i
        i = j
    return 0, r + 1, w, v, bad


def kernel():
    """The compiled scanner (for ``engines.cpu.compile.notice``)."""
    return _scan


@njit(cache=True, nogil=True)
def _line_hashes(buf, out):  # pragma: no cover - compiled
    """FNV-1a (64 bits) of each newline-ended line of ``buf`` into ``out``."""
    basis, prime = np.uint64(0xCBF29CE484222325), np.uint64(0x100000001B3)
    h, k = basis, 0
    for x in range(buf.size):
        b = buf[x]
        if b == 10:
            out[k] = h
            k += 1
            h = basis
        else:
            h = (h ^ np.uint64(b)) * prime


def hash_kernel():
    """The compiled line hasher (for ``engines.cpu.compile.notice``)."""
    return _line_hashes


def line_hashes(blob: bytes, count: int | None = None) -> np.ndarray:
    """A 64-bit hash (int64) of each newline-ended line of ``blob`` (the ids of a piece, as
    :class:`Records` holds them; ``count``: its lines, where known): equal lines, equal
    hashes; no string made per line."""
    out = np.empty(blob.count(b"\n") if count is None else count, np.uint64)
    _line_hashes(np.frombuffer(blob, np.uint8), out)
    return out.view(np.int64)


def _named(path: str) -> InputError:
    """The fault of ``path`` as the record reader names it."""
    try:
        for _ in iter_records(path):
            pass
    except InputError as exc:
        return exc
    return InputError(f"file {path}: not readable as FASTA")


def scan(data: bytes | memoryview, path: str, lut: np.ndarray | None = None,
         letters: bool = True) -> tuple[np.ndarray, np.ndarray, bytes, np.ndarray | None, int]:
    """(letters, lengths, ids, codes, invalid codes) of the records of ``data`` (whole
    records), the codes by ``lut`` (none without it); the ids are UTF-8 text. ``letters``
    False: no letters (an empty array), only the codes (or without ``lut``, only the
    lengths and ids); the letters all the same where a code is INVALID, so that the error
    can name the letter."""
    buf = np.frombuffer(data, np.uint8)
    heads = int(np.count_nonzero(buf == 62)) + 1  # at least the records
    if lut is not None:
        keep = BOTH if letters else CODES
    else:
        keep = LETTERS if letters else LENGTHS
    held = np.empty(buf.size if keep in (LETTERS, BOTH) else 0, np.uint8)
    codes = np.empty(buf.size if keep in (BOTH, CODES) else 0, np.uint8)
    lengths = np.empty(heads, np.int64)
    ids = np.empty(buf.size + heads, np.uint8)
    fault, records, w, v, bad = _scan(buf, _CONTROL, _IDENTITY if lut is None else lut,
                                      held, codes, lengths, ids, keep)
    if not fault and bad and keep == CODES:  # the letters too, for the error to name one
        return scan(data, path, lut, True)
    text = ids[:v].tobytes()
    if fault:
        raise _named(path)
    try:
        text.decode("utf-8")
    except UnicodeDecodeError:  # the record reader names the byte
        raise _named(path) from None
    coded = codes[:w] if keep in (BOTH, CODES) else None
    return held[:w], lengths[:records], text, coded, int(bad)


def _last_header(data: bytes) -> int:
    """Where the last header line of ``data`` starts (its '>' after a line end), else -1
    (0: only at the start). One byte searched for: a pair of bytes is searched slowly."""
    at = len(data)
    while (at := data.rfind(b">", 0, at)) > 0 and data[at - 1] not in (10, 13):
        pass
    return at


def _raw(path: str, size: int) -> Iterator[bytes | memoryview]:
    """The file's bytes (decompressed) in pieces of whole records, about ``size`` each (a
    longer record is a piece alone; its blocks are joined once, so any length is linear)."""
    parts: list[bytes] = []  # read since the last cut
    try:
        with open_bytes(path) as fh:
            while raw := fh.read(size):
                cut = _last_header(raw)
                if cut <= 0:
                    parts.append(raw)
                    continue
                yield b"".join([*parts, memoryview(raw)[:cut]]) if parts else \
                    memoryview(raw)[:cut]
                parts = [raw[cut:]]
            if parts:
                yield b"".join(parts)
    except (OSError, EOFError, zlib.error):
        raise _named(path) from None


def pieces(path: str, lut: np.ndarray | None = None, threads: int = THREADS,
           piece: int | None = None, letters: bool = True) -> Iterator[Records]:
    """The records of a FASTA file (not standard input) a piece (about ``piece`` bytes,
    default PIECE) at a time, in order, ``threads`` pieces scanned at once (a bounded number
    held); their letters translated by ``lut`` (uint8[256]) where given (``letters`` False:
    the codes alone, or without ``lut`` the lengths and ids; see :func:`scan`)."""
    first = 1
    with ThreadPoolExecutor(threads, thread_name_prefix="wavedp-fasta") as pool:
        ahead: deque = deque()

        def taken() -> Records:
            nonlocal first
            letters, lengths, ids, codes, bad = ahead.popleft().result()
            first += lengths.size
            return Records(letters, lengths, ids, first - lengths.size, codes, bad)

        try:
            for data in _raw(path, piece or PIECE):
                ahead.append(pool.submit(scan, data, path, lut, letters))
                while len(ahead) > 2 * threads or (ahead and ahead[0].done()):
                    yield taken()
            while ahead:
                yield taken()
        finally:
            for future in ahead:
                future.cancel()
    if first == 1:
        raise _named(path)
