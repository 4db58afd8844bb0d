"""wavedp's version: the one place it is written (``pyproject.toml`` reads it from here;
a constant, so that a command does not pay for ``importlib.metadata`` at start-up)."""

__version__ = "0.1.0"
