"""Are wavedp's E-values calibrated? Its statistics methods against ssearch36 and blastp.

Run from the repository root:  python benchmarks/significance.py [--device cpu]
(with wavedp installed, or ``PYTHONPATH=src``; ``ssearch36`` from Debian's fasta3 and
``blastp``/``makeblastdb`` from ncbi-blast+ on the PATH, ``pytantan`` for the masked rows:
each missing tool's rows are skipped and said so).

**Pfam benchmark.** Real protein families: the Pfam seed alignments of Debian's
hmmer-examples (``--families DIR``, default /usr/share/doc/hmmer/examples: Pkinase, fn3,
globins4, RRM_1, SMC_N, LuxC, Patched, Caudal_act and the five families of minifam; 12
families once Caudal_act's two copies are merged), ungapped, members of at least 30 residues.
Each member gets two decoys: a full shuffle of it (same composition and length; seeded, the
same shuffles as before the reverses were added, so the rows stay comparable) and its
**reverse** (a reversed coiled coil still looks like one: the decoy that scores highest
against its own family). The database is members + shuffles + reverses; ``--queries``
members (seeded) are the queries. A hit is false when it is a decoy or a member of another
family (the query itself is left out). Reported, per method: false hits per query at
E <= 0.01, 0.1, 1 and 10, and ROC1 (per query, the fraction of its family's other members
ranked, by E-value, above its first false hit; averaged). Calibrated E-values give about E
false hits per query at threshold E.

**Random databases.** Random protein sequences (BLOSUM62 background frequencies, lognormal
lengths) and random queries: every hit is false, so false hits per query at E <= 1 and 10
should be near 1 and 10. The empirical fit also runs in global and semiglobal mode (which
have no tables) and on random DNA.

**The rows.** wavedp's exact score of every (query, subject) pair comes from the scanner
(``k=0``); each method's statistics are then applied here: BLAST's tables (today's
E-values); the composition methods of ``wavedp.stats.composition`` (a lambda per pair, and
the reported alignment rescored under the pair's adjusted matrix) on the tables; the
empirical fit of ``wavedp.stats.empirical`` on the raw scores, on the lambda-scaled
effective scores, and the recommended combination (:func:`recommended`: the fit of the
effective scores, each reported hit then scored ``min(S * ratio, S' + 2 bits)``); and with
``--mask``'s tantan masking (``wavedp.stats.masking``: masked residues as X, queries and
database). Study rows: the reverse-sequence null (Karplus, Karchin & Hughey 2005) on the
recommended combination, each pair's score at most ``S - S_rev + u + allowance``
(:func:`reverse_null`; S_rev the reversed query's score, u the fit's score at E = 1), for
allowances of 0, 2 and 4 bits; the rule sees a decoy that is a reverse by construction, so
a second table has look-alikes that are not (:func:`register_shuffle`: each member's heptad
register kept, its order shuffled in windows). A summary checks the recommended method's
targets.
Scoring: BLOSUM62, gap open 11, extend 1 in wavedp's convention (a gap of length k costs
11 + (k-1)); the run checks on a pair that this is ``ssearch36 -f -10 -g -1`` and
``blastp -gapopen 10 -gapextend 1``. About 50 s on 2 cores.
"""

from __future__ import annotations

import argparse
import gzip
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from search import BACKGROUND, LETTERS

import wavedp
from wavedp import engines
from wavedp.api import mode_code
from wavedp.db.database import Database
from wavedp.device import choose
from wavedp.stats import composition, empirical, masking
from wavedp.stats import karlin_altschul as statistics

#: Debian's hmmer-examples: the Pfam seed alignments (Stockholm), found under --families
FAMILY_FILES = ("Pkinase.sto", "fn3.sto", "globins4.sto", "RRM_1.sto.gz", "SMC_N.sto.gz",
                "LuxC.sto.gz", "Patched.sto.gz", "Caudal_act.sto.gz", "minifam.gz")
DEFAULT_FAMILIES = "/usr/share/doc/hmmer/examples"
MIN_LENGTH = 30
THRESHOLDS = (0.01, 0.1, 1.0, 10.0)
#: the study rows' reverse-null allowances, in bits (:func:`reverse_null`)
REVERSE_ALLOWANCES = (0.0, 2.0, 4.0)
GAP_OPEN, GAP_EXTEND = 11, 1
PROTEIN = wavedp.Scoring(matrix="BLOSUM62", gap_open=GAP_OPEN, gap_extend=GAP_EXTEND)
DNA = wavedp.Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)


# ---- data ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Member:
    family: str
    name: str
    text: str


def read_stockholm(path: str) -> list[tuple[str, dict[str, str]]]:
    """(family id, {sequence name: aligned text}) of each alignment in a Stockholm file."""
    opener = gzip.open if path.endswith(".gz") else open
    found, name, rows = [], None, {}
    with opener(path, "rt") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if line.startswith("#=GF ID"):
                name = line.split()[2]
            elif line.startswith("//"):
                stem = os.path.basename(path).split(".")[0]
                found.append((name or stem, rows))
                name, rows = None, {}
            elif line.strip() and not line.startswith("#"):
                key, text = line.split()[:2]
                rows[key] = rows.get(key, "") + text
    return found


def families(folder: str) -> list[Member]:
    """The members (ungapped, >= MIN_LENGTH residues) of the Pfam seeds under ``folder``."""
    paths = {}
    for root, _, files in os.walk(folder):
        for f in files:
            if f in FAMILY_FILES:
                paths.setdefault(f, os.path.join(root, f))
    missing = [f for f in FAMILY_FILES if f not in paths]
    if missing:
        sys.exit(f"significance.py: {', '.join(missing)} not found under {folder} "
                 "(apt-get install hmmer-examples, or --families DIR)")
    members, seen = [], set()
    for f in FAMILY_FILES:
        for family, rows in read_stockholm(paths[f]):
            for name, aligned in rows.items():
                text = re.sub(r"[^A-Za-z]", "", aligned).upper()
                if len(text) >= MIN_LENGTH and (family, name) not in seen:
                    seen.add((family, name))
                    members.append(Member(family, name, text))
    return members


def random_proteins(rng: np.random.Generator, count: int, median: float) -> list[str]:
    """Random proteins: BLOSUM62 background frequencies, lognormal lengths (sigma 0.5)."""
    lengths = np.clip(rng.lognormal(math.log(median), 0.5, count), 30, 3000).astype(int)
    p = np.array(BACKGROUND) / sum(BACKGROUND)
    letters = np.array(list(LETTERS))
    return ["".join(letters[rng.choice(20, n, p=p)]) for n in lengths]


def random_dna(rng: np.random.Generator, count: int, median: float) -> list[str]:
    lengths = np.clip(rng.lognormal(math.log(median), 0.5, count), 50, 10000).astype(int)
    return ["".join(np.array(list("ACGT"))[rng.integers(0, 4, n)]) for n in lengths]


def write_fasta(path: str, ids: list[str], texts: list[str]) -> None:
    with open(path, "w") as fh:
        for i, t in zip(ids, texts, strict=True):
            fh.write(f">{i}\n{t}\n")


# ---- wavedp scores and statistics ------------------------------------------------------------

def all_scores(device: str, queries: list[str], db: Database, scoring: wavedp.Scoring,
               mode: str = "local") -> np.ndarray:
    """Every (query, subject) exact score, a (queries x subjects) int array (scanner, k=0)."""
    scan = engines.scanner(choose(device), db.residues, db.offsets, db.codes_for(scoring),
                           scoring.table, scoring.gap_open, scoring.gap_extend, mode_code(mode))
    found = scan.top([scoring.encode(q) for q in queries], 0, [None] * len(queries))
    out = np.zeros((len(queries), len(db)), dtype=np.int64)
    for row, (index, score) in zip(out, found, strict=True):
        row[index] = score
    return out


@dataclass
class Search:
    """One search's inputs as the statistics see them: scores (queries x subjects), the
    queries' and subjects' encoded residues."""

    scores: np.ndarray
    queries: list[str]
    subjects: list[str]
    query_codes: list[np.ndarray]
    subject_counts: np.ndarray
    subject_lengths: np.ndarray
    residues: int


def prepare(device: str, queries: list[str], texts: list[str], scoring: wavedp.Scoring,
            mode: str = "local") -> Search:
    """Scores, compositions and lengths of ``queries`` against the database ``texts``."""
    db = Database.from_sequences(texts, alphabet="dna" if scoring.is_dna else "protein")
    scores = all_scores(device, queries, db, scoring, mode)
    size = len(scoring.alphabet)
    counts = composition.counts(db.residues, db.offsets, size, db.codes_for(scoring))
    return Search(scores, queries, texts, [scoring.encode(q) for q in queries], counts,
                  np.asarray(db.lengths, dtype=np.int64), db.total_residues)


def tables(search: Search, scoring: wavedp.Scoring) -> np.ndarray:
    """Today's E-values: BLAST's gapped lambda and K, K m n exp(-lambda S), n = residues."""
    ka = statistics.parameters(scoring)
    m = np.array([c.size for c in search.query_codes], dtype=np.float64)[:, None]
    return ka.K * m * search.residues * np.exp(-ka.lambda_ * search.scores)


def with_composition(search: Search, scoring: wavedp.Scoring, **options: float) -> np.ndarray:
    """Schaffer et al.'s per-pair lambda on the table's E-value."""
    comp = composition.Composition.of(scoring, **options)
    ka = statistics.parameters(scoring)
    return np.stack([composition.evalues(s, q, search.subject_counts, comp, ka,
                                         search.residues)
                     for s, q in zip(search.scores, search.query_codes, strict=True)])


def ratios(search: Search, scoring: wavedp.Scoring, **options: float) -> np.ndarray:
    comp = composition.Composition.of(scoring, **options)
    freqs = comp.frequencies(search.subject_counts)
    return np.stack([comp.ratios_of(comp.frequencies(composition.query_counts(q, comp.size)),
                                    freqs) for q in search.query_codes])


def fitted(search: Search, mode: str = "local", ratio: np.ndarray | None = None,
           **options: object) -> tuple[np.ndarray, list[str]]:
    """Empirical E-values per query (NaN where no fit, with the reason), on the raw scores
    or, with ``ratio``, on the composition-adjusted effective scores S * ratio."""
    out = np.full(search.scores.shape, np.nan)
    reasons = []
    for k, (s, q) in enumerate(zip(search.scores, search.query_codes, strict=True)):
        eff = s if ratio is None else composition.effective_scores(s, ratio[k])
        spacing = 1.0 if ratio is None else ratio[k]
        fit, why = empirical.fit_or_reason(eff, search.subject_lengths, mode,
                                           query_length=q.size, **options)
        if fit is None:
            reasons.append(why)
            continue
        out[k] = fit.evalue(eff, search.subject_lengths, spacing)
    return out, reasons


def adjusted(search: Search, scoring: wavedp.Scoring, k: int, subjects: np.ndarray,
             comp: composition.Composition, subject_freqs: np.ndarray) -> np.ndarray:
    """Query k's alignments with ``subjects`` rescored under each pair's compositionally
    adjusted matrix (the alignment is wavedp.align's: the search's reported hit)."""
    counts = []
    for j in subjects.tolist():
        aln = wavedp.align(search.queries[k], search.subjects[j], scoring)
        counts.append(composition.pair_counts(
            search.query_codes[k], scoring.encode(search.subjects[j]), aln.cigar,
            aln.query_start, aln.target_start, comp.size))
    query_freq = comp.frequencies(composition.query_counts(search.query_codes[k], comp.size))
    return comp.adjusted_scores(search.scores[k, subjects], np.array(counts), query_freq,
                                subject_freqs[subjects])


def recommended(search: Search, scoring: wavedp.Scoring, use_fit: bool = True,
                cutoff: float = 10.0) -> np.ndarray:
    """The recommended statistics, as a search would run them: every subject's effective
    score ``S * lambda_pair / lambda_background``; the query's empirical fit of those (or,
    with ``use_fit`` False, BLAST's tables); then each hit with E <= ``cutoff`` (the
    reported ones, which the search aligns) gets ``min(S * ratio, S' + 2 bits)``, S' its
    alignment rescored under the pair's compositionally adjusted matrix
    (``Composition.combined``)."""
    return recommended_parts(search, scoring, use_fit, cutoff).evalues


def reversed_scores(device: str, search: Search, scoring: wavedp.Scoring) -> np.ndarray:
    """Every (reversed query, subject) exact score (local: S(rev Q, T) = S(Q, rev T)), by
    the same scan as the forward scores (:func:`all_scores`)."""
    db = Database.from_sequences(search.subjects, alphabet="protein")
    return all_scores(device, [q[::-1] for q in search.queries], db, scoring)


@dataclass
class Parts:
    """:func:`recommended`'s workings: its E-values, the effective score each used, and
    per query the fit (None: the tables) and the lambda ratios (the score lattice)."""

    evalues: np.ndarray
    effective: np.ndarray
    fits: list[empirical.Fit | None]
    ratios: np.ndarray


def recommended_parts(search: Search, scoring: wavedp.Scoring, use_fit: bool = True,
                      cutoff: float = 10.0) -> Parts:
    """:func:`recommended`, with its workings (:class:`Parts`)."""
    comp = composition.Composition.of(scoring)
    subject_freqs = comp.frequencies(search.subject_counts)
    ka = statistics.parameters(scoring)
    out = np.full(search.scores.shape, np.nan)
    used = np.zeros(search.scores.shape)
    every = np.zeros(search.scores.shape)
    fits: list[empirical.Fit | None] = []
    for k, codes in enumerate(search.query_codes):
        query_freq = comp.frequencies(composition.query_counts(codes, comp.size))
        ratio = comp.ratios_of(query_freq, subject_freqs)
        every[k] = ratio
        eff = composition.effective_scores(search.scores[k], ratio)
        fit = empirical.fit(eff, search.subject_lengths, "local",
                            query_length=codes.size) if use_fit else None
        fits.append(fit)

        def evalue(s: np.ndarray, sel: np.ndarray | slice, fit=fit, ratio=ratio,
                   m=codes.size) -> np.ndarray:
            if fit is None:
                return ka.K * m * search.residues * np.exp(-ka.lambda_ * s)
            return fit.evalue(s, search.subject_lengths[sel], ratio[sel])

        used[k] = eff
        out[k] = evalue(eff, slice(None))
        hits = np.flatnonzero(out[k] <= cutoff)
        if hits.size:
            rescored = adjusted(search, scoring, k, hits, comp, subject_freqs)
            used[k, hits] = comp.combined(eff[hits], rescored)
            out[k, hits] = evalue(used[k, hits], hits)
    return Parts(out, used, fits, every)


#: the register-preserving shuffle's window (:func:`register_shuffle`)
PERIODIC_WINDOW = 70


def register_shuffle(text: str, rng: np.random.Generator, window: int = PERIODIC_WINDOW,
                     period: int = 7) -> str:
    """``text`` with, in each window, the residues of one index mod ``period`` permuted
    among themselves: a heptad's register and its local composition kept, the order lost
    (a coiled-coil look-alike that is not a reverse: the reverse null cannot see it)."""
    s = np.array(list(text))
    for start in range(0, len(s), window):
        for r in range(period):
            idx = np.arange(start + r, min(start + window, len(s)), period)
            s[idx] = s[rng.permutation(idx)]
    return "".join(s)


def periodic_rows(args: argparse.Namespace, members: list[Member], picks: np.ndarray,
                  queries: list[str]) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The recommended method and the reverse null (2 bits) on members + their register
    shuffles (own seed: the other sections' draws unchanged): (label, E-values, scores)."""
    rng = np.random.default_rng(args.seed + 1)
    texts = [m.text for m in members] + [register_shuffle(m.text, rng) for m in members]
    search = prepare(args.device, queries, texts, PROTEIN)
    parts = recommended_parts(search, PROTEIN)
    rev = reversed_scores(args.device, search, PROTEIN)
    key = search.scores.astype(np.float64)
    return [("**empirical + composition (recommended)**", parts.evalues, key),
            ("recommended + reverse null, 2 bits (the default)",
             reverse_null(search, rev, parts, PROTEIN, 2.0), key)]


def reverse_null(search: Search, reversed_scores: np.ndarray, parts: Parts,
                 scoring: wavedp.Scoring, allowance_bits: float = 2.0) -> np.ndarray:
    """Study: the reverse-sequence null (Karplus, Karchin & Hughey 2005, Bioinformatics
    21:4107) on :func:`recommended`. Each pair's effective score eff becomes
    ``min(eff, S - S_rev + u + allowance)``: S its raw score, S_rev the reversed query's
    raw score against the same subject (local Smith-Waterman with affine gaps:
    S(rev Q, T) = S(Q, rev T)), u the fit's score at E = 1 for the subject's length
    (``Fit.threshold(1.0, n, ratio)``: exactly E = 1 through the same ``Fit.evalue``), and
    the allowance ``allowance_bits`` in score units (``bits * ln 2 / lambda_background``,
    as ``Composition.allowance``). E-values from the new score through the same fit; a
    query without a fit keeps its E-values."""
    allowance = allowance_bits * math.log(2.0) / \
        composition.Composition.of(scoring).lambda_background
    out = parts.evalues.copy()
    n = search.subject_lengths
    for k, fit in enumerate(parts.fits):
        if fit is None:
            continue
        ratio = parts.ratios[k]
        u = fit.threshold(1.0, n) + 0.5 * (ratio - 1.0)  # on the ratio's lattice, as evalue
        floor = (search.scores[k] - reversed_scores[k]).astype(np.float64) + u + allowance
        out[k] = fit.evalue(np.minimum(parts.effective[k], floor), n, ratio)
    return out


def searched(device: str, queries: list[str], texts: list[str], scoring: wavedp.Scoring,
             stats: str, mode: str = "local", mask: bool = False
             ) -> tuple[np.ndarray, np.ndarray]:
    """(E-values, rank keys) per (query, subject) from ``wavedp.search`` itself under
    ``stats``: every hit (top 0, E <= 10), as the command reports them; inf where none."""
    hits = wavedp.search(queries, texts, scoring, top=0, evalue=10.0, mode=mode,
                         device=device, stats=stats, mask=mask)
    e = np.full((len(queries), len(texts)), np.inf)
    key = np.full(e.shape, -np.inf)
    for k, found in enumerate(hits):
        for rank, h in enumerate(found):
            j = int(h.target_id.removeprefix("target")) - 1
            if h.evalue is not None and h.evalue < e[k, j]:
                e[k, j], key[k, j] = h.evalue, -rank  # the search's own order breaks ties
    return e, key


# ---- external tools ------------------------------------------------------------------------

def ssearch(query_fa: str, db_fa: str, threads: int, dna: bool = False) -> list[dict]:
    """ssearch36 with its default statistics (regression on ln length), wavedp's costs."""
    kind = ["-n", "-r", "+2/-3", "-f", "-3", "-g", "-2"] if dna else \
        ["-p", "-s", "BL62", "-f", f"-{GAP_OPEN - GAP_EXTEND}", "-g", f"-{GAP_EXTEND}"]
    cmd = ["ssearch36", "-q", *kind, "-m", "8", "-E", "10", "-b", "100000", "-d", "0",
           "-T", str(threads), query_fa, db_fa]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return _tabular(out)


def blastp(query_fa: str, db_fa: str, folder: str, cbs: int, threads: int) -> list[dict]:
    """blastp (BLAST's -gapopen 10 -gapextend 1 = wavedp's 11/1), comp_based_stats cbs."""
    db = os.path.join(folder, "blastdb")
    if not os.path.exists(db + ".pin"):
        subprocess.run(["makeblastdb", "-in", db_fa, "-dbtype", "prot", "-out", db],
                       capture_output=True, check=True)
    cmd = ["blastp", "-query", query_fa, "-db", db, "-matrix", "BLOSUM62",
           "-gapopen", str(GAP_OPEN - GAP_EXTEND), "-gapextend", str(GAP_EXTEND),
           "-comp_based_stats", str(cbs), "-seg", "no", "-evalue", "10",
           "-max_target_seqs", "100000", "-num_threads", str(threads),
           "-outfmt", "6 qseqid sseqid evalue bitscore score"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        q, s, e, b, sc = line.split("\t")
        rows.append({"query": q, "subject": s, "evalue": float(e), "key": float(b)})
    return rows


def _tabular(text: str) -> list[dict]:
    rows = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        f = line.split("\t")
        rows.append({"query": f[0], "subject": f[1], "evalue": float(f[10]),
                     "key": float(f[11])})
    return rows


def external_matrix(rows: list[dict], query_ids: list[str], subject_ids: list[str]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(E-values, rank keys) per (query, subject): the best HSP of each pair; inf where the
    tool reported nothing (E > 10 or not found)."""
    qi = {q: k for k, q in enumerate(query_ids)}
    si = {s: k for k, s in enumerate(subject_ids)}
    e = np.full((len(query_ids), len(subject_ids)), np.inf)
    key = np.full(e.shape, -np.inf)
    for r in rows:
        a, b = qi[r["query"]], si[r["subject"]]
        if r["evalue"] < e[a, b] or (r["evalue"] == e[a, b] and r["key"] > key[a, b]):
            e[a, b], key[a, b] = r["evalue"], r["key"]
    return e, key


def gap_check(folder: str, threads: int) -> list[str]:
    """Each tool's score of a pair with one 3-residue gap, against wavedp's 11/1 score."""
    q, t = "W" * 10 + "CCC" + "W" * 10, "W" * 20
    want = wavedp.align(q, t, PROTEIN).score
    qa, ta = os.path.join(folder, "gap_q.fa"), os.path.join(folder, "gap_t.fa")
    write_fasta(qa, ["q"], [q])
    write_fasta(ta, ["t"], [t])
    lines = [f"wavedp 11/1 (a gap of k costs 11 + (k-1)): {want}"]
    if shutil.which("ssearch36"):
        cmd = ["ssearch36", "-q", "-p", "-s", "BL62", "-f", f"-{GAP_OPEN - GAP_EXTEND}", "-g",
               f"-{GAP_EXTEND}", "-m", "9", qa, ta]
        text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        got = re.search(r"^t\s+\(\s*\d+\)\s+(\d+)", text, re.M)
        lines.append(f"ssearch36 -f -{GAP_OPEN - GAP_EXTEND} -g -{GAP_EXTEND}: "
                     f"{got.group(1) if got else '?'}")
    if shutil.which("blastp"):
        cmd = ["blastp", "-query", qa, "-subject", ta, "-gapopen", str(GAP_OPEN - GAP_EXTEND),
               "-gapextend", str(GAP_EXTEND), "-comp_based_stats", "0", "-seg", "no",
               "-outfmt", "6 score", "-evalue", "1000"]
        text = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        lines.append(f"blastp -gapopen {GAP_OPEN - GAP_EXTEND} -gapextend {GAP_EXTEND}: "
                     f"{text.split()[0] if text.split() else '?'}")
    return lines


# ---- metrics -------------------------------------------------------------------------------

def metrics(e: np.ndarray, key: np.ndarray, positive: np.ndarray, negative: np.ndarray
            ) -> tuple[list[float], float]:
    """(false hits per query at each threshold, mean ROC1) over hits with E <= 10; ties in E
    are ranked by ``key`` (higher first). ``positive``/``negative``: (queries x subjects)."""
    e = np.where(np.isnan(e), np.inf, e)
    false = [float(np.mean(np.sum((e <= t) & negative, axis=1))) for t in THRESHOLDS]
    roc = []
    for k in range(e.shape[0]):
        hit = np.flatnonzero(e[k] <= 10.0)
        order = hit[np.lexsort((-key[k, hit], e[k, hit]))]
        neg = np.flatnonzero(negative[k, order])
        before = order[:neg[0]] if neg.size else order
        total = int(positive[k].sum())
        roc.append(float(positive[k, before].sum()) / total if total else 1.0)
    return false, float(np.mean(roc))


def calibration(e: np.ndarray) -> list[float]:
    """False hits per query at each threshold when every hit is false."""
    e = np.where(np.isnan(e), np.inf, e)
    return [float(np.mean(np.sum(e <= t, axis=1))) for t in THRESHOLDS]


# ---- the run -------------------------------------------------------------------------------

def timed(fn: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=DEFAULT_FAMILIES, metavar="DIR",
                        help="where the Pfam seed alignments are (hmmer-examples)")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--random-subjects", type=int, default=2000)
    parser.add_argument("--random-queries", type=int, default=40)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    start = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    have_ssearch = shutil.which("ssearch36") is not None
    have_blast = shutil.which("blastp") is not None and shutil.which("makeblastdb") is not None
    have_tantan = masking.available()
    skipped = [why for ok, why in ((have_ssearch, "ssearch36 (fasta3)"),
                                   (have_blast, "blastp/makeblastdb (ncbi-blast+)"),
                                   (have_tantan, "pytantan (masked rows)")) if not ok]

    members = families(args.families)
    names = sorted({m.family for m in members})
    decoys = [Member(m.family, m.name, "".join(rng.permutation(list(m.text))))
              for m in members]  # the shuffles: drawn first, as before the reverses
    reverses = [Member(m.family, m.name, m.text[::-1]) for m in members]  # no draws
    texts = [m.text for m in members] + [d.text for d in decoys + reverses]
    ids = [f"m{k}" for k in range(len(members))] + [f"d{k}" for k in range(len(decoys))] \
        + [f"r{k}" for k in range(len(reverses))]
    picks = np.sort(rng.choice(len(members), args.queries, replace=False))
    queries = [members[k].text for k in picks]
    query_ids = [f"q{k}" for k in picks]
    family = np.array([m.family for m in members] * 3)
    is_member = np.arange(len(texts)) < len(members)
    qfam = np.array([members[k].family for k in picks])
    self_hit = np.zeros((len(picks), len(texts)), dtype=bool)
    self_hit[np.arange(len(picks)), picks] = True
    positive = is_member[None, :] & (family[None, :] == qfam[:, None]) & ~self_hit
    negative = ~is_member[None, :] | (family[None, :] != qfam[:, None])

    print(f"# Significance: {len(names)} Pfam families, {len(members)} members "
          f">= {MIN_LENGTH} residues + {len(decoys)} shuffled and {len(reverses)} reversed "
          f"decoys; {len(queries)} queries "
          f"(seed {args.seed}); BLOSUM62, gap open {GAP_OPEN}, extend {GAP_EXTEND} "
          f"(wavedp's convention); device {args.device}\n")
    if skipped:
        print(f"skipped (not installed): {', '.join(skipped)}\n")

    rows: list[tuple[str, list[float], float | None, str]] = []
    costs: list[str] = []
    with tempfile.TemporaryDirectory(prefix="wavedp-significance-") as tmp:
        qfa, dbfa = os.path.join(tmp, "queries.fa"), os.path.join(tmp, "db.fa")
        write_fasta(qfa, query_ids, queries)
        write_fasta(dbfa, ids, texts)
        print("gap convention check (one pair, a 3-residue gap):")
        for line in gap_check(tmp, args.threads):
            print(f"  {line}")
        print()

        search, t_scan = timed(lambda: prepare(args.device, queries, texts, PROTEIN))
        score_key = search.scores.astype(np.float64)
        r_clip, t_ratio = timed(lambda: ratios(search, PROTEIN))
        r_free = ratios(search, PROTEIN, high=2.0)
        pairs = search.scores.size
        costs.append(f"lambda ratios: {t_ratio / pairs * 1e6:.2f} us per (query, subject) "
                     f"pair ({pairs} pairs)")
        methods: list[tuple[str, Callable[[], np.ndarray]]] = [
            ("wavedp, BLAST tables (today)", lambda: tables(search, PROTEIN)),
            ("composition: lambda ratio [0.5, 1], tables",
             lambda: with_composition(search, PROTEIN)),
            ("composition: lambda ratio + adjusted matrix, tables",
             lambda: recommended(search, PROTEIN, use_fit=False)),
            ("empirical", lambda: fitted(search)[0]),
            ("empirical + lambda ratio [0.5, 1]", lambda: fitted(search, ratio=r_clip)[0]),
            ("empirical + lambda ratio [0.5, 2]", lambda: fitted(search, ratio=r_free)[0]),
            ("**empirical + composition (recommended)**",
             lambda: kept.setdefault("parts", recommended_parts(search, PROTEIN)).evalues),
        ]
        kept: dict[str, Parts] = {}
        for label, fn in methods:
            e, t = timed(fn)
            if label == "empirical":
                costs.append(f"empirical fit: {t / len(queries) * 1e3:.1f} ms per query "
                             f"({len(texts)} subjects)")
            if label.startswith("**"):
                hits = int(np.sum(e <= 10.0))
                costs.append(f"recommended, all of it: {t / len(queries) * 1e3:.1f} ms per "
                             f"query, of which {hits} hits aligned and rescored")
            false, roc = metrics(e, score_key, positive, negative)
            rows.append((label, false, roc, ""))
        rev, t_rev = timed(lambda: reversed_scores(args.device, search, PROTEIN))
        costs.append(f"reverse null: the reversed queries' scan, {t_rev:.1f} s "
                     f"({len(queries)} x {len(texts)})")
        kinds = {"reversed": ~is_member & (np.arange(len(texts)) >= 2 * len(members)),
                 "shuffled": ~is_member & (np.arange(len(texts)) < 2 * len(members)),
                 "other families": is_member}
        split = [("recommended", kept["parts"].evalues)]
        for bits in REVERSE_ALLOWANCES:
            e = reverse_null(search, rev, kept["parts"], PROTEIN, bits)
            false, roc = metrics(e, score_key, positive, negative)
            rows.append((f"study: recommended + reverse null, {bits:g} bits", false, roc, ""))
            split.append((f"reverse null {bits:g} bits", e))

        for stats in ("fitted", "empirical", "composition", "blast"):
            (e, key), t = timed(lambda st=stats: searched(args.device, queries, texts,
                                                        PROTEIN, st))
            false, roc = metrics(e, key, positive, negative)
            label = f"wavedp search --stats {stats}" + (" (default)" if stats == "fitted"
                                                        else "")
            rows.append((label, false, roc, f"{t:.1f} s"))
        if have_tantan:
            (e, key), t = timed(lambda: searched(args.device, queries, texts, PROTEIN,
                                                 "fitted", mask=True))
            false, roc = metrics(e, key, positive, negative)
            rows.append(("wavedp search --mask (queries masked)", false, roc, f"{t:.1f} s"))

        if have_tantan:
            (mq, md), t_mask = timed(lambda: (masking.soft_mask(queries),
                                              masking.soft_mask(texts)))
            costs.append(f"tantan masking: {t_mask / sum(map(len, queries + texts)) * 1e9:.0f}"
                         f" ns per residue ({masking.fraction(md):.1%} of the database "
                         "masked)")
            as_x = [re.sub(r"[a-z]", "X", t) for t in mq]
            db_x = [re.sub(r"[a-z]", "X", t) for t in md]
            msearch = prepare(args.device, as_x, db_x, PROTEIN)
            for label, fn in (
                    ("--mask, BLAST tables", lambda: tables(msearch, PROTEIN)),
                    ("--mask, empirical", lambda: fitted(msearch)[0]),
                    ("--mask, empirical + composition (recommended)",
                     lambda: recommended(msearch, PROTEIN))):
                false, roc = metrics(fn(), msearch.scores.astype(np.float64), positive,
                                     negative)
                rows.append((label, false, roc, ""))

        if have_ssearch:
            out, t = timed(lambda: ssearch(qfa, dbfa, args.threads))
            e, key = external_matrix(out, query_ids, ids)
            false, roc = metrics(e, key, positive, negative)
            rows.append(("ssearch36 (its default statistics)", false, roc, f"{t:.1f} s"))
        if have_blast:
            for cbs in (0, 2):
                out, t = timed(lambda c=cbs: blastp(qfa, dbfa, tmp, c, args.threads))
                e, key = external_matrix(out, query_ids, ids)
                false, roc = metrics(e, key, positive, negative)
                rows.append((f"blastp -comp_based_stats {cbs}", false, roc, f"{t:.1f} s"))

        print(f"wavedp scan: {t_scan:.1f} s for {len(queries)} x {len(texts)} (all scores)\n")
        print_table("Pfam families + shuffled and reversed decoys: false hits per query "
                    "(E <= t)", rows,
                    roc=True)
        print(f"false hits per query at E <= {THRESHOLDS[0]:g}, by kind:")
        for label, e in split:
            low = np.where(np.isnan(e), np.inf, e) <= THRESHOLDS[0]
            print(f"  {label}: " + ", ".join(
                f"{kind} {np.sum(low & negative & sel[None, :]) / len(queries):.3f}"
                for kind, sel in kinds.items()))
        print()
        print_table(f"Look-alikes that are not reverses: each member's heptad-register "
                    f"shuffle (windows of {PERIODIC_WINDOW}), no reversed decoys", [
                        (label, *metrics(e, s_key, positive[:, :2 * len(members)],
                                         negative[:, :2 * len(members)]), "")
                        for label, e, s_key in periodic_rows(args, members, picks, queries)],
                    roc=True)

        # ---- random databases: every hit is false ----
        rrows: list[tuple[str, list[float], float | None, str]] = []
        rq = random_proteins(rng, args.random_queries, 300)
        rdb = random_proteins(rng, args.random_subjects, 300)
        rqfa, rdbfa = os.path.join(tmp, "rq.fa"), os.path.join(tmp, "rdb.fa")
        rids = [f"r{k}" for k in range(len(rdb))]
        rqids = [f"rq{k}" for k in range(len(rq))]
        write_fasta(rqfa, rqids, rq)
        write_fasta(rdbfa, rids, rdb)
        rsearch, t_rscan = timed(lambda: prepare(args.device, rq, rdb, PROTEIN))
        rparts = recommended_parts(rsearch, PROTEIN)
        rrev = reversed_scores(args.device, rsearch, PROTEIN)
        for label, fn in (
                ("wavedp, BLAST tables (today)", lambda: tables(rsearch, PROTEIN)),
                ("composition: lambda ratio + adjusted matrix, tables",
                 lambda: recommended(rsearch, PROTEIN, use_fit=False)),
                ("empirical", lambda: fitted(rsearch)[0]),
                ("**empirical + composition (recommended)**", lambda: rparts.evalues),
                *((f"study: recommended + reverse null, {bits:g} bits",
                   lambda b=bits: reverse_null(rsearch, rrev, rparts, PROTEIN, b))
                  for bits in REVERSE_ALLOWANCES)):
            rrows.append((label, calibration(fn()), None, "protein, local"))
        for stats in ("fitted", "blast"):
            e, _ = searched(args.device, rq, rdb, PROTEIN, stats)
            rrows.append((f"wavedp search --stats {stats}", calibration(e), None,
                          "protein, local"))
        for mode in ("semiglobal", "global"):
            e, _ = searched(args.device, rq, rdb, PROTEIN, "fitted", mode)
            rrows.append((f"wavedp search --stats fitted --mode {mode}", calibration(e), None,
                          f"protein, {mode}"))
        for mode in ("semiglobal", "global"):
            gsearch = prepare(args.device, rq, rdb, PROTEIN, mode)
            e, why = fitted(gsearch, mode)
            rrows.append((f"empirical ({mode})", calibration(e), None,
                          f"protein, {mode}" + (f"; {len(why)} without fit" if why else "")))
        if have_ssearch:
            e, _ = external_matrix(ssearch(rqfa, rdbfa, args.threads), rqids, rids)
            rrows.append(("ssearch36", calibration(e), None, "protein, local"))
        if have_blast:
            bdir = os.path.join(tmp, "random")
            os.makedirs(bdir)
            for cbs in (0, 2):
                e, _ = external_matrix(blastp(rqfa, rdbfa, bdir, cbs, args.threads), rqids,
                                       rids)
                rrows.append((f"blastp -comp_based_stats {cbs}", calibration(e), None,
                              "protein, local"))
        dq = random_dna(rng, args.random_queries // 2, 600)
        ddb = random_dna(rng, args.random_subjects // 2, 600)
        for mode in ("local", "semiglobal", "global"):
            dsearch = prepare(args.device, dq, ddb, DNA, mode)
            e, why = fitted(dsearch, mode)
            rrows.append((f"empirical ({mode})", calibration(e), None,
                          f"DNA 2/-3, gaps 5/2, {mode}"))
            e, _ = searched(args.device, dq, ddb, DNA, "fitted", mode)
            rrows.append((f"wavedp search --stats fitted --mode {mode}", calibration(e), None,
                          f"DNA 2/-3, gaps 5/2, {mode}, both strands"))
        print(f"random protein scan: {t_rscan:.1f} s for {len(rq)} x {len(rdb)}\n")
        print_table("Random sequences (every hit false): hits per query (E <= t)", rrows,
                    roc=False)
    acceptance(rows, rrows)
    print("Cost of the statistics (compiled kernels, one core):")
    for line in costs:
        print(f"  {line}")
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


def acceptance(rows: list, rrows: list) -> None:
    """The targets of the default statistics (``wavedp search``, ``--stats fitted``),
    measured in this run."""
    best = next(r for r in rows if r[0].endswith("(default)"))
    rand = next(r for r in rrows if r[0] == "wavedp search --stats fitted")
    others = {r[0]: r[2] for r in rows if r[0].startswith(("ssearch36", "blastp"))}
    false = best[1]
    checks = [
        (f"Pfam: false hits per query at E <= 1 in [0.3, 3]: {false[2]:.3f}",
         0.3 <= false[2] <= 3),
        (f"Pfam: false hits per query at E <= 0.01 at most 0.03: {false[0]:.3f}",
         false[0] <= 0.03),
        (f"Pfam: ROC1 {best[2]:.3f} at least every other tool's ("
         + ", ".join(f"{k} {v:.3f}" for k, v in others.items()) + ")",
         all(best[2] >= v for v in others.values())),
        (f"random: hits per query at E <= 1 within 2x of 1: {rand[1][2]:.3f}",
         0.5 <= rand[1][2] <= 2),
        (f"random: hits per query at E <= 10 within 2x of 10: {rand[1][3]:.2f}",
         5 <= rand[1][3] <= 20),
    ]
    print("Targets of the default statistics (wavedp search --stats fitted):")
    for text, ok in checks:
        print(f"  [{'met' if ok else 'NOT met'}] {text}")
    print()


def print_table(title: str, rows: list[tuple[str, list[float], float | None, str]],
                roc: bool) -> None:
    print(f"## {title}\n")
    head = "| method | " + " | ".join(f"E <= {t:g}" for t in THRESHOLDS)
    head += " | ROC1 |" if roc else " | data |"
    print(head)
    print("|---" * (len(THRESHOLDS) + 2) + "|")
    for label, false, value, note in rows:
        cells = " | ".join(f"{f:.3f}" if f < 1 else f"{f:.2f}" for f in false)
        last = f"{value:.3f}" if roc and value is not None else note
        print(f"| {label} | {cells} | {last} |")
    print()


if __name__ == "__main__":
    main()
