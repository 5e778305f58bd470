#!/usr/bin/env bash
# Install the reference Codex binary (npm package @openai/codex) into a cache folder outside the
# repository, for the differential tests in tests/differential/. Idempotent: a second run finds the
# installed binary, checks its version and returns at once.
#
# Prints one line on stdout: the path of an executable named `apply_patch` (a symlink to the codex
# multitool, which behaves as Codex's apply_patch when invoked under that name). Everything else
# (npm's output) goes to stderr. Exit 0 on success.
#
#   PATCHTX_CODEX_VERSION   npm version to install (default 0.169.0, the compatibility target)
#   PATCHTX_CODEX_CACHE     cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/patchtx-codex)
#
# Cost, measured on the development machine (2 cores, fresh npm cache): a 160 MB download (only the
# platform package, @openai/codex-linux-x64), 12 to 77 s depending on the network, 7 s of CPU,
# 404 MB on disk; nothing once cached. scripts/test.sh runs it while the other tests run.
set -euo pipefail

version="${PATCHTX_CODEX_VERSION:-0.169.0}"
cache="${PATCHTX_CODEX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/patchtx-codex}"
prefix="$cache/$version"
link="$prefix/bin/apply_patch"

find_native() {
  # The platform package (e.g. @openai/codex-linux-x64) holds vendor/<target triple>/bin/codex.
  local candidate
  for candidate in "$1"/node_modules/@openai/codex-*/vendor/*/bin/codex; do
    if [ -x "$candidate" ]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

installed_version() {
  # `codex --version` prints e.g. "codex-cli 0.169.0".
  "$1" --version 2>/dev/null | awk '{print $NF}'
}

if [ -L "$link" ] && native=$(readlink -f "$link") && [ -x "$native" ] \
    && [ "$(installed_version "$native")" = "$version" ]; then
  printf '%s\n' "$link"
  exit 0
fi

command -v npm >/dev/null 2>&1 || {
  echo "install-codex-reference: npm is not installed (apt-get install npm, or install Node.js)" >&2
  exit 1
}

mkdir -p "$cache"
staging=$(mktemp -d "$cache/.install-$version.XXXXXX")
trap 'rm -rf "$staging"' EXIT
chmod 755 "$staging"
echo "install-codex-reference: installing @openai/codex@$version into $prefix ..." >&2
started=$(date +%s)
# --prefix alone would also move where npm reads its global config from (<prefix>/etc/npmrc): keep
# the machine's, which may name the certificate authority of a proxy (cafile).
npm install --prefix "$staging" --globalconfig "$(npm config get globalconfig)" --no-save --no-audit \
  --no-fund --no-package-lock --loglevel=error "@openai/codex@$version" >&2
native=$(find_native "$staging") || {
  echo "install-codex-reference: no native codex binary for this platform in @openai/codex@$version" >&2
  exit 1
}
got=$(installed_version "$native")
if [ "$got" != "$version" ]; then
  echo "install-codex-reference: expected codex $version, the binary says '$got'" >&2
  exit 1
fi
mkdir -p "$staging/bin"
ln -s "$(realpath --relative-to="$staging/bin" "$native")" "$staging/bin/apply_patch"
rm -rf "$prefix"
mv "$staging" "$prefix"
trap - EXIT
echo "install-codex-reference: done in $(( $(date +%s) - started )) s," \
  "$(du -sh "$prefix" | cut -f1) on disk" >&2
printf '%s\n' "$link"
