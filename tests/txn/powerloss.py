"""A model of what a disk may hold after a power cut, replayed from recorded filesystem calls.

The power-loss model (documented in docs/guarantees.md):

* File data written since the file's last fsync may be lost: after the cut the file holds its
  last synced bytes (nothing, for a file never synced), all of the new bytes, or a torn prefix of
  them. Its mode, if changed since, is lost along with the data. (A file rewritten in place is
  modelled the same way: its old bytes, its new bytes, or half of the new ones.)
* Directory entry changes (create, mkdir, link, rename, unlink, rmdir) made since the directory's
  last fsync may be lost. Within one directory they are lost from the end (a prefix of them
  survives: journaling filesystems keep metadata operations in order); across directories each
  directory loses independently, which is harsher than any real filesystem.
* A rename within one directory is one entry change (it happens entirely or not at all).
* syncfs makes everything durable.

``Disk.replay`` follows the calls; ``Disk.states`` then yields concrete trees a cut right there
could leave, which ``materialize`` writes out for recovery to run on.
"""

from __future__ import annotations

import os
import random
import shutil
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from patchtx.txn.fsops import Call

from .helpers import UMASK


@dataclass(eq=False)
class FileNode:
    data: bytes
    mode: int
    synced_data: bytes | None
    """None: never synced (a cut leaves it empty)."""
    synced_mode: int
    fresh: bool = False
    """Created by a replayed call: its writes append. A write to a file that already existed is a
    rewrite in place (a file with other hard links), from offset 0."""
    rewritten: int = 0
    """Length of the last rewrite in place: what a truncate that follows it cuts the file to."""
    inode: int | None = None
    """Its inode number on the disk it was loaded from (None: created by a replayed call)."""

    @property
    def dirty(self) -> bool:
        return self.synced_data != self.data or self.synced_mode != self.mode

    def sync(self) -> None:
        self.synced_data, self.synced_mode = self.data, self.mode


@dataclass(eq=False)
class DirNode:
    mode: int
    entries: dict[str, Node] = field(default_factory=dict)
    synced_entries: dict[str, Node] = field(default_factory=dict)
    pending: list[tuple[str, str, str | None, Node | None]] = field(default_factory=list)
    """Entry changes since the last fsync: ("set", name, None, node), ("del", name, None, None),
    ("rename", src, dst, None)."""
    synced_mode: int = 0

    def sync(self) -> None:
        self.synced_entries = dict(self.entries)
        self.pending = []
        self.synced_mode = self.mode

    def set(self, name: str, node: Node) -> None:
        self.entries[name] = node
        self.pending.append(("set", name, None, node))

    def delete(self, name: str) -> None:
        del self.entries[name]
        self.pending.append(("del", name, None, None))

    def rename(self, src: str, dst: str) -> None:
        self.entries[dst] = self.entries.pop(src)
        self.pending.append(("rename", src, dst, None))

    def entries_after(self, prefix: int) -> dict[str, Node]:
        entries = dict(self.synced_entries)
        for op, name, dst, node in self.pending[:prefix]:
            if op == "set":
                assert node is not None
                entries[name] = node
            elif op == "del":
                entries.pop(name, None)
            else:
                assert dst is not None
                if name in entries:
                    entries[dst] = entries.pop(name)
        return entries


Node = FileNode | DirNode
Choice = Literal["synced", "full", "torn"]


class Disk:
    def __init__(self, root: Path) -> None:
        self.nodes: list[Node] = []
        self.root = self._load(root, {})

    def _load(self, path: Path, inodes: dict[tuple[int, int], FileNode]) -> DirNode:
        st = os.lstat(path)
        node = DirNode(mode=stat.S_IMODE(st.st_mode), synced_mode=stat.S_IMODE(st.st_mode))
        self.nodes.append(node)
        for name in sorted(os.listdir(path)):
            child = path / name
            cst = os.lstat(child)
            if stat.S_ISDIR(cst.st_mode):
                node.entries[name] = self._load(child, inodes)
            elif stat.S_ISREG(cst.st_mode):
                key = (cst.st_dev, cst.st_ino)
                if key not in inodes:
                    data = child.read_bytes()
                    mode = stat.S_IMODE(cst.st_mode)
                    inodes[key] = FileNode(data, mode, data, mode, inode=cst.st_ino)
                    self.nodes.append(inodes[key])
                node.entries[name] = inodes[key]
            else:
                raise NotImplementedError(f"{child}: only files and folders are modelled")
        node.synced_entries = dict(node.entries)
        return node

    # -- replaying calls ------------------------------------------------------------------------

    def lookup(self, path: str) -> Node:
        node: Node = self.root
        for part in filter(None, path.split("/")):
            assert isinstance(node, DirNode), path
            node = node.entries[part]
        return node

    def parent(self, path: str) -> tuple[DirNode, str]:
        parent_path, _, name = path.rpartition("/")
        parent = self.lookup(parent_path)
        assert isinstance(parent, DirNode), path
        return parent, name

    def replay(self, call: Call) -> None:
        op = call.op
        if op == "mkdir":
            parent, name = self.parent(call.path)
            mode = (call.mode or 0o777) & ~UMASK
            new_dir = DirNode(mode=mode, synced_mode=mode)
            self.nodes.append(new_dir)
            parent.set(name, new_dir)
        elif op == "create":
            parent, name = self.parent(call.path)
            mode = (call.mode or 0o666) & ~UMASK
            new_file = FileNode(b"", mode, None, mode, fresh=True)
            self.nodes.append(new_file)
            parent.set(name, new_file)
        elif op == "write":
            node = self.lookup(call.path)
            assert isinstance(node, FileNode) and call.data is not None
            if node.fresh:
                node.data += call.data
            else:
                node.data = call.data + node.data[len(call.data):]
                node.rewritten = len(call.data)
        elif op == "truncate":
            node = self.lookup(call.path)
            assert isinstance(node, FileNode) and not node.fresh
            node.data = node.data[: node.rewritten]
        elif op == "fchmod":
            node = self.lookup(call.path)
            assert call.mode is not None
            node.mode = call.mode
        elif op in ("fchown", "setxattr"):
            pass  # not modelled: the tests run with the owner they started with, and no xattrs
        elif op == "rename":
            parent, src = self.parent(call.path)
            assert call.target is not None
            dst_parent, dst = self.parent(call.target)
            if dst_parent is not parent:
                raise NotImplementedError("patchtx only renames within a folder; model one that does not")
            parent.rename(src, dst)
        elif op == "link":
            node = self.lookup(call.path)
            assert call.target is not None
            dst_parent, dst = self.parent(call.target)
            dst_parent.set(dst, node)
        elif op in ("unlink", "rmdir"):
            parent, name = self.parent(call.path)
            parent.delete(name)
        elif op == "unlink_many":
            for path in call.paths:
                parent, name = self.parent(path)
                parent.delete(name)
        elif op == "fsync":
            for path in call.paths:
                self.lookup(path).sync()
        elif op == "syncfs":
            for node in self.nodes:
                node.sync()
        else:
            raise NotImplementedError(op)

    # -- what a cut may leave -------------------------------------------------------------------

    def states(self, rng: random.Random, samples: int) -> Iterator[dict[int, int | Choice]]:
        """Choices (per node id: a prefix length for folders, a Choice for files) for ``samples``
        possible post-cut disks: everything lost, everything kept, then random mixes."""
        dirty_dirs = [n for n in self.nodes if isinstance(n, DirNode) and (n.pending or n.mode != n.synced_mode)]
        dirty_files = [n for n in self.nodes if isinstance(n, FileNode) and n.dirty]
        lost: dict[int, int | Choice] = {id(n): 0 for n in dirty_dirs}
        kept: dict[int, int | Choice] = {id(n): len(n.pending) for n in dirty_dirs}
        for n in dirty_files:
            lost[id(n)], kept[id(n)] = "synced", "full"
        yield lost
        yield kept
        if not dirty_dirs and not dirty_files:
            return
        for _ in range(samples - 2):
            choice: dict[int, int | Choice] = {id(n): rng.randint(0, len(n.pending)) for n in dirty_dirs}
            for n in dirty_files:
                choice[id(n)] = rng.choice(("synced", "full", "torn"))
            yield choice

    def materialize(self, dest: Path, choice: dict[int, int | Choice]) -> None:
        if dest.exists():
            shutil.rmtree(dest)
        written: dict[int, Path] = {}
        self._write_dir(self.root, dest, choice, written, is_root=True)
        # A real disk keeps a file's inode number through a power cut; a materialised one is a new
        # file. The journals' records of inode numbers (an update written in place) are carried
        # over to the new numbers, as if the disk had kept them.
        renumbered = {node.inode: path.stat().st_ino for node in self.nodes if isinstance(node, FileNode)
                      and node.inode is not None and (path := written.get(id(node))) is not None}
        _carry_inode_numbers(dest, renumbered)

    def _write_dir(
        self,
        node: DirNode,
        dest: Path,
        choice: dict[int, int | Choice],
        written: dict[int, Path],
        *,
        is_root: bool,
    ) -> None:
        dest.mkdir(exist_ok=is_root)
        prefix = choice.get(id(node), len(node.pending))
        assert isinstance(prefix, int)
        for name, child in sorted(node.entries_after(prefix).items()):
            path = dest / name
            if isinstance(child, DirNode):
                self._write_dir(child, path, choice, written, is_root=False)
            elif id(child) in written:
                os.link(written[id(child)], path)
            else:
                how = choice.get(id(child), "full")
                if how == "synced":
                    data, mode = child.synced_data or b"", child.synced_mode
                elif how == "torn":
                    data, mode = child.data[: len(child.data) // 2], child.mode
                else:
                    data, mode = child.data, child.mode
                path.write_bytes(data)
                os.chmod(path, mode)
                written[id(child)] = path
        # The folder's own mode: lost with its unsynced entries if none of them survived.
        mode = node.mode if prefix == len(node.pending) else node.synced_mode
        os.chmod(dest, mode)


def _carry_inode_numbers(root: Path, renumbered: dict[int, int]) -> None:
    """Rewrite the inode numbers the journals in ``root`` record (re-signed: this is the disk's
    doing, not a forgery)."""
    import hashlib
    import json

    from patchtx.txn.provenance import sign

    folder = root / ".patchtx" / "journal"
    if not folder.is_dir() or not renumbered:
        return
    for journal in folder.iterdir():
        if not journal.name.endswith((".journal", ".committed")) and ".kept-" not in journal.name:
            continue
        try:
            body = json.loads(journal.read_bytes())
        except ValueError:
            continue  # torn: recovery says so
        if not isinstance(body, dict) or not any(
                isinstance(e, dict) and e.get("inode") in renumbered for e in body.get("entries", [])):
            continue
        for entry in body["entries"]:
            if entry.get("inode") in renumbered:
                entry["inode"] = renumbered[entry["inode"]]
        body.pop("checksum", None)
        body.pop("mac", None)
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        mac = sign(text.encode("ascii"), os.path.realpath(root))
        checksum = hashlib.sha256(text.encode("ascii")).hexdigest()
        journal.write_bytes(f'{text[:-1]},"checksum":"{checksum}","mac":"{mac}"}}\n'.encode("ascii"))

