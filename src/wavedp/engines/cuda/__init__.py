"""The CUDA engine: CuPy launchers of the kernels in ``wavedp/kernels`` (CuPy is imported
only when a kernel runs, so ``import wavedp`` works without it).

- ``pairs``: pairwise alignment, the strategy a parameter (``multipass``, the lab's
  ``diagonal`` and ``tiled``); ``multipass`` (one-kernel multi-pass wavefront), ``batch``
  (many small pairs per launch, a warp each), ``traceback`` (linear-space), ``diagonal``,
  ``tiled``; ``sync``: the synchronization strategies between steps;
- ``hits``: non-intersecting local alignments (Waterman-Eggert) in rounds;
- ``scan``: the database scan (its shapes, scanner, cost model, planner and calibration);
- ``gpus``: several GPUs of one machine;
- ``polyadic``: the blocked min-plus engine; ``module``, ``staging``, ``hostmem``: kernels
  compiled once, launch inputs in one copy, page-locked host memory.
"""
