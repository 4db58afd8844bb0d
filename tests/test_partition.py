"""Length partitioning (wavedp.engines.cuda.scan.partition): every scheduler covers each
(query, subject) pair once within the budget, and the thesis's example (Timal 2015) comes out
as worked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import covered_once
from hypothesis import given, settings
from hypothesis import strategies as st

from wavedp.engines.cuda.scan import partition as part
from wavedp.engines.cuda.scan.lines import Subjects
from wavedp.engines.cuda.scan.partition import Batch, padding
from wavedp.errors import InputError

NAMES = ("none", "dynamic1", "dynamic2", "static")
GIB = 1 << 30


def paswas_need(cell_bytes: int):
    """PaSWAS's memory model: every pair keeps its whole matrix, padded to the batch's longest
    query and subject, ``cell_bytes`` per cell (row and column 0 included)."""

    def need(lq, nq, ls, ns):
        return nq * ns * (lq + 1) * (ls + 1) * cell_bytes

    need.affine = True  # in each count (and takes an array of longest subjects)
    return need


PASWAS = paswas_need(4)

# The thesis's example: one query of 35,992 residues against targets of 5,480 down to 464.
QUERY = [35992]
S50 = np.linspace(5480, 464, 50).astype(int)
# The CUDASW++ query lengths (shared/data/allqueries.fasta) from 464 to 5,478, rounded up to
# PaSWAS's 8-residue blocks as its partitioner reads them: 5,478 becomes 5,480, 464 stays.
S16 = [5480, 5152, 4744, 4552, 4064, 3568, 3008, 2504, 2008, 1504, 1000, 856, 736, 664, 568,
       464]


def linear_need(lq: int, nq: int, ls: int, ns: int) -> int:
    """A score-only engine's memory: two rows of the longer side per pair, 4 bytes a cell."""
    return nq * ns * 2 * (np.maximum(lq, ls) + 1) * 4


linear_need.affine = True


def scan_need(longest_query: int, n_queries: int, longest_subject: int, n_subjects: int) -> int:
    """The search engine's memory: a score per pair, scratch rows when a query takes more than
    one pass of 128, and per-query state."""
    passes = -(-max(longest_query, 1) // 128)
    scratch = 0 if passes == 1 else 1056 * 32 * (longest_subject + 2) * 8
    return 4 * n_queries * n_subjects + scratch + 4 * 24 * passes * 128 * n_queries


scan_need.affine = True


def skewed(seed: int) -> list[int]:
    """One sequence of 35,000 residues among 2,000 of 200 to 600, shuffled."""
    rng = np.random.default_rng(seed)
    lengths = [*rng.integers(200, 601, 2000).tolist(), 35000]
    rng.shuffle(lengths)
    return lengths


def fits_or_single(batches: list[Batch], q, s, budget: int, need) -> bool:
    """Every batch fits the budget, or is a single pair."""
    q, s = np.asarray(q), np.asarray(s)
    return all(need(int(q[b.queries].max()), b.queries.size, int(s[b.subjects].max()),
                    b.subjects.size) <= budget or b.queries.size * b.subjects.size == 1
               for b in batches)


def sizes_to_batches(sizes: list[int]) -> list[list[int]]:
    """Consecutive index ranges of the sizes given."""
    stops = np.cumsum([0, *sizes])
    return [list(range(a, b)) for a, b in zip(stops[:-1], stops[1:], strict=True)]


lengths_st = st.lists(st.integers(0, 300) | st.sampled_from([0, 1, 2000]), max_size=25)
budget_st = st.integers(0, 10**7) | st.sampled_from([0, 1, 10**18])


@settings(max_examples=150, deadline=None)
@given(q=lengths_st, s=lengths_st, budget=budget_st, cell=st.sampled_from([1, 4]),
       name=st.sampled_from(NAMES), linear=st.booleans())
def test_every_pair_once_within_budget(q, s, budget, cell, name, linear):
    need = linear_need if linear else paswas_need(cell)
    batches = part.partition(name, q, s, budget, need)
    covered_once(batches, len(q), len(s))
    assert fits_or_single(batches, q, s, budget, need)
    order = Subjects.of(s).order
    for b in batches:
        assert b.queries.dtype == np.int64 and b.subjects.dtype == np.int32
        for idx, lengths in ((b.queries, q), (b.subjects, s)):
            assert np.all(np.diff(np.asarray(lengths)[idx]) <= 0)  # longest first
        if name == "none":  # file order: no range of the sorted order
            assert b.start is None and b.stop is None
        else:  # the range of the sorted order the batch carries is its subjects
            assert np.array_equal(order[b.start:b.stop], b.subjects)


@settings(max_examples=100, deadline=None)
@given(q=lengths_st, s=lengths_st, budget=budget_st, share=st.sampled_from([0.0, 0.3, 0.5, 1]))
def test_dynamic2_keeps_its_share(q, s, budget, share):
    for b in part.dynamic2(q, s, budget, PASWAS, share=share):
        for idx, lengths in ((b.queries, q), (b.subjects, s)):
            lengths = np.asarray(lengths)[idx]
            assert lengths.sum() >= share * lengths.size * lengths.max()


@settings(max_examples=100, deadline=None)
@given(q=lengths_st, s=lengths_st, budget=budget_st,
       threshold=st.none() | st.integers(0, 300))
def test_static_never_mixes_long_and_short(q, s, budget, threshold):
    for b in part.static(q, s, budget, PASWAS, threshold=threshold):
        for idx, lengths in ((b.queries, q), (b.subjects, s)):
            lengths = np.asarray(lengths)
            cut = 2 * np.median(lengths) // 1 if threshold is None else threshold
            assert len({bool(x > cut) for x in lengths[idx]}) == 1


@pytest.mark.parametrize("name", NAMES)
def test_edges(name):
    assert part.partition(name, [], [5, 6], GIB, PASWAS) == []
    assert part.partition(name, [5], [], GIB, PASWAS) == []
    (alone,) = part.partition(name, [10**6], [10**6], GIB, PASWAS)  # 4 TB alone
    assert alone.queries.tolist() == alone.subjects.tolist() == [0]
    batches = part.partition(name, [0, 0, 7], [0, 3], 0, PASWAS)  # nothing fits
    covered_once(batches, 3, 2)
    assert len(batches) == 6


@pytest.mark.parametrize(("subjects", "budget", "sizes"), [
    # C = floor(budget / (4 * 35,993)) subject rows of (L + 1) fit beside the query: 14,915 at
    # 2 GiB, 44,747 at 6 GiB; a batch starting at length L holds floor(C / (L + 1)) subjects.
    # S50: 5480->2, 5275->2, 5070->2, 4865->3, 4558->3, 4251->3, 3944->3, 3637->4, 3227->4,
    # 2818->5, 2306->6, 1692->8, 975->15 (5 left).
    (S50, 2 * GIB, [2, 2, 2, 3, 3, 3, 3, 4, 4, 5, 6, 8, 5]),
    # 5480->8, 4661->9, 3739->11, 2613->17, 975->45 (5 left).
    (S50, 6 * GIB, [8, 9, 11, 17, 5]),
    # 5480->2, 4744->3, 3568->4, 1504->9 (7 left).
    (S16, 2 * GIB, [2, 3, 4, 7]),
    # 5480->8, 2008->22 (8 left).
    (S16, 6 * GIB, [8, 8]),
])
def test_thesis_example_dynamic1(subjects, budget, sizes):
    expected = sizes_to_batches(sizes)
    for name in ("dynamic1", "none"):  # the subjects come longest first, so none cuts alike
        batches = part.partition(name, QUERY, subjects, budget, PASWAS)
        assert [b.subjects.tolist() for b in batches] == expected
        assert all(b.queries.tolist() == [0] for b in batches)


def test_thesis_example_static_separates_long_from_short():
    # S16's median is 2,256, so the default threshold is 4,512. Long: 5480->2, 4744->3 (2
    # left); short: 4064->3, 2504->5, 736->20 (4 left).
    batches = part.static(QUERY, S16, 2 * GIB, PASWAS)
    covered_once(batches, 1, len(S16))
    assert [[S16[i] for i in b.subjects] for b in batches] == [
        [5480, 5152], [4744, 4552], [4064, 3568, 3008], [2504, 2008, 1504, 1000, 856],
        [736, 664, 568, 464]]
    for budget in (2 * GIB, 6 * GIB):
        batches = part.static(QUERY, S50, budget, PASWAS, threshold=3000)
        assert all(len({bool(S50[i] > 3000) for i in b.subjects}) == 1 for b in batches)
        assert fits_or_single(batches, QUERY, S50, budget, PASWAS)


@pytest.mark.parametrize("budget", [2 * GIB, 6 * GIB])
def test_skewed_set_padding(budget):
    q, s = skewed(1), skewed(2)
    waste = {}
    for name in NAMES:
        batches = part.partition(name, q, s, budget, PASWAS)
        covered_once(batches, len(q), len(s))
        assert fits_or_single(batches, q, s, budget, PASWAS)
        real, padded = padding(batches, q, s)
        assert real == sum(q) * sum(s)
        waste[name] = padded - real
    assert waste["dynamic2"] <= waste["dynamic1"] <= waste["none"]
    assert waste["static"] < waste["none"]
    long_q, long_s = q.index(35000), s.index(35000)
    for b in batches:  # static's: the long ones stay apart
        assert long_q not in b.queries or b.queries.tolist() == [long_q]
        assert long_s not in b.subjects or b.subjects.tolist() == [long_s]


@pytest.mark.parametrize("name", NAMES)
def test_search_sized_set_with_the_engines_need(name):
    rng = np.random.default_rng(8)
    q = np.maximum(rng.lognormal(np.log(350), 0.6, 20), 1).astype(np.int64)
    s = np.maximum(rng.lognormal(np.log(350), 0.6, 200_000), 1).astype(np.int64)
    budget = 768 << 20  # a few hundred batches: most queries' scratch grows with the subject
    batches = part.partition(name, q, s, budget, scan_need)
    covered_once(batches, q.size, s.size)
    assert fits_or_single(batches, q, s, budget, scan_need)


def test_none_keeps_file_order():
    q, s = skewed(3)[:100], skewed(4)[:100]
    for b in part.none(q, s, 64 << 20, PASWAS):
        for idx in (b.queries, b.subjects):
            ordered = np.sort(idx)
            assert np.array_equal(ordered, np.arange(ordered[0], ordered[-1] + 1))


def test_dynamic2_closes_and_joins():
    # a 10-residue straggler is tiny next to ten of 600: cut off by the share, then joined
    batches = part.dynamic2([100], [600] * 10 + [10], 10**12, PASWAS)
    assert [b.subjects.size for b in batches] == [11]
    # two of 100 after two of 600 would keep 1400 / 2400 < 3/4 of the joined batch real
    batches = part.dynamic2([100], [600, 100, 600, 100], 10**12, PASWAS)
    assert [b.subjects.tolist() for b in batches] == [[0, 2], [1, 3]]
    assert len(part.dynamic1([100], [600, 100, 600, 100], 10**12, PASWAS)) == 1


def test_padding_by_hand():
    q, s = [3, 5], [2, 4, 0]
    batches = [Batch(np.array([1, 0]), np.array([1])),   # real (5+3)*4 = 32, padded 2*1*5*4
               Batch(np.array([1]), np.array([0, 2])),   # real 5*2 = 10, padded 1*2*5*2
               Batch(np.array([0]), np.array([0, 2]))]   # real 3*2 = 6, padded 1*2*3*2
    covered_once(batches, 2, 3)
    assert padding(batches, q, s) == (48, 72)


def test_names_and_dispatch():
    assert part.PARTITIONS == ("none", "static", "dynamic1", "dynamic2", "auto")
    assert set(part.SCHEDULERS) == set(NAMES)
    for name in part.PARTITIONS:
        assert part.check_partition(name) == name
    for bad in ("x", "Dynamic1", None, 3):
        with pytest.raises(InputError, match="partition must be one of none, static, "
                                             f"dynamic1, dynamic2, auto, got {bad!r}"):
            part.check_partition(bad)
    with pytest.raises(ValueError, match="predictor"):
        part.partition("auto", [1], [1], GIB, PASWAS)
    with pytest.raises(InputError):
        part.partition("x", [1], [1], GIB, PASWAS)
    q, s = skewed(5)[:200], skewed(6)[:200]
    for name, params in (("static", {"threshold": 400}), ("dynamic2", {"share": 0.8})):
        got = part.partition(name, q, s, 64 << 20, PASWAS, **params)
        want = part.SCHEDULERS[name](q, s, 64 << 20, PASWAS, **params)
        assert [(b.queries.tolist(), b.subjects.tolist()) for b in got] == \
               [(b.queries.tolist(), b.subjects.tolist()) for b in want]


def test_parameter_errors():
    with pytest.raises(InputError, match="share must be between 0 and 1, got 1.5"):
        part.dynamic2([1], [1], GIB, PASWAS, share=1.5)
    with pytest.raises(InputError, match="threshold must be >= 0, got -1"):
        part.static([1], [1], GIB, PASWAS, threshold=-1)


def test_a_need_not_marked_affine_is_refused():
    def need(lq, nq, ls, ns):
        return PASWAS(lq, nq, ls, ns)

    for name in NAMES:
        with pytest.raises(TypeError, match="need.affine = True"):
            part.partition(name, [5], [6], GIB, need)


@settings(max_examples=100, deadline=None)
@given(s=lengths_st, cut=st.tuples(st.integers(0, 25), st.integers(0, 25)))
def test_a_slice_of_the_sorted_order_is_the_slice_sorted(s, cut):
    """A chunk's order taken from the database's (``Subjects.within``) is the chunk's own
    sort: same indices, ties in index order, same runs, int32."""
    lengths = np.array(s, np.int32)
    start, stop = sorted(min(c, lengths.size) for c in cut)
    mine = Subjects.of(lengths).within(start, stop, lengths[start:stop])
    own = Subjects.of(lengths[start:stop])
    assert mine.order.dtype == own.order.dtype == np.int32
    assert np.array_equal(mine.order, own.order) and np.array_equal(mine.runs, own.runs)
