from flydsl_lint.verify.compare import CHANGED, IDENTICAL, ONLY_AFTER, ONLY_BEFORE, compare_kernels
from flydsl_lint.verify.isa import (
    elf_function_sizes,
    instruction_class,
    normalize_body,
    parse_isa,
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
