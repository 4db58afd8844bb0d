"""CUDA sources under ``wavedp/kernels``: loaded with importlib.resources, compiled once per
process by ``cupy.RawModule`` (NVRTC; CuPy caches binaries on disk across processes)."""

from __future__ import annotations

import functools
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
    "diagonal.cu": [f"diagonal<{mode}>" for mode in (0, 1, 2)],
    "search.cu": [
        f"scan<{mode}, {rows}, {packed}>"
        for mode, packed in ((0, "true"), (0, "false"), (1, "false"), (2, "false"))
        for rows in (4, 8, 12, 16, 20, 24, 28, 32)
    ],
    "ceiling.cu": ["ceiling<16>"],
    "endcell.cu": ["best_cell"],
}

OPTIONS = ("--std=c++17",)


def source(name: str) -> str:
    """Text of one kernel file, with the shared header inlined (NVRTC sees one unit)."""
    kernels = resources.files("wavedp.kernels")
    text = kernels.joinpath(name).read_text()
    header = kernels.joinpath("common.cuh").read_text()
    return text.replace('#include "common.cuh"', header)


@functools.cache
def module(name: str):
    """The compiled ``cupy.RawModule`` of one kernel file (compiled once per process)."""
    import cupy

    return cupy.RawModule(code=source(name), options=OPTIONS,
                          name_expressions=KERNELS[name])


#: files whose instances are compiled one at a time, on first use (a search needs two or
#: three of search.cu's 32; compiling them all took 34 s on the H100 machine)
SEPARATE = {"search.cu"}


@functools.cache
def function(name: str, expression: str):
    """One kernel (a template instance from KERNELS) of one file."""
    if name in SEPARATE:
        import cupy

        return cupy.RawModule(code=source(name), options=OPTIONS,
                              name_expressions=[expression]).get_function(expression)
    return module(name).get_function(expression)


def compile_all(arch: str) -> dict[str, int]:
    """Compile every kernel file with NVRTC for ``arch`` (e.g. ``sm_90``) without a GPU.

    Returns the size of each resulting binary; raises RuntimeError with NVRTC's log on failure.
    """
    from cupy.cuda import nvrtc

    sizes = {}
    for name, expressions in KERNELS.items():
        prog = nvrtc.createProgram(source(name), name, [], [])
        try:
            for expr in expressions:
                nvrtc.addNameExpression(prog, expr)
            try:
                nvrtc.compileProgram(prog, [*OPTIONS, f"--gpu-architecture={arch}"])
            except nvrtc.NVRTCError as exc:
                raise RuntimeError(f"{name} ({arch}): {exc}\n{nvrtc.getProgramLog(prog)}") \
                    from exc
            for expr in expressions:
                nvrtc.getLoweredName(prog, expr)
            sizes[name] = len(nvrtc.getCUBIN(prog))
        finally:
            nvrtc.destroyProgram(prog)
    return sizes
