"""All-pairs score matrices: the exact score of every query against every target.

``scores`` runs the search's scan engines (``wavedp.engines.scanner``: every database
sequence's exact score, no ranking cut) over batches of queries and scatters each query's
scores into its row; empty sequences get their scores from the boundary rule (local and
semiglobal 0; global the gap of the other sequence's length). Each entry equals
``wavedp.align(query, target, scoring, mode).score``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np

from . import engines
from .api import Prepared, check_scoring, mode_code, sequences
from .device import Device, choose
from .engines.common import GLOBAL
from .errors import InputError
from .scoring import Scoring
from .seqio import read_records
from .threads import check as check_threads
from .threads import limited

#: host bytes the engine holds per (query of a batch, target) while a batch is scanned: the
#: batch's int32 scores as the scan returns them, and a chunk's copy on the way
WORKING_BYTES = 8
#: a batch of queries holds at most about this many bytes of working set
BATCH_BYTES = 512 << 20
#: host bytes per residue (its code, the concatenated copy the engine scans) and per
#: sequence (offsets, ids and the Python objects around them)
RESIDUE_BYTES, SEQUENCE_BYTES = 2, 128
SUFFIXES = (".npy", ".tsv")


def host_memory() -> int:
    """This machine's physical memory in bytes (``os.sysconf``); 0 where it cannot say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 0


def memory_needed(query_lengths: Sequence[int], target_lengths: Sequence[int]) -> int:
    """Host bytes :func:`scores` needs: the int32 matrix, plus a batch's working set
    (WORKING_BYTES per cell of the batch), plus the encoded sequences."""
    nq, nt = len(query_lengths), len(target_lengths)
    batch = min(nq, _batch_size(nt))
    residues = int(np.sum(query_lengths, dtype=np.int64)) + int(
        np.sum(target_lengths, dtype=np.int64))
    return (4 * nq * nt + WORKING_BYTES * batch * nt + RESIDUE_BYTES * residues
            + SEQUENCE_BYTES * (nq + nt))


def _batch_size(targets: int) -> int:
    return max(1, BATCH_BYTES // (WORKING_BYTES * max(targets, 1)))


def _gib(size: int) -> str:
    return f"{size / (1 << 30):.2f} GiB" if size >= 1 << 28 else f"{size / (1 << 20):.1f} MiB"


def prepared(seqs: Any, scoring: Scoring, what: str) -> Prepared:
    """Sequences (a list, a FASTA/FASTQ path, a ``.wdb`` folder or a Database) validated and
    encoded (already :class:`Prepared` ones as they are)."""
    if isinstance(seqs, Prepared):
        return seqs
    from .db.database import Database  # lazy: NumPy's database module, where one is given

    if isinstance(seqs, (str, os.PathLike)) and os.path.isdir(seqs):
        seqs = Database.open(os.fspath(seqs))
    if isinstance(seqs, Database):
        lut = seqs.codes_for(scoring)  # the other alphabet: one clear error
        codes = [seqs.codes(k) if lut is None else lut[seqs.codes(k)] for k in range(len(seqs))]
        return Prepared.from_codes([], list(seqs.ids), codes)
    if isinstance(seqs, os.PathLike) or (isinstance(seqs, str) and os.path.isfile(seqs)):
        path = os.fspath(seqs)
        return Prepared.from_records(read_records(path), scoring, what, path)
    plural = "queries" if what == "query" else "targets"
    return Prepared(sequences(seqs, plural, "a list of sequences or a FASTA/FASTQ path"),
                    scoring, what)


def _edge(length: np.ndarray, scoring: Scoring, code: int) -> np.ndarray:
    """The score of sequences of ``length`` against an empty one: a gap in global mode."""
    if code != GLOBAL:
        return np.zeros(length.shape, np.int32)
    return np.where(length > 0, -(scoring.gap_open + (length - 1) * scoring.gap_extend),
                    0).astype(np.int32)


def scores(queries: Any, targets: Any, scoring: Scoring, mode: str = "local",
           device: str | Device = "auto", devices: Any = None,
           all_vs_all: bool = False, threads: int | None = None) -> np.ndarray:
    """The exact score of every query against every target: an int32 array of
    ``len(queries) x len(targets)``, entry (i, j) equal to
    ``wavedp.align(queries[i], targets[j], scoring, mode).score``.

    ``queries`` and ``targets``: lists of sequences (str, bytes, Bio Seq or SeqRecord), a
    FASTA/FASTQ path, a ``.wdb`` folder or a Database; ``targets=None`` (or
    ``all_vs_all=True``) scores the queries against themselves. The device (``auto``,
    ``cpu``, ``gpu``; on the GPU every visible one or those of ``devices``) is chosen once;
    on the CPU every core, or ``threads`` of them.
    Before any work the int32 score range and the host memory (:func:`memory_needed`
    against :func:`host_memory`) are checked (InputErrors).
    """
    scoring = check_scoring(scoring)
    code = mode_code(mode)
    if all_vs_all and targets is not None:
        raise InputError("all_vs_all scores the queries against themselves: give no targets")
    q = prepared(queries, scoring, "query")
    t = q if targets is None else prepared(targets, scoring, "target")
    chosen = choose(device, devices)
    qlen = np.array([c.size for c in q.codes], np.int64)
    tlen = np.array([c.size for c in t.codes], np.int64)
    if qlen.size and tlen.size:
        scoring.check_range(int(qlen.max()), int(tlen.max()))
    need, have = memory_needed(qlen, tlen), host_memory()
    if have and need > have:
        raise InputError(f"a {qlen.size} x {tlen.size} score matrix needs about {_gib(need)} "
                         f"of host memory ({_gib(4 * qlen.size * tlen.size)} for the int32 "
                         f"matrix, the rest for the engine's working set and the sequences); "
                         f"this machine has {_gib(have)}: score fewer queries at a time")
    out = np.empty((qlen.size, tlen.size), np.int32)
    out[qlen == 0, :] = _edge(tlen, scoring, code)[None, :]
    out[:, tlen == 0] = _edge(qlen, scoring, code)[:, None]
    live_q, live_t = np.flatnonzero(qlen), np.flatnonzero(tlen)
    if live_q.size and live_t.size:
        with limited(check_threads(threads)):
            _scan(q, t, live_q, live_t, scoring, code, chosen, out)
    return out


def _scan(q: Prepared, t: Prepared, live_q: np.ndarray, live_t: np.ndarray, scoring: Scoring,
          code: int, device: Device, out: np.ndarray) -> None:
    """Fill the rows ``live_q`` x columns ``live_t`` of ``out`` with the scan engine's exact
    scores, a batch of queries at a time."""
    subjects = [t.codes[k] for k in live_t.tolist()]
    offsets = np.zeros(len(subjects) + 1, np.int64)
    np.cumsum([c.size for c in subjects], out=offsets[1:])
    scanner = engines.scanner(device, np.concatenate(subjects), offsets, None, scoring.table,
                              scoring.gap_open, scoring.gap_extend, code)
    step = _batch_size(live_t.size)
    for start in range(0, live_q.size, step):
        batch = live_q[start:start + step]
        found = scanner.matrix([q.codes[k] for k in batch.tolist()])
        if found.shape != (batch.size, live_t.size):
            raise RuntimeError(f"scan engine bug: {found.shape} scores for {batch.size} "
                               f"queries x {live_t.size} targets")
        out[np.ix_(batch, live_t)] = found


def write_tsv(matrix: np.ndarray, out: TextIO, query_ids: Sequence[str],
              target_ids: Sequence[str]) -> None:
    """``matrix`` as tab-separated text: a first row of the target ids (after an empty
    corner cell), then each query's id and its scores."""
    matrix = _check_matrix(matrix)
    query_ids, target_ids = list(map(str, query_ids)), list(map(str, target_ids))
    if (len(query_ids), len(target_ids)) != matrix.shape:
        raise InputError(f"{len(query_ids)} query ids and {len(target_ids)} target ids for a "
                         f"{matrix.shape[0]} x {matrix.shape[1]} matrix")
    for rid in query_ids + target_ids:
        if any(c in rid for c in "\t\n\r"):
            raise InputError(f"id {rid!r} holds a tab or line break: it cannot label a "
                             "tab-separated row or column")
    out.write("\t".join(["", *target_ids]) + "\n")
    for rid, row in zip(query_ids, matrix.tolist(), strict=True):
        out.write(rid + "\t" + "\t".join(map(str, row)) + "\n")


def _check_matrix(matrix: Any) -> np.ndarray:
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or not np.issubdtype(matrix.dtype, np.integer):
        raise InputError(f"a score matrix must be a 2-D integer array, got {matrix.ndim}-D "
                         f"{matrix.dtype}")
    return matrix


def save(matrix: np.ndarray, path: str | os.PathLike, query_ids: Sequence[str] | None = None,
         target_ids: Sequence[str] | None = None) -> None:
    """Write ``matrix`` to ``path``: ``.npy`` (numpy's format, the ids unused) or ``.tsv``
    (:func:`write_tsv`; ids default to ``query1, ...`` and ``target1, ...``)."""
    matrix = _check_matrix(matrix)
    where = os.fspath(path)
    suffix = os.path.splitext(where)[1].lower()
    if suffix not in SUFFIXES:
        raise InputError(f"cannot tell the format of {where}: name it .npy or .tsv")
    try:
        if suffix == ".npy":
            np.save(where, matrix, allow_pickle=False)
            return
        rows = query_ids if query_ids is not None else \
            [f"query{k + 1}" for k in range(matrix.shape[0])]
        columns = target_ids if target_ids is not None else \
            [f"target{k + 1}" for k in range(matrix.shape[1])]
        with open(where, "w", encoding="utf-8") as fh:
            write_tsv(matrix, fh, rows, columns)
    except OSError as exc:
        raise InputError(f"cannot write {where}: {exc.strerror or exc}") from None

