"""Reading a file once: bytes -> text -> AST, with what edits and noqa need."""

from __future__ import annotations

import ast
import codecs
import errno
import io
import itertools
import os
import re
import stat
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import NamedTuple


# Larger files are refused unread (`max-file-size`): generated tables, not kernels.
DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024


class SourceError(Exception):
    """A file that cannot be checked; the message is one line naming the reason."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


_NEWLINE_RE = re.compile(r"\r\n|\r|\n")


class SourceFile:
    """One file's text and what is derived from it (no `__slots__`: the
    derived values are cached properties, kept in the instance's dict)."""

    def __init__(self, path: str, text: str, encoding: str = "utf-8", bom: bool = False, newline: str = "\n") -> None:
        self.path = path
        self.text = text
        self.encoding = encoding
        self.bom = bom
        self.newline = newline
        self._tree: ast.Module | None = None  # see `tree`

    @classmethod
    def from_bytes(cls, path: str, data: bytes) -> "SourceFile":
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # Python reads UTF-8 and PEP 263 codecs only
            raise SourceError(path, "UTF-16 is not supported (convert to UTF-8)")
        if b"\x00" in data:
            raise SourceError(path, "binary file (contains a NUL byte)")
        bom = data.startswith(codecs.BOM_UTF8)
        text = _decode_without_cookie(path, data, bom) if _cannot_declare_encoding(data) else None
        encoding = "utf-8"
        if text is None:  # a possible cookie, or bad bytes after a BOM
            encoding = _detect_encoding(path, data)
            try:
                text = data.decode(encoding)
            except (UnicodeDecodeError, LookupError) as exc:
                raise SourceError(path, f"cannot decode as {encoding}: {exc}") from None
        first_newline = _NEWLINE_RE.search(text)
        newline = first_newline.group(0) if first_newline else "\n"
        return cls(path=path, text=text, encoding="utf-8" if encoding == "utf-8-sig" else encoding, bom=bom, newline=newline)

    @classmethod
    def read(cls, path: Path | str, max_size: int = DEFAULT_MAX_FILE_SIZE) -> "SourceFile":
        return cls.from_bytes(str(path), read_data(path, max_size))

    def encode(self, text: str) -> bytes:
        """Encode new text the way the file was stored (encoding, BOM)."""
        data = text.encode(self.encoding)
        return codecs.BOM_UTF8 + data if self.bom else data

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            try:
                self._tree = ast.parse(self.text, filename=self.path, type_comments=False)
            except SyntaxError as exc:
                where = f"{exc.lineno}:{(exc.offset or 0)}" if exc.lineno else "?"
                raise SourceError(self.path, f"syntax error at {where}: {exc.msg}") from None
            except (RecursionError, MemoryError):  # the parser's stack limits raise these, without a message
                raise SourceError(self.path, "cannot parse: too deeply nested for Python's parser") from None
            except ValueError as exc:
                raise SourceError(self.path, f"cannot parse: {str(exc) or type(exc).__name__}") from None
        return self._tree

    def adopt_tree(self, tree: ast.Module | None) -> None:
        """Take `tree` (None: none) as the file's, parsed elsewhere from this very text."""
        if tree is not None and self._tree is None:
            self._tree = tree

    @cached_property
    def mentions_noqa(self) -> bool:
        """Whether any `noqa` directive can be in the file (cheaper than finding comments)."""
        # bytes.lower() folds ASCII only, which finds every spelling of `noqa`, and
        # costs a tenth of str.lower() on text with any non-ASCII character.
        return b"noqa" in self.text.encode("utf-8", "surrogatepass").lower()

    @cached_property
    def lines(self) -> list[str]:
        """Physical lines without their line endings; lines[0] is row 1."""
        if "\r" not in self.text:  # the common case, without a regular expression
            return self.text.split("\n")
        return _NEWLINE_RE.split(self.text)

    @cached_property
    def line_starts(self) -> list[int]:
        """Character offset of each row's first character (index 0 is row 1)."""
        if "\r" not in self.text:
            return list(itertools.accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0))
        starts = [0]
        for match in _NEWLINE_RE.finditer(self.text):
            starts.append(match.end())
        return starts

    def char_col(self, row: int, byte_col: int) -> int:
        """Convert an AST column (UTF-8 bytes) to a character column."""
        line = self.lines[row - 1] if 0 < row <= len(self.lines) else ""
        if line.isascii():
            return byte_col
        return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def offset(self, row: int, col: int) -> int:
        return self.line_starts[row - 1] + col

    def segment(self, node: ast.AST) -> str:
        row = node.lineno
        if row == node.end_lineno:  # most nodes: a slice of their line, without `line_starts`
            return self.lines[row - 1][self.char_col(row, node.col_offset) : self.char_col(row, node.end_col_offset)]
        start = self.offset(node.lineno, self.char_col(node.lineno, node.col_offset))
        end = self.offset(node.end_lineno, self.char_col(node.end_lineno, node.end_col_offset))
        return self.text[start:end]


class Comment(NamedTuple):
    row: int
    col: int
    text: str  # from the `#` to the end of the line




def _cannot_declare_encoding(data: bytes) -> bool:
    """Whether the first two lines (as `tokenize.detect_encoding` reads them) hold
    no `coding` cookie, so that the encoding can only be UTF-8."""
    second_line_end = data.find(b"\n", data.find(b"\n") + 1)
    return data.find(b"coding", 0, len(data) if second_line_end < 0 else second_line_end) < 0


def _decode_without_cookie(path: str, data: bytes, bom: bool) -> str | None:
    """The text of a file without a cookie, as decoding with `_detect_encoding`'s
    answer gives it, without importing `tokenize` (a large start-up cost).

    None when only `_detect_encoding` can tell the error: undecodable bytes after
    a BOM are reported as utf-8 or utf-8-sig depending on the line holding them.
    """
    try:
        return data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        if bom:
            return None
        raise SourceError(path, f"cannot decode as utf-8: {exc}") from None


def _detect_encoding(path: str, data: bytes) -> str:
    """The codec that `tokenize.detect_encoding` names, for `bytes.decode`."""
    import tokenize  # only files that may declare an encoding need it

    try:
        return tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError as exc:
        if "invalid or missing" not in str(exc):
            raise SourceError(path, f"bad encoding declaration: {exc}") from None
        return "utf-8"  # undecodable bytes and no cookie: the caller says so


class ReadWording(NamedTuple):
    """What a caller's messages say for each reason `read_regular` refuses a file."""

    missing: Callable[[Path], str]  # nothing there (a broken symbolic link too)
    not_regular: Callable[[int], str]  # the file's st_mode
    too_large: Callable[[int | None, int], str]  # its size (None: it grew past the limit since the stat), the limit
    failed: Callable[[OSError], str]  # any other error the system reports


class RefusedFile(OSError):
    """`read_regular` refused the file: too large, or not a regular file."""


class NotRegularFile(RefusedFile):
    """`read_regular` refused a directory, FIFO, device or socket."""


# The system's own words, and a regular file's only: for callers that report none of them.
PLAIN_WORDING = ReadWording(
    missing=lambda path: os.strerror(errno.ENOENT),
    not_regular=lambda mode: os.strerror(errno.EISDIR) if stat.S_ISDIR(mode)
    else "not a regular file (a device, FIFO or socket)",
    too_large=lambda size, limit: f"larger than {limit} bytes",
    failed=lambda exc: exc.strerror or str(exc),
)


def read_regular(path: Path | str, limit: int, wording: ReadWording = PLAIN_WORDING,
                 follow_symlinks: bool = True) -> bytes:
    """A regular file's bytes, at most `limit` of them; an OSError whose `strerror` is
    `wording`'s reason otherwise: FileNotFoundError when nothing is there,
    NotRegularFile for a directory, FIFO, device or socket, RefusedFile when too large.

    Anything but a regular file is refused before it is opened (a device may
    never end, /dev/zero, or act on being opened), and the open does not block,
    so a FIFO put in the file's place since the stat cannot hang the run.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        _check_regular(os.stat(path, follow_symlinks=follow_symlinks), limit, wording)
        with open(os.open(path, flags), "rb") as handle:
            _check_regular(os.fstat(handle.fileno()), limit, wording)
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, wording.missing(Path(path))) from None
    except RefusedFile:
        raise
    except OSError as exc:
        raise OSError(exc.errno, wording.failed(exc)) from None
    if len(data) > limit:
        raise RefusedFile(errno.EFBIG, wording.too_large(None, limit))
    return data


def _check_regular(info: os.stat_result, limit: int, wording: ReadWording) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFile(errno.EINVAL, wording.not_regular(info.st_mode))
    if info.st_size > limit:
        raise RefusedFile(errno.EFBIG, wording.too_large(info.st_size, limit))


def too_large(size: int | None, max_size: int) -> str:
    """The reason for refusing `size` bytes (None: more than `max_size`, exactly unknown)."""
    if size is None:
        return f"file too large: more than max-file-size {format_size(max_size)}"
    return f"file too large: {format_size(size)} > max-file-size {format_size(max_size)}"


def format_size(size: int) -> str:
    """`size` bytes in the largest binary unit it fills, to one decimal: 5.9 KiB, 12 MiB."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"


_FILE_KINDS = (
    (stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "directory"), (stat.S_ISLNK, "symbolic link"),
)


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, for messages: "FIFO", "character device", ..."""
    return next((kind for test, kind in _FILE_KINDS if test(mode)), "special file")


_SOURCE_WORDING = ReadWording(
    missing=lambda path: "no such file",
    not_regular=lambda mode: "is a directory" if stat.S_ISDIR(mode) else f"not a regular file ({file_kind(mode)})",
    too_large=too_large,
    failed=lambda exc: f"cannot read: {exc.strerror or exc}",
)


def read_data(path: Path | str, max_size: int = DEFAULT_MAX_FILE_SIZE) -> bytes:
    """A regular file's bytes, at most `max_size` of them; a failure is a SourceError naming the reason."""
    try:
        return read_regular(path, max_size, _SOURCE_WORDING)
    except OSError as exc:
        raise SourceError(str(path), exc.strerror) from None


def find_comments(source: SourceFile, string_spans: dict[int, list[tuple[int, int]]]) -> list[Comment]:
    """Every comment, found without tokenizing the whole file.

    A `#` starts a comment unless it lies inside a string literal; the spans
    (row -> UTF-8 byte column ranges) come from the semantic model's single walk.
    """
    found: list[Comment] = []
    for index, line in enumerate(source.lines):
        if "#" not in line:
            continue
        row = index + 1
        row_spans = string_spans.get(row)
        start = line.find("#")
        while start != -1:
            byte_col = start if line.isascii() else len(line[:start].encode("utf-8"))
            if not row_spans or not any(lo <= byte_col < hi for lo, hi in row_spans):
                found.append(Comment(row, start, line[start:]))
                break
            start = line.find("#", start + 1)
    return found
