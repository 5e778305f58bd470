"""``@record`` behaves as a frozen, slotted dataclass for everything patchtx asks of one."""

from __future__ import annotations

import copy
import inspect
import pickle

import pytest

from patchtx._record import as_dict, field, record, replace


@record
class Point:
    x: int
    y: int = 0
    tags: list[str] = field(default_factory=list)


@record(frozen=False)
class Tally:
    name: str
    seen: set[str] = field(default_factory=set)


@record
class Empty:
    pass


def test_arguments_by_position_or_keyword_with_defaults() -> None:
    assert (Point(1).x, Point(1).y, Point(1).tags) == (1, 0, [])
    assert Point(1, 2, ["a"]) == Point(y=2, tags=["a"], x=1)
    assert Point.__match_args__ == ("x", "y", "tags")
    assert str(inspect.signature(Point)) == "(x, y=0, tags=<factory>)"
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, bogus=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, [], 4)  # type: ignore[call-arg]
    assert Empty() == Empty() and repr(Empty()) == "Empty()"


def test_a_default_factory_makes_a_new_value_for_each_instance_and_none_stays_none() -> None:
    a, b = Point(1), Point(1)
    assert a.tags == [] and a.tags is not b.tags
    given = ["t"]
    assert Point(1, tags=given).tags is given
    assert Point(1, tags=None).tags is None  # type: ignore[arg-type]  # as dataclasses does


def test_a_frozen_record_refuses_changes_and_hashes_by_value() -> None:
    p = Point(1, 2)
    with pytest.raises(AttributeError, match="frozen Point"):
        p.x = 3  # type: ignore[misc]
    with pytest.raises(AttributeError, match="frozen Point"):
        del p.x  # type: ignore[misc]
    with pytest.raises(AttributeError):
        p.other = 1  # type: ignore[attr-defined]
    assert hash(Point(1, 2, ())) == hash(Point(1, 2, ()))  # type: ignore[arg-type]
    assert not hasattr(p, "__dict__")


def test_a_record_that_is_not_frozen_can_change_but_not_grow_and_is_not_hashable() -> None:
    t = Tally("a")
    t.seen.add("x")
    t.name = "b"
    assert t == Tally("b", {"x"})
    with pytest.raises(AttributeError):
        t.other = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hash(t)


def test_equality_is_by_type_and_fields() -> None:
    assert Point(1, 2) == Point(1, 2) and Point(1, 2) != Point(2, 1)
    assert Point(1) != Tally("1") and Point(1) != (1, 0, [])


def test_repr_names_the_fields_and_a_class_may_keep_its_own() -> None:
    assert repr(Point(1, tags=["a"])) == "Point(x=1, y=0, tags=['a'])"

    @record
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

    assert repr(Named("n")) == "<n>"


def test_methods_properties_and_docstrings_are_kept() -> None:
    @record
    class Span:
        """A span."""

        start: int
        stop: int

        @property
        def length(self) -> int:
            return self.stop - self.start

        def shifted(self, by: int) -> Span:
            return replace(self, start=self.start + by, stop=self.stop + by)

    assert Span(2, 5).length == 3 and Span(2, 5).shifted(1) == Span(3, 6)
    assert Span.__doc__ == "A span." and Span.__qualname__.endswith("Span")
    assert Span.__init__.__qualname__ == f"{Span.__qualname__}.__init__"
    assert Span.__init__.__module__ == __name__


def test_replace_and_as_dict() -> None:
    p = Point(1, 2, ["a"])
    assert replace(p, y=5) == Point(1, 5, ["a"]) and p.y == 2
    with pytest.raises(TypeError):
        replace(p, bogus=1)
    nested = Tally("n", {"s"})
    assert as_dict([p, (Point(3),), {"k": nested}]) == [
        {"x": 1, "y": 2, "tags": ["a"]}, ({"x": 3, "y": 0, "tags": []},), {"k": {"name": "n", "seen": {"s"}}}]


@pytest.mark.parametrize("value", [Point(1, 2, ["a"]), Tally("t", {"x"})])
def test_copies_and_pickles_are_equal(value: object) -> None:
    assert copy.copy(value) == copy.deepcopy(value) == pickle.loads(pickle.dumps(value)) == value


def test_a_field_named_like_a_helper_of_the_generated_init_is_an_ordinary_field() -> None:
    @record
    class Odd:
        _set: int
        _MAKE: list[int] = field(default_factory=list)

    assert (Odd(1)._set, Odd(1)._MAKE) == (1, [])


def test_a_default_before_a_field_without_one_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default follows one with a default"):

        @record
        class _Bad:
            a: int = 0
            b: int


@record
class Span:
    start: int
    end: int = 0
    notes: list[str] = field(default_factory=list)


def test_records_of_one_shape_share_compiled_code_but_not_their_fields_or_names() -> None:
    # Point and Span have the same shape (two plain fields, then a factory): one compiled
    # __init__, renamed for each, setting each class's own slots.
    assert Point.__init__.__code__.co_code == Span.__init__.__code__.co_code
    assert (Span(1, 2).start, Span(1, 2).end, Point(3, 4).x) == (1, 2, 3)
    assert Span(end=5, start=4) == Span(4, 5) and Span(1).notes is not Span(1).notes
    assert str(inspect.signature(Span)) == "(start, end=0, notes=<factory>)"
    assert Span.__init__.__qualname__ == "Span.__init__" and Span.__init__.__module__ == __name__
    with pytest.raises(TypeError, match=r"Span.__init__\(\) missing 1 required positional argument: 'start'"):
        Span()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'x'"):
        Span(1, x=2)  # type: ignore[call-arg]


def test_a_field_named_self_is_refused_when_the_class_is_made() -> None:
    with pytest.raises(TypeError, match="may not be named 'self'"):
        @record
        class Odd:
            self: int
