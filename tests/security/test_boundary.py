"""The workspace boundary: every hostile path is refused before a byte is written, inside or
outside the root, including a symlink swapped in while a commit is under way."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

import patchtx
from patchtx.errors import PatchtxError
from patchtx.txn import FileSystemOps, commit

T = TypeVar("T")


def snapshot(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                out[rel] = "<dir>"
            elif path.is_file():
                out[rel] = path.read_bytes()
            else:
                out[rel] = "<special>"
    return out


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "inside.txt").write_text("inside\n")
    (root / "sub").mkdir()
    (root / "sub/file.txt").write_text("sub\n")
    (outside / "secret.txt").write_text("secret\n")
    (root / "link_out").symlink_to(outside)
    (root / "file_link_out").symlink_to(outside / "secret.txt")
    (root / ".git").mkdir()
    (root / ".git/config").write_text("[core]\n")
    return root, outside


def add(path: str) -> str:
    return f"*** Begin Patch\n*** Add File: {path}\n+pwned\n*** End Patch"


def update(path: str, old: str = "secret", new: str = "pwned") -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch"


ATTACKS = {
    "absolute outside": lambda r, o: add(str(o / "new.txt")),
    "absolute update outside": lambda r, o: update(str(o / "secret.txt")),
    "dotdot": lambda r, o: add("../outside/new.txt"),
    "dotdot in the middle": lambda r, o: add("sub/../../outside/new.txt"),
    "dotdot staying inside": lambda r, o: add("sub/../inside2.txt"),
    "backslash traversal": lambda r, o: add("..\\outside\\new.txt"),
    "windows drive": lambda r, o: add("C:\\Windows\\x.txt"),
    "windows drive slash": lambda r, o: add("C:/Windows/x.txt"),
    "unc path": lambda r, o: add("\\\\server\\share\\x.txt"),
    "nul byte": lambda r, o: add("a\x00b.txt"),
    # Control characters: a CR inside a name, a terminal escape sequence, DEL (a tab is allowed).
    "carriage return in a name": lambda r, o: add("a\rb.txt"),
    "escape sequence in a name": lambda r, o: add("sub/\x1b[2K\x1b[1Ainside.txt"),
    "delete character in a name": lambda r, o: add("a\x7fb.txt"),
    "moved to a name with a newline escape": lambda r, o: "*** Begin Patch\n*** Update File: inside.txt\n"
                                                          "*** Move to: in\x0bside.txt\n@@\n inside\n*** End Patch",
    # Characters that reorder, break or escape a printed line (issue 38): C1 controls, the line and
    # paragraph separators, the bidirectional controls ("Trojan Source" names).
    "C1 control NEL in a name": lambda r, o: add("a\x85b.txt"),
    "C1 control CSI in a name": lambda r, o: add("sub/\x9b2Kinside.txt"),
    "line separator in a name": lambda r, o: add("a\u2028b.txt"),
    "paragraph separator in a name": lambda r, o: add("a\u2029b.txt"),
    "right-to-left override in a name": lambda r, o: add("invoice\u202egpj.exe"),
    "left-to-right embedding in a name": lambda r, o: add("a\u202ab.txt"),
    "right-to-left isolate in a name": lambda r, o: add("a\u2067b\u2069.txt"),
    "right-to-left mark in a name": lambda r, o: add("a\u200fb.txt"),
    "arabic letter mark in a folder": lambda r, o: add("sub\u061c/b.txt"),
    "moved to a name with an override": lambda r, o: "*** Begin Patch\n*** Update File: inside.txt\n"
                                                     "*** Move to: in\u202eside.txt\n@@\n inside\n*** End Patch",
    "symlinked parent dir": lambda r, o: add("link_out/new.txt"),
    "update through symlinked parent": lambda r, o: update("link_out/secret.txt"),
    "update through file symlink": lambda r, o: update("file_link_out"),
    "delete through file symlink": lambda r, o: "*** Begin Patch\n*** Delete File: file_link_out\n*** End Patch",
    "move destination leaves": lambda r, o: "*** Begin Patch\n*** Update File: inside.txt\n"
                                            "*** Move to: ../outside/moved.txt\n@@\n inside\n*** End Patch",
    "move destination through link": lambda r, o: "*** Begin Patch\n*** Update File: inside.txt\n"
                                                  "*** Move to: link_out/moved.txt\n@@\n inside\n*** End Patch",
    "git folder": lambda r, o: update(".git/config", "[core]", "[evil]"),
    "patchtx state folder": lambda r, o: add(".patchtx/journal/x"),
    # The same folders as a case-insensitive (macOS, Windows), HFS+ or NTFS filesystem names them.
    "git folder in capitals": lambda r, o: add(".GIT/hooks/post-checkout"),
    "git folder mixed case, nested": lambda r, o: add("sub/.Git/hooks/pre-commit"),
    "git folder with an HFS+ ignored character": lambda r, o: add(".g\u200cit/hooks/x"),
    "git folder with a trailing dot": lambda r, o: add(".git./hooks/x"),
    "git folder's NTFS short name": lambda r, o: add("GIT~1/hooks/x"),
    "patchtx state folder in capitals": lambda r, o: add(".PatchTX/journal/x"),
    "root itself": lambda r, o: add(str(r)),
    "empty path segments only": lambda r, o: add("./"),
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_is_refused_and_nothing_written(name: str, world: tuple[Path, Path]) -> None:
    root, outside = world
    before_root, before_outside = snapshot(root), snapshot(outside)
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(ATTACKS[name](root, outside), root)
    assert caught.value.kind in {"unsafe_path", "parse_error", "not_a_file"}, caught.value.kind
    assert "Nothing was changed." in caught.value.message
    assert snapshot(root) == before_root
    assert snapshot(outside) == before_outside


@pytest.mark.parametrize("path", [".github/workflows/ci.yml", ".gitignore", "git/notes.txt", "sub/.gits/x",
                                  "patchtx/.patchtx-notes"])
def test_names_that_only_look_like_reserved_folders_are_accepted(path: str,
                                                                  world: tuple[Path, Path]) -> None:
    root, _ = world
    patchtx.apply_patch(add(path), root)
    assert (root / path).exists()


def test_absolute_path_inside_root_is_accepted(world: tuple[Path, Path]) -> None:
    root, _ = world
    patchtx.apply_patch(update(str(root / "inside.txt"), "inside", "changed"), root)
    assert (root / "inside.txt").read_text() == "changed\n"


def test_symlink_inside_root_is_followed_to_its_target(world: tuple[Path, Path]) -> None:
    root, _ = world
    (root / "alias.txt").symlink_to("sub/file.txt")
    patchtx.apply_patch(update("alias.txt", "sub", "via link"), root)
    assert os.readlink(root / "alias.txt") == "sub/file.txt", "the link itself is kept"
    assert (root / "sub/file.txt").read_text() == "via link\n"


@pytest.mark.parametrize("kind", ["fifo", "socket", "directory"])
def test_special_files_and_directories_are_refused_as_targets(kind: str, world: tuple[Path, Path]) -> None:
    root, _ = world
    target = root / "special"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(target))
    else:
        target.mkdir()
    before = snapshot(root)
    for patch in (update("special", "x", "y"), "*** Begin Patch\n*** Delete File: special\n*** End Patch",
                  add("special")):
        with pytest.raises(PatchtxError) as caught:
            patchtx.apply_patch(patch, root, allow_overwrite=True)
        assert caught.value.kind in {"not_a_file", "file_not_found"}
    assert snapshot(root) == before


class SwapParentForSymlink(FileSystemOps):
    """Replaces ``sub`` by a symlink to the outside folder right before mutating call N."""

    def __init__(self, root: Path, outside: Path, at_call: int) -> None:
        super().__init__()
        self.root, self.outside, self.at_call = root, outside, at_call
        self.swapped = False

    def _perform(self, call: Any, action: Callable[[], T]) -> T:
        if call.index == self.at_call and not self.swapped:
            os.rename(self.root / "sub", self.root / "sub.moved-away")
            (self.root / "sub").symlink_to(self.outside)
            self.swapped = True
        return super()._perform(call, action)


def test_symlink_swapped_in_after_planning_is_refused(world: tuple[Path, Path]) -> None:
    root, outside = world
    (outside / "file.txt").write_text("sub\n")
    plan = patchtx.plan_patch(update("sub/file.txt", "sub", "pwned") + "", root)
    os.rename(root / "sub", root / "sub.moved-away")
    (root / "sub").symlink_to(outside)
    before_outside = snapshot(outside)
    with pytest.raises(PatchtxError) as caught:
        commit(plan)
    assert caught.value.kind in {"unsafe_path", "changed_since_planning"}
    assert snapshot(outside) == before_outside
    assert (root / "sub.moved-away/file.txt").read_text() == "sub\n"


@pytest.mark.parametrize("at_call", range(1, 16))
def test_symlink_swapped_in_during_a_commit_never_writes_outside(at_call: int,
                                                                 world: tuple[Path, Path]) -> None:
    root, outside = world
    (outside / "file.txt").write_text("sub\n")
    plan = patchtx.plan_patch(
        "*** Begin Patch\n*** Update File: sub/file.txt\n@@\n-sub\n+changed\n"
        "*** Add File: sub/new/deep.txt\n+new\n*** Delete File: inside.txt\n*** End Patch", root)
    before_outside = snapshot(outside)
    fs = SwapParentForSymlink(root, outside, at_call)
    try:
        commit(plan, fs=fs)
    except PatchtxError as error:
        assert error.kind in {"unsafe_path", "changed_since_planning", "io_error"}, error.kind
    assert snapshot(outside) == before_outside, "nothing may be written through the swapped link"


def test_a_control_character_is_shown_escaped_in_the_refusal(world: tuple[Path, Path]) -> None:
    root, _ = world
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(add("x\x1b[31m.txt"), root)
    assert caught.value.kind == "unsafe_path"
    assert "\x1b" not in caught.value.message  # never written raw to a terminal
    assert "'x\\x1b[31m.txt'" in caught.value.message and "U+001B" in caught.value.message


REFUSED_CHARACTERS = {"\x85": "control character U+0085", "\x9b": "control character U+009B",
                      "\u2028": "line or paragraph separator U+2028",
                      "\u2029": "line or paragraph separator U+2029",
                      **{c: f"bidirectional control U+{ord(c):04X}" for c in
                         "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"}}


@pytest.mark.parametrize("character", sorted(REFUSED_CHARACTERS), ids=lambda c: f"U+{ord(c):04X}")
def test_a_name_that_would_disguise_a_printed_line_is_refused_naming_the_code_point(
        character: str, world: tuple[Path, Path]) -> None:
    """Issue 38: C1 controls, U+2028/U+2029 and the bidirectional controls passed the path rule and
    reached `log`, diffs and terminals raw. Refused as C0 controls are, by the one rule
    (``workspace.path_problem``: the planner, the gate, the journal reader), the code point named
    and the name shown escaped, never raw."""
    from patchtx.txn.journal import relpath_field
    from patchtx.workspace.paths import path_problem

    root, _ = world
    before = snapshot(root)
    name = f"sub/report{character}cod.txt"
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(add(name), root)
    assert caught.value.kind == "unsafe_path"
    message = caught.value.message
    assert character not in message and character not in str(caught.value.path)
    assert REFUSED_CHARACTERS[character] in message
    assert character.encode("unicode_escape").decode("ascii") in message  # the name, escaped
    assert snapshot(root) == before
    assert path_problem(name) == f"it contains the {REFUSED_CHARACTERS[character]}"
    with pytest.raises(ValueError):
        relpath_field(name)


def test_a_bidirectional_override_is_refused_on_every_surface(world: tuple[Path, Path]) -> None:
    """The library, the command line and the MCP server: the same refusal, the name escaped in the
    JSON a host shows (and in the text a terminal shows)."""
    from .surfaces import cli, everywhere

    root, _ = world
    before = snapshot(root)
    patch = add("sub/notes\u202etxt.sh")
    assert everywhere(root, patch) == {"library": "unsafe_path", "cli": "unsafe_path", "mcp": "unsafe_path"}
    _kind, shown = cli(root, "apply", patch=patch)
    message = shown["error"]["message"]
    assert "\u202e" not in message and "notes\\u202etxt.sh" in message and "U+202E" in message
    assert snapshot(root) == before


def test_printable_names_beside_the_refused_characters_are_accepted(world: tuple[Path, Path]) -> None:
    """What the rule leaves alone: letters of right-to-left scripts, a no-break space, a tab,
    a zero-width joiner (emoji sequences), U+00A0 just past the C1 range."""
    root, _ = world
    for name in ("\u05e9\u05dc\u05d5\u05dd.txt", "a\u00a0b.txt", "a\tb.txt", "x\u200dy.txt", "caf\u00e9.txt"):
        patchtx.apply_patch(add(name), root)
        assert (root / name).read_text() == "pwned\n"


# The edit protocols reach files through the same path rules: every hostile path refused, by every
# front door, before a byte is written (and `view` never reads outside the root).
HOSTILE_PATHS = {
    "absolute outside": lambda r, o: str(o / "secret.txt"),
    "dotdot": lambda r, o: "../outside/secret.txt",
    "dotdot in the middle": lambda r, o: "sub/../../outside/secret.txt",
    "backslash traversal": lambda r, o: "..\\outside\\secret.txt",
    "windows drive": lambda r, o: "C:/Windows/secret.txt",
    "symlinked parent dir": lambda r, o: "link_out/secret.txt",
    "file symlink out": lambda r, o: "file_link_out",
    "git folder": lambda r, o: ".git/config",
    "git folder in capitals": lambda r, o: ".GIT/config",
    "patchtx state folder": lambda r, o: ".patchtx/secret.txt",
    "root itself": lambda r, o: str(r),
    "escape sequence in a name": lambda r, o: "sub/\x1b[2Ksecret.txt",
    "C1 control in a name": lambda r, o: "sub/\x9b2Ksecret.txt",
    "right-to-left override in a name": lambda r, o: "sub/secret\u202etxt.exe",
    "line separator in a name": lambda r, o: "sub/secret\u2028.txt",
}


def _through(door: str, root: Path, path: str) -> object:
    from patchtx.agents.editor import TextEditor
    from patchtx.api import apply_edits

    if door == "search-replace":
        return patchtx.apply_patch(f"{path}\n<<<<<<< SEARCH\nsecret\n=======\npwned\n>>>>>>> REPLACE\n", root)
    if door == "search-replace new file":
        return patchtx.apply_patch(f"{path}\n<<<<<<< SEARCH\n=======\npwned\n>>>>>>> REPLACE\n", root)
    if door == "edit list":
        return apply_edits([{"path": path, "old_string": "secret", "new_string": "pwned"}], root)
    if door == "edit list new file":
        return apply_edits([{"path": path, "old_string": "", "new_string": "pwned\n"}], root)
    editor = TextEditor(root)
    if door == "editor create":
        return editor.run("create", path, file_text="pwned\n")
    if door == "editor str_replace":
        return editor.run("str_replace", path, old_str="secret", new_str="pwned")
    if door == "editor insert":
        return editor.run("insert", path, insert_line=0, insert_text="pwned")
    return editor.run("view", path)


DOORS = ("search-replace", "search-replace new file", "edit list", "edit list new file",
         "editor create", "editor str_replace", "editor insert", "editor view")


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("name", sorted(HOSTILE_PATHS))
def test_edit_protocols_refuse_every_hostile_path(door: str, name: str, world: tuple[Path, Path]) -> None:
    root, outside = world
    path = HOSTILE_PATHS[name](root, outside)
    before_root, before_outside = snapshot(root), snapshot(outside)
    if door == "editor view" and name == "root itself":  # the root's own listing: allowed
        listing = _through(door, root, path).text  # type: ignore[attr-defined]
        assert "inside.txt" in listing and ".git" not in listing.split("excluded")[0]
        assert "secret" not in listing and snapshot(root) == before_root
        return
    with pytest.raises(PatchtxError) as caught:
        _through(door, root, path)
    assert caught.value.kind in {"unsafe_path", "not_a_file", "parse_error"}, (caught.value.kind,
                                                                              caught.value.message)
    assert "Nothing was changed." in caught.value.message and "secret\n" not in caught.value.message
    assert snapshot(root) == before_root
    assert snapshot(outside) == before_outside
