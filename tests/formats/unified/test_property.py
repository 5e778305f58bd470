"""Any two texts: the unified diff difflib makes between them (with any context size, lines drawn
from a small alphabet so that context repeats everywhere) applies with patchtx to give the second
text, and its reverse gives the first back. The stated lines decide where repeated context goes."""

from __future__ import annotations

import difflib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchtx.api import apply_patch, plan_patch
from patchtx.render import diff_texts

from ...examples import examples

LINE = st.sampled_from(["a", "b", "", "  x", "def f():", "}"])
TEXT = st.lists(LINE, max_size=30).map(lambda lines: "".join(line + "\n" for line in lines))


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=TEXT, after=TEXT, context=st.integers(0, 4))
def test_difflib_diffs_apply_both_ways(tmp_path_factory, before: str, after: str,  # type: ignore[no-untyped-def]
                                       context: int) -> None:
    root: Path = tmp_path_factory.mktemp("t")
    (root / "f").write_text(before)
    diff = "".join(difflib.unified_diff(before.splitlines(keepends=True),
                                        after.splitlines(keepends=True), "a/f", "b/f", n=context))
    if not diff:
        return
    # (A -U0 diff's '@@ -0,0' inserts at the top only with --unidiff-zero, as in git apply.)
    printed = "".join(diff_texts(plan_patch(diff, root, unidiff_zero=context == 0)))
    apply_patch(diff, root, durable=False, unidiff_zero=context == 0)
    assert (root / "f").read_text() == after
    # (Reversed too: a -U0 hunk that removed the file's first lines puts them back at the top
    # only with --unidiff-zero; without, '@@ -1 +0,0' reversed fills an empty file, efb8c16.)
    apply_patch(diff, root, durable=False, reverse=True, unidiff_zero=context == 0)
    assert (root / "f").read_text() == before
    # What patchtx prints for the change is itself a diff that makes it.
    apply_patch(printed, root, durable=False)
    assert (root / "f").read_text() == after
