"""Length partitioning (PaSWAS): the schedulers that cut queries x database into GPU launches
live with the GPU scan (``wavedp.engines.cuda.scan.partition``); this is their public name."""

from ..engines.cuda.scan.partition import (
    PARTITIONS,
    SCHEDULERS,
    Batch,
    Need,
    check,
    check_partition,
    dynamic1,
    dynamic2,
    none,
    padding,
    partition,
    paswas_need,
    static,
)

__all__ = ["PARTITIONS", "SCHEDULERS", "Batch", "Need", "check", "check_partition", "dynamic1",
           "dynamic2", "none", "padding", "partition", "paswas_need", "static"]
