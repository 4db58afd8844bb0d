"""A query's hits as a query-anchored multiple alignment: A3M (HH-suite's and ColabFold's),
Stockholm (what ``hmmbuild`` reads) or aligned FASTA.

Each hit's exact alignment places its residues on the query's columns: a residue aligned to
a query position is a match (upper case), a query position the hit skips or does not reach
is ``-``, and the hit's own residues between two query positions are an insertion (lower
case in A3M; in Stockholm, insert columns where every other row has ``.``; left out of the
aligned FASTA). Rows are named ``id/start-end`` (1-based, the hit's aligned stretch), as Pfam
names its members; the query is the first row.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..alignment import Alignment
from ..errors import InputError

#: the formats :func:`text` writes
FORMATS = ("a3m", "sto", "fasta")


def rows(query: str, hits: Sequence[Alignment]) -> list[tuple[list[str], list[str]]]:
    """Each row (the query's, then each hit's) as (its m match characters, the insertion
    before each query position and after the last: m + 1 strings of lower-case letters)."""
    m = len(query)
    out = [(list(query.upper()), [""] * (m + 1))]
    for hit in hits:
        if hit.cigar is None or hit.query_start is None or not hit.target:
            raise InputError(f"hit {hit.target_id!r}: a multiple alignment is made of "
                             "alignments (CIGAR and target), not scores only")
        match, inserts = ["-"] * m, [""] * (m + 1)
        for length, op, i, j in hit.placed_ops():  # I: query positions against a gap
            if op in "=XM":
                match[i:i + length] = hit.target[j:j + length].upper()
            elif op == "D":  # the hit's own residues before query position i
                inserts[i] += hit.target[j:j + length].lower()
        out.append((match, inserts))
    return out


def names(query_id: str, query: str, hits: Sequence[Alignment]) -> list[str]:
    """Each row's name: ``id/start-end`` (unique: a repeat gets ``_2``, ``_3``, ...)."""
    found, seen = [], set()
    for rid, start, end in [(query_id, 0, len(query))] + [
            (h.target_id, h.target_start or 0, h.target_end) for h in hits]:
        base = f"{rid.split()[0]}/{start + 1}-{end}"
        name, k = base, 1
        while name in seen:
            k += 1
            name = f"{base}_{k}"
        seen.add(name)
        found.append(name)
    return found


def text(query_id: str, query: str, hits: Sequence[Alignment], fmt: str) -> str:
    """The query and its hits as one alignment in ``fmt`` (:data:`FORMATS`)."""
    if fmt not in FORMATS:
        raise InputError(f"msa format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    found = rows(query, hits)
    labels = names(query_id, query, hits)
    if fmt == "a3m":
        return "".join(f">{name}\n" + "".join(ins + c for ins, c in zip(
            inserts, match + [""], strict=True)) + "\n"
            for name, (match, inserts) in zip(labels, found, strict=True))
    if fmt == "fasta":
        return "".join(f">{name}\n{''.join(match)}\n"
                       for name, (match, _) in zip(labels, found, strict=True))
    m = len(query)
    widths = [max(len(inserts[k]) for _, inserts in found) for k in range(m + 1)]
    width = max(len(name) for name in [*labels, "#=GC RF"])
    lines = ["# STOCKHOLM 1.0"]
    for name, (match, inserts) in zip(labels, found, strict=True):
        cells = []
        for k in range(m + 1):
            cells.append(inserts[k] + "." * (widths[k] - len(inserts[k])))
            if k < m:
                cells.append(match[k])
        lines.append(f"{name:<{width}} {''.join(cells)}")
    reference = "".join("." * widths[k] + ("x" if k < m else "") for k in range(m + 1))
    lines.append(f"{'#=GC RF':<{width}} {reference}")
    return "\n".join(lines) + "\n//\n"
