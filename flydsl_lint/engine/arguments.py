"""Option values both command lines (flydsl-lint, flydsl-lint-verify) refuse: one given empty,
as `--config "$CFG"` with the variable unset, must not quietly mean the option's default."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Callable


def named(text: str, items: Callable[[str], list[str]] = lambda text: [text]) -> str:
    """`text` when one of its `items` (the whole text, or a list option's entries) names something."""
    if not any(item.strip() for item in items(text)):
        raise argparse.ArgumentTypeError(f"{text!r} names nothing (leave the option out for its default)")
    return text


def named_path(text: str) -> Path:
    """A path option's value: an empty one would be the current folder."""
    return Path(named(text))
