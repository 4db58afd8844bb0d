"""The lab: every GPU synchronization strategy of the source papers, measured (docs/design.md,
"The lab").

- ``sync``: the strategies (cpu-explicit, cpu-implicit, graph, simple, tree2, tree3,
  lockfree, grid) and how a computation of dependent steps runs under each;
- ``barriers``: the barrier micro-benchmark, the stress check and the stuck-block check;
- ``fft``, ``sort``, ``swat``: FFT, bitonic sort and Smith-Waterman under every strategy;
- ``model``: Xiao and Feng's time model and its fits; ``timing``: CUDA-event timing;
- ``report``, ``claims``, ``suite``: tables, plots, the papers' claims checked, whole runs;
- ``commands``: the ``wavedp lab`` command group.

Importing this package needs no GPU; CuPy is imported where a GPU is used.
"""
