import io
import json

from flydsl_lint.verify.compare import CHANGED, COMPILE_ERROR, IDENTICAL, KernelComparison
from flydsl_lint.verify.device import DeviceFinding
from flydsl_lint.verify.plan import Plan
from flydsl_lint.verify.report import (
    DEVICE_MODE_DISCLAIMER,
    ProgressBar,
    VerifyReport,
    render_github,
    render_json,
    render_markdown,
    render_terminal,
)

TEST_ID = "tests/kernels/test_vec_add.py::test_vec_add[4096]"


def _report(mode="compile"):
    plan = Plan("a" * 40, "working tree", ["kernels/x.py"], ["kernels/x.py"], ["tests/kernels/test_vec_add.py"], [],
                ["gfx942"], mode)
    changed = KernelComparison("vec_add_kernel_0", "gfx942", CHANGED, {"vgpr": (5, 9)}, {"valu": (3, 5)},
                               ["--- before", "+++ after", "-v_add_f32 v1, v1, v2", "+v_pk_add_f32 v[0:1], v[0:1], v[2:3]"],
                               test_id=TEST_ID)
    same = KernelComparison("scale_kernel_0", "gfx942", IDENTICAL, test_id="tests/kernels/test_scale.py::test_scale")
    error = KernelComparison("?", "gfx942", COMPILE_ERROR, test_id=TEST_ID, side="after",
                             message="AttributeError: no_such_op\n100% broken")
    return VerifyReport(plan, [changed, same, error], notes=["a note"])


def test_exit_codes():
    assert _report().exit_code == 1
    report = _report()
    report.comparisons = [c for c in report.comparisons if c.verdict == IDENTICAL]
    assert report.exit_code == 0
    report.device_findings = [DeviceFinding("perf", "t launch#1", "slower", "median 1.05x", breaks_parity=True)]
    assert report.exit_code == 1


def test_terminal_lists_only_non_identical():
    text = render_terminal(_report())
    assert "3 specializations compared, 1 identical" in text
    assert "vec_add_kernel_0" in text and "vgpr 5->9" in text and "scale_kernel_0" not in text
    assert "compile-error" in text and "(after): AttributeError: no_such_op" in text
    assert text.splitlines()[-1].startswith("parity broken")


def test_json_round_trips():
    data = json.loads(render_json(_report()))
    assert data["exit_code"] == 1
    assert data["comparisons"][0]["resource_deltas"] == {"vgpr": [5, 9]}


def test_markdown_has_table_and_diff():
    text = render_markdown(_report())
    assert "| changed | `" + TEST_ID + "` | gfx942 | `vec_add_kernel_0` | vgpr 5->9 | valu 3->5 |" in text
    assert "```diff" in text and "+v_pk_add_f32" in text


def test_github_annotations_and_step_summary(tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    text = render_github(_report())
    errors = [line for line in text.splitlines() if line.startswith("::error")]
    assert len(errors) == 2
    assert errors[0].startswith("::error file=tests/kernels/test_vec_add.py,title=FlyDSL parity: changed::")
    assert "%0A100%25 broken" in errors[1]  # newlines and percent signs escaped
    assert "::notice title=flydsl-lint-verify::a note" in text
    assert "parity broken" in summary.read_text()


def test_device_mode_says_it_never_ran_on_hardware():
    report = _report(mode="device")
    assert DEVICE_MODE_DISCLAIMER in render_terminal(report)
    assert DEVICE_MODE_DISCLAIMER in render_markdown(report)


def test_progress_bar_only_on_a_tty():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    quiet, tty = io.StringIO(), Tty()
    ProgressBar(quiet).update(1, 4, "jobs")
    ProgressBar(tty).update(1, 4, "jobs")
    assert quiet.getvalue() == ""
    assert "1/4 jobs" in tty.getvalue() and "#" * 7 in tty.getvalue()


def _isa(instructions, vgpr=8, code_object=None):
    from flydsl_lint.verify.isa import KernelIsa, Resources

    return KernelIsa("k_0", "gfx942", instructions, Resources(vgpr=vgpr), code_object=code_object)


def test_changed_with_equal_resources_says_where_the_isa_first_differs():
    from flydsl_lint.verify.compare import compare_kernels

    before = _isa(["s_load_dword s0", "v_add_f32 v1, v1, v2", "s_endpgm"], code_object="a")
    after = _isa(["s_load_dword s0", "v_add_f32 v1, v2, v1", "v_nop", "s_endpgm"], code_object="b")
    c = compare_kernels(before, after)
    assert c.verdict == CHANGED and c.resource_deltas == {}
    assert c.change == "instructions 3->4; first difference at instruction 2: `v_add_f32 v1, v1, v2` -> `v_add_f32 v1, v2, v1`"
    line = render_terminal(VerifyReport(_report().plan, [c]))
    assert "changed" in line and "instructions 3->4; first difference at instruction 2" in line


def test_changed_by_an_appended_instruction_names_it():
    from flydsl_lint.verify.compare import compare_kernels

    c = compare_kernels(_isa(["s_nop 0"]), _isa(["s_nop 0", "s_endpgm"]))
    assert c.change == "instructions 1->2; first difference at instruction 2: (none) -> `s_endpgm`"


def test_changed_resources_only_says_so():
    from flydsl_lint.verify.compare import compare_kernels

    c = compare_kernels(_isa(["s_endpgm"], vgpr=8), _isa(["s_endpgm"], vgpr=12))
    assert c.change == "same 1 instructions; resources vgpr 8->12"


def test_no_kernel_compiled_names_each_tests_reason():
    from flydsl_lint.verify.report import no_kernel_compiled_message

    plan = Plan("a" * 40, "working tree", [], [], ["tests/kernels/test_a.py", "tests/kernels/test_b.py",
                                                  "tests/kernels/test_c.py"], [], ["gfx942"], "compile")
    outcomes = {
        "gfx942": {
            "tests/kernels/test_a.py::test_a[1]": ("skipped", "requires gfx950"),
            "collect:tests/kernels/test_b.py": ("error", "ModuleNotFoundError: No module named 'kernels.b'"),
        },
    }
    message = no_kernel_compiled_message(plan, outcomes)
    assert message.startswith("no kernel was compiled on either side: ")
    assert "[gfx942] tests/kernels/test_a.py::test_a[1]: skipped (requires gfx950)" in message
    assert "[gfx942] tests/kernels/test_b.py: import error (ModuleNotFoundError: No module named 'kernels.b')" in message
    assert "[gfx942] tests/kernels/test_c.py: no test ran" in message
    assert "\n" not in message


def test_no_kernel_compiled_by_passing_tests_says_they_compiled_nothing():
    from flydsl_lint.verify.report import no_kernel_compiled_message

    plan = Plan("a" * 40, "working tree", [], [], ["tests/t.py"], [], ["gfx942"], "compile")
    message = no_kernel_compiled_message(plan, {"gfx942": {"tests/t.py::test_x": ("passed", "")}})
    assert message.endswith("[gfx942] tests/t.py::test_x: passed without compiling a kernel")


def test_no_kernel_compiled_counts_the_reasons_past_the_first_ones():
    """A file of hundreds of parametrized tests stopped for two reasons (a skip on one arch, a
    missing module on the other): the first ten are listed, then every reason with its count."""
    from flydsl_lint.verify.report import NO_KERNEL_REASONS_SHOWN, no_kernel_compiled_message

    plan = Plan("a" * 40, "working tree", [], [], ["tests/kernels/test_moe.py"], [], ["gfx942", "gfx950"], "compile")
    tests = [f"tests/kernels/test_moe.py::test_e2e[{i}]" for i in range(12)]
    outcomes = {"gfx942": {test: ("skipped", "requires gfx950+") for test in tests},
                "gfx950": {test: ("error", "ModuleNotFoundError: No module named 'triton'") for test in tests}}
    message = no_kernel_compiled_message(plan, outcomes)
    assert message.count("tests/kernels/test_moe.py::") == NO_KERNEL_REASONS_SHOWN
    assert message.endswith("; and 14 more (see the logs with --keep); by reason: 12 [gfx942] skipped "
                            "(requires gfx950+), 12 [gfx950] import error (ModuleNotFoundError: No module named 'triton')")
