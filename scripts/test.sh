#!/usr/bin/env bash
# The project's test command (the README's, and what CI runs): installs what the tests need from
# the project's own files, then runs the whole suite and the shared Codex scenario corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test,shell,mcp]' 2>&1 \
  | grep -v "^WARNING: Location" || true
if [ "${PATCHTX_NO_CODEX:-}" != 1 ]; then
  PATCHTX_CODEX_APPLY_PATCH=$(bash scripts/install-codex-reference.sh)
  export PATCHTX_CODEX_APPLY_PATCH
fi
export PATCHTX_FUZZ_EXAMPLES=${PATCHTX_FUZZ_EXAMPLES:-10000}
.venv/bin/python -m pytest "$@"
shared="$(pwd)/../shared/conformance/run_codex_scenarios.py"
[ -f "$shared" ] || shared="$(pwd)/tests/conformance/run_codex_scenarios.py"
.venv/bin/python "$shared" --apply-patch "$(pwd)/.venv/bin/apply_patch" \
  --overwrite "$(pwd)/.venv/bin/patchtx apply --allow-overwrite -"
