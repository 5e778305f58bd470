"""Multi-file scenarios shared by the crash, power-loss and fault tests."""

from __future__ import annotations

from .helpers import Dir, Scenario

MIXED = Scenario(
    name="mixed",
    tree={
        "README.md": b"readme\n",
        "src/app.py": b"print('v1')\n",
        "src/tool.sh": (b"#!/bin/sh\necho v1\n", 0o755),
        "src/keep.txt": b"untouched\n",
        "old/inner/gone.txt": b"deleted with its folders\n",
        "old/inner/moved.py": b"def f():\n    return 1\n",
        "docs/guide.md": b"guide v1\n",
    },
    changes={
        "README.md": b"readme v2\n",  # update in the root
        "src/app.py": b"print('v2')\n",  # update in a subfolder
        "src/tool.sh": b"#!/bin/sh\necho v2\n",  # keeps its executable mode
        "src/new.txt": b"added next to others\n",  # add into an existing folder
        "old/inner/gone.txt": None,  # delete
        "old/inner/moved.py": None,  # move source ...
        "pkg/sub/moved.py": b"def f():\n    return 2\n",  # ... to a new nested folder
        "docs/guide.md": b"guide v2\n",
    },
    modes={"docs/guide.md": 0o600},  # a mode change with a content change
)

DELETE_THEN_DESCEND = Scenario(
    name="file-becomes-folder",
    tree={"a": b"a file that becomes a folder\n", "b.txt": b"b\n"},
    changes={"a": None, "a/inside.txt": b"now a folder\n", "b.txt": b"b2\n"},
)

ONLY_DELETES = Scenario(
    name="only-deletes",
    tree={
        "x/1.txt": b"1\n",
        "x/2.txt": b"2\n",
        "x/y/3.txt": b"3\n",
        "keep/empty": Dir(0o750),
        "z.txt": b"z\n",
    },
    changes={"x/1.txt": None, "x/2.txt": None, "x/y/3.txt": None, "z.txt": None},
)

KEPT_DIR = Scenario(
    name="kept-folder",
    tree={"d/a.txt": b"a\n", "d/b.txt": b"b\n"},
    changes={"d/a.txt": None, "c.txt": b"c\n"},
    remove_dirs=("d",),  # the plan asks, but d/b.txt remains: d must be kept
)

ALL = [MIXED, DELETE_THEN_DESCEND, ONLY_DELETES, KEPT_DIR]
