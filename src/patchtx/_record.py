"""``@record``: frozen value classes at a fraction of ``dataclasses``' cost.

Agents run ``apply_patch`` once per edit, so start-up time is part of every edit. Importing
``dataclasses`` (which imports ``inspect``) and letting it build ~30 classes cost 40-60 ms, two to
three times the interpreter's own start-up, measured with ``python -X importtime`` and cProfile on
the tiny-edit benchmark. ``record`` builds the same things (``__init__`` with defaults,
``__slots__``, ``__repr__``, ``__eq__``, ``__hash__``, immutability) from the class annotations,
and type checkers see it as a dataclass through ``dataclass_transform``.

Supported: annotated fields in order, constant defaults, ``field(default_factory=...)``, no
inheritance between records (none is needed), ``replace(obj, **changes)``.

``__init__`` is not compiled per class: compiling its source (as ``dataclasses`` does with ``exec``)
cost ~0.2 ms a class, 6 ms for the ~30 records a commit imports. Instead every class with N fields
gets a copy of one precompiled template, ``_initN(self, a0, ..., aN-1)``, whose parameter names and
attribute-name constants are swapped for the class's own (``CodeType.replace``): same signature,
keywords, defaults and speed as generated code, and the templates come from the ``.pyc``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import CodeType, FunctionType
    from typing import Any, TypeVar, dataclass_transform

    _C = TypeVar("_C", bound=type)
    _T = TypeVar("_T")
else:

    def dataclass_transform(**_options):
        return lambda function: function

    # The types module would be one more import for two names.
    FunctionType = type(dataclass_transform)
    CodeType = type(dataclass_transform.__code__)

_set = object.__setattr__


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
        namespace["__init__"] = _make_init(cls.__module__, cls.__qualname__, names, defaults)
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


def _init_source(count: int) -> str:
    """The template for ``count`` fields; those for up to 12 are spelled out below, precompiled."""
    params = "".join(f", a{i}" for i in range(count))
    body = "".join(f'\n    _set(self, "a{i}", a{i})' for i in range(count)) or "\n    pass"
    return f"def _init{count}(self{params}):{body}\n"


def _template(count: int) -> CodeType:
    if count < len(_TEMPLATES):
        return _TEMPLATES[count]
    namespace: dict[str, Any] = {}
    exec(_init_source(count), namespace)  # noqa: S102 - the source holds only generated names
    code: CodeType = namespace[f"_init{count}"].__code__
    return code


def _make_init(module: str, qualname: str, names: list[str], defaults: dict[str, Any]) -> Callable[..., None]:
    """``__init__(self, <names>)`` with ``defaults``; a ``field`` default is made anew per call."""
    template = _template(len(names))
    placeholders = {f"a{i}": name for i, name in enumerate(names)}
    code = template.replace(
        co_varnames=("self", *names),
        co_consts=tuple(placeholders.get(c, c) if isinstance(c, str) else c for c in template.co_consts),
        co_name="__init__",
        co_qualname=f"{qualname}.__init__",
    )
    values: list[Any] = []
    factories: dict[str, Callable[[], Any]] = {}
    for name in names:
        if name not in defaults:
            if values:
                raise TypeError(f"{qualname}: field {name!r} without a default follows one with a default")
            continue
        default = defaults[name]
        if isinstance(default, _Factory):
            factories[name] = default.make
            default = None
        values.append(default)
    setter = _filling_setter(factories) if factories else _set
    function: Callable[..., None] = FunctionType(code, {"_set": setter}, "__init__", tuple(values) or None)
    function.__module__ = module
    function.__qualname__ = f"{qualname}.__init__"
    return function


def _filling_setter(factories: dict[str, Callable[[], Any]]) -> Callable[[Any, str, Any], None]:
    """The templates' ``_set`` for a class with ``field`` defaults: None there means "make one"."""

    def setter(self: Any, name: str, value: Any) -> None:
        if value is None and name in factories:
            value = factories[name]()
        _set(self, name, value)

    return setter


# What _init_source(N) gives, for N = 0 to 12.
if TYPE_CHECKING:
    _TEMPLATES: tuple[CodeType, ...]
else:

    def _init0(self):
        pass

    def _init1(self, a0):
        _set(self, "a0", a0)

    def _init2(self, a0, a1):
        _set(self, "a0", a0)
        _set(self, "a1", a1)

    def _init3(self, a0, a1, a2):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)

    def _init4(self, a0, a1, a2, a3):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)
        _set(self, "a3", a3)

    def _init5(self, a0, a1, a2, a3, a4):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)
        _set(self, "a3", a3)
        _set(self, "a4", a4)

    def _init6(self, a0, a1, a2, a3, a4, a5):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)
        _set(self, "a3", a3)
        _set(self, "a4", a4)
        _set(self, "a5", a5)

    def _init7(self, a0, a1, a2, a3, a4, a5, a6):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)
        _set(self, "a3", a3)
        _set(self, "a4", a4)
        _set(self, "a5", a5)
        _set(self, "a6", a6)

    def _init8(self, a0, a1, a2, a3, a4, a5, a6, a7):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)
        _set(self, "a3", a3)
        _set(self, "a4", a4)
        _set(self, "a5", a5)
        _set(self, "a6", a6)
        _set(self, "a7", a7)

    def _init9(self, a0, a1, a2, a3, a4, a5, a6, a7, a8):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)
        _set(self, "a3", a3)
        _set(self, "a4", a4)
        _set(self, "a5", a5)
        _set(self, "a6", a6)
        _set(self, "a7", a7)
        _set(self, "a8", a8)

    def _init10(self, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)
        _set(self, "a3", a3)
        _set(self, "a4", a4)
        _set(self, "a5", a5)
        _set(self, "a6", a6)
        _set(self, "a7", a7)
        _set(self, "a8", a8)
        _set(self, "a9", a9)

    def _init11(self, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)
        _set(self, "a3", a3)
        _set(self, "a4", a4)
        _set(self, "a5", a5)
        _set(self, "a6", a6)
        _set(self, "a7", a7)
        _set(self, "a8", a8)
        _set(self, "a9", a9)
        _set(self, "a10", a10)

    def _init12(self, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11):
        _set(self, "a0", a0)
        _set(self, "a1", a1)
        _set(self, "a2", a2)
        _set(self, "a3", a3)
        _set(self, "a4", a4)
        _set(self, "a5", a5)
        _set(self, "a6", a6)
        _set(self, "a7", a7)
        _set(self, "a8", a8)
        _set(self, "a9", a9)
        _set(self, "a10", a10)
        _set(self, "a11", a11)

    _TEMPLATES = tuple(f.__code__ for f in (_init0, _init1, _init2, _init3, _init4, _init5, _init6, _init7,
                                            _init8, _init9, _init10, _init11, _init12))



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
