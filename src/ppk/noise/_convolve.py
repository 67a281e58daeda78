"""The convolution engine of the natural laws that are sums: row sums and Poisson-binomial groups
(and of ``ppk.noisy_query``, which convolves a window with a discretised added noise).

What it computes: the pmf of a sum of independent integer variables, on the window of values within
``e^-depth`` of the mode, from the windows of the parts.  Each window is held on a linear scale,
``values * e^log_scale`` with the largest value 1 (:class:`_Linear`), and convolved *directly*: every
output is a sum of products of positive terms, so there is no cancellation and each keeps a relative
error of a few units of the working precision (an FFT would add an absolute error of the largest
value's rounding, which swamps every value far below the mode).  After each product the ends below
``e^-depth`` of its peak are trimmed (:func:`_trim`); the mass they held is counted, with the parts'
own dropped mass, in ``log_dropped`` (docs/natural-noise.md, "Accuracy").

How precise, and why double precision is sometimes safe: a convolution runs in double when
``depth < _DOUBLE_DEPTH`` (600) and the final law holds its result at most ``_DOUBLE_AMPLIFIED`` (16)
times over, otherwise in long double (:func:`_in_double`).  Every kept value lies in
``[e^-depth, 1]``, which double holds without underflow down to ``e^-708``, so below depth 600 the
range loses nothing; and a direct sum of positive products has no cancellation, so each output keeps
a relative error of a few units of double rounding (~1e-16), the size of the allowance every path
gives a log-pmf value, ``4e-16 (1 + max |log w|)``.  What double cannot afford is repetition: a row
sum's partial power enters the final law ``count >> level`` times over, and so does its relative
rounding (at 5,000 rows in double the values were 1.4e-14 off), so those squarings run in long double
while that factor exceeds 16.  The scale factors (``log_scale``) are summed in long double throughout.
The errors measured against 40-digit sums are in docs/natural-noise.md, "Accuracy".

Work budget: the convolutions are quadratic, so a law estimates their cost before starting and
refuses a window beyond ``MAX_CONVOLUTION_WORK`` long-double multiply-adds; :class:`_Budget` is the
safety net behind that estimate.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from .. import _kernels
from .window import LD, LDArray, Window, _log_add

#: Below this depth (in e-folds) windows are convolved in double precision, above in long double.
_DOUBLE_DEPTH = 600.0
#: ... and while the result's rounding is amplified at most this many times in the final law
_DOUBLE_AMPLIFIED = 16

#: Most work one natural-noise window's convolutions may take, in long-double multiply-adds (2e8-4e8 a
#: second on one core; a double one counts 1/4): 10-20 s.  They are direct (quadratic, exact to the
#: last bits): a row sum of 1000 rows of 1000 values took minutes per window.
MAX_CONVOLUTION_WORK = 4e9
_LD_RATE = 2e8           # long-double multiply-adds a second, for the messages
_DOUBLE_WEIGHT = 1 / 4   # a double multiply-add against a long-double one: np.convolve ran 1.5e8-9e9 a
                         # second against 1.8e8-3.8e8 (measured on two shared cores, hence the margin)


def _in_double(depth: float, amplified: int) -> bool:
    """Whether a convolution at ``depth`` whose result the final law holds ``amplified`` times runs in double."""
    return depth < _DOUBLE_DEPTH and amplified <= _DOUBLE_AMPLIFIED


def _trim(offset: int, values: LDArray, log_scale: LD, depth: float) -> tuple[int, LDArray, float]:
    """Drop the ends of a linear pmf window (``values * e^log_scale``) below ``max e^-depth``; returns the
    trimmed window and the log of the exact mass it dropped."""
    # the cut in long double: math.exp(-depth) is 0.0 beyond depth 745 and would keep every value
    keep = np.nonzero(values >= values.max() * np.exp(LD(-depth)))[0]
    a, b = int(keep[0]), int(keep[-1]) + 1
    cut = values[:a].sum() + values[b:].sum()
    with np.errstate(divide="ignore"):
        log_cut = float(np.log(cut) + log_scale)
    return offset + a, values[a:b], log_cut


def _convolution_work(a: int, b: int, depth: float, amplified: int = 1) -> float:
    """Cost of one _Linear.convolve in long-double multiply-adds (its choice of precision)."""
    return float(a) * float(b) * (_DOUBLE_WEIGHT if _in_double(depth, amplified) else 1.0)


class _Budget:
    """Work spent on one window's convolutions; refuses a convolution that would pass the limit (a
    safety net behind the up-front estimates, which can be off by a factor for skewed laws)."""

    def __init__(self, what: str, limit: float = 2 * MAX_CONVOLUTION_WORK):
        self.what, self.limit, self.spent = what, limit, 0.0

    def charge(self, work: float) -> None:
        if self.spent + work > self.limit:
            raise ValueError(f"{self.what}: its window's exact convolutions need more than {self.limit:.3g} "
                             f"long-double multiply-adds (about {self.limit / _LD_RATE:.0f} s; spent "
                             f"{self.spent:.3g}, the next one {work:.3g}): use fewer rows, a row law with fewer "
                             "values, or a Pmf of the sum computed elsewhere")
        self.spent += work


@dataclass
class _Linear:
    """A window held as ``values * e^log_scale`` (values <= 1, the largest = 1), for convolutions."""

    offset: int
    values: LDArray
    log_scale: LD      # long double: it is a sum over every convolution of the tree (in double its
                       # rounding, ~1e-16 per level, was most of a row sum's 1e-13 error)
    log_dropped: float

    @classmethod
    def of(cls, w: Window) -> _Linear:
        top = w.log_pmf.max()
        return cls(w.offset, np.exp(w.log_pmf - top), LD(top), w.log_dropped)

    def convolve(self, other: _Linear, depth: float, amplified: int = 1, budget: _Budget | None = None) -> _Linear:
        """The product's window.  ``amplified``: how many copies of the result the final law holds (a
        row sum's partial powers): their rounding grows that many times, so beyond a few the
        convolution runs in long double.  ``budget`` is charged before the work starts."""
        if budget is not None:
            budget.charge(_convolution_work(self.values.size, other.values.size, depth, amplified))
        if _in_double(depth, amplified):
            # every kept value lies in [e^-depth, 1]: double holds it (no underflow), and a direct
            # convolution of positive terms keeps ~1e-16 relative -- several times faster than long double
            values = np.convolve(self.values.astype(float), other.values.astype(float)).astype(LD)
        else:
            values = _kernels.convolve_longdouble(self.values, other.values)
        top = values.max()
        values = values / top
        log_scale = self.log_scale + other.log_scale + np.log(top)
        offset, values, cut = _trim(self.offset + other.offset, values, log_scale, depth)
        # (P - D1) * (Q - D2) >= P * Q - D1 * Q - P * D2: the product leaves out at most D1 + D2
        return _Linear(offset, values, log_scale, _log_add(_log_add(self.log_dropped, other.log_dropped), cut))

    def window(self, log_concave: bool) -> Window:
        with np.errstate(divide="ignore"):
            return Window(self.offset, np.log(self.values) + self.log_scale, self.log_dropped, log_concave)


def _convolve_all(parts: list[_Linear], depth: float) -> _Linear:
    """Convolve windows, narrowest pairs first (a Huffman order keeps every product small)."""
    heap = [(p.values.size, i, p) for i, p in enumerate(parts)]
    heapq.heapify(heap)
    counter = len(parts)
    while len(heap) > 1:
        _, _, a = heapq.heappop(heap)
        _, _, b = heapq.heappop(heap)
        c = a.convolve(b, depth)
        heapq.heappush(heap, (c.values.size, counter, c))
        counter += 1
    return heap[0][2]
