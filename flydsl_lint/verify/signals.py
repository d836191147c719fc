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


def forget_interrupt_escaped_from_exec() -> None:
    """Let the exit status given after a caught Ctrl-C stand.

    A KeyboardInterrupt that leaves code run from a string (dataclasses and
    namedtuple build methods that way) sets a flag in CPython (3.10-3.13:
    ``run_eval_code_obj`` in Python/pythonrun.c) that catching it does not
    clear; under ``python -m`` a set flag ends the process by SIGINT at exit,
    whatever status it gave. Running any string clears the flag.
    """
    exec("")
