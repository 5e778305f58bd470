"""A process that commits to a shared workspace (run by test_concurrency.py, not collected).

usage: concurrent_worker.py ROOT WORKER ROUNDS GO_FILE [once]

Waits for GO_FILE to appear, then, ROUNDS times: reads log.txt and its own p<WORKER>.txt, plans to
append one line to the log and bump its counter (both in one transaction), and commits; a
ChangedSincePlanningError means another worker got in first, so it re-reads and tries again. With
``once``, plans from the files as they are before GO_FILE appears and tries exactly one commit.
Prints {"done": n, "refused": m} as JSON.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from patchtx.errors import ChangedSincePlanningError
from patchtx.model import PathTarget, Plan
from patchtx.txn import commit


def plan_round(root: Path, worker: str, done: int) -> Plan:
    log = (root / "log.txt").read_bytes()
    mine_path = root / f"p{worker}.txt"
    mine = mine_path.read_bytes() if mine_path.exists() else None
    targets = (
        PathTarget("log.txt", log, log + f"{worker}-{done}\n".encode(), 0o644, 0o644),
        PathTarget(mine_path.name, mine, str(done + 1).encode(), 0o644 if mine is not None else None, 0o644),
    )
    return Plan(str(root), (), targets)


def main() -> None:
    root, worker, rounds, go = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    once = sys.argv[5:] == ["once"]
    planned = plan_round(root, worker, 0) if once else None
    Path(f"{go}.ready-{worker}").touch()  # planned: the test waits for every worker before "go"
    while not os.path.exists(go):
        time.sleep(0.001)
    done = refused = 0
    while done < rounds:
        plan = planned if planned is not None else plan_round(root, worker, done)
        try:
            commit(plan, lock_timeout=60)
            done += 1
        except ChangedSincePlanningError:
            refused += 1
            if once:
                break
    print(json.dumps({"done": done, "refused": refused}))


if __name__ == "__main__":
    main()
