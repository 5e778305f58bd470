"""openai-agents' ``apply_diff`` (the V4A diff applier of the OpenAI Agents SDK) as a command:
the patch as the one argument or on stdin, applied in the current directory.

``apply_diff(text, diff)`` transforms one file's text, so this wrapper does what the SDK's own
editors do around it: split the envelope into file operations, read each file, call
``apply_diff`` (``mode="create"`` for an Add File), write the result, one operation after the
other. An Add File gets a final newline, as Codex's apply_patch gives it (V4A's create mode joins
the lines without one).

By default it imports the function as the SDK documents it, ``from agents import apply_diff``,
which loads the whole SDK (openai, pydantic, ...). With ``PEER_AGENTS_MODULE_ONLY=1`` it loads only
the file ``agents/apply_diff.py`` (the algorithm alone, without the package's import cost).
"""

from __future__ import annotations

import os
import sys

from _envelope import read_patch, split_operations


def _load_apply_diff():  # type: ignore[no-untyped-def]
    if os.environ.get("PEER_AGENTS_MODULE_ONLY") == "1":
        import importlib.util

        spec = importlib.util.find_spec("agents")
        assert spec is not None and spec.submodule_search_locations
        path = os.path.join(list(spec.submodule_search_locations)[0], "apply_diff.py")
        module_spec = importlib.util.spec_from_file_location("_v4a_apply_diff", path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules["_v4a_apply_diff"] = module
        module_spec.loader.exec_module(module)
        return module.apply_diff
    from agents import apply_diff

    return apply_diff


def main() -> int:
    text = read_patch()
    apply_diff = _load_apply_diff()
    done: list[str] = []
    try:
        for op in split_operations(text):
            path = str(op["path"])
            diff = "\n".join(op["body"]) + "\n"  # type: ignore[arg-type]
            if op["kind"] == "add":
                new = apply_diff("", diff, mode="create")
                _write(path, new if new.endswith("\n") or not new else new + "\n")
                done.append(f"A {path}")
            elif op["kind"] == "delete":
                os.remove(path)
                done.append(f"D {path}")
            else:
                with open(path, encoding="utf-8", newline="") as handle:
                    old = handle.read()
                new = apply_diff(old, diff)
                dest = str(op["move_to"] or path)
                _write(dest, new)
                if dest != path:
                    os.remove(path)
                done.append(f"M {dest}")
    except (ValueError, OSError) as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    sys.stdout.write("Success. Updated the following files:\n" + "".join(d + "\n" for d in done))
    return 0


def _write(path: str, text: str) -> None:
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


if __name__ == "__main__":
    sys.exit(main())
