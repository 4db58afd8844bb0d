"""``wavedp.distributed``: a Dask client for ``wavedp.search(..., client=...)``. The cluster
search itself lives in ``wavedp.search.cluster``; this is its public name."""

from .search.cluster import CONNECT_TIMEOUT, ClusterScanner, close, connect

__all__ = ["CONNECT_TIMEOUT", "ClusterScanner", "close", "connect"]
