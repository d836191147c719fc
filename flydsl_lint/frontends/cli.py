"""`flydsl-lint`: check, fix and explain rules from the command line."""

from __future__ import annotations

import argparse
import os
import stat
import sys
from pathlib import Path

from ..engine.arguments import named_path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
CACHE_DIR_VARIABLE = "FLYDSL_LINT_CACHE_DIR"  # as RUFF_CACHE_DIR
OUTPUT_FORMAT_VARIABLE = "FLYDSL_LINT_OUTPUT_FORMAT"  # as RUFF_OUTPUT_FORMAT
HUMAN_FORMATS = ("text", "concise", "full", "grouped")  # the others are parsed by tools


def _patterns(text: str) -> tuple[str, ...]:
    return tuple(pattern.strip() for pattern in text.split(",") if pattern.strip())


def _codes(text: str) -> tuple[str, ...]:
    from ..engine.config import SelectorError, selectors

    codes = tuple(code.upper() for code in _patterns(text))
    if not codes:  # `--select "$CODES"` with the variable unset must not turn every rule off
        raise argparse.ArgumentTypeError(f"{text!r} names no code (give codes or prefixes such as FLY3, or ALL)")
    try:
        return selectors(codes, "the command line")
    except SelectorError as exc:  # argparse names the option: `argument --select: ...`, exit 2
        raise argparse.ArgumentTypeError(f"{exc.code!r} {exc.why}") from None


def _jobs(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes (1 or more)")
    return int(text)


def _add_cache_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", type=named_path, default=os.environ.get(CACHE_DIR_VARIABLE) or None,
                        help=f"the result cache folder, relative to the current folder (env: {CACHE_DIR_VARIABLE}); "
                             "overrides cache-dir")


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__
    from .output import FORMATS

    parser = argparse.ArgumentParser(prog="flydsl-lint", description="Lint and fix FlyDSL kernel code.")
    parser.add_argument("--version", action="version", version=f"flydsl-lint {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check files or folders (default: .)")
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .); `-` reads stdin")
    check.add_argument("--select", type=_codes, help="codes or prefixes to enable (replaces the configured set)")
    check.add_argument("--extend-select", type=_codes, help="codes or prefixes to enable in addition")
    check.add_argument("--ignore", type=_codes, help="codes or prefixes to disable")
    check.add_argument("--output-format", choices=sorted(FORMATS),
                       help=f"the report's format (default: ${OUTPUT_FORMAT_VARIABLE}, else output-format, else text)")
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument("--unsafe-fixes", action="store_true", help="also apply (or show) unsafe fixes")
    check.add_argument("--fix-only", action="store_true",
                       help="apply fixes, report only how many; leftover diagnostics exit 0 (implies --fix)")
    check.add_argument("--exit-non-zero-on-fix", action="store_true",
                       help="exit 1 when a fix was applied, even if no diagnostic remains")
    check.add_argument("--fixable", type=_codes, help="codes or prefixes whose fixes are offered (replaces fixable)")
    check.add_argument("--extend-fixable", type=_codes, help="codes or prefixes to make fixable in addition")
    check.add_argument("--unfixable", type=_codes, help="codes or prefixes reported without a fix")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    check.add_argument("--show-fixes", action="store_true", help="print fixes as a diff, display-only suggestions too")
    check.add_argument("--statistics", action="store_true", help="count diagnostics per code")
    check.add_argument("-o", "--output-file", type=named_path, metavar="PATH",
                       help="write the report to PATH instead of standard output (atomically)")
    check.add_argument("--show-files", action="store_true", help="list the files that would be checked, then exit")
    check.add_argument("--show-settings", action="store_true",
                       help="print the settings the first PATH is checked with (and which rules run), then exit")
    check.add_argument("--show-types", metavar="FILE:LINE",
                       help="print the value type the model infers for each expression on that line (and why), then exit")
    check.add_argument("-e", "--exit-zero", action="store_true", help="exit 0 even when diagnostics remain")
    check.add_argument("--config", type=named_path, help="a pyproject.toml (or bare TOML table) to use")
    check.add_argument("--isolated", action="store_true", help="ignore every configuration file (defaults and flags only)")
    check.add_argument("--ignore-noqa", action="store_true",
                       help="report what `# noqa` comments and file exemptions would suppress")
    check.add_argument("--target-version", help="FlyDSL release the code targets, e.g. 0.5.0")
    check.add_argument("--target-arch", type=_patterns, metavar="ARCHES",
                       help="comma-separated gfx targets the code runs on, e.g. gfx942,gfx950 (overrides target-arch); "
                            "s_waitcnt fixes are safe only with one")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="the name of the source read from stdin, for its settings and the output (implies `-`)")
    check.add_argument("--exclude", type=_patterns, metavar="PATTERNS",
                       help="comma-separated patterns to skip (replaces exclude, defaults included)")
    check.add_argument("--extend-exclude", type=_patterns, metavar="PATTERNS",
                       help="comma-separated patterns to skip in addition")
    check.add_argument("--force-exclude", action="store_true",
                       help="apply exclude/extend-exclude to files named on the command line too (for pre-commit)")
    check.add_argument("-n", "--no-cache", action="store_true", help="neither read nor write the result cache (cache-dir)")
    _add_cache_dir(check)
    check.add_argument("-q", "--quiet", action="store_true", help="print diagnostics, no summary or status lines")
    check.add_argument("-s", "--silent", action="store_true",
                       help="print no report (errors still go to stderr); the exit status tells")
    check.add_argument("-j", "--jobs", type=_jobs, metavar="N",
                       help="processes to check with (default: one per CPU when the files are many; 1: none)")
    check.add_argument("--diff-base", metavar="REF", help="report only diagnostics on lines added or changed since REF (git)")
    check.add_argument("--add-noqa", action="store_true", help="write `# noqa: CODE -- reason` comments for every finding")
    check.add_argument("--noqa-reason", metavar="TEXT", help="the reason --add-noqa writes (default: \"TODO: migrate\")")

    rule = commands.add_parser("rule", help="explain a rule by code or name (or, with --all, every rule)")
    rule.add_argument("code", nargs="?", metavar="CODE_OR_NAME", help="e.g. FLY301 or typed-arith-spelling")
    rule.add_argument("--all", action="store_true", help="every rule, in code order")
    rule.add_argument("--output-format", choices=["text", "json"], default="text")
    rules = commands.add_parser("rules", help="list every rule")
    rules.add_argument("--output-format", choices=["text", "json"], default="text")
    commands.add_parser(
        "server", help="run the language server over stdio (needs the `lsp` extra)",
        description="A Language Server Protocol server over stdin/stdout, for editors: it publishes FLY "
                    "diagnostics on open, change and save, offers a quick fix per fixable diagnostic (unsafe ones "
                    "say so) and a `source.fixAll.flydsl-lint` code action applying safe fixes only. Settings come "
                    "from each file's pyproject.toml, as for `check`. Your editor starts it; run by hand it waits "
                    "for a client on stdin. Install with: pip install 'flydsl-lint[lsp]'. "
                    "See docs/integrations/editors.md.")
    migrate = commands.add_parser(
        "migrate", help="apply fixes where compile-mode parity proves them (see docs/migrate.md)",
        description="For each kernel module: apply its fixes on a scratch copy, compile the tests that import it "
                    "before and after (flydsl-lint-verify's compile mode), keep the change only where every "
                    "specialization is identical (LDS bytes may shrink), retrying family by family. "
                    "Nothing is written until every module is decided; Ctrl-C leaves every file as it was.")
    migrate.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: .)")
    migrate.add_argument("--select", type=_codes, help="codes or prefixes whose fixes are candidates")
    migrate.add_argument("--extend-select", type=_codes, help="codes or prefixes to add to the candidates")
    migrate.add_argument("--ignore", type=_codes, help="codes or prefixes whose fixes are never tried")
    migrate.add_argument("--arch", type=_patterns, metavar="ARCHES",
                         help="comma-separated compile targets (default: [tool.flydsl-lint.verify] archs, else gfx942)")
    migrate.add_argument("--report", type=named_path, action="append", default=[], metavar="FILE",
                         help="write the report to FILE: JSON if it ends in .json, else Markdown (repeatable)")
    migrate.add_argument("--unproven", action="store_true",
                         help="also apply the fixes of modules no test or probe can prove (reported as such)")
    migrate.add_argument("--dry-run", action="store_true", help="print the plan; compile and write nothing")
    migrate.add_argument("-j", "--jobs", type=_jobs, default=os.cpu_count() or 1, metavar="N",
                         help="parallel capture processes per verify run (default: CPU count)")
    migrate.add_argument("--repo", type=named_path, default=Path.cwd(), help="the repository root (default: .)")
    migrate.add_argument("--config", type=named_path, help="a pyproject.toml (or bare TOML table) to use")
    migrate.add_argument("--target-version", help="FlyDSL release the code targets, e.g. 0.5.0")
    clean = commands.add_parser("clean", help="remove result caches and interrupted fixes' temporaries in folders (default: .) and below")
    clean.add_argument("paths", nargs="*", metavar="PATH", help="folders to clean (default: .)")
    clean.add_argument("--config", type=named_path, help="a pyproject.toml (or bare TOML table) naming cache-dir")
    _add_cache_dir(clean)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = _parse(parser, argv)
    try:
        if args.command == "check":
            return _check(args)
        if args.command == "rule":
            return _rule(args)
        if args.command == "rules":
            return _rules(args.output_format)
        if args.command == "clean":
            return _clean(args)
        if args.command == "migrate":
            return _migrate(args)
        if args.command == "server":
            from .lsp import main as serve

            return serve()
        parser.print_help()
        return EXIT_ERROR
    except KeyboardInterrupt:
        from ..engine.interrupts import forget_interrupt_escaped_from_exec

        forget_interrupt_escaped_from_exec()
        print("flydsl-lint: interrupted; files already written are complete, the rest untouched", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN


def _parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Parse, taking paths after options too (`check a --select FLY3 b`), as ruff
    does. argparse's own parse_intermixed_args refuses subcommands, so what
    the first pass leaves over is taken as more paths of the commands that have
    them, and refused otherwise (an unknown option stays an error)."""
    args, leftover = parser.parse_known_args(argv)
    if leftover:
        options = [item for item in leftover if item.startswith("-") and item != "-"]
        if options or not hasattr(args, "paths"):
            parser.error(f"unrecognized arguments: {' '.join(options or leftover)}")
        args.paths = args.paths + leftover
    return args


def entry() -> None:
    """The console script: `main`, then exit without the interpreter's teardown.

    Freeing every module and object at exit costs ~13 ms, a fiftieth of a run
    over FlyDSL's kernels (bench/), and nothing needs it: files are written
    atomically and closed before `main` returns, and the streams are flushed here.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # a reader that went away, or a closed stream
            pass
    os._exit(code)


def _cache_dir(args: argparse.Namespace) -> str | None:
    return str(args.cache_dir.resolve()) if args.cache_dir else None  # the command line's folder, not the config's


def _report_missing(path: object, reason: str = "no such file or directory") -> None:
    print(f"flydsl-lint: error: {path}: {reason}", file=sys.stderr)


def _clean(args: argparse.Namespace) -> int:
    """Remove the configured cache and every cache folder below the paths (only
    folders carrying this tool's CACHEDIR.TAG), and the temporaries of writes
    that an interrupted run left there (see `leftover_temporaries`)."""
    import shutil

    from ..run.cache import cache_root, find_caches
    from ..engine.config import DEFAULT_CACHE_DIR, ConfigError, load_settings
    from ..engine.files import EMPTY_PATH, BadPath
    from ..engine.writes import leftover_temporaries

    status, removed = EXIT_CLEAN, 0
    for raw in args.paths or ["."]:
        start = Path(raw)
        missing = EMPTY_PATH if not raw else None if start.exists() else BadPath(raw)
        if missing:
            _report_missing(*missing)
            status = EXIT_ERROR
            continue
        try:
            settings = load_settings(args.config, start, cache_dir=_cache_dir(args))
        except ConfigError as exc:
            print(f"flydsl-lint: error: {exc}", file=sys.stderr)
            status = EXIT_ERROR
            continue
        configured = cache_root(settings)
        caches, others = find_caches(start, configured, {configured.name, DEFAULT_CACHE_DIR}, settings.is_excluded)
        for folder in others:
            print(f"flydsl-lint: warning: {folder}: not a flydsl-lint cache (no CACHEDIR.TAG of ours); left alone",
                  file=sys.stderr)
        leftovers = leftover_temporaries(start.resolve(), settings.is_excluded) if start.is_dir() else []
        for path, remove, what in [(folder, shutil.rmtree, "cache") for folder in caches] + [
                (leftover, Path.unlink, "leftover temporary file") for leftover in leftovers]:
            try:
                remove(path)
            except OSError as exc:
                print(f"flydsl-lint: error: {path}: cannot remove: {exc.strerror or exc}", file=sys.stderr)
                status = EXIT_ERROR
                continue
            print(f"Removed {what} {path}")
            removed += 1
    if removed == 0 and status == EXIT_CLEAN:
        print("No cache found.")
    return status


def _migrate(args: argparse.Namespace) -> int:
    """`migrate`: exit 0 all fixes kept, 1 some reverted or not proven, 2 setup error, 130 interrupted."""
    import signal

    # CI cancels jobs with SIGTERM: handled like Ctrl-C, so the scratch copy is removed.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        return _run_migrate(args)
    except KeyboardInterrupt as exc:
        from ..engine.interrupts import forget_interrupt_escaped_from_exec

        forget_interrupt_escaped_from_exec()
        detail = str(exc) or "no file was changed and the scratch copy is removed"
        print(f"flydsl-lint migrate: interrupted; {detail}", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run_migrate(args: argparse.Namespace) -> int:
    from ..engine.config import ConfigError, checked_arches, load_settings
    from .migrate import MigrateError
    from .migrate_command import MigrateOptions, run

    overrides: dict = {"select": args.select, "extend_select": args.extend_select}
    try:
        overrides.update(_target_version_overrides(args.target_version))
        archs = list(checked_arches(args.arch, "--arch")) if args.arch is not None else None
        start = Path(args.paths[0]) if args.paths else Path.cwd()
        settings = load_settings(args.config, start if start.exists() else Path.cwd(), **overrides)
        settings = settings._replace(ignore=settings.ignore + (args.ignore or ()))
        options = MigrateOptions(args.paths or ["."], args.repo, archs, args.report, args.unproven, args.dry_run,
                                 args.jobs)
        return run(options, settings)
    except (ConfigError, MigrateError) as exc:
        print(f"flydsl-lint migrate: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _target_version_overrides(target_version: str | None) -> dict:
    """The settings `--target-version` sets (none without it); a bad version is a ConfigError."""
    from ..engine.config import ConfigError
    from ..engine.versions import Version

    if target_version is None:
        return {}
    try:
        return {"target_version": Version.parse(target_version), "target_version_source": "command line"}
    except ValueError:
        raise ConfigError(f"--target-version: {target_version!r} is not a version like 0.5.0") from None


def _check(args: argparse.Namespace) -> int:
    from ..engine.config import ConfigError, checked_arches, load_settings
    from ..run.runner import Mode, run

    overrides: dict = {"select": args.select, "extend_select": args.extend_select, "cache_dir": _cache_dir(args),
                       "fixable": args.fixable, "exclude": args.exclude}
    if args.cache_dir:
        overrides["cache_dir_source"] = "command line"  # the user's own choice: it may point anywhere
    if args.force_exclude:
        overrides["force_exclude"] = True
    if args.ignore_noqa:
        overrides["ignore_noqa"] = True
    try:
        if args.isolated and args.config:
            raise ConfigError("--config and --isolated exclude each other")
        overrides.update(_target_version_overrides(args.target_version))
        if args.target_arch is not None:
            overrides["target_arch"] = checked_arches(args.target_arch, "--target-arch")
        stdin = args.paths == ["-"] or (args.stdin_filename is not None and not args.paths)
        if not stdin and ("-" in args.paths or args.stdin_filename is not None):
            raise ConfigError("`-` (stdin) and --stdin-filename take no other paths")
        shown = _file_line(args.show_types) if args.show_types is not None else None
        start = Path(args.stdin_filename or ".") if stdin else Path(args.paths[0]) if args.paths else Path.cwd()
        if shown is not None:
            start = shown[0]
        if not start.exists() and start.parent.exists():
            start = start.parent  # a new file's name: its folder's settings
        settings = load_settings(args.config, start if start.exists() else Path.cwd(), args.isolated, **overrides)
        args.output_format = _output_format(args.output_format, settings)
    except ConfigError as exc:
        print(f"flydsl-lint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    # These add to what the configuration lists, as --ignore adds to `ignore`.
    settings = settings._replace(ignore=settings.ignore + (args.ignore or ()),
                                 extend_fixable=settings.extend_fixable + (args.extend_fixable or ()),
                                 unfixable=settings.unfixable + (args.unfixable or ()),
                                 extend_exclude=settings.extend_exclude + (args.extend_exclude or ()))
    if args.output_file is not None and args.output_file.is_dir():  # before any fix is written
        print(f"flydsl-lint: error: {args.output_file}: is a folder; --output-file wants a file", file=sys.stderr)
        return EXIT_ERROR
    mode = Mode(fix=(args.fix or args.fix_only) and not (args.diff or args.show_fixes), unsafe_fixes=args.unsafe_fixes,
                diff=args.diff or args.show_fixes)
    settings = settings._replace(named_tuned_kernels=_named_tuned_kernels(args, stdin, settings))
    args.target_arch_known = bool(settings.target_arch)
    if stdin:
        if args.diff_base or args.add_noqa:
            print("flydsl-lint: error: --diff-base/--add-noqa need files, not stdin", file=sys.stderr)
            return EXIT_ERROR
        return _check_stdin(args, settings, mode)
    paths, added = args.paths or ["."], None
    if shown is not None:
        return _show_types(*shown, settings)
    if args.show_files:
        return _show_files(paths, settings)
    if args.show_settings:
        return _show_settings(Path(paths[0]), settings)
    if args.diff_base or args.add_noqa:
        if mode.fix or mode.diff:
            print("flydsl-lint: error: --diff-base/--add-noqa do not combine with --fix, --diff or --show-fixes", file=sys.stderr)
            return EXIT_ERROR
    if args.diff_base:
        from .diff_base import DiffBaseError, added_lines, filter_result, restrict

        try:
            added = added_lines(args.diff_base, Path(args.paths[0]) if args.paths else Path.cwd(), settings.max_file_size)
        except DiffBaseError as exc:
            print(f"flydsl-lint: error: --diff-base {args.diff_base}: {exc}", file=sys.stderr)
            return EXIT_ERROR
        paths = restrict(paths, settings, added)
    result = run(paths, settings, mode, use_cache=not args.no_cache and _cache_usable(settings), jobs=args.jobs)
    if added is not None:
        result = filter_result(result, added)
    if args.add_noqa:
        from .add_noqa import DEFAULT_REASON, add_noqa

        outcome = add_noqa(result.diagnostics, args.noqa_reason or DEFAULT_REASON)
        for error in result.errors + outcome.errors:
            print(f"error: {error}", file=sys.stderr)
        count = outcome.added
        if not (args.quiet or args.silent):
            print(f"Added {count} noqa directive{'s' * (count != 1)} in {len(outcome.files)} file{'s' * (len(outcome.files) != 1)}.", file=sys.stderr)
        return EXIT_ERROR if result.errors or outcome.errors else EXIT_CLEAN
    return _report_to_output(result, args, mode, sys.stdout)


def _named_tuned_kernels(args: argparse.Namespace, stdin: bool, settings) -> tuple[str, ...]:
    """The tuned kernels the user named, whose fixes may then apply. Under --force-exclude
    (pre-commit names every staged file) a named file counts as found, not chosen."""
    if args.force_exclude:
        return ()
    named = [args.stdin_filename] if stdin and args.stdin_filename else [] if stdin else args.paths
    return tuple(sorted(os.path.realpath(path) for path in named
                        if settings.is_tuned_kernel(path) and (stdin or os.path.isfile(path))))


def _cache_usable(settings) -> bool:
    """Whether the configured cache folder may be used; if not, a one-line warning says why."""
    from ..run.cache import unusable_reason
    from ..engine.config import escape_controls

    reason = unusable_reason(settings)
    if reason is not None:
        print(f"flydsl-lint: warning: {escape_controls(reason)}; running without the cache", file=sys.stderr)
    return reason is None


def _output_format(given: str | None, settings) -> str:
    """--output-format, else the environment variable, else the config's `output-format`, else text."""
    from ..engine.config import ConfigError
    from .output import FORMATS

    if given:
        return given
    for chosen, where in ((os.environ.get(OUTPUT_FORMAT_VARIABLE), f"${OUTPUT_FORMAT_VARIABLE}"),
                          (settings.output_format, f"{settings.config_file}: `output-format`")):
        if chosen:
            if chosen not in FORMATS:
                raise ConfigError(f"{where} = {chosen!r} is not one of {', '.join(sorted(FORMATS))}")
            return chosen
    return "text"


def _show_files(paths: list[str], settings) -> int:
    """The files a check of `paths` would read, one absolute path a line (as `ruff check --show-files`)."""
    from ..engine.files import discover

    files, missing = discover(paths, settings)
    for path in sorted(str(path.resolve()) for path in files):
        print(path)
    for entry in missing:
        _report_missing(entry.path, entry.reason)
    return EXIT_ERROR if missing else EXIT_CLEAN


def _show_settings(path: Path, settings) -> int:
    """The resolved settings, one `key = value` line each (values as JSON), as `ruff check --show-settings`."""
    import json

    from ..rules import all_rules
    from ..engine.versions import Version

    if not path.exists():
        _report_missing(path)
        return EXIT_ERROR
    print(f"# settings for {path.resolve()}")
    for name, value in zip(settings._fields, settings):
        if name == "per_file_ignores":
            value = dict(value)  # the TOML table it was read from
        elif isinstance(value, Version):
            value = str(value)  # as written in the configuration, not as its parts
        print(f"{name.replace('_', '-')} = {json.dumps(value, default=str)}")
    enabled = [code for code in all_rules() if settings.is_selected(code)]
    print(f"enabled-rules = {json.dumps(enabled)}")
    if path.is_file():
        print(f"excluded = {json.dumps(settings.is_excluded(path))}")
        print(f"ignored-here = {json.dumps(settings.ignored_for(str(path)))}")
        print(f"tuned-kernel = {json.dumps(settings.is_tuned_kernel(str(path)))}")
    module, roots, unresolved = _module_resolution(path, settings)
    if module is not None:
        print(f"module = {json.dumps(module)}")
    print(f"source-roots = {json.dumps([str(root) for root in roots])}")
    print(f"unresolved-project-modules = {json.dumps(unresolved)}")
    return EXIT_CLEAN


def _file_line(spelled: str) -> tuple[Path, int]:
    """`kernel.py:42` for --show-types (the last `:` splits: a path may hold one)."""
    from ..engine.config import ConfigError

    file, _, line = spelled.rpartition(":")
    if not file or not line.isdigit() or int(line) < 1:
        raise ConfigError(f"--show-types: {spelled!r} is not FILE:LINE (a line number from 1)")
    return Path(file), int(line)


def _show_types(path: Path, line: int, settings) -> int:
    """For --show-types: each expression on `line` of `path`, with the type the
    model infers for it and why, one `line:column  source  type  (why)` line each."""
    import ast

    from ..engine.model import SemanticModel
    from ..engine.source import SourceError, SourceFile, read_data
    from ..run.checker import Checker

    try:
        source = SourceFile.from_bytes(str(path), read_data(path, settings.max_file_size))
        tree = source.tree
    except SourceError as exc:
        print(f"flydsl-lint: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        _report_missing(path, exc.strerror or "cannot be read")
        return EXIT_ERROR
    count = len(source.text.splitlines())
    if line > count:
        _report_missing(path, f"has no line {line} (it has {count})")
        return EXIT_ERROR
    project, module, is_package = Checker(settings).project_for(str(path))
    model = SemanticModel(tree, module, is_package, project, settings.target_version)
    expressions = [node for node in ast.walk(tree) if isinstance(node, ast.expr) and node.lineno == line
                   and not isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del))]
    expressions.sort(key=lambda node: (node.col_offset, -(node.end_col_offset or 0)))
    release = model.type_table.release
    print(f"# value types at {path}:{line} (FlyDSL {release}, {settings.target_version_source})")
    for node in expressions:
        found, why = model.explain_type(node)
        text = ast.get_source_segment(source.text, node) or type(node).__name__
        print(f"{node.lineno}:{node.col_offset + 1}  {text}  {found}  ({why})")
    return EXIT_CLEAN


def _module_resolution(path: Path, settings) -> tuple[str | None, list[Path], list[str]]:
    """For --show-settings: the module name of `path` (a file), the source roots
    its project modules are looked up in, and the project modules that the
    check of `path` (or of every file below a folder) could not find, each as
    `module (imported by FILE)`."""
    from ..run.checker import Checker
    from ..engine.files import discover
    from ..engine.project import unresolved_project_modules
    from ..engine.source import SourceError, SourceFile, read_data

    checker = Checker(settings)
    files = [path] if path.is_file() else discover([str(path)], settings)[0]
    module, roots, unresolved = None, [], {}
    for file in files:
        index, name, _ = checker.project_for(str(file))
        if file == path:
            module, roots = name, index.roots
        try:
            checker.check(SourceFile.from_bytes(str(file), read_data(file, settings.max_file_size)))
        except SourceError:
            continue  # a check reports it; the settings do not depend on it
        for missing in unresolved_project_modules(index, file, name):
            unresolved.setdefault(missing, str(file))
    if module is None and files:
        roots = checker.project_for(str(files[0]))[0].roots
    return module, roots, [f"{missing} (imported by {file})" for missing, file in sorted(unresolved.items())]


def _report_to_output(result, args: argparse.Namespace, mode, stream) -> int:
    """`_report` to `stream`, or with --output-file to that file, written whole or not at all."""
    if args.output_file is None:
        return _report(result, args, mode, stream)
    import io

    buffer = io.StringIO()
    status = _report(result, args, mode, buffer)
    try:
        args.output_file.parent.mkdir(parents=True, exist_ok=True)
        _write_report(args.output_file, buffer.getvalue())
    except OSError as exc:
        print(f"flydsl-lint: error: {args.output_file}: cannot write the report: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    return status


def _write_report(path: Path, report: str) -> None:
    """Replace a regular file (or create one) with the report, whole or not at all;
    write into anything else, never replacing it: this process's own stdout or
    stderr (`-o /dev/stdout` after `>> log` keeps the log), a FIFO, a terminal, /dev/null."""
    from ..engine.writes import write_atomic

    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        info = None
    own = _own_stream(info) if info is not None else None
    if own is not None:
        own.write(report)
        own.flush()
    elif info is not None and not stat.S_ISREG(info.st_mode):
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(report)
    else:
        write_atomic(path, report.encode("utf-8"))


def _own_stream(info: os.stat_result):
    """sys.stdout or sys.stderr if `info` is the file it writes to, else None."""
    for stream in (sys.stdout, sys.stderr):
        try:
            mine = os.fstat(stream.fileno())
        except (AttributeError, OSError, ValueError):  # closed, or not backed by a file
            continue
        if (mine.st_dev, mine.st_ino) == (info.st_dev, info.st_ino):
            return stream
    return None


def _report(result, args: argparse.Namespace, mode, stream) -> int:
    """Print a run's errors, diffs and diagnostics (the report to `stream`); its exit status."""
    from ..engine.config import escape_controls
    from .output import write, write_statistics

    options = {"unsafe_fixes": args.unsafe_fixes, "quiet": args.quiet, "target_arch": args.target_arch_known}
    fixed = sum(result.fixed.values())
    for error in result.errors:
        print(f"error: {escape_controls(error)}", file=sys.stderr)
    if args.silent:
        pass  # the exit status (and any error above) is the whole report
    elif mode.diff:
        for file_result in result.files:
            sys.stdout.write(file_result.diff)
        if not args.quiet:
            print(f"\nWould fix {fixed} error{'s' * (fixed != 1)}.", file=sys.stderr)
        if args.show_fixes:
            # `full` previews every remaining fix, display-only suggestions included; nothing
            # was written, so the summary counts findings, not fixes.
            write(_unfixed(result), "full" if args.output_format == "text" else args.output_format, options, stream)
    elif args.fix_only:
        count = f"Fixed {fixed} error{'s' * (fixed != 1)}.\n" if fixed else "No errors fixed.\n"
        if args.output_format not in HUMAN_FORMATS:  # a machine format gets its empty report, parsable
            from ..run.runner import RunResult

            write(RunResult(), args.output_format, options, stream)
            stream = sys.stderr
        if not args.quiet:
            stream.write(count)
    elif args.statistics:
        write_statistics(result, stream, options, args.output_format)
    else:
        write(result, args.output_format, options, stream)

    if result.errors:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    if mode.diff:
        return EXIT_FINDINGS if fixed else EXIT_CLEAN
    fixed_and_told = args.exit_non_zero_on_fix and fixed > 0
    if args.fix_only:  # leftover diagnostics are not this mode's concern
        return EXIT_FINDINGS if fixed_and_told else EXIT_CLEAN
    return EXIT_FINDINGS if result.diagnostics or fixed_and_told else EXIT_CLEAN


def _unfixed(result):
    """`result` as a check without fixes reports it: the fix counts of a diff
    run are what --fix would do, not what was done."""
    from ..run.runner import FileResult, RunResult

    return RunResult([FileResult(f.path, f.diagnostics, f.error) for f in result.files], result.target)


def _check_stdin(args: argparse.Namespace, settings, mode) -> int:
    """Check source piped in (editors, formatters' pipelines). With --fix the
    fixed source goes to stdout and the report to stderr, as in ruff; source that
    cannot be checked or is excluded comes back unchanged."""
    from ..run.runner import FileResult, RunResult, check_data, target_of
    from ..engine.source import too_large

    name = args.stdin_filename or "-"
    try:
        data = _read_stdin(settings.max_file_size)
    except OSError as exc:
        print(f"flydsl-lint: error: cannot read stdin: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_ERROR
    oversized = len(data) > settings.max_file_size
    if oversized:
        file_result, fixed = FileResult(name, error=f"{name}: {too_large(None, settings.max_file_size)}"), data
    elif args.stdin_filename and settings.force_exclude and settings.is_excluded(Path(name)):
        file_result, fixed = FileResult(name), data
    else:
        file_result, fixed = check_data(name, data, settings, mode)
    result = RunResult([file_result], target_of(settings))
    if mode.fix:  # the fixed source alone on stdout; the report beside it on stderr
        sys.stdout.buffer.write(fixed)
        if oversized:  # handed back whole, unread, as any source that cannot be checked
            import shutil

            shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)
        sys.stdout.flush()
    return _report_to_output(result, args, mode, sys.stderr if mode.fix else sys.stdout)


def _read_stdin(max_size: int) -> bytes:
    """At most `max_size` + 1 bytes of stdin: one more than allowed tells it is too large."""
    if sys.stdin is None:  # started with it closed (`<&-`)
        raise OSError("it is closed")
    try:
        return sys.stdin.buffer.read(max_size + 1)
    except ValueError:  # closed since
        raise OSError("it is closed") from None


def _print_json(value: object) -> int:
    import json

    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return EXIT_CLEAN


def _fix_availability(rule, meta) -> str:
    """ruff's wording for whether a rule's diagnostics carry a fix."""
    if meta.fix is None:
        return "Fix is not available."
    # Withheld below fix_since, or a documented case gets none: not every diagnostic has one.
    partial = meta.fix_since or any(case.fixed is None and case.suggested is None for case in rule.invalid)
    return "Fix is sometimes available." if partial else "Fix is always available."


def _rule_json(rule) -> dict:
    """A rule as `ruff rule --output-format json` describes one, plus fix_applicability and fix_since."""
    from ..docs import render_rule
    from ..engine.metadata import load_metadata

    meta = load_metadata()[rule.code]
    return {"code": meta.code, "name": meta.name, "linter": "flydsl-lint", "summary": meta.summary,
            "message_formats": [meta.message], "fix": _fix_availability(rule, meta),
            "fix_applicability": meta.fix.value if meta.fix else None, "fix_since": meta.fix_since,
            "explanation": render_rule(rule), "section": meta.section}


def _all_rules_json() -> int:
    """`rule --all` and `rules` in JSON: one list, every rule in code order."""
    from ..rules import all_rules

    return _print_json([_rule_json(rule) for rule in all_rules().values()])


def _rule(args: argparse.Namespace) -> int:
    from ..docs import render_rule
    from ..rules import all_rules

    if args.all == (args.code is not None):
        print("flydsl-lint: error: `rule` takes either a CODE or --all", file=sys.stderr)
        return EXIT_ERROR
    rules = all_rules()
    if args.all:
        if args.output_format == "json":
            return _all_rules_json()
        sys.stdout.write("\n".join(render_rule(rule) for rule in rules.values()))  # pages end in a newline
        return EXIT_CLEAN
    code = _rule_code(args.code, rules)
    if code is None:
        print(f"flydsl-lint: error: unknown rule {args.code!r} (see `flydsl-lint rules`)", file=sys.stderr)
        return EXIT_ERROR
    if args.output_format == "json":
        return _print_json(_rule_json(rules[code]))
    sys.stdout.write(render_rule(rules[code]))
    return EXIT_CLEAN


def _rule_code(given: str, rules: dict) -> str | None:
    """The code `rule` was asked about: a code, a renamed code (which says what it
    is now, on stderr) or a rule's name, as ruff takes both; None if none."""
    from ..engine.metadata import load_metadata, load_redirects

    code = given.upper()
    redirected = load_redirects().get(code)
    if redirected is not None:
        print(f"flydsl-lint: note: {code} is now {redirected}", file=sys.stderr)
        code = redirected
    if code in rules:
        return code
    by_name = {meta.name: meta.code for meta in load_metadata().values()}
    return by_name.get(given.strip().lower().replace("_", "-"))


LEGEND = ("Fix: [*] safe (applied by --fix), [~] unsafe (needs --unsafe-fixes), "
          "[.] display-only (shown by --diff/--show-fixes), blank: none.")


def _rules(output_format: str) -> int:
    from ..rules import all_rules
    from ..engine.metadata import load_metadata

    if output_format == "json":
        return _all_rules_json()
    metadata = load_metadata()
    markers = {None: "   ", "safe": "[*]", "unsafe": "[~]", "display-only": "[.]"}
    print(LEGEND)
    for code in all_rules():
        meta = metadata[code]
        fix = markers[meta.fix.value if meta.fix else None]
        off = "" if meta.default else " (off by default)"
        print(f"{code}  {fix} §{meta.section:<3} {meta.name:<36} {meta.summary}{off}")
    return EXIT_CLEAN


if __name__ == "__main__":
    entry()
