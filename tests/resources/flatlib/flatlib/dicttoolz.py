"""Dictionary helpers."""


def merge(*dicts):
    """One dictionary with the keys of all; later ones win."""
    out = {}
    for d in dicts:
        out.update(d)
    return out


def valmap(func, d):
    """d with func applied to each value."""
    return {key: func(value) for key, value in d.items()}
