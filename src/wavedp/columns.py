"""BLAST's tabular fields (``-outfmt "6 qseqid sseqid ..."``) for an :class:`Alignment`.

Each field has BLAST's meaning and number format (checked against blastp and blastn 2.12):
coordinates 1-based and inclusive, a minus-strand hit on the original query with
``sstart > send``; ``pident`` with 3 decimals, ``ppos`` with 2, ``qcovhsp`` an integer
(rounded half up, 100 only for the whole query); ``btop`` and ``qseq``/``sseq`` in BLAST's
orientation (a minus-strand hit shows the query's plus strand against the reverse
complement of the subject), letters upper case. The default columns print exactly what
``formats.blast6`` prints. A value that does not exist (no traceback, an empty range, no
statistics) prints ``NA``, as does an empty aligned text; ``cigar`` is wavedp's own field.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

import numpy as np

from .alignment import Alignment
from .errors import InputError
from .formats import NA, blast_bitscore, blast_evalue
from .scoring import INVALID, Scoring
from .version import __version__

#: field name -> its one-line meaning (BLAST's, where BLAST has the field)
FIELDS: dict[str, str] = {
    "qseqid": "query sequence id",
    "qaccver": "query id (BLAST prints the id itself for FASTA input read without "
               "-parse_deflines)",
    "sseqid": "subject (target) sequence id",
    "saccver": "subject id (as qaccver)",
    "stitle": "subject title: its header line after the id (BLAST's, for a database made "
              "with -parse_seqids)",
    "salltitles": "all subject titles (one: a .wdb keeps every record)",
    "pident": "percentage of identical matches over the alignment length",
    "length": "alignment length (columns, gaps included)",
    "mismatch": "number of mismatches",
    "gapopen": "number of gap openings",
    "qstart": "start of the alignment in the query (1-based)",
    "qend": "end of the alignment in the query (1-based, inclusive)",
    "sstart": "start of the alignment in the subject (1-based; > send on the minus strand)",
    "send": "end of the alignment in the subject (1-based, inclusive)",
    "evalue": "expect value",
    "bitscore": "bit score",
    "score": "raw score",
    "qlen": "query sequence length",
    "slen": "subject sequence length",
    "nident": "number of identical matches",
    "positive": "number of positive-scoring matches (needs the scoring)",
    "gaps": "total number of gap columns",
    "ppos": "percentage of positive-scoring matches (needs the scoring)",
    "qcovhsp": "query coverage of the alignment, percent (an integer)",
    "qcovs": "query coverage of all the query's alignments with the subject, percent (an "
             "integer)",
    "sstrand": "subject strand: plus or minus (DNA), N/A (protein)",
    "cigar": "the CIGAR (=, X, I, D; wavedp's field, not BLAST's)",
    "btop": "BLAST traceback operations",
    "qseq": "aligned part of the query sequence",
    "sseq": "aligned part of the subject sequence",
}

#: the default columns: ``formats.blast6``'s 12
DEFAULT: tuple[str, ...] = ("qseqid", "sseqid", "pident", "length", "mismatch", "gapopen",
                            "qstart", "qend", "sstart", "send", "evalue", "bitscore")
#: BLAST's ``std`` keyword: the default columns with its accession fields
STD: tuple[str, ...] = ("qaccver", "saccver") + DEFAULT[2:]

#: field name -> the description ``blastp -outfmt 7`` prints for it in ``# Fields:``
HEADERS: dict[str, str] = {
    "qseqid": "query id", "qaccver": "query acc.ver", "sseqid": "subject id",
    "saccver": "subject acc.ver", "stitle": "subject title", "salltitles": "subject titles",
    "pident": "% identity", "length": "alignment length",
    "mismatch": "mismatches", "gapopen": "gap opens", "qstart": "q. start", "qend": "q. end",
    "sstart": "s. start", "send": "s. end", "evalue": "evalue", "bitscore": "bit score",
    "score": "score", "qlen": "query length", "slen": "subject length",
    "nident": "identical", "positive": "positives", "gaps": "gaps", "ppos": "% positives",
    "qcovhsp": "% query coverage per hsp", "qcovs": "% query coverage per subject",
    "sstrand": "subject strand", "cigar": "CIGAR",
    "btop": "BTOP", "qseq": "query seq", "sseq": "subject seq",
}

#: fields whose values are integers, floats; the others are text
INTEGER = frozenset({"length", "mismatch", "gapopen", "qstart", "qend", "sstart", "send",
                     "score", "qlen", "slen", "nident", "positive", "gaps", "qcovhsp",
                     "qcovs"})
FLOAT = frozenset({"pident", "evalue", "bitscore", "ppos"})
#: fields that need the substitution scores
NEEDS_SCORING = frozenset({"positive", "ppos"})

_SPLIT = re.compile(r"[\s,]+")
_COMPLEMENT = str.maketrans("ACGTUNRYSWKMBDHV", "TGCAANYRSWMKVHDB")


def parse_columns(text: str) -> tuple[str, ...]:
    """Field names from space- or comma-separated ``text``, in order; ``std`` stands for
    BLAST's 12 standard fields; a repeated field is kept once (as BLAST does). An unknown
    name is an InputError listing the valid ones."""
    if not isinstance(text, str):
        raise InputError(f"columns must be a string of field names, got {type(text).__name__}")
    names: list[str] = []
    for word in _SPLIT.split(text.strip()):
        if not word:
            continue
        if word == "std":
            names += STD
        elif word in FIELDS:
            names.append(word)
        else:
            raise InputError(f"unknown column {word!r}; the columns are: std, "
                             f"{', '.join(FIELDS)}")
    if not names:
        raise InputError(f"no columns given; the columns are: std, {', '.join(FIELDS)}")
    return tuple(dict.fromkeys(names))


def header_line(columns: Sequence[str]) -> str:
    """BLAST's ``-outfmt 7`` comment line naming ``columns``: ``# Fields: query id, ...``."""
    check(columns)
    return "# Fields: " + ", ".join(HEADERS[name] for name in columns)


def commented(title: str, database: str, columns: Sequence[str], rows: str) -> str:
    """One query's block as BLAST's ``-outfmt 7`` prints it: the program, the query's title
    (its whole header line), the database, the fields (where there are hits) and the
    number of hits, then ``rows`` (the query's lines)."""
    count = rows.count("\n")
    fields = [header_line(columns)] if count else []
    lines = [f"# wavedp {__version__}", f"# Query: {title}", f"# Database: {database}",
             *fields, f"# {count} hits found"]
    return "".join(line + "\n" for line in lines) + rows


def processed(count: int) -> str:
    """The last line of ``-outfmt 7`` output: how many queries were searched."""
    return f"# wavedp processed {count} queries\n"


def percent_match(part: int, whole: int) -> int:
    """A share as BLAST's integer percentages print it (``qcovhsp``): rounded half up, but
    100 only when ``part == whole`` (99.5% prints 99)."""
    if part == whole:
        return 100
    return min(99, int(0.5 + 100.0 * part / whole))


def values(aln: Alignment, columns: Sequence[str], scoring: Scoring | None = None,
           covered: int | None = None) -> list:
    """The typed value of each field of ``columns`` for ``aln``: int, float, str, or None
    where it does not exist (no traceback, an empty range, no statistics); ``covered``: the
    query positions all the query's alignments with the subject cover (``qcovs``; None:
    this alignment's alone, see :func:`covered`)."""
    check(columns, scoring, scored=True)
    hit = _Hit(aln, scoring, covered)
    return [getattr(hit, name) for name in columns]


def render(aln: Alignment, columns: Sequence[str] = DEFAULT,
           scoring: Scoring | None = None, covered: int | None = None) -> str:
    """``columns`` of ``aln`` as BLAST's tab-separated text (no newline); ``positive`` and
    ``ppos`` need ``scoring``; a missing value (or an empty aligned text) prints NA;
    ``covered``: see :func:`values`."""
    check(columns, scoring, scored=True)
    hit = _Hit(aln, scoring, covered)
    return "\t".join(_text(name, getattr(hit, name)) for name in columns)


def covered(hits: Sequence[Alignment]) -> list[int | None]:
    """For each of one query's ``hits``, the query positions that its subject's hits among
    them cover together (both strands, in the query's own coordinates): ``qcovs``'s part.
    None for a hit without a start (score-only)."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    for h in hits:
        if h.query_start is None:
            continue
        start, end = h.query_start, h.query_end
        if h.strand == "-":
            length = h.query_length or len(h.query)
            start, end = length - end, length - start
        ranges.setdefault(h.target_id, []).append((start, end))
    total: dict[str, int] = {}
    for subject, spans in ranges.items():
        count, reach = 0, -1
        for start, end in sorted(spans):
            if end > reach:
                count += end - max(start, reach)
                reach = end
        total[subject] = count
    return [None if h.query_start is None else total[h.target_id] for h in hits]


def check(columns: Sequence[str], scoring: Scoring | None = None, scored: bool = False) -> None:
    """An InputError unless every name of ``columns`` is a field and, with ``scored``, the
    fields needing the substitution scores have ``scoring``."""
    for name in columns:
        if name not in FIELDS:
            raise InputError(f"unknown column {name!r}; the columns are: {', '.join(FIELDS)}")
    if scored and scoring is None and NEEDS_SCORING.intersection(columns):
        raise InputError("the columns positive and ppos need the substitution scores: pass "
                         "the wavedp.Scoring")


def _text(name: str, value: object) -> str:
    if value is None or value == "":
        return NA
    if name == "evalue":
        return blast_evalue(value)  # type: ignore[arg-type]
    if name == "bitscore":
        return blast_bitscore(value)  # type: ignore[arg-type]
    if name == "pident":
        return f"{value:.3f}"
    if name == "ppos":
        return f"{value:.2f}"
    return str(value)


class _Hit:
    """The fields of one alignment, each computed when first asked for."""

    def __init__(self, aln: Alignment, scoring: Scoring | None,
                 covered: int | None = None) -> None:
        self.aln, self.scoring, self.covered = aln, scoring, covered
        self.minus = aln.strand == "-"

    # ---- ids, lengths, scores ----------------------------------------------------------------

    @property
    def qseqid(self) -> str:
        return self.aln.query_id

    qaccver = qseqid

    @property
    def sseqid(self) -> str:
        return self.aln.target_id

    saccver = sseqid

    @property
    def stitle(self) -> str | None:
        return self.aln.target_title or None

    salltitles = stitle

    @property
    def score(self) -> int:
        return int(self.aln.score)

    @property
    def evalue(self) -> float | None:
        return None if self.aln.evalue is None else float(self.aln.evalue)

    @property
    def bitscore(self) -> float | None:
        return None if self.aln.bitscore is None else float(self.aln.bitscore)

    @property
    def qlen(self) -> int:
        return int(self.aln.query_length or len(self.aln.query))

    @property
    def slen(self) -> int:
        return int(self.aln.target_length or len(self.aln.target))

    @property
    def sstrand(self) -> str:
        if self.aln.strand is not None:
            return "minus" if self.minus else "plus"
        return "plus" if self.scoring is not None and self.scoring.is_dna else "N/A"

    # ---- coordinates (formats.blast6's rules) ------------------------------------------------

    @cached_property
    def _coordinates(self) -> tuple[int | None, int | None, int | None, int | None]:
        aln = self.aln
        qstart, qend = _range(aln.query_start, aln.query_end)
        sstart, send = _range(aln.target_start, aln.target_end)
        if self.minus:
            if qend is not None:
                qstart = self.qlen - aln.query_end + 1
                qend = None if aln.query_start is None else self.qlen - aln.query_start
            sstart, send = send, sstart
        return qstart, qend, sstart, send

    @property
    def qstart(self) -> int | None:
        return self._coordinates[0]

    @property
    def qend(self) -> int | None:
        return self._coordinates[1]

    @property
    def sstart(self) -> int | None:
        return self._coordinates[2]

    @property
    def send(self) -> int | None:
        return self._coordinates[3]

    @property
    def qcovhsp(self) -> int | None:
        if self.aln.query_start is None or not self.qlen:
            return None
        return percent_match(self.aln.query_end - self.aln.query_start, self.qlen)

    @property
    def qcovs(self) -> int | None:
        if self.covered is None:
            return self.qcovhsp
        return percent_match(self.covered, self.qlen) if self.qlen else None

    # ---- counts from the CIGAR ---------------------------------------------------------------

    @cached_property
    def _counts(self) -> dict[str, int] | None:
        return None if self.aln.cigar is None else self.aln.counts()

    def _count(self, key: str) -> int | None:
        return None if self._counts is None else self._counts[key]

    @property
    def length(self) -> int | None:
        return self._count("length")

    @property
    def nident(self) -> int | None:
        return self._count("=")

    @property
    def mismatch(self) -> int | None:
        return self._count("X")

    @property
    def gapopen(self) -> int | None:
        return self._count("gapopen")

    @property
    def gaps(self) -> int | None:
        c = self._counts
        return None if c is None else c["I"] + c["D"]

    @property
    def pident(self) -> float | None:
        c = self._counts
        return 100 * c["="] / c["length"] if c and c["length"] else None

    @property
    def cigar(self) -> str | None:
        return self.aln.cigar

    # ---- the aligned texts -------------------------------------------------------------------

    @cached_property
    def _texts_known(self) -> bool:
        """Whether there is a traceback and the texts hold the aligned region."""
        aln = self.aln
        return aln.cigar is not None and len(aln.query) >= aln.query_end and \
            len(aln.target) >= aln.target_end

    @cached_property
    def _rows(self) -> tuple[str, str] | None:
        """The gapped rows as BLAST shows them, upper case (a minus-strand hit's query on
        its plus strand, the subject reverse-complemented)."""
        if not self._texts_known:
            return None
        qrow, trow = (row.upper() for row in self.aln.rows())
        if self.minus:
            qrow, trow = qrow.translate(_COMPLEMENT)[::-1], trow.translate(_COMPLEMENT)[::-1]
        return qrow, trow

    @property
    def qseq(self) -> str | None:
        return None if self._rows is None else self._rows[0]

    @property
    def sseq(self) -> str | None:
        return None if self._rows is None else self._rows[1]

    @cached_property
    def btop(self) -> str | None:
        if self._rows is None:
            return None
        qrow, trow = self._rows
        ops = self.aln.ops()
        if self.minus:
            ops = ops[::-1]
        out: list[str] = []
        run = col = 0
        for length, op in ops:
            if op == "=":
                run += length
            else:
                if run:
                    out.append(str(run))
                    run = 0
                out += [qrow[c] + trow[c] for c in range(col, col + length)]
            col += length
        if run:
            out.append(str(run))
        return "".join(out)

    # ---- substitution scores -----------------------------------------------------------------

    @cached_property
    def positive(self) -> int | None:
        if self.scoring is None or not self._texts_known:
            return None
        aln, lut = self.aln, self.scoring.lut
        qi, ti = [], []
        i, j = aln.query_start or 0, aln.target_start or 0
        for length, op in aln.ops():
            if op in "=X":
                qi.append(np.arange(i, i + length))
                ti.append(np.arange(j, j + length))
            i += length if op in "=XI" else 0
            j += length if op in "=XD" else 0
        if not qi:
            return 0
        q = lut[np.frombuffer(aln.query.encode("ascii", "replace"), np.uint8)[np.concatenate(qi)]]
        t = lut[np.frombuffer(aln.target.encode("ascii", "replace"), np.uint8)[
            np.concatenate(ti)]]
        if (q == INVALID).any() or (t == INVALID).any():
            raise InputError(f"alignment {aln.query_id!r} vs {aln.target_id!r} holds letters "
                             "the scoring does not take: pass the scoring it was aligned with")
        return int(np.count_nonzero(self.scoring.table[q, t] > 0))

    @property
    def ppos(self) -> float | None:
        positive, length = self.positive, self.length
        return 100 * positive / length if positive is not None and length else None


def _range(start: int | None, end: int) -> tuple[int | None, int | None]:
    """A 0-based half-open range as 1-based inclusive (first, last); None where unknown
    or empty (``formats.blast6``'s NA)."""
    if start is not None and end <= start:
        return None, None
    return (None if start is None else start + 1), end
