"""Holding Ctrl-C and SIGTERM back across steps that must not be cut in half."""

from __future__ import annotations

import contextlib
import signal

_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def signals_held():
    """Delay SIGINT/SIGTERM until the block ends (then their handlers run, e.g. raising KeyboardInterrupt).

    The mask is per thread and inherited by the subprocesses started inside the block.
    """
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
