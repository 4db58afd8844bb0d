"""Non-serial polyadic DP: schedules, the CPU engine against the O(n^3) oracle, matrix chain
against brute force, Nussinov against ViennaRNA, the commands, and (``-m gpu``) the GPU
engine against the CPU engine with poisoned tables."""

from __future__ import annotations

import itertools
import json
import math
import zlib

import numpy as np
import pytest
from helpers import assert_user_error, invoke
from hypothesis import given, settings
from hypothesis import strategies as st

import wavedp
from wavedp import InputError
from wavedp.polyadic import Pairs, reference, solve
from wavedp.polyadic.nussinov import pair_table, rna_codes
from wavedp.polyadic.problem import LIMIT, PACK_LIMIT, encode
from wavedp.polyadic.schedule import plan, split
from wavedp.polyadic.traceback import derivation, dotbracket, pairs, parenthesization

DTYPES = ("int32", "int64", "float32", "float64")
SCHEDULES = ("iterative", "divide-and-conquer")
WEIGHTS = ("none", "product", "table")


def instance(rng: np.random.Generator, n: int, dtype: str, opt: str, weight: str,
             paired: bool, spread: int = 3):
    """Random inputs with many ties (small integers; float instances add fractions)."""
    diag = rng.integers(-spread, spread + 1, n).astype(np.float64)
    if dtype.startswith("float"):
        diag += rng.integers(0, 4, n) / 8 + rng.random(n) * (rng.random() < 0.5)
    w = None
    if weight == "product":
        w = ("product", rng.integers(1, 4, n + 1))
    elif weight == "table":
        w = rng.integers(-spread, spread + 1, (n, n))
    pair = None
    if paired:
        table = rng.integers(-spread, spread + 1, (3, 3)).astype(np.float64)
        table[rng.random((3, 3)) < 0.3] = math.inf if opt == "min" else -math.inf
        pair = Pairs(rng.integers(0, 3, n), table, int(rng.integers(0, 3)))
    return diag, w, pair


def same(sol, table, choice) -> None:
    assert np.array_equal(sol.table, table)
    assert np.array_equal(sol.choice, choice)


# -- schedules -------------------------------------------------------------------------------

@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("nb", [*range(1, 18), 31, 64])
def test_schedule_reads_only_finished_blocks(schedule, nb):
    """Every product reads finished blocks and lands once per split block on an unfinished
    block; every block is finished once, after all its far contributions and after the
    blocks its near part and pairing term read."""
    done, far, phases = set(), {}, plan(schedule, nb)
    for k in range(phases.phases):
        products, finals = phases.phase(k)
        targets = [tuple(t) for t in products[:, :2].tolist()]
        assert len(targets) == len(set(targets))
        for a, c, l0, l1 in products.tolist():
            assert a < l0 < l1 <= c and (a, c) not in done
            for mid in range(l0, l1):
                assert (a, mid) in done and (mid, c) in done
                assert mid not in far.setdefault((a, c), set())
                far[(a, c)].add(mid)
        for a, c in finals.tolist():
            assert far.get((a, c), set()) == set(range(a + 1, c))
            needs = {(a, a), (c, c), (a, c - 1), (a + 1, c), (a + 1, c - 1)} - {(a, c)}
            assert all(blk in done for blk in needs if blk[0] <= blk[1])
        done.update(tuple(f) for f in finals.tolist())
    assert done == {(a, c) for a in range(nb) for c in range(a, nb)}
    assert np.array_equal(phases.product_phase, np.sort(phases.product_phase))


def test_split_covers_each_range_once():
    products = np.array([[0, 5, 1, 5], [1, 9, 2, 9], [2, 4, 3, 4]], np.int32)
    tasks, source = split(products, np.array([3, 3, 3]))
    assert source.tolist() == [0, 0, 0, 1, 1, 1, 2]
    assert tasks[2].tolist() == [0, 5, 3, 5] and tasks[-1].tolist() == [2, 4, 3, 4]
    for i, (a, c, l0, l1) in enumerate(products.tolist()):
        parts = tasks[source == i]
        assert (parts[:, :2] == [a, c]).all() and parts[0, 2] == l0 and parts[-1, 3] == l1
        assert (parts[1:, 2] == parts[:-1, 3]).all() and (parts[:, 2] < parts[:, 3]).all()
    assert np.array_equal(split(products, np.ones(3, int))[0], products)


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("resident", [1, 7, 300])
def test_gpu_launch_layout(schedule, resident):
    """The GPU's per-phase launches (built without a GPU): each phase's products, cut or not,
    cover its far ranges once; cut parts get distinct scratch slots, folded by one group."""
    from wavedp.engines.cuda.polyadic import _layout

    prob = encode(np.zeros(700), opt="min", weight=None, pair=None, dtype=None, block=32)
    layout, flat, slots = _layout(schedule, prob.blocks, resident, 1)
    phases = plan(schedule, prob.blocks)
    assert len(layout) == phases.phases
    for k, (t0, tn, g0, gn, f0, fn) in enumerate(layout):
        products, finals = phases.phase(k)
        tasks = flat[t0:t0 + 5 * tn].reshape(-1, 5)
        groups = flat[g0:g0 + 4 * gn].reshape(-1, 4)
        assert np.array_equal(flat[f0:f0 + 2 * fn].reshape(-1, 2), finals)
        cover = {}
        for a, c, l0, l1, _ in tasks.tolist():
            cover.setdefault((a, c), []).append((l0, l1))
        assert {key: (min(r)[0], max(r)[1], sum(h - lo for lo, h in r))
                for key, r in cover.items()} == {(a, c): (l0, l1, l1 - l0)
                                                 for a, c, l0, l1 in products.tolist()}
        cut = tasks[tasks[:, 4] >= 0]
        assert sorted(cut[:, 4].tolist()) == list(range(len(cut))) and len(cut) <= slots
        for a, c, s0, s1 in groups.tolist():
            assert sorted(cut[(cut[:, 0] == a) & (cut[:, 1] == c), 4].tolist()) == \
                list(range(s0, s1))
        assert len(groups) == len({(a, c) for a, c in cut[:, :2].tolist()})
        if len(products) >= resident:
            assert tn == len(products) and gn == 0


# -- the CPU engine against the oracle --------------------------------------------------------

@pytest.mark.parametrize("paired", [False, True], ids=["splits", "pairs"])
@pytest.mark.parametrize("weight", WEIGHTS)
@pytest.mark.parametrize("opt", ["min", "max"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_cpu_equals_reference(dtype, opt, weight, paired):
    rng = np.random.default_rng(zlib.crc32(repr((dtype, opt, weight, paired)).encode()))
    for n in (1, 2, 3, 9, 33, 70):
        diag, w, pair = instance(rng, n, dtype, opt, weight, paired)
        table, choice = reference.solve(diag, opt=opt, weight=w, pair=pair, dtype=dtype)
        for schedule, block in itertools.product(SCHEDULES, (32, 64)):
            sol = solve(diag, opt=opt, weight=w, pair=pair, dtype=dtype, schedule=schedule,
                        block=block, device="cpu")
            same(sol, table, choice)
            assert sol.value == table[0, n - 1] and sol.dtype == np.dtype(dtype)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 80), dtype=st.sampled_from(DTYPES), opt=st.sampled_from(["min", "max"]),
       weight=st.sampled_from(WEIGHTS), paired=st.booleans(), spread=st.sampled_from([1, 9]),
       schedule=st.sampled_from(SCHEDULES), block=st.sampled_from([32, 64]),
       seed=st.integers(0, 2**32 - 1))
def test_cpu_equals_reference_drawn(n, dtype, opt, weight, paired, spread, schedule, block,
                                    seed):
    diag, w, pair = instance(np.random.default_rng(seed), n, dtype, opt, weight, paired, spread)
    same(solve(diag, opt=opt, weight=w, pair=pair, dtype=dtype, schedule=schedule, block=block,
               device="cpu"),
         *reference.solve(diag, opt=opt, weight=w, pair=pair, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_schedules_and_blocks_agree_on_many_blocks(dtype):
    """Seven blocks of 32 and three of 96: deep divide-and-conquer recursion, split tables."""
    rng = np.random.default_rng(7)
    diag, w, pair = instance(rng, 200, dtype, "max", "product", True, spread=20)
    first = solve(diag, opt="max", weight=w, pair=pair, dtype=dtype, block=32, device="cpu")
    for schedule, block in [("divide-and-conquer", 32), ("iterative", 96),
                            ("divide-and-conquer", 96), ("iterative", 256)]:
        same(solve(diag, opt="max", weight=w, pair=pair, dtype=dtype, schedule=schedule,
                   block=block, device="cpu"), first.table, first.choice)


def test_ties_take_the_smallest_k():
    sol = solve(np.zeros(6), opt="min", device="cpu")  # every split ties
    expect = np.where(np.triu(np.ones((6, 6), bool), 1), np.arange(6)[:, None], -1)
    assert np.array_equal(sol.choice, expect)
    assert parenthesization(sol.derivation(), 6) == "(A1(A2(A3(A4(A5A6)))))"


def test_pair_forms_agree():
    """A dense table with -inf, a masked table and classes: the same pairing term."""
    rng = np.random.default_rng(3)
    n = 40
    codes = rng.integers(0, 4, n)
    classes = rng.integers(-2, 5, (4, 4)).astype(float)
    classes[0, 1] = -math.inf
    dense = classes[codes[:, None], codes[None, :]]
    dense[np.subtract.outer(np.arange(n), np.arange(n)) >= -2] = -math.inf  # j - i <= 2
    masked = np.ma.masked_array(np.where(np.isinf(dense), 0, dense), np.isinf(dense))
    diag = rng.integers(-3, 3, n)
    by_class = solve(diag, opt="max", pair=Pairs(codes, classes, 2), device="cpu")
    for pair in (dense, masked):
        sol = solve(diag, opt="max", pair=pair, device="cpu")
        same(sol, by_class.table, by_class.choice)
    assert by_class.dtype == np.int32


def test_dtype_follows_the_range():
    assert solve([1, 2, 3], device="cpu").dtype == np.int32
    assert solve([2**28, 2**28], device="cpu").dtype == np.int64
    assert solve([0.5, 1.0], device="cpu").dtype == np.float64
    big = solve([2**40, 2**40, 3], opt="max", device="cpu")
    assert big.value == 2**41 + 3 and isinstance(big.value, int)
    assert encode([1] * 10, opt="min", weight=None, pair=None, dtype=None, block=32).pack
    assert not encode([PACK_LIMIT + 1], opt="min", weight=None, pair=None, dtype=None,
                      block=32).pack


@pytest.mark.parametrize("kwargs, needle", [
    ({"opt": "mean"}, "opt"),
    ({"block": 48}, "block"),
    ({"block": 512}, "block"),
    ({"dtype": "int8"}, "dtype"),
    ({"dtype": "complex64"}, "dtype"),
    ({"schedule": "greedy"}, "schedule"),
    ({"device": "tpu"}, "device"),
    ({"weight": ("sum", [1, 2, 3, 4])}, "weight"),
    ({"weight": ("product", [1, 2])}, "needs n"),
    ({"weight": np.ones((2, 2))}, "3 x 3"),
    ({"weight": ("product", [1, np.nan, 1, 1])}, "finite"),
    ({"pair": np.ones((3, 3)) * -math.inf}, "finite or inf"),
    ({"pair": Pairs([0, 1, 5], np.ones((2, 2)))}, "codes"),
    ({"pair": np.ones((2, 2))}, "3 x 3"),
    ({"pair": Pairs([0, 1, 1], np.ones((2, 2)), -1)}, "min_loop"),
    ({"dtype": "int32", "weight": np.full((3, 3), 0.5)}, "whole"),
    ({"dtype": "int32", "weight": np.full((3, 3), 2**30)}, "beyond int32"),
    ({"weight": ("product", [2**25] * 4)}, "beyond int64"),
    ({"dtype": "float32", "weight": np.full((3, 3), 1e38)}, "beyond float32"),
])
def test_bad_input_is_an_input_error(kwargs, needle):
    with pytest.raises(InputError, match=needle):
        solve([1, 2, 3], **{"device": "cpu", **kwargs})


def test_bad_diagonal():
    for diag, needle in [([], "empty"), ([[1]], "dimension"), (["a"], "numeric"),
                         ([1, math.inf], "finite")]:
        with pytest.raises(InputError, match=needle):
            solve(diag, device="cpu")


# -- traceback helpers -----------------------------------------------------------------------

def test_traceback_helpers():
    choice = np.full((6, 6), -1)
    choice[0, 5], choice[1, 4], choice[1, 2], choice[3, 4] = 5, 2, 1, 4
    nodes = derivation(choice)
    assert nodes.tolist() == [[0, 5, 5], [1, 4, 2], [1, 2, 1], [3, 4, 4]]
    assert pairs(nodes) == [(0, 5), (3, 4)]
    assert dotbracket(pairs(nodes), 6) == "(..())"
    with pytest.raises(InputError, match="not a parenthesization"):
        parenthesization(nodes, 6)
    assert parenthesization(derivation(np.full((1, 1), -1)), 1) == "A1"
    names = ["X", "Y", "Z"]
    split3 = np.array([[-1, 0, 0], [-1, -1, 1], [-1, -1, -1]])
    assert parenthesization(derivation(split3), 3, names) == "(X(YZ))"


# -- matrix chain ------------------------------------------------------------------------------

def brute_chain(d: list[int], i: int, j: int) -> tuple[int, str]:
    """Every parenthesization, first minimum in the order of k (as the tie rule)."""
    if i == j:
        return 0, f"A{i + 1}"
    best = None
    for k in range(i, j):
        (lc, lo), (rc, ro) = brute_chain(d, i, k), brute_chain(d, k + 1, j)
        cost = lc + rc + d[i] * d[k + 1] * d[j + 1]
        if best is None or cost < best[0]:
            best = (cost, f"({lo}{ro})")
    return best


def test_matrix_chain_clrs():
    assert wavedp.matrix_chain([30, 35, 15, 5, 10, 20, 25], device="cpu") == (
        15125, "((A1(A2A3))((A4A5)A6))")
    assert wavedp.matrix_chain([5, 7], device="cpu") == (0, "A1")


@pytest.mark.parametrize("n", range(1, 9))
def test_matrix_chain_brute_force(n):
    rng = np.random.default_rng(n)
    for top in (3, 60):
        d = rng.integers(1, top, n + 1).tolist()
        assert wavedp.matrix_chain(d, device="cpu") == brute_chain(d, 0, n - 1)


def test_matrix_chain_int64_against_the_reference():
    rng = np.random.default_rng(5)
    d = rng.integers(10**4, 10**5, 61)
    cost, order = wavedp.matrix_chain(d.tolist(), device="cpu", block=32)
    table, choice = reference.solve(np.zeros(60, np.int64), weight=("product", d))
    assert cost == table[0, -1] > 2**40
    assert order == parenthesization(derivation(choice), 60)
    with pytest.raises(InputError, match="beyond int64"):
        wavedp.matrix_chain([2**25] * 5, device="cpu")
    for bad in ([3], [2, 0, 4], [2, 2.5, 4], [True, 2]):
        with pytest.raises(InputError, match="dimension"):
            wavedp.matrix_chain(bad, device="cpu")


# -- Nussinov ----------------------------------------------------------------------------------

def check_structure(seq: str, structure: str, count: int, min_loop: int, gu: bool) -> None:
    allowed = {"AU", "UA", "GC", "CG"} | ({"GU", "UG"} if gu else set())
    seq = seq.upper().replace("T", "U")
    stack, found = [], 0
    assert len(structure) == len(seq)
    for j, ch in enumerate(structure):
        if ch == "(":
            stack.append(j)
        elif ch == ")":
            i = stack.pop()
            assert seq[i] + seq[j] in allowed and j - i - 1 >= min_loop
            found += 1
        else:
            assert ch == "."
    assert not stack and found == count


def test_nussinov_equals_viennarna():
    RNA = pytest.importorskip("RNA")
    rng = np.random.default_rng(11)
    for n in [0, 1, 4, 5, 6, 17, 64, 65, 130, 257]:
        for _ in range(3):
            seq = "".join(rng.choice(list("ACGU"), n))
            count, structure = wavedp.nussinov(seq, device="cpu")
            assert count == (RNA.maximum_matching(seq) if n else 0)
            check_structure(seq, structure, count, 3, True)


@pytest.mark.parametrize("min_loop, gu", [(0, True), (1, False), (3, False), (5, True)])
def test_nussinov_options_against_the_reference(min_loop, gu):
    rng = np.random.default_rng(min_loop * 2 + gu)
    for n in (3, 20, 45):
        seq = "".join(rng.choice(list("ACGUT"), n))
        count, structure = wavedp.nussinov(seq, min_loop=min_loop, gu=gu, device="cpu",
                                           block=32)
        table, _ = reference.solve(np.zeros(n), opt="max", dtype="int32",
                                   pair=Pairs(rna_codes(seq), pair_table(gu), min_loop))
        assert count == table[0, -1]
        check_structure(seq, structure, count, min_loop, gu)


def test_nussinov_letters():
    assert wavedp.nussinov("gggaaaTcc", device="cpu") == (3, "(((...)))")
    assert wavedp.nussinov("GNGAAACNC", device="cpu") == (2, "(.(...).)")
    with pytest.raises(InputError, match=r"'X' at position 5"):
        wavedp.nussinov("GGGAXAUCC", device="cpu")
    with pytest.raises(InputError, match="min_loop"):
        wavedp.nussinov("GGGAAAUCC", min_loop=-1, device="cpu")


# -- the commands --------------------------------------------------------------------------

def test_chain_command(tmp_path):
    result = invoke("chain", 30, 35, 15, 5, 10, 20, 25, "--device", "cpu")
    assert result.exit_code == 0 and result.stdout == "15125\t((A1(A2A3))((A4A5)A6))\n"
    dims = tmp_path / "dims.txt"
    dims.write_text("# the CLRS chain\n30, 35 15\n5 10 20 25\n")
    out = tmp_path / "out.json"
    result = invoke("chain", dims, "--format", "json", "--device", "cpu", "-o", out)
    assert result.exit_code == 0 and result.stdout == ""
    assert json.loads(out.read_text()) == {"matrices": 6, "cost": 15125,
                                           "order": "((A1(A2A3))((A4A5)A6))"}


@pytest.mark.parametrize("args, needle", [
    (["10", "x", "5"], "argument 2: 'x'"),
    (["10", "0", "5"], "dimension 2 is 0"),
    (["10"], "n + 1 >= 2"),
    ([str(2**40)] * 3, "beyond int64"),
])
def test_chain_command_errors(tmp_path, args, needle):
    out = tmp_path / "out.txt"
    assert_user_error(invoke("chain", *args, "--device", "cpu", "-o", out), needle)
    assert not out.exists()


def test_chain_command_file_errors(tmp_path):
    dims = tmp_path / "dims.txt"
    dims.write_text("10 20\n30 4.5\n")
    assert_user_error(invoke("chain", dims, "--device", "cpu"), "line 2: '4.5'")


def test_fold_command(tmp_path):
    fasta = tmp_path / "rna.fa"
    fasta.write_text(">r1 first\nGGGAAAUCC\n>r2\nacgtacgtNNgggaaaccc\n")
    result = invoke("fold", fasta, "--algorithm", "nussinov", "--device", "cpu")
    assert result.exit_code == 0
    assert result.stdout == (">r1\nGGGAAAUCC\n(((...))) (3)\n"
                             ">r2\nACGUACGUNNGGGAAACCC\n((....))..(((...))) (5)\n")
    result = invoke("fold", fasta, "--format", "json", "--min-loop", "4", "--no-gu",
                    "--device", "cpu")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["pairs"] for r in rows] == [2, 4] and rows[0]["length"] == 9


def test_fold_command_errors(tmp_path):
    fasta = tmp_path / "rna.fa"
    fasta.write_text(">ok\nGGGAAAUCC\n>bad\nGGG\nAAXUCC\n")
    out = tmp_path / "out.txt"
    assert_user_error(invoke("fold", fasta, "--device", "cpu", "-o", out),
                      f"file {fasta}, record bad: invalid RNA letter 'X' at position 6")
    assert not out.exists()
    assert_user_error(invoke("fold", tmp_path / "missing.fa", "--device", "cpu"), "missing.fa")


# -- the GPU engine (run with ``pytest -m gpu``) ----------------------------------------------

@pytest.fixture
def poison(monkeypatch):
    from wavedp.engines.cuda import polyadic as engine

    monkeypatch.setattr(engine, "POISON", True)


@pytest.mark.gpu
@pytest.mark.parametrize("paired", [False, True], ids=["splits", "pairs"])
@pytest.mark.parametrize("weight", WEIGHTS)
@pytest.mark.parametrize("opt", ["min", "max"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_equals_cpu(poison, dtype, opt, weight, paired):
    rng = np.random.default_rng(zlib.crc32(repr((dtype, opt, weight, paired, 1)).encode()))
    runs = [("iterative", 32), ("divide-and-conquer", 64), ("iterative", 96),
            ("divide-and-conquer", 128)]
    for n, spread in [(1, 3), (2, 3), (3, 3), (63, 3), (64, 20), (65, 3), (300, 50)]:
        diag, w, pair = instance(rng, n, dtype, opt, weight, paired, spread)
        for schedule, block in runs + ([("iterative", 64)] if n == 300 else []):
            kwargs = dict(opt=opt, weight=w, pair=pair, dtype=dtype, schedule=schedule,
                          block=block)
            cpu = solve(diag, device="cpu", **kwargs)
            gpu = solve(diag, device="gpu", **kwargs)
            assert gpu.value == cpu.value
            np.testing.assert_array_equal(gpu.derivation(), cpu.derivation())
            same(gpu, cpu.table, cpu.choice)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_large_values_and_split_products(poison, dtype):
    """Values past the packed range (int32 without packing), and n large enough for phases
    with few blocks, whose products are cut into parts and folded by ``reduce``."""
    rng = np.random.default_rng(17)
    n = 1500
    spread = LIMIT[np.dtype(np.int32)] // (4 * n) if dtype == "int32" else 10**6
    diag, w, pair = instance(rng, n, dtype, "min", "table", True, spread)
    prob = encode(diag, opt="min", weight=w, pair=pair, dtype=dtype, block=128)
    assert not prob.pack
    for schedule, block in [("iterative", 128), ("divide-and-conquer", 64)]:
        kwargs = dict(opt="min", weight=w, pair=pair, dtype=dtype, schedule=schedule,
                      block=block)
        cpu = solve(diag, device="cpu", **kwargs)
        same(solve(diag, device="gpu", **kwargs), cpu.table, cpu.choice)


@pytest.mark.gpu
def test_gpu_nussinov_and_chain(poison):
    RNA = pytest.importorskip("RNA")
    rng = np.random.default_rng(23)
    for n in (1, 2, 777, 3000):
        seq = "".join(rng.choice(list("ACGU"), n))
        assert wavedp.nussinov(seq, device="gpu") == wavedp.nussinov(seq, device="cpu")
        assert wavedp.nussinov(seq, device="gpu")[0] == RNA.maximum_matching(seq)
    for top in (5, 10**5):
        d = rng.integers(1, top, 601).tolist()
        assert (wavedp.matrix_chain(d, device="gpu", block=32)
                == wavedp.matrix_chain(d, device="cpu", block=32))


@pytest.mark.gpu
def test_gpu_solution_stays_on_the_device():
    sol = solve(np.arange(500) % 7, opt="max", device="gpu")
    assert "table" not in sol.__dict__ and "choice" not in sol.__dict__
    nodes = sol.derivation()
    assert "choice" not in sol.__dict__
    assert np.array_equal(nodes, derivation(sol.choice))
    assert sol.value == sol.table[0, -1]
