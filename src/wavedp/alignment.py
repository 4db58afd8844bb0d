"""The Alignment result and CIGAR helpers."""

from __future__ import annotations

import gc
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np

from .cigars import cigar_strings, runs_from_letters
from .errors import InputError

_CIGAR_RE = re.compile(r"(\d+)([=XIDMS])")


def cigar_ops(cigar: str) -> list[tuple[int, str]]:
    """Split a CIGAR string into (length, op) pairs."""
    return [(int(n), op) for n, op in _CIGAR_RE.findall(cigar)]


_QUERY_STEPS = np.zeros(256, np.int64)  # per CIGAR letter: whether a column takes a query
_TARGET_STEPS = np.zeros(256, np.int64)  # residue, a target residue
_QUERY_STEPS[list(b"=XMI")] = 1
_TARGET_STEPS[list(b"=XMD")] = 1


def column_positions(ops: np.ndarray, query_start: int, target_start: int
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Each column of per-column ops (uint8 CIGAR letters): the query and the target
    position it reaches (an aligned column's two residues; a gap's, the last before it)."""
    ops = np.asarray(ops, np.uint8)
    return (query_start + np.cumsum(_QUERY_STEPS[ops]) - 1,
            target_start + np.cumsum(_TARGET_STEPS[ops]) - 1)


def cigars_from_ops(many: Sequence[bytes | str | np.ndarray]) -> list[str]:
    """Each of ``many`` single-letter ops run-length encoded (``b"==XID"`` -> ``"2=1X1I1D"``),
    all runs counted and written at once."""
    arrays = [np.frombuffer(o.encode("ascii") if isinstance(o, str) else o, np.uint8)
              if isinstance(o, (str, bytes)) else np.asarray(o, np.uint8) for o in many]
    sizes = np.array([a.size for a in arrays], np.int64)
    if not sizes.sum():
        return [""] * len(arrays)
    return cigar_strings(*runs_from_letters(np.concatenate(arrays), sizes))


@dataclass(frozen=True)
class Alignment:
    """One pairwise alignment: coordinates are 0-based, half-open; the target is the reference.

    ``query_start``/``target_start`` are None for score-only local and semiglobal results
    (only the end cell is known). ``cigar`` uses ``=``, ``X``, ``I`` (query only) and ``D``
    (target only); it is None when traceback was not asked for. Search hits also carry
    ``evalue``, ``bitscore`` and ``strand``; a minus-strand hit's query fields (text,
    coordinates) are those of the reverse-complemented query it aligns.
    """

    score: int
    query_start: int | None
    query_end: int
    target_start: int | None
    target_end: int
    cigar: str | None
    query_id: str = "query"
    target_id: str = "target"
    mode: str = "local"
    query_length: int = 0
    target_length: int = 0
    query: str = field(default="", repr=False, compare=False)
    target: str = field(default="", repr=False, compare=False)
    #: search hits: E-value and bit score (None without statistics) and the query strand
    #: ("+", or "-" where the hit aligns the reverse complement of the query; None outside
    #: a DNA search)
    evalue: float | None = None
    bitscore: float | None = None
    strand: str | None = None
    #: search hits: the subject's title (its header line after the id; empty where none)
    target_title: str = field(default="", repr=False, compare=False)

    def ops(self) -> list[tuple[int, str]]:
        """The CIGAR as (length, op) pairs; empty when there is none."""
        return cigar_ops(self.cigar) if self.cigar else []

    def placed_ops(self) -> Iterator[tuple[int, str, int, int]]:
        """The CIGAR's runs with where each starts: (length, op, query position, target
        position), from the alignment's starts (0 where unknown)."""
        i, j = self.query_start or 0, self.target_start or 0
        for length, op in self.ops():
            yield length, op, i, j
            i += length if op in "=XMI" else 0
            j += length if op in "=XMD" else 0

    def rows(self) -> tuple[str, str]:
        """The two gapped rows (query, target) of the aligned region."""
        if self.cigar is None:
            raise ValueError("this alignment is score-only: align with traceback=True for rows")
        q, t = self.query_start or 0, self.target_start or 0
        qrow, trow = [], []
        for length, op in self.ops():
            if op in "=XM":
                qrow.append(self.query[q:q + length])
                trow.append(self.target[t:t + length])
                q += length
                t += length
            elif op == "I":
                qrow.append(self.query[q:q + length])
                trow.append("-" * length)
                q += length
            elif op == "D":
                qrow.append("-" * length)
                trow.append(self.target[t:t + length])
                t += length
        return "".join(qrow), "".join(trow)

    def counts(self) -> dict[str, int]:
        """Column counts from the CIGAR: matches, mismatches, gap columns, gap opens, length."""
        c = {"=": 0, "X": 0, "I": 0, "D": 0, "gapopen": 0}
        for length, op in self.ops():
            c[op] += length
            if op in "ID":
                c["gapopen"] += 1
        c["length"] = c["="] + c["X"] + c["I"] + c["D"]
        return c

    def format(self, kind: str = "pairwise") -> str:
        """Render as ``pairwise``, ``sam`` (record line), ``blast6`` or ``json``."""
        from .formats import format_alignment  # here: formats imports this module

        return format_alignment(self, kind)

    def to_biopython(self) -> Any:
        """This alignment as a ``Bio.Align.Alignment`` over the whole sequences, with the same
        coordinates: the target first and the query second, as Biopython orders them (its
        ``.target`` and ``.query``; SeqRecords with the ids), ``score`` set. A minus-strand
        hit holds the original query, its coordinates decreasing (Biopython's reverse
        strand); an empty alignment has no columns. Score-only results raise InputError."""
        if self.cigar is None:
            raise InputError("to_biopython needs a traceback: this alignment is score-only "
                             "(align with traceback=True)")
        if len(self.query) < self.query_end or len(self.target) < self.target_end:
            raise InputError("to_biopython needs the aligned texts (query and target)")
        # Biopython's alignment classes cost start-up time that ``import wavedp`` need not pay
        from Bio.Align import Alignment as BioAlignment
        from Bio.Seq import Seq
        from Bio.SeqRecord import SeqRecord

        i, j = self.query_start or 0, self.target_start or 0
        points, last = [(j, i)], ""
        for length, op in self.ops():
            kind = "M" if op in "=XM" else op
            i += length if kind in "MI" else 0
            j += length if kind in "MD" else 0
            if kind == last:  # a mismatch run after matches continues one aligned block
                points[-1] = (j, i)
            else:
                points.append((j, i))
            last = kind
        coordinates = np.array(points, dtype=np.int64).T
        query = Seq(self.query)
        if self.strand == "-":  # the text aligned is the reverse complement of the query
            query = query.reverse_complement()
            coordinates[1] = len(self.query) - coordinates[1]
        found = BioAlignment([SeqRecord(Seq(self.target), id=self.target_id, description=""),
                              SeqRecord(query, id=self.query_id, description="")], coordinates)
        found.score = self.score
        return found


#: Alignment's fields, in order
FIELDS = tuple(Alignment.__dataclass_fields__)


def built(columns: dict[str, Sequence[Any]], **same: Any) -> list[Alignment]:
    """Alignments from columns (a field's values, one per alignment; at least one column)
    and fields ``same`` for all, every field given once: without the frozen ``__init__``'s
    per-field cost (it checks nothing), for the thousands of results of a search or a
    batch of pairs."""
    if sorted((*columns, *same)) != sorted(FIELDS):
        missing = set(FIELDS) - set(columns) - set(same)
        raise TypeError(f"Alignment fields: {sorted(missing) or 'some given twice or unknown'}")
    if len({len(c) for c in columns.values()}) != 1:
        raise ValueError("built needs columns, all of one length")
    values = [columns[f] if f in columns else repeat(same[f]) for f in FIELDS]
    new, out = object.__new__, []
    collecting = gc.isenabled()
    gc.disable()  # thousands of new objects, none cyclic: no collection passes over them
    try:
        for row in zip(*values, strict=False):  # the constants repeat; in field order
            aln = new(Alignment)
            aln.__dict__.update(zip(FIELDS, row, strict=True))
            out.append(aln)
    finally:
        if collecting:
            gc.enable()
    return out


def replaced(aln: Alignment, **changes: object) -> Alignment:
    """``dataclasses.replace(aln, **changes)`` for a known field set, without re-running the
    frozen ``__init__`` (Alignment checks nothing there): about 5x faster, for the
    thousands of search hits that gain an E-value, bit score and strand."""
    unknown = changes.keys() - aln.__dict__.keys()
    if unknown:
        raise TypeError(f"Alignment has no field {sorted(unknown)[0]!r}")
    new = object.__new__(Alignment)
    new.__dict__.update(aln.__dict__)
    new.__dict__.update(changes)
    return new
