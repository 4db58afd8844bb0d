"""The ``wavedp`` command line: one module per family of commands (``align``, ``makedb``,
``search``, ``predict``: calibrate and predict, ``polyadic``: chain and fold, ``info``; the
lab's group lives in ``wavedp.lab.commands``), their shared options and output in
``common``. A command's module is imported when the command runs (or help lists it), so
that a command imports only what it needs (``search --server``: no NumPy).

User errors print one line, ``wavedp: error: <message>``, and exit with status 2; a GPU or
cluster failing mid-run exits with status 1; Ctrl-C with 130, SIGTERM with 143 and SIGHUP with
129, each after removing the command's temporary files; a closed standard output (``| head``)
ends quietly with status 0.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import importlib
import os
import signal
import sys
import warnings
from collections.abc import Iterator

import click

from ..errors import DeviceError, EmptyWarning, InputError, StatisticsWarning
from ..stops import Stopped, stop_on_signals
from ..version import __version__
from .outputs import OutputError

#: exit status for user errors (click's usage errors use it too)
USAGE_EXIT = 2
#: each command and where it is defined (module, relative to this package, and name)
COMMANDS = {
    "align": (".align", "align"),
    "makedb": (".makedb", "makedb"),
    "fetch": (".fetch", "fetch"),
    "serve": (".serve", "serve"),
    "search": (".search", "search_command"),
    "scores": (".scores", "scores_command"),
    "info": (".info", "info"),
    "lab": ("..lab.commands", "lab"),
    "chain": (".polyadic", "chain"),
    "fold": (".polyadic", "fold"),
    "calibrate": (".predict", "calibrate"),
    "predict": (".predict", "predict_command"),
}
_NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", None)  # click >= 8.2
#: write errors of a full or failing output device: one line, as an output error
_WRITE_ERRNOS = (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG)


def error(message: str) -> None:
    """``wavedp: error: MESSAGE`` on stderr, on one line."""
    click.echo(f"wavedp: error: {' '.join(str(message).split())}", err=True)


#: a command was stopped (a signal, Ctrl-C): :func:`main` then ends without the exit
#: handlers, removing wavedp's temporary files itself
_stopped = False


def _stop() -> None:
    global _stopped
    _stopped = True


class Interrupted(BaseException):
    """Ctrl-C during a command: raised past click, whose own handler would print an empty
    line before our one."""


class ClosedPipe(BaseException):
    """Standard output's reader went away (``wavedp search ... | head``): raised past click,
    which would turn the BrokenPipeError into exit status 1."""


@contextlib.contextmanager
def _warnings_as_lines() -> Iterator[None]:
    """wavedp's own warnings as one ``wavedp: warning:`` line on stderr each."""
    with warnings.catch_warnings():
        shown = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None) -> None:
            if issubclass(category, (EmptyWarning, StatisticsWarning)):
                click.echo(f"wavedp: warning: {' '.join(str(message).split())}", err=True)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush of a closed or
    failing stream prints nothing."""
    try:
        fileno = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test runner's)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)


class _Cli(click.Group):
    """Turns InputError and click's usage errors into one stderr line and exit status 2;
    imports a command's module when it is asked for (:data:`COMMANDS`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        if cmd_name == "search":  # a server asked with options it takes: the thin client
            from . import remote

            argv = (ctx.obj or {}).get("argv", [])
            if cmd_name in argv and remote.takes(argv[argv.index(cmd_name) + 1:]):
                return remote.search
        return getattr(importlib.import_module(where[0], __name__), where[1])

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted from None
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise ClosedPipe from None
            raise

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        args = sys.argv[1:] if args is None else list(args)
        extra.setdefault("obj", {"argv": args})
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            with stop_on_signals(), _warnings_as_lines():
                rv = super().main(args, prog_name or "wavedp", complete_var, False, **extra)
        except OutputError as exc:
            error(str(exc))
            _quiet_stdout()
            sys.exit(USAGE_EXIT)
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
        except (click.Abort, KeyboardInterrupt, Interrupted):
            error("interrupted")
            _stop()
            sys.exit(130)
        except Stopped as exc:
            error(f"stopped by {signal.Signals(exc.signum).name}")
            _stop()
            sys.exit(128 + exc.signum)
        except (BrokenPipeError, ClosedPipe):  # a reader such as ``head`` closed stdout: done
            _quiet_stdout()
            sys.exit(0)
        except OSError as exc:
            if exc.errno not in _WRITE_ERRNOS:
                raise
            error(f"cannot write the output: {exc.strerror or exc}")
            _quiet_stdout()
            sys.exit(USAGE_EXIT)
        except Exception as exc:  # last: the clauses above come first
            if not _gpu_fault(exc):
                raise
            error(f"the GPU failed: {type(exc).__name__}: {exc} (another process may hold "
                  "its memory: nvidia-smi lists them)")
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def _gpu_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is CuPy's or the CUDA runtime's (out of memory, a failed launch)."""
    return type(exc).__module__.split(".")[0] in ("cupy", "cupy_backends")


@click.group(name="wavedp", cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="wavedp")
def cli() -> None:
    """wavedp: exact dynamic programming (Smith-Waterman/Gotoh and friends) on CPUs and GPUs."""


def main() -> None:
    """Console-script entry point (``wavedp = "wavedp.cli:main"``). A finished command leaves
    at once: its outputs are closed and the exit handlers run, then the process ends without
    the interpreter's teardown (freeing every module's objects, CuPy's memory pools and the
    CUDA context one by one took about 0.4 s after a GPU search). A stopped one removes its
    temporary files and ends without the exit handlers: the CPU pool's threads may still be
    in a kernel, and a stop during the first run's compiling once ended in a segfault there
    (a CI run)."""
    try:
        cli()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if not isinstance(code, (int, type(None))):
        error(str(code))
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    if _stopped:  # the CPU pool's threads may still run (or compile) a kernel: the libraries'
        from ..seqio import remove_temporaries  # exit handlers (Numba's, LLVM's) are left out

        remove_temporaries()
    else:
        atexit._run_exitfuncs()
    os._exit(status)


if __name__ == "__main__":
    main()
