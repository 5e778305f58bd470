"""Replay cases from a git repository's history: each commit as ``git diff`` output, with the
parent's and the commit's versions of every file it touches.

    .venv/bin/python benchmarks/git_history_cases.py [--repo .] [--count 40] [--max-bytes 120000]
        [--out tests/formats/unified/history_cases.json.gz]
    .venv/bin/python benchmarks/git_history_cases.py --replay --repo PATH [--count 300]

``--replay`` writes nothing into the project: it applies each case in a scratch folder with
patchtx and with ``git apply``, checks the diff patchtx prints with ``git apply`` (round trip),
and prints the counts (any repository's history can be measured this way).

Each case is ``{"commit", "subject", "patch", "before": {path: [text, mode]}, "after": {path:
[text, mode] | null}}``: applying ``patch`` to a tree holding ``before`` must give ``after``
(``null``: the file is gone). Commits with a binary or non-UTF-8 file, merges and commits larger
than ``--max-bytes`` (old plus new text) are left out. tests/formats/unified/test_history.py applies
every case with patchtx, checks the diff patchtx prints with ``git apply`` (round trip), and
checks the case itself with ``git apply``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
from pathlib import Path

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "unified" / "history_cases.json.gz"


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "-c", "core.quotepath=true", *args],
                          check=True, capture_output=True).stdout


def _file(repo: Path, commit: str, path: str) -> tuple[str, str] | None:
    """The text and mode of ``path`` at ``commit``; None if absent; ValueError if not text."""
    listing = _git(repo, "ls-tree", "-z", commit, "--", path).decode("utf-8")
    if not listing:
        return None
    mode, kind, blob = listing.split("\t", 1)[0].split(" ")
    if kind != "blob" or mode not in ("100644", "100755"):
        raise ValueError(f"{path} is not a regular file")
    data = _git(repo, "cat-file", "blob", blob)
    if b"\0" in data:
        raise ValueError(f"{path} is binary")
    return data.decode("utf-8"), mode


def case(repo: Path, commit: str) -> dict[str, object] | None:
    """The commit as a case; None for a merge, a binary change or a text that is not UTF-8."""
    try:
        return _case(repo, commit)
    except UnicodeDecodeError:  # (a diff, a path or a subject in another encoding)
        return None


def _case(repo: Path, commit: str) -> dict[str, object] | None:
    parents = _git(repo, "rev-list", "--parents", "-n", "1", commit).decode().split()[1:]
    if len(parents) != 1:
        return None
    parent = parents[0]
    patch = _git(repo, "diff", "-M", "--no-color", "--no-ext-diff", parent, commit).decode("utf-8")
    if not patch or "GIT binary patch" in patch or "\nBinary files " in patch:
        return None
    status = _git(repo, "diff", "-M", "--name-status", "-z", parent, commit).decode("utf-8")
    fields = status.split("\0")[:-1]
    touched: set[str] = set()
    index = 0
    while index < len(fields):
        code = fields[index]
        count = 2 if code[0] in "RC" else 1
        touched.update(fields[index + 1 : index + 1 + count])
        index += 1 + count
    try:
        before = {p: _file(repo, parent, p) for p in sorted(touched)}
        after = {p: _file(repo, commit, p) for p in sorted(touched)}
    except ValueError:
        return None
    subject = _git(repo, "log", "-1", "--format=%s", commit).decode("utf-8")
    return {"commit": commit, "subject": subject, "patch": patch,
            "before": {p: v for p, v in before.items() if v is not None}, "after": after}


def size(entry: dict[str, object]) -> int:
    total = 0
    for side in ("before", "after"):
        files = entry[side]
        assert isinstance(files, dict)
        total += sum(len(v[0]) for v in files.values() if v is not None)
    return total


def _write(root: Path, files: dict[str, list[str]]) -> None:
    for path, (text, mode) in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(text.encode("utf-8"))
        full.chmod(0o755 if mode == "100755" else 0o644)


def _matches(root: Path, after: dict[str, list[str] | None]) -> bool:
    for path, value in after.items():
        full = root / path
        if value is None:
            if full.exists():
                return False
            continue
        if not full.is_file() or full.read_bytes() != value[0].encode("utf-8"):
            return False
        if bool(full.stat().st_mode & 0o100) != (value[1] == "100755"):
            return False
    return True


def replay(cases: list[dict[str, object]]) -> dict[str, object]:
    """Apply every case with patchtx and with git apply; round-trip patchtx's printed diff."""
    import tempfile
    import time

    from patchtx.api import apply_patch, plan_patch
    from patchtx.errors import PatchtxError
    from patchtx.render import diff_texts

    counts: dict[str, object] = {"cases": len(cases), "patchtx right": 0, "patchtx wrong": 0,
                                 "git apply right": 0, "round trip right": 0, "refused": {}}
    seconds = {"patchtx": 0.0, "git apply": 0.0}
    for entry in cases:
        before, after, patch = entry["before"], entry["after"], str(entry["patch"])
        assert isinstance(before, dict) and isinstance(after, dict)
        with tempfile.TemporaryDirectory() as scratch:
            mine, theirs, trip = Path(scratch, "p"), Path(scratch, "g"), Path(scratch, "r")
            for root in (mine, theirs, trip):
                root.mkdir()
                _write(root, before)
            started = time.perf_counter()
            try:
                apply_patch(patch, mine, durable=False)
                key = "patchtx right" if _matches(mine, after) else "patchtx wrong"
                counts[key] = int(counts[key]) + 1  # type: ignore[call-overload]
            except PatchtxError as exc:
                refused = counts["refused"]
                assert isinstance(refused, dict)
                refused[exc.kind] = refused.get(exc.kind, 0) + 1
            seconds["patchtx"] += time.perf_counter() - started
            started = time.perf_counter()
            done = subprocess.run(["git", "apply", "-"], input=patch.encode("utf-8"), cwd=theirs,
                                  capture_output=True,
                                  env={**os.environ, "GIT_CEILING_DIRECTORIES": scratch})
            seconds["git apply"] += time.perf_counter() - started
            if done.returncode == 0 and _matches(theirs, after):
                counts["git apply right"] = int(counts["git apply right"]) + 1  # type: ignore[call-overload]
            try:
                printed = "".join(diff_texts(plan_patch(patch, trip)))
            except PatchtxError:
                continue
            done = subprocess.run(["git", "apply", "-"], input=printed.encode("utf-8"), cwd=trip,
                                  capture_output=True,
                                  env={**os.environ, "GIT_CEILING_DIRECTORIES": scratch})
            if done.returncode == 0 and _matches(trip, after):
                counts["round trip right"] = int(counts["round trip right"]) + 1  # type: ignore[call-overload]
    counts["seconds"] = {k: round(v, 2) for k, v in seconds.items()}
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path("."))
    parser.add_argument("--rev", default="HEAD", help="the newest commit to walk back from")
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--max-bytes", type=int, default=120_000)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--replay", action="store_true",
                        help="apply the cases (patchtx, git apply, round trip) and print counts")
    args = parser.parse_args()
    commits = _git(args.repo, "rev-list", "--no-merges", "--reverse", args.rev).decode().split()
    cases = []
    for commit in commits:
        entry = case(args.repo, commit)
        if entry is not None and size(entry) <= args.max_bytes:
            cases.append(entry)
    # Spread over the history rather than its first commits.
    step = max(1, len(cases) // args.count) if args.count else 1
    chosen = cases[::step][: args.count]
    if args.replay:
        print(json.dumps({"repository": str(args.repo), "commits": len(commits),
                          "eligible": len(cases), **replay(chosen)}, indent=2))
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as handle:
        json.dump(chosen, handle, ensure_ascii=False, indent=0, sort_keys=True)
    print(f"{len(chosen)} cases of {len(cases)} eligible ({len(commits)} commits) -> {args.out}")


if __name__ == "__main__":
    main()
