"""Files and encodings: files Python, git or a reviewer read otherwise than the diff
shows them.

Committed bytecode, a compiled extension or any other binary content hides code
from review (images and fonts whose bytes say what their name says do not); a
symlink makes Python import its target while the diff shows a path; a Python file
that declares a source encoding other than UTF-8 runs lines that review tools (and
a scan that read it as UTF-8) see as one comment; a `.gitattributes` change can
rewrite files (line endings, filters) when git checks them out. Each is named with
its file.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import PurePosixPath

from andgate.check.production.common import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    PYTHON_SUFFIXES,
    SYMLINK_MODE,
    FileChange,
    ScanContext,
    ScanFinding,
    is_binary,
    source_encoding,
)
from andgate.check.production.rules import Family
from andgate.records import Construct
from andgate.trust.paths import is_gitattributes

# Images, fonts and message catalogs whose bytes say what their name says: review tools
# show the first two, and Python imports none of them. A `.png` that is really bytecode
# or a pickle is still binary.
MEDIA_MAGIC = {
    ".png": (b"\x89PNG\r\n\x1a\n",),
    ".jpg": (b"\xff\xd8\xff",),
    ".jpeg": (b"\xff\xd8\xff",),
    ".gif": (b"GIF87a", b"GIF89a"),
    ".ico": (b"\x00\x00\x01\x00",),
    ".webp": (b"RIFF",),
    ".woff": (b"wOFF",),
    ".woff2": (b"wOF2",),
    ".ttf": (b"\x00\x01\x00\x00", b"true"),
    ".otf": (b"OTTO",),
    # gettext's compiled catalogs (either byte order), which `msgfmt` builds from the
    # `.po` files a review shows; humanize generates them at install (generated_files).
    # A catalog is strings Python's gettext looks up, never code it imports.
    ".mo": (b"\xde\x12\x04\x95", b"\x95\x04\x12\xde"),
}


def gitattributes(change: FileChange, context: ScanContext) -> Iterator[ScanFinding]:
    if is_gitattributes(change.path) and change.old != change.new:
        detail = gitattributes_detail(change)
        yield ScanFinding(change.path, None, Construct.GITATTRIBUTES, detail)


def gitattributes_detail(change: FileChange) -> str:
    if change.new is None:
        return "deleted; it decides how git checks files out"
    return "it can rewrite files (eol, filters) when git checks them out"


def binary_file(change: FileChange, context: ScanContext) -> Iterator[ScanFinding]:
    path, new = change.path, change.new
    if new is None or not change.adds_bytes:
        return
    suffix = PurePosixPath(path).suffix
    if suffix in BYTECODE_SUFFIXES:
        yield ScanFinding(path, None, Construct.BINARY_FILE, f"bytecode ({suffix})")
    elif suffix in EXTENSION_SUFFIXES:
        yield ScanFinding(path, None, Construct.BINARY_FILE, f"compiled extension ({suffix})")
    elif is_binary(new) and not is_media(path, new):
        yield ScanFinding(path, None, Construct.BINARY_FILE, "binary content, invisible in review")


def is_media(path: str, data: bytes) -> bool:
    magic = MEDIA_MAGIC.get(PurePosixPath(path).suffix.lower(), ())
    return any(data.startswith(m) for m in magic)


def symlink(change: FileChange, context: ScanContext) -> Iterator[ScanFinding]:
    """An added, retargeted or re-moded symlink: Python imports its target, a diff
    shows a path."""
    new, old = change.new, change.old
    if new is None or not change.is_symlink:
        return
    was_same_link = change.old_mode == SYMLINK_MODE and old == new and not change.path_is_new
    if not was_same_link:
        target = new.decode("utf-8", "backslashreplace")
        yield ScanFinding(change.path, None, Construct.SYMLINK, f"a symlink to {target}")


def source_encoding_declaration(change: FileChange, context: ScanContext) -> Iterator[ScanFinding]:
    """A Python file that declares an encoding other than UTF-8, when base's did not
    declare the same (what review tools and this scan show is not what runs)."""
    new, old = change.new, change.old
    if new is None or change.is_symlink or PurePosixPath(change.path).suffix not in PYTHON_SUFFIXES:
        return
    encoding = declared_encoding(new)
    if encoding is not None and (old is None or declared_encoding(old) != encoding):
        line = declaration_line(new)
        yield ScanFinding(change.path, line, Construct.SOURCE_ENCODING, f"coding: {encoding}")


def declared_encoding(data: bytes) -> str | None:
    """The file's source encoding when it is not UTF-8 (or ASCII, which reads every
    file it accepts exactly as UTF-8 does); None otherwise."""
    encoding = source_encoding(data)
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return encoding
    return None if name in ("utf-8", "utf-8-sig", "ascii") else encoding


def declaration_line(data: bytes) -> int:
    """Where PEP 263 puts the declaration: line 1, or line 2 below a `#!` line."""
    first = data.split(b"\n", 1)[0]
    return 1 if b"coding" in first else 2


FAMILY = Family(
    name="files and encodings",
    constructs=frozenset(
        {
            Construct.BINARY_FILE,
            Construct.SYMLINK,
            Construct.SOURCE_ENCODING,
            Construct.GITATTRIBUTES,
        }
    ),
    file_rules=(gitattributes, binary_file, symlink, source_encoding_declaration),
)
