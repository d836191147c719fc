"""§3c manual s_waitcnt bitfields -> fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=).

The wait-counter immediate has a different layout per GPU generation; the
keyword form of `fx.rocdl.s_waitcnt` (FlyDSL >= 0.3.0) packs it per target.
Bitfields are decoded here exactly as FlyDSL's per-arch encoders pack them
(expr/rocdl/cdna3.py, rdna3.py, rdna4.py):

| layout | arches | vmcnt | expcnt | lgkmcnt | keyword form |
| --- | --- | --- | --- | --- | --- |
| gfx9 | gfx942, gfx950 (also gfx90a/gfx908, no keyword form) | [3:0] + [15:14] (max 63) | [6:4] (7) | [11:8] (15) | yes (gfx942/gfx950) |
| gfx10 | gfx10xx | [3:0] + [15:14] (63) | [6:4] (7) | [13:8] (63) | no (FlyDSL raises) |
| gfx11 | gfx11xx, gfx120x | [15:10] (63) | [2:0] (7) | [9:4] (63) | yes |
| none | gfx1250 | split counters only | | | no |

gfx120x: the hardware has split counters (loadcnt/storecnt/dscnt/kmcnt);
FlyDSL exposes no split-counter keywords and packs the gfx11-layout legacy
immediate, which the LLVM backend translates. So on gfx120x the keyword form
is exactly as expressive as the gfx11 immediate and is decoded as gfx11.
"""

from __future__ import annotations

import ast
import re

from ..engine.deletions import definition_removal
from ..engine.diagnostics import Applicability, Edit, Fix, Position
from ..engine.model.resolution import parameter_defaults
from ..engine.project import summarize
from ..engine.segments import Outline, Segment, read_outline
from ._base import Invalid, Rule, Valid, leaves, register
from ._codemods import delete_statement, reads_of, within
from ._edits import reference
from ._flydsl import qualified

_ROCDL_MODULES = ("flydsl.expr.rocdl", "flydsl.expr.rocdl.universal", "flydsl._mlir.dialects.rocdl")
S_WAITCNT = qualified(_ROCDL_MODULES, "s_waitcnt")
KEYWORD_FORM = "flydsl.expr.rocdl.s_waitcnt"
COUNTERS = ("vmcnt", "lgkmcnt", "expcnt")  # keyword order used in fixes, as in the guide
_MAX = {"gfx9": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 15}, "gfx10": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63},
        "gfx11": {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63}}
_LAYOUT_LABEL = {"gfx9": "gfx9 (gfx942/gfx950)", "gfx10": "gfx10", "gfx11": "gfx11/gfx120x"}
# Layouts considered when no target-arch is configured: those the keyword form supports.
_DEFAULT_LAYOUTS = ("gfx9", "gfx11")
_TUNED = ("; scheduler-sensitive tuned kernel: an op-identical swap can still shift the schedule, "
          "migrate in a bounded step with a median-based perf check (never auto-fixed)")
_CONSTANT_NAME = re.compile(r"^_*[A-Z0-9_]*(VMCNT|LGKMCNT|EXPCNT)[A-Z0-9_]*$")
# Bit-encoding vocabulary: such a name is a field mask/shift/base, never a count.
_ENCODING_NAME = re.compile(r"(MASK|SHIFT|BASE|ONLY|BITS?)(_|$)")


def arch_layout(arch: str) -> tuple[str | None, bool]:
    """(bitfield layout, whether FlyDSL's keyword form supports the arch)."""
    if arch.startswith(("gfx942", "gfx950")):
        return "gfx9", True
    if arch.startswith("gfx9"):
        return "gfx9", False
    if arch.startswith("gfx10"):
        return "gfx10", False
    if arch.startswith("gfx11"):
        return "gfx11", True
    if arch.startswith("gfx120"):
        return "gfx11", True
    return None, False  # gfx1250 and later: split counters, no legacy immediate


def decode(value: int, layout: str) -> dict[str, int] | None:
    """Counters a bitfield waits for in `layout`, or None when the keyword form
    cannot express it (bits outside the counter fields, out of 16-bit range)."""
    if not 0 <= value <= 0xFFFF:
        return None
    if layout in ("gfx9", "gfx10"):
        if value & 0x80:
            return None  # bit 7 is unused
        vmcnt = (value & 0xF) | ((value >> 14) & 0x3) << 4
        expcnt = (value >> 4) & 0x7
        if layout == "gfx10":
            lgkmcnt = (value >> 8) & 0x3F
        else:
            lgkmcnt = (value >> 8) & 0xF
            high = (value >> 12) & 0x3  # bits 13:12, ignored by gfx9 hardware
            # A gfx10-style "lgkmcnt=63" encoding (0x3F << 8) means "no wait" on
            # gfx9 too; any other use of bits 13:12 is not expressible.
            if high and not (high == 0x3 and lgkmcnt == 0xF):
                return None
        return {"vmcnt": vmcnt, "expcnt": expcnt, "lgkmcnt": lgkmcnt}
    if layout == "gfx11":
        if value & 0x8:
            return None  # bit 3 is unused
        return {"vmcnt": (value >> 10) & 0x3F, "expcnt": value & 0x7, "lgkmcnt": (value >> 4) & 0x3F}
    return None


def waited(counters: dict[str, int], layout: str) -> tuple[tuple[str, int], ...]:
    """The counters that actually wait (below their max), in keyword order."""
    return tuple((name, counters[name]) for name in COUNTERS if counters[name] < _MAX[layout][name])


def keywords_text(pairs: tuple[tuple[str, int | str], ...]) -> str:
    return ", ".join(f"{name}={count}" for name, count in pairs)


def count_decode(bitfields: list[int | None], layouts: list[str]) -> tuple[tuple[str, ...], int, tuple] | None:
    """A bitfield made from one count n no constant gives (`bitfields[n]`, or None, for every
    6-bit count): the counters that equal n, the largest n up to which every layout decodes the
    bitfield so with its other counters unchanged, and what those others wait for (the same on
    every layout); None unless that holds from 0 to 1 at least."""
    rows = []
    for value in bitfields:
        decoded = [decode(value, layout) for layout in layouts] if value is not None else [None]
        if None in decoded:
            break
        rows.append(decoded)
    if len(rows) < 2:
        return None
    first = rows[0]
    counted = tuple(c for c in COUNTERS if all(r[c] == 0 for r in first) and all(r[c] == 1 for r in rows[1]))
    if not counted:
        return None
    last = 0
    for count, decoded in enumerate(rows):
        if any(r[c] != count for r in decoded for c in counted) or any(
                r[c] != f[c] for r, f in zip(decoded, first) for c in COUNTERS if c not in counted):
            break
        last = count
    others = {waited({c: _MAX[layout][c] if c in counted else f[c] for c in COUNTERS}, layout)
              for f, layout in zip(first, layouts)}
    if last < 1 or len(others) != 1:
        return None
    return counted, last, others.pop()


# ------------------------------------------------------------ constant folding
_BINOPS = {
    ast.BitOr: lambda a, b: a | b, ast.BitAnd: lambda a, b: a & b, ast.BitXor: lambda a, b: a ^ b,
    ast.LShift: lambda a, b: a << b if 0 <= b < 64 else None, ast.RShift: lambda a, b: a >> b if 0 <= b < 64 else None,
    ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
}


def fold(node: ast.AST, env: dict[str, int], lookup=None, depth: int = 0) -> int | None:
    """Value of an integer expression over literals, `env` names and (through
    `lookup`) names bound once to constants; None when not a compile-time int."""
    if depth > 32:
        return None
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Invert)):
        operand = fold(node.operand, env, lookup, depth + 1)
        if operand is None:
            return None
        return -operand if isinstance(node.op, ast.USub) else (~operand if isinstance(node.op, ast.Invert) else operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left = fold(node.left, env, lookup, depth + 1)
        right = fold(node.right, env, lookup, depth + 1) if left is not None else None
        return None if right is None else _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        return lookup(node, depth + 1) if lookup else None
    if isinstance(node, ast.Call) and lookup is not None:
        return lookup(node, depth + 1)
    return None


def _body(function: ast.FunctionDef) -> list[ast.stmt]:
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _parameters(function: ast.FunctionDef) -> list[ast.arg]:
    args = function.args
    return list(args.posonlyargs) + list(args.args) + list(args.kwonlyargs)


def bind_arguments(function: ast.FunctionDef, call: ast.Call, value_of) -> dict[str, int] | None:
    """Parameter values for `call`, from its constant arguments and the defaults."""
    expressions = argument_expressions(function, call)
    if expressions is None:
        return None
    values = {name: value_of(expression) for name, expression in expressions.items()}
    return None if None in values.values() else values


def argument_expressions(function: ast.FunctionDef, call: ast.Call) -> dict[str, ast.expr] | None:
    """What `call` passes for each parameter (its argument, else the default); None when
    it unpacks arguments or a parameter gets nothing."""
    args = function.args
    if args.vararg or args.kwarg or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    positional = list(args.posonlyargs) + list(args.args)
    if len(call.args) > len(positional):
        return None
    env: dict[str, int] = {}
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    for parameter, argument in zip(positional, call.args):
        env[parameter.arg] = argument
    for keyword in call.keywords:
        if keyword.arg is None:
            return None
        env[keyword.arg] = keyword.value
    expressions: dict[str, ast.expr] = {}
    for parameter in _parameters(function):
        expression = env.get(parameter.arg, defaults.get(parameter.arg))
        if expression is None:
            return None
        expressions[parameter.arg] = expression
    return expressions


class Shim:
    """A per-kernel waitcnt helper: an encoder returns a bitfield, a wrapper emits it."""

    __slots__ = ("function", "kind", "result", "pure", "constants")

    def __init__(self, function: ast.FunctionDef, kind: str, result: ast.expr, pure: bool) -> None:
        self.function = function
        self.kind = kind  # "encoder" | "wrapper"
        self.result = result  # the encoder's return value / the wrapper's s_waitcnt argument
        self.pure = pure  # a wrapper doing nothing but the wait (its call can be replaced)
        self.constants: dict | None = None  # module constants of a shim defined in another module

    def evaluate(self, call: ast.Call, value_of, lookup) -> int | None:
        values = bind_arguments(self.function, call, value_of)
        return None if values is None else self.evaluate_with(values, lookup)

    def counted_parameter(self) -> str | None:
        """The one parameter the shim's bitfield is computed from, when one is."""
        names = [a.arg for a in _parameters(self.function) if a.arg not in ("self", "cls")]
        found = [name for name in names if _param_dependent(self.function, self.result, {name})]
        return found[0] if len(found) == 1 else None

    def evaluate_with(self, values: dict[str, int], lookup) -> int | None:
        """The bitfield with the parameters holding `values`."""
        if self.constants is not None:
            lookup = None  # foreign nodes: only that module's constants apply
        env = {**(self.constants or {}), **values}
        for stmt in _body(self.function):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                value = fold(stmt.value, env, lookup)
                if value is None:
                    env.pop(stmt.targets[0].id, None)
                else:
                    env[stmt.targets[0].id] = value
        return fold(self.result, env, lookup)


def _value_names(expression: ast.expr) -> set[str]:
    """Names used as values (not as the object of an attribute lookup)."""
    bases = {id(n.value) for n in ast.walk(expression) if isinstance(n, ast.Attribute)}
    return {n.id for n in ast.walk(expression) if isinstance(n, ast.Name) and id(n) not in bases}


def _param_dependent(function: ast.FunctionDef, expression: ast.expr, parameters: set[str] | None = None) -> bool:
    """Whether `expression` is computed from the function's (non-self) parameters (or those named)."""
    dependent = set(parameters) if parameters is not None else {a.arg for a in _parameters(function)} - {"self", "cls"}
    for stmt in _body(function):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if _value_names(stmt.value) & dependent:
                dependent.add(stmt.targets[0].id)
    return bool(_value_names(expression) & dependent)


def _positional_waitcnt(call: ast.AST, resolve) -> ast.expr | None:
    """The bitfield argument of a legacy positional s_waitcnt call, else None."""
    if not isinstance(call, ast.Call) or resolve(call.func) not in S_WAITCNT:
        return None
    if len(call.args) == 1 and not isinstance(call.args[0], ast.Starred) and not call.keywords:
        return call.args[0]
    if not call.args and len(call.keywords) == 1 and call.keywords[0].arg == "bitfield":
        return call.keywords[0].value
    return None


_NESTED_CODE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _defines_code(body: list[ast.stmt]) -> bool:
    """Whether a def, class or lambda occurs anywhere in `body`."""
    if any(isinstance(s, _NESTED_CODE) for s in body):
        return True  # a kernel builder's nested kernel: no walk needed
    return any(isinstance(n, _NESTED_CODE) for s in body for n in ast.walk(s))


def classify_shim(function: ast.AST, resolve, is_encoder_hint: bool = False) -> Shim | None:
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
        return None
    body = _body(function)
    if not body or function.args.vararg or function.args.kwarg:
        return None
    last = body[-1]
    returns_value = isinstance(last, ast.Return) and last.value is not None
    if not returns_value and len(body) > 6:
        return None  # neither an encoder nor a small wrapper: most defs, decided before looking at the body
    simple = all(
        isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) for s in body[:-1]
    )
    # Encoder: straight-line assignments and `return <bit packing>`.
    if returns_value and simple and (is_encoder_hint or any(a.arg in COUNTERS for a in _parameters(function))):
        packs = any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.LShift, ast.BitOr)) for n in ast.walk(last.value))
        if packs and _param_dependent(function, last.value):
            return Shim(function, "encoder", last.value, pure=False)
    # Wrapper: a small helper whose own body emits a positional s_waitcnt of a
    # parameter-derived bitfield (a kernel builder merely containing one is not).
    if len(body) > 6:
        return None
    for stmt in body:
        node = stmt.value if isinstance(stmt, ast.Expr) else None
        argument = _positional_waitcnt(node, resolve)
        if argument is not None and _param_dependent(function, argument):
            if _defines_code(body):
                return None
            return Shim(function, "wrapper", argument, pure=simple and last is stmt)
    return None


class _WaitcntRule(Rule):
    """Shared machinery: shims, constant values, decoding and the fix."""

    # Without a configured target arch its keyword fixes are unsafe (see `waitcnt_fix`):
    # the report says a target arch would make them safe.
    fix_safe_with_target_arch = True
    follows = S_WAITCNT

    # ----------------------------------------------------------- functions
    def shim_for(self, func: ast.expr, encoder_hint: bool = False) -> Shim | None:
        """The shim a callee refers to, defined in this file or a project module."""
        if isinstance(func, ast.Name):
            binding = self.model.binding_of(func)
            if binding is not None and binding.kind == "def" and self.model.is_single_binding(binding):
                return self.classify(binding.node, encoder_hint)
        name = self.model.resolve(func)
        if not name or "." not in name or name.startswith("flydsl."):
            return None
        module, _, leaf = name.rpartition(".")
        modules = self.context.cache("s3c.modules", dict)
        if module not in modules:  # one look-up per module and file
            modules[module] = _project_module(self.model.project, module)
        found = modules[module]
        return found.shim(leaf, encoder_hint) if found is not None else None

    def classify(self, function: ast.AST, encoder_hint: bool = False) -> Shim | None:
        """`classify_shim` of a function of this file, once per file for every rule."""
        shims = self.context.cache("s3c.shims", dict)
        key = (id(function), encoder_hint)
        if key in shims:
            return shims[key]
        shim = shims[key] = classify_shim(function, self.model.resolve, encoder_hint)
        return shim

    # ----------------------------------------------------------- constants
    def lookup(self, node: ast.AST, depth: int = 0) -> int | None:
        """A name bound once to a constant int expression, or a call of an
        encoder shim with constant arguments."""
        if depth > 16:
            return None
        if isinstance(node, ast.Call):
            shim = self.shim_for(node.func)
            if shim is None or shim.kind != "encoder":
                return None
            return shim.evaluate(node, lambda e: self.value_of(e, depth + 1), None)
        if not isinstance(node, ast.Name):
            return None
        binding = self.model.binding_of(node)
        if binding is None or binding.kind != "assign" or not self.model.is_single_binding(binding):
            return None
        statement = self.model.parent(binding.node)
        if isinstance(statement, ast.Assign) and statement.targets == [binding.node]:
            return fold(statement.value, {}, self.lookup, depth + 1)
        if isinstance(statement, ast.AnnAssign) and statement.target is binding.node and statement.value is not None:
            return fold(statement.value, {}, self.lookup, depth + 1)
        return None

    def value_of(self, node: ast.expr, depth: int = 0) -> int | None:
        return fold(node, {}, self.lookup, depth)

    # ----------------------------------------------------------- decoding
    def layouts(self) -> tuple[list[str], bool]:
        """Layouts to decode for, and whether they come from a configured arch."""
        arches = self.settings.target_arch
        if not arches:
            return list(_DEFAULT_LAYOUTS), False
        layouts: list[str] = []
        for arch in arches:
            layout, supported = arch_layout(arch)
            if supported and layout not in layouts:
                layouts.append(layout)
        return layouts, True

    def all_arches_supported(self) -> bool:
        return bool(self.settings.target_arch) and all(arch_layout(a)[1] for a in self.settings.target_arch)

    def describe(self, value: int | None, layouts: list[str]) -> tuple[str, tuple | None, bool]:
        """(decoded text, the keywords if the same on every layout, expressible anywhere)."""
        if value is None:
            return "not a compile-time constant: decode it for the target arch by hand", None, True
        decoded = {layout: decode(value, layout) for layout in layouts}
        pairs = {layout: waited(c, layout) if c is not None else None for layout, c in decoded.items()}
        expressible = any(p is not None for p in pairs.values())
        distinct = {p for p in pairs.values()}
        if len(distinct) == 1 and None not in distinct:
            only = next(iter(distinct))
            where = "every keyword-form arch" if len(layouts) > 1 else _LAYOUT_LABEL[layouts[0]]
            text = f"waits for {keywords_text(only) or 'nothing'} on {where}"
            return text, only, expressible
        parts = []
        for layout in layouts:
            p = pairs[layout]
            label = _LAYOUT_LABEL[layout]
            parts.append(f"{keywords_text(p) or 'nothing'} on {label}" if p is not None else f"not expressible on {label} (bits outside the counter fields)")
        return "waits for " + "; ".join(parts), None, expressible

    def waitcnt_fix(self, node: ast.AST, keywords: tuple | None, from_config: bool, counted: str | None = None,
                    also: tuple = ()):
        """The keyword-form replacement of `node` (with the edits `also`), or None where not
        provable; unsafe without a configured arch, or for a `counted` wait (the same only
        while its count is in the range that names)."""
        if not keywords or self.context.guards_tuned_kernel:
            return None
        spelled = reference(self, KEYWORD_FORM, "fx", "flydsl.expr")
        if spelled is None:
            return None
        callee, imports = spelled
        text = f"{callee}({keywords_text(keywords)})"
        if counted:
            return self.make_fix([self.replace(node, text), *also, *imports],
                                 f"Replace with `{text}` (the same wait only while {counted})", Applicability.UNSAFE)
        safe = from_config and self.all_arches_supported()
        return self.make_fix([self.replace(node, text), *imports], f"Replace with `{text}`",
                             None if safe else Applicability.UNSAFE)

    def counted(self, bitfield_of, count: ast.expr | str, layouts: list[str], passed_whole: bool = False) \
            -> tuple[str, tuple, str] | None:
        """A bitfield made from one count no constant gives (`bitfield_of(n)`; `count`, its
        expression): (decoded text, keywords with the count spelled in, the count's range).
        None when the count is passed whole as the bitfield (it may be one: `_s_waitcnt(val)`),
        unless `passed_whole` asks what it would wait for as a count."""
        bitfields = [bitfield_of(n) for n in range(64)]
        if not passed_whole and bitfields == list(range(64)):
            return None
        if isinstance(count, ast.expr):
            if any(isinstance(node, ast.Constant) and isinstance(node.value, str) for node in ast.walk(count)):
                return None
            count = " ".join(self.text(count).split())  # one line, as messages are
        found = count_decode(bitfields, layouts)
        if found is None:
            return None
        counters, last, others = found
        fixed = dict(others)
        keywords = tuple((c, count) if c in counters else (c, fixed[c]) for c in COUNTERS if c in counters or c in fixed)
        where = "every keyword-form arch" if len(layouts) > 1 else _LAYOUT_LABEL[layouts[0]]
        within = f"`{count}` is 0 to {last}"
        return f"waits for {keywords_text(keywords)} on {where} while {within}", keywords, within

    def advice(self, keywords: tuple | None, value: int | None) -> str:
        if keywords:
            return f"use `fx.rocdl.s_waitcnt({keywords_text(keywords)})`"
        if value is not None:
            return "use the keyword form `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)` with the counters for your target arch"
        return "use the keyword form `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)`"

    def caution(self) -> str:
        return _TUNED if self.context.is_tuned_kernel else ""

    def inside_shim(self, node: ast.AST) -> bool:
        function = self.model.enclosing_function(node)
        return function is not None and self.classify(function) is not None

    # ----------------------------------------------------------- migration
    def wait_at(self, site: ast.Call) -> tuple[Shim | None, ast.expr] | None:
        """What the wait `site` evaluates: (None, its bitfield) for a positional `s_waitcnt`
        (FLY361), (the encoder, its call) for `s_waitcnt(<encoder>(...))` and (the wrapper,
        `site`) for a call of a wrapper shim (FLY362); None for any other call."""
        argument = _positional_waitcnt(site, self.model.resolve)
        if argument is None:
            shim = self.shim_for(site.func)
            return (shim, site) if shim is not None and shim.kind == "wrapper" else None
        shim = self.shim_for(argument.func, encoder_hint=True) if isinstance(argument, ast.Call) else None
        if shim is None:
            return None, argument
        return (shim, argument) if shim.kind == "encoder" else None

    def bitfield_value(self, shim: Shim | None, evaluated: ast.expr) -> int | None:
        """The bitfield a `wait_at` pair gives, when it is a compile-time constant."""
        return shim.evaluate(evaluated, self.value_of, self.lookup) if shim is not None else self.value_of(evaluated)

    def replaceable(self, site: ast.Call, shim: Shim | None) -> bool:
        """Whether the wait's call can become the keyword form: not a call of a wrapper doing
        more than the wait, nor one whose value is used."""
        return shim is None or shim.kind == "encoder" or (shim.pure and isinstance(self.model.parent(site), ast.Expr))

    def site_fix(self, site: ast.Call) -> Fix | None:
        """The keyword-form fix of one wait `wait_at` knows, when its call can be replaced."""
        layouts, from_config = self.layouts()
        wait = self.wait_at(site) if layouts else None
        if wait is None or not self.replaceable(site, wait[0]):
            return None
        return self.waitcnt_fix(site, self.describe(self.bitfield_value(*wait), layouts)[1], from_config)

    def shim_migration(self, function: ast.AST) -> list[Edit] | None:
        """Edits replacing every call of the shim `function` by its keyword form and deleting
        the shim with the constants only it reads: None unless each call's fix is safe and
        the shim is only ever called here (`only_called`: nested, or `_`-private and named
        by no other project file)."""
        migrations = self.context.cache("s3c.migrations", dict)  # asked by FLY361, FLY363 and each constant
        if id(function) not in migrations:
            migrations[id(function)] = self._shim_migration(function)
        return migrations[id(function)]

    def migration_fix(self, function: ast.AST) -> Fix | None:
        edits = self.shim_migration(function)
        calls = len(self.model.calls_of(function))
        return None if edits is None else self.make_fix(
            edits, f"Replace the {calls} call{'s' if calls != 1 else ''} of `{function.name}` with the keyword form and delete it")

    def _shim_migration(self, function: ast.AST) -> list[Edit] | None:
        shim = self.classify(function)
        if shim is None or not self.model.only_called(function):
            return None
        edits: list[Edit] = []
        for call in self.model.calls_of(function):
            site = call if shim.kind == "wrapper" else self.model.parent(call)
            if shim.kind == "encoder" and _positional_waitcnt(site, self.model.resolve) is not call:
                return None  # an encoder's value used otherwise than as a wait's bitfield
            fix = self.site_fix(site)
            if fix is None or fix.applicability is not Applicability.SAFE:
                return None
            edits += fix.edits
        block = self.model.parent(function)
        alone = any(getattr(block, field, None) == [function] for field in ("body", "orelse", "finalbody"))
        removal = definition_removal(self.context.source, function, alone)
        if removal is None:
            return None
        edits.append(removal)
        edits += self._constants_read_only_within(function)
        return _distinct(edits)

    def _constants_read_only_within(self, function: ast.AST) -> list[Edit]:
        """Deletions of the integer constants of enclosing scopes that only `function` reads."""
        bindings = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                binding = self.model.binding_of(node)
                if binding is not None and binding.kind == "assign" and not within(function, binding.node):
                    bindings[id(binding)] = binding
        deletions = []
        for binding in bindings.values():
            statement = self.constant_statement(binding)
            if statement is not None and all(within(function, read) for read in reads_of(self, binding.node)):
                deletion = delete_statement(self, statement, keep_comment=True)
                if deletion is not None:
                    deletions.append(deletion)
        return deletions

    def constant_statement(self, binding) -> ast.Assign | None:
        """`NAME = <integer expression>`, the only binding of its name, that no code outside
        this module can read (in a function, or `_`-private and named by no other project file)."""
        statement = self.model.parent(binding.node)
        if not self.model.is_single_binding(binding) or not isinstance(statement, ast.Assign) \
                or statement.targets != [binding.node] or fold(statement.value, {}, self.lookup) is None:
            return None
        if binding.scope.kind == "class" or (binding.scope.kind == "module" and not self.model.private_to_module(binding.name)):
            return None
        return statement

    def constant_migration(self, target: ast.Name) -> list[Edit] | None:
        """Edits migrating every wait that reads the constant bound at `target` (the shim
        reading it, or the positional `s_waitcnt` whose bitfield it is) and deleting it;
        None unless each is safe."""
        binding = self.model.binding_made_by(target)
        statement = self.constant_statement(binding) if binding is not None else None
        if statement is None:
            return None
        edits: list[Edit] = []
        for read in reads_of(self, target):
            function = self.model.enclosing_function(read)
            if function is not None and self.classify(function) is not None:
                migration = self.shim_migration(function)
            else:
                site = next((node for node in self.model.ancestors(read) if isinstance(node, ast.Call)
                             and _positional_waitcnt(node, self.model.resolve) is not None), None)
                fix = self.site_fix(site) if site is not None and within(_positional_waitcnt(site, self.model.resolve), read) else None
                migration = list(fix.edits) if fix is not None and fix.applicability is Applicability.SAFE else None
            if migration is None:
                return None
            edits += migration
        deletion = delete_statement(self, statement, keep_comment=True)
        return None if deletion is None else _distinct([*edits, deletion])


def _distinct(edits: list[Edit]) -> list[Edit]:
    """`edits` without repeats (each call's fix may add the same import)."""
    return list(dict.fromkeys(edits))


class _ForeignModule:
    """A project module asked for shims (never imported): read once, looked at
    only when the asked function can be a shim defined there, and then only
    in outline (`engine/segments.py`): its imports, its constants and the
    asked function are parsed, not the whole module."""

    def __init__(self, data: bytes, module: str, is_package: bool, project) -> None:
        self._data = data
        self._module, self._is_package, self._project = module, is_package, project
        # A wrapper calls s_waitcnt by a name or attribute of its own module (its
        # imports are all `resolve` follows); an encoder found without a hint
        # names a parameter after a counter.
        self._spells_shim = any(word in data for word in _SHIM_SPELLINGS)
        self._outline: Outline | None = None
        self._def_names: set[bytes] | None = None  # see `_may_define`
        self.constants: dict[str, int] = {}
        self._imports: dict[str, str] = {}
        self._waitcnt_spellings: tuple[bytes, ...] = ()
        self._shims: dict[tuple[str, bool], Shim | None] = {}  # (def name, encoder hint) -> shim

    def shim(self, leaf: str, encoder_hint: bool) -> Shim | None:
        if not (encoder_hint or self._spells_shim):
            return None
        if (leaf, encoder_hint) in self._shims:
            return self._shims[(leaf, encoder_hint)]
        if self._outline is None:
            if not self._may_define(leaf):  # most asked names are classes or other modules' functions
                self._shims[(leaf, False)] = self._shims[(leaf, True)] = None
                return None
            self._read()
        function = self._outline.function(leaf) if self._may_be_shim(leaf) else None
        for hint in (False, True):  # both at once: the function's tree is not kept
            shim = classify_shim(function, self.resolve, hint) if function is not None else None
            if shim is not None:
                shim.constants = self.constants
            self._shims[(leaf, hint)] = shim
        return self._shims[(leaf, encoder_hint)]

    def _may_define(self, leaf: str) -> bool:
        """Whether the source can hold a top-level `def <leaf>`: such a statement
        starts a line, with only blanks or line continuations between `def` and
        the name (a non-ASCII name is never ruled out)."""
        if not leaf.isascii():
            return True
        if self._def_names is None:  # one scan of the source for every name asked
            self._def_names = _line_start_def_names(self._data)
        return leaf.encode() in self._def_names

    def _read(self) -> None:
        """The module's outline, imports and constants (the whole module is
        parsed only when its outline cannot be read)."""
        found = read_outline(self._data) or Outline([])  # a module that does not parse has no shims
        # Only its defs are asked for later: the other statements' trees are not kept (hosts that run
        # the cyclic collector, flake8 and editors, would walk them on every full collection).
        self._outline, self._data = Outline([], found.defs), b""
        for stmt in found.statements:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                name = stmt.targets[0].id
                value = fold(stmt.value, self.constants)
                if value is None or name in self.constants:
                    self.constants.pop(name, None)
                else:
                    self.constants[name] = value
        self._imports = summarize(self._module, self._is_package, found.statements).imported
        # How this module can spell an s_waitcnt callee: its leaf after a dot, or a name imported as it.
        self._waitcnt_spellings = _WAITCNT_LEAVES + tuple(
            local.encode() for local, target in self._imports.items() if self._project.canonical(target) in S_WAITCNT)

    def _may_be_shim(self, leaf: str) -> bool:
        """Whether def `leaf`'s text allows a shim (read before its parse): an
        encoder returns a `<<`/`|` packing, a wrapper spells an s_waitcnt callee."""
        found = self._outline.defs.get(leaf)
        if not isinstance(found, Segment):
            return True  # already parsed, or absent
        if found.nests_code():
            return False  # a kernel builder: `classify_shim` refuses any def nesting a def or class
        text = found.text
        return b"<<" in text or b"|" in text or any(spelling in text for spelling in self._waitcnt_spellings)

    def resolve(self, node: ast.AST) -> str | None:
        # Shim bodies only need their s_waitcnt callee: resolve against the
        # module's top-level imports.
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Name) and node.id in self._imports:
            return self._project.canonical(self._imports[node.id])
        return None


_WAITCNT_LEAVES = tuple(word.encode() for word in leaves(S_WAITCNT))
_SHIM_SPELLINGS = _WAITCNT_LEAVES + tuple(word.encode() for word in COUNTERS)


# A def header at a line start; the name is the whole run of ASCII identifier
# characters (an asked name is an identifier: it is that run or not there).
_DEF_HEADER = rb"(?:async[ \t\f\\\r\n]+)?def[ \t\f\\\r\n]+([A-Za-z0-9_]+)"
_FIRST_LINE_DEF = re.compile(_DEF_HEADER)
# A line starts at 0 or after "\n" (as `(?m)^` has it); a leading "\n" lets the
# regex engine skip to newlines instead of trying every byte. The header is a
# lookahead, so a header spanning lines cannot hide a def starting inside it.
_NEXT_LINE_DEF = re.compile(rb"\n(?=" + _DEF_HEADER + rb")")


def _line_start_def_names(data: bytes) -> set[bytes]:
    """The names of the def headers that start a line of `data`."""
    names = {match.group(1) for match in _NEXT_LINE_DEF.finditer(data)}
    first = _FIRST_LINE_DEF.match(data)
    if first is not None:
        names.add(first.group(1))
    return names


def _project_module(project, module: str) -> _ForeignModule | None:
    """A project module's source, read once per run and version of the file."""
    return project.derived("s3c.module", module, lambda name: _read_project_module(project, name))


def _read_project_module(project, module: str) -> _ForeignModule | None:
    source = project.source(module)
    return None if source is None else _ForeignModule(source[0], module, source[1], project)


_H = "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import rocdl\n"
_HX = "import flydsl.expr as fx\nfrom flydsl.expr import rocdl\n"
# A kernel builder's own vmcnt shim, and the same builder with its calls migrated (FLY361/FLY363/FLY364).
_NESTED_SHIM = ("def build():\n    _LGKMCNT_EXPCNT_BASE = 0x3F70  # lgkmcnt and expcnt maxed\n\n    def wait_vm(n):\n"
                "        # vmcnt only\n        rocdl.s_waitcnt((n & 0xF) | _LGKMCNT_EXPCNT_BASE)\n\n    wait_vm(0)\n    wait_vm(3)\n")
_NESTED_SHIM_MIGRATED = ("def build():\n    # lgkmcnt and expcnt maxed\n\n    # vmcnt only\n\n"
                         "    rocdl.s_waitcnt(vmcnt=0)\n    rocdl.s_waitcnt(vmcnt=3)\n")
_GFX950 = {"target_arch": ("gfx950",)}
_GFX1100 = {"target_arch": ("gfx1100",)}


@register
class RawWaitcntBitfield(_WaitcntRule):
    """A raw `s_waitcnt` immediate hard-codes one GPU generation's bit layout:
    vmcnt/expcnt/lgkmcnt sit in different bits on gfx9 (CDNA), gfx10 and
    gfx11/gfx120x (RDNA), and lgkmcnt is 4 bits wide on gfx9 but 6 on RDNA.
    The keyword form `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)` (FlyDSL
    >= 0.3.0) packs the right bitfield per target; unset counters mean "no
    wait". The message decodes the immediate for the configured
    `target-arch` (or for gfx9 and gfx11 when none is set).

    `s_waitcnt(0)`): the keyword form raises on other arches (gfx90a, gfx10xx,
    gfx1250). On gfx120x the keyword form packs the gfx11-layout legacy
    immediate (FlyDSL has no split-counter keywords).

    A bitfield packed from one count no constant gives (`(n & 0xF) | 0x3F70`)
    is decoded for every count: the message says what it waits for and up to
    which count, and the keyword form with that count is an unsafe fix.

    Not flagged: the keyword form; a constant no configured arch can express
    with keywords (bits outside the counter fields) - the guide's legacy
    boundary, keep it positional and localized; inline-asm strings."""

    code = "FLY361"
    call_names = leaves(S_WAITCNT)
    valid = [
        _HX + "rocdl.s_waitcnt(lgkmcnt=0)\n",
        "import flydsl.expr as fx\nfx.rocdl.s_waitcnt(vmcnt=3, lgkmcnt=0)\n",
        # bit 7 is unused on gfx9: no keyword form can express it (legacy boundary)
        Valid(_H + "rocdl.s_waitcnt(0x80)\n", _GFX950),
        Valid("from flydsl._mlir.dialects import llvm\nllvm.InlineAsmOp(None, [], 's_waitcnt lgkmcnt(0)', '', has_side_effects=True)\n"),
        # a per-arch encoder takes vmcnt positionally: not a bitfield
        "from flydsl.expr.rocdl import cdna3\ncdna3.s_waitcnt(0)\n",
        "def f(rocdl):\n    rocdl.s_waitcnt(0)\n",
    ]
    invalid = [
        Invalid(_H + "rocdl.s_waitcnt(0)\n", fixed="import flydsl.expr as fx\nfx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)\n",
                settings=_GFX950),
        Invalid(_HX + "rocdl.s_waitcnt(0xC07F)\n", fixed=_HX + "rocdl.s_waitcnt(lgkmcnt=0)\n", settings=_GFX950),
        Invalid(_HX + "rocdl.s_waitcnt(0xFC07)\n", fixed=_HX + "rocdl.s_waitcnt(lgkmcnt=0)\n", settings=_GFX1100),
        # lgkmcnt=63 encoded on gfx9 (bits 13:8 all set) means "no wait": leave it unset
        # the constant the fix leaves unused goes with it (fixes/apply.py `remove_dead_aliases`)
        Invalid(_HX + "_VM0 = 0x3F70\nrocdl.s_waitcnt(_VM0)\n", fixed=_HX + "rocdl.s_waitcnt(vmcnt=0)\n",
                settings=_GFX950),
        # no arch configured: 0 decodes the same everywhere, but the keyword form raises on gfx90a/gfx10/gfx1250
        Invalid("import flydsl.expr as fx\nfx.rocdl.s_waitcnt(0)\n",
                fixed="import flydsl.expr as fx\nfx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)\n", unsafe=True),
        # decodes differently on gfx9 and gfx11: no fix without a target arch
        Invalid(_HX + "rocdl.s_waitcnt(0xC07F)\n"),
        # runtime value: flagged, no fix
        Invalid(_HX + "def wait(n):\n    rocdl.s_waitcnt(n)\n"),
        # A bitfield computed from one count (a public shim's own wait): decoded per count; the keyword form
        # is the same wait only in that range, so unsafe; the assignment that packed it goes too.
        Invalid(_HX + "def wait_vm(n):\n    val = (n & 0xF) | 0x3F70\n    rocdl.s_waitcnt(val)\n",
                fixed=_HX + "def wait_vm(n):\n    rocdl.s_waitcnt(vmcnt=n)\n", unsafe=True, settings=_GFX950,
                message="Raw `s_waitcnt` bitfield `val` (waits for vmcnt=n on gfx9 (gfx942/gfx950) while `n` is 0 to 15): "
                        "use `fx.rocdl.s_waitcnt(vmcnt=n)`"),
        # A name that may hold a count or a whole bitfield: what it waits for as a count, no fix.
        Invalid(_HX + "n = loads_per_tile()\nrocdl.s_waitcnt(n)\n", settings=_GFX950,
                message="Raw `s_waitcnt` bitfield `n` (not a compile-time constant: as a count, it waits for vmcnt=n, "
                        "lgkmcnt=0, expcnt=0 on gfx9 (gfx942/gfx950) while `n` is 0 to 15; as a bitfield, decode it by "
                        "hand): use the keyword form `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)`"),
        # ... unless it is the wait of a shim whose every call migrates (FLY363)
        Invalid(_HX + _NESTED_SHIM, fixed=_HX + _NESTED_SHIM_MIGRATED, settings=_GFX950),
        # arches that decode it differently: no fix
        Invalid(_HX + "rocdl.s_waitcnt(0x0070)\n", settings={"target_arch": ("gfx950", "gfx1201")}),
        # tuned kernel: reported with the scheduler caution, never fixed
        Invalid(_HX + "rocdl.s_waitcnt(0)\n", settings={**_GFX950, "tuned_kernels": ("kernel.py",)}),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        wait = self.wait_at(node)
        if wait is None or wait[0] is not None:
            return  # no positional wait, or a shim's (`s_waitcnt(_encode_waitcnt(...))`: FLY362)
        argument = wait[1]
        layouts, from_config = self.layouts()
        if not layouts:
            return  # no configured arch has a keyword form to migrate to
        value = self.value_of(argument)
        decoded, keywords, expressible = self.describe(value, layouts)
        if not expressible:
            return  # the legacy boundary the keyword form cannot express
        fix = self.waitcnt_fix(node, keywords, from_config)
        if value is None:
            function = self.model.enclosing_function(node)
            shim = self.classify(function) if function is not None else None
            own = shim if shim is not None and shim.result is argument else None
            counted = self._counted_wait(argument, own, layouts)
            if counted is not None and isinstance(argument, ast.Name) and own is None:
                # Its value may as well be a whole bitfield: say what it means as a count, fix nothing.
                decoded = f"not a compile-time constant: as a count, it {counted[0]}; as a bitfield, decode it by hand"
            elif counted is not None:
                decoded, keywords, within = counted
                fix = self.waitcnt_fix(node, keywords, from_config, counted=within,
                                       also=tuple(self._feeding_deletions(own, node)) if own else ())
            if own is not None:  # a shim's own wait: migrate its calls, when they all can
                fix = self.migration_fix(function) or fix
        shown = self.text(argument) if len(self.text(argument)) <= 40 else "..."
        if value is not None and not isinstance(argument, ast.Constant):
            shown += f" = {value:#06x}"
        self.report(node, fix=fix, value=shown, decoded=decoded, advice=self.advice(keywords, value), caution=self.caution())

    def _counted_wait(self, argument: ast.expr, own: Shim | None, layouts: list[str]) -> tuple[str, tuple, str] | None:
        """`counted` for a bitfield made from one count: the parameter of the shim whose own
        wait this is (the others at their defaults), or the one name of `argument` no
        constant gives (`(n & 0xF) | 0x3F70`, or `n` itself)."""
        if own is not None:
            parameter = own.counted_parameter()
            if parameter is None:
                return None
            defaults = {name: value for name, default in parameter_defaults(own.function.args).items()
                        if (value := self.value_of(default)) is not None}
            return self.counted(lambda n: own.evaluate_with({**defaults, parameter: n}, self.lookup), parameter, layouts)
        unknown = {node.id for node in ast.walk(argument) if isinstance(node, ast.Name) and self.value_of(node) is None}
        if len(unknown) != 1 or any(isinstance(node, (ast.Call, ast.Attribute, ast.Subscript)) for node in ast.walk(argument)):
            return None
        name = unknown.pop()
        return self.counted(lambda n: fold(argument, {name: n}, self.lookup), name, layouts,
                            passed_whole=isinstance(argument, ast.Name))

    def _feeding_deletions(self, shim: Shim, wait: ast.Call) -> list:
        """Deletions of the shim's assignments that only compute its wait's bitfield."""
        assignments = [statement for statement in _body(shim.function) if isinstance(statement, ast.Assign)
                       and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)]
        feeding: list[ast.Assign] = []
        changed = True
        while changed:
            changed = False
            for statement in assignments:
                if statement not in feeding and all(
                        within(wait, read) or any(within(other, read) for other in feeding)
                        for read in reads_of(self, statement.targets[0])):
                    feeding.append(statement)
                    changed = True
        return [edit for statement in feeding if (edit := delete_statement(self, statement, keep_comment=True))]


@register
class WaitcntShimCall(_WaitcntRule):
    """Per-kernel waitcnt shims (`_encode_waitcnt(lgkmcnt=0)` encoders,
    `_s_waitcnt(val)` / `_waitcnt_vm_n(n)` wrappers) re-implement one
    generation's bit packing: the MLA/MoE encoders pack lgkmcnt into bits
    [13:8] even on gfx9, where the field is 4 bits. Call the keyword form
    `fx.rocdl.s_waitcnt(...)` instead.

    The shim's result is evaluated from its own body (straight-line integer code
    only) with the call's constant arguments and decoded like FLY361. Counters
    at their maximum are "no wait" and are left unset: a shim encoding
    `lgkmcnt=63` on gfx9 never becomes `lgkmcnt=63` (FlyDSL's gfx9 encoder caps
    it at 15 and raises)."""

    code = "FLY362"
    call_names = leaves(S_WAITCNT)  # and calls of shims, the project's own functions
    call_own_code = True
    _ENCODER = (
        "def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):\n"
        "    vm_lo = vmcnt & 0xF\n"
        "    vm_hi = (vmcnt >> 4) & 0x3\n"
        "    return vm_lo | (expcnt << 4) | (lgkmcnt << 8) | (vm_hi << 14)\n\n\n"
    )
    _WRAPPER = "def _s_waitcnt(val):\n    rocdl.s_waitcnt(val)\n\n\n"
    valid = [
        _HX + "rocdl.s_waitcnt(vmcnt=1)\n",
        # a helper that only shares the name pattern but emits inline asm is no shim
        "def _barrier(vmcnt=63):\n    emit_asm(f's_waitcnt vmcnt({vmcnt})')\n\n\n_barrier(vmcnt=0)\n",
    ]
    # The shim each fix below leaves unused goes with it (fixes/apply.py `remove_dead_aliases`).
    invalid = [
        Invalid(_HX + _ENCODER + "rocdl.s_waitcnt(_encode_waitcnt(lgkmcnt=0))\n",
                fixed=_HX + "\n\nrocdl.s_waitcnt(lgkmcnt=0)\n", settings=_GFX950,
                at=(9, 1), message='Per-kernel waitcnt shim `_encode_waitcnt(...)` (waits for lgkmcnt=0 on gfx9 (gfx942/gfx950)): use `fx.rocdl.s_waitcnt(lgkmcnt=0)`'),
        Invalid(_HX + _ENCODER + "rocdl.s_waitcnt(_encode_waitcnt(vmcnt=1))\n",
                fixed=_HX + "\n\nrocdl.s_waitcnt(vmcnt=1)\n", settings=_GFX950),
        Invalid(_HX + _WRAPPER + "_s_waitcnt(0)\n", fixed=_HX + "\n\nrocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)\n",
                settings=_GFX950),
        # a gfx9 encoder on gfx11: decodes to garbage there, no fix
        Invalid(_HX + _ENCODER + "rocdl.s_waitcnt(_encode_waitcnt(lgkmcnt=0))\n", settings=_GFX1100),
        # A count no constant gives: decoded for every count; the keyword form is the same wait only
        # while the count is in that range (beyond it the encoder wraps, the keyword form raises).
        Invalid(_HX + _ENCODER + "def f(n):\n    rocdl.s_waitcnt(_encode_waitcnt(vmcnt=n))\n",
                fixed=_HX + "\n\ndef f(n):\n    rocdl.s_waitcnt(vmcnt=n)\n", unsafe=True, settings=_GFX950,
                message="Per-kernel waitcnt shim `_encode_waitcnt(...)` (waits for vmcnt=n on gfx9 (gfx942/gfx950) "
                        "while `n` is 0 to 63): use `fx.rocdl.s_waitcnt(vmcnt=n)`"),
        # a wrapper that also runs a barrier: decoded, but the call is not the wait alone
        Invalid(_HX + "def wait_lds_barrier(vmcnt=63):\n    rocdl.s_waitcnt((vmcnt & 0xF) | ((vmcnt & 0x30) << 10) | (7 << 4))\n"
                "    barrier()\n\n\nwait_lds_barrier()\n", settings=_GFX950, at=(8, 1),
                message="Per-kernel waitcnt shim `wait_lds_barrier(...)` (waits for lgkmcnt=0 on gfx9 (gfx942/gfx950)): "
                        "use `fx.rocdl.s_waitcnt(lgkmcnt=0)` for its wait, and keep the rest of what `wait_lds_barrier` does"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        wait = self.wait_at(node)
        if wait is None or wait[0] is None:
            return  # no shim's wait (a positional one is FLY361's)
        shim, call = wait
        if shim.kind == "wrapper" and self.inside_shim(node):
            return
        self._report(node, shim, call, self.replaceable(node, shim))

    def _report(self, node: ast.Call, shim: Shim, call: ast.Call, replaceable: bool) -> None:
        layouts, from_config = self.layouts()
        if not layouts:
            return
        value = self.bitfield_value(shim, call)
        decoded, keywords, _ = self.describe(value, layouts)
        fix = self.waitcnt_fix(node, keywords, from_config) if replaceable else None
        counted = self._counted_call(shim, call, layouts) if value is None else None
        if counted is not None:
            decoded, keywords, within = counted
            fix = self.waitcnt_fix(node, keywords, from_config, counted=within) if replaceable else None
        advice = self.advice(keywords, value)
        if shim.kind == "wrapper" and not shim.pure:  # the call cannot simply become the wait
            advice = f"{advice} for its wait, and keep the rest of what `{shim.function.name}` does"
        self.report(node, fix=fix, shim=shim.function.name, decoded=decoded, advice=advice, caution=self.caution())

    def _counted_call(self, shim: Shim, call: ast.Call, layouts: list[str]) -> tuple[str, tuple, str] | None:
        """`counted` for a call whose one argument no constant gives (`_encode_waitcnt(vmcnt=n)`)."""
        expressions = argument_expressions(shim.function, call)
        if expressions is None:
            return None
        values = {name: self.value_of(expression) for name, expression in expressions.items()}
        unknown = [name for name, value in values.items() if value is None]
        if len(unknown) != 1 or not within(call, expressions[unknown[0]]):
            return None
        known = {name: value for name, value in values.items() if value is not None}
        return self.counted(lambda n: shim.evaluate_with({**known, unknown[0]: n}, self.lookup),
                            expressions[unknown[0]], layouts)


@register
class WaitcntShimDefinition(_WaitcntRule):
    """A per-kernel s_waitcnt encoder or wrapper duplicates what
    `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)` does per arch, and
    usually for one generation only. Migrate its callers (FLY362) and delete
    it once unused: the fix does both for a shim only ever called in its
    module whose every call decodes to the keyword form. A helper is a shim
    when it packs a bitfield from `vmcnt`/`lgkmcnt`/`expcnt` parameters with
    shifts/ors and returns it, or when it emits a positional `s_waitcnt` of a
    parameter-derived value."""

    code = "FLY363"
    valid = [
        "def _barrier(vmcnt=63, lgkmcnt=63):\n    emit_asm(f's_waitcnt vmcnt({vmcnt})')\n",
        "def pack(hi, lo):\n    return (hi << 16) | lo\n",
        _HX + "def wait_lds():\n    rocdl.s_waitcnt(lgkmcnt=0)\n",
    ]
    invalid = [
        Invalid("def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):\n"
                "    return (vmcnt & 0xF) | (expcnt << 4) | (lgkmcnt << 8) | (((vmcnt >> 4) & 0x3) << 14)\n"),
        Invalid(_HX + "def _s_waitcnt(val):\n    rocdl.s_waitcnt(val)\n"),
        Invalid(_HX + "def wait_vmcnt(n):\n    rocdl.s_waitcnt((n & 0xF) | 0x3F70 | (((n >> 4) & 0x3) << 14))\n"),
        # Only called here, every call a constant the arch decodes: the calls become the keyword form and the
        # shim goes, with the constant only it read (their comments stay).
        Invalid(_HX + _NESTED_SHIM, fixed=_HX + _NESTED_SHIM_MIGRATED, settings=_GFX950,
                message="Per-kernel s_waitcnt wrapper shim `wait_vm`: call `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)` "
                        "directly and delete the shim once unused"),
        # A call of no constant count, or a public shim other modules may call: no fix.
        Invalid(_HX + "def build(k):\n    def wait_vm(n):\n        rocdl.s_waitcnt((n & 0xF) | 0x3F70)\n\n"
                "    wait_vm(0)\n    wait_vm(k)\n", settings=_GFX950),
        Invalid(_HX + "def wait_vm(n):\n    rocdl.s_waitcnt((n & 0xF) | 0x3F70)\n\n\nwait_vm(0)\n", settings=_GFX950),
    ]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        shim = self.classify(node)
        if shim is None:
            return
        start = Position(node.lineno, self.context.source.char_col(node.lineno, node.col_offset))
        header = self.context.source.lines[node.lineno - 1]  # rows as the parser counts them
        column = header.find(node.name, node.col_offset)
        end = Position(node.lineno, self.context.source.char_col(node.lineno, column + len(node.name)) if column >= 0 else start.col)
        self.report(start=start, end=end, fix=self.migration_fix(node), shim=node.name, kind=shim.kind)


@register
class WaitcntMagicConstant(_WaitcntRule):
    """Named wait-counter bitfields and encoding constants (`_LGKMCNT_0_ONLY =
    0xC07F`, `_LGKMCNT_EXPCNT_BASE = 0x3F70`, `_VMCNT_HI_SHIFT = 14`) bake one
    generation's layout into the kernel. Once the waits use the keyword form
    they are dead: delete them. Flagged: upper-case names containing
    VMCNT/LGKMCNT/EXPCNT bound to an integer constant (also as a keyword
    argument, e.g. a traits field) that is a bitfield - above 63 (no counter
    goes that high), named as an encoding part (`*_MASK`, `*_SHIFT`,
    `*_BASE`, `*_ONLY`), or read by a positional `s_waitcnt` or a shim. A
    count such as `_MAIN_VMCNT = 16` fed to the keyword form, or
    `_BIAS_VMCNT_NO_K = ctx.NUM_DMA_V`, is not flagged. The fix migrates the
    waits that read it and deletes it, when they all migrate safely."""

    code = "FLY364"
    valid = [
        "_BIAS_VMCNT_NO_K = ctx.NUM_DMA_V\n",
        "vmcnt = 3\n",
        "class Traits:\n    LGKMCNT_0_ONLY: int\n",
        # a count fed to the keyword form is not a bitfield
        _HX + "_MAIN_VMCNT = 16\nrocdl.s_waitcnt(vmcnt=_MAIN_VMCNT)\n",
    ]
    invalid = [
        # Read by nothing, and named by no other project file: deleted.
        Invalid("_LGKMCNT_0_ONLY = 0xC07F\n", fixed=""),
        # Read by a public shim other modules may call: no fix.
        Invalid(_HX + "_VMCNT_LO_MASK = 0xF\n_VMCNT_HI_SHIFT = 14\n\n\ndef wait_vm(n):\n"
                "    rocdl.s_waitcnt((n & _VMCNT_LO_MASK) | 0x3F70 | (((n >> 4) & 0x3) << _VMCNT_HI_SHIFT))\n", count=2),
        Invalid("traits = Traits(\n    LGKMCNT_0_ONLY=0xC07F,\n)\n"),
        Invalid("_VMCNT_LO_MASK = 0xF\n_VMCNT_HI_SHIFT = 14\n", count=2, fixed=""),
        # Read only by waits that migrate: they do, and it goes.
        Invalid(_HX + "_LGKMCNT_0_ONLY = 0xC07F\n\n\ndef f():\n    rocdl.s_waitcnt(_LGKMCNT_0_ONLY)\n",
                fixed=_HX + "\n\ndef f():\n    rocdl.s_waitcnt(lgkmcnt=0)\n", settings=_GFX950),
        Invalid(_HX + _NESTED_SHIM, fixed=_HX + _NESTED_SHIM_MIGRATED, settings=_GFX950),
        # Another read that does not migrate (no target arch: the keyword fix is not safe): no fix.
        Invalid(_HX + "_LGKMCNT_0_ONLY = 0xC07F\n\n\ndef f():\n    rocdl.s_waitcnt(_LGKMCNT_0_ONLY)\n"),
    ]

    _bitfield_bindings: set[int] | None = None

    def bitfield_bindings(self) -> set[int]:
        """ids of the bindings read inside a positional s_waitcnt argument or a shim body."""
        if self._bitfield_bindings is None:
            regions: list[ast.AST] = []
            for call in self.model.nodes(ast.Call):
                argument = _positional_waitcnt(call, self.model.resolve)
                if argument is not None:
                    regions.append(argument)
            for function in self.model.nodes(ast.FunctionDef):
                if self.classify(function) is not None:
                    regions.append(function)
            found: set[int] = set()
            for region in regions:
                for name in ast.walk(region):
                    if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load):
                        binding = self.model.binding_of(name)
                        if binding is not None:
                            found.add(id(binding.node))
            self._bitfield_bindings = found
        return self._bitfield_bindings

    def check_file(self) -> None:
        text = self.context.source.text
        if "CNT" not in text and text.isascii():
            return  # no name holds "CNT" (a non-ASCII name may be NFKC-normalized to one)
        # One loop per node type rather than a visit per node: a kernel binds
        # thousands of names, and one without "CNT" needs no further look.
        for node, target, value in self.model.name_assignments():
            if "CNT" in target.id:
                self._check(target.id, value, node, target)
        for node in self.model.nodes(ast.keyword):
            if node.arg and "CNT" in node.arg:
                self._check(node.arg, node.value, node, None)

    def _check(self, name: str, value: ast.expr, node: ast.AST, target: ast.AST | None) -> None:
        if not _CONSTANT_NAME.match(name):
            return
        number = fold(value, {})
        if number is None:
            return
        # A value above 63 cannot be a counter value; smaller ones must feed a bitfield.
        if number > 63 or _ENCODING_NAME.search(name) or (target is not None and id(target) in self.bitfield_bindings()):
            edits = self.constant_migration(target) if target is not None else None
            fix = None if edits is None else self.make_fix(edits, f"Delete `{name}` with the waits that read it migrated")
            self.report(node, fix=fix, name=name, value=self.text(value))
