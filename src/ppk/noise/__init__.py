"""The laws of a release: the natural noise the unknown rows make, and the noise the mechanism adds.

A query over ``n`` rows releases ``f(D) + Z``.  The rows the attacker does not know contribute a
random integer total ``X`` (the *natural noise*, the attacker's belief about those rows); ``Z`` is the
*added noise*.  :class:`ppk.NoisyQuery` combines one law of each kind; ``docs/natural-noise.md``
explains how its privacy curve is computed and which path each combination takes.

Natural-noise laws (integer-valued; every pmf exact in long double, in log space):

* :class:`Binomial` -- i.i.d. Bernoulli(p) rows (``ppk.CountingQuery``'s case).
* :class:`PoissonBinomial` -- each row its own probability (``probs=``), or groups of rows that
  share one (``groups=[(count, p), ...]``).
* :class:`BetaBinomial` -- the attacker is unsure of p: a Beta(a, b) prior over it.
* :class:`BinomialMixture` -- a discrete prior over p.
* :class:`RowSum` -- each unknown row holds an integer ``0..B`` with a given pmf; ``X`` is their sum.
* :class:`Pmf` -- any pmf on consecutive integers.

Added-noise laws: :class:`Gaussian`, :class:`Laplace`, :class:`DiscreteGaussian` (Canonne, Kamath &
Steinke), :class:`DiscreteLaplace` (two-sided geometric) and :class:`NoNoise`.  Every scale is in
the units of the query (counts for a count).

The package: :mod:`ppk.noise.natural` (the natural laws), :mod:`ppk.noise.added` (the added laws),
:mod:`ppk.noise.window` (:class:`Window`, and the window of a log-concave law) and
``ppk.noise._convolve`` (the convolution engine of the summed laws: its precision and its work limit).
Import the laws from here: ``from ppk import noise; noise.Binomial(...)``.
"""
from __future__ import annotations

from ._convolve import MAX_CONVOLUTION_WORK
# _Linear is private to the convolution engine; ppk.noisy_query convolves a window with a discretised
# added noise through it, and imports it from here until it takes it from ppk.noise._convolve.
from ._convolve import _Linear
from .added import (ADDED_BY_NAME, MIN_SCALE, AddedNoise, DiscreteGaussian, DiscreteLaplace, Floats, Gaussian, Laplace,
                    NoNoise)
from .natural import (PMF_TOLERANCE, BetaBinomial, Binomial, BinomialMixture, NaturalNoise, Pmf, PoissonBinomial,
                      RowSum)
from .window import LD, MAX_WINDOW, LDArray, Window

__all__ = ["Binomial", "PoissonBinomial", "BetaBinomial", "BinomialMixture", "RowSum", "Pmf",
           "Gaussian", "Laplace", "DiscreteGaussian", "DiscreteLaplace", "NoNoise", "Window",
           "NaturalNoise", "AddedNoise", "MAX_WINDOW"]
