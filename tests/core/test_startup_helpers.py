"""The stand-ins that keep enum, json and per-class compilation off an agent's small edit.

Each must behave as what it replaces, for everything patchtx and its callers ask of it.
"""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import strategies as st

from patchtx._record import _TEMPLATES, _init_source, field, record, replace
from patchtx.model import Plan
from patchtx.result import Result
from patchtx.txn.layout import group_journal_folder


def test_precompiled_init_templates_are_what_the_generator_makes() -> None:
    for count, template in enumerate(_TEMPLATES):
        namespace: dict[str, object] = {}
        exec(_init_source(count), namespace)
        made = namespace[f"_init{count}"].__code__  # type: ignore[attr-defined]
        assert (made.co_code, made.co_consts, made.co_varnames, made.co_names) == (
            template.co_code, template.co_consts, template.co_varnames, template.co_names)


@record
class _Wide:
    f0: int
    f1: int
    f2: int
    f3: int
    f4: int
    f5: int
    f6: int
    f7: int
    f8: int
    f9: int
    f10: int
    f11: int
    f12: int
    f13: list[int] = field(default_factory=list)


def test_records_keep_their_signature_defaults_and_semantics() -> None:
    plan = Plan("/w", (), ())
    result = Result(plan, committed=True)
    assert (result.dry_run, result.transaction_id, result.undone) == (False, None, None)
    assert _Wide(*range(13), f13=None).f13 == []  # None for a field with a factory: a new default
    assert Result.__init__.__qualname__ == "Result.__init__"
    assert result == copy.copy(result) == copy.deepcopy(result) == pickle.loads(pickle.dumps(result))
    assert hash(result.plan) == hash(Plan("/w", (), ()))
    with pytest.raises(AttributeError):
        result.committed = False  # type: ignore[misc]
    assert replace(result, committed=False).committed is False
    with pytest.raises(TypeError):
        Result(plan)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Result(plan, True, bogus=1)  # type: ignore[call-arg]
    wide = _Wide(*range(13))  # more fields than there are precompiled templates
    assert (wide.f12, wide.f13) == (12, []) and wide.f13 is not _Wide(*range(13)).f13


def test_a_default_before_a_field_without_one_is_refused() -> None:
    with pytest.raises(TypeError):

        @record
        class _Bad:
            a: int = 0
            b: int


_JSON_TEXT = st.text(st.sampled_from('ab"\\\n\t\x00\x1f\x7f é\u2028😀\udc80/'), max_size=12)
_JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | _JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_JSON_TEXT, inner, max_size=4),
    max_leaves=20,
)


def test_journal_folder_names_are_recognised_as_before() -> None:
    txn = "20250101T000000-0000abcd"
    names = [f"{txn}.journal", f"{txn}.journal.tmp", f"{txn}.committed", f"{txn}.12.before",
             f"{txn}.x.before", f"{txn}..before", f"{txn}.journalx", f"{txn}.committed\n",
             "20250101T000000-0000ABCD.journal", "2025010T000000-0000abcd.journal", "lock", ".gitignore"]
    groups = group_journal_folder(names)
    assert [(g.transaction_id, sorted(g.names)) for g in groups] == [
        (txn, sorted(names[:4]))]
