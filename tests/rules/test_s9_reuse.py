"""§9: project-resolved launchers in host loops; suggestions name existing helpers only."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import lint_text, write_package

PROJECT = Path(__file__).resolve().parents[1] / "fixtures" / "s9_project"


def test_imported_launcher_in_a_host_loop_is_flagged(tmp_path):
    text = (
        "from kernels.launchers import launch_gemm, guarded\n\n"
        "def bench(a, b, s, iters):\n"
        "    for _ in range(iters):\n"
        "        launch_gemm(a, b, s)\n"
        "        guarded(a)\n"
    )
    found = lint_text(text, tmp_path, select=("FLY903",), root=PROJECT)
    assert [(d.start.row, d.code) for d in found] == [(5, "FLY903")]


def test_log2e_advice_follows_the_project(tmp_path):
    with_shared = lint_text("import flydsl.expr as fx\nLOG2E = 1.4426950408889634\n", tmp_path, select=("FLY901",), root=PROJECT)
    assert "import `LOG2E` from `kernels.common.kernels_common`" in with_shared[0].message
    without = lint_text("import flydsl.expr as fx\nLOG2E = 1.4426950408889634\n", tmp_path, select=("FLY901",))
    assert "define it once in the shared module" in without[0].message


def test_project_launchers_are_the_last_decorated_top_level_defs(tmp_path):
    # Modules without a decorated top-level def are answered from their outline, the
    # others from their tree: both ways, the last def of a name decides.
    write_package(tmp_path, {
        "plain": ("import flydsl.compiler as flyc\n\n"
                  "def launch(a):\n    kern(a).launch()\n\n"
                  "def build():\n    @flyc.jit\n    def inner(a):\n        kern(a).launch()\n    return inner\n"),
        "redefined": ("import flydsl.compiler as flyc\n\n"
                      "@flyc.jit\ndef launch(a):\n    kern(a).launch()\n\n"
                      "def launch(a):\n    pass\n\n"
                      "def run(a):\n    pass\n\n"
                      "@flyc.jit\ndef run(a):\n    kern(a).launch()\n"),
    })
    text = (
        "from kernels import plain, redefined\n\n"
        "def bench(a, n):\n"
        "    for _ in range(n):\n"
        "        plain.launch(a)\n"
        "        plain.build(a)\n"
        "        redefined.launch(a)\n"
        "        redefined.run(a)\n"
    )
    found = lint_text(text, tmp_path, select=("FLY903",), root=tmp_path)
    assert [(d.start.row, d.code) for d in found] == [(8, "FLY903")]
