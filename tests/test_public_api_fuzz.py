"""Every public entry point of ppk, fuzzed with bad and extreme values (the hardening issue: no input
makes ppk hang, crash, return NaN, eat the machine's memory, or answer in internal terms).

The catalog below holds, for every public callable (module functions, classes, their public methods
and classmethods), a function that calls it and a valid value for each of its parameters.  Two
tests keep the catalog whole: every public callable of every public module has an entry (or an
entry in SKIPPED saying why it takes no input to probe), and every parameter of its signature is
probed (or listed in NOT_PROBED with the reason).

A *probe* replaces one parameter by one bad value while the others keep their valid values, and
runs the call under a 10 s alarm and a 4 GiB address-space allowance.  It passes when the call

* returns a result in which every number is finite (``inf`` only where INFINITE_OK says the entry
  documents it), or
* raises TypeError or ValueError whose message names the parameter (as a word, case-sensitive).

Anything else is a finding: another exception type (IndexError, KeyError, ZeroDivisionError,
OverflowError, MemoryError, RuntimeError, a RuntimeWarning...), a message that does not name the
parameter, NaN, or no answer in time.  ``test_bad_and_extreme_values`` probes every parameter
with every value of BAD; ``test_random_bad_values`` lets hypothesis draw others (any float, huge
integers, numpy scalars, arrays, Fractions, Decimals, text...).

Findings in files other teams own are listed in KNOWN_GAPS (and /tmp/fuzz_findings.md): the
deterministic test fails when one of them is fixed, so that its owner removes it.  Run as a script
to print every finding: ``python tests/test_public_api_fuzz.py [entry ...]``.
"""
from __future__ import annotations

import atexit
import dataclasses
import importlib
import inspect
import math
import os
import pkgutil
import re
import shutil
import sys
import tempfile
import time
import warnings
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ppk
from ppk import noise, tradeoff
from ppk._validate import real
from ppk.baselines import NotDifferentiallyPrivateWarning

from guards import Timeout, within

# --- limits --------------------------------------------------------------------------------------

#: Seconds a probe may take: the slowest valid call of the catalog takes well under 1 s.
TIME_LIMIT = 10
#: Bytes of address space a probe may add: ppk's largest documented tables are ~1.6 GB.
MEMORY_LIMIT = 4 << 30

#: Warnings a probe may emit: they say something true about valid input.
BENIGN_WARNINGS = (ppk.InsecureRandomnessWarning, NotDifferentiallyPrivateWarning, ppk.ExposureWarning,
                   DeprecationWarning)

# --- the values --------------------------------------------------------------------------------

#: label -> bad or extreme value.  The labels key KNOWN_GAPS.
BAD: dict[str, Any] = {
    "nan": math.nan, "inf": math.inf, "-inf": -math.inf, "np.float64(nan)": np.float64("nan"),
    "0": 0, "-0.0": -0.0, "-1": -1, "0.5": 0.5, "1e-12": 1e-12, "5e-324": 5e-324, "1e300": 1e300,
    "-1e300": -1e300, "2**63": 2**63, "10**400": 10**400, "-10**400": -(10**400),
    "np.int64(2**62)": np.int64(2**62), "np.int64(-5)": np.int64(-5), "np.float64(1e300)": np.float64(1e300),
    "np.float32(0.5)": np.float32(0.5), "True": True, "False": False, "np.bool_(True)": np.bool_(True),
    "'1'": "1", "None": None, "[1]": [1], "[]": [], "array([1.0, 2.0])": np.array([1.0, 2.0]),
    "array([])": np.array([]), "array(nan)": np.array(math.nan), "1j": 1j, "Decimal('1')": Decimal("1"),
    "Decimal('NaN')": Decimal("NaN"), "Fraction(1, 3)": Fraction(1, 3), "Fraction(10**400, 3)": Fraction(10**400, 3),
    "{}": {}, "object()": object(),
}


def _label(value: Any) -> str:
    for label, v in BAD.items():
        if v is value:
            return label
    return repr(value)


# --- discovery ----------------------------------------------------------------------------------

def _public_modules() -> list[str]:
    """ppk and every submodule whose dotted name has no part starting with '_'."""
    names = ["ppk"]
    for info in pkgutil.walk_packages(ppk.__path__, "ppk."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def _public_names(module) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:   # no __all__: what the module defines itself
        names = [n for n, obj in vars(module).items()
                 if not n.startswith("_") and getattr(obj, "__module__", None) == module.__name__]
    return list(names)


def public_callables() -> dict[str, Callable]:
    """Dotted name -> public callable: every function and class the public modules export, and every
    public method, classmethod and staticmethod those classes define or inherit from a ppk class.

    An object exported by several modules (``ppk.alg1`` is ``ppk.algorithm1.alg1``) is listed once,
    under the first name found (``ppk`` first, then the submodules in order).  Properties and
    constants are not callables."""
    out: dict[str, Callable] = {}
    seen: set[int] = set()
    modules = [importlib.import_module(m) for m in _public_modules()]
    for module in modules:
        for name in _public_names(module):
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            out[f"{module.__name__}.{name}"] = obj
            if not inspect.isclass(obj):
                continue
            for attr in dir(obj):
                if attr.startswith("_"):
                    continue
                raw = inspect.getattr_static(obj, attr)
                if not isinstance(raw, (type(_public_names), classmethod, staticmethod)):
                    continue
                owner = next(c for c in obj.__mro__ if attr in vars(c))
                if owner.__module__.split(".")[0] == "ppk":
                    out[f"{module.__name__}.{name}.{attr}"] = getattr(obj, attr)
    return out


# --- the catalog -------------------------------------------------------------------------------

#: entry name -> (function taking the parameters as keywords, valid value of every parameter).
#: An entry name is the callable's dotted name, optionally followed by " (variant)" for a second way
#: of calling it (``alg2`` with ``data`` instead of ``count``).
CATALOG: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}


def _add(entry: str, fn: Callable[..., Any], /, **valid: Any) -> None:
    assert entry not in CATALOG, entry
    CATALOG[entry] = (fn, valid)


def _method(factory: Callable[[], Any], method: str) -> Callable[..., Any]:
    """Call ``method`` on a fresh object from ``factory`` (methods may mutate their object)."""
    return lambda **kw: getattr(factory(), method)(**kw)


_TMP = tempfile.mkdtemp(prefix="ppk-fuzz-")   # evaluate's and write_csv's output; removed at exit
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)
fg = importlib.import_module("ppk.figures")
rf = importlib.import_module("ppk.related.risk.figures")


def _q(**kw):
    return ppk.CountingQuery(**{**dict(n=1000, known=500, p=0.3, sigma=3.0), **kw})


def _gauss_pld():
    return ppk.PrivacyLossDistribution.from_gaussian(sigma=3.0, value_discretization_interval=1e-2)


def _histogram(**kw):
    return ppk.HistogramQuery(**{**dict(n=1000, known=500, probs=[0.2, 0.3, 0.5], sigma=2.0), **kw})


def _overlapping(**kw):
    return ppk.OverlappingCounts(**{**dict(atoms={(0,): 500, (0, 1): 200, (1,): 300}, p=0.3,
                                           sigmas=[2.0, 3.0]), **kw})


def _accountant():
    return ppk.Accountant(value_discretization_interval=1e-2).add_gaussian(sigma=3.0)


def _unsaved(fig, out_dir, name, **kw):
    return name


def _closing_figures(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Call ``fn`` and close every matplotlib figure it opened (hundreds of probes draw one each).

    The figures of ppk.figures and ppk.related.risk.figures are drawn but not saved: laying out and
    rendering a PNG costs ~0.3 s a figure, takes none of the caller's values, and would double the
    file's run time."""
    def call(**kw):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        try:
            with mock.patch.object(fg, "_save", _unsaved), mock.patch.object(rf, "_save", _unsaved):
                out = fn(**kw)
        finally:
            plt.close("all")
        return out if not hasattr(out, "figure") else None   # an Axes: nothing numeric to check
    return call


# ppk: the counting query
_add("ppk.CountingQuery", ppk.CountingQuery, n=1000, known=500, p=0.3, sigma=3.0)
for _m in ("delta", "delta_upper", "log_delta", "log_delta_upper"):
    _add(f"ppk.CountingQuery.{_m}", _method(_q, _m), eps=0.5)
_add("ppk.CountingQuery.epsilon", _method(_q, "epsilon"), delta=1e-6, rtol=1e-12)
_add("ppk.CountingQuery.repeat", _method(_q, "repeat"), k=3)
_add("ppk.CountingQuery.with_sigma", _method(_q, "with_sigma"), sigma=2.0)
_add("ppk.CountingQuery.with_scale", _method(_q, "with_scale"), scale=2.0)
_add("ppk.CountingQuery.dp_scale", _method(_q, "dp_scale"), eps=0.5, delta=1e-6)
# ppk: shuffled randomized response (docs/shuffle.md) and the clone bound it is compared with
_add("ppk.ShuffledRandomizedResponse", ppk.ShuffledRandomizedResponse, n=200, eps0=2.0, known=150, p=0.3, rtol=1e-6,
     categories=2)


def _shuffled():
    return ppk.ShuffledRandomizedResponse(n=200, eps0=2.0)


for _m in ("delta", "delta_upper", "log_delta", "log_delta_upper", "delta_bracket", "log_delta_bracket"):
    _add(f"ppk.ShuffledRandomizedResponse.{_m}", _method(_shuffled, _m), eps=0.5)
_add("ppk.ShuffledRandomizedResponse.epsilon", _method(_shuffled, "epsilon"), delta=1e-6, rtol=1e-10)
_add("ppk.ShuffledRandomizedResponse.split_log_delta_bracket", _method(_shuffled, "split_log_delta_bracket"),
     eps=0.5, ones=3)
_add("ppk.ShuffledRandomizedResponse.with_scale", _method(_shuffled, "with_scale"), scale=0.1)
_add("ppk.ShuffledRandomizedResponse.dp_scale", _method(_shuffled, "dp_scale"), eps=0.5, delta=1e-6)
_add("ppk.ShuffledRandomizedResponse.without_natural_noise", _method(_shuffled, "without_natural_noise"))
_add("ppk.related.shuffle_clones.clone_bound_delta", ppk.related.shuffle_clones.clone_bound_delta, n=1000, eps0=2.0,
     eps=0.5, variant="fmt21")
_add("ppk.related.shuffle_clones.clone_bound_epsilon", ppk.related.shuffle_clones.clone_bound_epsilon, n=1000,
     eps0=2.0, delta=1e-6, variant="fmt23")
_add("ppk.related.shuffle_clones.rr_dp_delta", ppk.related.shuffle_clones.rr_dp_delta, eps0=2.0, eps=0.5)
_add("ppk.related.shuffle_clones.rr_dp_epsilon", ppk.related.shuffle_clones.rr_dp_epsilon, eps0=2.0, delta=1e-6)
_add("ppk.counting.log_delta_upper_over_biases", ppk.counting.log_delta_upper_over_biases, n_unknown=100,
     ps=[0.2, 0.5], sigma=2.0, eps=0.5)
_add("ppk.hypergeom.hypergeom_pmf", ppk.hypergeom.hypergeom_pmf, population=1000, successes=400, draws=500, log=False)

# ppk: the algorithms and the release
_add("ppk.alg1", ppk.alg1, n=1000, known=500, p=0.3, eps=0.5, delta=1e-6, error=1e-3, rtol=1e-10)
_ALG2 = dict(count=300, n=1000, known=500, eps=0.5, delta=1e-6, kappa1=0.0, kappa2=4e-7, kappa3=6e-7,
             hoeffding="additive", rng=1, audit=False, noise="gaussian")
_add("ppk.alg2", ppk.alg2, **_ALG2, diagnostics=False)
_add("ppk.alg2 (data)", lambda **kw: ppk.alg2(**kw, known=500, eps=0.5, delta=1e-6, rng=1),
     data=np.array([1, 0, 0] * 300 + [0] * 100))
_add("ppk.release", ppk.release, **_ALG2, allow_large_eps=False)
_add("ppk.release (data)", lambda **kw: ppk.release(**kw, known=500, eps=0.5, delta=1e-6, rng=1),
     data=[1, 0, 0] * 300 + [0] * 100)
_add("ppk.algorithm2.hoeffding_interval", ppk.algorithm2.hoeffding_interval, estimate=0.3, t_laplace=0.01,
     kappa2=1e-6, m=500, method="additive")
_add("ppk.algorithm2.hoeffding_interval (kl)", lambda **kw: ppk.algorithm2.hoeffding_interval(**kw, method="kl"),
     estimate=0.3, t_laplace=0.01, kappa2=1e-6, m=500)
_add("ppk.algorithm2.laplace_truncation", ppk.algorithm2.laplace_truncation, n=1000, t=0.1, eps_estimate=0.25)

# ppk: privacy loss distributions and the accountant
PLD = ppk.PrivacyLossDistribution
#: A small (valid) bucket budget: an extreme sigma or sensitivity then coarsens the grid in milliseconds
#: instead of filling the default 2^20 buckets for a second or two a probe.
_BUCKETS = 1 << 12
_mechanisms = importlib.import_module("ppk.pld.mechanisms")


def _small_budget(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the bucket budget of its PLD builds, once validated, at most _BUCKETS: these entries take
    no ``max_buckets`` (fixed at 2^20), so an extreme sigma or sensitivity would fill 2^20 buckets for ~0.7 s
    a probe.  The parameters are validated as before and the grid coarsens by the same code."""
    validated = _mechanisms.scale_arguments

    def small(*args: Any, **kw: Any) -> tuple:
        *head, buckets = validated(*args, **kw)
        return (*head, min(buckets, _BUCKETS))

    def call(**kw: Any) -> Any:
        with mock.patch.object(_mechanisms, "scale_arguments", small):
            return fn(**kw)
    return call


_add("ppk.PrivacyLossDistribution", PLD, interval=0.1, offset=-1, mass_upper=[0.2, 0.3, 0.5],
     mass_lower=[0.5, 0.3, 0.2], width=1.0, infinity_mass_upper=0.0, infinity_mass_lower=0.0,
     overflow_mass_upper=0.0, overflow_mass_lower=0.0, pessimistic_estimate=True, max_buckets=1 << 10,
     shared_noise_key=None, composition="auto", log_mass_truncation_bound=-100.0)
_add("ppk.PrivacyLossDistribution.compose", _method(_gauss_pld, "compose"), other=_gauss_pld(), independent=None,
     tail_mass_truncation=1e-15)
for _m in ("delta_bracket", "log_delta_bracket", "get_delta_for_epsilon"):
    _add(f"ppk.PrivacyLossDistribution.{_m}", _method(_gauss_pld, _m), eps=0.5)
_add("ppk.PrivacyLossDistribution.get_epsilon_for_delta", _method(_gauss_pld, "get_epsilon_for_delta"), delta=1e-6)
_add("ppk.PrivacyLossDistribution.self_compose", _method(_gauss_pld, "self_compose"), num_times=2, independent=None,
     tail_mass_truncation=1e-15)
_add("ppk.PrivacyLossDistribution.with_composition", _method(_gauss_pld, "with_composition"), composition="fft")
_add("ppk.PrivacyLossDistribution.from_gaussian", PLD.from_gaussian, sigma=3.0, sensitivity=1.0,
     value_discretization_interval=1e-2, log_mass_truncation_bound=-100.0, pessimistic_estimate=True,
     max_buckets=_BUCKETS)
_add("ppk.PrivacyLossDistribution.from_laplace", PLD.from_laplace, scale=2.0, sensitivity=1.0,
     value_discretization_interval=1e-2, pessimistic_estimate=True, max_buckets=_BUCKETS)
_add("ppk.PrivacyLossDistribution.from_counting_query", PLD.from_counting_query, query=_q(n=201, known=0),
     value_discretization_interval=1e-2, log_mass_truncation_bound=-100.0, pessimistic_estimate=True,
     max_buckets=_BUCKETS)
_add("ppk.PrivacyLossDistribution.from_curve", PLD.from_curve, curve=_q(n=201, known=0),
     value_discretization_interval=1e-2, log_mass_truncation_bound=-100.0, pessimistic_estimate=True,
     max_buckets=_BUCKETS, curve_points=64)
_add("ppk.PrivacyLossDistribution.from_pmfs", PLD.from_pmfs, pmf_upper=[0.5, 0.5], pmf_lower=[0.6, 0.4],
     value_discretization_interval=1e-2, pessimistic_estimate=True, tolerance=1e-9, max_buckets=_BUCKETS)
_add("ppk.PrivacyLossDistribution.from_gaussian_mechanism", _small_budget(PLD.from_gaussian_mechanism), standard_deviation=3.0,
     sensitivity=1.0, pessimistic_estimate=True, value_discretization_interval=1e-2, log_mass_truncation_bound=-50.0,
     sampling_prob=1.0, use_connect_dots=True, adjacency="add_or_remove")
_add("ppk.PrivacyLossDistribution.from_laplace_mechanism", _small_budget(PLD.from_laplace_mechanism), parameter=2.0,
     sensitivity=1.0, pessimistic_estimate=True, value_discretization_interval=1e-2, sampling_prob=1.0,
     use_connect_dots=True, adjacency="add_or_remove")
_add("ppk.PrivacyLossDistribution.from_two_probability_mass_functions", PLD.from_two_probability_mass_functions,
     log_probability_mass_function_lower={0: math.log(0.6), 1: math.log(0.4)},
     log_probability_mass_function_upper={0: math.log(0.5), 1: math.log(0.5)}, pessimistic_estimate=True,
     value_discretization_interval=1e-2, log_mass_truncation_bound=-math.inf, symmetric=True)
_add("ppk.PrivacyLossDistribution.from_dp_accounting", PLD.from_dp_accounting,
     pld=_gauss_pld().to_dp_accounting())
_add("ppk.Accountant", ppk.Accountant, value_discretization_interval=1e-2, composition="auto", progress=False,
     neighboring_relation="add_or_remove_one")
_add("ppk.Accountant.add", _method(_accountant, "add"), release=_q(n=201, known=0), times=1, name="count",
     shared_rows="refuse")
_add("ppk.Accountant.add_gaussian", _small_budget(_method(_accountant, "add_gaussian")), sigma=3.0, sensitivity=1.0, times=2)
_add("ppk.Accountant.add_laplace", _small_budget(_method(_accountant, "add_laplace")), scale=20.0, sensitivity=1.0, times=2)
_add("ppk.Accountant.delta", _method(_accountant, "delta"), eps=0.5)
_add("ppk.Accountant.delta_bracket", _method(_accountant, "delta_bracket"), eps=0.5)
_add("ppk.Accountant.delta (epsilon)", _method(_accountant, "delta"), epsilon=0.5)
_add("ppk.Accountant.delta_bracket (epsilon)", _method(_accountant, "delta_bracket"), epsilon=0.5)
_add("ppk.Accountant.epsilon", _method(_accountant, "epsilon"), delta=1e-6)
_add("ppk.Accountant.get_epsilon", _method(_accountant, "get_epsilon"), target_delta=1e-6)
_add("ppk.Accountant.get_delta", _method(_accountant, "get_delta"), target_epsilon=0.5)
_add("ppk.Accountant.power_bracket", _method(_accountant, "power_bracket"), alpha=0.01)
_add("ppk.Accountant.compose", _method(_accountant, "compose"), event=_gauss_pld(), count=2)
_add("ppk.Accountant.add_subsampled_gaussian", _small_budget(_method(_accountant, "add_subsampled_gaussian")),
     sigma=2.0, sampling_prob=0.1, sensitivity=1.0, times=2, adjacency="add_or_remove")
_add("ppk.Accountant.add_subsampled_laplace", _small_budget(_method(_accountant, "add_subsampled_laplace")),
     scale=2.0, sampling_prob=0.1, sensitivity=1.0, times=2, adjacency="add_or_remove")
_add("ppk.Accountant.add_randomized_response", _method(_accountant, "add_randomized_response"), eps0=1.0, times=2)
_add("ppk.Accountant.add_randomized_response (k-ary)", _method(_accountant, "add_randomized_response"),
     noise_parameter=0.5, num_buckets=5, times=2)
# DP-SGD: few steps on a coarse grid, so that each probe is cheap
_add("ppk.dpsgd_epsilon", _small_budget(ppk.dpsgd_epsilon), noise_multiplier=2.0, sampling_rate=0.1, steps=5, delta=1e-5,
     value_discretization_interval=1e-2, adjacency="add_or_remove")
_add("ppk.dpsgd_noise_multiplier", _small_budget(ppk.dpsgd_noise_multiplier), epsilon=1.0, delta=1e-5, sampling_rate=0.1, steps=5,
     value_discretization_interval=1e-2, rtol=0.05, adjacency="add_or_remove")


# ppk: any natural and added noise
def _noisy(**kw):
    return ppk.NoisyQuery(**{**dict(natural=noise.Binomial(50, 0.3), added=noise.Laplace(2.0)), **kw})


_add("ppk.NoisyQuery", ppk.NoisyQuery, natural=noise.Binomial(50, 0.3), added=noise.Laplace(2.0), sensitivity=2,
     shifts=None)
_add("ppk.NoisyQuery (shifts)", lambda **kw: ppk.NoisyQuery(natural=noise.Binomial(50, 0.3),
                                                            added=noise.DiscreteGaussian(2.0), **kw), shifts=[1, 2])
for _m in ("delta", "delta_upper", "log_delta", "log_delta_upper"):
    _add(f"ppk.NoisyQuery.{_m}", _method(_noisy, _m), eps=0.3)
_add("ppk.NoisyQuery.epsilon", _method(_noisy, "epsilon"), delta=1e-6, rtol=1e-10)
_add("ppk.NoisyQuery.with_scale", _method(_noisy, "with_scale"), scale=1.5)
_add("ppk.NoisyQuery.dp_scale", _method(_noisy, "dp_scale"), eps=0.5, delta=1e-6)
_add("ppk.calibrate", ppk.calibrate, query=ppk.NoisyQuery(natural=noise.Binomial(200, 0.3),
                                                          added=noise.DiscreteGaussian(1.0)),
     eps=0.5, delta=1e-6, rtol=1e-8, atol=0.0)

# ppk: histograms and overlapping counts
_add("ppk.HistogramQuery", ppk.HistogramQuery, n=1000, known=500, probs=[0.2, 0.3, 0.5], sigma=2.0, rtol=1e-3,
     max_evaluations=2000, lower="auto")
for _m in ("delta", "delta_upper", "log_delta", "log_delta_upper", "delta_bracket", "log_delta_bracket"):
    _add(f"ppk.HistogramQuery.{_m}", _method(_histogram, _m), eps=0.5)
_add("ppk.HistogramQuery.with_sigma", _method(_histogram, "with_sigma"), sigma=3.0)
_add("ppk.HistogramQuery.with_scale", _method(_histogram, "with_scale"), scale=3.0)
_add("ppk.HistogramQuery.dp_scale", _method(_histogram, "dp_scale"), eps=0.5, delta=1e-6)
_add("ppk.HistogramQuery.epsilon", _method(_histogram, "epsilon"), delta=1e-6, rtol=1e-10)
_add("ppk.HistogramQuery.worst_case", ppk.HistogramQuery.worst_case, n=1000, known=500, categories=4, min_prob=0.1,
     sigma=2.0, rtol=1e-3)
# ppk: a release plan over one table
def _plan(**kw):
    return ppk.TablePlan(**{**dict(n=1000, known=500, probs={"a": 0.2, "b": 0.3, "c": 0.5},
                                   counts=[(("a", "b"), 2.0), (("a",), 1.0)]), **kw})


_add("ppk.TablePlan", ppk.TablePlan, n=1000, known=500, probs={"a": 0.2, "b": 0.3, "c": 0.5},
     counts=[(("a", "b"), 2.0), (("a",), 1.0)], public={"a": 0, "b": 0, "c": 1}, rtol=1e-3, max_evaluations=2000)
for _m in ("delta", "delta_upper", "log_delta", "log_delta_upper", "delta_bracket", "log_delta_bracket"):
    _add(f"ppk.TablePlan.{_m}", _method(_plan, _m), eps=0.5)
_add("ppk.TablePlan.with_scale", _method(_plan, "with_scale"), scale=3.0)
_add("ppk.TablePlan.dp_scale", _method(_plan, "dp_scale"), eps=0.5, delta=1e-6)
_add("ppk.TablePlan.epsilon", _method(_plan, "epsilon"), delta=1e-6, rtol=1e-10)
_add("ppk.TablePlan.histogram", ppk.TablePlan.histogram, n=1000, known=500, probs=[0.2, 0.3, 0.5], sigma=2.0,
     rtol=1e-3)
_add("ppk.TablePlan.worst_case", ppk.TablePlan.worst_case, n=1000, known=500, categories=["a", "b", "c"],
     counts=[(("a",), 1.0)], min_prob=0.1, rtol=1e-3)
_add("ppk.table_plan.histogram_counts", ppk.table_plan.histogram_counts, categories=["a", "b"], sigma=1.0)
_add("ppk.table_plan.marginal_counts", ppk.table_plan.marginal_counts, categories=[("a", 1), ("b", 2)],
     position=0, sigma=1.0)
# ppk: the steward's ledger (each probe gets a fresh file: a probe must not see another's releases)
def _ledger_entry():
    return dict(eps=1.0, delta=1e-7, delta_sampler=1e-57, mechanisms=[dict(kind="gaussian", sigma=3.0, sensitivity=1.0)])


def _fresh_ledger_path() -> str:
    return tempfile.mktemp(dir=_TMP, suffix=".json")


def _ledger(**kw):
    import ppk.ledger
    return ppk.ledger.Ledger.open(_fresh_ledger_path(), **{**dict(eps=3.0, delta=1e-6), **kw})


_add("ppk.ledger.Ledger", lambda **kw: ppk.ledger.Ledger(_fresh_ledger_path(), **kw), eps=3.0, delta=1e-6,
     entries=[])
_add("ppk.ledger.Ledger.open", lambda **kw: _ledger(**kw), eps=3.0, delta=1e-6)
_add("ppk.ledger.Ledger.admit", lambda **kw: _ledger().admit(**kw), entry=_ledger_entry())
_add("ppk.ledger.Ledger.append", lambda **kw: _ledger().append(**kw), entry=_ledger_entry())
_add("ppk.ledger.Ledger.spent", lambda **kw: _ledger().spent(**kw), extra=[_ledger_entry()])
# ppk: a plan file (its text's mistakes are tested in test_plan_file.py)
_PLAN_TOML = """known = 500\neps = 0.5\ndelta = 1e-6\nmin_prob = 0.1\n[columns]\nx = ["a", "b", "c"]\n
[[statistics]]\nhistogram = "x"\n"""


def _plan_file():
    import ppk.plan_file
    path = os.path.join(_TMP, "plan.toml")
    with open(path, "w") as fh:
        fh.write(_PLAN_TOML)
    return ppk.plan_file.read_plan(path)


_add("ppk.plan_file.PlanFile.counts", lambda **kw: _plan_file().counts(**kw), sigma=1.0)
_add("ppk.plan_file.PlanFile.table_plan", lambda **kw: _plan_file().table_plan(**kw), n=1000, sigma=1.0)
_add("ppk.release (histogram)", lambda **kw: ppk.release(**kw), counts=[200, 300, 500], known=500,
     probs=[0.2, 0.3, 0.5], eps=1.0, delta=1e-6, rng=1)
_add("ppk.release (histogram, min_prob)", lambda **kw: ppk.release(counts=[200, 300, 500], known=500, eps=1.0,
                                                                   delta=1e-6, rng=1, **kw), min_prob=0.1)
_add("ppk.histogram.probabilities", ppk.histogram.probabilities, name="values", values=[0.2, 0.8],
     minimum_length=2)
_add("ppk.histogram.floor_probabilities", ppk.histogram.floor_probabilities, categories=4, min_prob=0.1)
_add("ppk.OverlappingCounts", ppk.OverlappingCounts, atoms={(0,): 500, (0, 1): 200, (1,): 300}, p=0.3,
     sigmas=[2.0, 3.0])
for _m in ("delta", "delta_upper", "log_delta", "log_delta_upper", "delta_bracket", "log_delta_bracket",
           "worst_atom"):
    _add(f"ppk.OverlappingCounts.{_m}", _method(_overlapping, _m), eps=0.5)
_add("ppk.OverlappingCounts.with_sigmas", _method(_overlapping, "with_sigmas"), sigmas=[1.0, 4.0])
_add("ppk.OverlappingCounts.with_scale", _method(_overlapping, "with_scale"), scale=4.0)
_add("ppk.OverlappingCounts.dp_scale", _method(_overlapping, "dp_scale"), eps=0.5, delta=1e-6)
_add("ppk.OverlappingCounts.epsilon", _method(_overlapping, "epsilon"), delta=1e-6, rtol=1e-10)
_add("ppk.OverlappingCounts.from_membership", ppk.OverlappingCounts.from_membership,
     matrix=np.array([[1, 0], [1, 1], [0, 1]] * 100), known_rows=[0, 1], p=0.3, sigmas=[2.0, 3.0])
_add("ppk.plot_privacy_curve", _closing_figures(ppk.plot_privacy_curve), queries=_q(), eps=[0.0, 0.5, 1.0], ax=None,
     baseline=True, labels=["q"])
# ppk.tradeoff: the certified power 1 - beta(alpha) (docs/tradeoff.md); the methods of every curve and the PLD
# (the histogram and the plan on 20 rows: a probe's search reads their curve at many eps, each a sum over M)
for _cls, _factory in (("CountingQuery", _q), ("ShuffledRandomizedResponse", _shuffled), ("NoisyQuery", _noisy),
                       ("HistogramQuery", lambda: _histogram(n=20, known=10)),
                       ("TablePlan", lambda: _plan(n=20, known=10)), ("OverlappingCounts", _overlapping),
                       ("PrivacyLossDistribution", _gauss_pld)):
    _add(f"ppk.{_cls}.power_bracket", _method(_factory, "power_bracket"), alpha=0.01)
_add("ppk.tradeoff.power_bracket", tradeoff.power_bracket, obj=_gauss_pld(), alpha=[1e-9, 0.5])
_add("ppk.tradeoff.tradeoff_table", tradeoff.tradeoff_table, obj=_gauss_pld(), alpha_min=1e-9, points=5)
_add("ppk.tradeoff.tradeoff_functions", tradeoff.tradeoff_functions, obj=_gauss_pld())
_add("ppk.tradeoff.write_tradeoff", lambda **kw: tradeoff.write_tradeoff(path=os.path.join(_TMP, "tradeoff.csv"),
                                                                         **kw),
     rows=tradeoff.tradeoff_table(_gauss_pld(), points=3), format="csv")
_add("ppk.tradeoff.plot_tradeoff", _closing_figures(tradeoff.plot_tradeoff), obj=_gauss_pld(), alpha_min=1e-9, points=5,
     ax=None, label="q")

# ppk.noise: the laws and their methods
_NATURAL = {
    "Binomial": (lambda: noise.Binomial(100, 0.3), dict(n=100, p=0.3)),
    "PoissonBinomial": (lambda: noise.PoissonBinomial(groups=[(40, 0.2), (30, 0.7)]),
                        dict(probs=None, groups=[(40, 0.2), (30, 0.7)])),
    "BetaBinomial": (lambda: noise.BetaBinomial(100, 2.0, 3.0), dict(n=100, a=2.0, b=3.0)),
    "BinomialMixture": (lambda: noise.BinomialMixture(30, [0.5, 0.5], [0.1, 0.9]),
                        dict(n=30, weights=[0.5, 0.5], ps=[0.1, 0.9])),
    "RowSum": (lambda: noise.RowSum([0.2, 0.8], 50), dict(row_pmf=[0.2, 0.8], count=50)),
    "Pmf": (lambda: noise.Pmf([math.log(0.5), math.log(0.5)]), dict(log_pmf=[math.log(0.5), math.log(0.5)],
                                                                    offset=0)),
}
for _law, (_factory, _valid) in _NATURAL.items():
    _add(f"ppk.noise.{_law}", getattr(noise, _law), **_valid)
    _add(f"ppk.noise.{_law}.window", _method(_factory, "window"), depth=40.0)
_add("ppk.noise.Binomial.log_pmf", _method(lambda: noise.Binomial(100, 0.3), "log_pmf"), k=[0, 30, 100])
_add("ppk.noise.PoissonBinomial (probs)", lambda **kw: noise.PoissonBinomial(**kw), probs=[0.1, 0.5, 0.9])
_ADDED = {
    "Gaussian": (lambda: noise.Gaussian(2.0), dict(sigma=2.0)),
    "Laplace": (lambda: noise.Laplace(2.0), dict(scale=2.0)),
    "DiscreteGaussian": (lambda: noise.DiscreteGaussian(2.0), dict(sigma=2.0)),
    "DiscreteLaplace": (lambda: noise.DiscreteLaplace(2.0), dict(scale=2.0)),
    "NoNoise": (noise.NoNoise, {}),
}
for _law, (_factory, _valid) in _ADDED.items():
    _add(f"ppk.noise.{_law}", getattr(noise, _law), **_valid)
    for _m in ("log_density", "log_sf", "log_cdf"):
        _add(f"ppk.noise.{_law}.{_m}", _method(_factory, _m), x=np.array([-3.0, 0.0, 2.0]))
    _add(f"ppk.noise.{_law}.reach", _method(_factory, "reach"), depth=40.0)
    _add(f"ppk.noise.{_law}.with_scale", _method(_factory, "with_scale"), scale=3.0)

# ppk.baselines
_bl = ppk.baselines
_add("ppk.baselines.analytic_gaussian_delta", _bl.analytic_gaussian_delta, sigma=3.0, eps=0.5, sensitivity=1.0)
_add("ppk.baselines.analytic_gaussian_log_delta", _bl.analytic_gaussian_log_delta, sigma=3.0, eps=0.5,
     sensitivity=1.0)
_add("ppk.baselines.analytic_gaussian_log_delta_upper", _bl.analytic_gaussian_log_delta_upper, sigma=3.0, eps=0.5,
     sensitivity=1.0)
_add("ppk.baselines.analytic_gaussian_sigma", _bl.analytic_gaussian_sigma, eps=0.5, delta=1e-6, sensitivity=1.0,
     rtol=1e-12)
_add("ppk.baselines.analytic_gaussian_epsilon", _bl.analytic_gaussian_epsilon, sigma=3.0, delta=1e-6,
     sensitivity=1.0, rtol=1e-12)
_add("ppk.baselines.classic_gaussian_sigma", _bl.classic_gaussian_sigma, eps=0.5, delta=1e-6, sensitivity=1.0,
     allow_eps_ge_1=False)
_add("ppk.baselines.sufficient_gaussian_sigma", _bl.sufficient_gaussian_sigma, eps=0.5, delta=1e-6, sensitivity=1.0,
     compositions=1, variant="corrected")
_add("ppk.baselines.laplace_scale", _bl.laplace_scale, eps=0.5, sensitivity=1.0)

# ppk.samplers
_add("ppk.samplers.discrete_laplace", ppk.samplers.discrete_laplace, scale=2.0, rng=1)
_add("ppk.samplers.discrete_gaussian", ppk.samplers.discrete_gaussian, sigma=2.0, rng=1)
_add("ppk.samplers.rounded_gaussian", ppk.samplers.rounded_gaussian, sigma=2.0, rng=1)
_add("ppk.samplers.bernoulli_exp", ppk.samplers.bernoulli_exp, gamma=0.5, rng=1)
_add("ppk.samplers.sampler_delta", ppk.samplers.sampler_delta, eps=1.0, draws=3)
_timing = importlib.import_module("ppk.sampler_timing")
_add("ppk.sampler_timing.measure_timing", _timing.measure_timing, noise="discrete_laplace", scale=3.0, draws=100,
     rng=1)

# ppk.evaluation
ev = ppk.evaluation
_GRID = dict(n=[1000], known_fraction=[0.5], p=[0.3], eps=[1.0], delta=[1e-6], seeds=1)
_POINT = dict(index=0, n=1000, known_fraction=0.5, p=0.3, eps=1.0, delta=1e-6, seeds=1, seed=0)
_ROW = ev.evaluate_point(ev.GridPoint(**_POINT))
_add("ppk.evaluation.GridPoint", lambda **kw: ev.evaluate_point(ev.GridPoint(**kw)), **_POINT)
_add("ppk.evaluation.grid_points", ev.grid_points, grid=_GRID, seed=0)
_add("ppk.evaluation.grid_points (name)", ev.grid_points, grid="tiny")
_add("ppk.evaluation.evaluate_point", ev.evaluate_point, point=ev.GridPoint(**_POINT))
_add("ppk.evaluation.run_sweep", ev.run_sweep, points=[ev.GridPoint(**_POINT)], executor=None, jobs=1,
     progress=False, side_tasks=(), side_results=[])
_add("ppk.evaluation.write_csv", lambda **kw: ev.write_csv(**kw, path=os.path.join(_TMP, "rows.csv")),
     rows=[_ROW])
_add("ppk.evaluation.evaluate", lambda **kw: ev.evaluate(**kw, out_dir=os.path.join(_TMP, "evaluate"), figures=False),
     grid=_GRID, executor=None, jobs=1, seed=0, progress=False, resume=False)

# ppk.figures (drawn with small grids; see _closing_figures)
_add("ppk.figures.fig_shuffle_gap", _closing_figures(lambda **kw: fg.fig_shuffle_gap(_TMP, **kw)), ns=(100, 1000),
     deltas=(1e-6,), eps0=4.0)
_add("ppk.figures.fig_shuffle_gap_kary", _closing_figures(lambda **kw: fg.fig_shuffle_gap_kary(_TMP, **kw)), ns=(50,),
     categories=(3,), delta=1e-3, eps0=2.0)
_add("ppk.figures.fig_baselines_vs_n", _closing_figures(lambda **kw: fg.fig_baselines_vs_n(_TMP, **kw)), delta=1e-6)
_add("ppk.figures.fig_pointwise_loss", _closing_figures(lambda **kw: fg.fig_pointwise_loss(_TMP, **kw)), n=5000,
     known=3000, o=2000)
_add("ppk.figures.fig_hypergeom_runtime", _closing_figures(lambda **kw: fg.fig_hypergeom_runtime(_TMP, **kw)),
     sizes=(100, 200))
_add("ppk.figures.fig_tau_and_supported_eps",
     _closing_figures(lambda **kw: fg.fig_tau_and_supported_eps(_TMP, **kw)), kappa2=(1e-6,))
_add("ppk.figures.fig_laplace_truncation", _closing_figures(lambda **kw: fg.fig_laplace_truncation(_TMP, **kw)),
     kappa2=1e-6, kappa3=1e-6)
_add("ppk.figures.fig_gain_maps", _closing_figures(lambda **kw: fg.fig_gain_maps(_TMP, **kw)), n=1000, epss=(0.5,),
     delta=1e-6, size=2)
_add("ppk.figures.fig_delta_curves", _closing_figures(lambda **kw: fg.fig_delta_curves(_TMP, **kw)), n=1000,
     known=500, p=0.5)
_add("ppk.figures.fig_evaluation_summary", _closing_figures(lambda **kw: fg.fig_evaluation_summary(_TMP, **kw)),
     rows=[_ROW])

# ppk.related.dp
from ppk.related import dp, pk, risk, sp  # noqa: E402
from ppk.related.risk import sensitivity as sens  # noqa: E402

_add("ppk.related.dp.rr_epsilon", dp.rr_epsilon, gamma=0.25)
_add("ppk.related.dp.rr_gamma", dp.rr_gamma, eps=1.0)
_add("ppk.related.dp.compose_basic", dp.compose_basic, eps_list=[0.1, 0.2], delta_list=[1e-6, 1e-6])
_add("ppk.related.dp.compose_advanced", dp.compose_advanced, eps=0.1, delta=1e-6, k=10, delta_prime=1e-5,
     dwork_roth_term=True)
_add("ppk.related.dp.group_privacy", dp.group_privacy, eps=0.1, delta=1e-6, k=3)
_add("ppk.related.dp.subsample_amplify", dp.subsample_amplify, eps=0.1, delta=1e-6, rho=0.1)
_ROWS = [dict(zip_code="1", age=30, disease="flu"), dict(zip_code="1", age=30, disease="cold"),
         dict(zip_code="2", age=40, disease="flu")]
_add("ppk.related.dp.k_anonymity", dp.k_anonymity, rows=_ROWS, qi=["zip_code", "age"])
_add("ppk.related.dp.l_diversity", dp.l_diversity, rows=_ROWS, qi=["zip_code", "age"], sensitive="disease")

# ppk.related.pk
_add("ppk.related.pk.Count", lambda **kw: pk.ppk_delta(pk.Count(**kw), eps=0.1), n=1000, p=0.3, known=100)
_add("ppk.related.pk.NoisyCount", lambda **kw: pk.ppk_delta(pk.NoisyCount(**kw), eps=0.1), n=1000, p=0.3, known=100,
     sigma=3.0)
_add("ppk.related.pk.ThresholdCount", lambda **kw: pk.ppk_delta(pk.ThresholdCount(**kw), eps=0.1), n=1000, p=1e-3,
     known=100, threshold=5, strict=True, fill=0)
_add("ppk.related.pk.apk_delta", pk.apk_delta, mechanism=pk.ThresholdCount(1000, 1e-3, 100, 5), eps=0.1)
_add("ppk.related.pk.ppk_delta", pk.ppk_delta, mechanism=pk.ThresholdCount(1000, 1e-3, 100, 5), eps=0.1)

# ppk.related.sp
_add("ppk.related.sp.random_partition", sp.random_partition, n=100, sizes=[10, 10], rng=1)
_add("ppk.related.sp.PartitionMechanism", lambda **kw: sp.PartitionMechanism(**kw).release([0, 1] * 50, rng=1),
     sizes=(10, 20), sigma=1.0)
_add("ppk.related.sp.PartitionMechanism.release", _method(lambda: sp.PartitionMechanism(sizes=(10, 20)), "release"),
     data=[0, 1] * 50, rng=1)
_add("ppk.related.sp.count_delta", sp.count_delta, N=1000, p=0.5, eps=0.1)
_add("ppk.related.sp.composition_bound", sp.composition_bound, n=2**10, sizes=[64] * 4, p=0.5, eps=0.1, known=0)
_add("ppk.related.sp.composition_bound (known)", sp.composition_bound, n=2**10, sizes=[64] * 4, p=0.5, eps=0.1,
     known=10)
_add("ppk.related.sp.composition_delta_exact", sp.composition_delta_exact, n=2**10, sizes=[64] * 4, p=0.5, eps=0.1)
_add("ppk.related.sp.sampling_privacy_curve", sp.sampling_privacy_curve, n=1000, sample=100, known=10, p=0.5,
     eps=0.1, population="corrected", conditional=True)
_add("ppk.related.sp.adaptive_composition_bound", sp.adaptive_composition_bound, n=1000, sizes=[50, 50], p=0.5,
     eps=0.1, policy=lambda k, answers: 2.0, samples=5, rng=1)
_add("ppk.related.sp.compare_sp_dp", sp.compare_sp_dp, table=None, n=2**10, p=0.5, eps_list=[0.1], n_sp_list=[32])
_add("ppk.related.sp.compare_sp_dp (table)", sp.compare_sp_dp, table=sp.TABLE_II)


# ppk.related.risk
def _bessel():
    return risk.BesselK(2)


_add("ppk.related.risk.BesselK", risk.BesselK, k=2)
for _m, _arg in (("pdf", "t"), ("cdf", "x"), ("sf", "x")):
    _add(f"ppk.related.risk.BesselK.{_m}", _method(_bessel, _m), **{_arg: 0.7})
_add("ppk.related.risk.BesselK.ppf", _method(_bessel, "ppf"), q=0.5)
_add("ppk.related.risk.BesselK.rvs", _method(_bessel, "rvs"), size=3, rng=1)
_add("ppk.related.risk.confidence", risk.confidence, eps=0.5, eps0=1.0, k=1)
_add("ppk.related.risk.confidence_exact", risk.confidence_exact, eps=0.5, eps0=1.0)
_add("ppk.related.risk.confidence_mc", risk.confidence_mc, fx=[0.0, 1.0], fy=[0.0, 0.5], eps=0.5, eps0=1.0,
     sensitivity=1.0, samples=1000, rng=1)
_add("ppk.related.risk.eps_for_confidence", risk.eps_for_confidence, gamma=0.6, eps0=1.0, k=1)
_add("ppk.related.risk.calibrate_eps0", risk.calibrate_eps0, eps=0.4, gamma=0.6, k=1, eps0_max=50.0)
_add("ppk.related.risk.laplace_overlap", risk.laplace_overlap, eps1=1.0, eps2=0.5, sensitivity=1.0)
_add("ppk.related.risk.dkw_alpha", risk.dkw_alpha, n=1000, rho=0.01)
_add("ppk.related.risk.empirical_confidence", risk.empirical_confidence, gamma2=0.9, n=15_000, rho=0.01,
     bound="corrected")
_add("ppk.related.risk.combined_confidence", risk.combined_confidence, eps=0.5, eps0=1.0, gamma2=0.9, eta=0.9, k=1)
_add("ppk.related.risk.calibrate_eps0_combined", risk.calibrate_eps0_combined, eps=0.4, gamma3_hat=0.5, gamma2=0.9,
     eta=1.0, alpha=0.9, k=1)
_add("ppk.related.risk.compose_privacy_at_risk", risk.compose_privacy_at_risk, eps0=1.0, eps=0.5, gamma=0.6, n=10,
     delta=1e-6)
_add("ppk.related.risk.crossover", risk.crossover, eps0=1.0, delta=1e-6, eps=0.5, gamma=0.6)
_add("ppk.related.risk.eps_lower_bound_from_mae", risk.eps_lower_bound_from_mae, max_mae=2.0, sensitivity=1.0)


def _cost():
    return risk.CostModel(E=5500.0, n_stakeholders=100)


_add("ppk.related.risk.CostModel", lambda **kw: risk.CostModel(**kw).dp(1.0), E=5500.0, c=1.0, E_min=0.0,
     n_stakeholders=100)
_add("ppk.related.risk.CostModel.dp", _method(_cost, "dp"), eps=1.0)
_add("ppk.related.risk.CostModel.par", _method(_cost, "par"), eps=0.5, gamma=0.6, eps0=1.0)
_add("ppk.related.risk.CostModel.optimal", _method(_cost, "optimal"), eps0=1.0, k=1)
_add("ppk.related.risk.CostModel.eps_upper_bound", _method(_cost, "eps_upper_bound"), budget=500_000.0, gamma=0.6,
     eps0=1.0)

# ppk.related.risk.sensitivity
_CENSUS = sens.synthetic_census(50, rng=1)
_add("ppk.related.risk.sensitivity.ClippedSum", lambda **kw: sens.sample_sensitivities(
    sens.ClippedSum(**kw), [0.0, 1.0, 5.0], rows=10, pairs=5), lo=0.0, hi=2.0)
_add("ppk.related.risk.sensitivity.ClippedMean", lambda **kw: sens.sample_sensitivities(
    sens.ClippedMean(**kw), [0.0, 1.0, 5.0], rows=10, pairs=5), lo=0.0, hi=2.0)
_add("ppk.related.risk.sensitivity.Histogram", lambda **kw: sens.sample_sensitivities(
    sens.Histogram(**kw), [0.0, 1.0, 5.0], rows=10, pairs=5), edges=(0.0, 1.0, 2.0))
_add("ppk.related.risk.sensitivity.Ridge", lambda **kw: sens.sample_sensitivities(
    sens.Ridge(**kw), _CENSUS, rows=10, pairs=5), lam=0.01)
_add("ppk.related.risk.sensitivity.sample_sensitivities", sens.sample_sensitivities, query=sens.Ridge(),
     data=_CENSUS, rows=10, pairs=5, seed=0, backend="cpp")
_add("ppk.related.risk.sensitivity.sample_sensitivities (scalar)", sens.sample_sensitivities, query=sens.Count(),
     data=[0.0, 1.0, 1.0], rows=10, pairs=5, seed=0)
_add("ppk.related.risk.sensitivity.EmpiricalSensitivity", sens.EmpiricalSensitivity, samples=[1.0, 2.0, 3.0])


def _empirical():
    return sens.EmpiricalSensitivity([1.0, 2.0, 3.0])


_add("ppk.related.risk.sensitivity.EmpiricalSensitivity.ecdf", _method(_empirical, "ecdf"), x=2.5)
_add("ppk.related.risk.sensitivity.EmpiricalSensitivity.sampled_sensitivity",
     _method(_empirical, "sampled_sensitivity"), gamma2=0.9)
_add("ppk.related.risk.sensitivity.synthetic_census", sens.synthetic_census, n=50, rng=1)

# ppk.related.risk.figures
_add("ppk.related.risk.figures.fig1_eps_vs_confidence_k",
     _closing_figures(lambda **kw: rf.fig1_eps_vs_confidence_k(_TMP, **kw)), eps0=1.0, ks=(1, 2))
_add("ppk.related.risk.figures.fig2_eps_vs_confidence_eps0",
     _closing_figures(lambda **kw: rf.fig2_eps_vs_confidence_eps0(_TMP, **kw)), eps0s=(0.5, 1.0))
_add("ppk.related.risk.figures.fig_budget", _closing_figures(lambda **kw: rf.fig_budget(_TMP, **kw)), eps0=1.0,
     name="budget.png", model=risk.CostModel(E=5500.0, n_stakeholders=100))
_add("ppk.related.risk.figures.fig8_budget_variation",
     _closing_figures(lambda **kw: rf.fig8_budget_variation(_TMP, **kw)), eps0s=(0.5, 1.0))
_add("ppk.related.risk.figures.fig12_composition",
     _closing_figures(lambda **kw: rf.fig12_composition(_TMP, **kw)), delta=1e-5, eps0s=(0.5, 1.0))


#: Public callables without a catalog entry, and why: nothing in them takes input a probe could make bad.
SKIPPED: dict[str, str] = {
    # warnings and exceptions ppk raises: their constructors take a message
    "ppk.InsecureRandomnessWarning": "a warning class",
    "ppk.ExposureWarning": "a warning class",
    "ppk.baselines.NotDifferentiallyPrivateWarning": "a warning class",
    "ppk.evaluation.SweepInterrupted": "an exception ppk raises with the rows it finished",
    "ppk.ledger.LedgerRefusal": "an exception ppk raises when a ledger's budget cannot pay for a release",
    "ppk.plan_file.PlanFile": "result record built by read_plan",
    "ppk.plan_file.read_plan": "only a path (its content's errors are tested in test_plan_file.py)",
    # records ppk fills from validated values: users read them, ppk builds them
    "ppk.algorithm2.Alg2Result": "result record built by alg2",
    "ppk.Release": "result record built by release",
    "ppk.algorithm2.PrivateDraws": "record of the secret draws built by release(audit=True)",
    "ppk.Calibration": "result record built by calibrate",
    "ppk.release.HistogramRelease": "result record built by release(counts=...)",
    "ppk.related.pk.DeltaResult": "result record built by apk_delta/ppk_delta",
    "ppk.related.risk.OptimalPaR": "result record built by CostModel.optimal",
    "ppk.noise.Window": "record of a pmf built by the natural laws' window()",
    # methods without parameters
    "ppk.algorithm2.Alg2Result.ledger": "no parameters",
    "ppk.Release.public": "no parameters",
    "ppk.noise.Window.mirrored": "no parameters",
    "ppk.PrivacyLossDistribution.privacy_profile": "no parameters (the callable it returns is "
                                                   "get_delta_for_epsilon, probed)",
    "ppk.PrivacyLossDistribution.to_dp_accounting": "no parameters",
    "ppk.Accountant.pld": "no parameters",
    "ppk.HistogramQuery.worst_pair": "no parameters",
    "ppk.CountingQuery.without_natural_noise": "no parameters",
    "ppk.NoisyQuery.without_natural_noise": "no parameters",
    "ppk.HistogramQuery.without_natural_noise": "no parameters",
    "ppk.TablePlan.without_natural_noise": "no parameters",
    "ppk.TablePlan.pairs": "no parameters",
    "ppk.OverlappingCounts.without_natural_noise": "no parameters",
    "ppk.related.risk.sensitivity.EmpiricalSensitivity.max": "no parameters",
    "ppk.related.risk.sensitivity.Count": "no parameters (probed through sample_sensitivities)",
    # abstract bases: their methods raise NotImplementedError; the laws above implement them
    "ppk.noise.NaturalNoise": "abstract base",
    "ppk.noise.NaturalNoise.window": "abstract base",
    "ppk.noise.AddedNoise": "abstract base",
    **{f"ppk.noise.AddedNoise.{m}": "abstract base" for m in ("log_density", "log_sf", "log_cdf", "reach",
                                                              "with_scale")},
    # only a path
    "ppk.evaluation.read_csv": "only a path (its content's errors are tested in test_evaluate.py)",
    "ppk.figures.fig_fraction_excluded": "only the output folder",
    "ppk.related.risk.figures.draw_all": "only the output folder",
    # the command line: its argv is fuzzed flag by flag in tests/test_fuzz.py
    "ppk.cli.main": "argv strings, fuzzed by tests/test_fuzz.py::test_cli_bad_and_extreme_values",
    "ppk.cli.build_parser": "no parameters",
}
SKIPPED.update({"ppk.sampler_timing.TimingReport": "result record built by measure_timing",
                "ppk.sampler_timing.TimingReport.summary": "no parameters"})
# the reviewer's record of a release: labels and dicts of published values, no numbers to probe
SKIPPED.update({name: "builds the published record from labels (strings) and result dicts" for name in (
    "ppk.records.make_record", "ppk.release.HistogramRelease.belief", "ppk.release.HistogramRelease.public")
    if name in public_callables()})
SKIPPED.update({"ppk.records.verify_input": "a path, a key and a hex string, no numbers: tests/test_release_guard.py"})

#: (entry, parameter) -> why that parameter of the signature is not probed.
NOT_PROBED: dict[tuple[str, str], str] = {
    **{(name, "out_dir"): "an output folder: probing paths would write into the working directory"
       for name in CATALOG if name.startswith(("ppk.figures.", "ppk.related.risk.figures.", "ppk.evaluation.evaluate"))},
    ("ppk.evaluation.write_csv", "path"): "an output path",
    ("ppk.ledger.Ledger", "path"): "the ledger's file: probing paths would write into the working directory",
    ("ppk.ledger.Ledger.open", "path"): "the ledger's file: probing paths would write into the working directory",
    ("ppk.evaluation.evaluate", "figures"): "True draws all ten figures (~15 s, beyond the time limit); checked by "
                                           "the same flag() as progress and resume, which are probed",
    ("ppk.plot_privacy_curve", "path"): "an output path",
    ("ppk.tradeoff.plot_tradeoff", "path"): "an output path",
    ("ppk.tradeoff.write_tradeoff", "path"): "an output path",
    ("ppk.PrivacyLossDistribution", "_atoms"): "private (underscore) parameter",
    **{(f"ppk.Accountant.{m}", "epsilon"): "the alias of eps: probed in the (epsilon) entry"
       for m in ("delta", "delta_bracket")},
    **{(f"ppk.Accountant.{m} (epsilon)", "eps"): "probed in the entry without the variant"
       for m in ("delta", "delta_bracket")},
    ("ppk.Accountant.add_randomized_response", "noise_parameter"): "probed in the (k-ary) entry",
    ("ppk.Accountant.add_randomized_response", "num_buckets"): "probed in the (k-ary) entry",
    ("ppk.Accountant.add_randomized_response (k-ary)", "eps0"): "probed in the entry without the variant",
    # the other way of calling: its other parameters are probed in the main entry
    **{(f"{name} (data)", p): "probed in the entry without the variant" for name in ("ppk.alg2", "ppk.release")
       for p in _ALG2 if p != "count"},
}

#: (entry, parameter or "*" for any) whose probes may return an infinity (never NaN), and why: each
#: is a documented value, not an overflow.
INFINITE_OK: dict[tuple[str, str], str] = {
    ("ppk.NoisyQuery.log_delta", "eps"): "log of a delta that is 0 (Laplace noise of scale 2 is 0.5-DP)",
    ("ppk.NoisyQuery.log_delta_upper", "eps"): "log of a delta that is 0 (Laplace noise of scale 2 is 0.5-DP)",
    ("ppk.PrivacyLossDistribution.log_delta_bracket", "eps"): "log of a delta that is 0",
    **{(f"ppk.ShuffledRandomizedResponse.{m}", "eps"): "log of a delta that is 0 (eps >= eps0: randomized "
       "response is eps0-DP)" for m in ("log_delta", "log_delta_upper", "log_delta_bracket", "split_log_delta_bracket")},
    ("ppk.related.pk.ThresholdCount", "p"): "log_delta of a delta that is 0 (p = 0: no row is ever 1)",
    ("ppk.PrivacyLossDistribution.get_epsilon_for_delta", "delta"): "inf when no eps reaches delta",
    ("ppk.Accountant.epsilon", "delta"): "inf when no eps reaches delta",
    ("ppk.Accountant.get_epsilon", "target_delta"): "inf when no eps reaches delta",
    ("ppk.dpsgd_epsilon", "*"): "inf when no eps reaches delta",
    ("ppk.noise.Binomial.log_pmf", "k"): "log of a probability that is 0 (k outside 0..n)",
    ("ppk.baselines.analytic_gaussian_epsilon", "*"): "inf when no eps reaches delta (documented: sigma = 0)",
    **{(f"ppk.noise.{law}.{m}", "x"): "log of a probability that is 0" for law in _ADDED
       for m in ("log_density", "log_sf", "log_cdf")},
    **{(f"ppk.noise.{law}.window", "depth"): "a window's log_dropped is -inf when nothing is dropped"
       for law in _NATURAL},
    ("ppk.related.risk.CostModel.eps_upper_bound", "*"): "inf if any eps fits the budget (documented)",
    ("ppk.related.risk.crossover", "eps"): "inf when privacy at risk never wins (documented)",
    ("ppk.related.risk.crossover", "gamma"): "inf when advanced composition never wins (documented)",
    **{(f"ppk.evaluation.{name}", "*"): "gain = inf where no noise is needed (documented)"
       for name in ("GridPoint", "evaluate_point", "run_sweep", "evaluate")},
    **{(name, "known"): "t = inf at known = 0: no rows to estimate from, the bias interval is [0, 1]"
       for name in ("ppk.alg2", "ppk.release")},
}


def _infinite_ok(name: str, param: str) -> bool:
    return (name, param) in INFINITE_OK or (name, "*") in INFINITE_OK


#: Fields of result records in which NaN means "not applicable" (documented on the record).
NAN_FIELDS = {"p_lo", "p_hi", "tau", "sigma_ppk", "sigma_cor32", "sigma_classic"}

#: Parameters whose probes fail in files other teams own: (entry, parameter) -> the owning file under
#: src/ppk.  /tmp/fuzz_findings.md lists every failing value and what happened.  The owner fixes the
#: parameter and deletes its line: test_bad_and_extreme_values fails while a listed parameter has no
#: failing probe left, and fails for any failing probe of a parameter not listed.
KNOWN_GAPS: dict[tuple[str, str], str] = {
}

#: Probes of KNOWN_GAPS that run into the time limit: not run, so that each does not cost TIME_LIMIT s.
HANGS: set[tuple[str, str, str]] = set()


# --- the probe ----------------------------------------------------------------------------------

def _limits():
    """At most TIME_LIMIT seconds and MEMORY_LIMIT more bytes of address space for the block."""
    return within(TIME_LIMIT, memory=MEMORY_LIMIT)


def _non_finite(x: Any, infinite_ok: bool, field: str = "", depth: int = 0) -> str | None:
    """Where ``x`` holds NaN (or an infinity, unless ``infinite_ok``), else None."""
    if depth > 5:
        return None
    where = f"result{field}"
    if isinstance(x, (float, np.floating, complex, np.complexfloating)):
        if x != x:
            return f"NaN at {where}"
        if not infinite_ok and abs(x) == math.inf:
            return f"{x} at {where}"
        return None
    if isinstance(x, np.ndarray):
        if x.dtype.kind not in "fc":
            return None
        if np.isnan(x).any():
            return f"NaN in the array at {where}"
        if not infinite_ok and np.isinf(x).any():
            return f"inf in the array at {where}"
        return None
    items: list[tuple[str, Any]] = []
    if isinstance(x, (list, tuple)):
        items = [(f"{field}[{i}]", v) for i, v in enumerate(x[:1000])]
    elif isinstance(x, dict):
        items = [(f"{field}[{k!r}]", v) for k, v in x.items() if k not in NAN_FIELDS]
    elif type(x).__module__.split(".")[0] == "ppk":   # a ppk object: its fields
        names = [f.name for f in dataclasses.fields(x)] if dataclasses.is_dataclass(x) else \
            list(getattr(x, "__dict__", {})) + [s for c in type(x).__mro__ for s in getattr(c, "__slots__", ())]
        items = [(f"{field}.{n}", getattr(x, n, None)) for n in names
                 if not n.startswith("__") and n not in NAN_FIELDS]
    for sub, v in items:
        found = _non_finite(v, infinite_ok, sub, depth + 1)
        if found:
            return found
    return None


def _names(message: str, param: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9_])", message) is not None


def probe(name: str, param: str, value: Any, fn: Callable[..., Any] | None = None) -> str | None:
    """None if ``name`` behaves with ``param=value`` (the other parameters valid), else a finding.

    ``fn`` replaces the catalog's call (taking ``param`` only), for tests that build their own object."""
    fn, valid = (fn, {}) if fn is not None else CATALOG[name]
    where = f"{name}({param}={_label(value)})"
    try:
        with _limits(), warnings.catch_warnings():
            warnings.simplefilter("error")
            for category in BENIGN_WARNINGS:
                warnings.simplefilter("ignore", category)
            result = fn(**{**valid, param: value})
    except Timeout:
        return f"{where}: no answer in {TIME_LIMIT} s"
    except (TypeError, ValueError) as exc:
        if not _names(str(exc), param):
            return f"{where}: {type(exc).__name__} does not name {param!r}: {str(exc)[:160]}"
        return None
    except Exception as exc:   # noqa: BLE001 -- every other exception is a finding
        return f"{where}: {type(exc).__name__}: {str(exc)[:160]}"
    found = _non_finite(result, _infinite_ok(name, param))
    return f"{where}: {found}" if found else None


def findings(names=None, labels=None) -> dict[tuple[str, str, str], str]:
    """Every failing probe of BAD: (entry, parameter, value label) -> finding."""
    out = {}
    for name, (fn, valid) in CATALOG.items():
        if names is not None and name not in names:
            continue
        for param in valid:
            for label, value in BAD.items():
                if (labels is not None and label not in labels) or (name, param, label) in HANGS:
                    continue
                found = probe(name, param, value)
                if found:
                    out[(name, param, label)] = found
    return out


# --- the tests -------------------------------------------------------------------------------------

def _base(entry: str) -> str:
    return entry.split(" ")[0]


def test_catalog_covers_every_public_callable():
    public = set(public_callables())
    covered = {_base(name) for name in CATALOG} | set(SKIPPED)
    missing = sorted(public - covered)
    assert not missing, ("public callables without a catalog entry (add one to CATALOG, or to SKIPPED with the "
                         "reason it takes no input): " + ", ".join(missing))
    stale = sorted(covered - public)
    assert not stale, "catalog or SKIPPED entries that are no public callable: " + ", ".join(stale)


def test_catalog_covers_every_parameter():
    public = public_callables()
    probed: dict[str, set[str]] = {}
    for name, (_, valid) in CATALOG.items():
        probed.setdefault(_base(name), set()).update(valid)
        probed[_base(name)].update(p for (entry, p) in NOT_PROBED if entry == name)
    missing = []
    for base, params in probed.items():
        sig = inspect.signature(public[base])
        for p in sig.parameters.values():
            if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) \
                    and p.name not in params:
                missing.append(f"{base}({p.name})")
    assert not missing, "parameters no probe replaces (add them to the entry, or to NOT_PROBED): " + ", ".join(missing)


@pytest.mark.parametrize("name", list(CATALOG))
def test_valid_values_are_valid(name):
    """Each entry's valid values give a finite answer: else every probe of it would fail for the wrong reason."""
    fn, valid = CATALOG[name]
    with _limits(), warnings.catch_warnings():
        for category in BENIGN_WARNINGS:
            warnings.simplefilter("ignore", category)
        result = fn(**valid)
    assert _non_finite(result, _infinite_ok(name, "*") or any(k[0] == name for k in INFINITE_OK)) is None


def test_a_probe_can_fail(monkeypatch):
    """The checks catch each kind of finding (a test that cannot fail proves nothing)."""
    def record(x):
        return {"nan": lambda: math.nan, "inf": lambda: math.inf, "index": lambda: [][1],
                "unnamed": lambda: int("abc"), "named": lambda: real("x", None), "slow": lambda: time.sleep(3),
                "huge": lambda: np.ones(MEMORY_LIMIT // 4)}[x]()

    CATALOG["_selftest"] = (record, {"x": "named"})
    try:
        assert probe("_selftest", "x", "named") is None   # TypeError: x must be a real number
        assert "NaN" in probe("_selftest", "x", "nan")
        assert "inf" in probe("_selftest", "x", "inf")
        assert "IndexError" in probe("_selftest", "x", "index")
        assert "does not name" in probe("_selftest", "x", "unnamed")
        assert "KeyError" in probe("_selftest", "x", "unknown")
        assert "MemoryError" in probe("_selftest", "x", "huge")
        monkeypatch.setattr(sys.modules[__name__], "TIME_LIMIT", 1)
        assert "no answer" in probe("_selftest", "x", "slow")
    finally:
        del CATALOG["_selftest"]
    assert not _names("eps_estimate must be > 0", "eps") and _names("eps must be > 0, got nan", "eps")
    assert not _names("n must be >= 1", "N")


@pytest.mark.parametrize("name", list(CATALOG))
def test_bad_and_extreme_values(name):
    found = findings([name])
    new = [text for (entry, param, _), text in found.items() if (entry, param) not in KNOWN_GAPS]
    assert not new, "\n".join(new)
    failing = {(entry, param) for (entry, param, _) in [*found, *HANGS]}   # a hang is not run, not fixed
    fixed = sorted(gap for gap in KNOWN_GAPS if gap[0] == name and gap not in failing)
    assert not fixed, f"no probe of these fails any more: delete them from KNOWN_GAPS: {fixed}"


def _random_values() -> st.SearchStrategy:
    floats = st.floats(allow_nan=True, allow_infinity=True)
    huge = st.integers(min_value=-(2**80), max_value=2**80) | st.sampled_from([2**63 - 1, 2**63, -(2**63), 10**400])
    return st.one_of(
        st.sampled_from(list(BAD.values())), floats, huge, st.integers(-3, 10**7),
        st.integers(-(2**63), 2**63 - 1).map(np.int64), floats.map(np.float64),
        st.floats(width=32, allow_nan=True, allow_infinity=True).map(np.float32),
        st.booleans(), st.none(), st.text(max_size=4), st.complex_numbers(),
        st.fractions(), st.decimals(allow_nan=True, allow_infinity=True, places=None),
        st.lists(floats | huge, max_size=4), st.lists(floats, max_size=4).map(np.array),
    )


@pytest.mark.parametrize("name", list(CATALOG))
@settings(max_examples=10, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(data=st.data())
def test_random_bad_values(name, data):
    """Values hypothesis draws (not only BAD's).  An (entry, parameter) pair with a known gap is allowed
    to fail here too: its owner's fix is checked by test_bad_and_extreme_values."""
    _, valid = CATALOG[name]
    if not valid:
        return
    param = data.draw(st.sampled_from(sorted(valid)), label="param")
    if (name, param) in KNOWN_GAPS:
        return
    value = data.draw(_random_values(), label="value")
    found = probe(name, param, value)
    assert found is None, found


if __name__ == "__main__":
    items = findings(sys.argv[1:] or None)
    for key, text in items.items():
        print(("KNOWN " if key in KNOWN_GAPS else "") + text)
    print(f"{len(items)} findings, {sum(1 for k in items if k not in KNOWN_GAPS)} not in KNOWN_GAPS")
