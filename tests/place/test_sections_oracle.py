"""A success writes what the sections say: generated files and patches against a literal oracle.

Each case is a small file (loose look-alikes, blank and white-space lines, LF or CRLF endings, with
or without a final newline or a BOM), a real edit of it written as Codex sections (context, an
anchor, ``*** End of File``), then perturbed as models do (white space, curly quotes, a trailing
blank line, a wrong or dropped line, an anchor, a pure insertion). Whenever patchtx applies the
patch (``strict``: the sections as written), the file it writes must be the sections applied
literally at some placement the loose reading allows: every hunk after the one before and after
its innermost anchor, each old line equal to its file line in some pass (or Codex's retry without
a last blank old line), ``*** End of File`` at the end, context lines kept from the file, ``-``
lines gone, ``+`` lines where the hunk puts them, insertions without an anchor after everything.
The oracle enumerates; it knows nothing of passes' order, uniqueness or the repair step, so it can
only catch a write no reading of the sections allows (a lost line, a line put elsewhere).

(Found this way: a blank line left last in a file without a final newline was lost, an insertion
after an anchor on the last line was put after an insertion at the end. Files mixing lone CRs and
LFs are left out: docs/format.md names their known limit.)
"""

from __future__ import annotations

import random
import unicodedata
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from patchtx.api import plan_patch
from patchtx.errors import PatchtxError
from patchtx.place.normalise import PASSES, WHITESPACE
from patchtx.place.textfile import decode

from ..examples import examples

POOL = ["a", "b", "c", "a ", "  a", "\ta", "x = 'q'", "x = \u2018q\u2019", "y \u2013 z", "y - z", "", "  ",
        "def f():", "    return 1", "}", "caf\u00e9", "cafe\u0301", "d"]
NEW = ["n1", "n2", "a", "", "  b", "z", "    return 2", "b"]

Lines = list[tuple[str, str]]
Section = tuple[list[str], Lines, bool]  # anchors, lines, end of file


def _loose(a: str, b: str) -> bool:
    return any(key(a) == key(b) for key in PASSES)


def _sections(rng: random.Random, texts: list[str]) -> list[Section]:
    """A real edit of ``texts`` written as sections with some context, anchors and markers."""
    n = len(texts)
    delete = [rng.random() < 0.25 for _ in range(n)]
    inserts = {i: [rng.choice(NEW) for _ in range(rng.choice([1, 2]))] for i in range(n + 1)
               if rng.random() < 0.2}
    if not any(delete) and not inserts:
        inserts[rng.randrange(n + 1)] = [rng.choice(NEW)]
    changed = sorted({i for i in range(n) if delete[i]} | set(inserts))
    context = rng.choice([0, 1, 2])
    groups: list[list[int]] = []
    for position in changed:
        if groups and position - groups[-1][-1] <= 2 * context + 1:
            groups[-1].append(position)
        else:
            groups.append([position])
    sections: list[Section] = []
    previous_end = 0
    for group in groups:
        low = max(previous_end, group[0] - context)
        last = group[-1]
        high = min(n, (last + 1 if last < n and delete[last] else last) + context)
        lines: Lines = []
        for i in range(low, high + 1):
            if group[0] <= i <= last:
                lines += [("+", text) for text in inserts.get(i, [])]
            if i < high:
                lines.append(("-" if delete[i] else " ", texts[i]))
        anchors = [texts[rng.randrange(previous_end, low)]] if low > previous_end and rng.random() < 0.3 else []
        sections.append((anchors, lines, high == n and rng.random() < 0.4))
        previous_end = high
    return sections


def _perturbed(rng: random.Random, sections: list[Section]) -> list[Section]:
    index = rng.randrange(len(sections))
    anchors, lines, eof = sections[index]
    lines = list(lines)
    old = [i for i, (kind, _) in enumerate(lines) if kind != "+"]
    roll = rng.random()
    if roll < 0.3 and old:
        i = rng.choice(old)
        kind, text = lines[i]
        text = rng.choice([text + "  ", text.strip(), "    " + text, unicodedata.normalize("NFD", text),
                           text.replace("'", "\u2019").replace("-", "\u2014")])
        lines[i] = (kind, text)
    elif roll < 0.45:
        lines.append((rng.choice(" -"), ""))
    elif roll < 0.55 and old:
        lines[rng.choice(old)] = (lines[rng.choice(old)][0], rng.choice(POOL))
    elif roll < 0.65 and old and lines[old[0]][0] == " ":
        del lines[old[0]]
    elif roll < 0.75:
        anchors = [rng.choice(POOL)]
    elif roll < 0.85:
        eof = not eof
    elif roll < 0.9:
        lines = [line for line in lines if line[0] == "+"] or [("+", "n9")]
    out = list(sections)
    out[index] = (anchors, lines, eof)
    return out


def _without_trailing_blank(lines: Lines) -> Lines | None:
    old = [i for i, (kind, _) in enumerate(lines) if kind != "+"]
    new = [i for i, (kind, _) in enumerate(lines) if kind != "-"]
    if not old or lines[old[-1]][1] != "":
        return None
    drop_new = new[-1] if new and lines[new[-1]][1] == "" else None
    out: Lines = []
    for i, (kind, text) in enumerate(lines):
        in_old, in_new = kind != "+" and i != old[-1], kind != "-" and i != drop_new
        if in_old or in_new:
            out.append((" " if in_old and in_new else "-" if in_old else "+", text))
    return out


def literal_results(texts: list[str], sections: list[Section]) -> set[tuple[str, ...]]:
    """Every file the sections make when applied literally at some placement the loose reading
    allows (see the module)."""
    n = len(texts)
    results: set[tuple[str, ...]] = set()

    def walk(number: int, cursor: int, out: list[str], tail: list[str]) -> None:
        if number == len(sections):
            results.add(tuple(out + texts[cursor:] + tail))
            return
        anchors, written, eof = sections[number]
        anchors = [a.rstrip(WHITESPACE) for a in anchors if a.rstrip(WHITESPACE)]  # ('@@ ' is '@@')
        for lines in (lines for lines in (written, _without_trailing_blank(written)) if lines is not None):
            old = [text for kind, text in lines if kind != "+"]
            if not old and not anchors:
                walk(number + 1, cursor, out, tail + [text for _, text in lines])
                continue
            anchored = [a for a in range(cursor, n) if _loose(anchors[-1], texts[a])] if anchors else []
            if anchors and not anchored:
                continue
            low = min(anchored, default=cursor - 1) + 1
            if anchors and old and _loose(anchors[-1], old[0]):
                low -= 1  # (a hunk repeating its anchor line starts at it)
            if not old:
                starts = [a + 1 for a in anchored]
            else:
                starts = [s for s in range(low, n - len(old) + 1)
                          if all(_loose(line, texts[s + j]) for j, line in enumerate(old))
                          and (not eof or s + len(old) == n)]
            for start in starts:
                made, at = [], start
                for kind, text in lines:
                    if kind == " ":
                        made.append(texts[at])
                    elif kind == "+":
                        made.append(text)
                    at += kind != "+"
                walk(number + 1, at, out + texts[cursor:start] + made, tail)

    walk(0, 0, [], [])
    return results


def _patch(sections: list[Section]) -> str:
    body = []
    for anchors, lines, eof in sections:
        body += [f"@@ {anchor}" for anchor in anchors] or ["@@"]
        body += [kind + text for kind, text in lines]
        body += ["*** End of File"] if eof else []
    return "\n".join(["*** Begin Patch", "*** Update File: f.txt", *body, "*** End Patch", ""])


@settings(max_examples=examples(4000), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.randoms(use_true_random=False))
def test_a_success_writes_the_sections_applied_literally_somewhere(tmp_path: Path, rng: random.Random) -> None:
    texts = [rng.choice(POOL) for _ in range(rng.choice([0, 1, 2, 3, 5, 8]))]
    unterminated = bool(texts and texts[-1]) and rng.random() < 0.4  # (a blank last line needs its break)
    ending = rng.choice(["\n", "\n", "\r\n"])
    bom = "\ufeff" if rng.random() < 0.1 else ""
    data = (bom + "".join(text + ending for text in texts)).encode()
    if unterminated:
        data = data[: -len(ending)]
    assert decode(data, "f.txt").texts == texts
    sections = _sections(rng, texts)
    if rng.random() < 0.7:
        sections = _perturbed(rng, sections)
    (tmp_path / "f.txt").write_bytes(data)
    try:
        planned = plan_patch(_patch(sections), tmp_path, strict=True)
    except PatchtxError:
        return  # (refusing is always allowed here)
    after = next((target.after for target in planned.targets if target.path == "f.txt"), data)
    assert after is not None
    written = decode(after, "f.txt")
    assert written.bom == bool(bom)
    assert tuple(written.texts) in literal_results(texts, sections), (data, _patch(sections), after)
