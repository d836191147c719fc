"""flydsl-lint-verify: prove a change keeps FlyDSL kernels' ISA (or device results) at parity.

The entry point. It imports the command inside ``main``, with Ctrl-C held
back until the import is done: a KeyboardInterrupt raised inside the import
machinery can surface as an "Exception ignored" traceback, or (raised in code
that a module runs through ``exec``, as dataclasses do) make CPython end the
process by SIGINT instead of with the exit status given. So an interrupt at
any moment after the hold below ends in one "interrupted" line and exit
status 130. (The hold is the module's first statement, so there is no
`from __future__` import before it.) Later in the run, the handler clears what
an interrupt leaving exec'd code would leave behind
(`forget_interrupt_escaped_from_exec`).
"""

if __name__ == "__main__":
    # Run as `python -m`: hold Ctrl-C back before the first import below (`signal` alone
    # imports enum), with the C module the interpreter has already loaded. main() lets it go.
    import _signal

    _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT, _signal.SIGTERM})

import signal
import sys

from flydsl_lint.engine.interrupts import forget_interrupt_escaped_from_exec
from flydsl_lint.verify.signals import signals_held

EXIT_INTERRUPTED = 130


def _raise_keyboard_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    # CI cancels jobs with SIGTERM; treat it like Ctrl-C so worktrees get removed.
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    try:
        with signals_held():
            from flydsl_lint.verify import command
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})  # what `python -m` held
        return command.main(argv)
    except KeyboardInterrupt as exc:
        forget_interrupt_escaped_from_exec()
        detail = str(exc)
        print("flydsl-lint-verify: interrupted" + (f"; {detail}" if detail else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        # Everything is cleaned up: a signal from now on must not turn the exit into a traceback.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


if __name__ == "__main__":
    sys.exit(main())
