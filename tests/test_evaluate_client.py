"""evaluate / run_sweep take a dask.distributed Client as the README words it (issue #44 item 4): duck-typed,
through its get_executor(), with no dask import.  Before, only client.get_executor() was accepted."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from ppk import evaluation


class _Client:
    """What ppk reads of a dask Client: get_executor() -> a concurrent.futures.Executor."""

    def __init__(self):
        self.pool = ThreadPoolExecutor(max_workers=1)

    def get_executor(self):
        return self.pool


def test_a_client_is_taken_through_its_executor():
    client, results = _Client(), []
    rows = evaluation.run_sweep([], executor=client, progress=False, side_tasks=[(abs, (-3,))], side_results=results)
    assert rows == [] and results == [3]
    client.pool.shutdown()


def test_other_objects_are_still_refused():
    with pytest.raises(TypeError, match="dask.distributed Client"):
        evaluation.run_sweep([], executor=object(), progress=False)
