"""The `flydsl-lint migrate` command: plan, prove (frontends/migrate.py), write, report."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.config import Settings
from ..engine.files import discover
from ..engine.versions import installed_flydsl_version
from ..engine.writes import write_atomic
from ..verify.capture import HookError
from ..verify.config import ConfigError as VerifyConfigError
from ..verify.config import VerifyConfig, load_config
from ..verify.scratch import Scratch
from ..verify.signals import signals_held
from ..verify.toolchain import ToolchainError, find_linker
from . import migrate_report
from .migrate import CompileProver, MigrateError, ModuleOutcome, ModulePlan, commit, migrate_module, plan_modules


@dataclass
class MigrateOptions:
    paths: list[str]
    repo: Path
    archs: list[str] | None = None  # None: the verify config's
    reports: list[Path] = field(default_factory=list)  # `.json`: JSON, anything else: Markdown
    unproven: bool = False
    dry_run: bool = False
    jobs: int = 1


def run(options: MigrateOptions, settings: Settings) -> int:
    """The whole command; raises MigrateError, with a one-line reason, for exit 2."""
    try:
        return _run(options, settings)
    except (VerifyConfigError, ToolchainError, HookError) as exc:
        raise MigrateError(str(exc)) from None


def _run(options: MigrateOptions, settings: Settings) -> int:
    for path in options.reports:  # found out before any work, not after the files are written
        if path.is_dir():
            raise MigrateError(f"{path}: is a folder; --report wants a file")
    repo = options.repo.resolve()
    config = load_config(repo)
    archs = options.archs or config.archs
    note = _target_note(settings)
    if note:
        print(f"flydsl-lint migrate: note: {note}", file=sys.stderr)
    files, missing = discover(options.paths, settings)
    modules, errors = plan_modules(files, repo, settings, config, archs)
    errors = [f"{bad.path}: {bad.reason}" for bad in missing] + errors
    if errors:
        raise MigrateError("; ".join(errors))
    if options.dry_run:
        print(migrate_report.render_plan(modules, archs))
        return 0
    if any(m.covered for m in modules) and importlib.util.find_spec("flydsl") is None:
        raise MigrateError("flydsl is not installed (run scripts/install_compile_toolchain.sh)")
    scratch = Scratch()
    try:
        try:
            outcomes = _migrate_all(modules, settings, options, scratch, config, archs)
        finally:
            scratch.close()
    except KeyboardInterrupt:
        if scratch.leftovers:
            raise KeyboardInterrupt(f"no file was changed; could not remove {', '.join(scratch.leftovers)}") from None
        raise
    if scratch.leftovers:
        raise MigrateError(f"could not remove {', '.join(scratch.leftovers)}; no file was changed")
    report = migrate_report.MigrateReport(outcomes, archs)
    written = None
    try:
        with signals_held():  # an interrupt during the commit lands after it, so say which way it went
            written = commit(outcomes)
        _write_reports(report, options.reports)
    except KeyboardInterrupt:
        if written is None:
            raise
        raise KeyboardInterrupt(f"the {len(written)} migrated files are written; the reports may not be") from None
    print(migrate_report.render_terminal(report))
    return report.exit_code


def _target_note(settings: Settings) -> str | None:
    """Why fixes the installed flydsl could prove are not candidates: the target predates it."""
    installed = installed_flydsl_version()
    target = settings.target_version
    if installed is None or target is None or target >= installed:
        return None
    return (f"fixes are offered for the target FlyDSL {target} ({settings.target_version_source}), older than "
            f"the installed {installed} that compiles the proofs: fixes needing a newer release are withheld "
            f"(--target-version {installed} offers them)")


def _write_reports(report: migrate_report.MigrateReport, paths: list[Path]) -> None:
    for path in paths:
        text = migrate_report.render_json(report) if path.suffix == ".json" else migrate_report.render_markdown(report)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text.encode("utf-8"))
        except OSError as exc:
            raise MigrateError(f"{path}: cannot write the report: {exc.strerror or exc} "
                               "(the migrated files are written)") from None


def _migrate_all(modules: list[ModulePlan], settings: Settings, options: MigrateOptions, scratch,
                 config: VerifyConfig, archs: list[str]) -> list[ModuleOutcome]:
    """Each module in turn; the scratch tree (made only when a module has tests) keeps what was kept."""
    prover = None
    outcomes = []
    for module in modules:
        if module.covered and prover is None:
            scratch.open(options.repo.resolve())
            prover = CompileProver(options.repo.resolve(), scratch.path, config=config, archs=archs,
                                   linker=find_linker(scratch.path / "toolchain"), jobs=options.jobs)
        outcome = migrate_module(module, settings, prover.prove if prover else None, options.unproven)
        if prover is not None and outcome.new_text is not None:
            prover.settle(module, outcome.new_text)
        outcomes.append(outcome)
    return outcomes
