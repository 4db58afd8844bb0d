"""``wavedp scores``: the exact score of every query against every target, as one matrix."""

from __future__ import annotations

import os

import click
import numpy as np

from ..api import Prepared
from ..device import choose
from ..errors import InputError
from ..score_matrix import prepared, scores, write_tsv
from . import common, outputs

SCORES_HELP = """Score every record of QUERIES against every record of TARGETS.

QUERIES and TARGETS are FASTA or FASTQ files (plain or gzipped, '-' for
standard input) or .wdb databases; without TARGETS the queries are scored against
themselves (all-vs-all). Each entry is the exact score wavedp align
gives the pair, computed by the search's scan engines (every GPU, or
every CPU core); the memory the matrix needs is checked first.

\b
Output (-o, else standard output):
  tsv: a first row of target ids, then per query its id and scores
       (-o NAME.tsv.gz: gzipped)
  npy: numpy's format, int32 queries x targets (np.load reads it)
The format follows -o's name (.npy: npy), else --format.
"""


@click.command(name="scores", help=SCORES_HELP)
@click.argument("query", metavar="QUERIES")
@click.argument("target", metavar="[TARGETS]", required=False)
@common.score_options
@click.option("--format", "fmt", type=click.Choice(["tsv", "npy"]), default=None,
              help="Output format. [default: from -o's name, else tsv]")
@common.devices_options
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Write the matrix to FILE instead of stdout ('-' is stdout).")
@common.threads_option
def scores_command(query: str, target: str | None, mode: str, matrix: str | None,
                   match: int | None, mismatch: int | None, gap_open: int | None,
                   gap_extend: int | None, fmt: str | None, device: str,
                   devices: str | None, output: str | None) -> None:
    scoring = common.scoring(matrix, match, mismatch, gap_open, gap_extend)
    destination = outputs.target(output, [query] + ([target] if target else []))
    named = (destination.real or "").lower()
    suffix = "npy" if named.endswith(".npy") else "tsv" if named.endswith(
        (".tsv", ".tsv.gz")) else None
    if fmt is not None and suffix is not None and fmt != suffix:
        raise InputError(f"--format {fmt} but -o {destination.name} names a .{suffix} file")
    fmt = fmt or suffix or "tsv"
    if fmt == "npy" and named.endswith(".gz"):
        raise InputError("npy is not gzipped: name the output .npy")
    if query == "-" and target == "-":
        raise InputError("QUERIES and TARGETS cannot both be standard input ('-')")
    def read(path: str, what: str) -> Prepared:  # a .wdb folder, or a FASTA/FASTQ file
        return (prepared(path, scoring, what) if os.path.isdir(path)
                else common.prepare(path, scoring, what))

    queries = read(query, "query")
    targets = queries if target is None else read(target, "target")
    chosen = choose(device, devices)
    found = scores(queries, targets, scoring, mode=mode, device=chosen)
    with outputs.opened(destination, binary=fmt == "npy") as out:
        common.note(chosen)
        if fmt == "npy":
            np.save(out, found, allow_pickle=False)
        else:
            write_tsv(found, out, queries.ids, targets.ids)
