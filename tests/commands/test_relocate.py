"""Re-locating a stale fixture's hunks (`known-bad refresh`'s last resort): the changed
lines are found exactly once, or the hunk is refused with why; never a guess."""

from __future__ import annotations

import pytest

from andgate.commands.relocate import CannotRelocate, parse_patch, relocate

CODE = '''\
import itertools


def take(n, seq):
    """The first n items of seq."""
    return list(itertools.islice(seq, n))


def tail(n, seq):
    return list(seq)[-n:]
'''
PATCH = '''\
A commit message before the diff is not the patch's.

diff --git a/pkg/core.py b/pkg/core.py
index 1111111..2222222 100644
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -3,7 +3,7 @@ import itertools

 def take(n, seq):
     """The first n items of seq."""
-    return list(itertools.islice(seq, n))
+    return list(itertools.islice(seq, n - 1))


 def tail(n, seq):
'''


def test_a_patch_is_read_by_its_hunk_counts_even_with_stripped_blank_context():
    (patch,) = parse_patch(PATCH)
    assert patch.path == "pkg/core.py" and patch.plain
    (hunk,) = patch.hunks
    # The blank context lines an editor stripped to nothing are still context.
    assert hunk.lines[0] == " " and hunk.lines[-1] == " def tail(n, seq):"
    assert hunk.core() == (
        ["    return list(itertools.islice(seq, n))"],
        ["    return list(itertools.islice(seq, n - 1))"],
    )


def test_the_changed_lines_are_found_where_the_code_moved():
    moved = CODE.replace('    """The first n items of seq."""\n', '    """Up to n items."""\n')
    moved = "# a header the refactor added\n" + moved
    (patch,) = parse_patch(PATCH)
    out = relocate(moved, patch.hunks, patch.path)
    assert "    return list(itertools.islice(seq, n - 1))" in out
    assert out.replace(" - 1))", "))") == moved


def test_lines_found_twice_or_not_at_all_are_refused_with_why():
    (patch,) = parse_patch(PATCH)
    twice = CODE + "\n\ndef again(n, seq):\n    return list(itertools.islice(seq, n))\n"
    with pytest.raises(CannotRelocate, match=r"pkg/core\.py, hunk 1: .* occur 2 times"):
        relocate(twice.replace('"""The first', '"""Up to the first'), patch.hunks, patch.path)
    rewritten = CODE.replace("list(itertools.islice(seq, n))", "[x for x, _ in zip(seq, range(n))]")
    with pytest.raises(CannotRelocate, match="are no longer in the code"):
        relocate(rewritten, patch.hunks, patch.path)


def test_an_added_file_is_no_plain_edit():
    added = "diff --git a/pkg/new.py b/pkg/new.py\nnew file mode 100644\n--- /dev/null\n"
    added += "+++ b/pkg/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
    (patch,) = parse_patch(added)
    assert not patch.plain
