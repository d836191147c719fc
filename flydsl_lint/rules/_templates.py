"""Structural rewrite templates for display-only suggestions, via ast-grep.

A rule that flags a construct through the semantic model may also declare in
rules.toml an ast-grep pattern and a rewrite (`suggest-pattern`,
`suggest-rewrite`). The flagged node's source is matched against the pattern
with ast-grep's tree-sitter parser, and its metavariables (`$A`, `$$$REST`) are
substituted into the rewrite. The linter never detects with these patterns:
they only spell a starting point for a structural migration, which is why the
result is always display-only.
"""

from __future__ import annotations

import re

_METAVARIABLE = re.compile(r"\$\$\$([A-Z_][A-Z0-9_]*)|\$([A-Z_][A-Z0-9_]*)")


def rewrite(segment: str, pattern: str, template: str) -> str | None:
    """`template` filled from `pattern` matched against the whole `segment`."""
    from ast_grep_py import SgRoot  # imported on use: only suggestions need it

    root = SgRoot(segment, "python").root()
    match = root.find(pattern=pattern)
    if match is None or match.text() != segment.strip():
        return None  # the pattern must cover the flagged construct exactly

    def fill(found: re.Match) -> str:
        multiple, single = found.group(1), found.group(2)
        if multiple:
            return ", ".join(node.text() for node in match.get_multiple_matches(multiple) if node.is_named())
        node = match.get_match(single)
        if node is None:
            raise LookupError(single)
        return node.text()

    try:
        return _METAVARIABLE.sub(fill, template)
    except LookupError:
        return None  # the rewrite names a metavariable the pattern did not bind
