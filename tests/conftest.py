import os
import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Every test, and every flydsl-lint process a test starts, targets 0.5.0 unless it says
# otherwise: without it the target would come from whatever flydsl this machine has installed.
# Tests of target discovery remove it (`without_target_variable`).
os.environ["FLYDSL_LINT_TARGET_VERSION"] = "0.5.0"

# A suite started in the background by a shell without job control (`cmd &` in a script) inherits
# an ignored SIGINT, and so would every process a test starts: the tests that press Ctrl-C on one
# would see it ignored, as such a background job should. Handled here, it is the default again in
# those processes (exec resets a handled signal, not an ignored one).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def _own_cache_home(tmp_path_factory):
    """flydsl-lint-verify's base cache and its signing key (and any other user cache a test
    process makes) in a folder of the session's, never the user's home."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache-home"))
    yield
    if previous is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = previous


def without_target_variable() -> dict:
    """This process's environment without the suite's FLYDSL_LINT_TARGET_VERSION."""
    return {key: value for key, value in os.environ.items() if key != "FLYDSL_LINT_TARGET_VERSION"}

from flydsl_lint.engine.config import Settings  # noqa: E402
from flydsl_lint.engine.source import SourceFile  # noqa: E402
from flydsl_lint.engine.versions import Version  # noqa: E402
from flydsl_lint.run.checker import Checker  # noqa: E402
from flydsl_lint.run.fix_loop import fix_source  # noqa: E402


def make_settings(tmp_path: Path, **overrides) -> Settings:
    values = {"root": tmp_path, "target_version": Version.parse("0.5.0"), "target_version_source": "test"}
    values.update(overrides)
    return Settings(**values)


def lint_text(text: str, tmp_path: Path, name: str = "kernel.py", **overrides):
    settings = make_settings(tmp_path, **overrides)
    return Checker(settings).check(SourceFile(str(tmp_path / name), text))


def fix_text(text: str, tmp_path: Path, unsafe: bool = False, name: str = "kernel.py", **overrides) -> str:
    settings = make_settings(tmp_path, **overrides)
    return fix_source(SourceFile(str(tmp_path / name), text), Checker(settings), unsafe=unsafe).new_text


def script_module(stem: str):
    """scripts/<stem>.py as a module (a script, not part of the package)."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / f"{stem}.py"
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def derive_types_script():
    return script_module("derive_flydsl_types")


def project_model(root: Path, modules: dict[str, str], source: str, release: str = "0.5.0"):
    """The semantic model of `source` as module `kernels.k` of a package `kernels` of `modules`
    written under `root` (file stem -> source), and its tree."""
    import ast

    from flydsl_lint.engine.model import SemanticModel
    from flydsl_lint.engine.project import ProjectIndex
    from flydsl_lint.engine.versions import Version

    write_package(root, modules)
    tree = ast.parse(source)
    return SemanticModel(tree, "kernels.k", False, ProjectIndex([root]), Version.parse(release)), tree


def write_package(root: Path, modules: dict[str, str], name: str = "kernels") -> Path:
    """A package `name` under `root` holding `modules` (file stem -> source); its folder."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for stem, source in modules.items():
        (package / f"{stem}.py").write_text(source)
    return package


@pytest.fixture
def lint(tmp_path):
    return lambda text, **kw: lint_text(text, tmp_path, **kw)


@pytest.fixture
def fix(tmp_path):
    return lambda text, **kw: fix_text(text, tmp_path, **kw)
