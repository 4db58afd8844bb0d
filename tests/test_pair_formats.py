"""wavedp.pairs.formats: each vectorized writer against the per-Alignment renderers of
wavedp.formats (and PAF against minimap2's column meanings), on hand-made and random
PairBatch objects; the batch's CIGAR helpers against wavedp.alignment's."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest

import wavedp
from wavedp import InputError
from wavedp import columns as fields
from wavedp.alignment import cigar_ops, cigars_from_ops
from wavedp.formats import blast6, pairwise, sam_record, to_json
from wavedp.pairs import cigar_text, formats
from wavedp.pairs import lines as line_blocks
from wavedp.pairs.batch import PairBatch, cigar_strings, runs_from_letters
from wavedp.pairs.sequences import Sequences

DNA = "ACGT"
SCORING = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
ODD_IDS = ['q"quoted"', "back\\slash", "caf\u00e9", "x" * 150, "", "two words"]


def sequences(texts: list[str], ids: list[str], letters: bool = True) -> Sequences:
    lengths = np.array([len(t) for t in texts], np.int64)
    offsets = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    raw = np.frombuffer("".join(texts).encode("ascii"), np.uint8)
    codes = np.zeros(256, np.uint8)
    codes[np.frombuffer(b"ACGTacgt", np.uint8)] = [0, 1, 2, 3, 0, 1, 2, 3]
    return Sequences(codes[raw], offsets, ids, raw.copy() if letters else None)


def batch_of(queries: Sequences, targets: Sequences, rows: list[tuple], mode: str,
             traced: bool = True) -> PairBatch:
    """rows: (query index, target index, score, qs, qe, ts, te, ops letters)."""
    qi, ti, score, qs, qe, ts, te, ops = zip(*rows, strict=True)
    runs = offsets = None
    if traced:
        sizes = np.array([len(o) for o in ops], np.int64)
        runs, offsets = runs_from_letters(np.frombuffer("".join(ops).encode(), np.uint8),
                                          sizes)
    return PairBatch(np.array(score, np.int32), np.array(qs, np.int64),
                     np.array(qe, np.int64), np.array(ts, np.int64), np.array(te, np.int64),
                     runs, offsets, np.array(qi, np.int64), np.array(ti, np.int64),
                     queries, targets, mode, DNA)


def random_batch(rng: np.random.Generator, n: int, mode: str, traced: bool = True,
                 letters: bool = True, same_length: bool = False) -> PairBatch:
    """n pairs, each with its own query and target built around random ops (the query's
    letters lower case at times), then n // 4 pairs reusing them (empty or score-only)."""
    qtexts, ttexts, rows = [], [], []
    for k in range(n):
        ops = "".join(rng.choice(list("====XID"), int(rng.integers(0, 14))))
        if rng.random() < 0.1:
            ops = "I" * int(rng.integers(1, 4))  # gaps only: unplaced in SAM and PAF
        if rng.random() < 0.05:
            ops = "=" * int(rng.choice([9, 10, 99, 100, 1000]))
        used_q = sum(c in "=XI" for c in ops)
        used_t = sum(c in "=XD" for c in ops)
        lead_q, tail_q, lead_t, tail_t = (int(x) for x in rng.integers(0, 4, 4))
        if mode == "global":
            lead_q = tail_q = lead_t = tail_t = 0
        if same_length:
            lead_q, tail_q = 0, 1100 - used_q
        qtexts.append("".join(rng.choice(list("ACGTacgt"), lead_q + used_q + tail_q)))
        ttexts.append("".join(rng.choice(list(DNA), lead_t + used_t + tail_t)))
        score = int(rng.integers(-40, 60)) if mode == "global" else int(rng.integers(0, 60))
        rows.append((k, k, score, lead_q, lead_q + used_q, lead_t, lead_t + used_t, ops))
    for _ in range(n // 4):  # records used again: empty alignments
        q, t = (int(x) for x in rng.integers(0, n, 2))
        rows.append((q, t, 0, 0, 0, 0, 0, ""))
    if not traced:
        rows = [(q, t, s, qs if mode == "global" else -1, qe, ts if mode == "global" else -1,
                 te, "") for q, t, s, qs, qe, ts, te, _ in rows]
    ids = [f"q{k}" for k in range(n)]
    ids[:len(ODD_IDS)] = ODD_IDS[:n]
    return batch_of(sequences(qtexts, ids, letters),
                    sequences(ttexts, [f"t{k}" for k in range(n)]), rows, mode, traced)


CASES = [(mode, traced) for mode in ("local", "global", "semiglobal")
         for traced in (True, False)]


@pytest.fixture(scope="module", params=CASES, ids=[f"{m}-{'cigar' if t else 'score'}"
                                                   for m, t in CASES])
def batch(request) -> PairBatch:
    mode, traced = request.param
    return random_batch(np.random.default_rng(len(mode) + traced), 160, mode, traced)


def lines(batch: PairBatch, fmt: str, **kw) -> list[str]:
    out = io.BytesIO()
    formats.write(batch, fmt, out, **kw)
    text = out.getvalue().decode("utf-8")
    assert text == "" or text.endswith("\n")
    return text.split("\n")[:-1]


# ---- SAM, blast6, JSON: line for line as the per-Alignment renderers -------------------------

@pytest.mark.parametrize("fmt, render", [("sam", sam_record), ("blast6", blast6),
                                         ("json", to_json)])
def test_equal_to_per_alignment(batch, fmt, render):
    assert lines(batch, fmt) == [render(aln) for aln in batch]


@pytest.mark.parametrize("fmt, render", [("sam", sam_record), ("blast6", blast6),
                                         ("json", to_json), ("paf", None)])
def test_small_blocks_and_other_layouts(fmt, render, monkeypatch):
    """Blocks of a few lines (and halved over budget), codes without letters, one query
    length for all (a view of the letters): the same lines."""
    rng = np.random.default_rng(7)
    for kw in ({"letters": False}, {"same_length": True}, {}):
        one = random_batch(rng, 40, "local", **kw)
        whole = lines(one, fmt)
        monkeypatch.setattr(formats, "BLOCK", 7)
        monkeypatch.setattr(formats, "BUDGET", 600)
        assert lines(one, fmt) == whole
        monkeypatch.undo()
        if render is not None:
            assert whole == [render(aln) for aln in one]


def test_hand_made():
    queries = sequences(["GGACGTTAC", "AAA", ""], ["q1", "q2", "q3"])
    targets = sequences(["CACGAACT", "CCC"], ["t1", "t2"])
    one = batch_of(queries, targets, [
        (0, 0, 9, 2, 8, 1, 6, "===IX="),  # 3=1I1X1=
        (1, 1, 0, 0, 0, 0, 0, ""),  # empty local alignment
        (2, 0, -3, 0, 0, 0, 2, "DD"),  # an empty query: gaps only
    ], "local")
    assert lines(one, "sam") == [
        "q1\t0\tt1\t2\t255\t2S3=1I1X1=1S\t*\t0\t0\tGGACGTTAC\t*\tAS:i:9\tNM:i:2",
        "q2\t4\t*\t0\t255\t*\t*\t0\t0\tAAA\t*\tAS:i:0",
        "q3\t4\t*\t0\t255\t*\t*\t0\t0\t*\t*\tAS:i:-3",
    ]
    assert lines(one, "blast6") == [
        "q1\tt1\t66.667\t6\t1\t1\t3\t8\t2\t6\tNA\tNA",
        "q2\tt2\tNA\t0\t0\t0\tNA\tNA\tNA\tNA\tNA\tNA",
        "q3\tt1\t0.000\t2\t0\t1\tNA\tNA\t1\t2\tNA\tNA",
    ]
    assert lines(one, "paf") == [
        "q1\t9\t2\t8\t+\tt1\t8\t1\t6\t4\t6\t255\tAS:i:9\tNM:i:2\tcg:Z:3=1I1X1=",
        "q2\t3\t0\t0\t*\t*\t0\t0\t0\t0\t0\t0\tAS:i:0",
        "q3\t0\t0\t0\t*\t*\t0\t0\t0\t0\t0\t0\tAS:i:-3",
    ]
    assert json.loads(lines(one, "json")[0]) == {
        "score": 9, "query_start": 2, "query_end": 8, "target_start": 1, "target_end": 6,
        "cigar": "3=1I1X1=", "query_id": "q1", "target_id": "t1", "mode": "local",
        "query_length": 9, "target_length": 8}


def test_long_runs_and_one_block_of_each_kind():
    """Runs of 1000 and more (written place by place, not from the table) beside short ones,
    on one thread and on two, in blocks of 2 lines."""
    texts = ["A" * 12400, "AC", "A" * 1000]
    seqs = sequences(texts, ["a", "b", "c"])
    one = batch_of(seqs, seqs, [
        (0, 0, 9, 0, 12400, 0, 12400, "=" * 12345 + "X" * 10 + "I" * 45 + "D" * 45),
        (1, 1, 2, 0, 2, 0, 2, "=X"),
        (2, 2, 1000, 0, 1000, 0, 1000, "=" * 1000),
        (1, 0, 0, 0, 0, 0, 0, ""),
    ], "global")
    assert lines(one, "sam", threads=1)[0].split("\t")[5] == "12345=10X45I45D"
    for fmt, render in (("sam", sam_record), ("blast6", blast6), ("json", to_json)):
        assert lines(one, fmt, threads=1) == [render(aln) for aln in one]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(formats, "BLOCK", 2)
        for fmt in ("sam", "blast6", "json", "paf"):
            assert lines(one, fmt, threads=2) == lines(one, fmt, threads=1)


def test_pident_ties_and_rounding():
    """pident as the float prints: 1/64 is 1.5625% exactly (a tie, to even: 1.562), 1/3 and
    2/3 round, 100 and 0; against blast6 for every share of up to 400 columns as well."""
    pairs = [(1, 64), (1, 3), (2, 3), (5, 5), (0, 7), (1, 1600), (3, 320), (7, 200)]
    pairs += [(int(e), int(n)) for n in range(1, 401) for e in
              np.random.default_rng(n).integers(0, n + 1, 3)]
    texts, rows = [], []
    for k, (equal, length) in enumerate(pairs):
        texts.append("A" * length)
        rows.append((k, k, 1, 0, length, 0, length, "=" * equal + "X" * (length - equal)))
    seqs = sequences(texts, [f"s{k}" for k in range(len(texts))])
    one = batch_of(seqs, seqs, rows, "global")
    got = [line.split("\t")[2] for line in lines(one, "blast6")]
    assert got[:6] == ["1.562", "33.333", "66.667", "100.000", "0.000", "0.062"]
    assert lines(one, "blast6") == [blast6(aln) for aln in one]


def test_json_ids_escaped_as_json_dumps(batch):
    rows = [json.loads(line) for line in lines(batch, "json")]
    assert [r["query_id"] for r in rows[:len(ODD_IDS)]] == ODD_IDS
    assert all(line.isascii() for line in lines(batch, "json"))


# ---- PAF -----------------------------------------------------------------------------------

def paf_expected(aln) -> list[str]:
    """minimap2's columns, computed from the Alignment on their own."""
    qlen, tlen = len(aln.query), len(aln.target)
    if aln.cigar is None:
        return [aln.query_id, str(qlen), str(aln.query_start), str(aln.query_end), "+",
                aln.target_id, str(tlen), str(aln.target_start), str(aln.target_end),
                "0", "0", "255", f"AS:i:{aln.score}"]
    runs = cigar_ops(aln.cigar)
    if not any(op in "=X" for _, op in runs):
        return [aln.query_id, str(qlen), "0", "0", "*", "*", "0", "0", "0", "0", "0", "0",
                f"AS:i:{aln.score}"]
    total = {op: sum(n for n, o in runs if o == op) for op in "=XID"}
    return [aln.query_id, str(qlen), str(aln.query_start), str(aln.query_end), "+",
            aln.target_id, str(tlen), str(aln.target_start), str(aln.target_end),
            str(total["="]), str(sum(total.values())), "255", f"AS:i:{aln.score}",
            f"NM:i:{total['X'] + total['I'] + total['D']}", f"cg:Z:{aln.cigar}"]


def test_paf_field_by_field(batch):
    if not batch.traced and batch.mode != "global":
        with pytest.raises(InputError, match="PAF needs the alignment's start"):
            formats.write(batch, "paf", io.BytesIO())
        return
    got = [line.split("\t") for line in lines(batch, "paf")]
    assert got == [paf_expected(aln) for aln in batch]
    for row in got:  # the spec's meanings: ranges inside the lengths, matches <= block
        qlen, qs, qe, tlen, ts, te, match, block = (int(row[k]) for k in
                                                    (1, 2, 3, 6, 7, 8, 9, 10))
        assert 0 <= qs <= qe <= qlen and 0 <= ts <= te <= tlen and 0 <= match <= block
        if row[4] == "+" and row[-1].startswith("cg:Z:"):
            ops = cigar_ops(row[-1][5:])
            assert qe - qs == sum(n for n, op in ops if op in "=XI")
            assert te - ts == sum(n for n, op in ops if op in "=XD")
            assert block == sum(n for n, _ in ops)


# ---- writing to files, the per-alignment fallbacks, errors -----------------------------------

def test_write_binary_and_text(batch):
    binary, text = io.BytesIO(), io.StringIO()
    formats.write(batch, "sam", binary)
    formats.write(batch, "sam", text)
    assert binary.getvalue().decode("utf-8") == text.getvalue() == \
        "".join(sam_record(aln) + "\n" for aln in batch)


def test_pairwise_blocks_as_the_cli_writes_them():
    one = random_batch(np.random.default_rng(3), 12, "local")
    blocks = [pairwise(aln) for aln in one]
    out = io.StringIO()
    formats.write(one, "pairwise", out)
    assert out.getvalue() == "\n".join(block + "\n" for block in blocks)
    out = io.BytesIO()
    formats.write(one, "pairwise", out, follows=True)
    assert out.getvalue().decode() == "".join("\n" + block + "\n" for block in blocks)


def test_columns_fall_back_to_render(batch):
    names = ["qseqid", "sseqid", "score", "qlen", "slen", "nident", "cigar", "qcovhsp",
             "positive"]
    assert lines(batch, "blast6", columns=names, scoring=SCORING) == \
        [fields.render(aln, names, SCORING) for aln in batch]
    with pytest.raises(InputError, match="positive and ppos"):
        lines(batch, "blast6", columns=names)


def test_errors():
    one = random_batch(np.random.default_rng(4), 4, "local")
    with pytest.raises(InputError, match="unknown output format 'bam'"):
        formats.write(one, "bam", io.BytesIO())
    with pytest.raises(InputError, match="columns apply to the format blast6"):
        formats.write(one, "sam", io.BytesIO(), columns=["qseqid"])
    with pytest.raises(InputError, match="unknown column"):
        formats.write(one, "blast6", io.BytesIO(), columns=["nope"])


def test_ids_with_nul_refused():
    one = random_batch(np.random.default_rng(9), 3, "local")
    bad = Sequences(one.queries.codes, one.queries.offsets, ["a", "b\0", "c"],
                    one.queries.letters)
    bad_batch = PairBatch(*(getattr(one, f) for f in (
        "score", "query_start", "query_end", "target_start", "target_end", "cigar_runs",
        "cigar_offsets", "query_index", "target_index")), bad, one.targets, "local", DNA)
    with pytest.raises(InputError, match="NUL"):
        formats.write(bad_batch, "sam", io.BytesIO())


def test_empty_batch():
    one = random_batch(np.random.default_rng(5), 4, "local")
    none = batch_of(one.queries, one.targets, [(0, 0, 0, 0, 0, 0, 0, "")], "local")
    none = PairBatch(*(getattr(none, f)[:0] for f in ("score", "query_start", "query_end",
                                                       "target_start", "target_end",
                                                       "cigar_runs")),
                     none.cigar_offsets[:1], none.query_index[:0], none.target_index[:0],
                     one.queries, one.targets, "local", DNA)
    for fmt in formats.FORMATS:
        assert lines(none, fmt) == []


# ---- the batch's CIGAR helpers --------------------------------------------------------------

def test_runs_from_letters_and_cigar_strings_against_alignment():
    rng = np.random.default_rng(6)
    many = ["".join(rng.choice(list("=XID"), int(rng.integers(0, 30)), p=[.7, .1, .1, .1]))
            for _ in range(500)]
    many[::50] = [""] * len(many[::50])
    many[7] = "=" * 1000 + "X" * 10 + "I" * 99 + "D" * 100 + "=" * 9999
    runs, offsets = runs_from_letters(np.frombuffer("".join(many).encode(), np.uint8),
                                      np.array([len(m) for m in many]))
    assert offsets[0] == 0 and offsets[-1] == runs.size
    assert cigar_strings(runs, offsets) == cigars_from_ops(many)
    for k in (0, 7, 499):
        ops = [(int(r >> 4), "MIDNSHP=XB"[r & 15]) for r in runs[offsets[k]:offsets[k + 1]]]
        assert ops == cigar_ops(cigars_from_ops([many[k]])[0])


def test_cigar_strings_every_width():
    lengths = np.array([1, 9, 10, 99, 100, 999, 1000, 10**6 - 1, 10**6, 10**7, 2**28 - 1],
                       np.uint32)
    text = cigar_strings(lengths << 4 | 8, np.array([0, 3, 3, lengths.size]))
    assert text == ["1X9X10X", "", "".join(f"{n}X" for n in lengths[3:].tolist())]


def test_batch_cigars_and_counts_of_a_selection(batch):
    if not batch.traced:
        assert batch.cigars() is None and batch.counts() == {}
        return
    which = [5, 0, 5, len(batch) - 1]
    assert batch.cigars(which) == [batch.cigars()[k] for k in which]
    counts = batch.counts()
    for k, aln in enumerate(batch[:40]):
        assert {key: int(v[k]) for key, v in counts.items()} == aln.counts()


def test_runs_from_letters_refuses_unknown_letters():
    """A letter outside MIDNSHP=XB would spill into the run's length bits."""
    with pytest.raises(ValueError, match="not a CIGAR op: 'a'"):
        runs_from_letters(np.frombuffer(b"==a=", np.uint8), np.array([4]))


def test_sam_fields_as_the_spec_allows():
    """CIGAR and SEQ as SAM 1.6's patterns allow them."""
    one = random_batch(np.random.default_rng(8), 60, "semiglobal")
    for line in lines(one, "sam")[len(ODD_IDS):]:
        f = line.split("\t")
        assert re.fullmatch(r"\*|([0-9]+[MIDNSHP=X])+", f[5]) and re.fullmatch(
            r"[A-Z*]+", f[9])


def test_numbers_every_width():
    """The digits, 3 places at a time from a table; leading zeros only to ``width``; a row
    without the field has none of its text (``after`` too)."""
    values = np.array([0, 7, 9, 10, 99, 100, 999, 1000, 1001, 65536, 999999, 10**6, 123456789,
                       -1, -1000, 10**18, 9 * 10**18])
    line = line_blocks.Block(values.size)
    line.number(values, before=b"<", after=b">\n")
    line.number(values % 1000, values > 0, width=3, after=b"\n")
    got = bytes(line.array(line_blocks.Scratch())).decode()
    assert got == "".join(f"<{v}>\n" + (f"{v % 1000:03d}\n" if v > 0 else "")
                          for v in values.tolist())


def test_cigar_text_and_counts_of_any_run():
    """The compiled CIGAR writer against the runs' Python texts: every op code, run lengths
    of one to ten digits, pairs without runs; the counts against the batch's own."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(0, 6, 300)
    lengths = 10 ** rng.integers(0, 9, sizes.sum()) + rng.integers(0, 10, sizes.sum())
    ops = rng.choice([0, 1, 2, 7, 8, 4], sizes.sum())
    runs = (lengths.astype(np.uint32) << 4) | ops.astype(np.uint32)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    text = cigar_text.text(runs, offsets)
    assert [bytes(row[row != 0]).decode() for row in text] == cigar_strings(runs, offsets)
    got = cigar_text.counts(runs, offsets)
    owner = np.repeat(np.arange(sizes.size), sizes)
    for column, code in enumerate((7, 8, 1, 2, 0)):
        assert (got[:, column] == np.bincount(owner, lengths * (ops == code),
                                              sizes.size)).all()
    assert (got[:, 5] == np.bincount(owner, (ops == 1) | (ops == 2), sizes.size)).all()
