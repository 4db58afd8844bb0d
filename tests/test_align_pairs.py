"""wavedp.align_pairs: one-to-one pairs (or pairs by index) as a columnar PairBatch, exactly
the alignments wavedp.align gives each pair, on the CPU and on the GPU's batch engine (every
group size, tiles' edges, empty sequences, pairs it leaves to the pairwise engines)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import as_raw, oracle, pair_texts

import wavedp
from wavedp.engines.common import Sides
from wavedp.errors import InputError
from wavedp.pairs import PairBatch, Sequences

SCORINGS = {
    "dna": wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
    "protein": wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1),
    "ties": wavedp.Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=1),
    "flat": wavedp.Scoring(match=1, mismatch=-1, gap_open=3, gap_extend=3),
}
MODES = ("local", "global", "semiglobal")


def _fields(batch: PairBatch) -> list[tuple]:
    return [(a.score, a.query_start, a.query_end, a.target_start, a.target_end, a.cigar)
            for a in batch]


def _same(got: PairBatch, want: PairBatch) -> None:
    for name in ("score", "query_start", "query_end", "target_start", "target_end"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    assert (got.cigar_runs is None) == (want.cigar_runs is None)
    if got.cigar_runs is not None:
        np.testing.assert_array_equal(got.cigar_offsets, want.cigar_offsets)
        np.testing.assert_array_equal(got.cigar_runs, want.cigar_runs)


SMALL = [(0, 0), (0, 5), (5, 0), (1, 1), (1, 9), (9, 1), (7, 13), (20, 20), (33, 17), (40, 64)]


@pytest.mark.parametrize("kind", sorted(SCORINGS))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("traceback", [True, False])
def test_cpu_equals_align(kind, mode, traceback):
    queries, targets = pair_texts(kind, SMALL, seed=len(kind))
    scoring = SCORINGS[kind]
    batch = wavedp.align_pairs(queries, targets, scoring, mode=mode, traceback=traceback,
                               device="cpu")
    assert len(batch) == len(SMALL)
    want = [wavedp.align(a, b, scoring, mode=mode, traceback=traceback, device="cpu")
            for a, b in zip(queries, targets, strict=True)]
    got = list(batch)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert (g.score, g.query_start, g.query_end, g.target_start, g.target_end, g.cigar) \
            == (w.score, w.query_start, w.query_end, w.target_start, w.target_end, w.cigar), k
        assert (g.query, g.target, g.mode) == (w.query, w.target, mode)
        assert (g.query_length, g.target_length) == (len(queries[k]), len(targets[k]))


@pytest.mark.parametrize("mode", MODES)
def test_reference(mode):
    queries, targets = pair_texts("dna", [(m, n) for m in range(0, 7) for n in range(0, 7, 2)])
    scoring = SCORINGS["ties"]
    batch = wavedp.align_pairs(queries, targets, scoring, mode=mode, device="cpu")
    for a, q, t in zip(batch, queries, targets, strict=True):
        assert as_raw(a) == oracle(q, t, scoring, mode, True)


def test_pairs_by_index_and_columns():
    scoring = SCORINGS["dna"]
    queries, targets = pair_texts("dna", [(30, 40), (25, 25), (12, 50)])
    rows = np.array([[0, 2], [2, 0], [1, 1], [0, 0]])
    batch = wavedp.align_pairs(queries, targets, scoring, pairs=rows, device="cpu")
    assert [(a.query_id, a.target_id) for a in batch] == [
        ("query1", "target3"), ("query3", "target1"), ("query2", "target2"),
        ("query1", "target1")]
    for a, (i, j) in zip(batch, rows.tolist(), strict=True):
        assert as_raw(a) == as_raw(wavedp.align(queries[i], targets[j], scoring, device="cpu"))
    assert batch.cigars() == [a.cigar for a in batch]
    assert batch.cigars([3, 1]) == [batch[3].cigar, batch[1].cigar]
    assert batch[-1] == batch[3] and batch[1:3] == [batch[1], batch[2]]
    counts = batch.counts()
    for k, a in enumerate(batch):
        c = a.counts()
        assert all(int(counts[key][k]) == c[key] for key in c)
    assert list(batch.columns()["score"]) == [a.score for a in batch]


def test_sequences_in():
    scoring = SCORINGS["protein"]
    queries, targets = pair_texts("protein", [(50, 60), (0, 3), (70, 40)])
    q = Sequences.encode(queries, ["a", "b", "c"], scoring)
    t = Sequences.encode([s.lower() for s in targets], ["x", "y", "z"], scoring)
    batch = wavedp.align_pairs(q, t, scoring, device="cpu")
    assert [a.target_id for a in batch] == ["x", "y", "z"]
    assert _fields(batch) == _fields(wavedp.align_pairs(queries, targets, scoring,
                                                        device="cpu"))
    assert batch[2].target == targets[2].lower()


def test_letters_in_pieces(monkeypatch):
    """``Sequences.from_letters`` looks letters up a piece at a time on threads (several
    pieces here), the codes those of the whole; ids None are numbered; a bad letter in a
    later piece names its record."""
    from wavedp import api

    monkeypatch.setattr(api, "PIECE", 1000)
    scoring = SCORINGS["dna"]
    rng = np.random.default_rng(5)
    letters = np.frombuffer(b"ACGTNacgt", np.uint8)[rng.integers(0, 9, 10_007)]
    lengths = np.full(10_007 // 7, 7)
    lengths[-1] += 10_007 - lengths.sum()
    got = Sequences.from_letters(letters, lengths, None, scoring, what="read")
    assert np.array_equal(got.codes, scoring.lut[letters])
    assert got.ids[3] == "read4"
    letters = letters.copy()
    letters[8_500] = ord("!")
    with pytest.raises(InputError, match="read1215"):
        Sequences.from_letters(letters, lengths, None, scoring, what="read")


@pytest.mark.parametrize("call, message", [
    (lambda s: wavedp.align_pairs(["AC", "GT"], ["A"], s), "as many queries as targets"),
    (lambda s: wavedp.align_pairs(["AC"], ["A"], s, pairs=[[0, 1]]), "target index 1"),
    (lambda s: wavedp.align_pairs(["AC"], ["A"], s, pairs=[[0.0, 0.0]]), "k x 2 array"),
    (lambda s: wavedp.align_pairs(["AC"], ["A"], s, traceback="no"), "True or False"),
    (lambda s: wavedp.align_pairs(["AC"], ["AZ"], s), "invalid character"),
    (lambda s: wavedp.align_pairs("ACGT", ["A"], s), "wrap a single sequence"),
    (lambda s: wavedp.align_all({"a": "ACGT"}, ["A"], s), "got a dict"),
    (lambda s: wavedp.align_all(["AC"], ["A"], s, traceback="no"), "True or False"),
    (lambda s: wavedp.Database.open(None), "str or os.PathLike"),
])
def test_bad_input(call, message):
    with pytest.raises(InputError, match=message):
        call(SCORINGS["dna"])


# the GPU's batch engine: tiles of T = G * 8 rows (32, 64, 128, 256)
EDGES = [(m, n) for m in (1, 7, 31, 32, 33, 63, 64, 65, 127, 129, 255, 256, 257, 513)
         for n in (1, 9, 64, 300)]


def _gpu_cases(kind: str, mode: str, traceback: bool, groups):
    queries, targets = pair_texts(kind, EDGES + SMALL, seed=7)
    scoring = SCORINGS[kind]
    want = wavedp.align_pairs(queries, targets, scoring, mode=mode, traceback=traceback,
                              device="cpu")
    return queries, targets, scoring, want


@pytest.mark.gpu
@pytest.mark.parametrize("kind", sorted(SCORINGS))
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("traceback", [True, False])
def test_gpu_equals_cpu(kind, mode, traceback, monkeypatch):
    from wavedp.engines.cuda import many_pairs

    queries, targets, scoring, want = _gpu_cases(kind, mode, traceback, many_pairs.GROUPS)
    for g in many_pairs.GROUPS:
        # two pairs a word (the pairs exchanged, or not), or one
        for packed, swap in ((True, False), (True, True), (False, False)):
            _force(monkeypatch, g, swap)
            monkeypatch.setattr(many_pairs, "PACKED", packed)
            got = wavedp.align_pairs(queries, targets, scoring, mode=mode,
                                     traceback=traceback, device="gpu")
            _same(got, want)


def _force(monkeypatch, g: int, swap: bool) -> None:
    """The GPU engine's group size ``g`` and orientation (``swap``: the pairs exchanged where
    the call lets it) forced."""
    from wavedp.engines.cuda import many_pairs

    monkeypatch.setattr(many_pairs, "shape_for",
                        lambda m, n, exchange=True, g=g, **_: (g, swap and exchange))


def _gpu_at_every_group(queries, targets, scoring, mode: str, traceback: bool,
                        monkeypatch, align=wavedp.align_pairs) -> None:
    """The GPU's batch (``align``: ``align_pairs``, or ``align_all``) at every group size,
    the pairs exchanged or not, equals the CPU engine's."""
    from wavedp.engines.cuda import many_pairs

    want = align(queries, targets, scoring, mode=mode, traceback=traceback, device="cpu")
    for g in many_pairs.GROUPS:
        for swap in (False, True):
            _force(monkeypatch, g, swap)
            _same(align(queries, targets, scoring, mode=mode, traceback=traceback,
                        device="gpu"), want)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("traceback", [True, False])
def test_gpu_letter_n(mode, traceback, monkeypatch):
    """DNA with N in queries and targets, pairs of unequal sides in one group (columns past a
    target), at every group size, equal to the CPU."""
    rng = np.random.default_rng(13)
    sizes = [(int(m), int(n)) for m, n in zip(rng.integers(1, 300, 400),
                                              rng.integers(1, 300, 400), strict=True)]
    queries, targets = pair_texts("dna", sizes, seed=17)

    def with_n(s: str, rate: float) -> str:
        return "".join("N" if rng.random() < rate else c for c in s)

    queries = [with_n(q, 0.05 if k % 3 else 0.0) for k, q in enumerate(queries)]
    targets = [with_n(t, 0.05 if k % 2 else 0.0) for k, t in enumerate(targets)]
    targets[0] = "N" * len(targets[0])
    scoring = wavedp.Scoring(match=1, mismatch=-4, gap_open=7, gap_extend=1)
    _gpu_at_every_group(queries, targets, scoring, mode, traceback, monkeypatch)


# one warp's pairs of very different shapes: (33, 1) pairs beside (32, 2000) ones (a group of
# two pairs of unequal sides, groups of unequal passes), sides below a group's lanes, and n + G
# odd and even (the saved bottoms go two steps to a store)
MIXED = [(33, 1)] * 7 + [(32, 2000)] * 9 + [(1, 2), (2, 3), (5, 4), (7, 7), (64, 65), (65, 64),
                                            (129, 31), (30, 33)]


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("traceback", [True, False])
def test_gpu_mixed_warp(mode, traceback, monkeypatch):
    """Pairs of very different shapes in one launch (sorted by shape, 24 pairs still share
    warps across shapes), at every group size, equal to the CPU."""
    queries, targets = pair_texts("dna", MIXED, seed=23)
    scoring = SCORINGS["dna"]
    _gpu_at_every_group(queries, targets, scoring, mode, traceback, monkeypatch)


def test_shape_for():
    """Reads of 150 against windows of 300 go exchanged (the window down five passes of 64
    rows, 94% used, against the read's three, 78%); equal sides, or ``exchange`` False, never."""
    from wavedp.engines.cuda import many_pairs as mp

    m, n = np.full(10, 150), np.full(10, 300)
    assert mp.shape_for(m, n) == (8, True) and mp.shape_for(n, m) == (8, False)
    assert mp.shape_for(m, n, exchange=False) == (8, False)
    assert mp.shape_for(n, n) == (mp.shape_for(n, n, exchange=False)[0], False)
    # 16 rows a lane (score-only): the window down five passes of groups of 4
    assert mp.shape_for(m, n, rows=16) == (4, True)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["dna", "protein"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("traceback", [True, False])
def test_gpu_table_in_place_of_profiles(kind, mode, traceback, monkeypatch):
    """many_pairs16's table of scores (where a score + gap open leaves int8, or a profile
    its room) in place of the threads' profiles, exchanged or not, equal to the CPU."""
    from wavedp.engines.cuda import many_pairs

    monkeypatch.setattr(many_pairs, "PROFILE_BYTES", 0)
    queries, targets, scoring, want = _gpu_cases(kind, mode, traceback, many_pairs.GROUPS)
    for swap in (False, True):
        _force(monkeypatch, 8, swap)
        _same(wavedp.align_pairs(queries, targets, scoring, mode=mode, traceback=traceback,
                                 device="gpu"), want)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["dna", "ties", "flat"])
@pytest.mark.parametrize("mode", MODES)
def test_gpu_scores_tall_and_eight_rows(kind, mode, monkeypatch):
    """Score-only calls, 16 rows a lane (TALL) or 8, at every group size, exchanged or not,
    equal to the CPU (end cells by the tie rules: ties everywhere in ``ties``; semiglobal's
    row m and column n held anywhere in a lane's 16 rows)."""
    from wavedp.engines.cuda import many_pairs

    queries, targets, scoring, want = _gpu_cases(kind, mode, False, many_pairs.GROUPS)
    for tall in (16, many_pairs.ROWS):
        monkeypatch.setattr(many_pairs, "TALL", tall)
        for g in many_pairs.GROUPS:
            for swap in (False, True):
                _force(monkeypatch, g, swap)
                _same(wavedp.align_pairs(queries, targets, scoring, mode=mode,
                                         traceback=False, device="gpu"), want)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("traceback", [True, False])
def test_gpu_align_all_exchanged(mode, traceback, monkeypatch):
    """align_all (pairs that index the records, each record uploaded once), the pairs
    exchanged or not, at every group size, equal to the CPU: short reads against longer
    windows and the reverse, on a two-letter alphabet (ties everywhere)."""
    rng = np.random.default_rng(29)
    queries = ["".join(rng.choice(list("AC"), int(k))) for k in (3, 20, 65, 150, 200)]
    targets = ["".join(rng.choice(list("AC"), int(k))) for k in (1, 40, 130, 300)]
    _gpu_at_every_group(queries, targets, SCORINGS["ties"], mode, traceback, monkeypatch,
                        align=wavedp.align_all)


@pytest.mark.gpu
@pytest.mark.parametrize("traceback", [True, False])
def test_gpu_align_all_chunks_made_on_the_gpu(traceback, monkeypatch):
    """align_all's chunks made on the GPU from the records' offsets (many_pairs.CROSS), cut
    within a query's row, the pairs exchanged or not, equal those whose indices go up and
    the CPU's: 9 proteins against 157 of lengths 1 to 400 in chunks of 354 pairs."""
    from wavedp.engines.cuda import many_pairs, pair_chunks

    monkeypatch.setattr(pair_chunks, "LEAST_PAIRS", 64)
    rng = np.random.default_rng(31)
    letters = list("ACDEFGHIKLMNPQRSTVWY")
    queries = ["".join(rng.choice(letters, int(k))) for k in rng.integers(5, 200, 9)]
    targets = ["".join(rng.choice(letters, int(k))) for k in rng.integers(1, 400, 157)]
    scoring = SCORINGS["protein"]
    want = wavedp.align_all(queries, targets, scoring, traceback=traceback, device="cpu")
    for cross in (True, False):
        monkeypatch.setattr(many_pairs, "CROSS", cross)
        for swap in (False, True):
            _force(monkeypatch, 8, swap)
            _same(wavedp.align_all(queries, targets, scoring, traceback=traceback,
                                   device="gpu"), want)


def test_profiles_a_byte_a_row():
    """many_pairs16's PROF: a byte a row, letter and pair (DNA: 24 KiB a block of 256
    threads, 48 with 16 rows), where every score + gap open fits int8 and the profile its
    room (BLOSUM62's 100 KiB does not), else the table."""
    from wavedp.engines.cuda import many_pairs as mp

    dna = SCORINGS["dna"].table  # 2 / -3
    assert mp._profile(dna, 5, mp.ROWS) == 24 << 10 and mp._profile(dna, 5, 16) == 48 << 10
    assert mp._profile(dna, 125, mp.ROWS) and not mp._profile(dna, 126, mp.ROWS)  # 2 + go
    assert not mp._profile(dna * 50, 20, mp.ROWS)  # -150 + 20: below int8
    assert not mp._profile(SCORINGS["protein"].table, 11, mp.ROWS)  # 25 * 8 * 512 bytes


def test_packs_bounds():
    """many_pairs16's routing: the local key's X <= KEY16, global depth within int16 (rows
    past a query to the end of its tile: 16 a lane pad twice 8's)."""
    from wavedp.engines.cuda import many_pairs as mp

    dna = SCORINGS["ties"].table  # match 1
    assert mp.packs(4095, 4095, dna, 2, 1, 0, 8) and mp.packs(4095, 8000, dna, 2, 1, 0, 8)
    assert not mp.packs(4096, 4096, dna, 2, 1, 0, 8)
    assert not mp.packs(2048, 3000, dna * 2, 2, 1, 0, 8)
    assert mp.packs(1800, 2000, dna, 10, 4, 1, 32) and not mp.packs(2100, 2000, dna, 10, 4,
                                                                    1, 8)
    assert not mp.packs(10, 10, dna * 20000, 2, 1, 0, 8)  # a score past int16
    assert mp.packs(1800, 2000, dna, 10, 4, 1, 32, 8)
    assert not mp.packs(1800, 2000, dna, 10, 4, 1, 32, 16)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("traceback", [False, True])
def test_gpu_packed_at_its_bounds(mode, traceback):
    """Pairs right at many_pairs16's int16 bounds (the local key's largest X; global and
    semiglobal values near -16384) equal the CPU's, scores and (from the int16 borders the
    sweep saves) CIGARs."""
    from wavedp.engines.cuda import many_pairs as mp

    if mode == "local":
        scoring = wavedp.Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=1)
        sizes = [(mp.KEY16, mp.KEY16)] * 3 + [(mp.KEY16 - 5, mp.KEY16)] * 2
    else:
        scoring = wavedp.Scoring(match=1, mismatch=-1, gap_open=10, gap_extend=4)
        sizes = [(1800, 1900), (1900, 1700), (1, 1900), (1800, 1)]
    sub = scoring.table
    assert mp.packs(max(m for m, _ in sizes), max(n for _, n in sizes), sub,
                    scoring.gap_open, scoring.gap_extend, MODES.index(mode), 32)
    queries, targets = pair_texts("dna", sizes, seed=11)
    queries[0] = targets[0] = "ACGT" * (sizes[0][0] // 4) + "ACG"[:sizes[0][0] % 4]
    if mode != "local":  # a query against a target of one letter it lacks: gaps throughout
        queries[1], targets[1] = "A" * sizes[1][0], "C" * sizes[1][1]
    want = wavedp.align_pairs(queries, targets, scoring, mode=mode, traceback=traceback,
                              device="cpu")
    _same(wavedp.align_pairs(queries, targets, scoring, mode=mode, traceback=traceback,
                             device="gpu"), want)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", MODES)
def test_gpu_many_and_left_over(mode, monkeypatch):
    """Thousands of pairs of mixed shapes in one launch, many chunks in flight (small
    budgets), and pairs past the engine's limit (lowered) taken by the pairwise engines."""
    from wavedp.engines.cuda import many_pairs, pair_chunks

    rng = np.random.default_rng(5)
    sizes = list(zip(rng.integers(0, 400, 3000).tolist(), rng.integers(0, 400, 3000).tolist(),
                     strict=True))
    queries, targets = pair_texts("protein", sizes, seed=3)
    scoring = SCORINGS["protein"]
    want = wavedp.align_pairs(queries, targets, scoring, mode=mode, device="cpu")
    _same(wavedp.align_pairs(queries, targets, scoring, mode=mode, device="gpu"), want)
    monkeypatch.setattr(pair_chunks, "SAVE_BYTES", 1 << 22)
    monkeypatch.setattr(pair_chunks, "CHUNK_BYTES", 1 << 16)  # about 20 chunks
    monkeypatch.setattr(many_pairs, "MAX_SIDE", 300)
    _same(wavedp.align_pairs(queries, targets, scoring, mode=mode, device="gpu"), want)
    monkeypatch.setattr(many_pairs, "PINNED", False)  # the results into pageable arrays
    _same(wavedp.align_pairs(queries, targets, scoring, mode=mode, device="gpu"), want)
    monkeypatch.setattr(many_pairs, "PINNED", True)
    rows = np.stack([rng.integers(0, 3000, 4000), rng.integers(0, 3000, 4000)], axis=1)
    for traceback in (False, True):  # pairs by index: the records go up once, chunks index
        _same(wavedp.align_pairs(queries, targets, scoring, mode=mode, traceback=traceback,
                                 device="gpu", pairs=rows),
              wavedp.align_pairs(queries, targets, scoring, mode=mode, traceback=traceback,
                                 device="cpu", pairs=rows))


@pytest.mark.gpu
@pytest.mark.parametrize("chunk", [0, 3])
def test_gpu_unwritten_pair_is_an_error(chunk, monkeypatch):
    """A pair whose traceback left its coordinates unwritten, in the first chunk or a later
    one of several, makes the call a DeviceError, not a result."""
    import cupy

    from wavedp.engines.cuda import many_pairs, pair_chunks
    from wavedp.errors import DeviceError

    queries, targets = pair_texts("protein", [(60, 70)] * 400, seed=4)
    monkeypatch.setattr(pair_chunks, "CHUNK_BYTES", 1 << 13)  # chunks of about 40 pairs
    settle, seen = many_pairs._Run._settle, []

    def erased(self, packed, ends_at, scores, lo, hi):
        if len(seen) == chunk:  # the chunk's last pair as if the traceback never wrote it
            self.res5[5 * hi - 1:5 * hi] = cupy.int32(-1)
        seen.append((lo, hi))
        settle(self, packed, ends_at, scores, lo, hi)

    monkeypatch.setattr(many_pairs._Run, "_settle", erased)
    with pytest.raises(DeviceError, match="unwritten"):
        wavedp.align_pairs(queries, targets, SCORINGS["protein"], device="gpu")
    assert len(seen) > chunk + 1
    monkeypatch.setattr(many_pairs._Run, "_settle", settle)
    assert wavedp.align_pairs(queries, targets, SCORINGS["protein"], device="gpu").score.size


@pytest.mark.gpu
def test_gpu_pinned_results_take_their_blocks_again():
    """A result array in page-locked memory has its shape and type; one of about the same
    size (the same size class) takes the block a freed one gave back."""
    from wavedp.engines.cuda import staging

    first = staging.pinned_array((20_000, 5), np.int32)  # 400,000 bytes: a class of 425,984
    assert first.shape == (20_000, 5) and first.dtype == np.int32
    first[:] = 7
    address = first.ctypes.data
    del first
    again = staging.pinned_array(50_500, np.int64)  # 404,000 bytes: the same class
    assert again.shape == (50_500,) and again.ctypes.data == address


@pytest.mark.gpu
def test_gpu_copies_through_pinned_buffers():
    """Arrays past transfer.SMALL go up and down in pieces through page-locked buffers;
    several go up in one copy (``upload_all``)."""
    import cupy

    from wavedp.engines.cuda import transfer

    rng = np.random.default_rng(2)
    for size in (transfer.SMALL, transfer.PIECE + 12345, 3 * transfer.PIECE + 7):
        host = rng.integers(0, 255, size, dtype=np.uint8)
        dev = transfer.upload(host)
        assert bool((dev == cupy.asarray(host)).all())
        back = np.zeros(size, np.uint8)
        transfer.download(dev, back)
        np.testing.assert_array_equal(back, host)
        wide = rng.integers(-9, 9, (size // 12, 3), dtype=np.int32)
        np.testing.assert_array_equal(transfer.download(transfer.upload(wide)), wide)
    # one upload right after another: the second waits for the first's pieces in flight
    first, second = (rng.integers(0, 255, 3 * transfer.PIECE, dtype=np.uint8) for _ in "ab")
    a, b = transfer.upload(first), transfer.upload(second)
    assert bool((a == cupy.asarray(first)).all()) and bool((b == cupy.asarray(second)).all())
    # several arrays in one copy, small and large, of several types, one empty
    arrays = [rng.integers(0, 4, 1001, dtype=np.uint8), np.arange(17, dtype=np.int64),
              np.zeros(0, np.int32), rng.integers(-9, 9, (transfer.SMALL // 8, 2))]
    for dev, host in zip(transfer.upload_all(arrays), arrays, strict=True):
        assert dev.dtype == host.dtype and dev.shape == host.shape
        np.testing.assert_array_equal(dev.get(), host)


@pytest.mark.gpu
@pytest.mark.parametrize("traceback", [False, True])
def test_gpu_reads_against_windows(traceback):
    """The one-to-one path with no pair left over (no columns merged), sequences copied in
    pieces: 40,000 reads of 150 against windows of 300."""
    rng = np.random.default_rng(4)
    count = 40000
    windows = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, (count, 300))]
    starts = rng.integers(0, 150, count)
    reads = windows[np.arange(count)[:, None], starts[:, None] + np.arange(150)].copy()
    reads[rng.random(reads.shape) < 0.05] = ord("G")
    scoring = wavedp.Scoring(match=1, mismatch=-4, gap_open=7, gap_extend=1)
    q = Sequences.from_letters(reads.ravel(), np.full(count, 150), [f"r{k}" for k in
                                                                     range(count)], scoring)
    t = Sequences.from_letters(windows.ravel(), np.full(count, 300), [f"w{k}" for k in
                                                                       range(count)], scoring)
    got = wavedp.align_pairs(q, t, scoring, traceback=traceback, device="gpu")
    rows = np.stack([np.arange(0, count, 7)] * 2, axis=1)
    want = wavedp.align_pairs(q, t, scoring, traceback=traceback, device="cpu", pairs=rows)
    for name in ("score", "query_start", "query_end", "target_start", "target_end"):
        np.testing.assert_array_equal(getattr(got, name)[rows[:, 0]], getattr(want, name))
    if traceback:
        assert got.cigars(rows[:, 0]) == want.cigars()


def test_chunks_from_offsets_equal_running_sums(monkeypatch):
    """The one-to-one cut (residues' running sums read off the offsets, by bisection) equals
    the cut over running sums of the pairs' sizes (multiples, where they have one shape);
    each chunk is the most pairs within its caps (CHUNK_BYTES, the first's a FIRST-th of it;
    a LEAST_CHUNKS-th of the pairs or LEAST_PAIRS)."""
    from wavedp.engines.cuda import pair_chunks as mp

    rng = np.random.default_rng(1)
    for _ in range(150):
        count = int(rng.integers(1, 300))
        m, n = rng.integers(0, 500, count), rng.integers(0, 500, count)
        if rng.random() < 0.3:  # one shape: the sums as multiples
            m, n = np.full(count, m[0]), np.full(count, n[0])
        monkeypatch.setattr(mp, "CHUNK_BYTES", int(rng.integers(1, 5000)))
        least = int(rng.integers(1, 100))
        monkeypatch.setattr(mp, "LEAST_PAIRS", least)
        qoff = np.concatenate([[7], 7 + np.cumsum(m)])
        toff = np.concatenate([[3], 3 + np.cumsum(n)])
        cuts = list(mp.chunks(Sides.of(m, n), None, (qoff, toff)))
        assert cuts == list(mp.chunks(Sides.of(m, n), None))
        assert cuts[0][0] == 0 and cuts[-1][1] == count
        assert all(a[1] == b[0] for a, b in zip(cuts, cuts[1:], strict=False))
        sizes, most = m + n + mp.PAIR_BYTES, max(-(-count // mp.LEAST_CHUNKS), least)

        def cap(lo: int) -> int:  # the first chunk's a FIRST-th
            return mp.CHUNK_BYTES // mp.FIRST if lo == 0 else mp.CHUNK_BYTES
        assert all(hi - lo == 1 or (sizes[lo:hi].sum() <= cap(lo) and hi - lo <= most)
                   for lo, hi in cuts)
        assert all(hi == count or sizes[lo:hi + 1].sum() > cap(lo) or hi - lo == most
                   for lo, hi in cuts)
