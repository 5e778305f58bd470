"""Arbitrary diff-like text never escapes as anything but a PatchtxError (no traceback reaches a
user), and what parses plans or refuses cleanly on a small tree."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchtx.api import plan_patch
from patchtx.errors import PatchtxError
from patchtx.formats.codex import parse

from ...examples import examples

PIECES = st.sampled_from([
    "diff --git a/x b/x", 'diff --git "a/x y" "b/x\\303\\251"', "diff --git a/x y b/x y", 'diff --git a/x "b/y',
    "--- a/x", "+++ b/x", "--- /dev/null", "+++ /dev/null", '--- "a/q', "+++ b/../up",
    "@@ -1 +1 @@", "@@ -1,3 +1,3 @@", "@@ -0,0 +1 @@", "@@ -2,0 +3 @@", "@@ -99999999999999999999 +1 @@",
    "@@@ -1 -1 +1 @@@", "@@ bad", " a", "-a", "+b", " ", "", "-- ", "\\ No newline at end of file",
    "new file mode 100755", "deleted file mode 100644", "old mode 100644", "new mode 12x", "new mode 120000",
    "rename from x", "rename to y", "copy from x", "copy to z", "similarity index 90%",
    "index 1..2 160000", "GIT binary patch", "Binary files a/x and b/x differ", "*** Begin Patch",
    "Subject: prose", "x\r",
])


@settings(max_examples=examples(1500), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(PIECES, max_size=14), strip=st.sampled_from([None, 0, 1, 2]),
       reverse=st.booleans())
def test_only_patchtx_errors(tmp_path_factory, lines: list[str], strip: int | None,  # type: ignore[no-untyped-def]
                             reverse: bool) -> None:
    text = "diff --git a/x b/x\n" + "\n".join(lines) + "\n"
    try:
        patch = parse(text, strip=strip, reverse=reverse)
    except PatchtxError as exc:
        assert exc.message and not exc.changed
        return
    root: Path = tmp_path_factory.mktemp("t")
    (root / "x").write_text("a\nb\na\n")
    try:
        plan_patch(patch, root)
    except PatchtxError as exc:
        assert exc.message and not exc.changed
    assert (root / "x").read_text() == "a\nb\na\n"
