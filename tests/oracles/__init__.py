"""Stored oracle values (tests/oracles/<name>.json, each written by tests/oracles/make_<name>.py)."""
import json
import os


def load(name):
    with open(os.path.join(os.path.dirname(__file__), f"{name}.json")) as fh:
        return json.load(fh)
