"""The ``wavedp`` command line: one module per family of commands (``align``, ``search``:
makedb and search, ``predict``: calibrate and predict, ``polyadic``: chain and fold, ``info``;
the lab's group lives in ``wavedp.lab.commands``), their shared options and output in
``common``.

User errors print one line, ``wavedp: error: <message>``, and exit with status 2; a GPU or
cluster failing mid-run exits with status 1, Ctrl-C with 130.
"""

from __future__ import annotations

import os
import sys

import click

from ..errors import DeviceError, InputError
from ..lab.commands import lab
from ..version import __version__
from . import align, info, polyadic, predict, search
from .common import USAGE_EXIT, error

_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", None)  # click >= 8.2


class _Cli(click.Group):
    """Turns InputError and click's usage errors into one stderr line and exit status 2."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        args = sys.argv[1:] if args is None else list(args)
        extra.setdefault("obj", {"argv": args})
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name or "wavedp", complete_var, False, **extra)
        except InputError as exc:
            error(str(exc))
            sys.exit(USAGE_EXIT)
        except DeviceError as exc:  # the GPU or cluster failed mid-run: one line, no traceback
            error(str(exc))
            sys.exit(1)
        except click.ClickException as exc:
            if _NO_ARGS_IS_HELP is not None and isinstance(exc, _NO_ARGS_IS_HELP):
                exc.show()  # bare ``wavedp``: the help text, as click prints it
                sys.exit(USAGE_EXIT)
            error(exc.format_message())
            sys.exit(USAGE_EXIT if isinstance(exc, click.UsageError) else exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            error("interrupted")
            sys.exit(130)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(name="wavedp", cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="wavedp")
def cli() -> None:
    """wavedp: exact dynamic programming (Smith-Waterman/Gotoh and friends) on CPUs and GPUs."""


for command in (align.align, search.makedb, search.search_command, info.info, lab,
                polyadic.chain, polyadic.fold, predict.calibrate, predict.predict_command):
    cli.add_command(command)


def main() -> None:
    """Console-script entry point (``wavedp = "wavedp.cli:main"``)."""
    cli()


if __name__ == "__main__":
    main()
