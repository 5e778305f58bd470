"""The damage hunt of issue 37 (benchmarks/damage_hunt.py) on this project's own history: real
edits of real files (the replay corpus, tests/replay/cases), each a clean Codex patch damaged the
way models damage patches (14 kinds, alone and in pairs), judged by an oracle independent of
patchtx. Every success must be the real edit, on cases the damaged text determines and on the
others alike; and patchtx must apply at least two thirds of the determined cases as intended.

A twentieth of the cases by default (a few seconds), all of them under ``--full-examples``. The
full table, with Codex's binary beside and five other repositories: benchmarks/README.md, "The
damage hunt"."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from ..examples import FULL

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import damage_hunt  # noqa: E402

CORPUS = ROOT / "tests" / "replay" / "cases"
EVERY = 20
"""By default, every twentieth edit of the corpus (each makes some 21 cases)."""


@cache
def rows() -> tuple[damage_hunt.Row, ...]:
    edits = list(damage_hunt.edits_from_replay(CORPUS))
    assert len(edits) >= 150, "the replay corpus did not load"
    chosen = edits if FULL else edits[::EVERY]
    return tuple(damage_hunt.hunt(chosen, pairs=10, seed=37))


def _wrong(selected: list[damage_hunt.Row]) -> str:
    wrong = [row for row in selected if row.patchtx == "wrong"]
    return "\n\n".join(f"{row.case.edit.source} {row.case.kinds} determined={row.determined} "
                       f"({row.note}):\n{row.case.text[:800]}" for row in wrong[:3]) + (
        f"\n\n{len(wrong)} wrong of {len(selected)}\n" + damage_hunt.table(selected) if wrong else "")


def test_no_damaged_patch_is_written_wrong() -> None:
    selected = [row for row in rows() if "truncate" not in row.case.kinds]
    assert len(selected) >= 100
    assert not any(row.patchtx == "wrong" for row in selected), _wrong(selected)


def test_no_cut_patch_is_written_as_whole() -> None:
    selected = [row for row in rows() if "truncate" in row.case.kinds]
    assert not any(row.patchtx == "wrong" for row in selected), _wrong(selected)


def test_two_thirds_of_the_determined_cases_are_applied_as_intended() -> None:
    determined = [row for row in rows() if row.determined]
    share = sum(row.patchtx == "intended" for row in determined) / len(determined)
    assert share >= 2 / 3, f"{share:.1%}\n" + damage_hunt.table(list(rows()))


# -- the oracle itself, on cases whose readings can be counted by eye ------------------------------
CLASS = "class A:\n    def f(self):\n        x = 1\n        return x\n"


def _case(before: str, after: str, kinds: tuple[str, ...], hunks: list[list[str]]) -> damage_hunt.Case:
    edit = damage_hunt.Edit("test", "a.py", before, after)
    written = damage_hunt.Written("a.py", [damage_hunt.Hunk("@@", body) for body in hunks])
    return damage_hunt.Case(edit, kinds, written, damage_hunt.render(written))


def test_a_hunk_shifted_as_a_whole_is_determined_where_one_shift_matches() -> None:
    after = CLASS.replace("        return x", "        y = 2\n        return x")
    case = _case(CLASS, after, ("reindent",), [[" def f(self):", "     x = 1", "+    y = 2", "     return x"]])
    assert damage_hunt.determined(case)


def test_a_shifted_hunk_that_may_also_have_lost_its_spaces_is_not_determined() -> None:
    after = CLASS.replace("        return x", "        y = 2\n        return x")
    case = _case(CLASS, after, ("reindent", "lost_space"),
                 [[" def f(self):", "     x = 1", "+    y = 2", "     return x"]])
    assert not damage_hunt.determined(case)


def test_a_shift_that_matches_twice_is_not_determined() -> None:
    before = "def f():\n    x = 1\nx = 1\n"
    case = _case(before, "def f():\n    x = 2\nx = 1\n", ("reindent",), [["-x = 1", "+x = 2"]])
    assert not damage_hunt.determined(case)


def test_a_lost_space_before_a_dash_is_read_both_ways() -> None:
    # ('-b' is a context line '-b' that lost its space, at line 1, or 'b' removed, at line 4.)
    case = _case("a\n-b\nb\na\nb\n", "a\n-b\nc\nb\na\nb\n", ("lost_space",), [["a", "-b", "+c"]])
    assert not damage_hunt.determined(case)
    alone = _case("a\n-b\nb\n", "a\n-b\nc\nb\n", ("lost_space",), [["a", "-b", "+c"]])
    assert damage_hunt.determined(alone)


def test_a_cut_patch_is_never_determined() -> None:
    case = _case(CLASS, CLASS.replace("x = 1", "x = 2"), ("truncate",), [["-        x = 1", "+        x = 2"]])
    assert not damage_hunt.determined(case)
