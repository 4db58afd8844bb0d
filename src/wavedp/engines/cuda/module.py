"""CUDA sources under ``wavedp/kernels``: loaded with importlib.resources, compiled once per
process by ``cupy.RawModule`` (NVRTC; CuPy caches binaries on disk across processes)."""

from __future__ import annotations

import functools
import glob
import os
import re
from importlib import resources

#: every kernel file and the template instances the launchers use
KERNELS: dict[str, list[str]] = {
    "multipass.cu": [
        f"multipass<{mode}, {rows}, {dirs}, {profile}>"
        for mode in (0, 1, 2)
        for rows, dirs in ((8, "false"), (16, "false"), (32, "false"), (4, "true"),
                           (8, "true"))
        for profile in ("signed char", "int")
    ],
    # the lab's strategies (wavedp/lab): storages x barrier kinds (lab/sync.py's KINDS)
    "diagonal.cu": [f"diagonal_step<{s}>" for s in (0, 1)]
    + [f"diagonal_sweep<{s}, {k}>" for s in (0, 1) for k in range(6)],
    "tiled.cu": ["tiled_step"] + [f"tiled_sweep<{k}>" for k in range(6)],
    "lab_barriers.cu": ["mean_step", "stress_step"] + [f"mean_rounds<{k}>" for k in range(6)]
    + [f"stress_rounds<{k}>" for k in range(1, 6)]
    + [f"cluster_rounds<{kind}, {cs}>" for kind in (0, 1) for cs in (2, 4, 8)],
    "lab_fft.cu": ["fft_stage"] + [f"fft_stages<{k}>" for k in range(6)],
    "lab_sort.cu": [f"sort_step<{t}>" for t in ("int", "float")]
    + [f"sort_steps<{t}, {k}>" for t in ("int", "float") for k in range(6)],
    "lab_energy.cu": ["energy_add", "energy_max", "energy_max16", "energy_shared",
                      "energy_shared16", "energy_stream"],
    "search.cu": [
        f"scan<{mode}, {lanes}, {rows}, {packed}>"
        for mode, packed in ((0, "true"), (0, "false"), (1, "false"), (2, "false"))
        for lanes in (4, 8, 16, 32) for rows in (4, 8, 12, 16, 20, 24, 28, 32)
    ] + ["build_profiles", "scatter_scores", "hold"],
    "batch.cu": [
        f"align_batch<{mode}, {rows}, {dirs}, false, {prof}>"
        for mode in (0, 1, 2) for rows in (4, 8) for dirs in ("true", "false")
        for prof in ("true", "false")
    ] + [f"align_batch<0, {rows}, true, true, false>" for rows in (4, 8)],
    "many_pairs.cu": [
        f"many_pairs<{mode}, {lanes}, 8, {save}>" for mode in (0, 1, 2)
        for lanes in (4, 8, 16, 32) for save in ("true", "false")
    ],
    "many_pairs16.cu": [
        f"many_pairs16<{mode}, {lanes}, 8, {save}, {prof}, {swap}>" for mode in (0, 1, 2)
        for lanes in (4, 8, 16, 32) for save in ("true", "false") for prof in ("true", "false")
        for swap in ("true", "false")
    ] + [f"many_pairs16<{mode}, {lanes}, 16, false, true, {swap}>" for mode in (0, 1, 2)
         for lanes in (4, 8, 16, 32) for swap in ("true", "false")],
    "pairs_trace.cu": [f"trace_saved<{mode}, {lanes}>" for mode in (0, 1, 2)
                       for lanes in (4, 8, 16, 32)]
    + [f"trace_dirs<{mode}, {lanes}, {swap}>" for mode in (0, 1, 2) for lanes in (4, 8, 16, 32)
       for swap in ("true", "false")]
    + ["pack_runs"],
    "nibbles.cu": ["unpack_nibbles"],
    "cross.cu": ["cross_pairs"],
    "ceiling.cu": ["ceiling<16>"],
    "endcell.cu": ["best_cell"],
    "select.cu": ["chunk_best", "chunk_keys"],
    "polyadic.cu": [
        *(f"product<{v}, {w}, {tile}, {pack}>"
          for v, packs in (("int", ("false", "true")), ("long long", ("false",)),
                           ("float", ("false",)), ("double", ("false",)))
          for pack in packs for w in ("false", "true") for tile in (32, 64)),
        *(f"{k}<{v}>" for k in ("finalize", "reduce", "init")
          for v in ("int", "long long", "float", "double")),
        "walk",
    ],
}


def _cuda_includes() -> tuple[str, ...]:
    """``-I`` options for an installed CUDA toolkit's headers (NVRTC has no copy of
    ``cooperative_groups.h``, which kernels/barriers.cuh includes, nor of the CCCL headers it
    needs); none where no toolkit is found."""
    roots = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda",
             *sorted(glob.glob("/usr/local/cuda-*"), reverse=True)]
    for root in filter(None, roots):
        include = os.path.join(root, "include")
        if os.path.isfile(os.path.join(include, "cooperative_groups.h")):
            return tuple(f"-I{d}" for d in (include, os.path.join(include, "cccl"))
                         if os.path.isdir(d))
    return ()


OPTIONS = ("--std=c++17", *_cuda_includes())


@functools.cache
def source(name: str) -> str:
    """Text of one kernel file with the ``#include "*.cuh"`` headers it names inlined, and
    theirs, each once (NVRTC sees one unit); read once per process (a search loads a module
    per kernel instance)."""
    kernels = resources.files("wavedp.kernels")
    seen: set[str] = set()

    def inlined(m: re.Match) -> str:
        if m[1] in seen:
            return ""
        seen.add(m[1])
        return re.sub(r'#include "(\w+\.cuh)"', inlined, kernels.joinpath(m[1]).read_text())
    return re.sub(r'#include "(\w+\.cuh)"', inlined, kernels.joinpath(name).read_text())


@functools.cache
def module(name: str, cooperative: bool = False):
    """The compiled ``cupy.RawModule`` of one kernel file (compiled once per process);
    ``cooperative``: its kernels launch cooperatively (co-resident grids, ``grid.sync()``)."""
    import cupy

    return cupy.RawModule(code=source(name), options=OPTIONS,
                          name_expressions=KERNELS[name], enable_cooperative_groups=cooperative)


#: files whose instances are compiled one at a time, on first use (a search
#: needs two or three of search.cu's 128)
SEPARATE = {"search.cu", "batch.cu", "many_pairs.cu", "many_pairs16.cu", "pairs_trace.cu"}


@functools.cache
def function(name: str, expression: str, cooperative: bool = False):
    """One kernel (a template instance from KERNELS) of one file (``cooperative``: see
    :func:`module`)."""
    if name in SEPARATE:
        import cupy

        return cupy.RawModule(code=source(name), options=OPTIONS,
                              name_expressions=[expression]).get_function(expression)
    return module(name, cooperative).get_function(expression)


def compile_cubin(name: str, expressions: list[str], arch: str) -> bytes:
    """The kernel file ``name`` with the template instances ``expressions`` compiled with
    NVRTC for ``arch`` (no GPU needed), as CuPy returns the binary (see
    ``lab.sass.cubin`` for the whole ELF). Raises RuntimeError with NVRTC's log on failure."""
    from cupy.cuda import nvrtc

    prog = nvrtc.createProgram(source(name), name, [], [])
    try:
        for expr in expressions:
            nvrtc.addNameExpression(prog, expr)
        try:
            nvrtc.compileProgram(prog, [*OPTIONS, f"--gpu-architecture={arch}"])
        except nvrtc.NVRTCError as exc:
            raise RuntimeError(f"{name} ({arch}): {exc}\n{nvrtc.getProgramLog(prog)}") from exc
        for expr in expressions:
            nvrtc.getLoweredName(prog, expr)
        return nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
