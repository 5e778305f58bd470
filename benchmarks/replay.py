"""Replay real history as patches: does an applier edit exactly where each commit did?

For each non-merge commit of the given git repositories (newest first), the change against its
parent is turned into a patch in each variant, applied to a fresh temporary copy of the touched
files at the parent, and the result compared byte for byte with the commit:

- right:   success, and every touched path is byte-identical to the commit;
- refused: an error, and the tree is unchanged;
- wrong:   success, but some path differs from the commit (or an extra file appeared);
- torn:    an error, and the tree changed.

Codex variants (`*** Begin Patch`), from `git diff -U<n>` of each file:
  ctx3         3 lines of context, bare `@@`
  ctx3-anchor  3 lines of context, `@@ <git's function line>` where that text is a whole line of the
               old file between the previous section's end and this section's start, else `@@`
  ctx1         1 line of context, bare `@@`
  ctx1-anchor  1 line of context, anchors as above
With `--format git` the patches are plain `git diff -U3` / `-U1` output (variants git-U3, git-U1),
for unified-diff appliers (`--applier 'git apply {patch}'`, `--applier 'patch -p1 -i {patch}'`).

Whether a patch is *determined* (exactly one placement) is judged by the independent oracle in
replay_oracle.py. See benchmarks/README.md, section "Replay", for usage.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay_oracle import (  # noqa: E402
    FileOp,
    Section,
    count_placements,
    is_determined,
    parse_patch,
    render_patch,
    split_lines,
)

CODEX_VARIANTS = ("ctx3", "ctx3-anchor", "ctx1", "ctx1-anchor")
GIT_VARIANTS = ("git-U3", "git-U1")
OUTCOMES = ("right", "refused", "wrong", "torn")
HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
ZERO_SHA = "0" * 40


# --------------------------------------------------------------------------- reading git history


class Git:
    """A repository (bare or not) read through git plumbing; blobs through one `cat-file --batch`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._batch: subprocess.Popen[bytes] | None = None

    def run(self, *args: str) -> bytes:
        return subprocess.run(["git", "-C", self.path, "-c", "core.quotepath=off", *args],
                              check=True, capture_output=True).stdout

    def blob(self, sha: str) -> bytes:
        if self._batch is None:
            self._batch = subprocess.Popen(["git", "-C", self.path, "cat-file", "--batch"],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._batch.stdin is not None and self._batch.stdout is not None
        self._batch.stdin.write(sha.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) < 3:
            raise KeyError(sha)
        data = self._batch.stdout.read(int(header[2]))
        self._batch.stdout.read(1)
        return data

    def close(self) -> None:
        if self._batch is not None:
            assert self._batch.stdin is not None
            self._batch.stdin.close()
            self._batch.wait()
            self._batch = None

    def commits(self, rev: str) -> Iterator[tuple[str, str]]:
        """(commit, parent) of every non-merge, non-root commit reachable from ``rev``, newest first."""
        for line in self.run("rev-list", "--no-merges", "--parents", rev).decode().splitlines():
            shas = line.split()
            if len(shas) == 2:
                yield shas[0], shas[1]


@dataclass
class FileChange:
    status: str  # A, D, M or R
    old_path: str | None
    new_path: str | None
    old_sha: str
    new_sha: str
    old_text: str | None = None
    new_text: str | None = None


@dataclass
class Commit:
    repo: str
    sha: str
    parent: str
    changes: list[FileChange]
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def before(self) -> dict[str, str]:
        return {c.old_path: c.old_text for c in self.changes if c.old_path and c.old_text is not None}

    @property
    def after(self) -> dict[str, str | None]:
        """Every touched path: its text in the commit, or None where the commit has no file."""
        result: dict[str, str | None] = {c.old_path: None for c in self.changes if c.old_path}
        result.update({c.new_path: c.new_text for c in self.changes if c.new_path})
        return result


def _decode_text(data: bytes) -> tuple[str | None, str]:
    """The blob as text, or None and why it is not usable as a patch's text."""
    if b"\0" in data:
        return None, "binary"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    if "\r" in text:
        # A CR is kept by patchtx per line but the patch lines would carry it too; the harness
        # measures placement, so such files are left out rather than half-modelled.
        return None, "CR line endings"
    return text, ""


def read_commit(git: Git, sha: str, parent: str, max_files: int) -> Commit:
    """The commit's usable file changes; each unusable file is counted in ``skipped`` by reason."""
    raw = git.run("diff-tree", "-r", "-z", "-M", "--no-commit-id", "--raw", parent, sha).decode(
        "utf-8", "surrogateescape")
    fields = raw.split("\0")
    commit = Commit(git.path, sha, parent, [])
    i = 0
    while i < len(fields) - 1:
        meta = fields[i].lstrip(":").split()
        old_mode, new_mode, old_sha, new_sha, status = meta[0], meta[1], meta[2], meta[3], meta[4][0]
        paths = [fields[i + 1]] + ([fields[i + 2]] if status in "RC" else [])
        i += 1 + len(paths)
        if status not in "ADMR":
            commit.skipped[f"status {status}"] += 1
            continue
        if any(mode not in ("000000", "100644", "100755") for mode in (old_mode, new_mode)):
            commit.skipped["symlink or submodule"] += 1
            continue
        if any("\udc80" <= ch <= "\udcff" for p in paths for ch in p):
            commit.skipped["path not UTF-8"] += 1
            continue
        change = FileChange(status, None if status == "A" else paths[0],
                            None if status == "D" else paths[-1], old_sha, new_sha)
        reason = ""
        if change.old_path is not None:
            change.old_text, reason = _decode_text(git.blob(old_sha))
        if not reason and change.new_path is not None:
            change.new_text, reason = _decode_text(git.blob(new_sha))
        if not reason and status in "MR":
            old, new = change.old_text or "", change.new_text or ""
            if old.endswith("\n") != new.endswith("\n"):
                reason = "final newline added or removed"  # not expressible in the Codex format
            elif old == new and status == "M":
                reason = "mode change only"
        if not reason and status == "A" and change.new_text and not change.new_text.endswith("\n"):
            reason = "added without final newline"  # an Add always writes one
        if reason:
            commit.skipped[reason] += 1
            continue
        commit.changes.append(change)
    if len(commit.changes) > max_files:
        commit.skipped["too many files"] += 1
        commit.changes = []
    return commit


# --------------------------------------------------------------------------- building patches


@dataclass
class GitHunk:
    old_start: int  # 1-based, as git prints it (0 for an empty old side)
    old_count: int
    function_line: str
    body: list[str]


def git_hunks(git: Git, old_sha: str, new_sha: str, context: int) -> list[GitHunk]:
    """The hunks of `git diff -U<context>` between two blobs (`\\ No newline` lines dropped: the
    final-newline state is the same on both sides, see read_commit). Git cuts a long function line
    to 80 bytes (a git that cuts inside a UTF-8 sequence gives surrogates here): either way the cut
    text equals no whole line, so it is no anchor."""
    out = git.run("diff", "--no-color", "--no-ext-diff", "--no-textconv", f"-U{context}",
                  old_sha, new_sha).decode("utf-8", "surrogateescape")
    hunks: list[GitHunk] = []
    lines = out.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        match = HUNK_HEADER.match(line)
        if match:
            count = 1 if match.group(2) is None else int(match.group(2))
            hunks.append(GitHunk(int(match.group(1)), count, match.group(5), []))
        elif hunks and line[:1] in (" ", "-", "+"):
            hunks[-1].body.append(line)
    return hunks


def codex_sections(old_lines: list[str], hunks: list[GitHunk], anchors: bool) -> list[Section]:
    sections = []
    previous_end = 0
    for hunk in hunks:
        start = max(hunk.old_start - 1, 0) if hunk.old_count else hunk.old_start
        end = start + hunk.old_count
        anchor = None
        text = hunk.function_line
        if anchors and text and text == text.rstrip() and text in old_lines[previous_end:start]:
            anchor = text
        end_of_file = hunk.old_count > 0 and end == len(old_lines)
        sections.append(Section(anchor, tuple(hunk.body), end_of_file))
        previous_end = end
    return sections


def codex_patch(git: Git, commit: Commit, context: int, anchors: bool) -> str:
    ops = []
    for change in commit.changes:
        if change.status == "A":
            assert change.new_path is not None and change.new_text is not None
            ops.append(FileOp("add", change.new_path, add_lines=split_lines(change.new_text)))
        elif change.status == "D":
            assert change.old_path is not None
            ops.append(FileOp("delete", change.old_path))
        elif change.status == "R" and change.old_text == "" and change.new_text == "":
            # An empty file renamed: an Update needs a section, and an empty file has no line to
            # put in one, so the format can only say it as a Delete and an empty Add.
            assert change.old_path is not None and change.new_path is not None
            ops += [FileOp("delete", change.old_path), FileOp("add", change.new_path)]
        else:
            assert change.old_path is not None and change.old_text is not None
            hunks = git_hunks(git, change.old_sha, change.new_sha, context)
            sections = codex_sections(split_lines(change.old_text), hunks, anchors)
            if not sections and change.old_text:
                # A pure rename: one context-only section on the file's first lines.
                first = split_lines(change.old_text)[:max(context, 1)]
                sections = [Section(None, tuple(" " + line for line in first), False)]
            move = change.new_path if change.status == "R" else None
            ops.append(FileOp("update", change.old_path, move_to=move, sections=sections))
    return render_patch(ops)


def git_patch(git: Git, commit: Commit, context: int) -> str:
    paths = sorted({p for c in commit.changes for p in (c.old_path, c.new_path) if p})
    return git.run("--literal-pathspecs", "diff", "--no-color", "--no-ext-diff", "--no-textconv",
                   "-M", f"-U{context}", commit.parent, commit.sha, "--", *paths).decode(
                       "utf-8", "replace")  # only a cut function line, which appliers ignore, can be hit


def build_patches(git: Git, commit: Commit, form: str) -> dict[str, str]:
    if form == "git":
        return {"git-U3": git_patch(git, commit, 3), "git-U1": git_patch(git, commit, 1)}
    return {
        "ctx3": codex_patch(git, commit, 3, anchors=False),
        "ctx3-anchor": codex_patch(git, commit, 3, anchors=True),
        "ctx1": codex_patch(git, commit, 1, anchors=False),
        "ctx1-anchor": codex_patch(git, commit, 1, anchors=True),
    }


# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One commit: the touched files before and after, and its patch in each variant."""

    repo: str
    commit: str
    parent: str
    before: dict[str, str]
    after: dict[str, str | None]
    patches: dict[str, str]

    def to_json(self) -> dict[str, object]:
        return {"repo": self.repo, "commit": self.commit, "parent": self.parent,
                "before": self.before, "after": self.after, "patches": self.patches}

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Case:
        return cls(**data)  # type: ignore[arg-type]

    def determined(self, variant: str) -> bool:
        patch = self.patches[variant]
        if variant.startswith("git-"):
            # Unified diffs are judged by the Codex rule on the same context without anchors.
            variant = "ctx3" if variant == "git-U3" else "ctx1"
            patch = self.patches.get(variant, "")
            if not patch:
                return False
        return is_determined(patch, self.before)


def save_case(case: Case, folder: Path) -> Path:
    name = f"{case.repo.replace('/', '+')}-{case.commit[:12]}.json.gz"
    path = folder / name
    folder.mkdir(parents=True, exist_ok=True)
    # mtime=0: the same case gives the same bytes, so regenerating the corpus shows no churn.
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
        out.write(json.dumps(case.to_json(), ensure_ascii=False, sort_keys=True).encode())
    return path


def load_cases(folder: Path) -> list[Case]:
    cases = []
    for path in sorted(folder.glob("*.json.gz")):
        with gzip.open(path, "rb") as data:
            cases.append(Case.from_json(json.loads(data.read())))
    return cases


def iter_cases(repo: str, rev: str, limit: int, max_files: int, max_patch_bytes: int,
               forms: tuple[str, ...], skipped: Counter[str], label: str | None = None) -> Iterator[Case]:
    git = Git(repo)
    label = label or _repo_label(repo)
    count = 0
    try:
        for sha, parent in git.commits(rev):
            if count >= limit:
                break
            commit = read_commit(git, sha, parent, max_files)
            skipped.update(commit.skipped)
            if not commit.changes:
                skipped["commits without a usable text file"] += 1
                continue
            patches: dict[str, str] = {}
            for form in forms:
                patches.update(build_patches(git, commit, form))
            if max(len(p.encode()) for p in patches.values()) > max_patch_bytes:
                skipped["commits over the patch size cap"] += 1
                continue
            count += 1
            yield Case(label, sha, parent, commit.before, commit.after, patches)
    finally:
        git.close()


def _repo_label(repo: str) -> str:
    path = Path(repo).resolve()
    # /work/.mirror/owner+name/repo -> owner/name
    if path.name == "repo" and "+" in path.parent.name:
        return path.parent.name.replace("+", "/", 1)
    return path.name


def explain(case: Case, variant: str, paths: list[str]) -> list[dict[str, object]]:
    """For the lead studying a failure: the sections of ``paths`` (all files when empty) whose
    anchor line repeats in the file or whose placement alone is not unique, with the counts."""
    if variant not in CODEX_VARIANTS:
        return []
    found: list[dict[str, object]] = []
    for op in parse_patch(case.patches[variant]):
        text = case.before.get(op.path)
        if op.kind != "update" or text is None or (paths and op.path not in paths):
            continue
        lines = split_lines(text)
        for number, section in enumerate(op.sections, 1):
            anchor_lines = lines.count(section.anchor) if section.anchor is not None else None
            bare = Section(None, section.body, section.end_of_file)
            alone = count_placements(lines, [bare], limit=100) if section.old else None
            with_anchor = count_placements(lines, [section], limit=100)
            if (anchor_lines or 0) > 1 or alone not in (None, 1) or with_anchor != 1:
                found.append({"path": op.path, "section": number, "anchor": section.anchor,
                              "anchor_lines": anchor_lines, "old_lines": len(section.old),
                              "matches": alone, "matches_after_any_anchor": with_anchor})
    return found[:10]


# --------------------------------------------------------------------------- applying


Applier = Callable[[str, Path], tuple[bool, str]]


def patchtx_applier(first_match: bool = False) -> Applier:
    import patchtx

    def apply(patch: str, root: Path) -> tuple[bool, str]:
        try:
            patchtx.apply_patch(patch, root, durable=False, first_match=first_match or None)
        except patchtx.PatchtxError as error:
            return False, f"{error.kind}: {error.headline}"
        except Exception as error:  # a crash is a bug to report, not a harness failure
            return False, f"crash {type(error).__name__}: {error}"
        return True, ""

    return apply


def command_applier(template: str, patch_as_argument: bool = False) -> Applier:
    """Run a command in the tree: `{patch}` in the template is replaced by a patch file's path;
    with ``patch_as_argument`` the patch text itself is the last argument (Codex's apply_patch)."""

    def apply(patch: str, root: Path) -> tuple[bool, str]:
        argv = shlex.split(template)
        with tempfile.NamedTemporaryFile("w", suffix=".patch", encoding="utf-8", delete=False) as f:
            f.write(patch)
        try:
            if patch_as_argument:
                argv.append(patch)
            else:
                argv = [a.replace("{patch}", f.name) for a in argv]
            proc = subprocess.run(argv, cwd=root, capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            return False, "timeout"
        except OSError as error:
            raise SystemExit(f"cannot run {argv[0]}: {error}") from error
        finally:
            os.unlink(f.name)
        if proc.returncode != 0:
            message = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
            return False, (message.splitlines() or [f"exit {proc.returncode}"])[0][:300]
        return True, ""

    return apply


def codex_binary() -> str | None:
    path = os.environ.get("PATCHTX_CODEX_APPLY_PATCH")
    if path:
        return path
    script = Path(__file__).resolve().parents[1] / "scripts" / "install-codex-reference.sh"
    proc = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if proc.returncode == 0 and lines else None


def snapshot(root: Path) -> dict[str, bytes]:
    files = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".patchtx"]  # patchtx's own history and lock
        for name in names:
            path = os.path.join(folder, name)
            files[os.path.relpath(path, root).replace(os.sep, "/")] = Path(path).read_bytes()
    return files


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


@dataclass
class Outcome:
    outcome: str
    why: str
    paths: list[str]


def replay(case: Case, variant: str, apply: Applier, scratch: Path) -> Outcome:
    """Apply the case's patch to a fresh tree at the parent and classify the result."""
    root = Path(tempfile.mkdtemp(dir=scratch))
    try:
        write_tree(root, case.before)
        ok, message = apply(case.patches[variant], root)
        message = message.replace(str(root) + os.sep, "")  # paths as the patch names them
        result = snapshot(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    before = {p: t.encode() for p, t in case.before.items()}
    expected = {p: t.encode() for p, t in case.after.items() if t is not None}
    for path, text in before.items():
        if path not in case.after:
            expected[path] = text
    if not ok:
        changed = sorted(p for p in before.keys() | result.keys() if before.get(p) != result.get(p))
        return Outcome("torn" if changed else "refused", message, changed)
    differing = sorted(p for p in expected.keys() | result.keys() if expected.get(p) != result.get(p))
    if not differing:
        return Outcome("right", "", [])
    return Outcome("wrong", "; ".join(_difference(expected.get(p), result.get(p), p)
                                      for p in differing[:3]), differing)


def _difference(expected: bytes | None, got: bytes | None, path: str) -> str:
    if expected is None:
        return f"{path}: unexpected file"
    if got is None:
        return f"{path}: missing"
    old, new = expected.split(b"\n"), got.split(b"\n")
    for number, (a, b) in enumerate(zip(old, new, strict=False), 1):
        if a != b:
            return f"{path}: first difference at line {number}"
    if expected.rstrip(b"\n") == got.rstrip(b"\n"):
        return f"{path}: final newline differs"
    return f"{path}: first difference at line {min(len(old), len(new))}"


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repos", nargs="*", help="git repositories (bare or not)")
    parser.add_argument("--cases", type=Path, action="append", default=[],
                        help="replay stored cases from this folder (as --save-cases writes)")
    parser.add_argument("--rev", default="HEAD", help="revision to walk back from (default HEAD)")
    parser.add_argument("--label", help="the repository's name in cases and results (default: "
                                        "owner/name for a fetched mirror, else the folder's name)")
    parser.add_argument("--commits", type=int, default=200, help="usable commits per repository")
    parser.add_argument("--max-files", type=int, default=20, help="usable text files per commit")
    parser.add_argument("--max-patch-bytes", type=int, default=120_000,
                        help="skip commits whose largest patch is bigger (default 120,000 bytes: "
                             "Codex's apply_patch takes the patch as one argument, which Linux "
                             "caps at 128 KiB)")
    parser.add_argument("--format", choices=("codex", "git", "both"), default="codex")
    parser.add_argument("--appliers", nargs="*", default=["patchtx", "codex"],
                        help="patchtx, patchtx-first-match, codex (default: patchtx codex)")
    parser.add_argument("--applier", action="append", default=[], metavar="CMD",
                        help="another applier: a command run in the tree, {patch} = the patch file "
                             "(e.g. 'git apply {patch}', 'patch -p1 -s -i {patch}')")
    parser.add_argument("--save-cases", type=Path, metavar="DIR", help="write each case to DIR")
    parser.add_argument("--out", type=Path, help="write the table and failures as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the table as Markdown here")
    args = parser.parse_args(argv)

    forms = ("codex", "git") if args.format == "both" else (args.format,)
    appliers: dict[str, Applier] = {}
    for name in args.appliers:
        if name == "patchtx":
            appliers[name] = patchtx_applier()
        elif name == "patchtx-first-match":
            appliers[name] = patchtx_applier(first_match=True)
        elif name == "codex":
            binary = codex_binary()
            if binary is None:
                print("codex reference binary not found; skipping it", file=sys.stderr)
            else:
                appliers[name] = command_applier(shlex.quote(binary), patch_as_argument=True)
        elif name != "none":
            parser.error(f"unknown applier {name!r}")
    for template in args.applier:
        appliers[template] = command_applier(template)

    skipped: Counter[str] = Counter()
    sources: list[Iterator[Case]] = [iter(load_cases(folder)) for folder in args.cases]
    sources += [iter_cases(repo, args.rev, args.commits, args.max_files, args.max_patch_bytes,
                           forms, skipped, args.label) for repo in args.repos]
    table: dict[str, dict[str, Counter[str]]] = {}
    failures: list[dict[str, object]] = []
    ranges: dict[str, list[str]] = {}
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="patchtx-replay-"))
    try:
        for source in sources:
            for case in source:
                ranges.setdefault(case.repo, []).append(case.commit)
                done = sum(len(v) for v in ranges.values())
                if done % 100 == 0:
                    print(f"{done} commits, {time.monotonic() - started:.0f} s", file=sys.stderr)
                if args.save_cases:
                    save_case(case, args.save_cases)
                for variant, patch in case.patches.items():
                    if not patch:
                        continue
                    row = table.setdefault(variant, {})
                    counts = row.setdefault("", Counter())
                    counts["commits"] += 1
                    determined = case.determined(variant)
                    counts["determined"] += determined
                    for name, apply in appliers.items():
                        if variant.startswith("git-") == (name in ("patchtx", "patchtx-first-match",
                                                                     "codex")):
                            continue  # Codex appliers take Codex patches; commands take git diffs
                        result = replay(case, variant, apply, scratch)
                        row.setdefault(name, Counter())[result.outcome] += 1
                        if result.outcome != "right":
                            failures.append({"repo": case.repo, "commit": case.commit,
                                             "variant": variant, "applier": name,
                                             "outcome": result.outcome, "determined": determined,
                                             "paths": result.paths, "why": result.why,
                                             "sections": explain(case, variant, result.paths)})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    elapsed = time.monotonic() - started

    markdown = render_table(table, appliers)
    print(markdown)
    print(f"{sum(len(v) for v in ranges.values())} commits in {elapsed:.0f} s; skipped files: "
          + ", ".join(f"{k} {v}" for k, v in skipped.most_common()))
    if args.markdown:
        args.markdown.write_text(markdown)
    if args.out:
        args.out.write_text(json.dumps({
            "table": {v: {a: dict(c) for a, c in row.items()} for v, row in table.items()},
            "ranges": {repo: {"newest": shas[0], "oldest": shas[-1], "commits": len(shas)}
                       for repo, shas in ranges.items()},
            "skipped": dict(skipped), "seconds": round(elapsed, 1), "failures": failures,
        }, indent=1))
    return 0


def render_table(table: dict[str, dict[str, Counter[str]]], appliers: dict[str, Applier]) -> str:
    names = list(appliers)
    titles = ["variant", "commits", "determined", *(f"{n} right / refused / wrong / torn" for n in names)]
    lines = ["| " + " | ".join(titles) + " |", "|" + "---|" * len(titles)]
    order = [*CODEX_VARIANTS, *GIT_VARIANTS]
    for variant, row in sorted(table.items(), key=lambda item: order.index(item[0])):
        cells = [variant, str(row[""]["commits"]), str(row[""]["determined"])]
        for name in names:
            c = row.get(name)
            cells.append(" / ".join(str(c[o]) for o in OUTCOMES) if c else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
