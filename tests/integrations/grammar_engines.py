"""Deciding whether a text is in the tool grammar's language, with both engines, and whether
patchtx's parser accepts it as a patch worth sending."""

from __future__ import annotations

from functools import cache

import lark
import llguidance

from patchtx.agents.toolspec import grammar_definition
from patchtx.errors import ParseError
from patchtx.formats.codex import parse


@cache
def lark_parser() -> lark.Lark:
    return lark.Lark(grammar_definition(), parser="earley", lexer="dynamic")


class _ByteTokenizer:
    """One token per byte (plus an end token), so a text is fed to llguidance byte by byte."""

    eos_token_id = 256
    bos_token_id = None
    tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
    special_token_ids = [256]

    def __call__(self, text: str | bytes) -> list[int]:
        return list(text.encode("utf-8") if isinstance(text, str) else text)


@cache
def llg_tokenizer() -> llguidance.LLTokenizer:
    return llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()), slices=[])


@cache
def llg_grammar() -> str:
    return llguidance.grammar_from("lark", grammar_definition())


def lark_accepts(text: str) -> bool:
    try:
        lark_parser().parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


def llg_accepts(text: str) -> bool:
    matcher = llguidance.LLMatcher(llg_tokenizer(), llg_grammar(), log_level=0)
    data = list(text.encode("utf-8"))
    return matcher.try_consume_tokens(data) == len(data) and matcher.is_accepting()


def parser_accepts(text: str) -> bool:
    """patchtx's parser accepts it and it holds a file operation (a patch with none is refused
    when planned, so the grammar leaves it out)."""
    try:
        return len(parse(text).hunks) > 0
    except ParseError:
        return False
