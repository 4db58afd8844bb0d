"""The GPU database scan with a profile's table (rows: the query's positions, as many as its
length) scores exactly as the CPU scan (``pytest -m gpu``)."""

from __future__ import annotations

import numpy as np
import pytest

import wavedp
from wavedp.engines.common import MODES
from wavedp.engines.cpu.intersequence import scores_many
from wavedp.profiles import LETTERS, Profile

pytestmark = pytest.mark.gpu

BLOSUM62 = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


@pytest.mark.parametrize("mode", list(MODES))
def test_gpu_scan_of_profiles_equals_the_cpu_scan(mode):
    from wavedp.engines.cuda.scan.scanner import Scanner

    rng = np.random.default_rng(12)
    subjects = [rng.integers(0, 24, int(rng.integers(1, 700))).astype(np.uint8)
                for _ in range(400)]
    residues = np.concatenate(subjects)
    offsets = np.concatenate([[0], np.cumsum([s.size for s in subjects])]).astype(np.int64)
    for m, top in ((1, 5), (37, 30), (300, 3000), (2500, 12)):
        profile = Profile("".join(rng.choice(list(LETTERS), m)),
                          rng.integers(-top, top + 1, (m, 20)))
        table = profile.table(BLOSUM62)
        want = scores_many([profile.codes()], residues, offsets, table, 11, 1, MODES[mode],
                           32)[0]
        scanner = Scanner(residues, offsets, None, table, 11, 1, MODES[mode])
        got = scanner.matrix([profile.codes()])
        np.testing.assert_array_equal(np.asarray(got).reshape(-1), want, err_msg=f"{m}")
