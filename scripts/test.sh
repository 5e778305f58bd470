#!/usr/bin/env bash
# The project's test command (the README's, and what CI runs): installs what the tests need from
# the project's own files, then runs the whole suite (in parallel, one worker per core) and the
# shared Codex scenario corpus. Arguments go to pytest ("-n 0" runs in one process;
# "--full-examples" draws every property test's full count, as a nightly run would;
# "--fresh-servers" starts every MCP server as a fresh interpreter: tests/warm_server.py).
#
# The Codex reference binary (npm @openai/codex, for tests/differential) is installed into a cache
# folder outside the repository in the background, while the project installs and the other tests
# run (tests/differential runs last and waits for it): a 160 MB download and 404 MB on disk the
# first time, nothing after. PATCHTX_NO_CODEX=1 leaves it out and deselects those tests; if it
# cannot be installed (no npm, no network) they are skipped, saying why, except under CI=true,
# where they fail (tests/differential/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [ "${PATCHTX_NO_CODEX:-}" != 1 ] && [ -z "${PATCHTX_CODEX_APPLY_PATCH:-}" ]; then
  PATCHTX_CODEX_INSTALLING=$(mktemp -d)
  export PATCHTX_CODEX_INSTALLING
  trap 'rm -rf "$PATCHTX_CODEX_INSTALLING"' EXIT
  (
    cd "$PATCHTX_CODEX_INSTALLING"  # (path: what it prints; log: npm's output; status: once done)
    status=0
    bash "$OLDPWD/scripts/install-codex-reference.sh" >path 2>log || status=$?
    echo "$status" >status.part && mv status.part status
  ) &
  codex_pid=$!
fi
# The install. A fresh .venv first gets a current pip: Debian 12's pip 23.0 takes about 35 s of CPU
# to resolve the test extras (most of it reading PyPI's pages of projects with thousands of wheels:
# pydantic-core, hypothesis), pip 26 about 12 s, and getting it takes 3 s. It comes from the
# system's pip when that can install into another environment (pip >= 22.3, --python), else from
# ensurepip. Packages are not byte-compiled at install (--no-compile: the tests write the .pyc of
# the modules they import, a fraction of what is installed). A .venv made by the README's first
# command has the interpreter's own pip (23.2 here: the test extras took 49 s to install with it,
# 6 + 27 s with an upgrade first), so an older pip is upgraded too. Measured on the project's 2-core
# VM: see README.
quiet=(-q --no-compile --disable-pip-version-check)
# pip's warnings about this machine's package index locations are left out; a failed install still
# fails the command (pipefail: the pipe's status is pip's; grep finding no line is not a failure).
unwarned() { grep -v "^WARNING: Location" || true; }
[ -x .venv/bin/python ] || "$python" -m venv --without-pip .venv
if ! .venv/bin/python -c 'import sys, pip; sys.exit(int(pip.__version__.split(".")[0]) < 25)' 2>/dev/null; then
  if "$python" -c 'import sys, pip; sys.exit(tuple(map(int, pip.__version__.split(".")[:2])) < (22, 3))' \
      2>/dev/null; then
    "$python" -m pip --python .venv/bin/python install "${quiet[@]}" --upgrade pip
  else
    .venv/bin/python -m ensurepip >/dev/null && .venv/bin/python -m pip install "${quiet[@]}" --upgrade pip
  fi 2>&1 | unwarned
fi
.venv/bin/python -m pip install "${quiet[@]}" -e '.[test,shell,mcp]' 2>&1 | unwarned
# The tests start hundreds of Python processes: let them keep the .pyc they compile (in
# __pycache__ folders, ignored by git) rather than compile patchtx again in every one.
unset PYTHONDONTWRITEBYTECODE
tests=0
.venv/bin/python -m pytest -n auto --dist worksteal "$@" || tests=$?
if [ -n "${codex_pid:-}" ]; then
  wait "$codex_pid"  # (done already, unless no differential test ran)
  cat "$PATCHTX_CODEX_INSTALLING/log" >&2
  if [ "$(cat "$PATCHTX_CODEX_INSTALLING/status")" != 0 ] && [ "${CI:-}" = true ]; then
    echo "scripts/test.sh: the Codex reference could not be installed (see above)" >&2
    exit 1
  fi
fi
[ "$tests" = 0 ] || exit "$tests"
shared="$(pwd)/../shared/conformance/run_codex_scenarios.py"
[ -f "$shared" ] || shared="$(pwd)/tests/conformance/run_codex_scenarios.py"
.venv/bin/python "$shared" --apply-patch "$(pwd)/.venv/bin/apply_patch" \
  --overwrite "$(pwd)/.venv/bin/patchtx apply --allow-overwrite -"
