"""Replay real history through the syntax guard: false refusals on commits that kept files parseable.

For every non-merge commit of a git repository (newest first, up to ``--commits``), every file the
commit added or modified in a language the guard parses is checked as the commit changed it
(``patchtx.plan.syntax.check_file(path, before, after)``), exactly what the guard does for a patch that
makes that change. A real commit rarely leaves a file unparseable, so every ``errors`` verdict is
either such a commit or a false refusal; each is listed with the error, for a person to judge
(``--judge`` re-parses the commit's file with an independent parser where one is installed: Node's
``--check`` for JavaScript, ``rustfmt`` for Rust; Python, JSON and TOML are judged by the standard
library, which is the guard's own parser for them).

    .venv/bin/python benchmarks/syntax_replay.py /work/.mirror/pallets+click/repo --commits 3000

Prints one JSON object: per language the files checked and each verdict's count, then every
refusal. The guard's time is measured too (``seconds``: parsing only, blobs read beforehand).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter, defaultdict

from patchtx.plan.syntax import check_file, language_of


def changed_files(repo: str, commits: int) -> list[tuple[str, str, str | None, str]]:
    """(commit, path, old blob or None, new blob) for every added or modified file of a parsed
    language in the newest ``commits`` non-merge commits."""
    out = subprocess.run(
        ["git", "-C", repo, "log", "--no-merges", "--no-renames", "--raw", "--no-abbrev", "-z",
         f"-n{commits}", "--format=%x00commit %H"],
        capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    found = []
    commit = ""
    fields = out.split("\0")
    index = 0
    while index < len(fields):
        field = fields[index].strip("\n")
        index += 1
        if field.startswith("commit "):
            commit = field.split()[1]
            continue
        if not field.startswith(":"):
            continue
        _, _, old, new, status = field[1:].split(" ")
        path = fields[index]
        index += 1
        if status[0] not in "AM" or language_of(path) is None:
            continue
        found.append((commit, path, None if status[0] == "A" else old, new))
    return found


def read_blobs(repo: str, shas: set[str]) -> dict[str, bytes]:
    proc = subprocess.run(["git", "-C", repo, "cat-file", "--batch"], input="\n".join(sorted(shas)).encode() + b"\n",
                          capture_output=True, check=True)
    data, blobs, at = proc.stdout, {}, 0
    while at < len(data):
        end = data.index(b"\n", at)
        sha, kind, size = data[at:end].split(b" ")
        start = end + 1
        blobs[sha.decode()] = data[start:start + int(size)]
        at = start + int(size) + 1
    return blobs


def judge(path: str, data: bytes) -> str:
    """An independent parser's word on the commit's file: "broken", "parses" or "no judge"
    (Node for JavaScript, as a script and as a module; PyYAML for YAML; ``bash -n``; rustfmt)."""
    import os
    import tempfile

    language = language_of(path)
    if language == "yaml":
        try:
            import yaml  # type: ignore[import-untyped]
        except ImportError:
            return "no judge"
        try:
            list(yaml.safe_load_all(data))
        except yaml.YAMLError:
            return "broken"
        return "parses"
    commands = {"javascript": [["node", "--check"], ["node", "--check"]],
                "bash": [["bash", "-n"]], "rust": [["rustfmt", "--edition", "2021", "--check"]]}.get(language or "")
    if commands is None:
        return "no judge"
    for number, command in enumerate(commands):
        suffix = ".mjs" if number == 1 else os.path.splitext(path)[1]
        with tempfile.NamedTemporaryFile(suffix=suffix) as handle:
            handle.write(data)
            handle.flush()
            try:
                done = subprocess.run([*command, handle.name], capture_output=True, timeout=60)
            except FileNotFoundError:
                return "no judge"
        if language == "rust":  # rustfmt --check: status 1 with a diff when it parses
            return "broken" if b"error" in done.stderr else "parses"
        if done.returncode == 0:
            return "parses"
    return "broken"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--commits", type=int, default=3000)
    parser.add_argument("--judge", action="store_true", help="re-parse each refused file independently")
    args = parser.parse_args()
    files = changed_files(args.repo, args.commits)
    blobs = read_blobs(args.repo, {sha for _, _, old, new in files for sha in (old, new) if sha})
    verdicts: dict[str, Counter[str]] = defaultdict(Counter)
    refusals = []
    started = time.perf_counter()
    for commit, path, old, new in files:
        before = None if old is None else blobs[old]
        result = check_file(path, before, blobs[new])
        verdicts[result.language or "?"][result.status] += 1
        if result.status == "errors":
            first = result.errors[0]
            refusals.append({"commit": commit[:12], "path": path, "line": first.line, "column": first.column,
                             "message": first.message, "new_file": old is None})
    seconds = time.perf_counter() - started
    if args.judge:
        by_key = {(c[:12], p): new for c, p, _, new in files}
        for refusal in refusals:
            refusal["judge"] = judge(refusal["path"], blobs[by_key[(refusal["commit"], refusal["path"])]])
    commits = len({commit for commit, *_ in files})
    summary: dict[str, Counter[str]] = defaultdict(Counter)
    for refusal in refusals:
        summary[language_of(refusal["path"]) or "?"][refusal.get("judge", "not judged")] += 1
    json.dump({"repo": args.repo, "commits_with_checked_files": commits, "files": len(files),
               "seconds": round(seconds, 3), "verdicts": {k: dict(v) for k, v in sorted(verdicts.items())},
               "refusals_judged": {k: dict(v) for k, v in sorted(summary.items())},
               "refusals": refusals}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
