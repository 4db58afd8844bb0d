"""The search command's profiles: ``--in-pssm`` (a PSSM as the one query), the rounds of
``--iterations`` and what they write (``--out-pssm``, ``--msa``)."""

from __future__ import annotations

from collections.abc import Iterator

import click
import numpy as np

from ..alignment import Alignment
from ..errors import InputError
from ..profiles import msa
from ..profiles.iterate import INCLUSION
from ..scoring import Scoring
from ..seqio import STDIN
from .queries import QueryFile


def profile_options(command):
    """The search command's profile options."""
    for option in reversed([
        click.option("--in-pssm", "in_pssm", default=None, metavar="FILE",
                     help="Search with this query profile (PSI-BLAST's ASCII PSSM, as "
                          "psiblast -out_ascii_pssm writes it) instead of QUERIES: give DB "
                          "alone."),
        click.option("--iterations", type=click.IntRange(min=1), default=1,
                     show_default=True,
                     help="Rounds of iterative search: each round's hits at E <= "
                          "--inclusion-evalue make the next round's profile (PSI-BLAST's "
                          "method); stops early once no new sequence is included."),
        click.option("--inclusion-evalue", type=float, default=INCLUSION, show_default=True,
                     help="With --iterations: the E-value at most of a hit a profile is "
                          "built from."),
        click.option("--out-pssm", "out_pssm", default=None, metavar="FILE",
                     help="With --iterations and one query: write its last round's profile "
                          "(ASCII PSSM, as psiblast -out_ascii_pssm)."),
        click.option("--msa", default=None, metavar="FILE",
                     help="One query: write it and its reported hits as a query-anchored "
                          "multiple alignment (with --iterations, the last round's)."),
        click.option("--msa-format", type=click.Choice(msa.FORMATS), default="a3m",
                     show_default=True,
                     help="--msa's format: A3M (HH-suite, ColabFold), Stockholm (hmmbuild) "
                          "or aligned FASTA."),
    ]):
        command = option(command)
    return command


class ProfileFile:
    """``--in-pssm``: a query's profile (PSI-BLAST's ASCII PSSM) as the search's one query,
    with QueryFile's interface (a batch is the list of the profile)."""

    def __init__(self, path: str, scoring: Scoring) -> None:
        from ..profiles import Profile, parse

        if path == STDIN:
            import sys

            self.profile = parse(sys.stdin.read(), "standard input")
        else:
            self.profile = Profile.read(path)
        self.profile.table(scoring)  # a DNA scoring, or a letter the matrix lacks: now
        self.path = path
        self.lengths = np.array([len(self.profile)], np.int64)

    def __len__(self) -> int:
        return 1

    def id_of(self, k: int) -> str:
        """The profile's id (its file's name)."""
        return self.profile.id

    def titles(self) -> Iterator[str]:
        """The profile's title: its id."""
        return iter([self.profile.id])

    def batches(self) -> Iterator[tuple[int, list]]:
        """One batch: the profile."""
        yield 0, [self.profile]


def inputs(given: tuple[str, ...], in_pssm: str | None, iterations: int,
           out_pssm: str | None, msa_path: str | None, server: str | None
           ) -> tuple[str, str]:
    """(QUERIES, DB) of the command's arguments ``given`` (DB alone with ``--in-pssm``, the
    profile then the query), the profile options checked together."""
    if len(given) != (1 if in_pssm else 2):
        raise InputError("search takes QUERIES DB" if in_pssm is None else
                         "with --in-pssm FILE, search takes DB alone (the profile is the "
                         "query)")
    if (in_pssm or iterations > 1 or msa_path) and server is not None:
        raise InputError("--server searches sequences in one round: not --in-pssm, "
                         "--iterations or --msa")
    if out_pssm is not None and iterations < 2:
        raise InputError("--out-pssm writes the profile of the last of --iterations N >= 2")
    return (in_pssm, given[0]) if in_pssm else (given[0], given[1])


def msa_text(queries: QueryFile | ProfileFile, hits: list[Alignment], fmt: str) -> str:
    """The one query and its ``hits`` as a multiple alignment in ``fmt``."""
    if isinstance(queries, ProfileFile):
        qid, query = queries.profile.id, queries.profile.query
    else:
        batch = next(iter(queries.batches()))[1]
        qid, query = batch.ids[0], batch.texts[0]
    return msa.text(qid, query, hits, fmt)
