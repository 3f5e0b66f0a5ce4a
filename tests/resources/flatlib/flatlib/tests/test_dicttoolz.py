from flatlib import merge, valmap


def test_merge():
    assert merge({"a": 1}, {"a": 2, "b": 3}) == {"a": 2, "b": 3}


def test_valmap():
    assert valmap(str, {"a": 1}) == {"a": "1"}
