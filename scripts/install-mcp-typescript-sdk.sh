#!/usr/bin/env bash
# Install the official TypeScript MCP SDK (npm package @modelcontextprotocol/sdk), the client that
# Claude Desktop, Claude Code, Cursor and VS Code embed, into a cache folder outside the repository,
# for tests/integrations/test_mcp_typescript.py (its time-outs and progress). Idempotent: a second
# run finds it installed and returns at once.
#
# Prints one line on stdout: the folder holding node_modules/@modelcontextprotocol/sdk. npm's
# output goes to stderr. Exit 0 on success.
#
#   PATCHTX_MCP_TS_VERSION   npm version to install (default 1.32.2)
#   PATCHTX_MCP_TS_CACHE     cache folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/patchtx-mcp-ts)
#
# Cost, measured on the development machine (2 cores, fresh npm cache): 98 packages, 29 MB on
# disk, 16 s (3 s of CPU) the first time; nothing once cached.
set -euo pipefail

version="${PATCHTX_MCP_TS_VERSION:-1.32.2}"
cache="${PATCHTX_MCP_TS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/patchtx-mcp-ts}"
prefix="$cache/$version"
manifest="$prefix/node_modules/@modelcontextprotocol/sdk/package.json"

installed_version() {
  node -e 'process.stdout.write(require(process.argv[1]).version)' "$1" 2>/dev/null
}

command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || {
  echo "install-mcp-typescript-sdk: node and npm are needed (apt-get install nodejs npm)" >&2
  exit 1
}
if [ -f "$manifest" ] && [ "$(installed_version "$manifest")" = "$version" ]; then
  printf '%s\n' "$prefix"
  exit 0
fi
mkdir -p "$cache"
staging=$(mktemp -d "$cache/.install-$version.XXXXXX")
trap 'rm -rf "$staging"' EXIT
echo "install-mcp-typescript-sdk: installing @modelcontextprotocol/sdk@$version into $prefix ..." >&2
# (--globalconfig: keep the machine's npm config, as scripts/install-codex-reference.sh does)
npm install --prefix "$staging" --globalconfig "$(npm config get globalconfig)" --no-save --no-audit \
  --no-fund --no-package-lock --loglevel=error "@modelcontextprotocol/sdk@$version" >&2
got=$(installed_version "$staging/node_modules/@modelcontextprotocol/sdk/package.json")
if [ "$got" != "$version" ]; then
  echo "install-mcp-typescript-sdk: expected $version, installed '$got'" >&2
  exit 1
fi
rm -rf "$prefix"
mv "$staging" "$prefix"
trap - EXIT
printf '%s\n' "$prefix"
