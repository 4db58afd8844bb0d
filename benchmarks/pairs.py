"""Many pairs: wavedp.align_pairs on seeded pairs (benchmarks/pairs_data.py), timed from
encoded sequences in host memory to the batch in host memory, score-only and with CIGARs,
every mode; the GPU checked against the CPU engine on a sample; where built, GASAL2 and
ADEPT on the same pairs (benchmarks/pair_anchors.py), their scores compared.

    python3 benchmarks/pairs.py --kind dna --count 2000000 --device gpu
    python3 benchmarks/pairs.py --kind protein --count 500000 --device gpu --anchors /tmp/anchors
    python3 benchmarks/pairs.py --all-against-all 100x1000 --device gpu

Each line: workload, seconds (best of --repeats, each from a fresh call), TCUPS (cells over
seconds), and the GPU engine's phases of the last turn.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import os
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pairs_data  # noqa: E402  (beside this script)

import wavedp  # noqa: E402
from wavedp.engines.cuda import transfer  # noqa: E402  (NumPy only: no CuPy import)
from wavedp.pairs import Sequences  # noqa: E402

SCORINGS = {
    "dna": lambda: wavedp.Scoring(match=1, mismatch=-4, gap_open=7, gap_extend=1),
    "protein": lambda: wavedp.Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1),
}


def encoded(kind: str, count: int):
    """(queries, targets) as Sequences, and the raw letters for the anchors."""
    make = pairs_data.dna if kind == "dna" else pairs_data.protein
    q, ql, t, tl = make(count)
    scoring = SCORINGS[kind]()
    qs = Sequences.from_letters(q, ql, [f"q{k + 1}" for k in range(count)], scoring)
    ts = Sequences.from_letters(t, tl, [f"t{k + 1}" for k in range(count)], scoring)
    return scoring, qs, ts, (q, ql, t, tl)


#: the engine's own host copy threads (``copy_threads`` puts them back)
_KEPT_THREADS = transfer.THREADS


def fresh(s: Sequences) -> Sequences:
    """The same arrays in a new Sequences: what it derives (its lengths) made again, as in a
    user's first call on sequences just read."""
    return dataclasses.replace(s)


def timed(call, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - start)
    return best, out


def alternated(values: list, put, call, repeats: int, tracebacks=(False, True)) -> dict:
    """The best seconds of ``call(traceback)`` for each of ``tracebacks`` (score-only, with
    CIGARs) and each of ``values`` put in place by ``put(value)`` in turns, alternating
    (``put(None)``: back to what was there)."""
    best: dict = {}
    try:
        for _ in range(max(repeats, 2)):
            for value in values:
                put(value)
                for traceback in tracebacks:
                    seconds, _ = timed(lambda tb=traceback: call(tb), 1)
                    best[value, traceback] = min(best.get((value, traceback), seconds), seconds)
    finally:
        put(None)
    return best


def switched(args, label: str, call) -> None:
    """``call(traceback)`` with each ``--switch`` constant at each of its values, turns
    alternating: a line each, its best seconds."""
    for name, values in args.switch:
        module, attr = _constant(name)
        kept = getattr(module, attr)
        best = alternated(values, lambda v, a=attr, m=module, k=kept: setattr(
            m, a, k if v is None else v), call, args.repeats, args.calls)
        what = ", ".join("cigar" if tb else "score" for tb in args.calls)
        print(f"{label} {name} ({what} seconds, best of turns): "
              + _pairs_of(best, values, args.calls), flush=True)


def _constant(name: str):
    """The module of ``wavedp.engines.cuda`` (``MODULE.NAME``; many_pairs where no MODULE)
    and the attribute an engine constant ``name`` is."""
    import importlib

    where, _, attr = name.rpartition(".")
    module = importlib.import_module(f"wavedp.engines.cuda.{where or 'many_pairs'}")
    if not hasattr(module, attr):
        raise SystemExit(f"--switch: {module.__name__} has no {attr}")
    return module, attr


def _pairs_of(best: dict, values: list, tracebacks=(False, True)) -> str:
    return "; ".join(f"{v}: " + ", ".join(f"{best[v, tb]:.4f}" for tb in tracebacks)
                     for v in values)


def engine(qs, ts, scoring, mode: str, traceback: bool, every: bool = False, **marks):
    """The GPU engine's call on the pairs, one-to-one (``every``: every query against every
    target; ``marks``: its ``phases`` or ``timeline``)."""
    from wavedp.engines import cross
    from wavedp.engines.common import MODES, Sides
    from wavedp.engines.cuda import many_pairs

    sides = Sides(qs.spans, ts.spans, *qs.extremes, *ts.extremes)  # as align_pairs makes them
    if every:  # as align_all makes them
        sides = cross.sides(qs.lengths, ts.lengths, (*qs.extremes, *ts.extremes))
    return many_pairs.align(qs.codes, qs.offsets, ts.codes, ts.offsets, None, None, sides,
                            sub=scoring.table,
                            gap_open=scoring.gap_open, gap_extend=scoring.gap_extend,
                            mode=MODES[mode], traceback=traceback, every=every, **marks)


def phases(qs, ts, scoring, mode: str, traceback: bool) -> str:
    """The GPU engine's phases of one call (each waited for: slower than the call)."""
    found: dict[str, float] = {}
    engine(qs, ts, scoring, mode, traceback, phases=found)
    return " ".join(f"{k} {v * 1e3:.1f}" for k, v in found.items()) + " ms"


def timeline(qs, ts, scoring, traceback: bool, every: bool = False) -> str:
    """One local call's marks: phase, host ms, GPU ms (its stream's event), from the start
    (``every``: every query against every target)."""
    import cupy

    marks: list = []
    start = time.perf_counter()
    engine(qs, ts, scoring, "local", traceback, every, timeline=marks)
    whole = time.perf_counter() - start
    cupy.cuda.Device().synchronize()
    first = marks[0][2]
    return "\n".join(f"#   {name:10} host {host * 1e3:7.1f} gpu "
                     f"{cupy.cuda.get_elapsed_time(first, event):7.1f}"
                     for name, host, event in marks) + f"\n#   returned   {whole * 1e3:7.1f}"


def check(batch, qs, ts, scoring, mode: str, traceback: bool, sample: int) -> str:
    """``sample`` pairs spread over the batch (over its chunks) again on the CPU: equal or
    not."""
    k = min(sample, len(batch))
    at = np.unique(np.linspace(0, len(batch) - 1, k).astype(np.int64))
    rows = np.stack([batch.query_index[at], batch.target_index[at]], axis=1)
    cpu = wavedp.align_pairs(qs, ts, scoring, mode=mode, traceback=traceback, device="cpu",
                             pairs=rows)
    same = all(np.array_equal(getattr(cpu, f), getattr(batch, f)[at]) for f in
               ("score", "query_start", "query_end", "target_start", "target_end"))
    if traceback:
        same &= cpu.cigars() == batch.cigars(at)
    return f"cpu==gpu on {at.size}: {'yes' if same else 'NO'}"


def pairs_run(args, kind: str) -> None:
    scoring, qs, ts, raw = encoded(kind, args.count)
    cells = int((qs.lengths * ts.lengths).sum())
    print(f"# {kind}: {args.count:,} pairs, {cells / 1e9:.2f} G cells, device {args.device}",
          flush=True)
    wavedp.align_pairs(_head(qs, 64), _head(ts, 64), scoring,
                       device=args.device)  # compile
    scores = None
    for mode in args.modes:
        for traceback in args.calls:
            def call(m=mode, tb=traceback):  # fresh: no lengths kept from a call before
                return wavedp.align_pairs(fresh(qs), fresh(ts), scoring, mode=m,
                                          traceback=tb, device=args.device)
            call()  # this shape's kernels compiled
            seconds, batch = timed(call, args.repeats)
            what = "cigar" if traceback else "score"
            extra = ""
            if args.device == "gpu":  # the engine alone (no API around it), then its phases
                alone, _ = timed(lambda m=mode, tb=traceback: engine(qs, ts, scoring, m, tb),
                                 args.repeats)
                extra = (f"engine alone {alone:.3f} s; "
                         f"{phases(qs, ts, scoring, mode, traceback)}")
            print(f"{kind:8} {mode:10} {what:6} {seconds:8.3f} s {cells / seconds / 1e12:7.3f} "
                  f"TCUPS  {check(batch, qs, ts, scoring, mode, traceback, args.check)}  "
                  f"{extra}", flush=True)
            if mode == "local" and traceback:
                scores = batch.score
    if args.profile:  # one local call each way under cProfile: the host's share
        for traceback in (False, True):
            profiled(os.path.join(args.profile, f"api_{kind}_{'cigar' if traceback else 'score'}"
                                  ".txt"), lambda tb=traceback: wavedp.align_pairs(
                qs, ts, scoring, traceback=tb, device=args.device))
    if args.timeline:
        for traceback in (False, True):
            timeline(qs, ts, scoring, traceback)  # compiled
            for _ in range(2):  # two calls in a row, as timed() makes them
                print(f"# {kind} local {'cigar' if traceback else 'score'} timeline (ms)\n"
                      f"{timeline(qs, ts, scoring, traceback)}", flush=True)
    if args.strings and "local" in args.modes:
        texts = [qs.text(k, scoring.alphabet) for k in range(len(qs))]
        targets = [ts.text(k, scoring.alphabet) for k in range(len(ts))]
        start = time.perf_counter()
        wavedp.align_pairs(texts, targets, scoring, device=args.device)
        whole = time.perf_counter() - start
        start = time.perf_counter()
        wavedp.pairs.sequences.as_sequences(texts, scoring, "query")
        wavedp.pairs.sequences.as_sequences(targets, scoring, "target")
        enc = time.perf_counter() - start
        print(f"{kind:8} local      strings {whole:8.3f} s {cells / whole / 1e12:7.3f} TCUPS "
              f"(encoding the strings: {enc:.3f} s)", flush=True)
    def call(tb: bool):
        return wavedp.align_pairs(fresh(qs), fresh(ts), scoring, traceback=tb,
                                  device=args.device)

    switched(args, f"{kind:8} local", call)
    for g in args.groups:  # the engine's phases with each group size forced
        from wavedp.engines.cuda import many_pairs

        chosen = many_pairs.shape_for  # its orientation kept
        many_pairs.shape_for = lambda m, n, exchange=True, g=g, chosen=chosen: (
            g, chosen(m, n, exchange)[1])
        try:
            for traceback in (False, True):
                phases(qs, ts, scoring, "local", traceback)  # compiled
                print(f"{kind:8} local G={g:<2} {'cigar' if traceback else 'score'}  "
                      f"{phases(qs, ts, scoring, 'local', traceback)}", flush=True)
        finally:
            many_pairs.shape_for = chosen
    if args.device == "gpu":
        import cupy

        pool = cupy.get_default_memory_pool()
        print(f"# {kind}: this process's GPU memory pool holds {pool.total_bytes() / 2**30:.1f}"
              f" GiB ({pool.used_bytes() / 2**30:.1f} in use)", flush=True)
    if args.parasail:
        cpu_anchor(args, kind, qs, ts, raw)
    if args.command:
        command(args, kind, raw, cells)
    if args.anchors:
        anchors(args, kind, raw, scores, cells)


#: parasail's traceback routines tried (the fastest on a sample runs the whole set)
ROUTINES = ("sw_trace_striped_16", "sw_trace_scan_16", "sw_trace_diag_16",
            "sw_trace_striped_sat")
_SHARED: dict = {}  # the pairs, for the forked workers


def _parasail_part(bounds: tuple[int, int]) -> int:
    """Pairs [a, b) by the routine in _SHARED; the sum of their scores."""
    import parasail

    q, qo, t, to, routine, kind = (_SHARED[k] for k in ("q", "qo", "t", "to", "routine",
                                                       "kind"))
    matrix = (parasail.matrix_create("ACGT", 1, -4) if kind == "dna" else parasail.blosum62)
    go, ge = (7, 1) if kind == "dna" else (11, 1)
    fn = getattr(parasail, routine)
    total = 0
    for k in range(*bounds):
        r = fn(q[qo[k]:qo[k + 1]], t[to[k]:to[k + 1]], go, ge, matrix)
        total += r.score + len(r.cigar.seq)
    return total


def cpu_anchor(args, kind: str, qs, ts, raw) -> None:
    """The CPU engine with CIGARs against parasail's fastest traceback routine, both on
    every core (parasail: a process a core), on the first --parasail pairs; with --int16,
    the engine's int16 kernel on and off and parasail in turns, alternating (best of each)."""
    import multiprocessing

    from wavedp.engines import cpu

    count = min(args.parasail, len(qs))
    q, ql, t, tl = raw
    offsets = [np.concatenate(([0], np.cumsum(x[:count]))) for x in (ql, tl)]
    _SHARED.update(q=q[:offsets[0][-1]].tobytes().decode(), qo=offsets[0].tolist(),
                   t=t[:offsets[1][-1]].tobytes().decode(), to=offsets[1].tolist(), kind=kind)
    cells = int((ql[:count] * tl[:count]).sum())
    head_q, head_t = _head(qs, count), _head(ts, count)
    scoring = SCORINGS[kind]()
    kept = cpu.WHOLE16
    widths = (True, False) if args.int16 else (kept,)

    def ours() -> float:
        return timed(lambda: wavedp.align_pairs(head_q, head_t, scoring, device="cpu"), 1)[0]

    for on in widths:  # each kernel compiled
        cpu.WHOLE16 = on
        wavedp.align_pairs(_head(qs, 1000), _head(ts, 1000), scoring, device="cpu")
    cores = len(os.sched_getaffinity(0))  # the cores this process may use (taskset)
    sample = (0, min(count, 2000))
    speed = {}
    for routine in ROUTINES:
        _SHARED["routine"] = routine
        speed[routine], _ = timed(lambda: _parasail_part(sample), 1)
    _SHARED["routine"] = best = min(speed, key=speed.get)
    size = max(1, min(2000, -(-count // (8 * cores))))  # at least eight parts a worker
    parts = [(a, min(a + size, count)) for a in range(0, count, size)]
    seconds: dict = {}
    with multiprocessing.get_context("fork").Pool(cores) as pool:
        pool.map(_parasail_part, parts[:cores])  # the workers started
        try:
            for _ in range(args.repeats):
                for on in widths:
                    cpu.WHOLE16 = on
                    seconds[on] = min(seconds.get(on, float("inf")), ours())
                theirs = timed(lambda: pool.map(_parasail_part, parts), 1)[0]
                seconds["p"] = min(seconds.get("p", float("inf")), theirs)
        finally:
            cpu.WHOLE16 = kept
    theirs = seconds["p"]
    for on in widths:
        label = {True: " int16 on", False: " int16 off"}[on] if args.int16 else ""
        print(f"{kind:8} cpu cigar {count:,} pairs on {cores} cores: wavedp{label} "
              f"{seconds[on]:.3f} s ({cells / seconds[on] / 1e9:.1f} GCUPS), parasail {best} "
              f"{theirs:.3f} s ({cells / theirs / 1e9:.1f} GCUPS): {theirs / seconds[on]:.2f}x",
              flush=True)


#: the command (the installed script, else this interpreter's module)
WAVEDP = [shutil.which("wavedp")] if shutil.which("wavedp") else [sys.executable, "-m",
                                                                  "wavedp.cli"]
#: a process that runs the command (its arguments) and prints the command's peak memory (KiB)
_PEAK = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)")
#: a process that runs the command (its arguments after the profile's path) under cProfile
#: (the command leaves by os._exit once its exit handlers ran: the profile is one)
_PROFILED = ("import atexit, cProfile, runpy, sys; path = sys.argv[1]; sys.argv = ['wavedp', "
             "*sys.argv[2:]]; p = cProfile.Profile(); "
             "atexit.register(lambda: (p.disable(), p.dump_stats(path))); p.enable(); "
             "runpy.run_module('wavedp.cli', run_name='__main__')")
#: the command line's scoring options of each kind (as SCORINGS)
OPTIONS = {"dna": ["--match", "1", "--mismatch", "-4", "--gap-open", "7", "--gap-extend", "1"],
           "protein": ["--matrix", "BLOSUM62", "--gap-open", "11", "--gap-extend", "1"]}


def command(args, kind: str, raw, cells: int) -> None:
    """``wavedp align Q T --pairs --format sam -o out.sam`` from a fresh process: its wall
    time and peak memory (the largest resident set of the process). A command on the first
    1,000 pairs runs first, untimed: the kernels compile once after an install (the CPU
    kernels into Numba's cache, the GPU ones into CuPy's), which is not what a run costs."""
    import subprocess

    if args.device == "gpu":  # this process's cached GPU memory let go, for the command's
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    folder = os.path.join(args.work, kind)
    os.makedirs(folder, exist_ok=True)
    q, ql, t, tl = raw
    qpath, tpath = os.path.join(folder, "queries.fa"), os.path.join(folder, "targets.fa")
    pairs_data.write_fasta(qpath, q, ql, "q")
    pairs_data.write_fasta(tpath, t, tl, "t")
    warm = [os.path.join(folder, f"warm_{name}.fa") for name in "qt"]
    for path, letters, lengths, name in ((warm[0], q, ql, "q"), (warm[1], t, tl, "t")):
        pairs_data.write_fasta(path, letters[:int(lengths[:1000].sum())], lengths[:1000], name)
    for fmt in ("sam", "paf"):
        subprocess.run([*WAVEDP, "align", *warm, "--pairs", "--format", fmt, "-o", os.devnull,
                        "--device", args.device, *OPTIONS[kind]], capture_output=True)
    for fmt in ("sam", "paf"):
        out = os.path.join(folder, f"out.{fmt}")
        argv = [*WAVEDP, "align", qpath, tpath, "--pairs", "--format", fmt, "-o", out,
                "--device", args.device, *OPTIONS[kind]]
        if os.path.exists(out):  # a fresh file, as the anchors' (truncated before their clock)
            os.unlink(out)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", _PEAK, *argv], capture_output=True,
                              text=True)
        seconds = time.perf_counter() - start
        peak = float(done.stdout.split()[-1]) / 2**20 if done.returncode == 0 else 0.0
        status = "" if done.returncode == 0 else f" FAILED: {done.stderr.strip()[-200:]}"
        if args.profile and fmt == "sam":
            prof = os.path.join(args.profile, f"command_{kind}.prof")
            subprocess.run([sys.executable, "-c", _PROFILED, prof, *argv[len(WAVEDP):]],
                           capture_output=True)
            import pstats

            with open(os.path.join(args.profile, f"command_{kind}.txt"), "w") as fh:
                pstats.Stats(prof, stream=fh).sort_stats("cumulative").print_stats(40)
        print(f"{kind:8} command {fmt} {seconds:8.3f} s {cells / seconds / 1e12:7.3f} TCUPS "
              f"(FASTA in, {fmt.upper()} out, fresh process; peak memory {peak:.2f} GiB)"
              f"{status}", flush=True)



def _head(s: Sequences, k: int) -> Sequences:
    k = min(k, len(s))
    end = int(s.offsets[k])
    return Sequences(s.codes[:end], s.offsets[:k + 1], list(s.ids[:k]),
                     None if s.letters is None else s.letters[:end])


def anchors(args, kind: str, raw, scores, cells: int) -> None:
    """GASAL2 (DNA: with CIGARs printed, and unprinted for its own timer) and ADEPT on the
    same pairs, where built in ``args.anchors``; their scores against wavedp's."""
    import pair_anchors

    if args.device == "gpu":  # this process's cached GPU memory let go, for the anchors'
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    folder = os.path.join(args.work, kind)
    os.makedirs(folder, exist_ok=True)
    files = pair_anchors.write_inputs(kind, *raw, folder)
    runs = [("ADEPT", lambda: pair_anchors.run_adept(kind, files, args.anchors))]
    if kind == "dna":
        runs = [("GASAL2", lambda: pair_anchors.run_gasal2(files, args.anchors)),
                ("GASAL2-unprinted", lambda: pair_anchors.run_gasal2(
                    files, args.anchors, print_results=False)), *runs]
    for name, run in runs:
        result, why = run()
        if result is None:
            print(f"{kind:8} {name}: not run ({why})", flush=True)
            continue
        same = ""
        if result.get("scores") is not None and scores is not None:
            got = np.asarray(result["scores"])
            same = f"scores equal {int((got == scores[:got.size]).sum()):,}/{got.size:,}"
        own = result.get("own_seconds")
        print(f"{kind:8} {name:16} whole {result['seconds']:.3f} s "
              f"({cells / result['seconds'] / 1e12:.4f} TCUPS)"
              + (f", own timer {own:.3f} s ({cells / own / 1e12:.4f} TCUPS)" if own else "")
              + f"  {same}", flush=True)
    print(f"# {pair_anchors.scoring_note(kind)}", flush=True)


def copies(size: int = 900 << 20) -> None:
    """The copy floor of the residues: ``size`` bytes up from pageable memory (one plain
    copy; through the engine's page-locked buffers), from page-locked memory, and the host's
    own copy rate (its threads, pageable to pageable)."""
    import cupy

    from wavedp.engines.cuda.staging import pinned

    host = np.random.default_rng(1).integers(0, 4, size, dtype=np.uint8)
    locked = pinned(size)
    locked[:] = host
    dev = cupy.empty(size, cupy.uint8)
    other = np.empty_like(host)

    def plain():
        dev.set(host)
        cupy.cuda.Device().synchronize()

    def staged():
        transfer.upload(host)
        cupy.cuda.Device().synchronize()

    def from_locked():
        dev.data.copy_from_host_async(locked.ctypes.data, size)
        cupy.cuda.Device().synchronize()

    rates = []
    for name, call in (("pageable", plain), ("staged", staged), ("page-locked", from_locked),
                       ("host copy", lambda: transfer.host_copy(other, host))):
        call()
        seconds, _ = timed(call, 3)
        rates.append(f"{name} {size / seconds / 1e9:.1f} GB/s")
    print(f"# copies of {size / 2**20:.0f} MiB: " + ", ".join(rates), flush=True)
    contended(host, locked, dev)


def copy_threads(threads: int | None) -> None:
    """The engine's host copies on ``threads`` threads (None: as many as it chose; at most
    ``wavedp.threads.HELPERS``)."""
    transfer.THREADS = _KEPT_THREADS if threads is None else threads


def contended(host: np.ndarray, locked: np.ndarray, dev, chunk: int = 96 << 20) -> None:
    """The host's copy of a chunk into page-locked memory (the pipeline's step,
    ``transfer.host_copy``) with 4, 8 and 16 threads, alone and while page-locked memory goes
    up to the GPU (the pipeline's condition): whether the copies up slow the host's writes."""
    import cupy

    from wavedp.engines.cuda.staging import pinned

    slot = pinned(chunk)
    stream = cupy.cuda.Stream(non_blocking=True)
    rows = []
    try:
        for threads in (4, 8, 16):
            copy_threads(threads)
            for busy in (False, True):
                transfer.host_copy(slot, host[:chunk])
                if busy:
                    dev.data.copy_from_host_async(locked.ctypes.data, locked.size, stream)
                start = time.perf_counter()
                for k in range(8):
                    a = (k * chunk) % (host.size - chunk)
                    transfer.host_copy(slot, host[a:a + chunk])
                seconds = time.perf_counter() - start
                stream.synchronize()
                rows.append(f"{threads} threads{' during a copy up' if busy else ''} "
                            f"{8 * chunk / seconds / 1e9:.1f} GB/s")
    finally:
        copy_threads(None)
    print("# host writes of 96 MiB into page-locked memory: " + ", ".join(rows), flush=True)


def profiled(path: str, call) -> None:
    """``call()`` once under cProfile, its 30 costliest functions (own time) into ``path``."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.runcall(call)
    with open(path, "w") as fh:
        pstats.Stats(prof, stream=fh).sort_stats("tottime").print_stats(30)


def all_against_all(args) -> None:
    q_count, t_count = (int(v) for v in args.all_against_all.split("x"))
    scoring, qs, ts, _ = encoded("protein", max(q_count, t_count))
    texts_q = [qs.text(k, scoring.alphabet) for k in range(q_count)]
    texts_t = [ts.text(k, scoring.alphabet) for k in range(t_count)]
    cells = int(qs.lengths[:q_count].sum()) * int(ts.lengths[:t_count].sum())
    for traceback in (False, True):
        def call(tb=traceback):
            return wavedp.align_all(texts_q, texts_t, scoring, traceback=tb,
                                    device=args.device)
        call()
        seconds, batch = timed(call, args.repeats)
        what = "cigar" if traceback else "score"
        print(f"all-against-all {q_count}x{t_count} {what} {seconds * 1e3:.1f} ms "
              f"{cells / seconds / 1e12:.3f} TCUPS (from strings)  "
              f"{check(batch, texts_q, texts_t, scoring, 'local', traceback, args.check)}",
              flush=True)
        if args.profile:
            profiled(os.path.join(args.profile, f"all_{what}.txt"), call)
        if args.timeline:
            head_q, head_t = _head(qs, q_count), _head(ts, t_count)
            timeline(head_q, head_t, scoring, traceback, every=True)  # compiled
            print(f"# all-against-all {what} timeline (ms)\n"
                  f"{timeline(head_q, head_t, scoring, traceback, every=True)}", flush=True)
    switched(args, f"all-against-all {q_count}x{t_count}", lambda tb: wavedp.align_all(
        texts_q, texts_t, scoring, traceback=tb, device=args.device))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=("dna", "protein", "both"), default="both")
    parser.add_argument("--count", type=int, default=None,
                        help="pairs (default 2,000,000 DNA, 500,000 protein)")
    parser.add_argument("--modes", default="local,global,semiglobal")
    parser.add_argument("--device", default="gpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", choices=("score", "cigar", "both"), default="both",
                        help="the calls timed a mode: score-only, with CIGARs, or both")
    parser.add_argument("--check", type=int, default=2000, help="pairs checked on the CPU")
    parser.add_argument("--strings", action="store_true", help="also from Python strings")
    parser.add_argument("--anchors", default=None, help="folder of built GASAL2/ADEPT")
    parser.add_argument("--work", default="/tmp/pairs-bench", help="anchors' input files")
    parser.add_argument("--all-against-all", default=None, metavar="QxT")
    parser.add_argument("--parasail", type=int, default=0, metavar="N",
                        help="also the CPU engine with CIGARs beside parasail on N pairs")
    parser.add_argument("--int16", action="store_true",
                        help="with --parasail: the CPU engine's int16 kernel on and off")
    parser.add_argument("--groups", default="", metavar="LIST",
                        help="also the GPU engine's phases with these group sizes forced")
    parser.add_argument("--profile", default=None, metavar="DIR",
                        help="one API call and the SAM command once more under cProfile, "
                        "their tables in DIR (with --all-against-all: one align_all call)")
    parser.add_argument("--command", action="store_true",
                        help="also the command, FASTA in, SAM and PAF out")
    parser.add_argument("--switch", action="append", default=[], metavar="NAME=LIST",
                        help="also local calls (with --all-against-all: its calls) "
                        "with the engine's constant NAME (of "
                        "engines/cuda/many_pairs.py, or MODULE.NAME of another module there) "
                        "at each value of LIST, turns alternating; repeatable")
    parser.add_argument("--timeline", action="store_true",
                        help="also one local call's marks (host and GPU clocks)")
    parser.add_argument("--copies", action="store_true",
                        help="also the copy rates up to the GPU (the residues' floor)")
    args = parser.parse_args()
    if args.copies:
        copies()
    args.modes = args.modes.split(",")
    args.calls = {"score": (False,), "cigar": (True,), "both": (False, True)}[args.calls]
    args.groups = [int(g) for g in args.groups.split(",") if g]
    args.switch = [(name, [ast.literal_eval(v) for v in values.split(",")])
                   for name, _, values in (item.partition("=") for item in args.switch)]
    for name, _ in args.switch:  # a misspelt name stops the run before any work
        _constant(name)
    if args.all_against_all:
        all_against_all(args)
        return
    for kind in ("dna", "protein") if args.kind == "both" else (args.kind,):
        count = args.count
        args.count = count or (2_000_000 if kind == "dna" else 500_000)
        pairs_run(args, kind)
        args.count = count


if __name__ == "__main__":
    main()
