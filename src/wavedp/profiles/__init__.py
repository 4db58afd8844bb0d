"""Position-specific scoring: a query's PSSM (:class:`Profile`), read and written in
PSI-BLAST's ASCII format, and scored by the engines as a substitution table whose rows are
the query's positions."""

from .pssm import LETTERS, Profile, parse

__all__ = ["LETTERS", "Profile", "parse"]
