"""``wavedp makedb``: a search database built once from FASTA. Its workers are forked before
NumPy is imported (``db/makedb.py``; on the H100 host NumPy's import is a third of
CUDASW++4.0's whole makedb), unless the file needs the record reader."""

from __future__ import annotations

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
              help="Processes parsing a plain FASTA file (threads for gzip, FASTQ and a file "
                   "the record reader must read). [default: every core; threads at most "
                   f"{builder.MAKEDB_THREADS}: more contend for the interpreter]")
def makedb(fasta: str, output: str, alphabet: str, threads: int | None) -> None:
    built = builder.build(fasta, output, alphabet, threads, show=True)
    if built is None:  # the record reader's file (gzip, FASTQ, a fault it names): NumPy
        from ..db.database import Database  # lazy: NumPy, for this file only

        db = Database.build(fasta, output, alphabet=alphabet, progress=True,
                                     threads=threads, processes=False)
        built = builder.Built.of(db)
    click.echo(f"wavedp: {output}: {counted(built.sequences, 'sequences')}, "
               f"{counted(built.residues, 'residues')} "
               f"({built.alphabet}{', guessed' if alphabet == 'auto' else ''})"
               + (f"; {built.empty:,} empty (a search gives them no hits)"
                  if built.empty else ""), err=True)
