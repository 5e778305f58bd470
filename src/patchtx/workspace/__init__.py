"""The workspace: its root and the one path rule, no-follow reads, the policy, globs."""
