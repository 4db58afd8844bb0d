"""``wavedp makedb``: a search database built once from FASTA. Its workers are forked before
NumPy is imported (``db/makedb.py``; on the H100 host NumPy's import is a third of
CUDASW++4.0's whole makedb)."""

from __future__ import annotations

import os

import click

from ..db import makedb as builder
from ..db.files import ALPHABETS
from .progress import counted

MAKEDB_HELP = """Build a search database (a .wdb folder) from FASTA.

FASTA is a FASTA or FASTQ file, plain or gzipped. Its records are checked and encoded once
into DB.wdb (memory-mapped by wavedp search, with checksums); an older database at DB.wdb is
replaced, anything else there is refused. The folder DB.wdb goes in must exist. Without
--alphabet the first records decide: DNA when they hold only DNA letters (A, C, G, T, U, N,
IUPAC codes), mostly bases; else protein.
"""


@click.command(help=MAKEDB_HELP)
@click.argument("fasta")
@click.option("-o", "--output", required=True, metavar="DB.wdb", help="The database folder.")
@click.option("--alphabet", type=click.Choice(["auto", *ALPHABETS]), default="auto",
              show_default=True, help="Residue alphabet of the sequences (auto: guessed from "
                                      "the first records).")
@click.option("--threads", type=click.IntRange(min=1), default=None, metavar="N",
              help="Processes parsing the file. [default: every core]")
def makedb(fasta: str, output: str, alphabet: str, threads: int | None) -> None:
    # makedb uses no BLAS: its threads, started by NumPy's import in each worker, took the
    # build from 0.56-0.59 s to 0.80-0.88 s on the 16-core H200 host
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    built = builder.build(fasta, output, alphabet, threads, show=True)
    click.echo(f"wavedp: {output}: {counted(built.sequences, 'sequences')}, "
               f"{counted(built.residues, 'residues')} "
               f"({built.alphabet}{', guessed' if alphabet == 'auto' else ''})"
               + (f"; {built.empty:,} empty (a search gives them no hits)"
                  if built.empty else ""), err=True)
