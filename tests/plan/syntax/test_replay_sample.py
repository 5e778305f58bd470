"""Real history keeps files parseable: the guard must not refuse it (issue 27). The committed sample
is tests/replay/cases (this project's own 86 commits, before and after every file they touched); the
full runs over other projects' thousands of commits are benchmarks/syntax_replay.py, with their
figures in benchmarks/README.md."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

from patchtx.plan.syntax import check_file, language_of

CASES = sorted((Path(__file__).parents[2] / "replay" / "cases").glob("*.json.gz"))


def test_no_commit_of_the_sample_is_refused() -> None:
    verdicts: Counter[str] = Counter()
    refused = []
    for case_file in CASES:
        case = json.loads(gzip.decompress(case_file.read_bytes()))
        for path, after in case["after"].items():
            if after is None or language_of(path) is None:
                continue
            before = case["before"].get(path)
            result = check_file(path, None if before is None else before.encode(), after.encode())
            verdicts[result.status] += 1
            if result.status == "errors":
                refused.append((case["commit"], path, result.errors))
    assert refused == []
    assert len(CASES) == 86 and verdicts["ok"] >= 290, verdicts
