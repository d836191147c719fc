"""Rule modules, one per section of the kernel cleanup guide (`s<section>_*.py`).

Importing this package registers every rule; front ends never name a rule.
"""

import importlib
import os

from ._base import Rule, registered_rules


def all_rules() -> dict[str, type[Rule]]:
    """Every rule, by code: importing this package registered them all."""
    return registered_rules()


# A folder listing, not pkgutil: importing pkgutil pulls in typing (some 3 ms of a run).
for _module in sorted(name[:-3] for name in os.listdir(__path__[0]) if name.startswith("s") and name.endswith(".py")):
    importlib.import_module(f"{__name__}.{_module}")
