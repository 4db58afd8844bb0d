"""The errors (and the one warning) wavedp raises for its users."""


class InputError(ValueError):
    """Something the user got wrong: bad file, bad residue, bad parameter, resource limit.

    The message names the file, record id, 1-based position and offending value where
    they apply. The CLI prints it as one line and exits with status 2.
    """


class DeviceError(RuntimeError):
    """The GPU or the cluster failed mid-run (a bounded spin-wait timed out, a launch failed,
    a Dask cluster stopped running a search's tasks)."""


class EmptyWarning(UserWarning):
    """A search met empty sequences: they have no hits (``docs/design.md``, "Search"); the CLI
    prints it as one ``wavedp: warning:`` line."""


class StatisticsWarning(UserWarning):
    """Some queries of a search get no E-values (no fit was possible and BLAST has no table
    for the scoring); the CLI prints it as one ``wavedp: warning:`` line, once."""
