"""The GPU search engine returns exactly the CPU engine's scores and hits (``pytest -m gpu``)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DNA, MODE_NAMES, PROTEIN, random_seq, related

import wavedp
from wavedp.engines.common import MODES
from wavedp.engines.cpu.score import score_only
from wavedp.engines.cuda.scan.cost import launch_grid
from wavedp.engines.cuda.scan.planner import CANDIDATES
from wavedp.trace import Trace

pytestmark = pytest.mark.gpu

PROT = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA_SCORING = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)


def _database(rng, letters, count, longest, seed_from=None):
    texts = []
    for k in range(count):
        n = int(rng.integers(0, longest + 1)) if k % 7 else int(rng.integers(0, 3))
        if seed_from is not None and k % 5 == 0:
            texts.append(related(rng, seed_from, letters, 0.2)[:max(n, 1)])
        else:
            texts.append(random_seq(rng, letters, n))
    texts.append(texts[3])  # a duplicate
    return texts


def _exact(query, texts, scoring, mode):
    q = scoring.encode(query)
    return np.array([score_only(q, scoring.encode(t), scoring.table, scoring.gap_open,
                                scoring.gap_extend, MODES[mode])[0] for t in texts], np.int64)


def _scanned(query, texts, scoring, mode):
    from wavedp.db.database import Database
    from wavedp.engines.cuda.scan.scanner import Scanner

    db = Database.from_sequences(texts, alphabet="dna" if scoring.is_dna else "protein")
    scanner = Scanner(db.residues, db.offsets, db.codes_for(scoring), scoring.table,
                      scoring.gap_open, scoring.gap_extend, MODES[mode])
    idx, sc = scanner.top([scoring.encode(query)], 0, [None])[0]
    out = np.empty(len(texts), np.int64)
    out[idx] = sc
    assert sorted(idx.tolist()) == list(range(len(texts)))
    return out


@pytest.mark.parametrize("m", [1, 7, 64, 200, 513, 1300])
@pytest.mark.parametrize("mode", MODE_NAMES)
@pytest.mark.parametrize("kind", ["protein", "dna"])
def test_scan_scores_equal_the_32_bit_engine(m, mode, kind):
    rng = np.random.default_rng(m * 31 + len(mode))
    letters, scoring = (PROTEIN, PROT) if kind == "protein" else (DNA + "N", DNA_SCORING)
    query = random_seq(rng, letters, m)
    texts = _database(rng, letters, 151, 700, seed_from=query)  # odd: a lone last pair
    assert (_scanned(query, texts, scoring, mode) == _exact(query, texts, scoring, mode)).all()


@pytest.mark.parametrize("mode", MODE_NAMES)
def test_many_queries_pair_up_and_equal_cpu(mode):
    rng = np.random.default_rng(5)
    queries = [random_seq(rng, PROTEIN, int(n)) for n in (0, 1, 33, 150, 151, 600, 2100)]
    texts = _database(rng, PROTEIN, 90, 400, seed_from=queries[5])
    gpu = wavedp.search(queries, texts, PROT, top=0, evalue=None, mode=mode,
                        traceback=False, device="gpu")
    cpu = wavedp.search(queries, texts, PROT, top=0, evalue=None, mode=mode,
                        traceback=False, device="cpu")
    assert gpu == cpu


@pytest.mark.parametrize("packed", [True, False])
@pytest.mark.parametrize("shape", [(4, 4), (8, 12), (32, 32)])
def test_profiles_built_on_the_gpu_equal_the_host_layout(shape, packed):
    """The profiles of a launch (units of one or two queries, each its own passes) equal
    ``host_profile``'s layout word for word, pads included."""
    import cupy

    from wavedp.db.database import Database
    from wavedp.engines.cuda.scan import scanner as gpu_scan

    g, r = shape
    rng = np.random.default_rng(g * r + packed)
    db = Database.from_sequences(["ACDE"], alphabet="protein")
    scanner = gpu_scan.Scanner(db.residues, db.offsets, db.codes_for(PROT), PROT.table,
                                 PROT.gap_open, PROT.gap_extend, MODES["local"])
    qs = [PROT.encode(random_seq(rng, PROTEIN, int(n))) for n in (1, 2 * g * r + 3, 40, 7, 300)]
    units = [[qs[1], qs[0]], [qs[2]], [qs[3], qs[4]]] if packed else [[q] for q in qs]
    own = np.array([max(1, -(-max(q.size for q in u) // (g * r))) for u in units])
    prof, poffs = scanner._profiles(units, own, g, r, packed)
    host = np.concatenate([host_profile(u, scanner.sub, scanner.go, g, r, int(p), packed)
                           for u, p in zip(units, own, strict=True)])
    assert (cupy.asnumpy(prof) == host).all()
    assert cupy.asnumpy(poffs).tolist() == ((np.cumsum(own) - own) * 24 * g * r).tolist()


def host_profile(queries: list[np.ndarray], sub: np.ndarray, go: int, g: int, r: int,
                 passes: int, packed: bool) -> np.ndarray:
    """The kernel's query profile (uint32 words, passes x A x T in chunked row order) of one
    query, or of two packed into int16 halves (low half: the first): the layout's reference
    in NumPy; launches build theirs on the GPU (``scanner.Scanner``)."""
    from wavedp.engines.cuda.scan.shapes import PAD16, PAD32

    a, rows = sub.shape[1], passes * g * r
    halves = []
    for q in queries:
        col = np.full((a, rows), PAD16 if packed else PAD32, np.int64)
        col[:, :q.size] = sub[q, :].T.astype(np.int64) + go
        halves.append(col)
    if packed:
        words = (halves[0] & 0xFFFF) | ((halves[-1] & 0xFFFF) << 16)
    else:
        words = halves[0] & 0xFFFFFFFF
    words = words.reshape(a, passes, g, r // 4, 4).transpose(1, 0, 3, 2, 4)
    return np.ascontiguousarray(words.reshape(-1)).astype(np.uint32)


def test_saturated_pairs_are_rescored_at_32_bits():
    """3000 x W scores 33,000 under BLOSUM62: beyond int16, rescored exactly."""
    w = "W" * 3000
    texts = [w, w[:2900] + "A" * 50, "ACDE" * 10, w[:1000]]
    for query in (w, w[:2990]):
        got = _scanned(query, texts, PROT, "local")
        assert (got == _exact(query, texts, PROT, "local")).all()
        assert got.max() > 32767


def test_saturated_pairs_of_both_halves_are_rescored_after_the_scan():
    """Queries packed two to a word, both saturating against some subjects, among others
    that do not, over several launches (static partitioning: the long subjects apart): the
    scan's launches run ahead and the saturated pairs are rescored once all are done."""
    w = "W" * 3000
    rng = np.random.default_rng(21)
    texts = [w, w[:2900] + "A" * 50, w[:1000]] + [random_seq(rng, PROTEIN, 80)
                                                  for _ in range(300)]
    queries = [w, w[:2990], random_seq(rng, PROTEIN, 200), "ACDE" * 30]
    found = wavedp.search(queries, texts, PROT, top=5, device="gpu", partition="static",
                          traceback=False)
    assert found == wavedp.search(queries, texts, PROT, top=5, device="cpu",
                                  traceback=False)
    assert max(h.score for h in found[0]) > 32767 and max(h.score for h in found[1]) > 32767


def test_streamed_chunks_equal_resident(monkeypatch):
    from wavedp.engines.cuda.scan import scanner as gpu_scan

    rng = np.random.default_rng(9)
    query = random_seq(rng, PROTEIN, 300)
    texts = _database(rng, PROTEIN, 300, 500, seed_from=query)
    resident = _scanned(query, texts, PROT, "local")
    monkeypatch.setattr(gpu_scan, "DATABASE_BYTES", 20_000)  # about 60 sequences a chunk
    assert (_scanned(query, texts, PROT, "local") == resident).all()
    hits = wavedp.search([query], texts, PROT, top=5, device="gpu")
    monkeypatch.setattr(gpu_scan, "DATABASE_BYTES", None)
    assert hits == wavedp.search([query], texts, PROT, top=5, device="cpu")


def test_a_scan_of_the_same_lengths_reuses_its_plan(monkeypatch):
    from wavedp.db.database import Database
    from wavedp.engines.cuda.scan import scanner as gpu_scan

    rng = np.random.default_rng(13)
    texts = _database(rng, PROTEIN, 400, 300)
    db = Database.from_sequences(texts, alphabet="protein")
    scanner = gpu_scan.Scanner(db.residues, db.offsets, db.codes_for(PROT), PROT.table,
                                 PROT.gap_open, PROT.gap_extend, MODES["local"])
    planned = []
    batches = gpu_scan.Scanner.batches
    monkeypatch.setattr(gpu_scan.Scanner, "batches",
                        lambda self, ch, units: planned.append(1) or batches(self, ch, units))

    def top(queries):
        codes = [PROT.encode(q) for q in queries]
        thresholds = [None, 20, None]
        found = scanner.top(codes, 7, thresholds)
        for q, t, (idx, sc) in zip(queries, thresholds, found, strict=True):
            exact = _exact(q, texts, PROT, "local")
            order = np.lexsort((np.arange(exact.size), -exact))[:7]
            keep = order if t is None else order[exact[order] >= t]
            assert idx.tolist() == keep.tolist() and sc.tolist() == exact[keep].tolist()
        return found

    same = [random_seq(rng, PROTEIN, n) for n in (90, 250, 40)]
    top(same)
    first = len(planned)  # one plan of all the units
    assert first == 1
    top([random_seq(rng, PROTEIN, n) for n in (90, 250, 40)])  # the same lengths
    assert len(planned) == first
    top([random_seq(rng, PROTEIN, n) for n in (91, 250, 40)])
    assert len(planned) > first


@pytest.mark.parametrize("mode", MODE_NAMES)
def test_search_with_traceback_and_strands_equals_cpu(mode):
    rng = np.random.default_rng(21)
    queries = [random_seq(rng, DNA, n) for n in (40, 120)]
    texts = _database(rng, DNA + "N", 60, 300, seed_from=queries[1])
    texts.append(random_seq(rng, DNA, 20) + queries[0][::-1].translate(str.maketrans(
        "ACGT", "TGCA")) + random_seq(rng, DNA, 20))  # a minus-strand hit
    gpu = wavedp.search(queries, texts, DNA_SCORING, top=7, evalue=None, mode=mode,
                        device="gpu")
    cpu = wavedp.search(queries, texts, DNA_SCORING, top=7, evalue=None, mode=mode,
                        device="cpu")
    assert gpu == cpu
    assert any(h.strand == "-" for h in gpu[0])


@pytest.mark.parametrize("partition", ["none", "static", "dynamic1", "dynamic2", "auto"])
@pytest.mark.parametrize("mode", MODE_NAMES)
def test_every_partition_gives_the_cpu_scores(monkeypatch, partition, mode):
    """Every partitioning's launches (skewed lengths: a few long subjects among short
    ones; small budgets so memory cuts launches too) give the CPU's scores, and each launch
    is logged with its prediction."""
    from wavedp.engines.cuda.scan import scanner as gpu_scan
    from wavedp.engines.cuda.scan import shapes

    for module in (gpu_scan, shapes):
        monkeypatch.setattr(module, "OUT_BYTES", 40_000)
        monkeypatch.setattr(module, "SCRATCH_BYTES", 1 << 20)
    rng = np.random.default_rng(43)
    queries = [random_seq(rng, PROTEIN, int(n)) for n in
               (5, 40, 41, 90, 128, 130, 300, 310, 700, 1500, 0, 77, 77, 3)]
    texts = _database(rng, PROTEIN, 300, 400, seed_from=queries[6])
    texts += [random_seq(rng, PROTEIN, n) for n in (3000, 5000)]
    # no statistics: a fit's sample would hold this small database whole, and its scores
    # stand for the scan's (no launch of the partitioning)
    trace = Trace()
    gpu = wavedp.search(queries, texts, PROT, top=0, evalue=None, mode=mode,
                        traceback=False, device="gpu", partition=partition, trace=trace,
                        stats="none")
    cpu = wavedp.search(queries, texts, PROT, top=0, evalue=None, mode=mode,
                        traceback=False, device="cpu", stats="none")
    assert gpu == cpu
    assert len(trace.launches) > 1 and all(r[3] > 0 and r[4] > 0 for r in trace.launches)
    names = {r[0] for r in trace.launches}
    assert names == {partition} if partition != "auto" else names <= set(CANDIDATES)


def test_fraction_hits_equal_cpu():
    """search(fraction=...) on the GPU: the same expanded, ranked alignments as the CPU."""
    from test_hits import _repeats

    rng = np.random.default_rng(23)
    queries, texts = [], []
    for k in range(4):
        q, t = _repeats(rng, PROTEIN, 120 + 60 * k)
        queries.append(q)
        texts += [t, related(rng, q, PROTEIN, 0.3), random_seq(rng, PROTEIN, 200)]
    for fraction in (0.2, 0.6):
        gpu = wavedp.search(queries, texts, PROT, top=5, evalue=None, fraction=fraction,
                            device="gpu")
        cpu = wavedp.search(queries, texts, PROT, top=5, evalue=None, fraction=fraction,
                            device="cpu")
        assert gpu == cpu
        assert sum(len(h) for h in gpu) > 20


def test_a_launch_on_fewer_blocks_than_its_own_grid_gives_the_same_words():
    """A launch's grid (``launch_grid``: one block per SM where that is predicted
    faster than its own grid) changes no score: a multi-pass launch on its own grid, on
    fewer blocks than tickets, and on one block, gives the same words; a plan's launches
    carry the grid the predictor chose."""
    import cupy

    from wavedp.db.database import Database
    from wavedp.dbsearch import predict
    from wavedp.engines.cuda.scan import scanner as gpu_scan
    from wavedp.engines.cuda.scan import shapes

    rng = np.random.default_rng(17)
    texts = [random_seq(rng, PROTEIN, int(n)) for n in rng.integers(200, 1500, 700)]
    db = Database.from_sequences(texts, alphabet="protein")
    scanner = gpu_scan.Scanner(db.residues, db.offsets, db.codes_for(PROT), PROT.table,
                                 PROT.gap_open, PROT.gap_extend, MODES["local"])
    ch = next(scanner.chunks())
    units = [[PROT.encode(random_seq(rng, PROTEIN, 600)), PROT.encode(random_seq(rng, PROTEIN,
                                                                               590))]]
    subjects = np.argsort(-ch.lengths).astype(np.int32)
    longest = int(ch.lengths.max())
    words = [cupy.asnumpy(scanner._scan(ch, units, True, subjects, (4, 32, 5), None, longest,
                                        blocks)) for blocks in (None, 7, 1)]
    assert (words[0] == words[1]).all() and (words[0] == words[2]).all()
    _, _, _, launches = scanner.launches(ch, units)
    for launch in launches:
        assert launch.blocks == launch_grid(
            predict.model_for("gpu"), shapes.unit_rows(units), ch.lengths[launch.subjects],
            True, launch.shape, wide=True)


@pytest.mark.parametrize("stats", ["none", "blast", "fitted"])
def test_a_traceback_search_preloads_the_host_walk_once_its_scan_is_planned(stats,
                                                                            monkeypatch):
    """A GPU search with traceback starts loading the host's traceback walk (Numba) once,
    when its scan is planned, before its hits are aligned (a fitted search shorter than
    EARLY_CELLS before its scan); a score-only search does not."""
    from wavedp import engines
    from wavedp.engines.cuda.scan.scanner import Scanner

    events = []
    real_launches, real_preload = Scanner.launches, engines.preload_walk
    monkeypatch.setattr(Scanner, "launches", lambda *a: events.append("plan") or
                        real_launches(*a))
    monkeypatch.setattr(engines, "preload_walk", lambda: events.append("preload") or
                        real_preload())
    rng = np.random.default_rng(5)
    queries = [random_seq(rng, PROTEIN, 120), random_seq(rng, PROTEIN, 40)]
    texts = _database(rng, PROTEIN, 300, 400, seed_from=queries[0])
    want = wavedp.search(queries, texts, PROT, device="cpu", stats=stats)
    assert wavedp.search(queries, texts, PROT, device="gpu", stats=stats) == want
    assert events.count("preload") == 1
    assert (events.index("preload") < events.index("plan")) == (stats == "fitted")
    events.clear()
    wavedp.search(queries, texts, PROT, device="gpu", traceback=False, stats=stats)
    assert "preload" not in events


@pytest.mark.parametrize("early", [True, False])
def test_a_short_fitted_gpu_search_loads_its_fit_kernels_before_its_scan(early, monkeypatch):
    """A fitted GPU search shorter than EARLY_CELLS starts loading its fits' kernels before
    its scan is planned (a short scan cannot hide their load); a longer one when the scan
    is planned. The hits are the same."""
    from wavedp.dbsearch import fitted
    from wavedp.engines.cuda.scan.scanner import Scanner

    events = []
    real_launches, real_load = Scanner.launches, fitted._load_fit
    monkeypatch.setattr(Scanner, "launches", lambda *a: events.append("plan") or
                        real_launches(*a))
    monkeypatch.setattr(fitted, "_load_fit", lambda m: events.append("load") or real_load(m))
    if not early:
        monkeypatch.setattr(fitted, "EARLY_CELLS", 0)
    rng = np.random.default_rng(6)
    queries = [random_seq(rng, PROTEIN, 150)]
    texts = _database(rng, PROTEIN, 400, 400, seed_from=queries[0])
    want = wavedp.search(queries, texts, PROT, device="cpu")
    assert wavedp.search(queries, texts, PROT, device="gpu") == want
    if early:
        assert events.count("load") == 1 and events.index("load") < events.index("plan")
    else:
        assert "load" not in events
