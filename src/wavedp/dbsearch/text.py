"""What the search command and the search service share: the command line's scoring (its gap
defaults, and a DNA database's scores where none is given) and each query's hits as text,
exactly as the command writes them."""

from __future__ import annotations

from ..alignment import Alignment
from ..formats import format_alignment, sam_record
from ..scoring import Scoring

#: the command line's gaps (open, extend): protein, and DNA given --match/--mismatch
PROTEIN_DEFAULTS = (11, 1)
DNA_DEFAULTS = (5, 2)
#: a DNA database searched without a scoring option scores as blastn does
DNA_SCORES = (2, -3)
BLASTN_GAPS = (7, 2)


def scoring(matrix: str | None, match: int | None, mismatch: int | None,
            gap_open: int | None, gap_extend: int | None) -> Scoring:
    """The Scoring of the scoring options, with the command line's gap defaults."""
    dna = match is not None or mismatch is not None
    default_open, default_extend = DNA_DEFAULTS if dna and matrix is None else PROTEIN_DEFAULTS
    return Scoring(
        matrix=matrix, match=match, mismatch=mismatch,
        gap_open=default_open if gap_open is None else gap_open,
        gap_extend=default_extend if gap_extend is None else gap_extend,
    )


def database_scoring(matrix: str | None, match: int | None, mismatch: int | None,
                     gap_open: int | None, gap_extend: int | None
                     ) -> tuple[int, int, int, int]:
    """A DNA database's (match, mismatch, gap open, gap extend) where no scoring option
    was given (``matrix``, ``match`` and ``mismatch`` None): blastn's."""
    return (*DNA_SCORES, BLASTN_GAPS[0] if gap_open is None else gap_open,
            BLASTN_GAPS[1] if gap_extend is None else gap_extend)


def render(hits: list[Alignment], fmt: str, columns: tuple[str, ...] | None = None,
           scoring: Scoring | None = None) -> str:
    """One query's hits as text: a line (or block) per hit, blocks a blank line apart;
    ``columns`` (blast6): the fields of each line; SAM: the best hit primary, the rest
    secondary."""
    from .. import columns as fields

    if columns is not None:
        spans = fields.covered(hits) if "qcovs" in columns else [None] * len(hits)
        return "".join(fields.render(h, columns, scoring, covered) + "\n"
                       for h, covered in zip(hits, spans, strict=True))
    if fmt == "pairwise":
        return "\n".join(format_alignment(h, fmt) + "\n" for h in hits)
    if fmt == "sam":
        return "".join(sam_record(h, secondary=k > 0) + "\n" for k, h in enumerate(hits))
    return "".join(format_alignment(h, fmt, search=True) + "\n" for h in hits)
