"""Statistics of a search's scores (``docs/design.md``): BLAST's Karlin-Altschul tables
(``karlin_altschul.py``), composition-based rescoring (``composition.py``, its compiled
kernels in ``composition_kernels.py``), the empirical fit of extreme values
(``empirical.py``, its compiled likelihood in ``likelihood.py``), the ``--stats`` methods
(``significance.py``) and low-complexity masking (``masking.py``)."""
