"""Pairs read from two FASTA/FASTQ files (plain or gzipped, ``-`` for standard input) in
lockstep, a chunk of records at a time: the k-th query record with the k-th target record,
memory bounded by the chunk."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from ..errors import InputError
from ..scoring import Scoring
from ..seqio import STDIN, iter_records, open_bytes, stdin_copy
from .sequences import Sequences

#: pairs a chunk
CHUNK = 1 << 17
#: bytes read at a time when counting records
BLOCK = 1 << 24


#: a FASTA record with nothing but blank lines before the next header (line ends read as
#: line feeds), and one before the end
_EMPTY = re.compile(rb"\n>[^\n]*(?:\n[ \t]*)*\n>")
_EMPTY_LAST = re.compile(rb"\n>[^\n]*(?:\n[ \t]*)*\n?\Z")
#: bytes of a block kept in front of the next, so that a pattern across them is found
OVERLAP = 1 << 16


def count_records(path: str) -> tuple[int, int, int | None]:
    """(records, bytes, the number of the first empty record or None) of a FASTA or FASTQ
    file, by a scan of its bytes (FASTQ's empty records, and a FASTA record whose blank
    lines outlast OVERLAP, are found when read; so are the records' own faults)."""
    size, first, fastq_lines, last = 0, b"", 0, b""
    base, empty, text = 0, None, b"\n"  # headers before ``text``; it starts with a line end
    with open_bytes(path) as fh:
        while block := fh.read(BLOCK):
            first = first or block[:1]
            size += len(block)
            last = block[-1:]
            fastq_lines += block.count(b"\n")
            if first != b">":
                continue
            text += block.replace(b"\r", b"\n")
            found = _EMPTY.search(text) if empty is None else None
            if found:
                empty = base + text.count(b"\n>", 0, found.start()) + 1
            cut = max(len(text) - OVERLAP, 0)
            cut -= cut > 0 and text[cut - 1:cut + 1] == b"\n>"  # a header's line end kept
            base += text.count(b"\n>", 0, cut)
            text = text[cut:]
    if first == b">":
        found = _EMPTY_LAST.search(text) if empty is None else None
        if found:
            empty = base + text.count(b"\n>", 0, found.start()) + 1
        return base + text.count(b"\n>"), size, empty
    if first == b"@":
        return (fastq_lines + (last != b"\n")) // 4, size, None
    return 0, size, None


def _chunks(path: str, scoring: Scoring, what: str, size: int) -> Iterator[Sequences]:
    """The records of ``path`` encoded, ``size`` at a time; an empty record is an
    InputError (a pair needs both sequences)."""
    name = "standard input" if path == STDIN else path
    ids: list[str] = []
    texts: list[str] = []
    for k, (rid, text) in enumerate(iter_records(path), 1):
        if not text:
            raise InputError(f"file {name}: {what} record {k} ({rid}) is empty: --pairs "
                             "aligns every record with its mate")
        ids.append(rid)
        texts.append(text)
        if len(ids) == size:
            yield Sequences.encode(texts, ids, scoring, what, name)
            ids, texts = [], []
    if ids:
        yield Sequences.encode(texts, ids, scoring, what, name)


def read_pairs(queries: str, targets: str, scoring: Scoring, counts: tuple[int, int],
               size: int = CHUNK) -> Iterator[tuple[Sequences, Sequences]]:
    """(queries, targets) chunks of the two files, ``size`` pairs each, the next read on a
    thread while the caller works on one; ``counts`` (each file's records, checked equal
    by the caller) says where a file ends early."""
    streams = [_chunks(path, scoring, what, size)
               for path, what in ((queries, "query"), (targets, "target"))]
    with ThreadPoolExecutor(1, thread_name_prefix="wavedp-read") as pool:
        ahead = pool.submit(_next_pair, streams)
        while True:
            pair = ahead.result()
            if pair is None:
                return
            ahead = pool.submit(_next_pair, streams)
            q, t = pair
            if q is None or t is None or len(q) != len(t):
                raise InputError(f"--pairs needs as many target records as query records: "
                                 f"{counts[0]:,} queries, {counts[1]:,} targets")
            yield q, t


def ids_and_lengths(path: str) -> Iterator[tuple[list[str], list[int]]]:
    """The records' ids and lengths, a chunk at a time, in order (a SAM header's @SQ
    lines)."""
    ids, lengths = [], []
    for rid, text in iter_records(path):
        ids.append(rid)
        lengths.append(len(text))
        if len(ids) == CHUNK:
            yield ids, lengths
            ids, lengths = [], []
    if ids:
        yield ids, lengths


def _next_pair(streams: list[Iterator[Sequences]]
               ) -> tuple[Sequences | None, Sequences | None] | None:
    q, t = (next(s, None) for s in streams)
    return None if q is None and t is None else (q, t)


def readable(path: str) -> str:
    """The file to scan for ``path`` (standard input's copy for ``-``: it is read once)."""
    return stdin_copy() if path == STDIN else path
