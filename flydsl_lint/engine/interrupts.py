"""Ending a run that Ctrl-C interrupted with the exit status its entry point gives."""


def forget_interrupt_escaped_from_exec() -> None:
    """Let the exit status given after a caught Ctrl-C stand.

    A KeyboardInterrupt that leaves code run from a string (dataclasses and
    namedtuple build methods that way) sets a flag in CPython (3.10-3.13:
    ``run_eval_code_obj`` in Python/pythonrun.c) that catching it does not
    clear; under ``python -m`` a set flag ends the process by SIGINT at exit,
    whatever status it gave. Running any string clears the flag.
    """
    exec("")
