"""The ``ppk`` parser, assembled from the command families, and :func:`main`: it runs a command and
answers errors, Ctrl-C and a closed pipe in the command line's terms."""
from __future__ import annotations

import argparse
import os
import re
import sys

from .. import __version__

#: What ``ppk --version`` prints.
_VERSION = f"ppk {__version__}"

#: Python names that differ from the flag a user typed
_FLAG_OF = {"n_stakeholders": "--stakeholders", "max_workers": "--jobs", "rng": "--seed", "strict": "--at-least"}


def build_parser() -> argparse.ArgumentParser:
    # the families load numpy and the C++ core: imported here, not at the top, so ``ppk --version`` needs neither
    from . import _compose, _count, _evaluate, _histogram, _pk, _plan, _related, _samplers, _shuffle

    parser = argparse.ArgumentParser(
        prog="ppk",
        description="Differential privacy under partial background knowledge: the attacker knows only "
                    "some rows; the rows they do not know act as natural noise.")
    parser.add_argument("--version", action="version", version=_VERSION)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # in the order ``ppk --help`` lists their commands
    for family in (_count, _histogram, _plan, _compose, _shuffle, _evaluate, _related, _samplers, _pk):
        family.register(sub)
    return parser


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """dest -> flag for every option of every command."""
    out: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out.update(_flags(sub))
        elif action.option_strings and action.dest not in ("help", "version"):
            out[action.dest] = max(action.option_strings, key=len)
    return out


def _in_cli_terms(message: str, parser: argparse.ArgumentParser) -> str:
    """'kappa2 must be > 0' -> '--kappa2 must be > 0': the names the user typed, not Python's."""
    names = {**_flags(parser), **_FLAG_OF}

    def flag(match: re.Match) -> str:
        return names.get(match.group(1), match.group(1)) + match.group(2)
    return re.sub(r"\b([A-Za-z_][A-Za-z0-9_]*)( must| =|=| is too)", flag, message)


def _interrupted(exc: BaseException) -> bool:
    """Whether a KeyboardInterrupt stands behind ``exc`` (its ``__context__`` or ``__cause__`` chain)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


def _command_name(args: argparse.Namespace) -> str:
    """'ppk sp tables', 'ppk delta': the command as typed, for messages."""
    words = [args.command] + [getattr(args, f"{args.command}_command", None) or ""]
    return "ppk " + " ".join(w for w in words if w)


def _typed_name(argv: list[str]) -> str:
    """'ppk sp tables' from the arguments alone, for a Ctrl-C before they are parsed."""
    words: list[str] = []
    for arg in argv:
        if arg.startswith("-"):
            break
        words.append(arg)
        if len(words) == 2 or words[0] not in ("sp", "risk", "pk", "samplers"):
            break
    return " ".join(["ppk", *words])


#: The optional dependencies a command may need (the [plot] extra)
_OPTIONAL = ("matplotlib", "PIL")


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if words == ["--version"]:
        # answered before the parser (and with it numpy and the C++ core) loads, as argparse answers it
        print(_VERSION)
        raise SystemExit(0)
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except KeyboardInterrupt:   # Ctrl-C while ppk loads, before the command started: the same line and exit code
        print(f"\n{_typed_name(words)}: interrupted", file=sys.stderr)
        return 130
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        try:
            return args.func(args)
        except Exception as exc:
            # a library that caught the Ctrl-C and raised something else while handling it (an import
            # interrupted half-way, a worker pool torn down): still the user's interrupt, answered as one
            if _interrupted(exc):
                raise KeyboardInterrupt from exc
            raise
    except KeyboardInterrupt:
        # Ctrl-C: the C++ kernels poll for it and raise KeyboardInterrupt, so does Python; one line, no
        # traceback, and the shell's code for SIGINT (128 + 2).  Nothing half-computed was printed as a result.
        print(f"\n{_command_name(args)}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (e.g. `ppk sp tables | head -1`): end quietly, as the Python docs advise
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (ValueError, TypeError, OSError) as exc:
        message = _in_cli_terms(str(exc), parser)
        plot = getattr(args, "plot", None)
        if isinstance(exc, OSError) and plot and exc.filename is not None and os.path.abspath(str(exc.filename)) == \
                os.path.abspath(str(plot)):   # the figure could not be written: say which option named it
            message = f"--plot {plot}: cannot write the figure there ({exc.strerror or exc}): choose another FILE"
        print(f"{_command_name(args)}: error: {message}", file=sys.stderr)
        return 2
    except ImportError as exc:
        # an optional dependency a command needs (`ppk delta --plot` without matplotlib): one line, as
        # `ppk risk figures` says it; a missing part of ppk itself stays a traceback
        if (exc.name or "").partition(".")[0] not in _OPTIONAL:
            raise
        print(f"{_command_name(args)}: error: {exc.name} is not installed (pip install 'ppk[plot]')", file=sys.stderr)
        return 2
