"""Profiles and iterative search against the tools of the field, on real families.

Run from the repository root:  python benchmarks/profiles.py [--device cpu] [--queries 40]
(with wavedp installed, or ``PYTHONPATH=src``; ``psiblast`` from ncbi-blast+, ``jackhmmer``
from hmmer and ``mmseqs`` from mmseqs2 on the PATH: a missing tool's row is skipped and said).

The data are significance.py's: the members of the Pfam seed families in Debian's
hmmer-examples, each with two decoys, a seeded shuffle and its **reverse** (a reversed
coiled coil still looks like one: the decoy that exposes profiles drifting into
low-complexity look-alikes); ``--queries`` members (seeded) are the queries. A hit is false
when it is a decoy or a member of another family (the query itself is left out). Each row,
in one run: ROC1 (per query, the share of its family ranked above the first false hit, by
E-value, averaged), false hits per query at E <= 0.01, 0.1 and 1, and the seconds.

- wavedp, one search, and with ``iterations=3`` (``Searcher.search``), fitted statistics;
- ``psiblast -num_iterations 3`` (BLOSUM62, BLAST's -gapopen 10 -gapextend 1 = wavedp's
  11/1, its default composition statistics and inclusion E-value), the last round's hits;
- ``jackhmmer -N 3`` (its defaults), the last round's per-sequence E-values;
- ``mmseqs easy-search --num-iterations 3 -s 7.5`` (its profile search; sensitivity 7.5).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import significance as sig  # noqa: E402  (beside this script)

import wavedp  # noqa: E402

ROUNDS = 3


def data(folder: str, queries: int, seed: int) -> tuple[list[str], list[str], list[str],
                                                        list[int], np.ndarray, np.ndarray]:
    """(query ids, subject ids, subject texts, query subject indices, positive, negative):
    the members, their shuffles and reverses; ``positive``/``negative`` queries x subjects."""
    rng = np.random.default_rng(seed)
    members = sig.families(folder)
    ids = [f"{m.family}__{m.name.replace('/', '_')}" for m in members]  # BLAST-safe ids
    texts = [m.text for m in members]
    family = [m.family for m in members]
    for k, m in enumerate(members):
        shuffled = np.array(list(m.text))
        rng.shuffle(shuffled)
        ids += [f"shuffled{k}", f"reversed{k}"]
        texts += ["".join(shuffled), m.text[::-1]]
        family += ["", ""]
    picked = sorted(rng.choice(len(members), min(queries, len(members)), replace=False))
    fam = np.array(family)
    positive = np.array([(fam == family[q]) for q in picked])
    negative = ~positive
    for r, q in enumerate(picked):
        positive[r, q] = negative[r, q] = False  # the query itself
    return [ids[q] for q in picked], ids, texts, [int(q) for q in picked], positive, negative


def wavedp_rows(queries: list[str], db: str, device: str, rounds: int
                ) -> list[dict]:
    searcher = wavedp.Searcher(db, sig.PROTEIN, device=device)
    out = []
    for _, hits in searcher.iter_search(queries, top=0, evalue=10.0, iterations=rounds):
        out += [{"query": h.query_id, "subject": h.target_id, "evalue": h.evalue,
                 "key": float(h.score)} for h in hits if h.evalue is not None]
    return out


def psiblast_rows(query_fa: str, db_fa: str, folder: str, threads: int) -> list[dict]:
    """psiblast's last round per query (-outfmt 7 marks each round)."""
    db = os.path.join(folder, "blastdb")
    subprocess.run(["makeblastdb", "-in", db_fa, "-dbtype", "prot", "-out", db],
                   capture_output=True, check=True)
    out = subprocess.run(
        ["psiblast", "-query", query_fa, "-db", db, "-num_iterations", str(ROUNDS),
         "-matrix", "BLOSUM62", "-gapopen", str(sig.GAP_OPEN - sig.GAP_EXTEND),
         "-gapextend", str(sig.GAP_EXTEND), "-evalue", "10", "-max_target_seqs", "100000",
         "-num_threads", str(threads), "-outfmt", "7 qseqid sseqid evalue bitscore"],
        capture_output=True, text=True, check=True).stdout
    last: dict[str, list[dict]] = {}
    query, fresh = None, False
    for line in out.splitlines():
        if line.startswith("# Iteration:"):  # a new round (its query named next)
            fresh = True
        elif line.startswith("# Query:"):
            query = line.split()[2]
            if fresh:
                last[query], fresh = [], False  # replaces the round before
        elif "\t" in line and not line.startswith("#") and query is not None:
            q, s, e, b = line.split("\t")[:4]
            last.setdefault(query, []).append({"query": q, "subject": s, "evalue": float(e),
                                               "key": float(b)})
    return [row for rows in last.values() for row in rows]


def jackhmmer_rows(query_fa: str, db_fa: str, folder: str, threads: int) -> list[dict]:
    """jackhmmer's per-sequence E-values of its last round (--tblout), query by query."""
    rows = []
    for k, (qid, text) in enumerate(_records(query_fa)):
        one, table = os.path.join(folder, f"q{k}.fa"), os.path.join(folder, f"q{k}.tbl")
        sig.write_fasta(one, [qid], [text])
        subprocess.run(["jackhmmer", "-N", str(ROUNDS), "-E", "10", "--cpu", str(threads),
                        "--tblout", table, "-o", os.devnull, one, db_fa],
                       capture_output=True, check=True)
        last: list[dict] = []
        with open(table) as fh:
            for line in fh:
                if line.startswith("#"):
                    continue
                f = line.split()
                last.append({"query": qid, "subject": f[0], "evalue": float(f[4]),
                             "key": float(f[5])})
        rows += last
    return rows


def mmseqs_rows(query_fa: str, db_fa: str, folder: str, threads: int) -> list[dict]:
    out = os.path.join(folder, "mmseqs.m8")
    subprocess.run(["mmseqs", "easy-search", query_fa, db_fa, out, os.path.join(folder, "tmp"),
                    "--num-iterations", str(ROUNDS), "-s", "7.5", "-e", "10",
                    "--max-seqs", "100000", "--threads", str(threads)],
                   capture_output=True, check=True)
    with open(out) as fh:
        return sig._tabular(fh.read())


def _records(path: str) -> list[tuple[str, str]]:
    found = []
    with open(path) as fh:
        for block in fh.read().split(">")[1:]:
            head, *rest = block.splitlines()
            found.append((head.split()[0], "".join(rest)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--families", default=sig.DEFAULT_FAMILIES)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    qids, ids, texts, picked, positive, negative = data(args.families, args.queries,
                                                        args.seed)
    print(f"# {len(qids)} queries, {len(ids):,} subjects ({len(ids) // 3:,} members of "
          f"{len({i.split('__')[0] for i in ids if '__' in i})} Pfam families, each with a "
          f"shuffle and its reverse), {args.device}", flush=True)
    print("| method | ROC1 | false a query, E <= 0.01 | 0.1 | 1 | seconds |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        query_fa, db_fa = os.path.join(folder, "q.fa"), os.path.join(folder, "db.fa")
        sig.write_fasta(query_fa, qids, [texts[q] for q in picked])
        sig.write_fasta(db_fa, ids, texts)
        wavedp.search([texts[picked[0]]], db_fa, sig.PROTEIN, device=args.device)  # compiled
        runs = [
            ("wavedp, one search", None, lambda: wavedp_rows(query_fa, db_fa, args.device, 1)),
            (f"wavedp, {ROUNDS} iterations", None,
             lambda: wavedp_rows(query_fa, db_fa, args.device, ROUNDS)),
            (f"psiblast -num_iterations {ROUNDS}", "psiblast",
             lambda: psiblast_rows(query_fa, db_fa, folder, args.threads)),
            (f"jackhmmer -N {ROUNDS}", "jackhmmer",
             lambda: jackhmmer_rows(query_fa, db_fa, folder, args.threads)),
            (f"mmseqs --num-iterations {ROUNDS}", "mmseqs",
             lambda: mmseqs_rows(query_fa, db_fa, folder, args.threads)),
        ]
        for name, tool, run in runs:
            if tool is not None and shutil.which(tool) is None:
                print(f"| {name} | not run: {tool} is not installed | | | | |", flush=True)
                continue
            start = time.perf_counter()
            rows = run()
            seconds = time.perf_counter() - start
            e, key = sig.external_matrix(rows, qids, ids)
            false, roc = sig.metrics(e, key, positive, negative)
            print(f"| {name} | {roc:.3f} | {false[0]:.3f} | {false[1]:.3f} | {false[2]:.3f} "
                  f"| {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
