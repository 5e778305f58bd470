"""``@record``: frozen value classes at a fraction of ``dataclasses``' cost.

Agents run ``apply_patch`` once per edit, so start-up time is part of every edit. Importing
``dataclasses`` (which imports ``inspect``) and letting it build ~30 classes cost 40-60 ms, two to
three times the interpreter's own start-up, measured with ``python -X importtime`` and cProfile on
the tiny-edit benchmark. ``record`` builds the same things (``__init__`` with defaults,
``__slots__``, ``__repr__``, ``__eq__``, ``__hash__``, immutability) from the class annotations,
and type checkers see it as a dataclass through ``dataclass_transform``.

Supported: annotated fields in order, constant defaults, ``field(default_factory=...)``, no
inheritance between records (none is needed), ``replace(obj, **changes)``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    _C = TypeVar("_C", bound=type)
    _T = TypeVar("_T")
else:

    def dataclass_transform(**_options):
        return lambda function: function


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], Any]) -> Any:
    """A default built anew for every instance, as ``dataclasses.field(default_factory=...)``."""
    return _Factory(default_factory)


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise AttributeError(f"cannot assign to field '{name}' of a frozen {type(self).__name__}")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: _C | None = None, *, frozen: bool = True) -> Any:
    def build(cls: _C) -> _C:
        names = list(cls.__dict__.get("__annotations__", {}))
        namespace = {k: v for k, v in cls.__dict__.items()
                     if k not in names and k not in ("__dict__", "__weakref__")}
        defaults = {n: cls.__dict__[n] for n in names if n in cls.__dict__}
        setter = "object.__setattr__(self, {0!r}, {1})" if frozen else "self.{0} = {1}"
        params: list[str] = []
        body: list[str] = []
        globals_: dict[str, Any] = {"object": object}
        for name in names:
            if name in defaults:
                default = defaults[name]
                globals_[f"_default_{name}"] = default.make if isinstance(default, _Factory) else default
                if isinstance(default, _Factory):
                    params.append(f"{name}=None")
                    body.append(setter.format(name, f"_default_{name}() if {name} is None else {name}"))
                    continue
                params.append(f"{name}=_default_{name}")
            else:
                params.append(name)
            body.append(setter.format(name, name))
        source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"])
        exec(source, globals_)  # noqa: S102 - the source is built from the class's own field names
        namespace["__init__"] = globals_["__init__"]
        namespace["__slots__"] = tuple(names)
        namespace["__match_args__"] = tuple(names)
        namespace["__record_fields__"] = tuple(names)

        def __repr__(self: Any) -> str:
            inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
            return f"{type(self).__name__}({inner})"

        def __eq__(self: Any, other: object) -> bool:
            if type(other) is not type(self):
                return NotImplemented
            return all(getattr(self, n) == getattr(other, n) for n in names)

        namespace.setdefault("__repr__", __repr__)
        namespace["__eq__"] = __eq__
        # copy, deepcopy and pickle rebuild through __init__ (the frozen __setattr__ refuses state).
        namespace["__reduce__"] = lambda self: (type(self), tuple(getattr(self, n) for n in names))
        if frozen:
            namespace["__setattr__"] = _frozen_setattr
            namespace["__hash__"] = lambda self: hash(tuple(getattr(self, n) for n in names))
        else:
            namespace["__hash__"] = None
        built: _C = type(cls)(cls.__name__, cls.__bases__, namespace)
        built.__qualname__ = cls.__qualname__
        return built

    return build if cls is None else build(cls)


def as_dict(obj: Any) -> Any:
    """Fields as a dict, recursively through records, lists and tuples (``dataclasses.asdict``)."""
    fields = getattr(type(obj), "__record_fields__", None)
    if fields is not None:
        return {n: as_dict(getattr(obj, n)) for n in fields}
    if isinstance(obj, list | tuple):
        return type(obj)(as_dict(v) for v in obj)
    if isinstance(obj, dict):
        return {k: as_dict(v) for k, v in obj.items()}
    return obj


def replace(obj: _T, **changes: Any) -> _T:
    """A copy of a record with some fields changed (``dataclasses.replace``)."""
    values = {n: getattr(obj, n) for n in type(obj).__record_fields__}  # type: ignore[attr-defined]
    values.update(changes)
    return type(obj)(**values)
