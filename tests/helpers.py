"""Shared test helpers: random inputs, rescoring from a CIGAR, the reference oracle, fresh
interpreters importing the wavedp under test, the command line through click's CliRunner."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

import wavedp
from wavedp.alignment import Alignment
from wavedp.engines import reference
from wavedp.engines.common import MODES

#: the folder holding the wavedp under test (the source tree, or where it is installed)
TREE = str(Path(wavedp.__file__).resolve().parents[1])

DNA = "ACGT"
PROTEIN = "ARNDCQEGHILKMFPSTWYV"
MODE_NAMES = ("local", "global", "semiglobal")


def rescore(aln: Alignment, scoring: wavedp.Scoring) -> int:
    """Score an alignment from its CIGAR alone (free end gaps are outside the CIGAR).

    Exact only for gap_open >= gap_extend: with a cheaper open, the recurrence closes and
    reopens a gap at every step, and a CIGAR run cannot show where.
    """
    q = scoring.encode(aln.query)
    t = scoring.encode(aln.target)
    i, j = aln.query_start or 0, aln.target_start or 0
    total = 0
    for length, op in aln.ops():
        if op in "=X":
            for _ in range(length):
                assert (op == "=") == (q[i] == t[j]), (op, i, j)
                total += int(scoring.table[q[i], t[j]])
                i += 1
                j += 1
        else:
            total -= scoring.gap_open + (length - 1) * scoring.gap_extend
            if op == "I":
                i += length
            else:
                j += length
    assert (i, j) == (aln.query_end, aln.target_end)
    return total


def check_traceback_against_score_only(a: str, b: str, scoring: wavedp.Scoring,
                                       device: str) -> None:
    """In every mode the traceback's end cell is the score-only one and its CIGAR rescores
    to its score."""
    for mode in MODE_NAMES:
        aln = wavedp.align(a, b, scoring, mode=mode, device=device)
        so = wavedp.align(a, b, scoring, mode=mode, traceback=False, device=device)
        assert (aln.score, aln.query_end, aln.target_end) == (so.score, so.query_end,
                                                               so.target_end)
        assert rescore(aln, scoring) == aln.score


def oracle(query: str, target: str, scoring: wavedp.Scoring, mode: str,
           traceback: bool) -> tuple:
    """The reference engine's raw result for two texts."""
    return reference.align(scoring.encode(query), scoring.encode(target), scoring.table,
                           scoring.gap_open, scoring.gap_extend, MODES[mode], traceback)


def as_raw(aln: Alignment) -> tuple:
    """An Alignment in the reference engine's raw tuple form."""
    ops = None
    if aln.cigar is not None:
        ops = "".join(op * n for n, op in aln.ops())
    qs = -1 if aln.query_start is None else aln.query_start
    ts = -1 if aln.target_start is None else aln.target_start
    if aln.cigar is None and aln.mode == "global":
        qs = ts = -1
    return (aln.score, qs, aln.query_end, ts, aln.target_end, ops)


def dna_table(match: int, mismatch: int) -> np.ndarray:
    """ACGT + N (code 4): N scores the mismatch value against everything, N included."""
    sub = np.full((5, 5), mismatch, dtype=np.int32)
    sub[np.arange(4), np.arange(4)] = match
    return sub


def random_seq(rng: np.random.Generator, letters: str, n: int) -> str:
    return "".join(rng.choice(list(letters), n)) if n else ""


def related(rng: np.random.Generator, seq: str, letters: str, rate: float = 0.15) -> str:
    """A mutated copy of ``seq``: substitutions, insertions and deletions at ``rate``."""
    out = []
    for ch in seq:
        r = rng.random()
        if r < rate / 3:  # deletion
            continue
        if r < 2 * rate / 3:  # insertion before this residue
            out.append(str(rng.choice(list(letters))))
        out.append(str(rng.choice(list(letters))) if rate * 2 / 3 <= r < rate else ch)
    return "".join(out)


@st.composite
def problems(draw, max_len: int = 30, penalties_any: bool = True):
    """(query, target, scoring, mode) drawn across alphabets, modes and penalties."""
    dna = draw(st.booleans())
    letters = DNA + "N" if dna else PROTEIN
    small = draw(st.booleans())
    alphabet = letters[:2] if small else letters
    query = draw(st.text(alphabet=alphabet, max_size=max_len))
    target = draw(st.text(alphabet=alphabet, max_size=max_len))
    if penalties_any:  # Scoring requires gap_open >= gap_extend (docs/design.md)
        gap_extend = draw(st.integers(0, 6))
        gap_open = draw(st.integers(gap_extend, 12))
    else:
        gap_extend = draw(st.integers(1, 4))
        gap_open = draw(st.integers(gap_extend, 12))
    if dna:
        scoring = wavedp.Scoring(match=draw(st.integers(1, 5)),
                                 mismatch=draw(st.integers(-6, 0)),
                                 gap_open=gap_open, gap_extend=gap_extend)
    else:
        matrix = draw(st.sampled_from(["BLOSUM62", "BLOSUM45", "PAM250"]))
        scoring = wavedp.Scoring(matrix=matrix, gap_open=gap_open, gap_extend=gap_extend)
    mode = draw(st.sampled_from(MODE_NAMES))
    return query, target, scoring, mode


def cpu_scanner(db, lut, scoring, mode):
    """The CPU engine's scanner over a ``Database`` (what a CPU search scans with)."""
    from wavedp.engines.cpu.scan import CpuScanner

    return CpuScanner(db.residues, db.offsets, lut, scoring.table, scoring.gap_open,
                      scoring.gap_extend, mode)


def pair_texts(kind: str, sizes, seed: int = 1) -> tuple[list[str], list[str]]:
    """(queries, targets) of the m x n ``sizes``: ``ties`` repeats of ACGT and CA (many equal
    scores), else a random query (DNA, or protein for ``protein``) and a target related to it
    (20% changed), padded with random letters, cut to n."""
    rng = np.random.default_rng(seed)
    letters = PROTEIN if kind == "protein" else DNA
    queries, targets = [], []
    for m, n in sizes:
        if kind == "ties":
            a = ("ACGT" * m)[:m] if m % 2 else "A" * m
            b = ("ACGT" * n)[1:n + 1] if n % 3 else ("CA" * n)[:n]
        else:
            a = random_seq(rng, letters, m)
            b = (related(rng, a, letters, 0.2) + random_seq(rng, letters, n))[:n]
        queries.append(a)
        targets.append(b)
    return queries, targets


def fresh_env(path: Iterable[str | Path] = (), **extra: str) -> dict[str, str]:
    """The environment of a fresh interpreter that imports the wavedp under test: TREE first
    on PYTHONPATH, then the folders of ``path``, then the caller's; ``extra`` set too."""
    folders = [TREE, *map(str, path), os.environ.get("PYTHONPATH")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, folders)), **extra}


def fresh(args: list, env: dict[str, str] | None = None, path: Iterable[str | Path] = (),
          **kwargs) -> subprocess.CompletedProcess:
    """``python *args`` in a fresh interpreter with :func:`fresh_env` (``env``: extra
    variables, ``path``: extra folders after TREE), the other keywords subprocess.run's."""
    return subprocess.run([sys.executable, *map(str, args)],
                          env=fresh_env(path, **(env or {})), **kwargs)


def db_data(folder: str | Path) -> Path:
    """The data folder a ``.wdb`` folder's header names (where its arrays are)."""
    import json

    header = json.loads((Path(folder) / "header.json").read_text())
    return Path(folder) / header["data"]


def need_sass_tools() -> None:
    """Skip the test unless nvdisasm and CuPy's NVRTC are here (``wavedp.lab.sass``)."""
    import pytest

    from wavedp.lab import sass

    if sass.nvdisasm() is None:
        pytest.skip("needs nvdisasm (nvidia-cuda-nvdisasm)")
    pytest.importorskip("cupy")
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
    except (ImportError, OSError) as exc:
        pytest.skip(f"needs NVRTC: {exc}")


def sass_step(source: str, expression: str):
    """The inner loop of one kernel instance's machine code (see :func:`need_sass_tools`)."""
    from wavedp.lab import sass

    need_sass_tools()
    return sass.inner_loop(sass.disassemble(sass.cubin(source, expression)))


def covered_once(batches: list, n_queries: int, n_subjects: int) -> None:
    """Partition ``batches`` (each queries x subjects) are non-empty, hold each index at
    most once, and cover every (query, subject) pair exactly once."""
    times = np.zeros((n_queries, n_subjects), np.int8)
    for b in batches:
        q, s = np.asarray(b.queries), np.asarray(b.subjects)
        assert q.ndim == s.ndim == 1 and q.size and s.size, b
        assert np.unique(q).size == q.size and np.unique(s).size == s.size, b
        assert min(q.min(), s.min()) >= 0, b
        times[np.ix_(q, s)] += 1
    assert (times == 1).all(), np.argwhere(times != 1)[:3]


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def fasta_text(records: Iterable[tuple[str, str]] | Mapping[str, str]) -> str:
    """FASTA of (id, sequence) pairs (or a mapping id -> sequence), a line each."""
    pairs = records.items() if isinstance(records, Mapping) else records
    return "".join(f">{rid}\n{seq}\n" for rid, seq in pairs)


def write_fasta(path: Path, records: Iterable[tuple[str, str]] | Mapping[str, str]) -> Path:
    return write(path, fasta_text(records))


def invoke(*args, stdin: str | bytes | None = None, **kwargs):
    """``wavedp *args`` through click's CliRunner (``stdin``: standard input, the other
    keywords CliRunner.invoke's); the copy of standard input forgotten first, as each
    invocation is a process of its own."""
    from click.testing import CliRunner

    from wavedp import seqio
    from wavedp.cli import cli

    seqio.stdin_copy.cache_clear()
    return CliRunner().invoke(cli, [str(a) for a in args], input=stdin, **kwargs)


def assert_user_error(result, *needles: str) -> str:
    """Exit status 2, exactly one stderr line ``wavedp: error: ...`` holding ``needles``,
    nothing on stdout, no traceback; that line."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("wavedp: error: "), result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""
    assert result.exception is None or isinstance(result.exception, SystemExit)
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]
