"""The freeform tool's Lark grammar accepts exactly the patches patchtx parses (with a few forms
left out on purpose), checked with two engines: Python's ``lark`` (Earley) and ``llguidance``,
the constrained-decoding engine behind OpenAI's grammar-constrained custom tools, whose greedy
lexer is stricter about terminals that overlap.
"""

from __future__ import annotations

import llguidance
import pytest
from agents_support import REPO, fenced_blocks
from grammar_engines import lark_accepts, lark_parser, llg_accepts, llg_grammar, llg_tokenizer, parser_accepts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.examples import examples

from patchtx.agents.toolspec import instructions, tool_spec
from patchtx.formats.codex import detect_format, parse

SCENARIOS = REPO / "tests" / "conformance" / "codex-scenarios"


def scenario_patches() -> dict[str, str]:
    return {p.parent.name: p.read_text(encoding="utf-8") for p in sorted(SCENARIOS.glob("*/patch.txt"))}


def valid_patches() -> dict[str, str]:
    """Every real patch we ship or document, keyed by where it comes from."""
    patches = {f"scenario {name}": text for name, text in scenario_patches().items()
               if parser_accepts(text)}
    patches["examples/refactor.patch"] = (REPO / "examples" / "refactor.patch").read_text("utf-8")
    for page in sorted((REPO / "docs").glob("*.md")):
        text = page.read_text("utf-8")
        if "## Repairs" in text:  # (malformed shapes on purpose: what patchtx repairs or refuses)
            text = text[:text.index("## Repairs")] + text[text.index("\n## ", text.index("## Repairs") + 1):]
        for number, block in enumerate(fenced_blocks(text, "patch"), 1):
            # The grammar is the Codex format's (a freeform tool); unified diffs reach patchtx
            # through string arguments, never through it.
            if detect_format(block) == "codex":
                patches[f"docs/{page.name} patch {number}"] = block
    for number, block in enumerate(fenced_blocks(instructions(), ""), 1):
        patches[f"instructions example {number}"] = block
    return patches


VALID = valid_patches()


def test_the_corpus_is_what_we_think() -> None:
    names = set(VALID)
    assert len([n for n in names if n.startswith("scenario")]) == 22
    assert len([n for n in names if n.startswith("docs/format.md")]) >= 5
    assert "instructions example 1" in names


def test_the_grammar_loads_in_both_engines() -> None:
    is_error, messages = llguidance.LLMatcher.validate_grammar_with_warnings(llg_grammar(),
                                                                             llg_tokenizer())
    assert (is_error, messages) == (False, [])
    assert lark_parser().parse(VALID["scenario 001_add_file"]).data == "start"


@pytest.mark.parametrize("name", sorted(VALID))
def test_accepts_every_patch_patchtx_parses(name: str) -> None:
    text = VALID[name]
    assert parser_accepts(text), name
    assert lark_accepts(text), f"lark rejects {name}"
    assert llg_accepts(text), f"llguidance rejects {name}"


def test_accepts_each_extension_patchtx_parses() -> None:
    """The forms the brief names, each on its own."""
    forms = {
        "stacked anchors": "*** Update File: a.py\n@@ class A:\n@@     def f(self):\n-        x\n+        y\n",
        "bare @@ then anchor": "*** Update File: a.py\n@@\n@@ def f():\n-x\n+y\n",
        "empty Add File": "*** Add File: empty.txt\n*** Add File: b.txt\n+b\n",
        "End of File": "*** Update File: a\n@@\n-last\n+LAST\n*** End of File\n\n@@ top\n+x\n",
        "first section without @@": "*** Update File: a\n old\n-x\n+y\n@@ later\n-p\n+q\n",
        "blank lines in a section": "*** Update File: a\n@@\n one\n\n-two\n+TWO\n\n three\n",
        "move with a section": "*** Update File: a\n*** Move to: b/c\n@@\n x\n",
        "context line that reads End Patch": "*** Update File: doc.md\n *** End Patch\n+more\n",
        "End Patch context, then blank lines": "*** Update File: doc.md\n *** End Patch\n\n \n more\n",
        "End Patch context, blank context, end": "*** Update File: doc.md\n-x\n *** End Patch\n   \n",
        "@@ with trailing blanks": "*** Update File: a\n@@ \n-x\n@@\t\n-y\n",
    }
    for name, body in forms.items():
        text = f"*** Begin Patch\n{body}*** End Patch\n"
        assert parser_accepts(text), name
        assert lark_accepts(text) and llg_accepts(text), name


MALFORMED = {
    "no End Patch": "*** Begin Patch\n*** Add File: a\n+x\n",
    "no Begin Patch": "*** Add File: a\n+x\n*** End Patch\n",
    "blank line after Begin": "*** Begin Patch\n\n*** Add File: a\n+x\n*** End Patch\n",
    "add line without +": "*** Begin Patch\n*** Add File: a\nx\n*** End Patch\n",
    "lower-case marker": "*** Begin Patch\n*** add file: a\n+x\n*** End Patch\n",
    "empty path": "*** Begin Patch\n*** Add File: \n+x\n*** End Patch\n",
    "update without a section": "*** Begin Patch\n*** Update File: a\n*** End Patch\n",
    "marker without lines": "*** Begin Patch\n*** Update File: a\n@@\n*** End Patch\n",
    "two bare markers": "*** Begin Patch\n*** Update File: a\n@@\n@@\n-x\n*** End Patch\n",
    "two bare markers after an end of file":
        "*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n@@\n@@\n-y\n*** End Patch\n",
    "unified-diff no-newline line": "*** Begin Patch\n*** Update File: a\n-x\n+y\n\\ No newline at end of file\n"
                                    "*** End Patch\n",
    "tab instead of the space prefix": "*** Begin Patch\n*** Update File: a\n\tx\n-y\n*** End Patch\n",
    "Move to after a line": "*** Begin Patch\n*** Update File: a\n x\n*** Move to: b\n*** End Patch\n",
    "line after End of File": "*** Begin Patch\n*** Update File: a\n-x\n*** End of File\n+y\n*** End Patch\n",
    "text after End Patch": "*** Begin Patch\n*** Delete File: a\n*** End Patch\nthanks\n",
    "unknown operation": "*** Begin Patch\n*** Rename File: a\n*** End Patch\n",
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_rejects_malformed_patches_like_the_parser(name: str) -> None:
    text = MALFORMED[name]
    assert not parser_accepts(text), f"patchtx accepts {name}: not a malformed case"
    assert not lark_accepts(text), f"lark accepts {name}"
    assert not llg_accepts(text), f"llguidance accepts {name}"


@pytest.mark.parametrize("name", ["005_rejects_empty_patch", "008_rejects_empty_update_hunk",
                                  "013_rejects_invalid_hunk_header"])
def test_rejects_the_scenarios_patchtx_refuses_to_parse_or_plan(name: str) -> None:
    text = scenario_patches()[name]
    assert not parser_accepts(text)
    assert not lark_accepts(text) and not llg_accepts(text)


NARROWER_ON_PURPOSE = {
    "CRLF line ends": "*** Begin Patch\r\n*** Add File: a\r\n+x\r\n*** End Patch\r\n",
    "heredoc wrapper": "<<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n",
    "environment id": "*** Begin Patch\n*** Environment ID: e1\n*** Add File: a\n+x\n*** End Patch\n",
    "leading blank lines": "\n\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\n",
}


@pytest.mark.parametrize("name", sorted(NARROWER_ON_PURPOSE))
def test_leaves_out_forms_a_model_never_needs(name: str) -> None:
    """patchtx tolerates these when a host passes them on; the grammar does not invite them."""
    text = NARROWER_ON_PURPOSE[name]
    assert parse(text).hunks
    assert not lark_accepts(text) and not llg_accepts(text)


# -- differential: random line sequences, the parser's verdict against both engines --------------

HEADERS = ["*** Add File: a.txt", "*** Delete File: d.txt", "*** Update File: u.txt",
           "*** Update File: u.txt  ", "  *** Add File: a.txt", " *** Update File: u.txt",
           "\t*** Delete File: d", "*** Add File: ", "*** Update File: ", "*** Frob File: x"]
LINES = HEADERS + [
    "*** Move to: m.txt", "*** Move to: ", " *** Move to: m", "*** Move to: m  ",
    "@@", "@@ ", "@@ def f():", "@@  x", "@@x", "@@\t", "@@ \t",
    " ctx", "+add", "-rem", "", "   ", "\t", "+", "-", "+  *** End Patch",
    "*** End of File", "*** End of File  ", " *** End of File",
    "*** End Patch", " *** End Patch", "junk", "\\ No newline at end of file",
]
# Well-formed lines are listed several times so that random sequences often parse: a verdict of
# "both reject" teaches little.
LIKELY = [*HEADERS[:3], "@@", "@@ def f():", " ctx", "+add", "-rem", "", "*** End of File"] * 3
BEGINS = ["*** Begin Patch", " *** Begin Patch", "*** Begin Patch "]
ENDS = ["*** End Patch", "*** End Patch\n", " *** End Patch", "*** End Patch \n\n", "\t*** End Patch\n"]
HEADER_PREFIXES = ("*** Add File: ", "*** Delete File: ", "*** Update File: ")


def left_out_on_purpose(lines: list[str]) -> bool:
    """Line sequences patchtx's parser tolerates that the grammar leaves out by design: an
    indented file header after the first operation, '*** End of File' before an Update's first
    section, and '*** End Patch' repeated as the last line (Codex accepts it; a model is taught
    one, blank lines around it included). (Over-approximated: excluding a few more cases only
    costs coverage.)"""
    filled = [line for line in lines if line.strip()]
    if filled and filled[-1].strip() == "*** End Patch":
        return True
    after_update_header = False
    for index, line in enumerate(lines):
        stripped = line.strip()
        if index > 0 and line[:1] in (" ", "\t") and stripped.startswith(HEADER_PREFIXES):
            return True
        if stripped == "*** End of File" and after_update_header:
            return True
        if stripped.startswith("*** Update File: "):
            after_update_header = True
        elif not stripped.startswith(("*** Move to: ", "*** End of File")):
            after_update_header = False
    return False


@settings(max_examples=examples(600), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(begin=st.sampled_from(BEGINS),
       first=st.sampled_from(HEADERS + LINES),
       rest=st.lists(st.sampled_from(LINES + LIKELY), max_size=7),
       end=st.sampled_from(ENDS))
def test_grammar_and_parser_agree_on_random_patches(begin: str, first: str, rest: list[str],
                                                    end: str) -> None:
    lines = [first, *rest]
    if left_out_on_purpose(lines):
        return
    text = begin + "\n" + "".join(line + "\n" for line in lines) + end
    expected = parser_accepts(text)
    assert lark_accepts(text) == expected, text
    assert llg_accepts(text) == expected, text


def test_the_definition_sent_to_models_is_the_packaged_grammar_without_comments() -> None:
    packaged = (REPO / "src" / "patchtx" / "agents" / "apply_patch.lark").read_text("utf-8")
    definition = tool_spec("lark")
    assert isinstance(definition, str)
    assert "//" in packaged and "//" not in definition
    rules = [line for line in packaged.splitlines() if line.strip() and not line.startswith("//")]
    assert [line for line in definition.splitlines() if line.strip()] == rules


def test_a_repeated_end_marker_is_accepted_but_not_taught() -> None:
    """Codex accepts '*** End Patch' twice at the end, so the parser does; the grammar that
    constrains a model's output keeps one."""
    text = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n*** End Patch"
    assert parser_accepts(text)
    assert not lark_accepts(text)
