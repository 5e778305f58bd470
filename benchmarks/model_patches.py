"""Real patches models wrote, applied by patchtx and by Codex's binary: right, refused or wrong.

A corpus is a folder of JSON cases kept outside the repository (third-party text: the files and
patches of public threads and repositories), one case per file::

    {"source": "owner/repo#123 (what the thread shows)",
     "files": {"path": "text before"},              # or "git": see below
     "patch": "the patch as the model sent it",
     "intended": {"path": "text after" or null} | null,   # null: no one meaning, must be refused
     "why": "how the intended result was judged"}

A case may instead name a fetched repository (``fetch github:owner/name``) and the commits holding
the file and the patch: ``"git": {"repo": "/work/.mirror/owner+name/repo", "files": {"path":
["commit", "path in the repo"]}, "patch": ["commit", "path"]}``.

    .venv/bin/python benchmarks/model_patches.py /tmp/26/corpus [--markdown]

``right``: the tree afterwards is the intended one; ``refused``: an error and nothing changed;
``wrong``: anything else (a case without one meaning that is applied counts as wrong). patchtx is
run as a host runs it (repairs on) and with ``--strict`` (Codex's grammar); Codex with
``CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS=1``, its binary from PATCHTX_CODEX_APPLY_PATCH or
scripts/install-codex-reference.sh's cache. The cases CI runs are minimal ones of our own, one
per shape found (tests/intake/shapes.py, each naming its source).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import patchtx  # noqa: E402
import replay  # noqa: E402
from patchtx.errors import PatchtxError  # noqa: E402


def load(path: Path) -> dict:
    case = json.loads(path.read_text(encoding="utf-8"))
    git = case.get("git")
    if git is not None:
        def show(commit: str, name: str) -> str:
            return subprocess.run(["git", "-C", git["repo"], "show", f"{commit}:{name}"],
                                  capture_output=True, text=True, check=True).stdout

        case["files"] = {path: show(*where) for path, where in git["files"].items()}
        case["patch"] = show(*git["patch"])
    case["name"] = path.stem
    return case


def snapshot(root: Path) -> dict[str, str]:
    return {name: data.decode("utf-8", "replace") for name, data in replay.snapshot(root).items()}


def verdict(case: dict, ok: bool, after: dict[str, str]) -> str:
    if not ok:
        return "refused" if after == case["files"] else "wrong"
    intended = case["intended"]
    if intended is None:
        return "wrong"
    wanted = {k: v for k, v in {**case["files"], **intended}.items() if v is not None}
    return "right" if after == wanted else "wrong"


def run_patchtx(case: dict, strict: bool) -> tuple[str, str]:
    root = Path(tempfile.mkdtemp(prefix="model-patch-")).resolve()
    try:
        replay.write_tree(root, case["files"])
        try:
            result = patchtx.apply_patch(case["patch"].replace("/WORKSPACE", str(root)), root,
                                         durable=False, strict=strict)
            ok, note = True, ", ".join(r.kind for r in result.plan.repairs)
        except PatchtxError as error:
            ok, note = False, error.kind
        return verdict(case, ok, snapshot(root)), note
    finally:
        shutil.rmtree(root)


def codex_binary() -> str:
    explicit = os.environ.get("PATCHTX_CODEX_APPLY_PATCH")
    if explicit:
        return explicit
    return subprocess.run(["bash", str(REPO / "scripts" / "install-codex-reference.sh")],
                          capture_output=True, text=True, check=True).stdout.strip()


def run_codex(case: dict, binary: str) -> str:
    root = Path(tempfile.mkdtemp(prefix="model-patch-codex-")).resolve()
    try:
        replay.write_tree(root, case["files"])
        env = {"PATH": "/usr/bin:/bin", "HOME": str(root), "LC_ALL": "C.UTF-8",
               "CODEX_APPLY_PATCH_PRESERVE_LINE_ENDINGS": "1"}
        run = subprocess.run([binary, case["patch"].replace("/WORKSPACE", str(root))], cwd=root,
                             env=env, capture_output=True, check=False, timeout=60)
        return verdict(case, run.returncode == 0, snapshot(root))
    finally:
        shutil.rmtree(root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    args = parser.parse_args(argv)
    cases = [load(path) for path in sorted(args.corpus.glob("*.json"))]
    binary = codex_binary()
    rows = []
    for case in cases:
        ours, note = run_patchtx(case, strict=False)
        strict, _ = run_patchtx(case, strict=True)
        rows.append((case["name"], case["source"], ours, note, strict, run_codex(case, binary)))
    counts = {who: {v: sum(1 for r in rows if r[i] == v) for v in ("right", "refused", "wrong")}
              for who, i in (("patchtx", 2), ("patchtx --strict", 4), ("codex", 5))}
    sources = len({case["source"].split(" ")[0] for case in cases})
    if args.markdown:
        print("| case | source | patchtx | repairs / error | --strict | Codex 0.169 |")
        print("|---|---|---|---|---|---|")
        for name, source, ours, note, strict, codex in rows:
            print(f"| {name} | {source} | {ours} | {note or '-'} | {strict} | {codex} |")
        print()
    else:
        for name, _source, ours, note, strict, codex in rows:
            print(f"{name:40} patchtx={ours:8} ({note or '-'}) strict={strict:8} codex={codex}")
    print(f"{len(cases)} cases from {sources} sources")
    for who, tally in counts.items():
        print(f"{who}: " + ", ".join(f"{k} {v}" for k, v in tally.items()))
    return 1 if counts["patchtx"]["wrong"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
