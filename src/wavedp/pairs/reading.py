"""Pairs read from two FASTA/FASTQ files (plain or gzipped, ``-`` for standard input) in
lockstep, a chunk of records at a time: the k-th query record with the k-th target record,
memory bounded by the chunk. FASTA is scanned in pieces on several threads
(``fasta_scan``), FASTQ and standard input record by record."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import fasta_scan
from ..errors import InputError
from ..fasta_scan import Records
from ..scoring import Scoring
from ..seqio import STDIN, iter_records, open_bytes, sniff, stdin_copy
from .sequences import Joined, Sequences

#: pairs a chunk (three are held at once: one read ahead, one aligned, one written; the
#: command's peak memory for 1,000,000 DNA pairs on the CPU: 0.97 GB with 2^17, 0.73 with 2^16)
CHUNK = 1 << 16
#: bytes read at a time when counting FASTQ records
BLOCK = 1 << 24


def _blocks(path: str, scoring: Scoring | None = None, letters: bool = True
            ) -> contextlib.closing[Iterator[Records]]:
    """The file's pieces (``fasta_scan.pieces``; ``letters`` False: their records' lengths and
    ids only), to be read in a ``with`` block: left early,
    its scanning threads are stopped there and then. (Left to the garbage collector, a
    generator holding threads may be finalized inside another thread's start-up, whose
    join then waits on a lock that thread holds: the process hangs.)"""
    from ..engines.cpu.compile import SECONDS, notice

    notice([(fasta_scan.kernel(), None, SECONDS["fasta"])])
    return contextlib.closing(fasta_scan.pieces(path, None if scoring is None else scoring.lut,
                                                letters=letters))


def count_records(path: str) -> tuple[int, int, int | None]:
    """(records, letters (FASTQ: bytes), the number of the first empty record or None) of a
    FASTA or FASTQ file, by one pass over it (FASTQ's empty records are found when read)."""
    if sniff(path) == "fasta":
        records, letters, empty = 0, 0, None
        with _blocks(path, letters=False) as blocks:
            for block in blocks:
                if empty is None and (zero := np.flatnonzero(block.lengths == 0)).size:
                    empty = records + int(zero[0]) + 1
                records += block.lengths.size
                letters += int(block.lengths.sum())
        return records, letters, empty
    size, lines, last = 0, 0, b""
    with open_bytes(path) as fh:
        while block := fh.read(BLOCK):
            size += len(block)
            lines += block.count(b"\n")
            last = block[-1:]
    return (lines + (last != b"\n")) // 4, size, None


def empty_record(name: str, what: str, k: int, rid: str | None = None) -> InputError:
    """The error of the empty record number ``k`` (its id ``rid``) of the ``what`` (query or
    target) file ``name``."""
    which = f"{k}" if rid is None else f"{k} ({rid})"
    return InputError(f"file {name}: {what} record {which} is empty: --pairs aligns every "
                      "record with its mate")


def _chunks(path: str, scoring: Scoring, what: str, size: int, letters: bool = True
            ) -> Iterator[Sequences]:
    """The records of ``path`` encoded, ``size`` at a time (``letters`` False: a FASTA
    file's without their letters, the codes alone); an empty record is an InputError (a
    pair needs both sequences)."""
    name = "standard input" if path == STDIN else path

    def empty(k: int, rid: str) -> InputError:
        return empty_record(name, what, k, rid)

    if path == STDIN or sniff(path) != "fasta":
        ids: list[str] = []
        texts: list[str] = []
        for k, (rid, text) in enumerate(iter_records(path), 1):
            if not text:
                raise empty(k, rid)
            ids.append(rid)
            texts.append(text)
            if len(ids) == size:
                yield Sequences.encode(texts, ids, scoring, what, name)
                ids, texts = [], []
        if ids:
            yield Sequences.encode(texts, ids, scoring, what, name)
        return
    held: list[Records] = []
    count = 0
    with _blocks(path, scoring, letters) as blocks:
        for block in blocks:
            if (zero := np.flatnonzero(block.lengths == 0)).size:
                raise empty(block.first + int(zero[0]), Joined(block.ids)[int(zero[0])])
            if block.invalid:  # the first record holding one named, with its letter
                Sequences.from_letters(block.letters, block.lengths, Joined(block.ids),
                                       scoring, what, name)
            held.append(block)
            count += block.lengths.size
            while count >= size:
                yield _cut(held, size, letters)
                count -= size
    if count:
        yield _cut(held, count, letters)


def _cut(held: list[Records], size: int, letters: bool) -> Sequences:
    """The first ``size`` records of the blocks ``held`` (taken out of it), with their
    letters or not."""
    parts, need = [], size
    while need:
        block = held[0]
        if block.lengths.size <= need:
            parts.append(held.pop(0))
            need -= block.lengths.size
            continue
        end = int(block.lengths[:need].sum())
        cut = int(np.flatnonzero(np.frombuffer(block.ids, np.uint8) == 10)[need - 1]) + 1
        parts.append(Records(block.letters[:end], block.lengths[:need], block.ids[:cut], 0,
                             block.codes[:end]))
        held[0] = Records(block.letters[end:], block.lengths[need:], block.ids[cut:], 0,
                          block.codes[end:])
        need = 0
    offsets = np.zeros(size + 1, np.int64)
    np.cumsum(np.concatenate([p.lengths for p in parts]), out=offsets[1:])
    return Sequences(np.concatenate([p.codes for p in parts]), offsets,
                     Joined(b"".join(p.ids for p in parts)),
                     np.concatenate([p.letters for p in parts]) if letters else None)


def read_pairs(queries: str, targets: str, scoring: Scoring,
               counts: Callable[[], tuple[int, int]], size: int | None = None,
               query_letters: bool = True) -> Iterator[tuple[Sequences, Sequences]]:
    """(queries, targets) chunks of the two files, ``size`` pairs each (default CHUNK), the
    next read on a thread while the caller works on one; where a file ends early, an
    InputError with ``counts()`` (each file's records: called then only, it may raise the
    error itself). The targets come without their letters, and the queries too with
    ``query_letters`` False (no output prints them but SAM's)."""
    streams = [_chunks(path, scoring, what, size or CHUNK, keep)
               for path, what, keep in ((queries, "query", query_letters),
                                        (targets, "target", False))]
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="wavedp-read") as pool:
            ahead = pool.submit(_next_pair, streams)
            while True:
                pair = ahead.result()
                if pair is None:
                    return
                ahead = pool.submit(_next_pair, streams)
                q, t = pair
                if q is None or t is None or len(q) != len(t):
                    nq, nt = counts()
                    raise InputError(f"--pairs needs as many target records as query "
                                     f"records: {nq:,} queries, {nt:,} targets")
                yield q, t
    finally:  # a stream left early stops its threads here (see _blocks)
        for stream in streams:
            stream.close()


def ids_and_lengths(path: str) -> Iterator[tuple[Sequence[str], Sequence[int]]]:
    """The records' ids and lengths, a chunk at a time, in order (a SAM header's @SQ
    lines)."""
    if path != STDIN and sniff(path) == "fasta":
        with _blocks(path, letters=False) as blocks:
            for block in blocks:
                yield Joined(block.ids), block.lengths
        return
    ids, lengths = [], []
    for rid, text in iter_records(path):
        ids.append(rid)
        lengths.append(len(text))
        if len(ids) == CHUNK:
            yield ids, lengths
            ids, lengths = [], []
    if ids:
        yield ids, lengths


def id_hashes(ids: Sequence[str]) -> np.ndarray:
    """Each id's 64-bit hash (``fasta_scan.line_hashes`` of its UTF-8 text): equal ids,
    equal hashes; a FASTA piece's ids (:class:`Joined`) are hashed in their text, without a
    string made per id (10,000,000 targets: seconds saved from SAM's header)."""
    from ..engines.cpu.compile import notice

    blob = ids.blob if isinstance(ids, Joined) else "".join(f"{i}\n" for i in ids).encode()
    notice([(fasta_scan.hash_kernel(), None, 0.5)])
    return fasta_scan.line_hashes(blob, len(ids))  # a Joined counted its lines already


def _next_pair(streams: list[Iterator[Sequences]]
               ) -> tuple[Sequences | None, Sequences | None] | None:
    q, t = (next(s, None) for s in streams)
    return None if q is None and t is None else (q, t)


def readable(path: str) -> str:
    """The file to scan for ``path`` (standard input's copy for ``-``: it is read once)."""
    return stdin_copy() if path == STDIN else path
