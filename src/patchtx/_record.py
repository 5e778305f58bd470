"""``@record``: the frozen, slotted value classes of ``dataclasses``, without importing it.

Every ``apply_patch`` run is a new process, so what it imports is part of every edit, and
``dataclasses`` (with the ``inspect`` it imports) would be the largest import of a small edit.
``record`` builds what patchtx asks of a dataclass, the same way: ``__init__`` compiled from
source (positional or keyword arguments, defaults, ``field(default_factory=...)``),
``__slots__``, ``__match_args__``, ``__repr__``, ``__eq__``, and for a frozen record (the default)
``__hash__`` and a ``__setattr__`` that refuses. Type checkers see a dataclass through
``dataclass_transform``. Not supported, as nothing needs it: inheritance between records,
``__post_init__``, ``field`` options other than ``default``, ``default_factory`` and
``metadata``.
"""

from __future__ import annotations

from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any, TypeVar, dataclass_transform

if TYPE_CHECKING:
    from collections.abc import Callable

    _C = TypeVar("_C", bound=type)
    _T = TypeVar("_T")


class _Factory:  # (the pieces @record is built from cannot be records themselves)
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make

    def __repr__(self) -> str:  # as a default in the signature of ``__init__``, as dataclasses shows it
        return "<factory>"


class _Field:  # (as _Factory: a piece @record is built from)
    __slots__ = ("default", "metadata")

    def __init__(self, default: Any, metadata: Any) -> None:
        self.default, self.metadata = default, metadata


def field(*, default: Any = None, default_factory: Callable[[], Any] | None = None,
          metadata: Any = None) -> Any:
    """A field's default, as ``dataclasses.field``: ``default_factory`` builds one anew for every
    instance; ``metadata`` is kept for the class's users (``metadata(cls)``)."""
    if default_factory is not None:
        return _Factory(default_factory)
    return _Field(default, metadata)


def metadata(cls: type) -> dict[str, Any]:
    """Each field's ``metadata`` (fields given one only), in field order."""
    found: dict[str, Any] = getattr(cls, "__record_metadata__", {})
    return found


_MAKE = _Factory(object)  # the default of a field with a factory: "make one for this instance"


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise AttributeError(f"cannot assign to field '{name}' of a frozen {type(self).__name__}")


def _frozen_delattr(self: object, name: str) -> None:
    raise AttributeError(f"cannot delete field '{name}' of a frozen {type(self).__name__}")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: _C | None = None, *, frozen: bool = True) -> Any:
    def build(cls: _C) -> _C:
        names = tuple(cls.__dict__.get("__annotations__", {}))
        namespace = {k: v for k, v in cls.__dict__.items()
                     if k not in names and k not in ("__dict__", "__weakref__")}
        namespace.update(__slots__=names, __match_args__=names, __record_fields__=names,
                         __record_metadata__={n: d.metadata for n in names
                                              if isinstance(d := cls.__dict__.get(n), _Field)
                                              and d.metadata is not None})

        def __repr__(self: Any) -> str:
            inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
            return f"{type(self).__name__}({inner})"

        def __eq__(self: Any, other: object) -> bool:
            if type(other) is not type(self):
                return NotImplemented
            return all(getattr(self, n) == getattr(other, n) for n in names)

        namespace.setdefault("__repr__", __repr__)
        namespace.setdefault("__eq__", __eq__)
        # copy, deepcopy and pickle rebuild through __init__ (a frozen __setattr__ refuses state).
        namespace["__reduce__"] = lambda self: (type(self), tuple(getattr(self, n) for n in names))
        if frozen:
            namespace.update(__setattr__=_frozen_setattr, __delattr__=_frozen_delattr)
            namespace["__hash__"] = lambda self: hash(tuple(getattr(self, n) for n in names))
        else:
            namespace["__hash__"] = None
        built: _C = type(cls)(cls.__name__, cls.__bases__, namespace)
        built.__qualname__ = cls.__qualname__
        # Compiled once the class exists: it sets each field through that field's slot.
        built.__init__ = _make_init(cls, built, names)  # type: ignore[misc]
        return built

    return build if cls is None else build(cls)


def _make_init(cls: type, built: type, names: tuple[str, ...]) -> Callable[..., None]:
    """``__init__(self, <names>)``, as ``dataclasses`` makes it, but setting each field through its
    slot's own descriptor (``built.<name>.__set__``) rather than by name with
    ``object.__setattr__``, which looks the name up again on every call (and a frozen record's
    ``__setattr__`` refuses). Its code is ``_init_code``'s for the fields' shape, with the fields'
    names as its parameters' names."""
    if "self" in names:
        raise TypeError(f"{cls.__qualname__}: a field may not be named 'self' (the first parameter of __init__)")
    defaults: list[Any] = []
    scope: dict[str, Any] = {"__record_make__": _MAKE}
    for index, name in enumerate(names):
        scope[f"__record_set_{index}__"] = built.__dict__[name].__set__
        if name in cls.__dict__:
            default = cls.__dict__[name]
            if isinstance(default, _Field):
                default = default.default
            elif isinstance(default, _Factory):
                scope[f"__record_make_{index}__"] = default.make
                default = _MAKE
            defaults.append(default)
        elif defaults:
            raise TypeError(f"{cls.__qualname__}: field {name!r} without a default follows one with a default")
    made = tuple(isinstance(cls.__dict__.get(name), _Factory) for name in names)
    code = _init_code(made).replace(co_varnames=("self", *names), co_qualname=f"{cls.__qualname__}.__init__")
    init: Callable[..., None] = FunctionType(code, scope, "__init__", tuple(defaults) or None)
    init.__module__ = cls.__module__
    return init


_INIT_CODES: dict[tuple[bool, ...], CodeType] = {}


def _init_code(made: tuple[bool, ...]) -> CodeType:
    """The code of an ``__init__`` that sets its i-th parameter through ``__record_set_<i>__``,
    through ``__record_make_<i>__()`` first where ``made[i]`` and the argument is the factory
    marker. Compiled once per shape and renamed per class (``CodeType.replace``): compiling an
    ``__init__`` for each of the ~40 records cost a one-line edit ~10 ms of its start-up."""
    code = _INIT_CODES.get(made)
    if code is None:
        parameters = "".join(f", _{i}" for i in range(len(made)))
        body = "".join(f"\n    __record_set_{i}__(self, __record_make_{i}__() if _{i} is __record_make__ else _{i})"
                       if factory else f"\n    __record_set_{i}__(self, _{i})" for i, factory in enumerate(made))
        scope: dict[str, Any] = {}
        exec(f"def __init__(self{parameters}):{body or ' pass'}\n", scope)  # noqa: S102 - generated from numbers only
        code = _INIT_CODES[made] = scope["__init__"].__code__
    return code


def as_dict(obj: Any, *, lists: bool = False) -> Any:
    """Fields as a dict, recursively through records, lists, tuples, dicts (``dataclasses.asdict``);
    ``lists``: every tuple a list."""
    fields = getattr(type(obj), "__record_fields__", None)
    if fields is not None:
        return {n: as_dict(getattr(obj, n), lists=lists) for n in fields}
    if isinstance(obj, list | tuple):
        return (list if lists else type(obj))(as_dict(v, lists=lists) for v in obj)
    if isinstance(obj, dict):
        return {k: as_dict(v, lists=lists) for k, v in obj.items()}
    return obj


def as_json(obj: Any) -> Any:
    """A record's fields as JSON values (a record's ``to_json``, written ``to_json = as_json``)."""
    return as_dict(obj, lists=True)


def replace(obj: _T, **changes: Any) -> _T:
    """A copy of a record with some fields changed (``dataclasses.replace``)."""
    values = {n: getattr(obj, n) for n in type(obj).__record_fields__}  # type: ignore[attr-defined]
    values.update(changes)
    return type(obj)(**values)
