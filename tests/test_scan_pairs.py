"""The scan of a lone query sweeping two subjects per group (kernels/search.cu's PAIRS,
``scan.scanner.PAIRS``): its step's machine code (no GPU needed: NVRTC and nvdisasm), and on
the GPU its scores against the CPU's and the unpaired scan's (``test_search_gpu``'s lone
queries run it too: it is on by default)."""

import numpy as np
import pytest
from helpers import PROTEIN, random_seq
from test_sass import _step
from test_search_gpu import PROT, _exact, _scanned

import wavedp
from wavedp.engines.cuda.scan.shapes import pair_words


@pytest.mark.parametrize("shape", [(4, 24), (8, 16), (16, 32)])
def test_the_paired_step_adds_the_two_rows_on_the_fma_pipe(shape):
    """Per word of a paired step: the unpaired step's operations, and the two subjects'
    profile rows added (one packed add, FMA pipe) from two 16-byte loads per four rows; at
    most 1.3x the unpaired step's ALU instructions for twice its useful cells."""
    g, r = shape
    one = _step(f"scan<0, {g}, {r}, true>")
    two = _step(f"scan<0, {g}, {r}, true, true>")
    steps = one.count("VIMNMX3") // (r // 2)
    assert two.count("VIADDMNMX") == one.count("VIADDMNMX") == 4 * r * steps
    assert two.opcodes["VIADD.16x2"] == 2 * one.opcodes["VIADD.16x2"] == 2 * r * steps
    assert two.count("LDS") - one.count("LDS") == r // 4 * steps
    assert two.alu <= 1.3 * one.alu
    assert not two.count("LDL") and not two.count("STL")


def test_a_pair_profile_pads_rows_to_32_words_with_four_lanes():
    assert pair_words(24, 4, 24) == 2 * 25 * 96 + 16
    assert pair_words(24, 4, 20) == 2 * 25 * 96 + 16  # 80 rows padded to 96 words
    assert pair_words(24, 16, 32) == 2 * 25 * 512


@pytest.fixture
def paired(monkeypatch):
    from wavedp.engines.cuda.scan import scanner

    monkeypatch.setattr(scanner, "PAIRS", True)


@pytest.mark.gpu
def test_paired_saturated_scores_are_rescored(paired):
    w = "W" * 3000
    texts = [w, w[:2900] + "A" * 50, "ACDE" * 10, w[:1000], "W" * 2999]
    got = _scanned(w, texts, PROT, "local")
    assert (got == _exact(w, texts, PROT, "local")).all()
    assert got.max() > 32767


@pytest.mark.gpu
def test_a_lone_query_scores_the_same_paired_or_not(monkeypatch):
    """Every partitioning's launches over skewed lengths (long subjects apart, several
    passes), the whole score row with PAIRS on and off."""
    from wavedp.engines.cuda.scan import scanner

    rng = np.random.default_rng(8)
    lengths = np.clip(rng.lognormal(np.log(300), 0.65, 3001), 1, 6000).astype(int)
    texts = [random_seq(rng, PROTEIN, int(n)) for n in lengths]
    query = random_seq(rng, PROTEIN, 925)
    rows = []
    for flag in (False, True):
        monkeypatch.setattr(scanner, "PAIRS", flag)
        rows.append(_scanned(query, texts, PROT, "local"))
    assert (rows[0] == rows[1]).all()
    found = wavedp.search([query], texts, PROT, top=5, device="gpu", traceback=False)
    assert found == wavedp.search([query], texts, PROT, top=5, device="cpu",
                                  traceback=False)
