"""Pairs read from two FASTA/FASTQ files (plain or gzipped, ``-`` for standard input) in
lockstep, a chunk of records at a time: the k-th query record with the k-th target record,
memory bounded by the chunk."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from ..errors import InputError
from ..scoring import Scoring
from ..seqio import STDIN, iter_records, stdin_copy
from .sequences import Sequences

#: pairs a chunk
CHUNK = 1 << 17
#: bytes read at a time when counting records
BLOCK = 1 << 24


def count_records(path: str) -> tuple[int, int]:
    """(records, sequence bytes at most) of a FASTA or FASTQ file, by a scan of its bytes
    (the records' own checks come when they are read)."""
    opener = gzip.open if _is_gzip(path) else open
    records, size, first, fastq_lines = 0, 0, b"", 0
    with opener(path, "rb") as fh:
        while block := fh.read(BLOCK):
            if not first:
                first = block[:1]
            records += block.count(b"\n>") if first == b">" else 0
            fastq_lines += block.count(b"\n")
            size += len(block)
            last = block[-1:]
    if first == b">":
        return records + 1, size
    if first == b"@":
        return (fastq_lines + (last != b"\n")) // 4, size
    return 0, size


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def _chunks(path: str, scoring: Scoring, what: str, size: int) -> Iterator[Sequences]:
    """The records of ``path`` encoded, ``size`` at a time; an empty record is an
    InputError (a pair needs both sequences)."""
    ids: list[str] = []
    texts: list[str] = []
    name = "standard input" if path == STDIN else path
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


def _next_pair(streams: list[Iterator[Sequences]]
               ) -> tuple[Sequences | None, Sequences | None] | None:
    q, t = (next(s, None) for s in streams)
    return None if q is None and t is None else (q, t)


def readable(path: str) -> str:
    """The file to scan for ``path`` (standard input's copy for ``-``: it is read once)."""
    return stdin_copy() if path == STDIN else path


def checked_path(path: str) -> str:
    """An InputError for a missing or unreadable input before any work."""
    if path != STDIN and not os.path.isfile(path):
        raise InputError(f"file {path}: no such file" if not os.path.exists(path)
                         else f"{path}: not a file")
    return path
