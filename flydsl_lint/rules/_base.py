"""The base class every rule derives from, its test cases, and registration."""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import ClassVar, NamedTuple

from ..engine.context import Context
from ..engine.diagnostics import Applicability, Diagnostic, Edit, Fix, Position
from ..engine.metadata import load_metadata, message_fields


# A fix's safety rank: a rule may lower, never raise, its declared applicability.
_SAFETY_RANK = {Applicability.SAFE: 0, Applicability.UNSAFE: 1, Applicability.DISPLAY: 2}
_NO_SETTINGS: Mapping[str, object] = MappingProxyType({})  # a default no case can change for the others


class Invalid(NamedTuple):
    """A snippet the rule must flag; `fixed` is the source after its fix."""

    source: str
    fixed: str | None = None
    # The source with the display-only suggestion's edits applied (never applied by --fix).
    suggested: str | None = None
    count: int = 1
    unsafe: bool = False  # the expected fix needs --unsafe-fixes
    settings: Mapping[str, object] = _NO_SETTINGS  # Settings fields for this case
    path: str = "kernel.py"  # where the snippet lives, relative to the project root
    # Where the first diagnostic starts, (line, column) as the text report shows
    # them (both from 1), and its message; checked by tests/test_rule_cases.py.
    at: tuple[int, int] | None = None
    message: str | None = None


class Valid(NamedTuple):
    source: str
    settings: Mapping[str, object] = _NO_SETTINGS  # Settings fields for this case
    path: str = "kernel.py"  # where the snippet lives, relative to the project root


class Rule:
    """Base class. A rule is one code; it subscribes to node types with
    `visit_<NodeType>(node)` methods, or overrides `check_file()` for
    file-level checks (comments, blank lines). Docs come from the class
    docstring (the "Why") and `valid`/`invalid` cases.
    """

    code: ClassVar[str]
    # The `{name}` fields of the rules.toml message: `report` must fill exactly these.
    message_fields: ClassVar[frozenset[str]] = frozenset()
    valid: ClassVar[list[Valid | str]] = []
    invalid: ClassVar[list[Invalid]] = []
    # Text for the "Use instead" section when the first invalid case has no fix.
    use_instead: ClassVar[str | None] = None
    # Comment rules exist to delete comments; any other fix that would drop a
    # comment is lowered to unsafe, since the comment may carry the why.
    edits_comments: ClassVar[bool] = False
    # The rule runs only in files that import FlyDSL (`model.imports_flydsl()`):
    # for advice about any Python code (banners, a local LOG2E), which a project's
    # CUTLASS or host modules beside its kernels are not the guide's to judge.
    only_in_flydsl_files: ClassVar[bool] = False
    # The calls `visit_Call` looks at, so the checker hands it only those: most
    # of a kernel's calls concern no rule. A call is handed over when the leaf
    # of its resolved name or of its spelling (`x.<leaf>(...)`, `<leaf>(...)`)
    # is in `call_names`, or its resolved module is in `call_modules`, or, with
    # `call_own_code`, it calls the project's own code: a function defined in
    # this file (by plain name) or a callee resolving outside FlyDSL
    # (`kernels.common.helper`), not a method of a value nor a FlyDSL API.
    # Leave all unset for a rule that must see every call.
    call_names: ClassVar[frozenset[str] | None] = None
    call_modules: ClassVar[frozenset[str] | None] = None
    call_own_code: ClassVar[bool] = False
    # The qualified names of the only calls `visit_Call` handles: the checker
    # hands it just the calls resolving to one of them (their leaves are its
    # `call_names` unless it sets those), so it need not test the callee itself.
    calls: ClassVar[frozenset[str] | None] = None
    # Qualified names the rule matches (its `calls` are added): a project
    # module's re-export of one of their leaves is followed by `model.resolve`.
    # Nothing else is followed, which keeps reading project modules cheap.
    follows: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, context: Context) -> None:
        self.context = context
        self.model = context.model
        self.settings = context.settings
        self.meta = context.metadata[self.code]

    # A rule subclass lists its node types through visit_* methods.
    @classmethod
    def node_types(cls) -> list[type]:
        types = []
        for attribute in dir(cls):
            if attribute.startswith("visit_"):
                node_type = getattr(ast, attribute[len("visit_"):], None)
                if isinstance(node_type, type):
                    types.append(node_type)
        return types

    @classmethod
    def followed_leaves(cls) -> frozenset[str]:
        """The leaf names `follows` and `calls` ask the model to follow."""
        return leaves(cls.follows | (cls.calls or frozenset()))

    def check_file(self) -> None:
        """File-level hook, run before any visit_* method; most rules only use those."""

    def check_suppressions(self) -> None:
        """Hook run once noqa comments have marked the suppressed diagnostics:
        for rules about the suppression comments themselves."""

    # ----------------------------------------------------------- reporting
    def report(
        self,
        node: ast.AST | None = None,
        *,
        start: Position | None = None,
        end: Position | None = None,
        fix: Fix | None = None,
        **message_args: object,
    ) -> None:
        source = self.context.source
        if node is not None:
            start = Position(node.lineno, source.char_col(node.lineno, node.col_offset))
            end = Position(node.end_lineno, source.char_col(node.end_lineno, node.end_col_offset))
        assert start is not None and end is not None
        if message_args.keys() != self.message_fields:
            raise ValueError(f"report() got message fields {sorted(message_args)}, "
                             f"the rules.toml message has {sorted(self.message_fields)}")
        message = self.meta.message.format(**message_args) if message_args else self.meta.message
        # The last argument is the row a suppression comment must be on: the first.
        self.context.add(Diagnostic(self.code, message, source.path, start, end, fix, start.row))

    def make_fix(self, edits: Iterable[Edit], message: str, applicability: Applicability | None = None,
                 since: str | None = None) -> Fix | None:
        """A fix with the rule's declared applicability unless it is lowered here; `since`, a
        release this fix's replacement needs beyond the rule's fix-since."""
        declared = self.meta.fix
        if declared is None:
            return None
        chosen = applicability or declared
        if _SAFETY_RANK[chosen] < _SAFETY_RANK[declared]:
            chosen = declared
        edits = tuple(sorted(edits))
        if self.edits_comments:
            return Fix(edits, chosen, message, since)
        if chosen is not Applicability.DISPLAY and self.context.guards_tuned_kernel:
            # The guide: even an op-identical swap can shift a tuned kernel's schedule,
            # so its code edits are shown, never applied, until the user opts in.
            return Fix(edits, Applicability.DISPLAY, f"{message} (scheduler-sensitive kernel: {TUNED_KERNEL_OPT_IN})", since)
        if chosen is Applicability.SAFE and self._drops_comment(edits):
            chosen, message = Applicability.UNSAFE, f"{message} (drops a comment)"
        return Fix(edits, chosen, message, since)

    def _drops_comment(self, edits: tuple[Edit, ...]) -> bool:
        """Whether applying the edits would change the file's comments.

        Comments are compared as tokens, never as substrings of the new text (a
        `"# hi"` string does not keep a `# hi` comment): the comments lying
        inside the replaced spans must be, as a multiset of texts, the comment
        tokens of the new text. A comment the edits cut into or insert inside
        cannot be kept; one moved from an edit to another of the fix is.
        """
        replaced: Counter[str] = Counter()
        for edit in edits:
            for comment in self.context.comments_between(edit.start.row, edit.end.row):
                start, end = Position(comment.row, comment.col), Position(comment.row, comment.col + len(comment.text))
                if edit.start <= start and end <= edit.end and edit.start != edit.end:
                    replaced[comment.text] += 1
                elif start < edit.end and edit.start < end:  # partly covered (an insertion: strictly inside)
                    return True
        emitted: Counter[str] = Counter()
        for edit in edits:
            if "#" in edit.content:  # no `#`, no comment: most fixes never tokenize
                found = _comment_tokens(edit.content)
                if found is None:
                    return True
                emitted.update(found)
        return emitted != replaced

    def suggest(self, node: ast.AST, message: str) -> Fix | None:
        """The display-only suggestion rules.toml declares for this rule, if it matches."""
        if self.meta.suggestion is None:
            return None
        from ._templates import rewrite

        text = rewrite(self.text(node), *self.meta.suggestion)
        return self.make_fix([self.replace(node, text)], message) if text is not None else None

    # ----------------------------------------------------------- edit help
    def replace(self, node: ast.AST, content: str) -> Edit:
        source = self.context.source
        return Edit(
            Position(node.lineno, source.char_col(node.lineno, node.col_offset)),
            Position(node.end_lineno, source.char_col(node.end_lineno, node.end_col_offset)),
            content,
        )

    def text(self, node: ast.AST) -> str:
        return self.context.source.segment(node)


TUNED_KERNEL_OPT_IN = "applied only when the file is named on the command line or with fix-tuned-kernels = true"


def _comment_tokens(content: str) -> list[str] | None:
    """The comment tokens of an edit's new text, None if it cannot tell.

    The text is read inside brackets, as a fragment of a larger expression or
    statement is: its line breaks and indentation then need no context, and
    brackets it leaves open are closed by the text after it.
    """
    import io
    import tokenize  # imported here: only fixes touching comments need it

    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(f"(\n{content}\n)").readline):
            if token.type == tokenize.ERRORTOKEN:  # e.g. an unterminated string: what follows is unknown
                return None
            if token.type == tokenize.COMMENT:
                found.append(token.string)
    except tokenize.TokenError as exc:
        if "EOF in multi-line statement" not in str(exc):  # open brackets: every token was read
            return None
    except SyntaxError:  # an unmatched closing bracket (3.12+), a bad dedent
        return None
    return found


def leaves(names: Iterable[str]) -> frozenset[str]:
    """The last components of qualified names, for `Rule.call_names`."""
    return frozenset(name.rpartition(".")[2] for name in names)


_RULES: dict[str, type[Rule]] = {}


def register(cls: type[Rule]) -> type[Rule]:
    if cls.code in _RULES:
        raise ValueError(f"{cls.code} is registered twice ({_RULES[cls.code].__name__}, {cls.__name__})")
    # Imported here, not at the top: the CLI loads this module before it forks workers.
    from ..engine.model.walk import UNLISTED_TYPES

    unlisted = [t.__name__ for t in cls.node_types() if t in UNLISTED_TYPES]
    if unlisted:
        raise TypeError(f"{cls.__name__}: the model does not list {', '.join(unlisted)} nodes to visit")
    meta = load_metadata().get(cls.code)
    if meta is None:
        raise ValueError(f"{cls.__name__}: rules.toml has no [rules.{cls.code}]")
    cls.message_fields = message_fields(meta.message)
    _RULES[cls.code] = cls
    return cls


def registered_rules() -> dict[str, type[Rule]]:
    """The rules registered so far, by code (`flydsl_lint.rules.all_rules` imports them all first)."""
    return dict(sorted(_RULES.items()))
