"""Glob patterns of workspace paths (``protected``, approval rules), matched in linear time.

Syntax, as in ``.gitignore``: ``*`` any characters but ``/``, ``?`` one character but ``/``, ``**``
any characters (``**/`` any folders, including none), ``[abc]``, ``[a-z]`` and ``[!abc]`` one
character of (or not of) a set, never ``/``, ``\\`` makes the next character literal; a pattern
without a ``/`` (but for a trailing one) names a file or folder at any depth, a leading ``/``
anchors it at the root (``/setup.py`` is the root's only); a trailing ``/`` names a folder and
everything in it; a match on a folder covers everything inside it. A pattern that silently matched
nothing here but matched in ``.gitignore`` would leave a path unprotected that its owner meant to
protect.

A pattern comes from a workspace's policy, which a repository's author writes; a backtracking
regular expression lets ``**a**a**a**a**a**a**a**a**a**a**a**a**c`` take minutes on a 40-character
path. Here a pattern is a small automaton whose set of live states is advanced one character at a
time (Thompson's construction): O(len(path) x len(pattern)) for any pattern. Before it runs, two
necessary conditions are checked at C speed: an anchored pattern's leading literal text starts the
path, and each of the pattern's literal runs occurs in it (most paths fail one of them). Within
one check (a ``GlobSet``), the sets of live states computed are kept (``Moves``): the paths of a
patch share folders and endings, so a later path mostly looks up where a character leads instead of
working it out again (a deterministic automaton built as it is needed).

Many patterns over many paths still add up (20,000 patterns against a 2,000-file patch took ten
minutes), so the work is bounded: a ``GlobSet`` counts the automaton's steps across every path it
is asked about and raises ``GlobWorkExceeded`` past ``WORK_LIMIT``; and a policy may hold at most
``MAX_PATTERNS`` patterns of at most ``MAX_PATTERN_LENGTH`` characters (``policy`` refuses more).
"""

from __future__ import annotations

# Automaton steps: each position i of a compiled pattern is one of these, moving to i + 1.
_LITERAL = 0  # consumes its character
_ONE = 1  # consumes one character but "/"
_SEGMENT = 2  # "*": loops on characters but "/", or moves on without consuming
_ANY = 3  # "**": loops on any character, or moves on without consuming
_DIRS = 4  # "**/" (and the "anywhere" prefix): moves on to i + 1 (the loop) or i + 2 (past it)
_DIRS_LOOP = 5  # loops on any character; moves on only by consuming a "/"
_CLASS = 6  # "[...]": consumes one character but "/" of the set (the literal holds the set's text)
_NOT_CLASS = 7  # "[!...]" or "[^...]": consumes one character but "/" not in the set
_DIRS_STEPS = ((_DIRS, ""), (_DIRS_LOOP, ""))


def _class_end(pattern: str, start: int) -> int:
    """The index of the ``]`` closing the set opened at ``start`` (-1: none, the ``[`` is literal);
    a ``]`` right after the ``[`` or its ``!``/``^`` belongs to the set, as in fnmatch."""
    i = start + 1
    if i < len(pattern) and pattern[i] in "!^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    end = pattern.find("]", i)
    return -1 if end < 0 or "/" in pattern[start:end] else end


def _in_set(members: str, char: str) -> bool:
    """Whether ``char`` is in the set written ``members`` (single characters and ``a-z`` ranges)."""
    i = 0
    while i < len(members):
        if i + 2 < len(members) and members[i + 1] == "-":
            if members[i] <= char <= members[i + 2]:
                return True
            i += 3
        else:
            if members[i] == char:
                return True
            i += 1
    return False


MAX_PATTERNS = 1000
MAX_PATTERN_LENGTH = 1000
WORK_LIMIT = 10_000_000
"""Automaton steps (a live state advanced over one character, looked up or worked out) a ``GlobSet``
may spend: a few seconds at most; an ordinary patch against an ordinary policy spends a few
thousand."""
MOVES_HELD = 250_000
"""Live states a ``Moves`` table holds at most (a few megabytes); past it, moves are worked out
each time, as without the table."""


class GlobWorkExceeded(Exception):
    """A ``GlobSet`` reached its ``WORK_LIMIT`` (a signal, turned into a PolicyError by ``policy``)."""


class Glob:
    """One compiled pattern."""

    # (Hand-written, not a record: compiled from its pattern, and a key of Moves.table looked up
    # on every character, hashed by identity; a record would hash its fields each time.)
    __slots__ = ("pattern", "_steps", "_prefix", "_runs", "_start")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        anywhere = "/" not in pattern.rstrip("/")
        pattern = pattern.removeprefix("/")  # (anchored: the test above saw the slash)
        if pattern.endswith("/"):
            pattern += "**"
        steps: list[tuple[int, str]] = list(_DIRS_STEPS) if anywhere else []
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                steps += _DIRS_STEPS
                i += 3
            elif pattern.startswith("**", i):
                steps.append((_ANY, ""))
                i += 2
            elif pattern[i] == "*":
                steps.append((_SEGMENT, ""))
                i += 1
            elif pattern[i] == "?":
                steps.append((_ONE, ""))
                i += 1
            elif pattern[i] == "[" and (close := _class_end(pattern, i)) > 0:
                negated = pattern[i + 1] in "!^"
                steps.append((_NOT_CLASS if negated else _CLASS, pattern[i + 1 + negated : close]))
                i = close + 1
            elif pattern[i] == "\\" and i + 1 < len(pattern):
                steps.append((_LITERAL, pattern[i + 1]))
                i += 2
            else:
                steps.append((_LITERAL, pattern[i]))
                i += 1
        self._steps = tuple(steps)
        runs: list[str] = []
        run: list[str] = []
        for kind, literal in steps:
            if kind == _LITERAL:
                run.append(literal)
            elif run:
                runs.append("".join(run))
                run = []
        if run:
            runs.append("".join(run))
        # Literal text the path must start with (an anchored pattern's first run), and hold.
        self._prefix = runs[0] if runs and steps[0][0] == _LITERAL else ""
        self._runs = tuple(runs)
        self._start = frozenset(self._closure({0}))

    def could_match(self, path: str) -> bool:
        """A necessary condition for ``matches``, checked at C speed."""
        return path.startswith(self._prefix) and all(run in path for run in self._runs)

    def _closure(self, states: set[int]) -> set[int]:
        """``states`` and every state reachable from them without consuming a character."""
        steps, end = self._steps, len(self._steps)
        todo = list(states)
        while todo:
            state = todo.pop()
            if state == end:
                continue
            kind = steps[state][0]
            skips = (state + 1, state + 2) if kind == _DIRS else (state + 1,) if kind in (_SEGMENT, _ANY) else ()
            for following in skips:
                if following not in states:
                    states.add(following)
                    todo.append(following)
        return states

    def matches(self, path: str, work: list[int] | None = None, moves: Moves | None = None) -> bool:
        """Whether ``path`` (workspace-relative, ``/``-separated) or a folder above it matches.
        ``work``: a one-item counter of automaton steps, raised GlobWorkExceeded at its limit.
        ``moves``: the moves worked out so far in this check (kept there, and looked up)."""
        if not self.could_match(path):
            return False
        end = len(self._steps)
        states = self._start
        for char in path:
            if work is not None:
                work[0] += len(states)
                if work[0] > WORK_LIMIT:
                    raise GlobWorkExceeded
            if end in states and char == "/":
                return True  # the pattern matched a folder holding the path
            known = moves.table.get((self, states, char)) if moves is not None else None
            if known is None:
                known = self._advance(states, char)
                if moves is not None and moves.held < MOVES_HELD:
                    moves.table[self, states, char] = known
                    moves.held += len(states) + len(known)
            if not known:
                return False
            states = known
        return end in states

    def _advance(self, states: frozenset[int], char: str) -> frozenset[int]:
        """The live states after ``char`` (empty: the pattern cannot match)."""
        steps, end = self._steps, len(self._steps)
        following: set[int] = set()
        for state in states:
            if state == end:
                continue
            kind, literal = steps[state]
            if kind == _LITERAL:
                if char == literal:
                    following.add(state + 1)
            elif kind == _ONE:
                if char != "/":
                    following.add(state + 1)
            elif kind == _CLASS or kind == _NOT_CLASS:
                if char != "/" and _in_set(literal, char) == (kind == _CLASS):
                    following.add(state + 1)
            elif kind == _SEGMENT:
                if char != "/":
                    following.add(state)
            elif kind == _ANY:
                following.add(state)
            elif kind == _DIRS_LOOP:
                following.add(state)
                if char == "/":
                    following.add(state + 1)
        return frozenset(self._closure(following)) if following else frozenset()


class Moves:
    """Where a character leads each set of live states of each pattern, as worked out so far in
    one ``GlobSet``'s check: ``table[glob, states, char]`` is the set after ``char``. Holds at most
    ``MOVES_HELD`` states (counted in ``held``), and lives as long as its ``GlobSet``."""

    # (Hand-written, not a record: work state that grows as a check goes, not a value.)
    __slots__ = ("table", "held")

    def __init__(self) -> None:
        self.table: dict[tuple[Glob, frozenset[int], str], frozenset[int]] = {}
        self.held = 0


_COMPILED: dict[tuple[str, ...], tuple[Glob, ...]] = {}


class GlobSet:
    """Patterns asked about many paths, with the work they may spend bounded (``WORK_LIMIT``)."""

    # (Hand-written, not a record: it carries the work spent so far, not a value.)
    __slots__ = ("patterns", "globs", "work", "moves")

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = tuple(patterns)
        self.globs = compiled(self.patterns)
        self.work = [0]
        self.moves = Moves()

    def first_match(self, path: str) -> str | None:
        """The first pattern that matches ``path``; GlobWorkExceeded past the work limit."""
        for pattern, glob in zip(self.patterns, self.globs, strict=True):
            if glob.matches(path, self.work, self.moves):
                return pattern
        return None


def compiled(patterns: tuple[str, ...]) -> tuple[Glob, ...]:
    """The compiled ``patterns`` (cached: a plan checks every path against the same few)."""
    patterns = tuple(patterns)  # a caller may pass a list
    found = _COMPILED.get(patterns)
    if found is None:
        found = _COMPILED[patterns] = tuple(Glob(p) for p in patterns)
    return found
