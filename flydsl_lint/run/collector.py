"""The cyclic garbage collector, paused while files are checked."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Keep the cyclic collector off inside the block, then restore it as it was.

    A check builds a tree and a model of some 100k objects; a collection in the middle of
    one walks them and everything a run keeps, and finds nothing to free: the model breaks
    its own cycles (SemanticModel.release). Free what a run kept inside the block, so the
    collector does not meet it when it is back (ProjectIndex.release)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
