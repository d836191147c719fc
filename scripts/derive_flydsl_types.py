"""Derive flydsl_lint/data/flydsl_types.txt: the value types FlyDSL's API gives, per release.

Read statically from each release's wheel, like scripts/derive_flydsl_api.py
(whose readers it reuses): nothing is imported or executed. Per release it
records

- the fx scalar classes of `flydsl/expr/numeric.py` (the `width=` / `signed=`
  keywords of their class statements, and whether they derive from `Float`);
- the scalar a Python literal becomes in an operator (`Numeric.from_python_value`);
- whether the scalar operators follow the promotion lattice of
  `_resolve_numeric_type` (same type -> it; integers -> the wider, unsigned on
  a tie; comparisons -> Boolean);
- the type of `thread_idx.x`-style attributes (module-level `Tuple3D(...)`
  objects of `flydsl/expr/gpu.py` and `Tuple3D`'s default dtype) and of
  `flydsl/expr/gpu.py` functions whose only return wraps in one scalar class;
- what the AST rewriter makes a `range(...)` loop's variables: the induction
  variable `scf_for_dispatch` passes (bounds cast to i32) for a loop without
  `init=`, and what `scf_range` yields (index bounds, raw iter args) with it.

Each fact is written with the releases it holds in (`A-`, `A-B`, `A`, joined
with `,`), one `section fact releases value` line each: the engine reads it with
str.split, as data/releases.txt, so no TOML parser is imported at start-up. Usage, from a folder of wheels as derive_flydsl_api.py reads them:

    python scripts/derive_flydsl_types.py --wheels wheels [--check]
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))
from derive_flydsl_api import _write_or_check, pick_wheel, spans, wheel_sources  # noqa: E402
from flydsl_lint.engine.versions import Version  # noqa: E402

FIRST_RELEASE = Version.parse("0.3.0")  # the numeric lattice and the rewriter's typed loops start here
OUTPUT = ROOT / "flydsl_lint" / "data" / "flydsl_types.txt"


def _parse(sources: dict[str, str], path: str) -> ast.Module | None:
    text = sources.get(path)
    return ast.parse(text) if text is not None else None


def _top_defs(tree: ast.Module | None) -> dict[str, ast.AST]:
    return {node.name: node for node in (tree.body if tree else ())
            if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def scalar_classes(numeric: ast.Module | None) -> dict[str, dict]:
    """`Int32` -> {width, signed, float} for each class with a `width=` keyword."""
    classes: dict[str, dict] = {}
    bases_of: dict[str, list[str]] = {}
    for node in _top_defs(numeric).values():
        if not isinstance(node, ast.ClassDef):
            continue
        bases_of[node.name] = [base.id for base in node.bases if isinstance(base, ast.Name)]
        keywords = {k.arg: k.value for k in node.keywords if isinstance(k.value, ast.Constant)}
        if "width" in keywords:
            classes[node.name] = {"width": keywords["width"].value,
                                  "signed": keywords["signed"].value if "signed" in keywords else None}

    def derives_from(name: str, ancestor: str) -> bool:
        pending = list(bases_of.get(name, ()))
        while pending:
            base = pending.pop()
            if base == ancestor:
                return True
            pending += bases_of.get(base, ())
        return False

    found = {}
    for name, facts in classes.items():
        if name in ("Integer", "Float"):
            continue  # abstract bases
        is_float = derives_from(name, "Float")
        if not is_float and not derives_from(name, "Integer"):
            continue
        found[name] = {"width": facts["width"], "signed": bool(facts["signed"]) if not is_float else None,
                       "float": is_float}
    return found


def literal_scalars(numeric: ast.Module | None) -> dict[str, str]:
    """`int` -> `Int32` from `if isinstance(value, int): return Int32(value) if ...` in from_python_value."""
    found: dict[str, str] = {}
    numeric_class = _top_defs(numeric).get("Numeric")
    method = next((node for node in getattr(numeric_class, "body", ())
                   if isinstance(node, ast.FunctionDef) and node.name == "from_python_value"), None)
    for node in ast.walk(method) if method else ():
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Call)
                and getattr(node.test.func, "id", None) == "isinstance" and len(node.test.args) == 2):
            continue
        kind = getattr(node.test.args[1], "id", None)
        returned = node.body[0].value if node.body and isinstance(node.body[0], ast.Return) else None
        if isinstance(returned, ast.IfExp):
            returned = returned.body  # the in-range case: Int32 unless the literal needs 64 bits
        if kind in ("int", "float", "bool") and isinstance(returned, ast.Call) and isinstance(returned.func, ast.Name):
            found[kind] = returned.func.id
    return found


def has_promotion_lattice(numeric: ast.Module | None) -> bool:
    defs = _top_defs(numeric)
    return all(name in defs for name in ("_resolve_numeric_type", "_result_numeric_type_for_op", "_make_binop"))


def gpu_returns(gpu: ast.Module | None, typing: ast.Module | None, scalars: dict) -> dict[str, str]:
    """`flydsl.expr.gpu.thread_idx.x` -> `Int32`, `flydsl.expr.gpu.lane_id()` -> `Int32`."""
    found: dict[str, str] = {}
    tuple3d = _top_defs(typing).get("Tuple3D")
    init = next((n for n in getattr(tuple3d, "body", ()) if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    dtype = None
    if init is not None:
        names = [a.arg for a in init.args.args]
        defaults = dict(zip(names[len(names) - len(init.args.defaults):], init.args.defaults))
        default = defaults.get("dtype")
        dtype = default.id if isinstance(default, ast.Name) and default.id in scalars else None
    for node in gpu.body if gpu else ():
        if (dtype and isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "Tuple3D"
                and len(node.value.args) == 1 and not node.value.keywords):
            for axis in "xyz":
                found[f"flydsl.expr.gpu.{node.targets[0].id}.{axis}"] = dtype
        elif isinstance(node, ast.FunctionDef):
            returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)]
            if (len(returns) == 1 and isinstance(returns[0].value, ast.Call)
                    and getattr(returns[0].value.func, "id", None) in scalars):
                found[f"flydsl.expr.gpu.{node.name}()"] = returns[0].value.func.id
    return found


def loop_variables(rewriter: ast.Module | None) -> dict[str, str]:
    """What `range` loop variables are in traced code, from the rewriter's loop builders."""
    methods = {node.name: node for node in ast.walk(rewriter) if isinstance(node, ast.FunctionDef)} if rewriter else {}
    found: dict[str, str] = {}
    dispatch, scf_range = methods.get("scf_for_dispatch"), methods.get("scf_range")
    if dispatch is not None and "_transform_for_auto" in methods:
        text = ast.unparse(dispatch)
        if "get_signless(32)" in text and "body_fn(iv" in text and "iv = for_op.induction_variable" in text:
            found["range"] = "raw:i32"  # bounds cast to i32, the raw block argument passed on
    if scf_range is not None:
        text = ast.unparse(scf_range)
        if "_to_index(start)" in text and "yield (for_op.induction_variable, list(for_op.inner_iter_args))" in text:
            found["range-init"] = "raw:index"
            found["range-init-state"] = "raw"
    return found


def derive(sources: dict[str, str]) -> dict[str, dict[str, object]]:
    """Section -> fact -> value for one release."""
    numeric = _parse(sources, "flydsl/expr/numeric.py")
    scalars = scalar_classes(numeric)
    return {
        "scalars": {name: scalars[name] for name in sorted(scalars)},
        "literals": literal_scalars(numeric),
        "operators": {"promotion": "numeric-lattice"} if has_promotion_lattice(numeric) else {},
        "returns": gpu_returns(_parse(sources, "flydsl/expr/gpu.py"), _parse(sources, "flydsl/expr/typing.py"), scalars),
        "loops": loop_variables(_parse(sources, "flydsl/compiler/ast_rewriter.py")),
    }


def _value(value: object) -> str:
    """A fact's value as one whitespace-free word: `Int32`, `raw:i32`, `width=32,signed=true,float=false`."""
    if isinstance(value, dict):
        return ",".join(f"{key}={_value(item)}" for key, item in value.items() if item is not None)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def build_table(derived: dict[str, dict]) -> str:
    releases = sorted(derived, key=Version.parse)
    lines = [
        "# Generated by scripts/derive_flydsl_types.py from each release's wheel: do not edit by hand.",
        "# `section fact releases value` lines, read with str.split (no TOML parser at start-up):",
        "# releases are `A-` (to the newest), `A-B` (inclusive) or `A`, joined with `,`; a type is an",
        "# fx scalar class name, `raw` (an ir.Value) or `raw:<mlir type>`. engine/model/types.py reads",
        "# the lines covering the target release.",
        f"releases {' '.join(releases)}",
    ]
    for section in ("scalars", "literals", "operators", "returns", "loops"):
        for fact in sorted({fact for release in releases for fact in derived[release][section]}):
            values = []  # distinct values in release order
            for release in releases:
                value = derived[release][section].get(fact)
                if value is not None and value not in values:
                    values.append(value)
            for value in values:
                span = spans([derived[r][section].get(fact) == value for r in releases], releases).replace(", ", ",")
                lines.append(f"{section} {fact} {span} {_value(value)}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=Path, required=True, help="folder of <release>/flydsl-<release>-cp311-*.whl")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    parser.add_argument("--check", action="store_true", help="exit 1 if the output differs, write nothing")
    options = parser.parse_args(argv)
    derived = {}
    for folder in sorted(p for p in options.wheels.iterdir() if p.is_dir()):
        wheel = pick_wheel(folder)
        if wheel is not None and Version.parse(folder.name) >= FIRST_RELEASE:
            derived[folder.name] = derive(wheel_sources(wheel))
    if not derived:
        parser.error(f"no wheel of a release >= {FIRST_RELEASE} under {options.wheels}")
    print(f"{len(derived)} releases read")
    return 0 if _write_or_check(options.output, build_table(derived), options.check) else 1


if __name__ == "__main__":
    sys.exit(main())
