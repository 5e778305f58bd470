"""The snippet hunt (issue 44): real files, real edits, each written as a lazy snippet in the shapes
vendor prompts ask for, sent to the MCP server's ``edit_file`` tool function
(``agents.tool_call.edit_file_call``, what ``patchtx mcp`` runs), and the file it leaves
compared with the intended file (the oracle: the edit made on the file's lines, by this script).

Each run is ``right`` (the intended file written), ``refused`` (an error, the file untouched) or
``wrong`` (anything else). The goal: 0 wrong, and as many right as the text decides.

**Edits** (``KINDS``): ``body`` (a line inside a function or section changed), ``delete`` (a whole
function or section removed), ``new`` (a function or section added after one), ``import`` (an import
line added after the last one), ``two`` (two lines changed in places at least 20 lines apart).
**Shapes** (``SHAPES``), how much of the intended file the snippet shows around each change:
``ctx1`` and ``ctx3`` (1 or 3 lines of context each side), ``function`` (the whole enclosing
function or section, its neighbours for an added or removed one), ``sig_inner`` (the signature, a
placeholder, the changed lines, a placeholder), ``before_only`` (3 lines before the change, none
after). Placeholders stand for every run left out (at the edges too), in four wordings
(``WORDINGS``), written in the file's comment syntax (a bare ``...`` line is code in Python and
text in Markdown: there it is written as a comment, ``# ...``).

    .venv/bin/python benchmarks/snippet_hunt.py src/patchtx docs tests/plan/syntax/corpus \\
        [--repo /work/.mirror/expressjs+express/repo] [--files 40] [--json out.json]

tests/benchmarks/test_snippet_hunt.py runs a small sample and asserts 0 wrong.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from patchtx.agents.tool_call import edit_file_call

LANGUAGES = {".py": "python", ".js": "js", ".ts": "js", ".rs": "rust", ".md": "markdown"}
KINDS = ("body", "delete", "new", "import", "two")
SHAPES = ("ctx1", "ctx3", "function", "sig_inner", "before_only")
WORDINGS = ("... existing code ...", "... rest of the code unchanged ...", "existing code ...", "...")
"""Cursor's and Morph's, a sentence, a trailing ellipsis, and a bare ellipsis: written ``# ...``
(``<!-- ... -->``) where a bare ``...`` line is code or text (Python, Markdown)."""
MAX_LINES = 1500
FUNCTION = re.compile(r"\b(?:def|fn|function)\b|=>|^#")


# -- the files ------------------------------------------------------------------------------------------
def files_on_disk(paths: list[str]) -> list[tuple[str, str]]:
    """(name, text) of each file of a known language under ``paths``."""
    out = []
    for given in paths:
        root = Path(given)
        found = [root] if root.is_file() else sorted(root.rglob("*"))
        for path in found:
            if path.is_file() and path.suffix in LANGUAGES and "/.venv/" not in str(path):
                try:
                    out.append((str(path), path.read_text("utf-8")))
                except UnicodeDecodeError:
                    continue
    return out


def files_in_repo(git_dir: str) -> list[tuple[str, str]]:
    """(name, text) of each file of a known language at a fetched repository's HEAD."""
    names = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", "HEAD"],
                           capture_output=True, text=True, check=True).stdout.split("\n")
    out = []
    for name in names:
        if Path(name).suffix in LANGUAGES and not name.startswith(("test/", "tests/", "examples/")):
            shown = subprocess.run(["git", "--git-dir", git_dir, "show", f"HEAD:{name}"],
                                   capture_output=True, check=True).stdout
            try:
                out.append((f"{git_dir}:{name}", shown.decode("utf-8")))
            except UnicodeDecodeError:
                continue
    return out


# -- the structure of a file: its blocks (functions, sections) -------------------------------------------
def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def blocks(lines: list[str], language: str) -> list[tuple[int, int]]:
    """(first, end) of each function-like block: a header followed by lines indented deeper (and
    a closing bracket at the header's indentation); in Markdown, a heading and the lines to the
    next heading of its level or above."""
    out = []
    if language == "markdown":
        heads = [i for i, line in enumerate(lines) if line.startswith("#") and " " in line]
        for n, head in enumerate(heads):
            end = heads[n + 1] if n + 1 < len(heads) else len(lines)
            while end > head + 1 and not lines[end - 1].strip():
                end -= 1
            if end - head >= 3:
                out.append((head, end))
        return out
    for head, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith(("#", "//", "/*", "*", "@", ")", "}", "]")):
            continue
        if language == "python" and not line.lstrip().startswith(("def ", "class ", "async def ")):
            continue
        if language != "python" and not line.rstrip().endswith("{"):
            continue
        level = indent(line)
        end = head + 1
        while end < len(lines) and (not lines[end].strip() or indent(lines[end]) > level):
            end += 1
        if language != "python":
            if end < len(lines) and indent(lines[end]) == level and lines[end].strip()[:1] in "})]":
                end += 1
            else:
                continue
        while end > head + 1 and not lines[end - 1].strip():
            end -= 1
        if end - head >= 4:
            out.append((head, end))
    return out


def comment(language: str, text: str) -> str:
    if language == "python":
        return f"# {text}"
    if language == "markdown":
        return f"<!-- {text} -->"
    return f"// {text}"


def placeholder(language: str, wording: str, indentation: str) -> str:
    if wording == "..." and language in ("js", "rust"):
        return indentation + "..."
    if language == "markdown":
        wording = wording.replace("code", "content")
    return indentation + comment(language, wording)


# -- the edits: the intended file, and the changed ranges of its lines -----------------------------------
def changed_line(line: str, language: str, tag: str) -> str | None:
    stripped = line.rstrip()
    if not stripped.strip() or stripped.endswith(("\\", "`", '"""', "'''")) or "//" in stripped or "#" in stripped:
        return None
    if language == "markdown":
        return stripped + f" (revised {tag})"
    return stripped + ("  " if language == "python" else " ") + comment(language, f"tuned {tag}")


def new_block(language: str, number: int, level: str) -> list[str]:
    if language == "python":
        return [f"{level}def added_helper_{number}(value):", f"{level}    return value * {number}"]
    if language == "rust":
        return [f"{level}fn added_helper_{number}(value: u32) -> u32 {{", f"{level}    value * {number}", f"{level}}}"]
    if language == "markdown":
        return [f"## Added section {number}", "", f"A paragraph added by edit {number}."]
    return [f"{level}function addedHelper{number}(value) {{", f"{level}  return value * {number};", f"{level}}}"]


def import_line(language: str, number: int) -> str:
    return {"python": f"import zlib as added_{number}", "rust": f"use std::collections::BTreeMap as AddedMap{number};",
            "markdown": f"See also [part {number}](part-{number}.md).",
            "js": f"const added{number} = require('./added-{number}');"}[language]


def body_candidates(lines: list[str], found: list[tuple[int, int]], language: str) -> list[int]:
    return [at for first, end in found for at in range(first + 2, end - 1)
            if changed_line(lines[at], language, "x") is not None]


def edit(kind: str, lines: list[str], language: str,
         rng: random.Random) -> tuple[list[str], list[tuple[int, int]]] | None:
    """The intended lines and the changed ranges in them (a removal: an empty range where it
    was), or None when the file has no place for this edit."""
    found = blocks(lines, language)
    if kind == "body":
        places = body_candidates(lines, found, language)
        if not places:
            return None
        at = rng.choice(places)
        return lines[:at] + [str(changed_line(lines[at], language, "1"))] + lines[at + 1:], [(at, at + 1)]
    if kind == "two":
        places = body_candidates(lines, found, language)
        pairs = [(a, b) for a in places for b in places if b - a >= 20]
        if not pairs:
            return None
        a, b = rng.choice(pairs)
        out = list(lines)
        out[a], out[b] = str(changed_line(lines[a], language, "1")), str(changed_line(lines[b], language, "2"))
        return out, [(a, a + 1), (b, b + 1)]
    if kind == "delete":
        whole = [(first, end) for first, end in found if indent(lines[first]) == 0 and first > 0
                 and (first < 1 or not lines[first - 1].lstrip().startswith("@"))]
        if not whole:
            return None
        first, end = rng.choice(whole)
        while end < len(lines) and not lines[end].strip():
            end += 1
        return lines[:first] + lines[end:], [(first, first)]
    if kind == "new":
        whole = [(first, end) for first, end in found if indent(lines[first]) == 0]
        if not whole:
            return None
        first, end = rng.choice(whole)
        gap = 2 if language == "python" else 1
        added = [""] * gap + new_block(language, 1, "")
        return lines[:end] + added + lines[end:], [(end + gap, end + len(added))]
    # import
    if language == "markdown":
        heads = [i for i, line in enumerate(lines[:40]) if line.startswith("# ")]
        if not heads:
            return None
        at = heads[0] + 1
        return lines[:at] + ["", import_line(language, 1)] + lines[at:], [(at + 1, at + 2)]
    prefixes = {"python": ("import ", "from "), "rust": ("use ",), "js": ("import ", "const ")}[language]
    imports = [i for i, line in enumerate(lines[:80]) if line.startswith(prefixes) and line.rstrip().endswith(
        (";", ")") if language != "python" else ("",)) and "(" not in line[: 6]]
    if language == "python":
        imports = [i for i in imports if not lines[i].rstrip().endswith(("(", "\\"))]
    if not imports:
        return None
    at = imports[-1] + 1
    return lines[:at] + [import_line(language, 1)] + lines[at:], [(at, at + 1)]


# -- the snippets --------------------------------------------------------------------------------------------
def shown_ranges(shape: str, intended: list[str], regions: list[tuple[int, int]],
                 language: str) -> list[tuple[int, int]] | None:
    """The ranges of the intended file's lines the snippet shows, in order, overlaps merged, with
    the lines ``sig_inner`` skips between a signature and its change as a break."""
    n = len(intended)
    found = blocks(intended, language)
    out: list[tuple[int, int]] = []
    for start, end in regions:
        if shape in ("ctx1", "ctx3"):
            k = 1 if shape == "ctx1" else 3
            out.append((max(0, start - k), min(n, end + k)))
        elif shape == "before_only":
            out.append((max(0, start - 3), end))
        elif shape == "function":
            inside = [(f, e) for f, e in found if f <= start and end <= e and (f, e) != (start, end)]
            if inside:  # the enclosing function: the outermost one (a method's class aside)
                functions = [(f, e) for f, e in inside if FUNCTION.search(intended[f])] or inside
                out.append(min(functions, key=lambda block: block[1] - block[0]) if language == "python"
                           else max(functions, key=lambda block: block[1] - block[0]))
            else:  # added or removed: the functions around it
                before = [(f, e) for f, e in found if e <= start]
                after = [(f, e) for f, e in found if f >= end]
                lo = max(before, key=lambda block: (block[1], -block[0]))[0] if before else start - 3
                hi = min(after, key=lambda block: (block[0], -block[1]))[1] if after else end + 3
                out.append((max(0, min(lo, start - 1)), min(n, max(hi, end + 1))))
        else:  # sig_inner
            inside = [(f, e) for f, e in found if f < start and end <= e]
            if not inside:
                return None
            f, _ = max(inside)
            out.append((f, f + 1))
            out.append((start, end))
    out.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in out:
        if merged and lo <= merged[-1][1] and shape != "sig_inner":
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    return merged


def snippet(intended: list[str], ranges: list[tuple[int, int]], language: str, wording: str) -> str:
    out: list[str] = []
    at = 0
    for lo, hi in ranges:
        if lo > at:
            nearby = next((line for line in intended[lo:hi] if line.strip()), "")
            out.append(placeholder(language, wording, nearby[: indent(nearby)]))
        out.extend(intended[lo:hi])
        at = max(at, hi)
    if at < len(intended):
        last = next((line for line in reversed(intended[:at]) if line.strip()), "")
        out.append(placeholder(language, wording, last[: indent(last)]))
    return "\n".join(out) + "\n"


# -- the run ---------------------------------------------------------------------------------------------
def run_case(root: Path, name: str, original: str, wanted: str, code_edit: str) -> tuple[str, str]:
    """('right' | 'refused' | 'wrong', the error kind or '') of one snippet through edit_file."""
    target = root / name
    target.write_text(original, "utf-8")
    outcome = edit_file_call({"target_file": name, "code_edit": code_edit}, str(root),
                             host={"durable": False, "history_count": 1})
    after = target.read_text("utf-8")
    if not outcome.payload.get("ok"):
        return ("refused" if after == original else "wrong"), outcome.payload["error"]["kind"]
    return ("right" if after == wanted else "wrong"), ""


def hunt(corpus: list[tuple[str, str]], *, files: int, seed: int = 44,
         wordings: tuple[str, ...] = WORDINGS, show_wrong: bool = True) -> dict[str, Any]:
    rng = random.Random(seed)
    chosen = [(name, text) for name, text in corpus if 20 <= text.count("\n") <= MAX_LINES]
    rng.shuffle(chosen)
    table: Counter[tuple[str, str, str]] = Counter()
    by_language: Counter[tuple[str, str]] = Counter()
    refusals: Counter[str] = Counter()
    wrong: list[dict[str, str]] = []
    used = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, text in chosen:
            if used >= files:
                break
            suffix = Path(name.split(":")[-1]).suffix
            language = LANGUAGES[suffix]
            lines = text.split("\n")
            if lines[-1] == "":
                lines.pop()
            used += 1
            for kind in KINDS:
                made = edit(kind, lines, language, rng)
                if made is None:
                    continue
                intended, regions = made
                wanted = "\n".join(intended) + "\n"
                for shape in SHAPES:
                    ranges = shown_ranges(shape, intended, regions, language)
                    if ranges is None:
                        continue
                    for wording in wordings:
                        code_edit = snippet(intended, ranges, language, wording)
                        verdict, error = run_case(root, f"f{suffix}", text if text.endswith("\n") else text + "\n",
                                                  wanted, code_edit)
                        table[(shape, kind, verdict)] += 1
                        by_language[(language, verdict)] += 1
                        if error:
                            refusals[error] += 1
                        if verdict == "wrong":
                            wrong.append({"file": name, "kind": kind, "shape": shape, "wording": wording,
                                          "snippet": code_edit})
    total = sum(table.values())
    right = sum(count for (_, _, verdict), count in table.items() if verdict == "right")
    return {"files": used, "cases": total, "right": right,
            "wrong": sum(count for (_, _, verdict), count in table.items() if verdict == "wrong"),
            "right_share": right / total if total else 0.0,
            "table": {f"{shape}/{kind}/{verdict}": count for (shape, kind, verdict), count in sorted(table.items())},
            "by_language": {f"{lang}/{verdict}": count for (lang, verdict), count in sorted(by_language.items())},
            "refusals": dict(refusals), "wrong_cases": wrong[:20] if show_wrong else []}


def render(report: dict[str, Any]) -> str:
    rows = ["| shape | edit | right | refused | wrong |", "|---|---|---:|---:|---:|"]
    cells: dict[tuple[str, str], Counter[str]] = {}
    for key, count in report["table"].items():
        shape, kind, verdict = key.split("/")
        cells.setdefault((shape, kind), Counter())[verdict] += count
    for shape in SHAPES:
        for kind in KINDS:
            cell = cells.get((shape, kind))
            if cell:
                rows.append(f"| {shape} | {kind} | {cell['right']} | {cell['refused']} | {cell['wrong']} |")
        total = sum((cells.get((shape, kind), Counter()) for kind in KINDS), Counter())
        share = total["right"] / max(1, sum(total.values()))
        rows.append(f"| **{shape}** | all | {total['right']} | {total['refused']} | {total['wrong']} "
                    f"({share:.0%} right) |")
    rows.append(f"\n{report['cases']} snippets from {report['files']} files: {report['right']} right "
                f"({report['right_share']:.1%}), {report['wrong']} wrong.")
    rows.append(f"By language: {report['by_language']}")
    rows.append(f"Refusals by kind: {report['refusals']}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="files or folders of files to edit")
    parser.add_argument("--repo", action="append", default=[], help="a fetched repository's git folder")
    parser.add_argument("--files", type=int, default=40, help="how many files to take")
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--json", help="write the report here")
    arguments = parser.parse_args(argv)
    corpus = files_on_disk(arguments.paths)
    for repo in arguments.repo:
        corpus += files_in_repo(repo)
    report = hunt(corpus, files=arguments.files, seed=arguments.seed)
    print(render(report))
    for case in report["wrong_cases"][:5]:
        print(f"\nWRONG {case['file']} {case['kind']} {case['shape']} {case['wording']!r}:\n{case['snippet']}")
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(report, indent=1) + "\n")
    return 1 if report["wrong"] else 0


if __name__ == "__main__":
    os.environ.setdefault("PATCHTX_STATE_HOME", tempfile.mkdtemp())
    sys.exit(main())
