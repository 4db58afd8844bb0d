"""The GPU database scan, in one package (imported module by module: ``scanner`` loads Numba
and the planner, which CPU-only work never needs).

- ``shapes``: the scan kernel's constants and shape planning (lanes, rows, passes, grid,
  memory), the query profile's layout;
- ``scanner``: :class:`~.scanner.Scanner`, the driver: the database on the GPU (resident or
  streamed), the launches, the 32-bit rescoring;
- ``select``: each query's best entries chosen on the GPU;
- ``model``: the GPU model a scan plans with (calibration, else ``h100`` constants);
- ``cost``: the cost model of a launch (host and GPU seconds); ``waves``: its ticket-by-ticket
  simulation of launches of few tickets per block;
- ``partition``: the PaSWAS schedulers (none, static, dynamic1, dynamic2); ``lines``: the
  lengths they cut (subjects sorted once, runs of equal lengths, the budget's caps);
- ``planner``: a partitioning's launches priced, and ``auto``; ``ranges``: many launches
  priced at once on the runs of lengths of their ranges; ``choices``: ``auto``'s choice kept;
- ``calibrate``: ``wavedp calibrate`` on the GPU (``h100``: the constants it wrote on an H100).
"""
