"""A NoisyQuery shared by 8 threads answers as it does serially, bit for bit (issue #45).

Its caches (the natural noise's windows by depth, their C++ copies, the added law in C++, the first
window's variance, the noiseless query of the cap) are filled under the query's lock.  Unlocked, two
threads built the same window twice; the first copy was freed, its id passed to a deeper window, and the
C++ windows, keyed by id, answered that one with the shallower window's: a looser bound in 47 of 312
calls.  Here each law's ``window`` sleeps a millisecond first, which releases the GIL the way a long
build does, so that the eight threads do meet inside the cache on every run (without it the old code
went wrong in about 1 call in 300).
"""
import pickle
import threading
import time

import pytest

import ppk
from ppk import noise

THREADS = 8
ROUNDS = 4        # fresh queries: the old code failed the threshold case in 3 of 6 runs of one round
EPS = [0.3, 1.0, 2.0, 4.0, 6.0, 9.0, 14.0, 20.0]     # one per thread: shallow to deep windows


def _slow(cls):
    """``cls`` whose window() first gives up the GIL for a millisecond (the same values, later)."""
    def window(self, depth):
        time.sleep(1e-3)
        return cls.window(self, depth)
    return type(f"Slow{cls.__name__}", (cls,), {"window": window})


CASES = {   # name: a query factory, one per path of the family engine (and a binomial's C++ windows)
    "threshold": lambda: ppk.NoisyQuery(natural=_slow(noise.PoissonBinomial)(groups=[(60, 0.2), (40, 0.6)]),
                                        added=noise.Gaussian(1.5), sensitivity=3),
    "lattice sum": lambda: ppk.NoisyQuery(natural=_slow(noise.BetaBinomial)(40, 0.5, 0.5),
                                          added=noise.DiscreteGaussian(2.0)),
    "crossings": lambda: ppk.NoisyQuery(natural=_slow(noise.BinomialMixture)(60, [0.3, 0.7], [0.2, 0.7]),
                                        added=noise.Laplace(3.0)),
    "binomial": lambda: ppk.NoisyQuery(natural=noise.Binomial(300, 0.3), added=noise.DiscreteLaplace(2.0),
                                       sensitivity=2),
}


def _point(q, eps):
    return q.log_delta(eps), q.log_delta_upper(eps)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_query_shared_by_eight_threads_gives_the_serial_results(case):
    serial = [_point(CASES[case](), e) for e in EPS]     # a fresh query per eps: no history at all
    for _ in range(ROUNDS):
        q = CASES[case]()
        assert q.path == (case if case != "binomial" else "threshold")
        start = threading.Barrier(THREADS)
        out: dict = {}

        def work(k):
            start.wait()         # all eight enter the empty caches together
            out[k] = _point(q, EPS[k])

        threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert [out[k] for k in range(THREADS)] == serial
    assert [_point(q, e) for e in EPS] == serial      # and the filled caches give them again


def test_a_used_query_pickles_without_its_caches():
    q = ppk.NoisyQuery(natural=noise.PoissonBinomial(groups=[(60, 0.2), (40, 0.6)]), added=noise.Gaussian(1.5))
    want = _point(q, 2.0)           # the caches now hold C++ windows and the lock
    back = pickle.loads(pickle.dumps(q))
    assert repr(back) == repr(q) and back._windows == {}
    assert _point(back, 2.0) == want

