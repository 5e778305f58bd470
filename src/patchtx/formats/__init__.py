"""One module per edit protocol: Codex, unified diffs, SEARCH/REPLACE blocks, edit lists."""
