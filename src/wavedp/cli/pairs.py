"""``wavedp align --pairs``: the k-th query record against the k-th target record, streamed a
chunk of pairs at a time (memory bounded by the chunk), written by the batch writers."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

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


def align_pairs(obj: dict | None, query: str, target: str, scoring: Scoring, mode: str,
                score_only: bool, fmt: str, device: str, devices: str | None,
                destination: outputs.Target, columns: Sequence[str] | None, header: bool,
                energy: bool) -> None:
    """The command's work: counts checked before any output, then chunk by chunk."""
    start_gpus(device, devices)  # the GPUs start while the files are counted
    (nq, qbytes, qempty), (nt, tbytes, tempty) = (count_records(readable(p))
                                                  for p in (query, target))
    if nq != nt:
        raise InputError(f"--pairs needs as many target records as query records: {nq:,} "
                         f"in {_name(query)}, {nt:,} in {_name(target)}")
    for path, what, k in ((query, "query", qempty), (target, "target", tempty)):
        if k is not None:  # before any output (standard output too)
            raise InputError(f"file {_name(path)}: {what} record {k} is empty: --pairs "
                             "aligns every record with its mate")
    if fmt == "paf" and score_only and mode != "global":
        raise InputError("--format paf needs the alignments' starts: drop --score-only (or "
                         "use --mode global)")
    chosen = choose(device, devices)
    estimate = (qbytes // max(nq, 1)) * (tbytes // max(nt, 1)) * nq
    argv = (obj or {}).get("argv", [])
    cells = 0
    with common.energy_meter(energy, chosen) as meter, \
            outputs.opened(destination, binary=True) as out:
        common.note(chosen)
        if fmt == "sam":  # every target is a reference: its @SQ line, read once more
            head = list(sam_header_lines([], command_line=shlex.join(["wavedp", *argv])))
            out.write((head[0] + "\n").encode())
            for ids, lengths in reading.ids_and_lengths(target):
                out.write(batch_formats.sq_lines(ids, lengths))
            out.write((head[-1] + "\n").encode())
        elif header:
            from .. import columns as fields

            out.write((fields.header_line(columns or fields.DEFAULT) + "\n").encode())
        with Progress("align", estimate, queries=nq, unit="pairs") as progress:
            for q, t in read_pairs(query, target, scoring, (nq, nt)):
                batch = pairs_api.run(q, t, None, None, scoring, mode, not score_only, chosen)
                batch_formats.write(batch, fmt, out, columns, scoring=scoring,
                                    follows=cells > 0)
                work = int((q.lengths * t.lengths).sum())
                cells += work
                progress.advance(work, done=len(q))
    common.energy_line(meter, cells)


def _name(path: str) -> str:
    return "standard input" if path == "-" else path
