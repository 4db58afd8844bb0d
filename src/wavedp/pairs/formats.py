"""A :class:`PairBatch` written as text at once: ``sam`` records, ``blast6``, ``paf``, ``json``
lines (and ``pairwise``), to a binary or text (UTF-8) file object.

``sam`` (records only: ``wavedp.formats.sam_header_lines`` writes the header), ``blast6`` and
``json`` equal, line for line, ``wavedp.formats``' renderers of each ``Alignment`` of the
batch. ``pairwise``, and ``columns`` (BLAST's fields by name), call those renderers (and
``wavedp.columns.render``) per alignment. The others are assembled with NumPy a block of
lines at a time, blocks on several threads: each field is a byte matrix, a row per line,
padded with 0 to the block's widest value; the lines are the bytes other than 0, row by
row. No text written holds a NUL: an id holding one raises InputError.

PAF is minimap2's 12 columns: qname, qlen, qstart, qend (0-based, half-open), strand ``+``,
tname, tlen, tstart, tend, residue matches (``=`` columns), alignment block length (``=``,
``X``, ``I`` and ``D`` columns), mapq 255 (unknown); then ``AS:i:`` (the score), ``NM:i:``
(``X`` + ``I`` + ``D`` columns) and ``cg:Z:`` (the CIGAR in ``=``/``X``/``I``/``D``, no clips).

- An alignment that pairs no query residue with a target residue (an empty local alignment,
  or gaps only) is unplaced, as in SAM (FLAG 4): it gets minimap2's line for an unmapped
  query (``--paf-no-hit``), ``qname qlen 0 0 * * 0 0 0 0 0 0``, then ``AS:i:`` alone.
- Score-only (no CIGAR): columns 10 and 11 print 0 (not counted) and ``AS:i:`` is the only
  tag. PAF has no NA, so a batch with unknown starts (-1: score-only local and semiglobal)
  raises InputError; global mode's starts are known.
"""

from __future__ import annotations

import io
import json
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any

import numpy as np

from .. import columns as fields
from .. import formats as per_alignment
from ..errors import InputError
from ..scoring import Scoring
from ..threads import check, cores
from . import cigar_text
from .batch import PairBatch
from .lines import Block, Scratch, Strings
from .sequences import Joined, Sequences

#: the formats ``write`` knows
FORMATS = ("pairwise", "blast6", "sam", "json", "paf")

#: lines per block, at most
BLOCK = 1 << 15
#: a block is halved while lines x (the widest line's padded estimate) exceeds this (bytes)
BUDGET = 1 << 26

_UPPER = np.arange(256, dtype=np.uint8)
_UPPER[97:123] -= 32
#: the character of place d (0: units) of 0..999
#: SAM's FLAG field of an unplaced record, a primary one and a secondary one
_FLAGS = np.frombuffer(b"\t4\t*\0\t0\t\0\0\t256\t", np.uint8).reshape(3, 5)
_ESCAPED = np.zeros(256, bool)  # bytes json.dumps does not write as they are
_ESCAPED[:32] = _ESCAPED[127:] = True
_ESCAPED[[34, 92]] = True  # " and \


# ---- writing --------------------------------------------------------------------------------

def write(batch: PairBatch, fmt: str, out: IO[Any], columns: Sequence[str] | None = None, *,
          scoring: Scoring | None = None, follows: bool = False,
          threads: int | None = None, after: str | None = None) -> None:
    """Write ``batch``'s lines in ``fmt`` to ``out`` (binary, or text: decoded as UTF-8).

    ``columns``: BLAST's fields by name (``fmt`` blast6; ``positive`` and ``ppos`` need
    ``scoring``). ``follows``: pairwise blocks continue an output already holding some (a
    blank line goes first). ``threads``: the threads building blocks (None: every core).
    SAM: a query's first record of a run of its pairs side by side is its primary record,
    the later ones secondary (FLAG 256); ``after``: the query id of the record written
    just before the batch (its run may go on here).
    """
    binary = _is_binary(out)
    chunks = _chunks(batch, fmt, columns, scoring, follows, threads, after)
    try:
        for data in chunks:
            view = memoryview(data)
            out.write(view if binary else str(view, "utf-8"))
    finally:  # a failed write stops the threads building blocks here, not at collection
        if hasattr(chunks, "close"):
            chunks.close()


def sq_lines(ids: Sequence[str], lengths: np.ndarray) -> bytes:
    """A SAM header's @SQ lines of references ``ids`` with ``lengths``."""
    if not len(ids):
        return b""
    strings = Strings.of_lines(ids.blob, len(ids)) if isinstance(ids, Joined) else \
        Strings.of(list(ids))
    line = Block(len(ids))
    line.text(b"@SQ\tSN:")
    line.add(strings.take(np.arange(len(ids))))
    line.number(np.asarray(lengths, np.int64), before=b"\tLN:", after=b"\n")
    return line.array(Scratch()).tobytes()


def _chunks(batch: PairBatch, fmt: str, columns: Sequence[str] | None,
            scoring: Scoring | None, follows: bool, threads: int | None, after: str | None
            ) -> Iterator[bytes | np.ndarray]:
    """The blocks as bytes or uint8 arrays; the arguments checked first."""
    if fmt not in FORMATS:
        raise InputError(f"unknown output format {fmt!r}; choose from {', '.join(FORMATS)}")
    check(threads)
    if columns is not None:
        if fmt != "blast6":
            raise InputError(f"columns apply to the format blast6, not {fmt}")
        fields.check(columns, scoring, scored=True)
        return _each(batch, lambda aln: fields.render(aln, columns, scoring) + "\n")
    if fmt == "pairwise":
        return _pairwise(batch, follows)
    if fmt == "paf" and len(batch) and \
            (batch.query_start.min() < 0 or batch.target_start.min() < 0):
        raise InputError("PAF needs the alignment's start: use traceback")
    if batch.traced:
        cigar_text.notice()
    return _assembled(batch, _WRITERS[fmt], threads, after)


def _is_binary(out: IO[Any]) -> bool:
    """Whether ``out`` takes bytes (else str)."""
    if isinstance(out, io.TextIOBase):
        return False
    if isinstance(out, (io.BufferedIOBase, io.RawIOBase)):
        return True
    mode = getattr(out, "mode", None)
    return "b" in mode if isinstance(mode, str) else not hasattr(out, "encoding")


def _each(batch: PairBatch, render: Any, step: int = 4096) -> Iterator[bytes]:
    """``render`` (an Alignment's text, newline included) of each alignment, encoded."""
    for a in range(0, len(batch), step):
        alns = batch.alignments(range(a, min(a + step, len(batch))))
        yield "".join(render(aln) for aln in alns).encode("utf-8")


def _pairwise(batch: PairBatch, follows: bool) -> Iterator[bytes]:
    first = not follows
    for data in _each(batch, lambda aln: "\n" + per_alignment.pairwise(aln) + "\n"):
        yield data[1:] if first else data
        first = False


def _used(index: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The records ``index`` refers to (sorted), and ``index`` renumbered among them."""
    seen = np.zeros(size, bool)
    seen[index] = True
    records = np.flatnonzero(seen)
    rank = np.cumsum(seen) - 1
    return records, rank[index]


class _Context:
    """What the blocks of one batch share: the ids of the records it uses (for JSON: escaped
    as ``json.dumps`` does, without the quotes) and, for SAM, the query letters and which
    pairs repeat the query id before them (``after``: the id before the first)."""

    def __init__(self, batch: PairBatch, writer: Any, pool: ThreadPoolExecutor | None,
                 after: str | None = None) -> None:
        self.batch = batch
        escape = writer is _json
        targets = (batch.targets, batch.target_index, escape)
        later = pool.submit(_ids, *targets) if pool is not None else None
        self.query_ids, self.query_rank = _ids(batch.queries, batch.query_index, escape)
        self.target_ids, self.target_rank = _ids(*targets) if later is None else later.result()
        self.lut: np.ndarray | None = None
        if writer is _sam:
            self.repeats = _repeats(self.query_ids.take(self.query_rank), after)
            seqs = batch.queries
            source = seqs.letters if seqs.letters is not None else seqs.codes
            self.letters = Strings(source, seqs.offsets[:-1], seqs.lengths, pad=False)
            if seqs.letters is None:
                alphabet = np.frombuffer(batch.alphabet.encode("ascii"), np.uint8)
                if seqs.codes.size and int(seqs.codes.max()) >= alphabet.size:
                    raise InputError("a query holds a code beyond the batch's alphabet")
                if not alphabet.all():
                    raise InputError("the batch's alphabet holds a NUL character")
                self.lut = np.zeros(256, np.uint8)
                self.lut[:alphabet.size] = _UPPER[alphabet]

    def query_letters(self, index: np.ndarray) -> np.ndarray:
        """The query records ``index``, upper case, padded with 0."""
        matrix = self.letters.take(index, self.lut)
        if self.lut is None and matrix.size and int(matrix.max()) >= 97:
            matrix = _UPPER[matrix]
        return matrix


def _repeats(ids: np.ndarray, after: str | None) -> np.ndarray:
    """Whether each row of ``ids`` (an id's bytes padded with 0) is the id of the row before
    it (the first: ``after``)."""
    out = np.zeros(ids.shape[0], bool)
    if ids.shape[0]:
        out[1:] = (ids[1:] == ids[:-1]).all(axis=1)
        if after is not None:
            first = bytes(ids[0][ids[0] != 0])
            out[0] = first == after.encode("utf-8")
    return out


def _ids(seqs: Sequences, index: np.ndarray, escape: bool) -> tuple[Strings, np.ndarray]:
    """The ids of the records ``index`` uses, and ``index`` renumbered among them."""
    records, rank = _used(np.asarray(index, np.int64), len(seqs))
    ids = seqs.ids
    whole = records.size == len(ids)
    if whole and isinstance(ids, Joined) and not escape:  # the text as read
        return Strings.of_lines(ids.blob, len(ids)), rank
    texts = list(ids) if whole else [ids[k] for k in records.tolist()]
    strings = Strings.of(texts)
    if escape:  # only ids with a byte json.dumps does not write as it is are escaped
        special = strings.holding(_ESCAPED).tolist()
        if special:
            for k in special:
                texts[k] = json.dumps(texts[k])[1:-1]
            strings = Strings.of(texts)
    return strings, rank


class _Traced:
    """A block's CIGAR runs: counts per pair and, when asked, the CIGAR texts
    (``cigar_text``)."""

    def __init__(self, batch: PairBatch, a: int, b: int) -> None:
        assert batch.cigar_runs is not None and batch.cigar_offsets is not None
        offsets = batch.cigar_offsets[a:b + 1]
        self.runs = batch.cigar_runs[int(offsets[0]):int(offsets[-1])]
        self.offsets = offsets - offsets[0]
        sums = cigar_text.counts(self.runs, self.offsets)
        self.equal, self.diff, self.insert, self.delete, matched, self.opens = sums.T
        self.length = self.equal + self.diff + self.insert + self.delete
        self.placed = (self.equal + self.diff > 0) | (matched > 0)  # M too, as formats

    def gap_opens(self) -> np.ndarray:
        return self.opens

    def text(self) -> np.ndarray:
        """Each pair's CIGAR text, padded with 0."""
        return cigar_text.text(self.runs, self.offsets)


# ---- the formats ----------------------------------------------------------------------------

def _assembled(batch: PairBatch, writer: Any, threads: int | None,
               after: str | None = None) -> Iterator[np.ndarray]:
    """The lines of ``writer``'s blocks (uint8 arrays), in order; blocks are built on up to
    ``threads`` threads (NumPy lets the interpreter go in its loops)."""
    workers = min(cores() if threads is None else threads, -(-len(batch) // BLOCK))
    pool = ThreadPoolExecutor(workers) if workers > 1 else None
    local = threading.local()
    try:
        context = _Context(batch, writer, pool, after)
        spans = _spans(_weights(batch, context, writer), 0, len(batch))

        def build(span: tuple[int, int]) -> np.ndarray:
            if not hasattr(local, "scratch"):
                local.scratch = Scratch()
            return writer(context, *span).array(local.scratch)

        if pool is None:
            yield from map(build, spans)
            return
        pending: deque[Future[np.ndarray]] = deque()
        for span in spans:
            pending.append(pool.submit(build, span))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _weights(batch: PairBatch, context: _Context, writer: Any) -> np.ndarray:
    """Per pair, about how wide its padded line gets (bytes)."""
    weight = context.query_ids.lengths[context.query_rank] + \
        context.target_ids.lengths[context.target_rank] + 120
    if batch.cigar_offsets is not None:
        weight += 11 * np.diff(batch.cigar_offsets)
    if writer is _sam:
        weight += batch.query_length
    return weight


def _spans(weight: np.ndarray, a: int, b: int) -> Iterator[tuple[int, int]]:
    """Blocks [a, b) of at most BLOCK lines, halved while over BUDGET."""
    for start in range(a, b, BLOCK):
        end = min(start + BLOCK, b)
        if end - start > 1 and (end - start) * int(weight[start:end].max()) > BUDGET:
            middle = (start + end) // 2
            yield from _spans(weight, start, middle)
            yield from _spans(weight, middle, end)
        else:
            yield start, end


def _ids_of(context: _Context, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    return (context.query_ids.take(context.query_rank[a:b]),
            context.target_ids.take(context.target_rank[a:b]))


def _sam(context: _Context, a: int, b: int) -> Block:
    batch = context.batch
    query_id, target_id = _ids_of(context, a, b)
    query = batch.query_index[a:b]
    length = batch.queries.lengths[query]
    line = Block(b - a)
    line.add(query_id)
    if batch.traced:
        traced = _Traced(batch, a, b)
        placed = traced.placed
        flag = np.where(placed, np.where(context.repeats[a:b], 2, 1), 0)
        line.add(np.take(_FLAGS, flag, axis=0))  # unplaced, primary, secondary
        line.add(target_id, placed)
        line.number(np.where(placed, np.maximum(batch.target_start[a:b], 0) + 1, 0),
                    before=b"\t", after=b"\t255\t")
        lead = np.maximum(batch.query_start[a:b], 0)
        trail = np.maximum(length - batch.query_end[a:b], 0)
        line.number(lead, placed & (lead > 0), after=b"S")
        line.add(traced.text(), placed)
        line.number(trail, placed & (trail > 0), after=b"S")
        line.choice(placed, b"\t*\t0\t0\t", b"*\t*\t0\t0\t")
    else:
        line.text(b"\t4\t*\t0\t255\t*\t*\t0\t0\t")
    line.add(context.query_letters(query))
    line.choice(length > 0, b"\t*\tAS:i:", b"*\t*\tAS:i:")
    line.number(batch.score[a:b])
    if batch.traced:
        line.number(traced.diff + traced.insert + traced.delete, placed, before=b"\tNM:i:")
    line.text(b"\n")
    return line


def _thousandths(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    """round(100 * part / whole, 3) * 1000 as ``f"{100 * part / whole:.3f}"`` rounds it (the
    float's exact value, ties to even), for whole > 0."""
    quotient, rest = np.divmod(100_000 * part, whole)
    out = quotient + (2 * rest > whole)
    for k in np.flatnonzero(2 * rest == whole).tolist():  # a tie: as the float lies
        out[k] = int(f"{100 * int(part[k]) / int(whole[k]):.3f}".replace(".", ""))
    return out


def _coordinates(line: Block, start: np.ndarray, end: np.ndarray, after: bytes) -> None:
    """A 0-based half-open range as blast6's 1-based first and last (NA: unknown, empty)."""
    known = start >= 0
    empty = known & (end <= start)
    first = known & ~empty
    line.number(np.where(first, start + 1, 0), first, after=b"\t")
    line.text(b"NA\t", ~first)
    line.number(np.where(empty, 0, end), ~empty, after=after)
    line.text(b"NA" + after, empty)


def _blast6(context: _Context, a: int, b: int) -> Block:
    batch = context.batch
    query_id, target_id = _ids_of(context, a, b)
    line = Block(b - a)
    line.add(query_id)
    line.text(b"\t")
    line.add(target_id)
    line.text(b"\t")
    if batch.traced:
        traced = _Traced(batch, a, b)
        some = traced.length > 0
        share = np.zeros(b - a, np.int64)
        share[some] = _thousandths(traced.equal[some], traced.length[some])
        line.number(share // 1000, some, after=b".")
        line.number(share % 1000, some, width=3)
        line.text(b"NA", ~some)
        line.number(traced.length, before=b"\t", after=b"\t")
        line.number(traced.diff, after=b"\t")
        line.number(traced.gap_opens(), after=b"\t")
    else:
        line.text(b"NA\tNA\tNA\tNA\t")
    _coordinates(line, batch.query_start[a:b], batch.query_end[a:b], b"\t")
    _coordinates(line, batch.target_start[a:b], batch.target_end[a:b], b"\tNA\tNA\n")
    return line


def _json(context: _Context, a: int, b: int) -> Block:
    batch = context.batch
    query_id, target_id = _ids_of(context, a, b)
    line = Block(b - a)
    line.number(batch.score[a:b], before=b'{"score": ', after=b', "query_start": ')
    for name, after in (("query", b', "target_start": '), ("target", b', "cigar": ')):
        start = getattr(batch, name + "_start")[a:b]
        known = start >= 0
        line.number(np.maximum(start, 0), known)
        line.text(b"null", ~known)
        line.number(getattr(batch, name + "_end")[a:b], before=b', "%s_end": ' % name.encode(),
                    after=after)
    if batch.traced:
        line.text(b'"')
        line.add(_Traced(batch, a, b).text())
        line.text(b'"')
    else:
        line.text(b"null")
    line.text(b', "query_id": "')
    line.add(query_id)
    line.text(b'", "target_id": "')
    line.add(target_id)
    mode = json.dumps(batch.mode).encode()
    line.number(batch.queries.lengths[batch.query_index[a:b]],
                before=b'", "mode": %s, "query_length": ' % mode, after=b', "target_length": ')
    line.number(batch.targets.lengths[batch.target_index[a:b]], after=b"}\n")
    return line


def _paf(context: _Context, a: int, b: int) -> Block:
    batch = context.batch
    query_id, target_id = _ids_of(context, a, b)
    line = Block(b - a)
    traced = _Traced(batch, a, b) if batch.traced else None
    placed = traced.placed if traced is not None else np.ones(b - a, bool)
    line.add(query_id)
    line.number(batch.queries.lengths[batch.query_index[a:b]], before=b"\t", after=b"\t")
    line.number(batch.query_start[a:b], placed, after=b"\t")
    line.number(batch.query_end[a:b], placed, after=b"\t+\t")
    line.add(target_id, placed)
    line.number(batch.targets.lengths[batch.target_index[a:b]], placed, before=b"\t",
                after=b"\t")
    line.number(batch.target_start[a:b], placed, after=b"\t")
    if traced is not None:
        line.number(batch.target_end[a:b], placed, after=b"\t")
        line.number(traced.equal, placed, after=b"\t")
        line.number(traced.length, placed, after=b"\t255")
        line.text(b"0\t0\t*\t*\t0\t0\t0\t0\t0\t0", ~placed)
    else:
        line.number(batch.target_end[a:b], after=b"\t0\t0\t255")
    line.number(batch.score[a:b], before=b"\tAS:i:")
    if traced is not None:
        line.number(traced.diff + traced.insert + traced.delete, placed, before=b"\tNM:i:",
                    after=b"\tcg:Z:")
        line.add(traced.text(), placed)
    line.text(b"\n")
    return line


_WRITERS = {"sam": _sam, "blast6": _blast6, "json": _json, "paf": _paf}
