"""The server through the TypeScript SDK's client (@modelcontextprotocol/sdk, what Claude Desktop,
Claude Code, Cursor and VS Code embed): its time limit with progress resetting it outlives a long
check, and without that it gives up (-32001), cancels, and nothing is written.

The SDK is installed from npm into a cache folder by scripts/install-mcp-typescript-sdk.sh (16 s
the first time, nothing after). Without node or npm, or the registry, these tests are skipped
saying why, except under CI=true, where they fail."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agents_support import REPO

CLIENT = Path(__file__).with_name("ts_client.mjs")
PATCHTX = str(Path(sys.executable).parent / "patchtx")
FILES = 200
# (long only for the patch: the fence call that follows runs the check too)
CHECK = "if [ -e d0/f0.txt ]; then sleep 7; fi"


@pytest.fixture(scope="session")
def typescript_sdk() -> str:
    why = None
    if shutil.which("node") is None or shutil.which("npm") is None:
        why = "node and npm are not installed"
    else:
        done = subprocess.run(["bash", str(REPO / "scripts" / "install-mcp-typescript-sdk.sh")],
                              capture_output=True, text=True, timeout=600)
        if done.returncode == 0:
            return done.stdout.strip()
        why = f"the TypeScript MCP SDK could not be installed: {done.stderr.strip()[-500:]}"
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


def run_client(sdk: str, scenario: str, tmp_path: Path) -> dict[str, Any]:
    root = tmp_path / "ws"
    root.mkdir()
    adds = "".join(f"*** Add File: d{i % 10}/f{i}.txt\n+{i}\n" for i in range(FILES))
    (tmp_path / "patch.txt").write_text(f"*** Begin Patch\n{adds}*** End Patch\n")
    done = subprocess.run(["node", str(CLIENT), sdk, scenario, PATCHTX, str(root), CHECK], capture_output=True,
                          text=True, timeout=120, env={**os.environ})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_progress_resets_the_hosts_time_limit(typescript_sdk: str, tmp_path: Path) -> None:
    out = run_client(typescript_sdk, "progress", tmp_path)
    assert out["first"] == {"isError": False, "summary": f"A {FILES}, M 0, D 0, R 0"}  # 7 s, past 3 s
    messages = [message for _, message in out["progress"]]
    assert f"Writing files: {FILES}/{FILES}" in messages and "Running the check: 3 s (time limit 600 s)" in messages
    values = [value for value, _ in out["progress"]]
    assert values == sorted(set(values))
    assert out["log"] == [1, FILES]
    assert (tmp_path / "ws" / "d0" / "f0.txt").read_text() == "0\n"


def test_a_host_time_limit_cancels_and_nothing_is_written(typescript_sdk: str, tmp_path: Path) -> None:
    out = run_client(typescript_sdk, "timeout", tmp_path)
    assert out["first"]["code"] == -32001 and "timed out" in out["first"]["message"]
    assert out["fence"] == {"isError": False, "summary": "A 1, M 0, D 0, R 0"}
    assert out["log"] == [1]  # the fence alone: the timed-out call never committed
    assert sorted(path.name for path in (tmp_path / "ws").iterdir()) == [".patchtx", "fence.txt"]
