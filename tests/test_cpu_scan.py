"""The CPU scanner: a tiny scan (TINY_CELLS) aligns each pair with the traceback kernel
instead of compiling the inter-sequence kernel; both give the same candidates, end cells and
scores, in every mode."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import PROTEIN, cpu_scanner, random_seq, related

import wavedp
from wavedp.db.database import Database
from wavedp.engines.common import MODES
from wavedp.engines.cpu import scan


@pytest.mark.parametrize("mode", list(MODES))
def test_a_tiny_scan_equals_the_inter_sequence_kernel(mode, monkeypatch):
    rng = np.random.default_rng(4)
    subjects = [random_seq(rng, PROTEIN, int(rng.integers(0, 90))) for _ in range(25)]
    queries = [related(rng, subjects[3], PROTEIN), random_seq(rng, PROTEIN, 40),
               subjects[7][:30] or "MK"]
    scoring = wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    db = Database.from_sequences(subjects, [f"s{k}" for k in range(len(subjects))],
                                 alphabet="protein")
    lut = db.codes_for(scoring)
    codes = [scoring.encode(q) for q in queries]
    scanner = cpu_scanner(db, lut, scoring, MODES[mode])
    got = {}
    for tiny in (True, False):
        monkeypatch.setattr(scan, "TINY_CELLS", 1 << 40 if tiny else 0)
        assert scanner._tiny(codes) is tiny
        found = [scanner.matrix(codes), scanner.top(codes, 5, [None, 10, 0])]
        if mode == "local":
            found.append(scanner.every_hit(codes, [1, 1, 1]))
        got[tiny] = found
    small, kernel = got[True], got[False]
    np.testing.assert_array_equal(small[0], kernel[0])
    for a, b in zip(small[1:], kernel[1:], strict=True):
        for x, y in zip(a, b, strict=True):
            for u, v in zip(x, y, strict=True):
                np.testing.assert_array_equal(u, v)
