"""§9 launch overhead (_run_compiled) and reuse of the shared kernel helpers.

Suggestions name only helpers the linted project really has: the project
index tells which names kernels/common/* modules define (today's FlyDSL has
no kernels/common/act.py and no LOG2E in kernels_common.py).
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

from ..engine.model import SemanticModel
from ._base import Invalid, Rule, Valid, register

KERNELS_COMMON = "kernels.common.kernels_common"
TENSOR_SHIM = "kernels.common.tensor_shim"
# Where the guide says shared helpers live, in the order suggestions prefer.
SHARED_MODULES = ("kernels.common.act", TENSOR_SHIM, KERNELS_COMMON, "kernels.common.utils", "kernels.common.mem_ops")
_FIXTURE = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "s9_project"  # inline cases only
_LOG2E_NAMES = re.compile(r"^_*(log2_?e|LOG2_?E)$")


# The rules of this module run only in files that import FlyDSL: every case does.
_FX = "import flydsl.expr as fx\n"


def _is_log2e_value(model: SemanticModel, value: ast.expr) -> bool:
    kind = type(value)  # one test per kind: this runs on every assignment
    if kind is ast.Constant:
        return isinstance(value.value, float) and abs(value.value - math.log2(math.e)) < 1e-6
    if kind is ast.Call:
        # Only a name or an attribute resolves (to `math.e`): test that before resolving.
        return (len(value.args) == 1 and not value.keywords and isinstance(value.args[0], (ast.Name, ast.Attribute))
                and model.resolve(value.func) == "math.log2" and model.resolve(value.args[0]) == "math.e")
    if kind is ast.BinOp and isinstance(value.op, ast.Div):  # 1 / math.log(2)
        left, right = value.left, value.right
        return (isinstance(left, ast.Constant) and left.value in (1, 1.0) and isinstance(right, ast.Call)
                and model.resolve(right.func) == "math.log" and len(right.args) == 1
                and isinstance(right.args[0], ast.Constant) and right.args[0].value in (2, 2.0))
    return False


def _is_module(rule: Rule, module: str) -> bool:
    """Whether the linted file is `module` (by its package path or its file path)."""
    if rule.model.module_name == module:
        return True
    return rule.context.source.path.replace("\\", "/").endswith("/" + module.replace(".", "/") + ".py")


def _defines(rule: Rule, module: str, name: str) -> bool:
    """Whether project module `module` itself defines `name` (re-exports do not count)."""
    summary = rule.model.project.summary(module)
    return summary is not None and name in summary.defined


@register
class LocalLog2e(Rule):
    """A kernel that defines its own `LOG2E` (as `1.4426950408889634`,
    `math.log2(math.e)` or `1 / math.log(2)`) duplicates a constant the guide
    keeps in kernels/common/kernels_common.py. When the project's
    kernels_common defines `LOG2E`, import it; when it does not (today's
    FlyDSL), the message says to move one definition there. A name bound to
    the value is matched whatever it is called; a literal used inline is not a
    definition and is not flagged."""

    code = "FLY901"
    only_in_flydsl_files = True
    valid = [
        _FX + "import math\nx = y * math.log2(math.e)\n",
        _FX + "LOG2 = 0.6931471805599453\n",
        Valid(_FX + "from kernels.common.kernels_common import LOG2E\nscale = LOG2E * 0.5\n", settings={"root": _FIXTURE}),
        Valid(_FX + "LOG2E = 1.4426950408889634\n", path="kernels/common/kernels_common.py"),
        "import math\nLOG2E = math.log2(math.e)\n",  # not FlyDSL code
    ]
    invalid = [
        Invalid(_FX + "LOG2E = 1.4426950408889634\n"),
        Invalid(_FX + "import math as host_math\n_LOG2E = host_math.log2(host_math.e)\n"),
        Invalid(_FX + "def kernel():\n    log2e = 1.44269504\n    return log2e\n", settings={"root": _FIXTURE}),
    ]

    def check_file(self) -> None:
        # One loop rather than a visit per node: a kernel has thousands of assignments.
        for node, target, value in self.model.name_assignments():
            if _is_log2e_value(self.model, value):
                self._report(node, target.id)

    def _report(self, node: ast.stmt, name: str) -> None:
        if _is_module(self, KERNELS_COMMON):
            return
        if _defines(self, KERNELS_COMMON, "LOG2E"):
            advice = f"import `LOG2E` from `{KERNELS_COMMON}`"
        else:
            advice = "define it once in the shared module kernels/common/kernels_common.py and import it"
        self.report(node, name=name, advice=advice)


# Helper families the guide names, and the shared names each may duplicate.
_FAMILIES = {
    "sigmoid": ("sigmoid",), "tanh": ("tanh",), "silu": ("silu",), "gelu": ("gelu",),
    "ceildiv": ("cdiv", "ceildiv", "ceil_div"), "cdiv": ("cdiv", "ceildiv", "ceil_div"),
    "ceil_div": ("cdiv", "ceildiv", "ceil_div"), "run_compiled": ("_run_compiled",),
}


def _positional(function: ast.AST) -> int:
    args = function.args
    return -1 if args.vararg else len(args.posonlyargs) + len(args.args)


_VARIANT_SUFFIX = re.compile(r"_(f32|f16|bf16|fp32|i32|i64|scalar|fast|impl|host)$")


def _helper_key(name: str) -> str:
    return _VARIANT_SUFFIX.sub("", name.lstrip("_").lower())


@register
class DuplicateSharedHelper(Rule):
    """A kernel module that defines its own sigmoid / tanh / ceildiv helper,
    pointer extraction or cached-dispatch shim re-implements what the shared
    modules (kernels/common/act.py, tensor_shim.py, kernels_common.py,
    utils.py, mem_ops.py) provide; copies drift apart. Flagged only when the
    linted project's shared module really defines the same helper (by name,
    ignoring leading underscores and dtype suffixes such as `_f32`), so the
    message always names an existing import. Similar formulas can encode
    different rounding: check the variant before swapping it, and keep a
    meaningful variant explicit."""

    code = "FLY902"
    only_in_flydsl_files = True
    valid = [
        _FX + "def _sigmoid_f32(x):\n    return x\n",  # no shared act module in this project
        Valid(_FX + "def gate(x):\n    return x\n", settings={"root": _FIXTURE}),
        Valid(_FX + "class Act:\n    def sigmoid(self, x):\n        return x\n", settings={"root": _FIXTURE}),
        Valid(_FX + "def sigmoid(x):\n    return x\n", settings={"root": _FIXTURE}, path="kernels/common/act.py"),
        Valid(_FX + "def _global_ptr_from_addr(a):\n    return a\n", settings={"root": _FIXTURE}),
        Valid(_FX + "def extract_global_ptr(t, address_space):\n    return t\n", settings={"root": _FIXTURE}),
        Valid("def _sigmoid_f32(x):\n    return x\n", settings={"root": _FIXTURE}),  # not FlyDSL code
    ]
    invalid = [
        Invalid(_FX + "def _sigmoid_f32(x):\n    return x\n", settings={"root": _FIXTURE},
                at=(2, 1), message="`_sigmoid_f32` duplicates `sigmoid` from `kernels.common.act`: import it (check that the variant's rounding and contract match)"),
        Invalid(_FX + "def ceil_div(a, b):\n    return (a + b - 1) // b\n", settings={"root": _FIXTURE}),
        Invalid(_FX + "def _run_compiled(exe, *args):\n    return exe(*args)\n", settings={"root": _FIXTURE}),
        Invalid(_FX + "def extract_global_ptr(t):\n    return t\n", settings={"root": _FIXTURE}),
    ]

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if isinstance(self.model.parent(node), ast.ClassDef):
            return
        key = _helper_key(node.name)
        candidates = _FAMILIES.get(key)
        if candidates is None:
            if "ptr" not in key:
                return
            candidates = (key, f"_{key}")  # pointer helpers: the same name in a shared module
        if self._in_shared_layer():  # asked after the name: most functions are no helper
            return
        for module in SHARED_MODULES:
            for shared in candidates:
                if _defines(self, module, shared) and self._same_arity(node, module, shared):
                    self.report(node, name=node.name, shared=shared, module=module)
                    return

    def _same_arity(self, node: ast.FunctionDef, module: str, shared: str) -> bool:
        """A different parameter count is a different contract, not a copy."""
        project = self.model.project

        def arities(name: str) -> dict[str, int]:
            parsed = project.parse(name)
            return {s.name: _positional(s) for s in (parsed[0].body if parsed else ())
                    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}

        return project.derived("FLY902 arity", module, arities).get(shared) == _positional(node)

    def _in_shared_layer(self) -> bool:
        """kernels/common/ is the shared layer itself: consolidating it is its own task."""
        path = self.context.source.path.replace("\\", "/")
        return self.model.module_name.startswith("kernels.common.") or "/kernels/common/" in path or any(
            _is_module(self, m) for m in SHARED_MODULES)


def _launches(function: ast.AST) -> bool:
    """A launcher: its body calls `<something>.launch(...)`."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "launch"
               for n in ast.walk(function))


# Where `_in_loop`'s walk up stops, by exact node type (a set look-up per step, not isinstance chains).
_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef})
_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While})
_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})


@register
class JitCallInLoop(Rule):
    """Calling a `@flyc.jit` wrapper re-runs its per-call dispatch (DLPack,
    argument marshalling, cache lookup) every time. Called once per iteration
    of a host Python loop, that overhead is paid on the hot path: compile once
    and dispatch through `_run_compiled` (kernels/common/tensor_shim.py) with
    flat pointers, strides and sizes. Flagged: a call, in host code inside a
    `for`/`while` loop or comprehension, of a function whose decorator is
    `@flyc.jit` (defined in the module or imported from a project module).
    Only launchers count: the jit function's body launches a kernel
    (`kernel(...).launch(...)`). A local `@flyc.jit` boundary that only hosts a
    runtime `if` (guide §5), called from trace-time helpers or
    `range_constexpr` loops, is not host dispatch and is not flagged. Calls
    through a dict such as `compiled["launch"](...)` cannot be resolved and
    are not flagged. Verify the compiled signature before switching."""

    code = "FLY903"
    call_own_code = True  # jit launchers are the project's own functions
    _HEAD = "import flydsl.compiler as flyc\n\n@flyc.jit\ndef launch(a, b):\n    kern(a, b).launch(grid=(1, 1, 1), block=(64, 1, 1))\n\n"
    valid = [
        _HEAD + "def run(a, b):\n    launch(a, b)\n",
        _HEAD + "@flyc.jit\ndef outer(a, b, n):\n    for i in range(n):\n        launch(a, b)\n",
        "def launch(a, b):\n    pass\n\nfor i in range(3):\n    launch(1, 2)\n",
        _HEAD + "def run(xs, b):\n    for launch in xs:\n        launch(b)\n",
        "import flydsl.compiler as flyc\n\n@flyc.jit\ndef guarded_store(v):\n    if v > 0:\n        store(v)\n\n"
        "def helper(vs, n):\n    for i in range(n):\n        guarded_store(vs[i])\n",
        _HEAD + "from flydsl.expr import range_constexpr\ndef unrolled(a, b):\n    for i in range_constexpr(4):\n        launch(a, b)\n",
    ]
    invalid = [
        Invalid(_HEAD + "def bench(a, b, iters):\n    for _ in range(iters):\n        launch(a, b)\n"),
        Invalid(_HEAD + "def run(pairs):\n    return [launch(a, b) for a, b in pairs]\n"),
    ]

    def visit_Call(self, node: ast.Call) -> None:
        if self._in_host_loop(node) and self._is_jit(node.func):
            self.report(node, name=self.text(node.func))

    def _in_host_loop(self, node: ast.Call) -> bool:
        """Whether the call runs once per iteration of a loop or comprehension
        of its own function, in host code."""
        child = node
        for ancestor in self.model.ancestors(node):
            in_loop = self._loop_step(ancestor, child)
            if in_loop is not None:
                return in_loop and not self.model.in_traced_code(node)
            child = ancestor
        return False

    def _local_def(self, func: ast.expr) -> ast.AST | None:
        """The def of this file a plain-name callee refers to, if that is its one binding."""
        if isinstance(func, ast.Name):
            binding = self.model.binding_of(func)
            if binding is not None and binding.kind == "def" and self.model.is_single_binding(binding):
                return binding.node
        return None

    def _project_callee(self, func: ast.expr) -> str | None:
        """The qualified name of a callee defined in a project module (not FlyDSL)."""
        name = self.model.resolve(func)
        return name if name and "." in name and not name.startswith("flydsl.") else None

    def _loop_step(self, ancestor: ast.AST, child: ast.AST) -> bool | None:
        """Whether `child` under `ancestor` is in a host loop; None: ask `ancestor`."""
        kind = type(ancestor)
        if kind in _SCOPES:
            return False
        if kind in _LOOPS and child is not getattr(ancestor, "iter", None) and child not in ancestor.orelse:
            iterator = getattr(ancestor, "iter", None)
            if isinstance(iterator, ast.Call) and (self.model.resolve(iterator.func) or "").endswith("range_constexpr"):
                return False  # unrolled while tracing: not a host loop
            return True
        if kind in _COMPREHENSIONS and child is not ancestor.generators[0]:
            return True
        return None

    def _is_jit(self, func: ast.expr) -> bool:
        local = self._local_def(func)
        if local is not None:
            return self.model.function_kind(local) == "jit" and _launches(local)
        name = self._project_callee(func)
        if name is None:
            return False
        module, _, leaf = name.rpartition(".")
        return leaf in self._project_launchers(module)

    def _project_launchers(self, module: str) -> frozenset[str]:
        """The jit launchers among project module `module`'s top-level defs (the last def of each name)."""
        project = self.model.project

        def launchers(name: str) -> frozenset[str]:
            # Only a decorated def can be jit: when the outline (bodies unparsed) shows no
            # top-level def whose last definition is decorated, the module has no launcher.
            outlined = project.outline(name)
            if outlined is None or None not in outlined[0].defs.values():
                return frozenset()
            parsed = project.parse(name)
            if parsed is None:
                return frozenset()
            tree, is_package = parsed
            model = SemanticModel(tree, name, is_package, project)
            last = {s.name: s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
            found = frozenset(n for n, s in last.items() if model.function_kind(s) == "jit" and _launches(s))
            model.release()  # frees the tree by reference counting (the run has no cyclic GC)
            return found

        return project.derived("FLY903 launchers", module, launchers)
