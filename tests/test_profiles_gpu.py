"""The GPU database scan and pairwise alignment with a profile's table (rows: the query's
positions, as many as its length) score exactly as the CPU's (``pytest -m gpu``)."""

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
    for m, top in ((1, 5), (37, 30), (300, 3000), (2500, 12), (10_000, 40)):
        profile = Profile("".join(rng.choice(list(LETTERS), m)),
                          rng.integers(-top, top + 1, (m, 20)))
        table = profile.table(BLOSUM62)
        want = scores_many([profile.codes()], residues, offsets, table, 11, 1, MODES[mode],
                           32)[0]
        scanner = Scanner(residues, offsets, None, table, 11, 1, MODES[mode])
        got = scanner.matrix([profile.codes()])
        np.testing.assert_array_equal(np.asarray(got).reshape(-1), want, err_msg=f"{m}")


def test_gpu_profile_search_equals_cpu():
    """Profiles searched on the GPU (the scan and the hits' alignments there) give the CPU
    search's hits and E-values."""
    rng = np.random.default_rng(23)
    queries = ["".join(rng.choice(list(LETTERS), m)) for m in (80, 400)]
    letters = np.array(list(LETTERS))
    texts = ["".join(rng.choice(letters, int(rng.integers(5, 500)))) for _ in range(600)]
    for k in range(0, 600, 9):  # relatives of the second query
        s = np.array(list(queries[1]))
        s[rng.random(s.size) < 0.3] = "A"
        texts[k] = "".join(s)
    profiles = [Profile(q, rng.integers(-6, 9, (len(q), 20)), id=f"p{k}")
                for k, q in enumerate(queries)]
    cpu = wavedp.search(profiles, texts, BLOSUM62, device="cpu", top=20)
    gpu = wavedp.search(profiles, texts, BLOSUM62, device="gpu", top=20)
    assert [[(h.target_id, h.score, h.cigar, h.evalue) for h in hits] for hits in gpu] == \
        [[(h.target_id, h.score, h.cigar, h.evalue) for h in hits] for hits in cpu]


@pytest.mark.parametrize("mode", list(MODES))
def test_gpu_profile_pairs_equal_the_cpu(mode, monkeypatch):
    """Profiles' pairs on the GPU (the batch engine; the pairs it does not take on the
    multipass engine) equal the CPU engine's: scores, coordinates and CIGARs, with and
    without traceback, extreme scores and long ones."""
    from wavedp.engines.cuda import batch

    monkeypatch.setattr(batch, "PROFILE_CELLS", 4200 * 4000)  # the largest: multipass's
    rng = np.random.default_rng(31)
    letters = np.array(list(LETTERS))
    cases = [(1, 5), (37, 30), (300, 3000), (2500, 12), (4200, 6)]
    profiles = [Profile("".join(rng.choice(letters, m)), rng.integers(-top, top + 1, (m, 20)),
                        id=f"p{m}") for m, top in cases]
    targets = ["".join(rng.choice(letters, int(n))) for n in (1, 9, 280, 2600, 4100)]
    for profile in profiles:
        for target in targets:
            for traceback in (True, False):
                cpu, gpu = (wavedp.align(profile, target, BLOSUM62, mode=mode, device=d,
                                         traceback=traceback) for d in ("cpu", "gpu"))
                where = f"{len(profile.query)} x {len(target)}, traceback {traceback}"
                assert (gpu.score, gpu.query_end, gpu.target_end, gpu.cigar) == \
                    (cpu.score, cpu.query_end, cpu.target_end, cpu.cigar), where
                assert (gpu.query_start, gpu.target_start) == \
                    (cpu.query_start, cpu.target_start), where
    assert not batch.takes(4200, 4100, profile=True)  # the largest went to multipass
