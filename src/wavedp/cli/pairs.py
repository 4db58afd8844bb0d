"""``wavedp align --pairs``: the k-th query record against the k-th target record, streamed a
chunk of pairs at a time (memory bounded by the chunk), written by the batch writers."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

from ..device import choose, start_gpus
from ..errors import InputError
from ..formats import sam_header_lines
from ..pairs import api as pairs_api
from ..pairs import formats as batch_formats
from ..pairs import reading
from ..pairs.reading import count_records, read_pairs, readable
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
    """The command's work: counts checked before any output, then chunk by chunk."""
    start_gpus(job.device, job.devices)  # the GPUs start while the files are counted
    (nq, qbytes, qempty), (nt, tbytes, tempty) = (count_records(readable(p))
                                                  for p in (job.query, job.target))
    if nq != nt:
        raise InputError(f"--pairs needs as many target records as query records: {nq:,} "
                         f"in {_name(job.query)}, {nt:,} in {_name(job.target)}")
    for path, what, k in ((job.query, "query", qempty), (job.target, "target", tempty)):
        if k is not None:  # before any output (standard output too)
            raise InputError(f"file {_name(path)}: {what} record {k} is empty: --pairs "
                             "aligns every record with its mate")
    if job.fmt == "paf" and not job.traceback and job.mode != "global":
        raise InputError("--format paf needs the alignments' starts: drop --score-only (or "
                         "use --mode global)")
    chosen = choose(job.device, job.devices)
    estimate = (qbytes // max(nq, 1)) * (tbytes // max(nt, 1)) * nq
    cells = 0
    with common.energy_meter(job.energy, chosen) as meter, \
            outputs.opened(job.destination, binary=True) as out:
        common.note(chosen)
        _head(job, out)
        with Progress("align", estimate, queries=nq, unit="pairs") as progress:
            for q, t in read_pairs(job.query, job.target, job.scoring, (nq, nt)):
                batch = pairs_api.run(q, t, None, None, job.scoring, job.mode, job.traceback,
                                      chosen)
                batch_formats.write(batch, job.fmt, out, job.columns, scoring=job.scoring,
                                    follows=cells > 0)
                work = int((q.lengths * t.lengths).sum())
                cells += work
                progress.advance(work, done=len(q))
    common.energy_line(meter, cells)


def _head(job: PairsJob, out: BinaryIO) -> None:
    """What comes before the alignments: SAM's header (every target an @SQ line, the file
    read once more), or blast6's ``--header`` line."""
    if job.fmt == "sam":
        head = list(sam_header_lines([], command_line=shlex.join(["wavedp", *job.argv])))
        out.write((head[0] + "\n").encode())
        for ids, lengths in reading.ids_and_lengths(job.target):
            out.write(batch_formats.sq_lines(ids, lengths))
        out.write((head[-1] + "\n").encode())
    elif job.header:
        from .. import columns as fields

        out.write((fields.header_line(job.columns or fields.DEFAULT) + "\n").encode())


def _name(path: str) -> str:
    return "standard input" if path == "-" else path
