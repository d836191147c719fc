"""Resolution: the qualified name an expression refers to, through imports, star
imports, aliases, project re-exports and the arguments passed for a parameter."""

from __future__ import annotations

import ast
import builtins

from .scopes import _UNSEEN, Binding

_BUILTINS = frozenset(dir(builtins))
# Legacy helpers receive dialect modules as parameters named like them.
DIALECT_PARAMETERS = {
    "arith": "flydsl.expr.arith",
    "vector": "flydsl._mlir.dialects.vector",
    "llvm": "flydsl._mlir.dialects.llvm",
    "scf": "flydsl._mlir.dialects.scf",
    "memref": "flydsl._mlir.dialects.memref",
    "rocdl": "flydsl.expr.rocdl",
}
# A plain function's positional parameter -> index, parameter -> default, and
# calls, each None where it unpacks (see `SemanticModel._call_signature`).
_CallSignature = tuple[dict[str, int], dict[str, ast.expr], list[ast.Call | None]]


def parameter_defaults(arguments: ast.arguments) -> dict[str, ast.expr]:
    """Each parameter of a signature that has a default -> the default."""
    positional = [arg.arg for arg in arguments.posonlyargs + arguments.args]
    defaults = dict(zip(reversed(positional), reversed(arguments.defaults)))
    defaults.update((arg.arg, value) for arg, value in zip(arguments.kwonlyargs, arguments.kw_defaults) if value)
    return defaults


# The builtins' names FlyDSL's own modules export (`fx.max`, ...), which a star import of one binds.
_FLYDSL_BUILTIN_NAMES = frozenset({"max", "min", "round"})


class _Resolution:
    """Name resolution on demand (part of `SemanticModel`)."""

    def resolve(self, node: ast.AST) -> str | None:
        """Qualified name of a Name/Attribute expression, following imports.

        `fx.rocdl.s_waitcnt` with `import flydsl.expr as fx` resolves to
        `flydsl.expr.rocdl.s_waitcnt`; a rebound or local name resolves to None.
        """
        resolved = self._answers["resolve"]
        result = resolved.get(node, _UNSEEN)  # most calls: rules ask about the same callee
        if result is not _UNSEEN:
            return result
        resolved[node] = None  # guards against alias cycles
        kind = type(node)
        if kind is ast.Attribute:
            base = self.resolve(node.value)
            result = f"{base}.{node.attr}" if base else None
            # `canonical` follows only the rules' leaves: most attributes need no call.
            if result is not None and node.attr in self.project.follows:
                result = self.project.canonical(result)
        elif kind is ast.Name:
            binding = self.binding_of(node)
            if binding is not None:
                # Every read of a binding resolves alike: its target is canonicalized once.
                names = self._answers["binding_name"]  # resolve() of a read of the binding
                result = names.get(binding, _UNSEEN)
                if result is _UNSEEN:
                    target = self.binding_target(binding)
                    result = names[binding] = None if target is None else self.project.canonical(target)
            elif node.id in _BUILTINS or node not in self._scope_of_node:
                result = None
            else:
                result = self._from_star_import(node.id)
                if result is not None:
                    result = self.project.canonical(result)
        else:
            result = None
        resolved[node] = result
        return result

    def binding_target(self, binding: Binding) -> str | None:
        """The qualified name every use of `binding` refers to (project
        re-exports not yet followed), else None: an import's target, what an
        alias `x = fx.max` names, what every caller passes for a parameter."""
        targets = self._answers["binding_target"]
        target = targets.get(binding, _UNSEEN)
        if target is not _UNSEEN:
            return target
        targets[binding] = None  # guards against alias cycles
        target = None
        if binding.kind == "import" and binding.target:
            target = binding.target
        elif binding.alias_of is not None and self.is_single_binding(binding):
            target = self.resolve(binding.alias_of)
        elif binding.kind == "param" and self.is_single_binding(binding):
            target = self._passed_argument(binding)
        targets[binding] = target
        return target

    def _passed_argument(self, binding: Binding) -> str | None:
        """The one name every call of a plain function passes for this parameter.

        Legacy helpers take dialect modules as arguments (`epilog(arith, vector)`);
        when each call in this module passes (or defaults to) the same resolvable
        name, the parameter is that name. Methods and unresolved calls give None.
        """
        signature = self._call_signature(self.parent(binding.node))
        if signature is None:
            return None
        if not signature[2]:
            return self._dialect_parameter(binding)
        passed = self._arguments_for(binding, signature)
        targets = {self.resolve(argument) for argument in passed} if passed is not None else {None}
        return targets.pop() if len(targets) == 1 and None not in targets else None

    def _arguments_for(self, binding: Binding, signature: _CallSignature) -> list[ast.expr] | None:
        """What each call in `signature` passes for the parameter `binding` (its default where a call
        omits it); None when a call unpacks `*args` / `**kwargs` or passes nothing for it."""
        positions, defaults, calls = signature
        index = positions.get(binding.name)
        passed = []
        for call in calls:
            if call is None:  # passes *args or **kwargs: what it passes is unknown
                return None
            if index is not None and index < len(call.args):
                argument = call.args[index]
            else:
                argument = next((k.value for k in call.keywords if k.arg == binding.name), defaults.get(binding.name))
            if argument is None:
                return None
            passed.append(argument)
        return passed

    def _call_signature(self, arguments: ast.AST | None) -> _CallSignature | None:
        """What `_passed_argument` needs of a plain function, found once for
        all its parameters: each positional parameter's index, each default,
        and its calls (None for a call that unpacks). None for a lambda, a
        method or a traced function."""
        signatures = self._answers["call_signature"]
        signature = signatures.get(arguments, _UNSEEN)
        if signature is not _UNSEEN:
            return signature
        function = self.parent(arguments) if isinstance(arguments, ast.arguments) else None
        signature = None
        if (isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                and self._scope_of_node[function].parent.kind != "class" and not self.function_kind(function)):
            positional = [arg.arg for arg in arguments.posonlyargs + arguments.args]
            defaults = parameter_defaults(arguments)
            calls = [None if _unpacks(call) else call for call in self.calls_of(function)]
            signature = ({name: index for index, name in enumerate(positional)}, defaults, calls)
        signatures[arguments] = signature
        return signature

    def _dialect_parameter(self, binding: Binding) -> str | None:
        """A helper with no caller in this module, taking a keyword-only,
        default-less parameter named exactly like a FlyDSL dialect module
        (`def epilog(acc, *, vector, arith)`), in a file that uses FlyDSL: its
        callers elsewhere hand it that module as `vector=vector`. Positional or
        defaulted parameters keep shadowing the name."""
        target = DIALECT_PARAMETERS.get(binding.name)
        arguments = self.parent(binding.node)
        if target is None or getattr(binding.node, "annotation", None) is not None:
            return None
        keyword_only = dict(zip((a.arg for a in arguments.kwonlyargs), arguments.kw_defaults))
        if binding.name not in keyword_only or keyword_only[binding.name] is not None:
            return None
        if not self.imports_flydsl():
            return None
        return target

    def _from_star_import(self, name: str) -> str | None:
        unknown = []
        for module in self.star_imports:
            summary = self.project.summary(module)
            if summary is None:
                unknown.append(module)
            elif name in summary.defined or name in summary.imported:
                return f"{module}.{name}"
        # A name no one binds can only come from a star import we cannot read.
        return f"{unknown[0]}.{name}" if len(unknown) == 1 else None

    def star_import_may_bind(self, name: str) -> bool:
        """Whether a star import of the module may bind `name` (a builtin's, say): a project module
        that defines or imports it, or a module outside FlyDSL whose names are not known. FlyDSL's
        own modules export no builtin's name but `max`, `min` and `round` (0.3.0 to 0.5.0)."""
        for module in self.star_imports:
            summary = self.project.summary(module)
            if summary is not None and (name in summary.defined or name in summary.imported):
                return True
            if summary is None and (not module.startswith("flydsl.") or name in _FLYDSL_BUILTIN_NAMES):
                return True
        return False

    def local_name_for(self, qualified: str) -> str | None:
        """A module-level name (or dotted path) that reaches `qualified` here.

        Fixes use it to spell a replacement the way the file already imports it,
        e.g. `fx.max` when the file has `import flydsl.expr as fx`.
        """
        names = self._answers["local_name_for"]
        if qualified not in names:
            names[qualified] = self._local_name_for(qualified)
        return names[qualified]

    def _local_name_for(self, qualified: str) -> str | None:
        best: str | None = None
        for name, bindings in self.module_scope.bindings.items():
            binding = [b for b in bindings if not b.fallback][-1:] or bindings[-1:]
            target = binding[0].target if binding[0].kind == "import" else None
            if not target:
                continue
            if target == qualified:
                return name
            if qualified.startswith(target + "."):
                candidate = name + qualified[len(target):]
                if best is None or len(candidate) < len(best):
                    best = candidate
        return best


def _unpacks(call: ast.Call) -> bool:
    """Whether a call passes `*args` or `**kwargs`."""
    # Loops, not any() over generators: asked of every call of every plain function.
    for argument in call.args:
        if isinstance(argument, ast.Starred):
            return True
    for keyword in call.keywords:
        if keyword.arg is None:
            return True
    return False
