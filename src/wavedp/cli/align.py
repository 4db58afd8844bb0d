"""``wavedp align``: every query record against every target record."""

from __future__ import annotations

import shlex

import click
import numpy as np

from .. import columns as fields
from ..api import run_pairs
from ..dbsearch.text import DNA_DEFAULTS, PROTEIN_DEFAULTS
from ..device import choose, start_gpus
from ..engines.cuda.sync import SYNCS
from ..errors import InputError
from ..formats import format_alignment, sam_header, sam_record
from . import common, outputs
from .pairs import PairsJob, align_pairs
from .progress import Progress

#: one engine call gets about this many DP cells (and at most CHUNK_PAIRS pairs)
CHUNK_CELLS = 1 << 27

CHUNK_PAIRS = 1 << 14


def _chunks(qlens: np.ndarray, tlens: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """All (query, target) index pairs in query-major order, cut into engine-sized chunks."""
    qi, ti = np.divmod(np.arange(qlens.size * tlens.size, dtype=np.int64), tlens.size)
    cells = np.maximum(qlens[qi], 1) * np.maximum(tlens[ti], 1)
    cuts = np.flatnonzero(np.diff(np.cumsum(cells) // CHUNK_CELLS)) + 1
    pairs = np.stack([qi, ti], axis=1)
    out = []
    for part, work in zip(np.split(pairs, cuts), np.split(cells, cuts), strict=True):
        for start in range(0, len(part), CHUNK_PAIRS):
            out.append((part[start:start + CHUNK_PAIRS],
                        int(work[start:start + CHUNK_PAIRS].sum())))
    return out


ALIGN_HELP = f"""Align every record of QUERY against every record of TARGET (with --pairs:
the k-th QUERY record against the k-th TARGET record).

QUERY and TARGET are FASTA or FASTQ files, plain or gzipped ('-': standard input). Results
are written in query-major order (all targets for the first query, then the next query).

\b
Scoring defaults:
  protein: --matrix BLOSUM62 --gap-open {PROTEIN_DEFAULTS[0]} --gap-extend {PROTEIN_DEFAULTS[1]}
  DNA (given --match and --mismatch): --gap-open {DNA_DEFAULTS[0]} --gap-extend {DNA_DEFAULTS[1]}
  (wavedp.Scoring in Python defaults to gap open 11, extend 1 for both)

\b
Gap convention: a gap of length k costs gap-open + (k-1)*gap-extend
(as parasail and Biopython count). BLAST's -gapopen 11 -gapextend 1
equals --gap-open 12 --gap-extend 1 here.

\b
Formats: pairwise (human-readable), sam (with header; the target is the
reference), blast6 (the 12 BLAST tabular columns, 1-based coordinates;
evalue and bitscore print NA: they are search statistics, see wavedp search),
json (one object per line), paf (with --pairs: minimap2's 12 columns,
tags AS:i, NM:i and the CIGAR as cg:Z). --columns picks blast6's fields
by BLAST's names (std: BLAST's default twelve); --header first prints
them as blastn -outfmt 7 names them.
"""


@click.command(help=ALIGN_HELP)
@click.argument("query")
@click.argument("target")
@common.scoring_options
@common.output_options("pairwise", more=("paf",))
@common.column_options("blast6")
@click.option("--strategy", default=None, metavar="NAME",
              help="GPU strategy: multipass (default), or the lab's score-only diagonal or "
                   "tiled.")
@click.option("--sync", type=click.Choice(SYNCS), default=None,
              help="Synchronization between the steps of diagonal and tiled. "
                   "[default: cpu-implicit]")
@click.option("--storage", default=None, metavar="NAME",
              help="Storage of the diagonal strategy: coalesced (default) or simple.")
@click.option("--energy", is_flag=True, help=common.ENERGY_HELP)
@click.option("--pairs", is_flag=True,
              help="One-to-one: the k-th QUERY record against the k-th TARGET record (both "
                   "files the same number of records), streamed a chunk at a time.")
@click.pass_obj
@common.threads_option
def align(obj, query: str, target: str, mode: str, matrix: str | None, match: int | None,
          mismatch: int | None, gap_open: int | None, gap_extend: int | None,
          score_only: bool, fmt: str, device: str, devices: str | None, output: str | None,
          column_text: str | None, header: bool, strategy: str | None, sync: str | None,
          storage: str | None, energy: bool, pairs: bool) -> None:
    destination = outputs.target(output, [query, target])
    scoring = common.scoring(matrix, match, mismatch, gap_open, gap_extend)
    columns = common.columns(column_text, header, fmt)
    if pairs:
        if strategy or sync or storage:
            raise InputError("--strategy, --sync and --storage apply without --pairs")
        align_pairs(PairsJob(query=query, target=target, scoring=scoring, mode=mode,
                             traceback=not score_only, fmt=fmt, columns=columns,
                             header=header, device=device, devices=devices,
                             destination=destination, energy=energy,
                             argv=(obj or {}).get("argv", [])))
        return
    if fmt == "paf":
        raise InputError("--format paf applies with --pairs")
    start_gpus(device, devices)  # the GPUs start while the inputs are read
    queries = common.prepare(query, scoring, "query")
    targets = common.prepare(target, scoring, "target")
    qlens = np.array([c.size for c in queries.codes], dtype=np.int64)
    tlens = np.array([c.size for c in targets.codes], dtype=np.int64)
    scoring.check_range(int(qlens.max()), int(tlens.max()))  # the worst pair, before any work
    if fmt == "sam":
        common.check_unique_names(targets.ids, f"file {target}", "targets")
    chunks = _chunks(qlens, tlens)
    total = sum(cells for _, cells in chunks)
    argv = (obj or {}).get("argv", [])
    chosen = choose(device, devices)
    with common.energy_meter(energy, chosen) as meter, outputs.opened(destination) as out:
        common.note(chosen)
        if fmt == "sam":
            out.write(sam_header(list(zip(targets.ids, tlens.tolist(), strict=True)),
                                 command_line=shlex.join(["wavedp", *argv])) + "\n")
        elif header:
            out.write(fields.header_line(columns or fields.DEFAULT) + "\n")
        first = True
        placed = np.zeros(len(qlens), bool)  # sam: the query's primary record is written
        with Progress("align", total, queries=len(qlens) * len(tlens), unit="pairs",
                      bar=total >= CHUNK_CELLS) as progress:
            for pairs, cells in chunks:
                results = run_pairs(queries, targets, pairs, scoring, mode, not score_only,
                                    chosen, strategy=strategy, sync=sync, storage=storage)
                for (q, _), aln in zip(pairs, results, strict=True):
                    if fmt == "pairwise" and not first:
                        out.write("\n")
                    if fmt == "sam":  # a query's first target is its primary record
                        out.write(sam_record(aln, secondary=bool(placed[q])) + "\n")
                        placed[q] = True
                    else:
                        out.write((format_alignment(aln, fmt) if columns is None
                                   else fields.render(aln, columns, scoring)) + "\n")
                    first = False
                out.flush()
                progress.advance(cells, done=len(pairs))
    common.energy_line(meter, int(qlens.sum()) * int(tlens.sum()))
