"""The peers' conformance suite: cases of our own that exercise what git's ``t/t41*-apply-*.sh``
and GNU patch's ``tests/`` exercise, run with patchtx, ``git apply`` and GNU ``patch`` alike.

Each file in ``cases/`` translates one source test (named in its title) into cases. A case is a
``## title`` section holding: ``args:`` (``git apply``'s spelling: ``-pN``, ``-R``,
``--unidiff-zero``), fenced blocks ``before PATH [755] [no-eol] [base64]`` (the tree; ``base64``:
the block holds a binary file's bytes in base64), ``patch`` (one or
more: applied together, as ``git apply p1 p2``), and the expectation: ``after PATH [755]
[no-eol]`` and ``gone PATH`` (the rest of the tree stays as it was), or ``refused`` (the tree stays
byte for byte as it was, and the applier exits non-zero). A line ``patchtx differs: REASON``
marks a documented difference: patchtx refuses the case cleanly. A line
``skip REASON: "source test"`` counts a source test that has no case here, by reason.

``python -m tests.peers.suite`` prints the counts of every applier (``-v``: every case that is
not passed).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

CASES = Path(__file__).with_name("cases")
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.S | re.M)

Tree = dict[str, tuple[bytes, bool]]
"""path -> (bytes, executable)"""

OUTCOMES = ("pass", "refused", "wrong", "accepted", "partial", "differs")
"""pass: as the source test expects. refused: a change expected, none made, non-zero exit.
wrong: exit 0 with a tree other than the expected one. accepted: exit 0 where a refusal is
expected (the tree unchanged or not). partial: a non-zero exit that changed the tree.
differs: patchtx refused cleanly where a documented difference says it does."""


@dataclass
class Case:
    source: str
    """The cases file (one source test)."""
    title: str
    line: int
    args: list[str] = field(default_factory=list)
    before: Tree = field(default_factory=dict)
    patches: list[bytes] = field(default_factory=list)
    after: Tree = field(default_factory=dict)
    gone: list[str] = field(default_factory=list)
    refused: bool = False
    differs: str | None = None

    @property
    def id(self) -> str:
        return f"{self.source}:{self.line}"

    def expected(self) -> Tree | None:
        """The tree the source test expects; None: a refusal (the tree as it was)."""
        if self.refused:
            return None
        tree = dict(self.before)
        for path in self.gone:
            tree.pop(path, None)
        tree.update(self.after)
        return tree


def _info(info: str) -> tuple[str, str, set[str]]:
    """A fence's kind, path (which may hold spaces and tabs) and flags (``755``, ``no-eol``)."""
    kind, _, rest = info.partition(" ")
    flags: set[str] = set()
    while (word := rest.rpartition(" ")[2]) in ("755", "no-eol", "base64") and rest != word:
        flags.add(word)
        rest = rest[: -len(word) - 1]
    return kind, rest, flags


def _block(flags: set[str], body: str) -> tuple[bytes, bool]:
    if "base64" in flags:  # (a binary file's bytes)
        return base64.b64decode(body), "755" in flags
    if "no-eol" in flags:
        body = body[:-1]
    return body.encode("utf-8"), "755" in flags


def load(path: Path) -> tuple[list[Case], Counter[str]]:
    """The cases of one file, and its skipped source tests counted by reason."""
    text = path.read_text(encoding="utf-8")
    cases: list[Case] = []
    skipped: Counter[str] = Counter()
    heads = [(m.start(), m.group(1).strip()) for m in re.finditer(r"^## (.+)$", text, re.M)]
    for match in re.finditer(r"^skip ([^:\n]+):", text, re.M):
        skipped[match.group(1).strip()] += 1
    for number, (start, title) in enumerate(heads):
        end = heads[number + 1][0] if number + 1 < len(heads) else len(text)
        section = text[start:end]
        case = Case(path.stem, title, text.count("\n", 0, start) + 1)
        outside = _FENCE.sub("", section)
        if (args := re.search(r"^args:(.*)$", outside, re.M)) is not None:
            case.args = args.group(1).split()
        if (differs := re.search(r"^patchtx differs: (.+)$", outside, re.M)) is not None:
            case.differs = differs.group(1).strip()
        for fence in _FENCE.finditer(section):
            kind, name, flags = _info(fence.group(1))
            body = fence.group(2)
            if kind == "before":
                case.before[name] = _block(flags, body)
            elif kind == "patch":
                case.patches.append(body.encode("utf-8"))
            elif kind == "after":
                case.after[name] = _block(flags, body)
            elif kind == "gone":
                case.gone.append(name)
            elif kind == "refused":
                case.refused = True
            else:
                raise ValueError(f"{path.name}: unknown block '{kind}' in '{title}'")
        if not case.patches or not (case.refused or case.after or case.gone):
            raise ValueError(f"{path.name}: '{title}' needs a patch and an expectation")
        cases.append(case)
    return cases, skipped


def all_cases() -> tuple[list[Case], Counter[str]]:
    cases: list[Case] = []
    skipped: Counter[str] = Counter()
    for path in sorted(CASES.glob("*.md")):
        more, skips = load(path)
        cases += more
        skipped += skips
    return cases, skipped


# -- trees ---------------------------------------------------------------------------------------
def write_tree(root: Path, tree: Tree) -> None:
    for name, (data, executable) in tree.items():
        full = root / name
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(data)
        full.chmod(0o755 if executable else 0o644)


def read_tree(root: Path) -> Tree:
    """Every file under ``root`` but patchtx's state folder (an empty folder is no file)."""
    out: Tree = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".patchtx"]
        for name in names:
            full = Path(folder, name)
            info = full.lstat()
            data = os.readlink(full).encode() if stat.S_ISLNK(info.st_mode) else full.read_bytes()
            out[full.relative_to(root).as_posix()] = (data, bool(info.st_mode & stat.S_IXUSR))
    return out


# -- appliers ------------------------------------------------------------------------------------
def _strip(args: list[str]) -> int | None:
    for arg in args:
        if arg.startswith("-p"):
            return int(arg[2:])
    return None


def run_patchtx(case: Case, root: Path, files: list[Path]) -> bool:
    from patchtx import apply_patch
    from patchtx.errors import PatchtxError

    texts = [data.decode("utf-8", "surrogateescape") for data in case.patches]
    try:
        apply_patch(texts if len(texts) > 1 else texts[0], root, strip=_strip(case.args),
                    reverse="-R" in case.args, unidiff_zero="--unidiff-zero" in case.args,
                    durable=False, history_count=0)
    except PatchtxError as error:
        if error.kind == "internal_error":
            raise
        return False
    return True


def run_git(case: Case, root: Path, files: list[Path]) -> bool:
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(root.parent), "LC_ALL": "C"}
    done = subprocess.run(["git", "apply", *case.args, *map(str, files)], cwd=root, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True)
    return done.returncode == 0


def _prefixed(patch: bytes) -> bool:
    """Whether every ``---``/``+++`` name of a traditional diff has a folder to strip."""
    names = re.findall(rb"^(?:---|\+\+\+) (\S+)", patch, re.M)
    return all(b"/" in name for name in names if name != b"/dev/null")


def run_gnu(case: Case, root: Path, files: list[Path]) -> bool:
    # -p1 unless given (git apply's default); -N refuses what looks applied already (never
    # reverses on its own); rejects and backups are not written; --batch asks nothing.
    args = [a for a in case.args if a != "--unidiff-zero"]
    if _strip(args) is None:  # (GNU's default takes whole names; -p1 is git's default)
        args.append("-p1" if all(_prefixed(data) for data in case.patches) else "-p0")
    ok = True
    for file in files:
        done = subprocess.run(["patch", "--batch", "-N", "-s", "--no-backup-if-mismatch",
                               "--reject-file=-", *args, "-i", str(file)], cwd=root,
                              stdin=subprocess.DEVNULL, capture_output=True)
        ok = ok and done.returncode == 0
    return ok


APPLIERS = {"patchtx": run_patchtx, "git apply": run_git, "GNU patch": run_gnu}


def available() -> dict[str, object]:
    found: dict[str, object] = {"patchtx": run_patchtx}
    if shutil.which("git"):
        found["git apply"] = run_git
    if shutil.which("patch") and b"GNU patch" in subprocess.run(
            ["patch", "--version"], capture_output=True).stdout:
        found["GNU patch"] = run_gnu
    return found


def outcome(case: Case, applier: str, scratch: Path | None = None) -> str:
    """Run ``case`` with ``applier`` in a fresh tree and classify the result (OUTCOMES)."""
    with tempfile.TemporaryDirectory(dir=scratch) as temp:
        top = Path(temp)
        root = top / "tree"
        root.mkdir()
        write_tree(root, case.before)
        files = []
        for number, data in enumerate(case.patches):
            files.append(top / f"{number}.patch")
            files[-1].write_bytes(data)
        ok = APPLIERS[applier](case, root, files)  # type: ignore[operator]
        tree = read_tree(root)
    expected = case.expected()
    if not ok:
        if tree != case.before:
            return "partial"
        if expected is None:
            return "pass"
        return "differs" if applier == "patchtx" and case.differs else "refused"
    if expected is None:
        return "accepted"
    return "pass" if tree == expected else "wrong"


def main(argv: list[str]) -> int:
    cases, skipped = all_cases()
    appliers = available()
    verbose = "-v" in argv
    print(f"{len(cases)} cases from {len(list(CASES.glob('*.md')))} source tests; "
          f"{sum(skipped.values())} source tests skipped:")
    for reason, count in skipped.most_common():
        print(f"  {count:4}  {reason}")
    for name in appliers:
        counts = Counter(outcome(case, name) for case in cases)
        print(f"{name:10} " + ", ".join(f"{kind} {counts[kind]}" for kind in OUTCOMES
                                        if counts[kind] or kind in ("pass", "wrong")))
        if verbose:
            for case in cases:
                result = outcome(case, name)
                if result != "pass":
                    print(f"    {result:8} {case.id} {case.title}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
