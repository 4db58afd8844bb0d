"""Linear-space traceback: a long pair aligns in far less memory than a full matrix."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import fresh

TESTS = Path(__file__).resolve().parent
LENGTH = 25_000
#: a full matrix of direction bytes would need m * n bytes, about 625 MB here
LIMIT_MB = 200

CHILD = f"""
import json, resource, sys
import numpy as np
import wavedp
from helpers import rescore

def peak_mb():
    try:  # VmHWM: the peak since the last reset through clear_refs (Linux)
        with open("/proc/self/status") as f:
            return next(int(x.split()[1]) for x in f if x.startswith("VmHWM:")) / 1024
    except OSError:  # ru_maxrss is never reset: includes compilation, a weaker check
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)

def rss_mb():
    try:
        with open("/proc/self/status") as f:
            return next(int(x.split()[1]) for x in f if x.startswith("VmRSS:")) / 1024
    except OSError:  # no /proc (not Linux): measure from the peak so far, a weaker check
        return peak_mb()

rng = np.random.default_rng(20261122)
letters = np.frombuffer(b"ACGT", dtype=np.uint8)
a = letters[rng.integers(0, 4, {LENGTH})]
b = a.copy()
sub = rng.random(b.size) < 0.10
b[sub] = letters[rng.integers(0, 4, int(sub.sum()))]
b = b[rng.random(b.size) >= 0.025]
ins = np.flatnonzero(rng.random(b.size) < 0.025)
b = np.insert(b, ins, letters[rng.integers(0, 4, ins.size)])
a, b = a.tobytes().decode(), b.tobytes().decode()

dna = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
wavedp.align("ACGTTGCAAC" * 5, "ACGTGCAAC" * 5, dna, device="cpu")
base = rss_mb()
try:
    with open("/proc/self/clear_refs", "w") as f:  # reset the peak (Linux)
        f.write("5")
except OSError:
    pass
aln = wavedp.align(a, b, dna, device="cpu")
growth = peak_mb() - base
plain = wavedp.align(a, b, dna, device="cpu", traceback=False)
print(json.dumps({{
    "m": len(a), "n": len(b), "growth_mb": growth, "score": aln.score,
    "rescore": rescore(aln, dna), "score_only": plain.score,
    "span": [aln.query_start, aln.query_end, aln.target_start, aln.target_end],
    "ends_only": [plain.query_end, plain.target_end],
}}))
"""


def test_long_traceback_peak_memory():
    proc = fresh(["-c", CHILD], path=[TESTS], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"{r['m']} x {r['n']}: peak RSS growth {r['growth_mb']:.1f} MB, score {r['score']}")
    assert r["m"] * r["n"] > 6e8
    qs, qe, ts, te = r["span"]
    assert qe - qs > 0.9 * LENGTH and te - ts > 0.9 * LENGTH  # one long alignment
    assert r["rescore"] == r["score"] == r["score_only"]
    assert [qe, te] == r["ends_only"]
    assert r["growth_mb"] < LIMIT_MB
