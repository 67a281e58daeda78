"""``ppk samplers timing``: whether the time of a noise draw reveals the draw (docs/samplers.md)."""
from __future__ import annotations

import argparse
from typing import Any

from ..records import make_record
from ._args import add_command, add_group, add_json_flag, whole
from ._emit import print_json, print_record


def _run_timing(args: argparse.Namespace) -> int:
    from ..sampler_timing import measure_timing
    # measure_timing checks scale by this command's name (the samplers call it sigma, a flag this command
    # does not have) before any draw; its verdict (TimingReport.detected) is the one printed and warned about
    report = measure_timing(args.noise, scale=args.scale, draws=args.draws)
    warnings = [] if not report.detected else [
        f"DEPENDENCE DETECTED: on this machine the time of a {args.noise} draw at scale {args.scale:g} carries "
        "information about its value (Spearman p <= 5e-4 for |draw| or the signed draw); a release whose timing "
        "can be observed may leak"]
    record = make_record(attacker=dict(text="one who can time each draw (docs/samplers.md)", belief_source="none"),
                         guarantee=None, noise=dict(law={"gaussian": "rounded_gaussian"}.get(args.noise, args.noise),
                                                    scale=args.scale, scale_name="scale", unit="counts", per="draw"),
                         warnings=warnings)
    if args.json:
        print_json({**vars(report), "detected": report.detected, "record": record})     # the verdict printed
        return 0
    print(report.summary())
    print_record(record)
    return 0


_TIMING = ("Spearman's rank correlation between |draw| (and the signed draw) and the time the draw took, on this "
           "machine, for the sampler a release uses (the statistic of Jin et al.'s timing attack; rejection samplers "
           "showed 0.2-0.5).")


def register(sub: Any) -> None:
    """Add samplers (timing) to the sub-commands ``sub``."""
    samplers = add_group(sub, "samplers", help="the noise samplers: whether their timing reveals the draw")
    st = add_command(samplers, "timing", _run_timing,
                     help="time many draws and correlate the time with |draw| (docs/samplers.md)",
                     description=_TIMING)
    st.add_argument("--noise", choices=["gaussian", "discrete_gaussian", "discrete_laplace"], default="gaussian",
                    help="the sampler, named as in `ppk release --noise` (default %(default)s)")
    st.add_argument("--scale", type=float, default=3.0, help="sigma or Laplace scale, in counts (default %(default)s)")
    st.add_argument("--draws", type=whole, default=2000, help="draws to time, 100..1000000 (default %(default)s)")
    add_json_flag(st, "a sentence")
