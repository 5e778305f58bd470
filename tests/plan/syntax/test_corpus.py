"""The syntax-breaking corpus (issue 27): real files from public repositories (``corpus/``, sources
and licences in corpus/SOURCES.md) broken the way models break files — a closing bracket lost, a
block half deleted, an indent lost, a string left open, a comma dropped —, each sent as a patch
(a git diff) under ``syntax="refuse"``. Every one must be refused with nothing written, and the
refusal must name the line of the break (within two lines, or the bracket it left open)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import SyntaxGuardError
from patchtx.plan.syntax import language_of

from . import need_grammars
from .mutations import Mutation, independently_broken, mutations, unified_patch

need_grammars(module=True)  # (the corpus is cut with tree-sitter grammars)

CORPUS = Path(__file__).parent / "corpus"
FILES = sorted(p for p in CORPUS.iterdir() if language_of(p.name))
LANGUAGES = {"python", "javascript", "typescript", "go", "rust", "json", "yaml", "toml"}


def _cases() -> list[tuple[Path, Mutation]]:
    return [(path, m) for path in FILES for m in mutations(path.name, path.read_bytes(), per_kind=3)]


def test_the_corpus_covers_the_languages_the_issue_names() -> None:
    assert {language_of(p.name) for p in FILES} >= LANGUAGES
    kinds = Counter((language_of(p.name), m.kind) for p, m in _cases())
    for language in LANGUAGES:
        assert sum(n for (lang, _), n in kinds.items() if lang == language) >= 9, language


def test_every_break_is_refused_naming_its_line(tmp_path: Path) -> None:
    tally: dict[str, Counter[str]] = defaultdict(Counter)
    wrong = []
    for number, (path, mutation) in enumerate(_cases()):
        language = language_of(path.name)
        assert independently_broken(path.name, mutation.after) is not False, (path.name, mutation.kind)
        root = tmp_path / str(number)
        (root / "src").mkdir(parents=True)
        name = f"src/{path.name}"
        original = path.read_bytes()
        (root / name).write_bytes(original)
        with pytest.raises(SyntaxGuardError) as refused:
            patchtx.apply_patch(unified_patch(name, original, mutation.after), root, syntax="refuse")
        assert (root / name).read_bytes() == original and not (root / ".patchtx").exists()
        error = refused.value
        assert error.path == name and "Nothing was changed" in error.message
        line = error.details["syntax_line"]
        assert re.search(rf"^> +{line} \| ", error.message, re.M), error.message  # shown, marked
        tally[language or "?"]["refused"] += 1
        if mutation.accepts(line):
            tally[language or "?"]["right line"] += 1
        else:
            wrong.append((path.name, mutation.kind, mutation.line, line))
    print({language: dict(counts) for language, counts in sorted(tally.items())})
    total = sum(c["refused"] for c in tally.values())
    assert total >= 155
    # Where the parser stops is not always where the patch broke the file (an unclosed bracket is
    # noticed at the end of the file): the guard names the line the patch wrote.
    assert wrong == []
