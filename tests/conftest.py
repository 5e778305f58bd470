"""Session-wide isolation from the user running the tests: patchtx's per-user state (the secret
that signs journals) and per-user policy config live in a temporary folder, exported to the
environment so that every subprocess the tests start (CLI, MCP server) uses them too."""

from __future__ import annotations

import os
import tempfile

_STATE_HOME = tempfile.mkdtemp(prefix="patchtx-test-state-")
os.environ["PATCHTX_STATE_HOME"] = _STATE_HOME
os.environ["PATCHTX_CONFIG"] = os.path.join(_STATE_HOME, "config.toml")  # absent: no host policy
os.environ.pop("PATCHTX_POLICY", None)
