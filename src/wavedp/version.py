"""The installed version of wavedp (``0.0.0+src`` when running from a source tree)."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("wavedp")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+src"
