"""The benchmark workload generator at tiny sizes: reproducible, and each workload's Codex patch
and unified diff both turn the input tree into the expected tree (checked with patchtx's planner,
git apply and GNU patch), so every applier in benchmarks/run.py is held to the same result."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import svgplot  # noqa: E402
import workloads as wl  # noqa: E402

from patchtx.api import plan_patch  # noqa: E402
from patchtx.errors import ContextNotFoundError  # noqa: E402


def tiny_suite() -> list[wl.Workload]:
    return [
        wl.many_files(tree_files=60, updates=20, adds=3, deletes=3, moves=2),
        wl.huge_file(lines=3000, hunks=30),
        wl.drifted_file(lines=3000, hunks=30),
        wl.tiny(tree_files=5),
        wl.miss(lines=3000),
        *wl.sweep((4,)),
    ]


SUITE = tiny_suite()
IDS = [w.name for w in SUITE]


def test_generation_is_reproducible() -> None:
    again = tiny_suite()
    assert [w.fingerprint() for w in again] == [w.fingerprint() for w in SUITE]
    other = wl.many_files(tree_files=60, updates=20, adds=3, deletes=3, moves=2, seed=8)
    assert other.fingerprint() != SUITE[0].fingerprint()


@pytest.mark.parametrize("work", SUITE, ids=IDS)
def test_files_follow_the_rules(work: wl.Workload) -> None:
    for tree in (work.input, work.expected):
        for path, data in tree.items():
            assert data.endswith(b"\n") and not data.endswith(b"\n\n"), path
            data.decode("ascii")
            assert b" \n" not in data, path
    if work.expect_failure:
        assert work.expected == work.input
    else:
        assert work.expected != work.input


@pytest.mark.parametrize("work", SUITE, ids=IDS)
def test_patchtx_plan_gives_the_expected_tree(work: wl.Workload, tmp_path: Path) -> None:
    wl.write_tree(tmp_path, work.input)
    if work.expect_failure:
        with pytest.raises(ContextNotFoundError):
            plan_patch(work.codex_patch, tmp_path)
        return
    for patch in (work.codex_patch, work.unified_diff):
        plan = plan_patch(patch, tmp_path)
        result = dict(work.input)
        for target in plan.targets:
            if target.after is None:
                result.pop(target.path, None)
            else:
                result[target.path] = target.after
        assert result == work.expected


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(cwd.parent)}
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("tool", ["git", "patch"])
@pytest.mark.parametrize("work", SUITE, ids=IDS)
def test_unified_diff_gives_the_expected_tree(work: wl.Workload, tool: str,
                                              tmp_path: Path) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    folder = wl.materialize(work, tmp_path / "w")
    run = tmp_path / "run"
    shutil.copytree(folder / "input", run)
    argv = (["git", "apply", str(folder / "patch.diff")] if tool == "git" else
            ["patch", "-p1", "--batch", "--silent", "--no-backup-if-mismatch", "--reject-file=-",
             "-i", str(folder / "patch.diff")])
    done = _run(argv, run)
    assert (done.returncode != 0) == work.expect_failure, done.stderr
    assert wl.compare_trees(run, work.expected) == []


def test_materialize_reuses_a_matching_folder(tmp_path: Path) -> None:
    work = SUITE[3]
    folder = wl.materialize(work, tmp_path)
    marker = folder / "input" / "marker"
    marker.write_text("kept")
    assert wl.materialize(work, tmp_path) == folder and marker.exists()
    assert (folder / "patch.txt").read_text() == work.codex_patch


def test_compare_trees_reports_every_kind_of_difference(tmp_path: Path) -> None:
    expected = {"a/x.txt": b"one\n", "a/y.txt": b"two\n"}
    wl.write_tree(tmp_path, expected)
    (tmp_path / ".patchtx").mkdir()  # patchtx's state folder is ignored
    assert wl.compare_trees(tmp_path, expected) == []
    (tmp_path / "a" / "x.txt").write_bytes(b"ONE\n")
    (tmp_path / "a" / "y.txt").unlink()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.txt").write_bytes(b"")
    problems = " ".join(wl.compare_trees(tmp_path, expected))
    for word in ("missing", "unexpected", "differ", "directories"):
        assert word in problems


def test_plot_is_well_formed_svg() -> None:
    svg = svgplot.loglog([("a", [(100.0, 0.01), (10_000.0, 0.5)]), ("b", [(100.0, 0.02)])],
                         title="t", xlabel="x", ylabel="y", notes=["n"])
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert svg.count("<path") == 2
