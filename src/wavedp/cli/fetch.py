"""``wavedp fetch``: sequences of a ``.wdb`` database by id, as FASTA (what ``blastdbcmd
-entry`` does for a BLAST database)."""

from __future__ import annotations

import sys

import click

from ..errors import InputError
from ..seqio import STDIN, whole_title
from . import outputs

#: residues a FASTA line (blastdbcmd's default)
LINE = 80

FETCH_HELP = """Write sequences of the database DB.wdb as FASTA, by id.

IDS are record ids as makedb kept them (the first word of each header); --ids FILE reads
more, one a line ('-': standard input); --all writes every sequence. Every id is looked up
before anything is written: an id the database lacks is one error line. A sequence comes
back in the database's letters (upper case; U, O, J as X and IUPAC codes as N, as stored),
80 residues a line.
"""


@click.command(help=FETCH_HELP)
@click.argument("database", metavar="DB.wdb")
@click.argument("ids", nargs=-1)
@click.option("--ids", "ids_file", default=None, metavar="FILE",
              help="Read more ids from FILE, one a line ('-': standard input).")
@click.option("--all", "every", is_flag=True, help="Write every sequence of the database.")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Write the FASTA to FILE instead of stdout ('-' is stdout).")
def fetch(database: str, ids: tuple[str, ...], ids_file: str | None, every: bool,
          output: str | None) -> None:
    from ..db.database import Database  # lazy: NumPy, for this command only

    wanted = list(ids) + (_read_ids(ids_file) if ids_file else [])
    if every and wanted:
        raise InputError("give ids (or --ids FILE) or --all, not both")
    if not every and not wanted:
        raise InputError("give the ids to fetch (or --ids FILE), or --all")
    destination = outputs.target(output, [database] + ([ids_file] if ids_file else []))
    db = Database.open(database)
    if every:
        found = list(range(len(db)))
    else:
        where: dict[str, list[int]] = {}
        for k, rid in enumerate(db.ids):
            where.setdefault(rid, []).append(k)
        missing = [rid for rid in wanted if rid not in where]
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise InputError(f"file {database}: no sequence has the id {missing[0]!r}{more}")
        found = [k for rid in wanted for k in where[rid]]
    with outputs.opened(destination) as out:
        for k in found:
            text = db.text(k)
            out.write(f">{whole_title(db.id(k), db.title(k))}\n" + "".join(text[a:a + LINE] + "\n"
                                                 for a in range(0, len(text), LINE)))


def _read_ids(path: str) -> list[str]:
    """The ids of ``path`` (or standard input), one a line, blank lines skipped."""
    try:
        if path == STDIN:
            lines = sys.stdin.read().splitlines()
        else:
            with open(path, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise InputError(f"cannot read file {path}: {why}") from None
    return [line.strip() for line in lines if line.strip()]
