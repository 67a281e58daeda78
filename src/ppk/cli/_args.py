"""What several commands share in reading their arguments: the number types of the flags, the
flags of a counting query, the registration of a command, and the randomness of a release."""
from __future__ import annotations

import argparse
import math
import warnings
from typing import Any, Callable

from .._random import InsecureRandomnessWarning

#: The counting query of ``ppk delta`` and ``ppk calibrate`` when no flag says otherwise.
QUERY_DEFAULTS = dict(n=100_000, known=50_000, p=0.5)

#: A command's function: the parsed arguments in, the exit code out.
Command = Callable[[argparse.Namespace], int]


def whole(text: str) -> int:
    """An integer flag: '1000', '1e6' and '1_000_000' all work (an integral value is required)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if not math.isfinite(value) or value != math.floor(value) or abs(value) > 2.0**63:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}")
    return int(value)


def _real(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def positive_eps(text: str) -> float:
    """An eps flag: a finite number > 0 (the message says what eps is, not an internal floor)."""
    value = _real(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive (a privacy budget > 0), got {text!r}")
    return value


def open_delta(text: str) -> float:
    """A delta flag: a number strictly between 0 and 1."""
    value = _real(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text!r}")
    return value


def positive_whole(text: str) -> int:
    value = whole(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text!r}")
    return value


def seed(text: str) -> int:
    """A seed: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return value


def add_command(sub: Any, name: str, run: Command, **parser_kwargs: Any) -> argparse.ArgumentParser:
    """Add the sub-command ``name`` (help, description, aliases: ``parser_kwargs``) that ``run`` executes."""
    parser = sub.add_parser(name, **parser_kwargs)
    parser.set_defaults(func=run)
    return parser


def add_group(sub: Any, name: str, *, help: str, metavar: str = "WHAT") -> Any:
    """Add the command ``name`` whose sub-commands (``ppk sp tables``) are added to what it returns."""
    return sub.add_parser(name, help=help).add_subparsers(dest=f"{name}_command", metavar=metavar, required=True)


def add_json_flag(parser: argparse.ArgumentParser, instead_of: str = "a table") -> None:
    parser.add_argument("--json", action="store_true", help=f"print JSON instead of {instead_of}")


class _Stated(argparse.Action):
    """Store the value and note that it was typed (``<dest>_stated``): a record says whether the steward stated
    a belief or ppk assumed its default."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_stated", True)


def add_query_args(parser: argparse.ArgumentParser, *, sigma: bool) -> None:
    """The counting query: --n, --known, --p (and --sigma), then --json."""
    parser.add_argument("--n", type=whole, default=QUERY_DEFAULTS["n"],
                        help="rows in the database (default %(default)s)")
    parser.add_argument("--known", type=whole, default=QUERY_DEFAULTS["known"],
                        help="rows the attacker knows, < n (default %(default)s)")
    parser.add_argument("--p", type=float, default=QUERY_DEFAULTS["p"], action=_Stated,
                        help="probability that an unknown row is 1 (default %(default)s)")
    if sigma:
        parser.add_argument("--sigma", type=float, default=3.0,
                            help="std of the added Gaussian noise, in counts (default %(default)s)")
    add_json_flag(parser)


def add_seed_args(parser: argparse.ArgumentParser, *, default_source: str = "") -> None:
    """--seed and --insecure-for-testing of a command that draws noise."""
    parser.add_argument("--seed", type=seed, default=None,
                        help="reproducible randomness, for tests only: NOT private, so it needs "
                             f"--insecure-for-testing{default_source}")
    parser.add_argument("--insecure-for-testing", action="store_true",
                        help="allow --seed; every output is then marked as not private")


def release_rng(args: argparse.Namespace) -> int | None:
    """The rng argument of a release command: refuses --seed without --insecure-for-testing."""
    if args.seed is not None and not args.insecure_for_testing:
        raise ValueError(f"--seed {args.seed} makes the output reproducible and therefore NOT private; "
                         "add --insecure-for-testing to use it for tests")
    return args.seed


def call_seeded(fn: Callable[..., Any], **kwargs: Any) -> Any:
    """Run a release with the Python warning silenced: the CLI marks seeded output itself."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InsecureRandomnessWarning)
        return fn(**kwargs)
