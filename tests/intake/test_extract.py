"""Taking a patch out of a model's reply (issue 18: --extract and the tools' extract argument)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import patchtx
from patchtx.agents.tool_call import run_tool_call
from patchtx.errors import ParseError
from patchtx.intake.extract import candidates, extract_patch

PATCH = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
OTHER = "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n"


@pytest.mark.parametrize("reply", [
    PATCH,
    f"Sure! Here is the fix:\n\n```diff\n{PATCH}```\n\nHope this helps. Tell me if *** End Patch is wrong.\n",
    f"```\n{PATCH}```",
    f"~~~patch\n{PATCH}~~~\n",
    f"Run this:\n```bash\napply_patch <<'EOF'\n{PATCH}EOF\n```\n",
    "1. First, apply:\n\n" + "".join(f"   {line}\n" for line in PATCH.splitlines()) + "\nDone.",
    f"{PATCH}\nAs above:\n\n{PATCH}",  # the same patch twice counts once
    f"The patch:\r\n{PATCH.replace(chr(10), chr(13) + chr(10))}Thanks",
])
def test_the_patch_is_taken_out_of_the_reply(reply: str) -> None:
    assert extract_patch(reply) == PATCH


@pytest.mark.parametrize("inside", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"])
def test_a_line_holding_a_form_feed_or_unicode_line_separator_stays_one_line(inside: str,
                                                                           tmp_path: Path) -> None:
    """Only an LF ends a patch line, as in the parser: split at a form feed (a page break in GNU
    style sources), the added line '+\f' became an added empty line and an empty context line,
    and the patch applied as a different edit."""
    patch = f"*** Begin Patch\n*** Update File: f.py\n@@\n a\n+{inside}\n \n b\n*** End Patch\n"
    assert extract_patch(f"Here:\n{patch}Done.\n") == patch
    (tmp_path / "f.py").write_bytes(b"a\n\n\nb\n")
    with pytest.raises(patchtx.PatchtxError) as direct:
        patchtx.plan_patch(patch, tmp_path)
    with pytest.raises(patchtx.PatchtxError) as extracted:
        patchtx.plan_patch(f"Here:\n{patch}Done.\n", tmp_path, extract=True)
    assert extracted.value.kind == direct.value.kind == "context_not_found"
    (tmp_path / "f.py").write_bytes(b"a\n\nb\n")
    assert patchtx.plan_patch(f"Here:\n{patch}", tmp_path, extract=True).changes[0].after == (
        f"a\n{inside}\n\nb\n".encode())


def test_a_context_line_that_looks_like_a_fence_stays_in_the_patch() -> None:
    patch = "*** Begin Patch\n*** Update File: README.md\n@@\n ```\n-old\n+new\n ```\n*** End Patch\n"
    assert extract_patch(f"```\n{patch}```\n") == patch


def test_an_unterminated_patch_ends_at_its_fence_and_the_parser_says_what_is_missing() -> None:
    reply = "```\n*** Begin Patch\n*** Add File: a\n+x\n```\nMore prose.\n"
    extracted = extract_patch(reply)
    assert extracted == "*** Begin Patch\n*** Add File: a\n+x\n"
    with pytest.raises(ParseError) as caught:
        patchtx.parse(extracted)
    assert "'*** End Patch'" in caught.value.message


def test_no_patch_and_several_patches_are_refused() -> None:
    with pytest.raises(ParseError) as none:
        extract_patch("I could not find the bug.")
    assert none.value.kind == "no_patch" and "Nothing was changed." in none.value.message
    reply = f"Option A:\n```\n{PATCH}```\nOption B:\n```\n{OTHER}```\n"
    with pytest.raises(ParseError) as several:
        extract_patch(reply)
    error = several.value
    assert error.kind == "several_patches"
    assert "2 different candidate patches: lines 3-8 (a.txt); lines 12-15 (b.txt)." in error.message
    assert error.details["candidates"] == [
        {"first_line": 3, "last_line": 8, "files": ["a.txt"]},
        {"first_line": 12, "last_line": 15, "files": ["b.txt"]}]
    assert [c.first_line for c in candidates(reply)] == [3, 12]


def test_prose_after_end_patch_is_not_told_to_add_end_patch() -> None:
    with pytest.raises(ParseError) as caught:
        patchtx.parse(PATCH + "\nHope this helps!\n")
    message = caught.value.message
    assert "Close the patch" not in message
    assert "Text follows the '*** End Patch' line (it ends with 'Hope this helps!')" in message
    assert "--extract" in message
    with pytest.raises(ParseError) as before:
        patchtx.parse("Here you go:\n" + PATCH)
    assert "--extract" in before.value.message


def test_extract_through_the_api_the_cli_and_a_tool_call(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    reply = f"Here:\n```\n{PATCH}```\nDone."
    assert patchtx.plan_patch(reply, tmp_path, extract=True).summary == "A 0, M 1, D 0, R 0"
    outcome = run_tool_call({"input": reply, "extract": True, "dry_run": True}, str(tmp_path))
    assert outcome.ok and outcome.payload["summary"] == "A 0, M 1, D 0, R 0"
    refused = run_tool_call({"input": reply}, str(tmp_path))
    assert not refused.ok and refused.payload["error"]["kind"] == "parse_error"
    (tmp_path / "reply.md").write_text(reply)
    patchtx_cli = str(Path(sys.executable).parent / "patchtx")
    done = subprocess.run([patchtx_cli, "apply", "--extract", "reply.md"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.txt").read_text() == "ONE\n"
    (tmp_path / "two.md").write_text(f"{PATCH}\nor\n{OTHER}")
    several = subprocess.run([patchtx_cli, "apply", "--extract", "--json", "two.md"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
    assert several.returncode == 1 and '"kind": "several_patches"' in several.stdout
    assert '"patch_file": "two.md"' in several.stdout
