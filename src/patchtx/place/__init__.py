"""Where hunks go: the one matching rule, bytes and lines, the rewrite, hints, the already-applied question."""
