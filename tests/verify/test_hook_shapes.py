"""The compile hook's adapters: one per shape of MlirCompiler.compile, chosen by the flydsl release."""

from __future__ import annotations

import inspect

import pytest

from flydsl_lint.engine.target import releases
from flydsl_lint.engine.tomlcompat import tomllib
from flydsl_lint.engine.versions import Version
from flydsl_lint.verify.capture import HOOK_SHAPES, HookError, UnsupportedRelease, hook_shape_for
from tests.release_envs import REPO_ROOT

API = tomllib.loads((REPO_ROOT / "flydsl_lint/data/flydsl_api.toml").read_text(encoding="utf-8"))
COMPILE_SIGNATURES = API["signatures"]["flydsl.compiler.jit_function.MlirCompiler.compile"]
SUPPORTED = [str(r) for r in releases().known if Version.parse("0.3.0") <= r]


def _table_signature(release: str) -> str:
    """The API table's recorded signature of MlirCompiler.compile at ``release``."""
    version = Version.parse(release)
    for span, signature in COMPILE_SIGNATURES.items():
        first, dash, last = span.partition("-")  # "0.1.5", "0.1.6-0.4.2" or "0.5.0-"
        upto = Version.parse(last) if last else None if dash else Version.parse(first)
        if Version.parse(first) <= version and (upto is None or version <= upto):
            return signature
    raise KeyError(release)


def _parameter_names(signature: str) -> tuple[str, ...]:
    """("module", "arch", ...) from "(cls, module, *, arch=..., ...)", without cls."""
    names = [part.strip().split("=")[0] for part in signature.strip("()").split(",")]
    return tuple(name for name in names if name not in ("cls", "*"))


@pytest.mark.parametrize("release", SUPPORTED)
def test_each_supported_release_has_the_shape_the_api_table_records(release):
    assert hook_shape_for(release).parameters == _parameter_names(_table_signature(release))


def test_shapes_cover_the_oldest_supported_to_the_newest_release():
    assert HOOK_SHAPES[0].first == str(releases().oldest_supported)
    assert HOOK_SHAPES[-1].last == str(releases().known[-1])


def test_a_dot_release_and_a_dev_build_take_their_release_shape():
    assert hook_shape_for("0.3.4.1") is HOOK_SHAPES[0]
    assert hook_shape_for("0.5.0.dev20250101+gabc") is HOOK_SHAPES[1]


@pytest.mark.parametrize("version", ["0.2.4", "0.5.1", "1.0.0", "(unknown version)"])
def test_release_outside_the_shapes_is_unsupported(version):
    with pytest.raises(UnsupportedRelease) as raised:
        hook_shape_for(version)
    assert str(raised.value) == f"flydsl {version} is not supported by compile mode; supported: 0.3.0–0.5.0"


def test_a_reshaped_compile_step_is_a_misfit_not_a_silent_record():
    def compile(module, *, func_name, options):
        return module

    with pytest.raises(HookError, match=r"is not the \(asm, func_name, config\) of flydsl 0.5.0"):
        hook_shape_for("0.5.0").check(inspect.signature(compile))
    hook_shape_for("0.4.2").check(inspect.signature(lambda module, *, arch="", func_name="", link_libs=None: None))
