"""``wavedp align --pairs``: the k-th query record against the k-th target record, streamed a
chunk of pairs at a time (memory bounded by the chunk), written by the batch writers."""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np

from ..device import choose, start_gpus
from ..errors import InputError
from ..formats import sam_header_lines
from ..pairs import api as pairs_api
from ..pairs import formats as batch_formats
from ..pairs import reading
from ..pairs.reading import count_records, empty_record, read_pairs, readable
from ..scoring import Scoring
from . import common, outputs
from .progress import Progress


@dataclass(frozen=True, kw_only=True)
class PairsJob:
    """What ``wavedp align --pairs`` was asked: the two files, the scoring and mode, CIGARs
    or not, the format and its columns, the device, the output, energy metering, and the
    command line (SAM's @PG)."""

    query: str
    target: str
    scoring: Scoring
    mode: str
    traceback: bool
    fmt: str
    columns: Sequence[str] | None
    header: bool
    device: str
    devices: str | None
    destination: outputs.Target
    energy: bool
    argv: list[str]


def align_pairs(job: PairsJob) -> None:
    """The command's work: the inputs checked before any output where the output is written
    as it comes (standard output, a device); a file is put in place only at the end, so its
    inputs are checked as they stream (one pass over each). Each chunk's output is written
    on a thread while the next chunk aligns."""
    start_gpus(job.device, job.devices)  # the GPUs start while the files are counted
    if job.fmt == "paf" and not job.traceback and job.mode != "global":
        raise InputError("--format paf needs the alignments' starts: drop --score-only (or "
                         "use --mode global)")
    counts = None if job.destination.kind == "file" else _counted(job)
    with outputs.opened(job.destination, binary=True) as out:
        targets = _head(job, out)  # read while the GPUs start
        chosen = choose(job.device, job.devices)
        estimate = None
        if counts:
            (nq, qbytes, _), (nt, tbytes, _) = counts
            estimate = (qbytes // max(nq, 1)) * (tbytes // max(nt, 1)) * nq
        with common.energy_meter(job.energy, chosen) as meter, \
                Progress("align", estimate, queries=counts[0][0] if counts else targets or 0,
                         unit="pairs") as progress:
            common.note(chosen)
            _aligned(job, out, chosen, progress,
                     lambda: tuple(c[0] for c in counts or _counted(job)))
        common.energy_line(meter, progress.cells)


def _aligned(job: PairsJob, out: BinaryIO, chosen, progress: Progress,
             counts: Callable[[], tuple[int, int]]) -> None:
    """The pairs aligned a chunk at a time on ``chosen``, each chunk's lines written on a
    thread while the next one aligns (``counts``: see :func:`read_pairs`). Left early, the
    readers stop here and then (see ``reading._blocks``)."""
    chunks = contextlib.closing(read_pairs(job.query, job.target, job.scoring, counts,
                                           query_letters=job.fmt == "sam"))
    with ThreadPoolExecutor(1, thread_name_prefix="wavedp-write") as writer, \
            chunks as pairs:
        written, last = None, None
        for q, t in pairs:
            batch = pairs_api.run(q, t, None, None, job.scoring, job.mode, job.traceback,
                                  chosen)
            if written is not None:
                written.result()
            written = writer.submit(batch_formats.write, batch, job.fmt, out, job.columns,
                                    scoring=job.scoring, follows=progress.cells > 0,
                                    after=last)
            last = q.ids[len(q) - 1]  # SAM: a read's records may run on into the next chunk
            progress.advance(int((q.lengths * t.lengths).sum()), done=len(q))
        if written is not None:
            written.result()


def _counted(job: PairsJob) -> tuple[tuple[int, int, int | None], ...]:
    """Each file's (records, letters, first empty record), checked: as many targets as
    queries, none empty."""
    (nq, qbytes, qempty), (nt, tbytes, tempty) = counts = tuple(
        count_records(readable(p)) for p in (job.query, job.target))
    if nq != nt:
        raise InputError(f"--pairs needs as many target records as query records: {nq:,} "
                         f"in {_name(job.query)}, {nt:,} in {_name(job.target)}")
    for path, what, k in ((job.query, "query", qempty), (job.target, "target", tempty)):
        if k is not None:  # before any output (standard output too)
            raise empty_record(_name(path), what, k)
    return counts


def _head(job: PairsJob, out: BinaryIO) -> int | None:
    """What comes before the alignments: SAM's header (every target an @SQ line, the target
    file read once more), or blast6's ``--header`` line. SAM: the number of targets."""
    if job.fmt == "sam":
        head = list(sam_header_lines([], command_line=shlex.join(["wavedp", *job.argv])))
        out.write((head[0] + "\n").encode())
        targets, hashes = 0, []
        with contextlib.closing(reading.ids_and_lengths(job.target)) as chunks:
            for ids, lengths in chunks:
                if (zero := np.flatnonzero(np.asarray(lengths) == 0)).size:
                    raise empty_record(_name(job.target), "target",
                                       targets + int(zero[0]) + 1)
                hashes.append(reading.id_hashes(ids))
                out.write(batch_formats.sq_lines(ids, lengths))
                targets += len(lengths)
        _unique_ids(job.target, np.concatenate(hashes) if hashes else np.zeros(0, np.int64))
        out.write((head[-1] + "\n").encode())
        return targets
    if job.header:
        from .. import columns as fields

        out.write((fields.header_line(job.columns or fields.DEFAULT) + "\n").encode())
    return None


def _unique_ids(path: str, hashes: np.ndarray) -> None:
    """SAM's reference names must be unique: an InputError naming the first target whose id
    an earlier one holds. ``hashes``: each target id's 64-bit hash (``reading.id_hashes``: 8
    bytes a target, not a set of ten million strings); ids whose hashes meet are compared on
    a second read."""
    ranked = np.sort(hashes)
    if not (ranked[1:] == ranked[:-1]).any():
        return
    met = ranked[1:][ranked[1:] == ranked[:-1]]
    suspects = set(np.flatnonzero(np.isin(hashes, met)).tolist())
    seen: set[str] = set()
    k = 0
    with contextlib.closing(reading.ids_and_lengths(path)) as chunks:
        for ids, _ in chunks:
            for rid in ids:
                if k in suspects:
                    if rid in seen:
                        raise InputError(f"file {_name(path)}: the id {rid!r} names target "
                                         f"{k + 1} and one before it; SAM needs unique "
                                         "reference names (rename them, or choose another "
                                         "--format)")
                    seen.add(rid)
                k += 1


def _name(path: str) -> str:
    return "standard input" if path == "-" else path
