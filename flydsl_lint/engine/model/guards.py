"""Guards: the `if` tests of a helper that the types of the values it holds decide
(`isinstance(v, ir.Value)`, `hasattr(v, "ir_value")`, `v is None`, under `not`, `and`, `or`
and `const_expr`), so that a helper's returns typed for one call's arguments follow only the
branches that call can take: `_raw(v)` returns `v.ir_value()` for an fx scalar and `v` itself
for an ir.Value."""

from __future__ import annotations

import ast

from ..project import release_paths
from .types import ARITH_VALUE, PY_BOOL, PY_FLOAT, PY_INT, RAW, SCALAR, VECTOR, VECTOR_CLASSES, returns_within

_IR_VALUE = "ir.Value"  # how the table spells the MLIR value class a FlyDSL value class derives from
# The qualified names of the classes a guard may test, by the table's name for them.
_VALUE_CLASSES = {
    _IR_VALUE: frozenset({"flydsl._mlir.ir.Value"}),
    "Numeric": frozenset({"flydsl.expr.Numeric", "flydsl.expr.numeric.Numeric", "flydsl.expr.typing.Numeric"}),
    "ArithValue": release_paths("flydsl.expr.utils.arith.ArithValue"),
    "Vector": VECTOR_CLASSES,
}
_CONST_EXPR = release_paths("flydsl.expr.primitive.const_expr")
# The class of the value each kind is (an fx scalar is a `Numeric`); an ir.Value or an ArithValue
# may also be of a subclass (a value the caster made, an fx.Vector), so a subclass test stays open.
_KIND_CLASS = {SCALAR: "Numeric", VECTOR: "Vector", ARITH_VALUE: "ArithValue", RAW: _IR_VALUE}
_EXACT_KINDS = frozenset({SCALAR, VECTOR})
# Python's own number classes: which kinds are instances of each (None: it depends on the value,
# as a Python int may be a bool). FlyDSL's value classes derive from none of them.
_BUILTIN_CLASSES = {
    "int": {PY_INT: True, PY_BOOL: True, PY_FLOAT: False},
    "float": {PY_INT: False, PY_BOOL: False, PY_FLOAT: True},
    "bool": {PY_INT: None, PY_BOOL: True, PY_FLOAT: False},
}
_PYTHON_KINDS = frozenset({PY_INT, PY_BOOL, PY_FLOAT})


class _Guards:
    """Guard truth and the returns a call reaches (part of `SemanticModel`)."""

    def reachable_returns(self, function: ast.FunctionDef, depth: int) -> list[ast.Return] | None:
        """The `return` statements of `function` that run on some path its decided guards allow;
        None when one path may fall off the end (an implicit `return None`)."""
        returns: list[ast.Return] = []
        return None if self._block_falls_through(function.body, returns, depth) else returns

    def _block_falls_through(self, block: list[ast.stmt], returns: list[ast.Return], depth: int) -> bool:
        """Collect the returns `block` may run; whether it may complete without returning or raising."""
        for statement in block:
            if isinstance(statement, ast.Return):
                returns.append(statement)
                return False
            if isinstance(statement, ast.Raise):
                return False
            if isinstance(statement, ast.If):
                truth = self.guard_truth(statement.test, depth)
                branches = [statement.body] if truth else [statement.orelse] if truth is False else \
                    [statement.body, statement.orelse]
                falls = [self._block_falls_through(branch, returns, depth) for branch in branches]
                if not any(falls):
                    return False
            else:
                # A loop, `with` or `try` may run its returns or not: all count, and it may complete.
                returns += returns_within(statement)
        return True

    def guard_truth(self, test: ast.expr, depth: int) -> bool | None:
        """What `test` is, when the value types decide it; None when they do not."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.guard_truth(test.operand, depth)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            # `and` is false when one operand is, true when all are; `or` the other way round.
            deciding = not isinstance(test.op, ast.And)
            found = [self.guard_truth(value, depth) for value in test.values]
            if deciding in found:
                return deciding
            return (not deciding) if all(truth is not None for truth in found) else None
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            # A value of a known kind is not None.
            if not self._typed(test.left, depth)[0].known:
                return None
            return isinstance(test.ops[0], ast.IsNot)
        inner = self._const_expr_argument(test)
        if inner is not None:
            return self.guard_truth(inner, depth)
        arguments = self._builtin_call(test, "isinstance")
        if arguments is not None and len(arguments) == 2:
            classes = arguments[1].elts if isinstance(arguments[1], ast.Tuple) else [arguments[1]]
            value = self._typed(arguments[0], depth)[0]
            found = [self._instance_of(value, cls) for cls in classes]
            return True if True in found else False if all(truth is False for truth in found) else None
        arguments = self._builtin_call(test, "hasattr")
        if arguments is not None and len(arguments) == 2 and isinstance(arguments[1], ast.Constant) \
                and arguments[1].value == "ir_value":
            return self._has_ir_value(self._typed(arguments[0], depth)[0])
        return None

    def guarded_class(self, read: ast.Name) -> str | None:
        """`int`, `float` or `bool` when `read` is in the body of an `if` of its function whose test (or
        an `and` operand of it, under `const_expr` too) is `isinstance(<the name>, <that class>)`,
        the name a parameter never rebound: the value is an instance of that builtin class there
        (a bool is an int)."""
        binding = self.binding_of(read)
        if binding is None or binding.kind != "param" or not self.is_single_binding(binding):
            return None
        child: ast.AST = read
        for ancestor in self.ancestors(read):
            if ancestor is binding.scope.node:
                return None
            if isinstance(ancestor, ast.If) and any(child is statement for statement in ancestor.body):
                found = self._isinstance_test(ancestor.test, read.id)
                if found is not None:
                    return found
            if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return None  # a nested scope: its reads may run after the name changed
            child = ancestor
        return None

    def _isinstance_test(self, test: ast.expr, name: str) -> str | None:
        """The builtin class `test` proves `name` an instance of, when it does."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return next((found for value in test.values if (found := self._isinstance_test(value, name))), None)
        inner = self._const_expr_argument(test)
        if inner is not None:
            return self._isinstance_test(inner, name)
        arguments = self._builtin_call(test, "isinstance")
        if arguments is None or len(arguments) != 2:
            return None
        value, cls = arguments
        if isinstance(value, ast.Name) and value.id == name and self._builtin_class(cls) is not None:
            return cls.id
        return None

    def _const_expr_argument(self, test: ast.expr) -> ast.expr | None:
        """`x` of `const_expr(x)`, which is `x` itself to Python."""
        if isinstance(test, ast.Call) and not test.keywords and len(test.args) == 1 \
                and self.resolve(test.func) in _CONST_EXPR:
            return test.args[0]
        return None

    def _builtin_call(self, test: ast.expr, name: str) -> list[ast.expr] | None:
        """The arguments of a keyword-free call of the builtin `name` (not bound here), else None."""
        if isinstance(test, ast.Call) and not test.keywords and isinstance(test.func, ast.Name) \
                and test.func.id == name and self._unbound_builtin(test.func):
            return test.args
        return None

    def _builtin_class(self, cls: ast.expr) -> dict | None:
        """Which kinds are instances of `cls` when it is Python's `int`, `float` or `bool` (not bound here)."""
        if isinstance(cls, ast.Name) and cls.id in _BUILTIN_CLASSES and self._unbound_builtin(cls):
            return _BUILTIN_CLASSES[cls.id]
        return None

    def _unbound_builtin(self, name: ast.Name) -> bool:
        return self.binding_of(name) is None and not self.star_import_may_bind(name.id)

    def _instance_of(self, value, cls: ast.expr) -> bool | None:
        """`isinstance(value, cls)` for a value of a known kind and a class the table or Python knows."""
        instances = self._builtin_class(cls)
        if instances is not None:
            if value.kind in _PYTHON_KINDS:
                return instances[value.kind]
            return False if value.kind in _KIND_CLASS else None
        name = self.resolve(cls)
        tested = next((table_name for table_name, names in _VALUE_CLASSES.items() if name in names), None)
        if tested is None:
            scalar = self._constructed_type(name)
            if scalar.kind != SCALAR:
                return None
            # An fx scalar class: its own values are its instances; FlyDSL's other values and Python's are not.
            if value.kind == SCALAR:
                return True if value.scalar == scalar.scalar else None
            return False if value.kind in _KIND_CLASS or value.kind in _PYTHON_KINDS else None
        if value.kind in _PYTHON_KINDS:
            return False
        own = _KIND_CLASS.get(value.kind)
        if own is None:
            return None
        ancestors, tested_ancestors = self._class_chain(own), self._class_chain(tested)
        if ancestors is None or tested_ancestors is None:
            return None
        if tested in ancestors:
            return True
        # A value of the kind's class may still be of a subclass of it that the tested class is.
        return None if own in tested_ancestors and value.kind not in _EXACT_KINDS else False

    def _has_ir_value(self, value) -> bool | None:
        """`hasattr(value, "ir_value")`: a Python number has none; a value of a class that defines
        it (or inherits it) has one; an ir.Value that may be of a subclass may or may not."""
        if value.kind in _PYTHON_KINDS:
            return False
        own = _KIND_CLASS.get(value.kind)
        chain = self._class_chain(own) if own is not None else None
        if chain is None:
            return None
        classes = self.type_table.classes
        if any(classes.get(name, {}).get("ir-value-method") for name in chain):
            return True
        return False if value.kind in _EXACT_KINDS else None

    def _class_chain(self, name: str) -> list[str] | None:
        """`Vector` -> [Vector, ArithValue, ir.Value]: the class and its bases up to `object`
        (ir.Value, MLIR's own class, has no `ir_value`: checked in every release 0.3.0 to 0.5.0);
        None when the release's table does not give them."""
        chain, classes = [], self.type_table.classes
        while name not in ("object", _IR_VALUE):
            facts = classes.get(name)
            if facts is None or name in chain:
                return None
            chain.append(name)
            name = facts.get("base")
        return chain + [name] if name == _IR_VALUE else chain
