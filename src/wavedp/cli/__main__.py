"""``python -m wavedp.cli``: the ``wavedp`` command."""

from . import main

main()
