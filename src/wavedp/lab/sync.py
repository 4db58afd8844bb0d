"""The synchronization strategies, one parameter everywhere: they live with the CUDA engine
(``wavedp.engines.cuda.sync``), which runs them in production; this name keeps them where the
lab's users look for them."""

from ..engines.cuda.sync import (
    BARRIER_SYNCS,
    HOST_SYNCS,
    KINDS,
    SYNCS,
    TIMEOUT_NS,
    TUNED,
    TUNED_KINDS,
    HostSteps,
    Persistent,
    Runnable,
    check_blocks,
    check_sync,
    co_resident,
    co_resident_limit,
    kernel,
    limit,
    multiprocessors,
)

__all__ = ["BARRIER_SYNCS", "HOST_SYNCS", "KINDS", "SYNCS", "TIMEOUT_NS", "TUNED", "TUNED_KINDS",
           "HostSteps", "Persistent", "Runnable", "check_blocks", "check_sync", "co_resident",
           "co_resident_limit", "kernel", "limit", "multiprocessors"]
