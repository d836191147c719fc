import struct
from pathlib import Path

import pytest

from flydsl_lint.verify.compare import (
    CHANGED, IDENTICAL, ONLY_AFTER, ONLY_BEFORE, SAME_BACKEND_INPUT, compare_kernels,
)
from flydsl_lint.verify.isa import (
    host_code,
    _unescape_mlir_bytes,
    code_objects_from_binary_stage,
    elf_function_sizes,
    instruction_class,
    normalize_body,
    parse_dump_dir,
    parse_isa,
    without_locations,
)

# Hand-written in the shape LLVM's AMDGPU backend prints (trimmed).
ISA = """\
\t.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx942"
\t.text
\t.globl\tdemo_0
\t.type\tdemo_0,@function
demo_0:
.Lfunc_begin0:
\t.loc\t1 7 0
\ts_load_dwordx2 s[4:5], s[0:1], 0x0 ; load kernarg
\ts_waitcnt lgkmcnt(0)
\ts_cbranch_execz .LBB0_{exit}
; %bb.1:
\tglobal_load_dword v1, v0, s[4:5]
\tds_write_b32 v0, v1
\ts_barrier
\tv_mfma_f32_32x32x8_f16 a[0:15], v[2:3], v[4:5], 0
.LBB0_{exit}:
\ts_endpgm
.Lfunc_end0:
\t.size\tdemo_0, .Lfunc_end0-demo_0
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     16
    .args:
      - .offset:         0
        .size:           8
    .group_segment_fixed_size: 1024
    .name:           demo_0
    .private_segment_fixed_size: 0
    .sgpr_count:     12
    .sgpr_spill_count: 0
    .vgpr_count:     6
    .vgpr_spill_count: 1
amdhsa.target:   amdgcn-amd-amdhsa-unknown-gfx942
...
\t.end_amdgpu_metadata
"""


def test_parse_reads_resources_and_target():
    (kernel,) = parse_isa(ISA.format(exit=2), code_sizes={"demo_0": 64})
    assert (kernel.name, kernel.arch) == ("demo_0", "gfx942")
    r = kernel.resources
    assert (r.vgpr, r.agpr, r.sgpr, r.lds_bytes, r.scratch_bytes, r.vgpr_spills, r.code_bytes) == (6, 16, 12, 1024, 0, 1, 64)


def test_normalization_drops_comments_debug_info_and_label_numbers():
    (first,) = parse_isa(ISA.format(exit=2))
    (renumbered,) = parse_isa(ISA.format(exit=7))
    assert first.instructions == renumbered.instructions
    assert first.instructions[0] == "s_load_dwordx2 s[4:5], s[0:1], 0x0"
    assert "s_cbranch_execz L1" in first.instructions and "L1:" in first.instructions
    assert not any(".loc" in line or ";" in line or "func_begin" in line for line in first.instructions)


def test_histogram_counts_instruction_classes():
    (kernel,) = parse_isa(ISA.format(exit=2))
    assert kernel.histogram == {
        "barrier": 1, "branch": 1, "global-mem": 1, "lds": 1, "mfma": 1, "salu": 1, "scalar-mem": 1, "waitcnt": 1,
    }
    assert instruction_class("v_wmma_f32_16x16x16_f16") == "wmma"
    assert instruction_class("s_wait_loadcnt") == "waitcnt"
    assert instruction_class("buffer_load_dwordx4") == "buffer-mem"


def test_register_renaming_is_a_change():
    (before,) = parse_isa(ISA.format(exit=2))
    (after,) = parse_isa(ISA.format(exit=2).replace("v1, v0, s[4:5]", "v2, v0, s[4:5]"))
    comparison = compare_kernels(before, after)
    assert comparison.verdict == CHANGED
    assert any(line.startswith("+global_load_dword v2") for line in comparison.isa_diff)


def test_verdicts_and_resource_deltas():
    (before,) = parse_isa(ISA.format(exit=2))
    (after,) = parse_isa(ISA.format(exit=2).replace(".vgpr_count:     6", ".vgpr_count:     9"))
    assert compare_kernels(before, before).verdict == IDENTICAL
    changed = compare_kernels(before, after)
    assert changed.verdict == CHANGED and changed.resource_deltas == {"vgpr": (6, 9)}
    assert changed.isa_diff == []  # only the resources moved
    assert compare_kernels(before, None).verdict == ONLY_BEFORE
    assert compare_kernels(None, after).verdict == ONLY_AFTER


def test_normalize_keeps_block_labels_in_order_of_appearance():
    body = ["\ts_branch .LBB3_9", ".LBB3_4:", "\ts_endpgm", ".LBB3_9:", "\ts_branch .LBB3_4"]
    assert normalize_body(body) == ["s_branch L1", "L2:", "s_endpgm", "L1:", "s_branch L2"]


def test_elf_function_sizes_rejects_non_elf():
    assert elf_function_sizes(b"not an elf") == {}


def _mlir_escape(data: bytes) -> str:
    """Escape bytes the way MLIR's printer does: printable kept, `\\` doubled, the rest as \\XX."""
    out = []
    for byte in data:
        char = chr(byte)
        if char == "\\":
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F and char != '"':
            out.append(char)
        else:
            out.append(f"\\{byte:02X}")
    return "".join(out)


def _tiny_elf(function: str, size: int, filler: bytes = b"") -> bytes:
    """A minimal ELF64 LE with one STT_FUNC symbol; `filler` lands in the bytes (e.g. backslashes)."""
    strtab = b"\0" + function.encode() + b"\0"
    symtab = bytes(24) + struct.pack("<IBBHQQ", 1, 0x12, 0, 1, 0, size)
    data_offset = 64
    strtab_offset = data_offset + len(filler)
    symtab_offset = strtab_offset + len(strtab)
    shoff = symtab_offset + len(symtab)
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, shoff)
    struct.pack_into("<HH", header, 0x3A, 64, 3)
    sections = bytes(64)
    sections += struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, strtab_offset, len(strtab), 0, 0, 1, 0)
    sections += struct.pack("<IIQQQQIIQQ", 0, 2, 0, 0, symtab_offset, len(symtab), 1, 1, 8, 24)
    return bytes(header) + filler + strtab + symtab + sections


def _binary_stage(elf: bytes, kernel: str = "demo_0", vgpr: int = 6) -> str:
    return (
        "module attributes {gpu.container_module} {\n"
        '  gpu.binary @kernels  [#gpu.object<#rocdl.target<chip = "gfx942">, '
        f'kernels = <[#gpu.kernel_metadata<"{kernel}", !llvm.func<void (ptr<1>)>, metadata = {{agpr_count = 16 : i64, '
        "group_segment_fixed_size = 1024 : i64, private_segment_fixed_size = 0 : i64, "
        f"reqd_workgroup_size = array<i32: 256, 1, 1>, sgpr_count = 12 : i64, sgpr_spill_count = 0 : i64, "
        f"vgpr_count = {vgpr} : i64, vgpr_spill_count = 1 : i64}}>]>, "
        f'bin = "{_mlir_escape(elf)}">]\n}}\n'
    )


def test_unescape_handles_backslashes_quotes_and_hex():
    raw = b'\x7fELF\\"\\\\ "quoted" \\n\x00\xff\n\t'
    assert _unescape_mlir_bytes(_mlir_escape(raw)) == raw
    # Forms the MLIR lexer accepts besides the printer's own.
    assert _unescape_mlir_bytes('a\\"b\\nc\\td\\\\e\\5C') == b'a"b\nc\td\\e\\'
    with pytest.raises(ValueError):
        _unescape_mlir_bytes("bad \\q escape")
    with pytest.raises(ValueError):
        _unescape_mlir_bytes("dangling \\")


def test_code_size_read_from_elf_with_backslashes_and_quotes():
    elf = _tiny_elf("demo_0", 2352, filler=b'\\\\"\\x"\\')
    kernels, errors = code_objects_from_binary_stage(_binary_stage(elf))
    assert errors == []
    assert kernels["demo_0"].code_bytes == 2352
    assert kernels["demo_0"].metadata["vgpr_count"] == 6


def test_unreadable_code_object_is_reported_not_hidden():
    stage = _binary_stage(_tiny_elf("demo_0", 8)).replace('bin = "\\7F', 'bin = "\\ZZ')
    kernels, errors = code_objects_from_binary_stage(stage)
    assert kernels == {} and len(errors) == 1 and "unreadable code object" in errors[0]


def _dump_dir(root: Path, isa_text: str, stage: str, backend_input: str | None = None) -> Path:
    root.mkdir(parents=True)
    (root / "22_final_isa.s").write_text(isa_text)
    (root / "20_gpu_module_to_binary.mlir").write_text(stage)
    if backend_input is not None:
        (root / "19_reconcile_unrealized_casts.mlir").write_text(backend_input)
        (root / "03_early_stage.mlir").write_text("an earlier stage: not the backend's input")
    return root


# The stage before gpu-module-to-binary, in the shape FlyDSL dumps it (trimmed); {line} moves.
BACKEND_INPUT = """\
#loc = loc("/tmp/tree-{tree}/kernels/demo.py":{line}:0)
module attributes {{gpu.container_module}} {{
  llvm.func @demo_0(%arg0: !llvm.ptr<1> loc("/tmp/tree-{tree}/kernels/demo.py":{line}:0)) {{
    %0 = llvm.mlir.constant({value} : i32) : i32 loc(#loc2)
    %1 = llvm.add %0, %0 : i32 loc(callsite(#loc3 at fused["/tmp/tree-{tree}/kernels/demo.py":{line}:4, "f(x)":1:2]))
    llvm.return loc(#loc)
  }} loc(#loc)
}} loc(#loc)
#loc2 = loc("/tmp/tree-{tree}/kernels/demo.py":{line}:8)
#loc3 = loc("a \\"quoted) path":3:1)
"""


def test_without_locations_keeps_everything_but_source_locations():
    a = without_locations(BACKEND_INPUT.format(tree="x1", line=12, value=4))
    b = without_locations(BACKEND_INPUT.format(tree="y22", line=40, value=4))
    assert a == b
    assert "loc" not in a.replace("llvm.", "")
    assert "%1 = llvm.add %0, %0 : i32\n" in a + "\n"
    assert without_locations(BACKEND_INPUT.format(tree="x1", line=12, value=5)) != a
    # A name that merely ends in "loc" is not a location.
    assert without_locations("%alloc(%0)") == "%alloc(%0)"


def test_same_backend_input_with_differing_code_objects_is_the_backends_variation(tmp_path):
    # Seen on FlyDSL's moe_sorting kernels: the IR given to gpu-module-to-binary is the same
    # on both sides but for line numbers, and the ELF still differs by a few bytes of .text.
    def side(name, line, filler, value=4):
        root = _dump_dir(tmp_path / name, ISA.format(exit=2), _binary_stage(_tiny_elf("demo_0", 64, filler=filler)),
                         BACKEND_INPUT.format(tree=name, line=line, value=value))
        (kernel,) = parse_dump_dir(root)
        return kernel

    before, after = side("a", 12, b""), side("b", 22, b"x")
    assert before.backend_input == after.backend_input is not None
    comparison = compare_kernels(before, after)
    assert comparison.verdict == SAME_BACKEND_INPUT and not comparison.breaks_parity
    assert "same IR on both sides" in comparison.message
    # A real difference in the backend's input stays a change.
    changed = compare_kernels(before, side("c", 12, b"x", value=5))
    assert changed.verdict == CHANGED and changed.breaks_parity


def test_identical_code_object_wins_over_nondeterministic_isa_text(tmp_path):
    # FlyDSL's .s comes from a second ISA run that can print another .vgpr_count
    # (246 vs 247 seen on gfx950); the ELF that runs is byte-identical.
    elf = _tiny_elf("demo_0", 64)
    (before,) = parse_dump_dir(_dump_dir(tmp_path / "a", ISA.format(exit=2), _binary_stage(elf)))
    noisy = ISA.format(exit=2).replace(".vgpr_count:     6", ".vgpr_count:     7").replace("v1, v0", "v3, v0")
    (after,) = parse_dump_dir(_dump_dir(tmp_path / "b", noisy, _binary_stage(elf)))
    assert before.code_object == after.code_object is not None
    assert before.resources.vgpr == after.resources.vgpr == 6  # from the code object's metadata
    assert before.resources.code_bytes == 64
    assert before.instructions != after.instructions
    comparison = compare_kernels(before, after)
    assert comparison.verdict == IDENTICAL and comparison.isa_diff == [] and not comparison.resource_deltas


def test_differing_code_object_reports_isa_and_resource_deltas(tmp_path):
    (before,) = parse_dump_dir(
        _dump_dir(tmp_path / "a", ISA.format(exit=2), _binary_stage(_tiny_elf("demo_0", 64)))
    )
    changed_isa = ISA.format(exit=2).replace("v1, v0, s[4:5]", "v2, v0, s[4:5]")
    (after,) = parse_dump_dir(
        _dump_dir(tmp_path / "b", changed_isa, _binary_stage(_tiny_elf("demo_0", 68), vgpr=9))
    )
    comparison = compare_kernels(before, after)
    assert comparison.verdict == CHANGED
    assert comparison.resource_deltas == {"vgpr": (6, 9), "code_bytes": (64, 68)}
    assert any(line.startswith("+global_load_dword v2") for line in comparison.isa_diff)
    # Same text, different code object: still a change, and said so.
    (same_text,) = parse_dump_dir(
        _dump_dir(tmp_path / "c", ISA.format(exit=2), _binary_stage(_tiny_elf("demo_0", 64, filler=b"x")))
    )
    comparison = compare_kernels(before, same_text)
    assert comparison.verdict == CHANGED and "code objects differ" in comparison.message


def test_without_code_object_falls_back_to_isa_text(tmp_path):
    root = tmp_path / "only-s"
    root.mkdir()
    (root / "22_final_isa.s").write_text(ISA.format(exit=2))
    (kernel,) = parse_dump_dir(root)
    assert kernel.code_object is None and kernel.resources.code_bytes is None
    assert compare_kernels(kernel, kernel).verdict == IDENTICAL


# A module as FlyDSL dumps it before gpu-module-to-binary: the kernel in a gpu.module, the jit
# launcher beside it on the host, with the grid it computes ({grid}).
HOSTED_MODULE = """\
module attributes {{gpu.container_module}} {{
  gpu.module @kernels [#rocdl.target<chip = "gfx942">] {{
    llvm.func @demo_0(%arg0: i32 loc("/tmp/{tree}/k.py":3:0)) attributes {{gpu.kernel}} {{
      llvm.return loc(#loc)
    }} loc(#loc)
  }} loc(#loc)
  llvm.func @launch(%arg0: i32 loc("/tmp/{tree}/k.py":9:0)) {{
    %0 = llvm.mlir.constant({grid} : index) : i64 loc(#loc3)
    gpu.launch_func @kernels::@demo_0 blocks in (%0, %0, %0) threads in (%0, %0, %0) : i64 args(%arg0 : i32)
    llvm.return loc(#loc)
  }} loc(#loc)
}} loc(#loc)
#loc3 = loc("/tmp/{tree}/k.py":10:4)
"""


def test_host_code_is_the_module_outside_its_gpu_modules():
    host = host_code(without_locations(HOSTED_MODULE.format(tree="a", grid=4)))
    assert host[0] == "module attributes {gpu.container_module} {" and host[-1] == "}"
    assert "  llvm.func @launch(%arg0: i32) {" in host and not any("demo_0(" in line for line in host)
    assert host == host_code(without_locations(HOSTED_MODULE.format(tree="elsewhere", grid=4)))


def test_a_kernel_compiled_alike_but_launched_otherwise_is_changed(tmp_path):
    # The kernel's code object is the same; the launcher computes another grid (as an fx.Index
    # dividing unsigned where an ArithValue divided signed would).
    def side(name, grid):
        root = _dump_dir(tmp_path / name, ISA.format(exit=2), _binary_stage(_tiny_elf("demo_0", 64)),
                         HOSTED_MODULE.format(tree=name, grid=grid))
        (kernel,) = parse_dump_dir(root)
        return kernel

    before = side("a", 4)
    assert compare_kernels(before, side("b", 4)).verdict == IDENTICAL
    changed = compare_kernels(before, side("c", 8))
    assert changed.verdict == CHANGED and changed.breaks_parity
    assert "host code launching it differs" in changed.message
    assert changed.change.startswith("host code, first difference at line 3:") and "8 : index" in changed.change
    assert any(line.startswith("+    %0 = llvm.mlir.constant(8") for line in changed.isa_diff)
