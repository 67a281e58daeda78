"""Stored oracle values (tests/oracles/<name>.json, each written by tests/oracles/make_<name>.py)."""
import json
import os


def compute_and_write(path, header, names, compute):
    """Write ``{**header, "values": {name: compute(name)}}`` to ``path`` (indent 1, keys sorted: a generator run
    again rewrites its file bit for bit), and each value's CPU seconds to stderr, slowest last."""
    import sys
    import time

    values, seconds = {}, {}
    for name in sorted(names):
        start = time.process_time()
        values[name] = compute(name)
        seconds[name] = time.process_time() - start
    with open(path, "w") as fh:
        json.dump({**header, "values": values}, fh, indent=1, sort_keys=True)
        fh.write("\n")
    for name in sorted(seconds, key=seconds.get):
        print(f"{seconds[name]:8.2f} s  {name}", file=sys.stderr)
    print(f"total {sum(seconds.values()):.1f} s CPU, {len(values)} values -> {path}", file=sys.stderr)


def load(name):
    with open(os.path.join(os.path.dirname(__file__), f"{name}.json")) as fh:
        return json.load(fh)
