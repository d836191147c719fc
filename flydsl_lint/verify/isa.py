"""Parsing FlyDSL's final ISA dumps into comparable per-kernel records.

The normalized instruction stream keeps everything that changes the program
(mnemonics, operands, register numbers, control flow) and drops what does not:
comments, debug directives and labels, and the arbitrary numbering of basic
block labels (``.LBB0_3`` becomes ``L1`` by order of first appearance).
"""

from __future__ import annotations

import hashlib
import re
import struct
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

FINAL_ISA_GLOB = "*_final_isa.s"
BINARY_STAGE_GLOB = "*_gpu_module_to_binary.mlir"


@dataclass(frozen=True)
class Resources:
    vgpr: int | None = None
    agpr: int | None = None
    sgpr: int | None = None
    lds_bytes: int | None = None
    scratch_bytes: int | None = None
    vgpr_spills: int | None = None
    sgpr_spills: int | None = None
    code_bytes: int | None = None  # None when the code object was not dumped

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class KernelIsa:
    name: str
    arch: str
    instructions: list[str]
    resources: Resources
    histogram: dict[str, int] = field(default_factory=dict)
    # sha256 of the code object (the ELF embedded in the gpu-module-to-binary
    # dump) holding this kernel; None when no readable code object was dumped.
    code_object: str | None = None
    # Why evidence was missing or unreadable (e.g. an undecodable code object).
    evidence_errors: list[str] = field(default_factory=list)
    # sha256 of the IR handed to gpu-module-to-binary (the stage dumped before it), source
    # locations removed; None when that stage was not dumped.
    backend_input: str | None = None
    # The host side of that module (`host_code`): the launcher that computes the grid, block and
    # arguments the kernel runs with, which its ISA does not show; None when not dumped.
    host: tuple[str, ...] | None = None


# Metadata keys (amdhsa.kernels YAML) -> Resources fields.
_METADATA_FIELDS = {
    "vgpr_count": "vgpr",
    "agpr_count": "agpr",
    "sgpr_count": "sgpr",
    "group_segment_fixed_size": "lds_bytes",
    "private_segment_fixed_size": "scratch_bytes",
    "vgpr_spill_count": "vgpr_spills",
    "sgpr_spill_count": "sgpr_spills",
}

# Ordered: the first matching prefix names the class.
_INSTRUCTION_CLASSES = (
    ("s_waitcnt", "waitcnt"),
    ("s_wait_", "waitcnt"),  # gfx12 split counters (s_wait_loadcnt, ...)
    ("s_barrier", "barrier"),
    ("s_cbranch", "branch"),
    ("s_branch", "branch"),
    ("s_setpc", "branch"),
    ("s_swappc", "branch"),
    ("s_getpc", "branch"),
    ("global_", "global-mem"),
    ("flat_", "global-mem"),
    ("scratch_", "scratch-mem"),
    ("buffer_", "buffer-mem"),
    ("ds_", "lds"),
    ("s_load", "scalar-mem"),
    ("s_buffer_", "scalar-mem"),
    ("s_store", "scalar-mem"),
    ("v_mfma", "mfma"),
    ("v_smfmac", "mfma"),
    ("v_wmma", "wmma"),
    ("v_swmmac", "wmma"),
    ("v_", "valu"),
    ("s_", "salu"),
)

_BLOCK_LABEL = re.compile(r"\.LBB\d+_\d+")
_DEBUG_LABEL = re.compile(r"^\.L(tmp|func_begin|func_end)\w*:")


def instruction_class(mnemonic: str) -> str:
    for prefix, name in _INSTRUCTION_CLASSES:
        if mnemonic.startswith(prefix):
            return name
    return "other"


def _strip_comment(line: str) -> str:
    return line.split(";", 1)[0].split("//", 1)[0].strip()


def normalize_body(lines: list[str]) -> list[str]:
    """Instructions and block labels of one kernel body, without noise."""
    renamed: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        return renamed.setdefault(match.group(0), f"L{len(renamed) + 1}")

    normalized = []
    for raw in lines:
        line = _strip_comment(raw)
        if not line or _DEBUG_LABEL.match(line):
            continue
        if line.startswith("."):
            if _BLOCK_LABEL.match(line):  # a block label: keep it, renumbered
                normalized.append(_BLOCK_LABEL.sub(rename, line))
            continue  # directives (.loc, .p2align, .cfi_*) do not change the program
        normalized.append(_BLOCK_LABEL.sub(rename, " ".join(line.split())))
    return normalized


def histogram(instructions: list[str]) -> dict[str, int]:
    counts = Counter(instruction_class(line.split()[0]) for line in instructions if not line.endswith(":"))
    return dict(sorted(counts.items()))


def _kernel_bodies(text: str) -> dict[str, list[str]]:
    """Lines between each ``.type name,@function`` label and its ``.Lfunc_end``/``.size``."""
    functions = re.findall(r"^\s*\.type\s+([\w.$]+),\s*@function", text, re.M)
    lines = text.splitlines()
    bodies: dict[str, list[str]] = {}
    for name in functions:
        try:
            start = lines.index(f"{name}:") + 1
        except ValueError:
            continue
        end = start
        while end < len(lines) and not (
            lines[end].startswith(".Lfunc_end") or lines[end].strip().startswith(f".size\t{name}")
        ):
            end += 1
        bodies[name] = lines[start:end]
    return bodies


def _kernel_metadata(text: str) -> dict[str, dict[str, int]]:
    """Per-kernel integer fields of the amdhsa.kernels metadata list."""
    match = re.search(r"^amdhsa\.kernels:\n(.*?)^(?=\S)", text, re.M | re.S)
    if not match:
        return {}
    kernels, current = {}, {}
    for line in match.group(1).splitlines():
        if line.startswith("  - "):  # a new kernel entry (deeper dashes are .args items)
            current = {}
            line = "    " + line[4:]
        field_match = re.match(r"^    \.(\w+):\s+(\S+)\s*$", line)
        if not field_match:
            continue
        key, value = field_match.groups()
        if key == "name":
            kernels[value] = current
        elif re.fullmatch(r"-?\d+", value):
            current[key] = int(value)
    return kernels


def _target_arch(text: str) -> str:
    match = re.search(r'\.amdgcn_target\s+"[^"]*-(gfx\w+)', text)
    return match.group(1) if match else "unknown"


def parse_isa(text: str, code_sizes: dict[str, int] | None = None) -> list[KernelIsa]:
    arch = _target_arch(text)
    metadata = _kernel_metadata(text)
    code_sizes = code_sizes or {}
    kernels = []
    for name, body in _kernel_bodies(text).items():
        fields = metadata.get(name, {})
        resources = Resources(
            **{target: fields.get(key) for key, target in _METADATA_FIELDS.items()},
            code_bytes=code_sizes.get(name),
        )
        instructions = normalize_body(body)
        kernels.append(KernelIsa(name, arch, instructions, resources, histogram(instructions)))
    return kernels


_SIMPLE_ESCAPES = {"\\": 0x5C, '"': 0x22, "n": 0x0A, "t": 0x09}
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _unescape_mlir_bytes(escaped: str) -> bytes:
    """Bytes of an MLIR string literal's body as the MLIR printer writes it.

    The printer keeps printable characters other than ``\\`` and ``"``, writes a
    backslash as ``\\\\`` and every other byte as ``\\XX`` (two hex digits); the
    lexer also accepts ``\\"``, ``\\n`` and ``\\t``. Raises ValueError on anything else.
    """
    out = bytearray()
    i, n = 0, len(escaped)
    while i < n:
        char = escaped[i]
        if char != "\\":
            out.extend(char.encode("latin-1"))
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError(f"dangling backslash at offset {i}")
        following = escaped[i + 1]
        if following in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[following])
            i += 2
        elif i + 2 < n and following in _HEX_DIGITS and escaped[i + 2] in _HEX_DIGITS:
            out.append(int(escaped[i + 1 : i + 3], 16))
            i += 3
        else:
            raise ValueError(f"unknown escape {escaped[i:i + 3]!r} at offset {i}")
    return bytes(out)


def elf_function_sizes(elf: bytes) -> dict[str, int]:
    """st_size of every function symbol in a 64-bit little-endian ELF (AMDGPU code objects)."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        return {}
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    sizes = {}
    for _name, sh_type, _flags, _addr, offset, size, link, _info, _align, entsize in sections:
        if sh_type != 2:  # SHT_SYMTAB
            continue
        strtab_offset = sections[link][4]
        for sym in range(size // entsize):
            st_name, st_info, _other, _shndx, _value, st_size = struct.unpack_from(
                "<IBBHQQ", elf, offset + sym * entsize
            )
            if st_info & 0xF == 2:  # STT_FUNC
                end = elf.index(b"\0", strtab_offset + st_name)
                sizes[elf[strtab_offset + st_name : end].decode()] = st_size
    return sizes


@dataclass(frozen=True)
class CodeObjectKernel:
    """What the code object says about one kernel."""

    digest: str  # sha256 of the whole ELF
    code_bytes: int | None
    metadata: dict[str, int]  # integer fields of the kernel's #gpu.kernel_metadata


_GPU_OBJECT = re.compile(r"#gpu\.object<")
_BIN = re.compile(r'bin = "((?:[^"\\]|\\.)*)"')
_KERNEL_METADATA = re.compile(r'#gpu\.kernel_metadata<"([^"]+)"')
_METADATA_DICT = re.compile(r"metadata = \{([^{}]*)\}")
_INTEGER_ENTRY = re.compile(r"(\w+) = (-?\d+) : i\d+")


def code_objects_from_binary_stage(text: str) -> tuple[dict[str, CodeObjectKernel], list[str]]:
    """Per-kernel code object facts from a gpu-module-to-binary dump, and read errors.

    Each ``#gpu.object`` carries the ELF (``bin = "..."``) and the kernel metadata
    that MLIR read from that ELF's AMDGPU note (register counts, LDS, scratch,
    spills). Both are what actually runs, unlike the ``*_final_isa.s`` text.
    """
    kernels: dict[str, CodeObjectKernel] = {}
    errors: list[str] = []
    starts = [m.start() for m in _GPU_OBJECT.finditer(text)] or [0]
    for index, start in enumerate(starts):
        chunk = text[start : starts[index + 1] if index + 1 < len(starts) else len(text)]
        binary = _BIN.search(chunk)
        if not binary:
            continue
        try:
            elf = _unescape_mlir_bytes(binary.group(1))
            sizes = elf_function_sizes(elf)
        except (struct.error, ValueError, IndexError) as error:
            errors.append(f"unreadable code object: {type(error).__name__}: {error}")
            continue
        if elf[:4] != b"\x7fELF":
            errors.append("code object is not an ELF file")
            continue
        digest = hashlib.sha256(elf).hexdigest()
        header = chunk[: binary.start()]
        entries = list(_KERNEL_METADATA.finditer(header))
        names = {m.group(1) for m in entries} | set(sizes)
        metadata: dict[str, dict[str, int]] = {}
        for position, entry in enumerate(entries):
            end = entries[position + 1].start() if position + 1 < len(entries) else len(header)
            fields = _METADATA_DICT.search(header, entry.end(), end)
            if fields:
                metadata[entry.group(1)] = {k: int(v) for k, v in _INTEGER_ENTRY.findall(fields.group(1))}
        for name in names:
            kernels[name] = CodeObjectKernel(digest, sizes.get(name), metadata.get(name, {}))
    return kernels, errors


def code_sizes_from_binary_stage(text: str) -> dict[str, int]:
    """Function sizes from the code object embedded in the gpu-module-to-binary dump."""
    kernels, _errors = code_objects_from_binary_stage(text)
    return {name: k.code_bytes for name, k in kernels.items() if k.code_bytes is not None}


def _with_code_object(kernel: KernelIsa, code_object: CodeObjectKernel | None, errors: list[str]) -> KernelIsa:
    kernel.evidence_errors.extend(errors)
    if code_object is None:
        if not errors:
            kernel.evidence_errors.append("no code object dumped for this kernel")
        return kernel
    kernel.code_object = code_object.digest
    # The ELF's metadata is authoritative: the .s comes from a second, separate
    # ISA run whose resource counts can differ from the real code object's.
    metadata = code_object.metadata
    fields = {target: metadata[key] for key, target in _METADATA_FIELDS.items() if key in metadata}
    kernel.resources = replace(kernel.resources, **fields, code_bytes=code_object.code_bytes)
    return kernel


def without_locations(mlir: str) -> str:
    """MLIR text with its source locations removed: the `#locN = loc(...)` aliases and every
    `loc(...)` (balanced, string literals skipped). A source edit that only moves lines changes
    nothing else; without debug info the locations do not reach the LLVM IR."""
    out = []
    i, n = 0, len(mlir)
    while i < n:
        start = mlir.find("loc(", i)
        if start < 0:
            out.append(mlir[i:])
            break
        if start > 0 and (mlir[start - 1].isalnum() or mlir[start - 1] in "_."):
            out.append(mlir[i:start + 4])  # a name ending in "loc", not a location
            i = start + 4
            continue
        out.append(mlir[i:start].rstrip(" "))
        depth, j, in_string = 0, start + 3, False
        while j < n:
            char = mlir[j]
            if in_string:
                in_string = char != '"' or mlir[j - 1] == "\\"
            elif char == '"':
                in_string = True
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        i = j + 1
    return "\n".join(line for line in "".join(out).splitlines() if not _LOCATION_ALIAS.match(line))


_LOCATION_ALIAS = re.compile(r"#loc\d*\s*=\s*$")
_STAGE_NUMBER = re.compile(r"^(\d+)_")


def _backend_input(binary_stage: Path) -> str | None:
    """The stage dumped just before ``binary_stage``, without locations."""
    number = _STAGE_NUMBER.match(binary_stage.name)
    if not number:
        return None
    earlier = [(int(m.group(1)), path) for path in binary_stage.parent.glob("*.mlir")
               if (m := _STAGE_NUMBER.match(path.name)) and int(m.group(1)) < int(number.group(1))]
    if not earlier:
        return None
    return without_locations(max(earlier, key=lambda found: found[0])[1].read_text(encoding="utf-8", errors="replace"))


_GPU_MODULE = re.compile(r"^(\s*)gpu\.module\b.*\{\s*$")


def host_code(module: str) -> tuple[str, ...]:
    """The lines of a dumped module (locations removed) outside its `gpu.module` ops: the host
    functions, `@flyc.jit` launchers lowered to LLVM, whose `gpu.launch_func` takes the grid,
    block and arguments computed on the host."""
    kept: list[str] = []
    closing = None  # the closing line of the gpu.module being skipped
    for line in module.splitlines():
        if closing is not None:
            if line.rstrip() == closing:
                closing = None
            continue
        opened = _GPU_MODULE.match(line)
        if opened:
            closing = opened.group(1) + "}"
            continue
        kept.append(line.rstrip())
    return tuple(kept)


def parse_dump_dir(dump_dir: Path) -> list[KernelIsa]:
    """All kernels of every final ISA file under one compilation's dump directory."""
    kernels = []
    for isa_file in sorted(dump_dir.rglob(FINAL_ISA_GLOB)):
        code_objects: dict[str, CodeObjectKernel] = {}
        errors: list[str] = []
        backend_input = None
        for binary_stage in sorted(isa_file.parent.glob(BINARY_STAGE_GLOB)):
            found, stage_errors = code_objects_from_binary_stage(
                binary_stage.read_text(encoding="utf-8", errors="replace")
            )
            code_objects.update(found)
            errors.extend(f"{binary_stage.name}: {e}" for e in stage_errors)
            backend_input = _backend_input(binary_stage)
        digest = hashlib.sha256(backend_input.encode()).hexdigest() if backend_input is not None else None
        host = host_code(backend_input) if backend_input is not None else None
        for kernel in parse_isa(isa_file.read_text(encoding="utf-8", errors="replace")):
            kernel.backend_input, kernel.host = digest, host
            kernels.append(_with_code_object(kernel, code_objects.get(kernel.name), errors))
    return kernels
