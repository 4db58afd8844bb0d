"""The Dask cluster of ``wavedp search --scheduler`` or ``--cluster local``, connected once the
input is validated."""

from __future__ import annotations

import click

from ..dbsearch import cluster as dask_cluster

#: seconds ``search --scheduler`` waits for the Dask scheduler to answer
CONNECT_TIMEOUT = dask_cluster.CONNECT_TIMEOUT


class Dask:
    """The Dask client of ``--scheduler`` or ``--cluster local``: connected when the search
    asks for it (after the input is validated); ``close`` closes it and a cluster it
    started."""

    def __init__(self, scheduler: str | None, cluster: str | None,
                 workers: int | None) -> None:
        self.scheduler, self.cluster, self.workers = scheduler, cluster, workers
        self.client = None

    def __call__(self):
        self.client = dask_cluster.connect(self.scheduler, self.cluster, self.workers,
                                           timeout=CONNECT_TIMEOUT)
        threads = self.client.nthreads()
        click.echo(f"wavedp: using the Dask cluster at {self.client.scheduler.address} "
                   f"({len(threads)} workers, {sum(threads.values())} threads)", err=True)
        return self.client

    def close(self) -> None:
        if self.client is not None:
            dask_cluster.close(self.client)
