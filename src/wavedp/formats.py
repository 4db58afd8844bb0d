"""Text renderings of an Alignment: pairwise (human), blast6 (BLAST tabular), sam, json.

Coordinates in ``blast6``, ``sam`` and ``pairwise`` are 1-based and inclusive; an empty range
(no residue of that sequence is aligned) prints ``NA`` in ``blast6``. Each renderer returns
text without a trailing newline.

Search hits carry ``evalue``, ``bitscore`` and ``strand``: ``blast6`` prints the first two as
BLAST's tabular output does (``NA`` without statistics); a minus-strand hit (it aligns the
query's reverse complement) gets BLAST's coordinates on the original query with
``sstart > send`` in ``blast6``, and FLAG 16 in ``sam``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from .alignment import Alignment
from .errors import InputError
from .version import __version__

FORMATS = ("pairwise", "blast6", "sam", "json")

#: columns of the aligned rows per line in the pairwise format
WRAP = 60
#: the longest id printed in front of each pairwise row (the header lines show it whole)
ID_WIDTH = 20

NA = "NA"
_MIDDLE = {"=": "|", "M": "|", "X": ".", "I": " ", "D": " "}
_JSON_FIELDS = ("score", "query_start", "query_end", "target_start", "target_end", "cigar",
                "query_id", "target_id", "mode", "query_length", "target_length")
_HIT_FIELDS = ("evalue", "bitscore", "strand")
#: SAM FLAG bits
SAM_UNMAPPED, SAM_REVERSE, SAM_SECONDARY = 4, 16, 256


def format_alignment(aln: Alignment, kind: str, search: bool = False) -> str:
    """Render ``aln`` as ``pairwise``, ``blast6``, ``sam`` (record line) or ``json``.

    ``search``: ``json`` always carries ``evalue``, ``bitscore`` and ``strand`` (null where
    unknown), so every line of a search has the same keys.
    """
    if kind == "json":
        return to_json(aln, search)
    renderers = {"pairwise": pairwise, "blast6": blast6, "sam": sam_record}
    if kind not in renderers:
        raise InputError(f"unknown output format {kind!r}; choose from {', '.join(FORMATS)}")
    return renderers[kind](aln)


def blast_evalue(evalue: float) -> str:
    """An E-value as BLAST's tabular output prints it (checked against blastp 2.12).

    ``0.0`` below 1e-180, three significant digits in exponent form below 0.0009, then
    fixed decimals: 3 below 0.1, 2 below 1, 1 below 10, none from 10 on.
    """
    if evalue < 1e-180:
        return "0.0"
    if evalue < 0.0009:
        return f"{evalue:.2e}"
    if evalue < 0.1:
        return f"{evalue:4.3f}"
    if evalue < 1.0:
        return f"{evalue:3.2f}"
    if evalue < 10.0:
        return f"{evalue:2.1f}"
    return f"{evalue:2.0f}"


def blast_bitscore(bitscore: float) -> str:
    """A bit score as BLAST's tabular output prints it: one decimal up to 99.9, then the
    integer part (truncated, in a field of 3: 99.95 prints `` 99``), exponent form past 99999."""
    if bitscore > 99999:
        return f"{bitscore:5.3e}"
    if bitscore > 99.9:
        return f"{int(bitscore):3d}"
    return f"{bitscore:4.1f}"


def _query_length(aln: Alignment) -> int:
    return aln.query_length or len(aln.query)


def _span(start: int | None, end: int) -> str:
    """A 0-based half-open range as 1-based inclusive text."""
    if start is None:
        return f"?-{end}"
    if end > start:
        return f"{start + 1}-{end}"
    return f"none (0 residues, after position {start})"


def _middle(aln: Alignment) -> str:
    return "".join(_MIDDLE[op] * length for length, op in aln.ops())


def _percent(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else f"{part}/{whole}"


def pairwise(aln: Alignment) -> str:
    """A human-readable block: header lines, then the rows wrapped at WRAP columns."""
    lines = [
        "#" + "=" * 59,
        f"# Query:  {aln.query_id} (length {_query_length(aln)})",
        f"# Target: {aln.target_id} (length {aln.target_length or len(aln.target)})",
        f"# Mode:   {aln.mode}",
        f"# Score:  {aln.score}",
    ]
    lines += _hit_lines(aln)
    if aln.cigar is None:
        lines += [f"# Query end:  {aln.query_end}", f"# Target end: {aln.target_end}",
                  "# (score only: no traceback)", "#" + "=" * 59]
        return "\n".join(lines)
    c = aln.counts()
    lines += [
        f"# Query range:  {_span(aln.query_start, aln.query_end)}",
        f"# Target range: {_span(aln.target_start, aln.target_end)}",
        f"# CIGAR:  {aln.cigar or '(empty)'}",
        f"# Length: {c['length']}",
        f"# Identity:   {_percent(c['='], c['length'])}",
        f"# Mismatches: {_percent(c['X'], c['length'])}",
        f"# Gaps:       {_percent(c['I'] + c['D'], c['length'])} in {c['gapopen']} gap(s)",
        "#" + "=" * 59,
    ]
    if c["length"] == 0:
        lines.append("(empty alignment)")
        return "\n".join(lines)
    lines.append("")
    lines += _rows_block(aln)
    return "\n".join(lines)


def _hit_lines(aln: Alignment) -> list[str]:
    """The pairwise header lines of a search hit: E-value, bit score and strand, if known."""
    lines = []
    if aln.evalue is not None:
        lines.append(f"# E-value:   {blast_evalue(aln.evalue).strip()}")
    if aln.bitscore is not None:
        lines.append(f"# Bit score: {aln.bitscore:.1f}")
    if aln.strand == "-":
        lines.append("# Strand: - (the query's reverse complement is aligned; query "
                     "coordinates are on it)")
    elif aln.strand is not None:
        lines.append(f"# Strand: {aln.strand}")
    return lines


def _rows_block(aln: Alignment) -> list[str]:
    qrow, trow = aln.rows()
    middle = _middle(aln)
    qid, tid = aln.query_id[:ID_WIDTH], aln.target_id[:ID_WIDTH]
    name_w = max(len(qid), len(tid))
    num_w = len(str(max(aln.query_end, aln.target_end, 1)))
    pad = " " * (name_w + num_w + 2)
    q, t = aln.query_start or 0, aln.target_start or 0
    out: list[str] = []
    for col in range(0, len(qrow), WRAP):
        qpart, tpart = qrow[col:col + WRAP], trow[col:col + WRAP]
        qn = len(qpart) - qpart.count("-")
        tn = len(tpart) - tpart.count("-")
        qa, qb = (q + 1, q + qn) if qn else (q, q)
        ta, tb = (t + 1, t + tn) if tn else (t, t)
        out += [
            f"{qid:<{name_w}} {qa:>{num_w}} {qpart} {qb}",
            f"{pad}{middle[col:col + WRAP]}",
            f"{tid:<{name_w}} {ta:>{num_w}} {tpart} {tb}",
            "",
        ]
        q, t = q + qn, t + tn
    return out[:-1]


def _coords(start: int | None, end: int) -> tuple[str, str]:
    """A 0-based half-open range as 1-based inclusive (first, last); NA where unknown/empty."""
    if start is not None and end <= start:
        return NA, NA
    return (NA if start is None else str(start + 1)), str(end)


def blast6(aln: Alignment) -> str:
    """The 12 BLAST tabular columns; evalue and bitscore are NA without statistics.

    A minus-strand hit prints, as BLAST does, its range on the original query (qstart <
    qend) and the target range reversed (sstart > send).
    """
    qstart, qend = _coords(aln.query_start, aln.query_end)
    sstart, send = _coords(aln.target_start, aln.target_end)
    if aln.strand == "-":
        if qend != NA:
            m = _query_length(aln)
            qstart = str(m - aln.query_end + 1)
            qend = NA if aln.query_start is None else str(m - aln.query_start)
        sstart, send = send, sstart
    if aln.cigar is None:
        pident = length = mismatch = gapopen = NA
    else:
        c = aln.counts()
        length, mismatch, gapopen = str(c["length"]), str(c["X"]), str(c["gapopen"])
        pident = f"{100 * c['='] / c['length']:.3f}" if c["length"] else NA
    evalue = NA if aln.evalue is None else blast_evalue(aln.evalue)
    bitscore = NA if aln.bitscore is None else blast_bitscore(aln.bitscore)
    return "\t".join([aln.query_id, aln.target_id, pident, length, mismatch, gapopen,
                      qstart, qend, sstart, send, evalue, bitscore])


def _is_placed(aln: Alignment) -> bool:
    """True when the alignment pairs at least one query residue with a target residue."""
    return any(op in "=XM" for _, op in aln.ops())


def sam_cigar(aln: Alignment) -> str:
    """The SAM CIGAR: ``=``/``X``/``I``/``D`` plus ``S`` soft clips for unaligned query ends."""
    lead = aln.query_start or 0
    trail = max(_query_length(aln) - aln.query_end, 0)
    return (f"{lead}S" if lead else "") + (aln.cigar or "") + (f"{trail}S" if trail else "")


def sam_record(aln: Alignment, secondary: bool = False) -> str:
    """One SAM line with the target as reference; unplaced alignments get FLAG 4, POS 0.

    A minus-strand hit sets FLAG 16; its SEQ is the query's reverse complement, as aligned.
    ``secondary``: not the query's primary record (FLAG 256; a query has one primary).
    """
    seq = aln.query.upper() or "*"
    tags = [f"AS:i:{aln.score}"]
    reverse = SAM_REVERSE if aln.strand == "-" else 0
    if aln.cigar is None or not _is_placed(aln):
        fields = [aln.query_id, str(SAM_UNMAPPED | reverse), "*", "0", "255", "*", "*", "0",
                  "0", seq, "*"]
    else:
        c = aln.counts()
        tags.append(f"NM:i:{c['X'] + c['I'] + c['D']}")
        pos = (aln.target_start or 0) + 1
        flag = reverse | (SAM_SECONDARY if secondary else 0)
        fields = [aln.query_id, str(flag), aln.target_id, str(pos), "255", sam_cigar(aln),
                  "*", "0", "0", seq, "*"]
    return "\t".join(fields + tags)


def _header_value(text: str) -> str:
    return " ".join(str(text).split())


def sam_header_lines(targets: Iterable[tuple[str, int]], command_line: str | None = None,
                     version: str | None = None) -> Iterator[str]:
    """The SAM header lines one by one (for a database too large to hold them all)."""
    if version is None:
        version = __version__
    yield "@HD\tVN:1.6\tSO:unsorted"
    for name, length in targets:
        yield f"@SQ\tSN:{name}\tLN:{length}"
    pg = ["@PG", "ID:wavedp", "PN:wavedp", f"VN:{_header_value(version)}"]
    if command_line:
        pg.append(f"CL:{_header_value(command_line)}")
    yield "\t".join(pg)


def sam_header(targets: Iterable[tuple[str, int]], command_line: str | None = None,
               version: str | None = None) -> str:
    """The SAM header: @HD, one @SQ per (target id, length), and an @PG line for wavedp."""
    return "\n".join(sam_header_lines(targets, command_line, version))


def to_json(aln: Alignment, search: bool = False) -> str:
    """One JSON object (one line) with every Alignment field except the raw sequences;
    ``evalue``, ``bitscore`` and ``strand`` when any is set (always with ``search``)."""
    names = _JSON_FIELDS
    if search or any(getattr(aln, name) is not None for name in _HIT_FIELDS):
        names += _HIT_FIELDS
    return json.dumps({name: getattr(aln, name) for name in names})
