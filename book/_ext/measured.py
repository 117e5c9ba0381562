"""Placeholder, filled below."""


def tables(figures):
    return {}
