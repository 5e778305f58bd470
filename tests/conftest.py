"""Session-wide isolation from the user running the tests: patchtx's per-user state (the secret
that signs journals) and per-user policy config live in a temporary folder, exported to the
environment so that every subprocess the tests start (CLI, MCP server) uses them too. Each process
that runs tests (each xdist worker) makes its own, so parallel workers share no per-user state.

``--full-examples``: the property tests' full counts (tests/examples.py). ``--fresh-servers``:
every MCP server the tests start is a fresh interpreter, not a fork of a warm one
(tests/warm_server.py).

Hypothesis runs without its per-example deadline and without the "input generation is slow"
health check: both measure wall time, and CI shares its two cores with whatever else runs, so
they failed tests for the machine's load rather than for patchtx (speed lives in benchmarks/).
Under CI (``CI`` set: ``.ci/run`` runs with ``CI=true``) the profile is built on Hypothesis's own
"ci" one, which it loads there: every run draws the same examples and keeps no database, so a CI
run cannot turn red by chance; elsewhere each run draws new ones, and with ``--full-examples``
(the nightly hunt) everywhere. ``HYPOTHESIS_PROFILE`` names another profile to load instead."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import HealthCheck, settings

_STATE_HOME = tempfile.mkdtemp(prefix="patchtx-test-state-")
os.environ["PATCHTX_STATE_HOME"] = _STATE_HOME
os.environ["PATCHTX_CONFIG"] = os.path.join(_STATE_HOME, "config.toml")  # absent: no host policy
os.environ.pop("PATCHTX_POLICY", None)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--full-examples", action="store_true",
                     help="property tests draw their full count of examples and power cuts their full count "
                          "of disks (a nightly run), not a twentieth of it (tests/examples.py)")
    parser.addoption("--fresh-servers", action="store_true",
                     help="start every MCP server as a fresh interpreter, not forked from one that "
                          "has imported the SDK (tests/warm_server.py)")


def pytest_configure(config: pytest.Config) -> None:
    # Before the test modules are imported (their @settings read it), in every xdist worker too.
    full = config.getoption("--full-examples")
    if full:
        os.environ["PATCHTX_FULL_EXAMPLES"] = "1"
    # settings(): the profile Hypothesis loaded for this environment ("ci" under CI, else "default").
    settings.register_profile("patchtx", settings(), deadline=None, suppress_health_check=[HealthCheck.too_slow],
                              **({"derandomize": False} if full else {}))
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "patchtx"))
    if config.getoption("--fresh-servers"):
        os.environ["PATCHTX_TEST_FRESH_SERVERS"] = "1"


# Modules holding the suite's longest tests (5 to 20 s each on the 2-core machine), run first: the
# workers (xdist's worksteal) then end on short tests instead of one worker finishing a long test
# alone while the other waits. Only the order changes; a stale entry costs time, nothing else.
SLOW_FIRST = (
    "tests/security/test_degraded.py",
    "tests/txn/test_faults.py",
    "tests/replay/test_edit_protocols_replay.py",
    "tests/security/test_fuzz.py",
    "tests/txn/test_crash.py",
    "tests/txn/test_power_loss.py",
    "tests/txn/test_state_machine.py",
    "tests/txn/verify/test_verify_crash.py",
    "tests/peers/test_peer_suite.py",
    "tests/conformance/test_codex_corpus.py",
    "tests/plan/syntax/test_corpus.py",
)


# Run last: the tests that wait for the Codex reference, which scripts/test.sh installs (a download
# the first time) while the others run.
LAST = "tests/differential/"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {path: i for i, path in enumerate(SLOW_FIRST)}
    root = config.rootpath

    def key(item: pytest.Item) -> int:
        path = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        return len(rank) + 1 if path.startswith(LAST) else rank.get(path, len(rank))

    items.sort(key=key)  # stable: each module's tests keep their order

