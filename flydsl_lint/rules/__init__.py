"""Rule modules, one per section of the kernel cleanup guide (`s<section>_*.py`).

Importing this package registers every rule; front ends never name a rule.
"""

import importlib
import pkgutil

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("s")):
    importlib.import_module(f"{__name__}.{_module}")
