"""§4 FLY401: the whole-LDS SmemAllocator -> SharedAllocator codemod and its refusals."""

from __future__ import annotations

import ast

import pytest

from flydsl_lint.engine.diagnostics import Applicability
from flydsl_lint.engine.versions import Version
from tests.conftest import fix_text, lint_text

HEAD = (
    "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl._mlir import ir\n"
    "from flydsl.compiler.kernel_function import CompilationContext\nfrom flydsl.expr import gpu\n"
    "from flydsl.expr.typing import T\nfrom flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n\n\n"
)
RESERVE = (
    "def build(slots):\n    allocator = SmemAllocator(None, arch=\"gfx942\")\n"
    "    vals_off = allocator._align(allocator.ptr, 16)\n    allocator.ptr = vals_off + slots * 4\n"
    "    flags_off = allocator._align(allocator.ptr, 8)\n    allocator.ptr = flags_off + 2 * slots\n\n"
)
KERNEL = (
    "    @flyc.kernel\n    def k(x: fx.Float32, i: fx.Int32):\n        base = allocator.get_base()\n"
    "        s_vals = SmemPtr(base, vals_off, T.f32, shape=(slots,))\n"
    "        s_flags = SmemPtr(base, flags_off, fx.Int16.ir_type, shape=(slots,))\n"
    "        s_vals.store(x, [i])\n        SmemPtr.store(s_flags, fx.Int16(i), [i])\n        gpu.barrier()\n"
    "        y = s_vals.load([i]) + SmemPtr.load(s_flags, [0])\n"
)
LAUNCH = (
    "\n    @flyc.jit\n    def launch(x: fx.Float32, i: fx.Int32):\n        allocator.finalized = False\n"
    "        ctx = CompilationContext.get_current()\n        with ir.InsertionPoint(ctx.gpu_module_body):\n"
    "            allocator.finalize()\n        k(x, i).launch(grid=(1, 1, 1), block=(slots, 1, 1))\n"
)
NEW = Version.parse("0.5.0")


def _flagged(source, tmp_path, **settings):
    found = [d for d in lint_text(source, tmp_path, select=("FLY401",), **settings) if d.code == "FLY401"]
    assert len(found) == 1, [d.message for d in found]
    return found[0]


def test_two_regions_become_two_struct_fields(tmp_path):
    fixed = fix_text(HEAD + RESERVE + KERNEL + LAUNCH, tmp_path, unsafe=True, select=("FLY401",), target_version=NEW)
    assert fixed == (
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import gpu\n\n\n"
        "def build(slots):\n    @fx.struct\n    class SharedStorage:\n"
        "        s_vals: fx.Array[fx.Float32, slots, 16]\n        s_flags: fx.Array[fx.Int16, slots, 8]\n\n"
        "    @flyc.kernel\n    def k(x: fx.Float32, i: fx.Int32):\n"
        "        lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n"
        "        s_vals = lds.s_vals.view(fx.make_layout(slots, 1))\n"
        "        s_flags = lds.s_flags.view(fx.make_layout(slots, 1))\n"
        "        fx.memref_store(x, s_vals, i)\n        fx.memref_store(fx.Int16(i), s_flags, i)\n        gpu.barrier()\n"
        "        y = fx.memref_load(s_vals, i) + fx.memref_load(s_flags, 0)\n"
        "\n    @flyc.jit\n    def launch(x: fx.Float32, i: fx.Int32):\n"
        "        k(x, i).launch(grid=(1, 1, 1), block=(slots, 1, 1))\n"
    )
    ast.parse(fixed)


def test_the_fix_is_unsafe_and_waits_for_0_4_2(tmp_path):
    source = HEAD + RESERVE + KERNEL + LAUNCH
    assert _flagged(source, tmp_path, target_version=NEW).fix.applicability is Applicability.UNSAFE
    held = _flagged(source, tmp_path, target_version=Version.parse("0.4.1"))
    assert held.fix is None and "fix needs FlyDSL >= 0.4.2" in held.message
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY401",), target_version=Version.parse("0.4.1")) == source


def test_fx_is_imported_when_the_file_lacks_it(tmp_path):
    source = (HEAD + RESERVE + KERNEL + LAUNCH).replace("import flydsl.expr as fx\n", "import flydsl.expr as fly\n") \
        .replace("fx.", "fly.")
    fixed = fix_text(source, tmp_path, unsafe=True, select=("FLY401",), target_version=NEW)
    assert "@fly.struct" in fixed and "fly.memref_load(s_vals, i)" in fixed and "import flydsl.expr as fx" not in fixed


REFUSALS = {
    "built conditionally": (
        RESERVE.replace("    allocator = SmemAllocator", "    if slots:\n        allocator = SmemAllocator"),
        "it is built conditionally"),
    "allocator escapes": (RESERVE + KERNEL + LAUNCH + "    return allocator\n",
                          "the allocator escapes (`allocator` is used whole on line 34)"),
    "ptr +=": (RESERVE + "    allocator.ptr += 64\n" + KERNEL + LAUNCH, "`allocator.ptr +=` moves the allocator by hand (line 17)"),
    "computed offset": (
        RESERVE.replace("vals_off = allocator._align(allocator.ptr, 16)", "vals_off = 128"),
        "the offsets are computed, not reserved in order by `_align` and `ptr =`"),
    "raw reservation": (
        RESERVE + KERNEL.replace("        s_flags = SmemPtr(base, flags_off, fx.Int16.ir_type, shape=(slots,))\n", "")
        .replace("        SmemPtr.store(s_flags, fx.Int16(i), [i])\n", "").replace(" + SmemPtr.load(s_flags, [0])", "") + LAUNCH,
        "the region at `flags_off` is a raw byte reservation without a view"),
    "aliasing views": (
        RESERVE + KERNEL + "        alias = SmemPtr(base, vals_off, T.i32, shape=(slots,))\n" + LAUNCH,
        "the region at `vals_off` has aliasing views"),
    "size mismatch": (
        RESERVE + KERNEL.replace("T.f32, shape=(slots,)", "T.f16, shape=(slots,)") + LAUNCH,
        "the view of `vals_off` does not cover its reservation exactly (dtype or size differ)"),
    "conditional region": (
        RESERVE + KERNEL.replace("        s_flags = SmemPtr(", "        if i:\n            s_flags = SmemPtr(") + LAUNCH,
        "it is built conditionally"),
    "view escapes": (RESERVE + KERNEL + "        reduce(s_vals)\n" + LAUNCH, "the view `s_vals` escapes (line 26)"),
    "memref escapes": (RESERVE + KERNEL + "        m = s_vals.get()\n" + LAUNCH, "the view `s_vals` escapes (line 26)"),
    "base escapes": (RESERVE + KERNEL + "        other(base)\n" + LAUNCH, "the base pointer `base` escapes (line 26)"),
    "another allocator": (
        RESERVE + KERNEL + "        extra = SmemPtr(other_base, 0, T.f32, shape=(4,))\n" + LAUNCH,
        "the kernel has LDS of another allocator: migrate a kernel's whole LDS at once"),
    "not a kernel": (RESERVE + KERNEL.replace("@flyc.kernel", "@staticmethod") + LAUNCH,
                     "its views are not taken in a @flyc.kernel body"),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refusal_names_its_reason_and_offers_no_fix(name, tmp_path):
    source = HEAD + REFUSALS[name][0]
    found = _flagged(source, tmp_path, target_version=NEW)
    assert found.fix is None
    assert found.message.endswith(f"; no automatic rewrite: {REFUSALS[name][1]}"), found.message
    assert fix_text(source, tmp_path, unsafe=True, select=("FLY401",), target_version=NEW) == source


def test_a_launcher_left_empty_gets_one_pass(tmp_path):
    launch = ("\n    @flyc.jit\n    def launch():\n        allocator.finalized = False\n"
              "        ctx = CompilationContext.get_current()\n        with ir.InsertionPoint(ctx.gpu_module_body):\n"
              "            allocator.finalize()\n")
    fixed = fix_text(HEAD + RESERVE + KERNEL + launch, tmp_path, unsafe=True, select=("FLY401",), target_version=NEW)
    assert fixed.endswith("    @flyc.jit\n    def launch():\n        pass\n"), fixed


def test_a_comment_inside_the_finalize_block_is_a_refusal(tmp_path):
    source = HEAD + RESERVE + KERNEL + LAUNCH.replace("            allocator.finalize()\n",
                                                      "            # emit the global\n            allocator.finalize()\n")
    found = _flagged(source, tmp_path, target_version=NEW)
    assert found.fix is None and found.message.endswith(
        "the bookkeeping on line 31 shares its lines with other code or holds a comment"), found.message


def test_ptr_passed_to_another_call_is_a_refusal_not_a_crash(tmp_path):
    source = HEAD + RESERVE + KERNEL + LAUNCH + "    log(allocator.ptr)\n"
    found = _flagged(source, tmp_path, target_version=NEW)
    assert found.fix is None and "(`allocator.ptr` on line 34)" in found.message, found.message


def test_a_byte_width_named_once_is_read_through_and_deleted_with_the_reservations(tmp_path):
    reserve = RESERVE.replace("    vals_off", "    f32_bytes = 4\n    vals_off", 1).replace("slots * 4", "slots * f32_bytes")
    fixed = fix_text(HEAD + reserve + KERNEL + LAUNCH, tmp_path, unsafe=True, select=("FLY401",), target_version=NEW)
    assert "f32_bytes" not in fixed and "s_vals: fx.Array[fx.Float32, slots, 16]" in fixed, fixed
    kept = reserve + KERNEL + "        log(f32_bytes)\n" + LAUNCH
    fixed = fix_text(HEAD + kept, tmp_path, unsafe=True, select=("FLY401",), target_version=NEW)
    assert "    f32_bytes = 4\n" in fixed and "SmemAllocator" not in fixed, fixed


# A kernel-local helper the view is passed to.
HELPER_KERNEL = KERNEL.replace(
    "        s_vals.store(x, [i])\n",
    "        def publish(value, buffer, lane):\n            SmemPtr.store(buffer, value, [lane])\n\n"
    "        publish(x, s_vals, i)\n")


def test_a_view_passed_to_a_helper_of_the_kernel_is_rewritten_inside_it(tmp_path):
    fixed = fix_text(HEAD + RESERVE + HELPER_KERNEL + LAUNCH, tmp_path, unsafe=True, select=("FLY401",), target_version=NEW)
    assert "        def publish(value, buffer, lane):\n            fx.memref_store(value, buffer, lane)\n\n" \
           "        publish(x, s_vals, i)\n" in fixed, fixed
    ast.parse(fixed)


FACTORY = (
    "def _make_scratch(arch, slots):\n    allocator = SmemAllocator(None, arch=arch)\n"
    "    vals_off = allocator._align(allocator.ptr, 16)\n    allocator.ptr = vals_off + slots * 4\n"
    "    flags_off = allocator._align(allocator.ptr, 8)\n    allocator.ptr = flags_off + slots * 2\n"
    "    return allocator, vals_off, flags_off\n\n\n"
)
FACTORY_CALLER = "def build(n):\n    slots = n\n    allocator, vals_off, flags_off = _make_scratch(\"gfx942\", slots)\n\n"


def test_a_private_factory_returns_the_struct_and_each_caller_allocates_it(tmp_path):
    second = (FACTORY_CALLER + KERNEL + LAUNCH).replace("def build(n)", "def build_twice(n)")
    fixed = fix_text(HEAD + FACTORY + FACTORY_CALLER + KERNEL + LAUNCH + "\n\n" + second, tmp_path,
                     unsafe=True, select=("FLY401",), target_version=NEW)
    assert fixed.startswith(
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import gpu\n\n\n"
        "def _make_scratch(arch, slots):\n    @fx.struct\n    class SharedStorage:\n"
        "        s_vals: fx.Array[fx.Float32, slots, 16]\n        s_flags: fx.Array[fx.Int16, slots, 8]\n\n"
        "    return SharedStorage\n\n\n"
        "def build(n):\n    slots = n\n    SharedStorage = _make_scratch(\"gfx942\", slots)\n\n"
        "    @flyc.kernel\n    def k(x: fx.Float32, i: fx.Int32):\n"
        "        lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n"
        "        s_vals = lds.s_vals.view(fx.make_layout(slots, 1))\n"), fixed
    assert fixed.count("SharedStorage = _make_scratch(\"gfx942\", slots)") == 2
    assert fixed.count("lds = fx.SharedAllocator().allocate(SharedStorage).peek()") == 2
    assert "allocator" not in fixed
    ast.parse(fixed)


FACTORY_REFUSALS = {
    "public factory": (FACTORY.replace("_make_scratch", "make_scratch") + FACTORY_CALLER.replace("_make_scratch", "make_scratch"),
                       "the factory `make_scratch` is public: another module may call it"),
    "factory does more": (FACTORY.replace("    return allocator", "    log(arch)\n    return allocator") + FACTORY_CALLER,
                          "the factory `_make_scratch` does more than reserve the regions (line 16)"),
    "call not unpacked": (FACTORY + FACTORY_CALLER.replace("allocator, vals_off, flags_off = ", "scratch = ")
                          + "    allocator, vals_off, flags_off = scratch\n",
                          "the factory `_make_scratch` is called without unpacking its regions (line 21)"),
    "called twice in one function": (FACTORY + FACTORY_CALLER + "    allocator2, vals2, flags2 = _make_scratch(\"gfx942\", slots)\n",
                                     "the factory `_make_scratch` is called twice in one function (line 23)"),
    "count not the argument": (FACTORY + FACTORY_CALLER.replace("(\"gfx942\", slots)", "(\"gfx942\", 2 * slots)"),
                               "the view of `vals_off` does not cover its reservation exactly (dtype or size differ)"),
}


@pytest.mark.parametrize("name", FACTORY_REFUSALS)
def test_factory_refusal_names_its_reason(name, tmp_path):
    source = HEAD + FACTORY_REFUSALS[name][0] + KERNEL + LAUNCH
    found = _flagged(source, tmp_path, target_version=NEW)
    assert found.fix is None
    assert found.message.endswith(f"; no automatic rewrite: {FACTORY_REFUSALS[name][1]}"), found.message


def test_factory_callers_that_view_a_region_as_different_types_are_refused(tmp_path):
    second = (FACTORY_CALLER + KERNEL.replace("T.f32", "T.i32") + LAUNCH).replace("def build(n)", "def build_int(n)")
    found = _flagged(HEAD + FACTORY + FACTORY_CALLER + KERNEL + LAUNCH + "\n\n" + second, tmp_path, target_version=NEW)
    assert found.fix is None and found.message.endswith(
        "the calls of `_make_scratch` view its regions with different element types"), found.message


HELPER_REFUSALS = {
    "helper also called without a view": (HELPER_KERNEL + "        publish(x, other, i)\n",
                                          "`publish` is called without a view for `buffer` (line 29)"),
    "helper used as a value": (HELPER_KERNEL + "        hooks = [publish]\n",
                               "`publish`, which takes a view, is used as a value (line 29)"),
    "parameter rebound": (HELPER_KERNEL.replace("            SmemPtr.store(buffer", "            buffer = buffer\n"
                                                "            SmemPtr.store(buffer"),
                          "the parameter `buffer` of `publish` is rebound"),
    "parameter escapes": (HELPER_KERNEL.replace("            SmemPtr.store(buffer, value, [lane])\n",
                                                "            SmemPtr.store(buffer, value, [lane])\n            log(buffer)\n"),
                          "the view `buffer` escapes (line 24)"),
}


@pytest.mark.parametrize("name", HELPER_REFUSALS)
def test_helper_refusal_names_its_reason(name, tmp_path):
    source = HEAD + RESERVE + HELPER_REFUSALS[name][0] + LAUNCH
    found = _flagged(source, tmp_path, target_version=NEW)
    assert found.fix is None
    assert found.message.endswith(f"; no automatic rewrite: {HELPER_REFUSALS[name][1]}"), found.message


def test_an_allocator_that_reserves_nothing_is_deleted_with_its_finalize(tmp_path):
    source = HEAD + "def build(slots):\n    allocator = SmemAllocator(None, arch=\"gfx942\")\n\n" + LAUNCH.replace(
        "        k(x, i).launch", "        log(x)\n        k(x, i).launch")
    fixed = fix_text(source, tmp_path, unsafe=True, select=("FLY401",), target_version=NEW)
    assert fixed == ("import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import gpu\n"
                     "from flydsl.expr.typing import T\nfrom flydsl.utils.smem_allocator import SmemPtr\n\n\n"
                     "def build(slots):\n\n\n"
                     "    @flyc.jit\n    def launch(x: fx.Float32, i: fx.Int32):\n        log(x)\n"
                     "        k(x, i).launch(grid=(1, 1, 1), block=(slots, 1, 1))\n"), fixed


@pytest.mark.parametrize("use", ["    base = allocator.get_base()\n", "    return allocator, slots\n"])
def test_an_allocator_that_reserves_nothing_but_is_read_from_is_refused(use, tmp_path):
    source = HEAD + "def build(slots):\n    allocator = SmemAllocator(None, arch=\"gfx942\")\n" + use
    found = _flagged(source, tmp_path, target_version=NEW)
    assert found.fix is None and found.message.endswith("; no automatic rewrite: it reserves no region"), found.message
