"""Anchors for the many-pairs benchmark: GASAL2 and ADEPT, third-party GPU aligners built from
their own sources by ``scripts/pair_anchors.sh build`` (programs in ``$ANCHORS/bin``, default
``/tmp/anchors/bin``), run on the seeded pairs of ``pairs_data`` as whole processes, their
scores parsed back in pair order. wavedp ships none of their code.

- GASAL2 (github.com/nahmedraja/GASAL2), its ``test_prog``: DNA only. Reads two one-line FASTA
  files in step (``>`` headers); ``-y local -p`` prints one line per pair,
  ``query_name=.. target_name=.. score=.. [query_batch_start=.. target_batch_start=..]
  query_batch_end=.. target_batch_end=.. [CIGAR=..]`` (0-based, inclusive ends; CIGAR with
  ``-t``: M match, X mismatch, D/I consume target/query only), batches of 5000 on 2 streams,
  in completion order (sorted back here by the header number). Its own timer
  ``Total execution time (in milliseconds)`` spans stream set-up, alignment, printing and
  teardown (not file reading, not the CUDA context, which its score upload creates first).
- ADEPT (github.com/mgawan/ADEPT), its multi-GPU examples ``multi_gpu`` (DNA),
  ``multigpu_protein`` and ``multigpu_protein_scoreonly``: arguments ``<reference>
  <query> <output>``; reads both files line by line in step, skipping lines where the
  reference line starts with ``>`` (so: one-line FASTA, same headers), silently drops pairs
  longer than its compile-time MAX_REF_LEN / MAX_QUERY_LEN. Writes a TSV with a header:
  score, reference begin, reference end, query begin, query end (0-based, inclusive), or
  scores only. No CIGARs (its CIGAR option is never used). Scoring is compile-time in the
  examples: the build script sets wavedp's, and adds ``ADEPT_ALIGN_SECONDS`` (the
  ``ADEPT::multi_gpu`` call, after an untimed warm-up call on 64 pairs).

Each ``run_*`` returns ``(result, "")`` or ``(None, reason)``; a result is a dict with
``seconds`` (whole process, wall), ``own_seconds`` (the tool's own timer), ``scores`` (int64
array in pair order, or None), begins/ends where printed, ``cigars`` (GASAL2 ``-t``),
``command``.
"""

from __future__ import annotations

import os
import re
import subprocess
import time

import numpy as np
import pairs_data

BIN = os.path.join(os.environ.get("ANCHORS", "/tmp/anchors"), "bin")
#: wavedp's scoring of the two workloads (a gap of length k costs gap_open + (k-1)*gap_extend)
SCORING = {"dna": {"match": 1, "mismatch": 4, "gap_open": 7, "gap_extend": 1},
           "protein": {"matrix": "BLOSUM62", "gap_open": 11, "gap_extend": 1}}
GASAL2_MODES = {"score": [], "start": ["-s"], "traceback": ["-t"]}
GASAL2_TIMER = re.compile(r"Total execution time \(in milliseconds\): ([0-9.]+)")
ADEPT_TIMER = re.compile(r"ADEPT_ALIGN_SECONDS ([0-9.eE+-]+)")
ADEPT_PROGRAMS = {"dna": "adept_dna", "protein": "adept_protein",
                  "protein_scores": "adept_protein_scores"}


def scoring_note(kind: str) -> str:
    """Which tool parameters give wavedp's scoring of ``kind``, and whether scores compare."""
    if kind == "dna":
        return ("wavedp local, match 1, mismatch -4, gap open 7 extend 1 (k gaps cost 7+(k-1)). "
                "GASAL2 charges open+extend for a gap's first residue (gapoe = gap_open + "
                "gap_extend, src/gasal_align.cu), so -a 1 -b 4 -q 6 -r 1; its local recurrence "
                "opens gaps from the diagonal score only (kernels/local_kernel_template.h, "
                "CORE_LOCAL_COMPUTE), so an insertion cannot directly follow a deletion: equal "
                "to wavedp's score unless the optimum needs such a pair (both runs ~6+ long "
                "here; not in this workload). ADEPT opens with H + GAP_OPEN, extends with "
                "GAP_EXTEND (adept/kernel.cpp, dna_kernel), so GAP_OPEN=-7 GAP_EXTEND=-1, "
                "MATCH=1 MISMATCH=-4 (set at build): scores should be identical.")
    if kind == "protein":
        return ("wavedp local, BLOSUM62, gap open 11 extend 1 (k gaps cost 11+(k-1), BLAST's "
                "10/1). GASAL2 aligns DNA only. ADEPT's aa_kernel uses the same recurrence as "
                "its DNA kernel with the examples' 24x24 BLOSUM62 (same letters, order and "
                "values as wavedp's table), GAP_OPEN=-11 GAP_EXTEND=-1 (set at build): scores "
                "should be identical (upper-case letters only).")
    raise ValueError(f"unknown kind {kind!r}")


def limits(bin_dir: str = BIN) -> dict[str, int]:
    """The compile-time limits the build recorded in ``anchors.env``."""
    path = os.path.join(bin_dir, "anchors.env")
    if not os.path.exists(path):
        return {}
    with open(path) as fh:
        pairs = (line.strip().split("=", 1) for line in fh if "=" in line)
        return {key: int(value) for key, value in pairs}


def write_inputs(kind: str, q_letters: np.ndarray, q_lengths: np.ndarray,
                 t_letters: np.ndarray, t_lengths: np.ndarray, folder: str) -> dict:
    """One-line FASTA files (``>q1``.., ``>t1``..) that both tools read: GASAL2 as
    ``<queries> <targets>``, ADEPT as ``<reference=targets> <query=queries>``."""
    if kind not in SCORING:
        raise ValueError(f"unknown kind {kind!r}")
    if len(q_lengths) != len(t_lengths) or not len(q_lengths):
        raise ValueError("need as many queries as targets, at least one")
    if min(q_lengths.min(), t_lengths.min()) < 1:
        raise ValueError("empty sequences are not supported by the anchors")
    for letters in (q_letters, t_letters):
        if letters.size and not (65 <= letters.min() and letters.max() <= 90):
            raise ValueError("upper-case letters only (ADEPT's protein table ends at 'Z')")
    os.makedirs(folder, exist_ok=True)
    files = {"kind": kind, "count": len(q_lengths), "folder": folder,
             "queries": os.path.join(folder, "queries.fa"),
             "targets": os.path.join(folder, "targets.fa"),
             "max_query": int(q_lengths.max()), "max_target": int(t_lengths.max())}
    pairs_data.write_fasta(files["queries"], q_letters, q_lengths, "q")
    pairs_data.write_fasta(files["targets"], t_letters, t_lengths, "t")
    return files


def _run(cmd: list[str], folder: str, name: str, device: str | None,
         timeout: float | None) -> tuple[float, str, str, str]:
    """(wall seconds, stdout path, stderr text, failure reason or "") of one command."""
    env = os.environ.copy()
    if device is not None:
        env.setdefault("CUDA_VISIBLE_DEVICES", device)
    stdout = os.path.join(folder, f"{name}.stdout")
    with open(stdout, "wb") as out, open(os.path.join(folder, f"{name}.stderr"), "wb") as err:
        start = time.perf_counter()
        try:
            done = subprocess.run(cmd, stdout=out, stderr=err, env=env, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired:
            return time.perf_counter() - start, stdout, "", f"{name}: timed out ({timeout} s)"
        wall = time.perf_counter() - start
    with open(os.path.join(folder, f"{name}.stderr"), errors="replace") as fh:
        stderr = fh.read()
    if done.returncode:
        return wall, stdout, stderr, (f"{name} exited {done.returncode}: "
                                      f"{stderr.strip()[-400:]}")
    return wall, stdout, stderr, ""


def run_gasal2(files: dict, bin_dir: str = BIN, mode: str = "traceback",
               print_results: bool = True, threads: int = 1, device: str | None = "0",
               timeout: float | None = None, **scoring: int) -> tuple[dict | None, str]:
    """GASAL2's test_prog, local alignment, wavedp's DNA scoring (or ``scoring`` overrides in
    wavedp's convention). ``mode``: score (score, ends), start (+ begins), traceback (+ CIGAR).
    ``print_results=False`` times it without printing (no scores come back)."""
    if files["kind"] != "dna":
        return None, "GASAL2 aligns DNA only"
    prog = os.path.join(bin_dir, "gasal2_test_prog")
    if not os.access(prog, os.X_OK):
        return None, f"GASAL2 not built ({prog} missing: bash scripts/pair_anchors.sh build)"
    room = limits(bin_dir).get("gasal2_max_query_len")
    padded = -(-files["max_query"] // 8) * 8
    if room is not None and padded > room:
        return None, (f"GASAL2 was built for queries up to {room} (padded to 8), these need "
                      f"{padded}: rebuild with GASAL2_MAX_QUERY_LEN={padded}")
    s = {**SCORING["dna"], **scoring}
    cmd = [prog, "-a", str(s["match"]), "-b", str(s["mismatch"]),
           "-q", str(s["gap_open"] - s["gap_extend"]), "-r", str(s["gap_extend"]),
           "-n", str(threads), "-y", "local", *GASAL2_MODES[mode],
           *(["-p"] if print_results else []), files["queries"], files["targets"]]
    wall, stdout, stderr, failed = _run(cmd, files["folder"], "gasal2", device, timeout)
    if failed:
        return None, failed
    own = GASAL2_TIMER.search(stderr)
    result = {"tool": "GASAL2", "command": cmd, "seconds": wall,
              "own_seconds": float(own.group(1)) / 1000 if own else None,
              "own_timer": "test_prog's Total execution time", "scores": None, "cigars": None}
    if print_results:
        parsed, why = _parse_gasal2(stdout, files["count"])
        if parsed is None:
            return None, why
        result.update(parsed)
    return result, ""


def _parse_gasal2(path: str, count: int) -> tuple[dict | None, str]:
    """test_prog's ``-p`` lines, sorted into pair order by the query header's number."""
    keys = ("score", "query_batch_start", "target_batch_start", "query_batch_end",
            "target_batch_end")
    columns = {key: np.full(count, -1, np.int64) for key in keys}
    cigars: list[str] | None = None
    seen = np.zeros(count, bool)
    with open(path, errors="replace") as fh:
        for line in fh:
            if not line.startswith("query_name="):
                continue
            fields = dict(item.split("=", 1) for item in line.rstrip("\n").split("\t"))
            k = int(re.search(r"(\d+)$", fields["query_name"]).group(1)) - 1
            if not 0 <= k < count:
                return None, f"GASAL2 printed an unknown pair {fields['query_name']!r}"
            seen[k] = True
            for key in keys:
                if key in fields:
                    columns[key][k] = int(fields[key])
            if "CIGAR" in fields:
                if cigars is None:
                    cigars = [""] * count
                cigars[k] = fields["CIGAR"]
    if not seen.all():
        return None, f"GASAL2 printed {int(seen.sum())} of {count} pairs"
    return {"scores": columns["score"], "query_begin": columns["query_batch_start"],
            "target_begin": columns["target_batch_start"],
            "query_end": columns["query_batch_end"], "target_end": columns["target_batch_end"],
            "cigars": cigars}, ""


def run_adept(kind: str, files: dict, bin_dir: str = BIN, scores_only: bool = False,
              device: str | None = "0", timeout: float | None = None
              ) -> tuple[dict | None, str]:
    """ADEPT's multi-GPU example for ``kind`` (on the one GPU ``device`` makes visible), local
    alignment with the scoring the build compiled in (wavedp's: see ``scoring_note``).
    ``scores_only`` (protein only) skips its reverse pass for begins."""
    if files["kind"] != kind:
        return None, f"the input files are {files['kind']}, not {kind}"
    if scores_only and kind != "protein":
        return None, "ADEPT has a scores-only example for protein only"
    prog = os.path.join(bin_dir, ADEPT_PROGRAMS[kind + ("_scores" if scores_only else "")])
    if not os.access(prog, os.X_OK):
        return None, f"ADEPT not built ({prog} missing: bash scripts/pair_anchors.sh build)"
    room = limits(bin_dir)
    ref, que = room.get(f"adept_{kind}_max_ref"), room.get(f"adept_{kind}_max_query")
    if ref is not None and (files["max_target"] > ref or files["max_query"] > que):
        return None, (f"ADEPT ({kind}) was built for targets up to {ref} and queries up to "
                      f"{que}; these are {files['max_target']} and {files['max_query']} "
                      f"(it would drop them): rebuild with ADEPT_{kind.upper()}_LIMITS")
    table = os.path.join(files["folder"], f"adept_{kind}.tsv")
    cmd = [prog, files["targets"], files["queries"], table]
    wall, stdout, _, failed = _run(cmd, files["folder"], f"adept_{kind}", device, timeout)
    if failed:
        return None, failed
    with open(stdout, errors="replace") as fh:
        own = ADEPT_TIMER.search(fh.read())
    try:
        rows = np.loadtxt(table, dtype=np.int64, skiprows=1, ndmin=2)
    except (OSError, ValueError) as exc:
        return None, f"ADEPT output {table} unreadable: {exc}"
    if rows.shape[0] != files["count"]:
        return None, f"ADEPT wrote {rows.shape[0]} of {files['count']} pairs"
    result = {"tool": "ADEPT", "command": cmd, "seconds": wall,
              "own_seconds": float(own.group(1)) if own else None,
              "own_timer": "ADEPT::multi_gpu call (patched in)", "scores": rows[:, 0],
              "cigars": None}
    if rows.shape[1] == 5:
        result.update(target_begin=rows[:, 1], target_end=rows[:, 2], query_begin=rows[:, 3],
                      query_end=rows[:, 4])
    return result, ""

