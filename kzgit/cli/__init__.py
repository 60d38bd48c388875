"""The ``kzgit`` command line: ``main`` owns argv, one module per command."""
from __future__ import annotations

import argparse


def jobs_arg(text: str) -> int:
    """``-j N``: an integer >= 0 (0 = one per CPU), as the ``jobs`` setting; else a usage error."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer >= 0") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"invalid value {text!r}: expected an integer >= 0 "
                                         "(0 = one per CPU)")
    return n


def shard_arg(text: str) -> "tuple[int, int]":
    """``--shard I/N`` (1-based), as :func:`kzgit.graph.parse_shard` reads it; else a usage error."""
    from kzgit.graph import parse_shard   # only commands given --shard pay for the graph
    try:
        return parse_shard(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
