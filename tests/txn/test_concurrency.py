"""Several processes committing to one workspace at once: no lost update, each all or nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from .helpers import leftovers, make_tree

WORKER = Path(__file__).with_name("concurrent_worker.py")


def run_workers(root: Path, count: int, rounds: int, *extra: str) -> list[dict[str, int]]:
    go = root.parent / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(root), str(n), str(rounds), str(go), *extra],
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(count)
    ]
    # Every worker must have planned from the same base before the start signal, however slow the
    # machine is to start them.
    deadline = time.monotonic() + 120
    while len(list(go.parent.glob("go.ready-*"))) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    results = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        results.append(json.loads(out))
    return results


def test_plans_from_the_same_base_one_wins_the_others_are_refused_whole(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"log.txt": b"base\n"})
    results = run_workers(root, 5, 1, "once")

    winners = [n for n, r in enumerate(results) if r["done"] == 1]
    assert len(winners) == 1
    assert all(r == {"done": 0, "refused": 1} for n, r in enumerate(results) if n not in winners)
    winner = winners[0]
    assert (root / "log.txt").read_bytes() == f"base\n{winner}-0\n".encode()
    # All or nothing per process: only the winner's second file exists.
    assert sorted(p.name for p in root.glob("p*.txt")) == [f"p{winner}.txt"]
    assert leftovers(root) == []


def test_retrying_workers_lose_no_update(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_tree(root, {"log.txt": b""})
    workers, rounds = 4, 12
    results = run_workers(root, workers, rounds)

    lines = (root / "log.txt").read_text().splitlines()
    expected = {f"{w}-{n}" for w in range(workers) for n in range(rounds)}
    assert len(lines) == len(expected) and set(lines) == expected  # each update exactly once
    for w in range(workers):
        assert (root / f"p{w}.txt").read_bytes() == str(rounds).encode()
        # A worker's lines are in its own order: every commit saw the previous one.
        mine = [line for line in lines if line.startswith(f"{w}-")]
        assert mine == [f"{w}-{n}" for n in range(rounds)]
    assert all(r["done"] == rounds for r in results)
    assert leftovers(root) == []


def test_two_commits_each_emptying_part_of_a_folder_leave_no_empty_folder(tmp_path: Path) -> None:
    # Planned from the same tree, each deletion keeps the folder (the other file is there); the
    # second commit, under the lock, finds the folder emptied by both and removes it.
    from patchtx.txn import commit

    from .helpers import Scenario, build_plan

    root = tmp_path / "ws"
    make_tree(root, {"d/e/a.txt": b"a\n", "d/b.txt": b"b\n", "keep.txt": b"k\n"})
    first = build_plan(root, Scenario("first", {}, {"d/e/a.txt": None}))
    second = build_plan(root, Scenario("second", {}, {"d/b.txt": None}))
    assert first.remove_dirs == ("d/e",) and second.remove_dirs == ()

    commit(first)
    report = commit(second)

    assert sorted(p.name for p in root.iterdir()) == [".patchtx", "keep.txt"]
    assert report.removed_dirs == ("d",)
    assert leftovers(root) == []
