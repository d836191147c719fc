"""Imports a fix empties are removed in place: layout and comments stay."""

from flydsl_lint.fixes.apply import remove_unused_imports

BEFORE = """\
from flydsl.expr.utils.arith import (
    ArithValue,  # re-exported for callers
    _to_raw as _raw,
    current_fastmath,
)
from flydsl.expr.utils.arith import _to_raw as r2, current_fastmath as cf
from flydsl.expr.utils.arith import (cf2,
    _to_raw as r3)  # trailing
import os
use(_raw, current_fastmath, r2, cf, r3, cf2, os)
"""


def test_names_made_unused_go_and_everything_else_stays():
    after_fix = BEFORE.replace("use(_raw, current_fastmath, r2, cf, r3, cf2, os)", "use(current_fastmath, cf, cf2)")
    assert remove_unused_imports(BEFORE, after_fix, "\n") == """\
from flydsl.expr.utils.arith import (
    ArithValue,  # re-exported for callers
    current_fastmath,
)
from flydsl.expr.utils.arith import current_fastmath as cf
from flydsl.expr.utils.arith import (cf2)  # trailing
use(current_fastmath, cf, cf2)
"""


def test_imports_unused_before_the_fix_are_kept():
    text = "import os\nimport sys\nuse(sys)\n"
    assert remove_unused_imports(text, "import os\nimport sys\nuse(1)\n", "\n") == "import os\nuse(1)\n"


def test_a_dead_name_with_its_own_comment_keeps_the_comment():
    before = "from m import (\n    a,  # why a\n    b,\n)\nuse(a, b)\n"
    after = remove_unused_imports(before, before.replace("use(a, b)", "use(b)"), "\n")
    assert after == "from m import (\n      # why a\n    b,\n)\nuse(b)\n"
