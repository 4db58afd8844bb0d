"""A call's marks for the benchmarks: each phase's seconds (the GPU waited for at each
phase's end, so nothing overlaps), or a timeline of host seconds and GPU events (nothing
waited for)."""

from __future__ import annotations

import time


class Clock:
    """Phases' seconds into a dict, each phase waited for; or marks into a timeline, nothing
    waited for (neither: nothing)."""

    def __init__(self, phases: dict[str, float] | None, timeline: list | None = None) -> None:
        self.phases, self.timeline, self.now = phases, timeline, time.perf_counter
        self.last = self.start = self.now()

    def __call__(self, name: str, stream=None) -> None:
        import cupy

        if self.timeline is not None:
            stream = stream or cupy.cuda.get_current_stream()
            self.timeline.append((name, self.now() - self.start, stream.record()))
        if self.phases is None:
            return
        cupy.cuda.Device().synchronize()
        now = self.now()
        self.phases[name] = self.phases.get(name, 0.0) + now - self.last
        self.last = now
