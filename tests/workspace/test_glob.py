"""Glob matching: the same answers as the regular expressions it replaced, in linear time."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patchtx.options import PlanOptions
from patchtx.workspace import globs
from patchtx.workspace.globs import Glob, GlobSet
from patchtx.workspace.policy import protected_by

from ..examples import examples


def reference_regex(pattern: str) -> re.Pattern[str]:
    """The translation patchtx used before (backtracking, so only for short inputs here), with
    ``.gitignore``'s leading-slash anchor."""
    anywhere = "/" not in pattern.rstrip("/")
    pattern = pattern.removeprefix("/")
    if pattern.endswith("/"):
        pattern += "**"
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    prefix = "(?:.*/)?" if anywhere else ""
    return re.compile(f"^{prefix}{''.join(out)}(?:/.*)?$", re.DOTALL)


_PATTERN = st.text(st.sampled_from("ab/*?."), min_size=1, max_size=10)
_PATH = st.lists(st.text(st.sampled_from("ab.*?"), min_size=1, max_size=4), min_size=1, max_size=4).map("/".join)


@settings(max_examples=examples(3000))
@given(_PATTERN, _PATH)
def test_same_answers_as_the_regular_expression(pattern: str, path: str) -> None:
    assert Glob(pattern).matches(path) == bool(reference_regex(pattern).match(path)), (pattern, path)


@settings(max_examples=examples(1000))
@given(st.lists(_PATTERN, min_size=1, max_size=4), st.lists(_PATH, min_size=1, max_size=12))
def test_a_check_that_keeps_its_moves_answers_as_each_path_alone(patterns: list[str], paths: list[str]) -> None:
    """A GlobSet keeps the moves worked out for earlier paths (globs.Moves) and looks them up for
    later ones: the same first matching pattern as each path matched afresh, for the same count
    of steps (the work bound is reached at the same point)."""
    kept = GlobSet(tuple(patterns))
    for path in paths:
        work = [0]
        alone = next((pattern for pattern in patterns if Glob(pattern).matches(path, work)), None)
        before = kept.work[0]
        assert kept.first_match(path) == alone, (patterns, paths, path)
        assert kept.work[0] - before == work[0]


def test_the_moves_a_check_keeps_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(globs, "MOVES_HELD", 50)
    pattern = "**a**a**a**c"
    kept = GlobSet((pattern,))
    for count in range(1, 200):
        assert kept.first_match("a" * count + "c") == (pattern if count >= 3 else None)
    assert 50 <= kept.moves.held <= 50 + 2 * (len(pattern) + 3)  # kept until full, then no more


def test_examples() -> None:
    assert Glob(".github/").matches(".github/workflows/ci.yml")
    assert Glob(".github/**").matches(".github/workflows/ci.yml")
    assert not Glob(".github/**").matches("src/.github")
    assert Glob("*.lock").matches("deep/er/poetry.lock")
    assert Glob("migrations/**").matches("migrations/0001.py")
    assert not Glob("src/*.py").matches("src/a/b.py")
    assert Glob("src/**/b.py").matches("src/b.py") and Glob("src/**/b.py").matches("src/a/c/b.py")


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("/setup.py", "setup.py", True),  # a leading slash anchors at the root, as in .gitignore
    ("/setup.py", "pkg/setup.py", False),
    ("/.github/", ".github/workflows/ci.yml", True),
    ("config.[jt]s", "web/config.js", True),
    ("config.[jt]s", "config.ts", True),
    ("config.[jt]s", "config.cs", False),
    ("v[0-9].txt", "v7.txt", True),
    ("v[0-9].txt", "vx.txt", False),
    ("[!.]*.env", "prod.env", True),
    ("[!.]*.env", ".env", False),
    ("[^.]*.env", ".env", False),
    ("[]]", "]", True),
    ("a[/]b", "a/b", False),  # a set never holds '/': the '[' is then literal
    ("a[/]b", "a[/]b", True),
    ("a[b", "a[b", True),  # an unclosed '[' is literal
    ("\\*.py", "*.py", True),  # an escaped character is literal
    ("\\*.py", "x.py", False),
])
def test_gitignore_syntax_that_protects_what_it_says(pattern: str, path: str, expected: bool) -> None:
    """Each of these matched nothing before (a host's ``/secrets.env`` or ``config.[jt]s``
    protected no file, silently)."""
    assert Glob(pattern).matches(path) is expected


def test_a_leading_slash_protects_the_root_file_through_the_policy() -> None:
    assert protected_by(PlanOptions(protected=("/secrets.env",)), "secrets.env") == "/secrets.env"
    assert protected_by(PlanOptions(protected=("/secrets.env",)), "app/secrets.env") is None


def test_pathological_pattern_takes_one_step_per_character(monkeypatch: pytest.MonkeyPatch) -> None:
    """The regular expression took over 20 s on a 40-character path; the automaton advances one
    set of at most len(pattern) + 1 states per character, whatever the pattern."""
    pattern = "**a**a**a**a**a**a**a**a**a**a**a**a**c"
    options = PlanOptions(protected=(pattern,))
    sizes: list[int] = []
    closure = Glob._closure

    def counting(self: Glob, states: set[int]) -> set[int]:
        result = closure(self, states)
        sizes.append(len(result))
        return result

    monkeypatch.setattr(Glob, "_closure", counting)
    for path in ("a" * 40, "a/" * 20, "ab" * 20 + "c", "a" * 4000, "a" * 4000 + "c", "c" + "a" * 4000):
        sizes.clear()
        protected_by(options, path)
        assert len(sizes) <= len(path) + 1
        assert max(sizes, default=0) <= len(pattern) + 3  # (none: a literal run is not in the path)
    assert protected_by(options, "a" * 12 + "c") == pattern
    assert protected_by(options, "a" * 40) is None
