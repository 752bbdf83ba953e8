"""The code a problem needs to build a module of the model's class: an import where the class comes from an
installed package (transformers, torch), else the class's own source and what it uses from its module (functions,
classes, constants, imports), gathered from the module's globals."""

from __future__ import annotations

import inspect
import sys
import sysconfig
import textwrap
import types
from pathlib import Path
from typing import Any


class NotExtractable(Exception):
    """Why a module cannot be written as a problem (one line)."""


def installed(obj: Any) -> bool:
    """Whether ``obj`` comes from an installed package, which a problem imports, rather than from the user's
    code, whose source a problem carries."""
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    if module is None or module.__name__ == "__main__":
        return False
    top = module.__name__.split(".")[0]
    if top in ("torch", "transformers") or top in sys.stdlib_module_names:
        return True
    path = getattr(module, "__file__", None)
    if not path:
        return True  # a built-in module
    places = {sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib")}
    return any(Path(path).resolve().is_relative_to(Path(p).resolve()) for p in places)


def import_line(obj: Any, name: str) -> str:
    """``from module import obj`` (``as name`` where the module's global has another name)."""
    qualname = getattr(obj, "__qualname__", obj.__name__)
    if "." in qualname or "<" in qualname:
        raise NotExtractable(f"{qualname} is not at the top of its module, so a problem cannot import it")
    alias = f" as {name}" if name != obj.__name__ else ""
    return f"from {obj.__module__} import {obj.__name__}{alias}"


class SourceGatherer:
    """Collects, for classes and functions of the user's code, their source and everything they name."""

    def __init__(self) -> None:
        self.imports: list[str] = []
        self.blocks: list[str] = []  # definitions, dependencies first
        self._done: set[int] = set()

    def need_class(self, cls: type) -> str:
        """The name a problem refers to ``cls`` by, after importing or defining it."""
        if installed(cls):
            self._import(import_line(cls, cls.__name__))
            return cls.__name__
        self._define(cls)
        return cls.__name__

    def _import(self, line: str) -> None:
        if line not in self.imports:
            self.imports.append(line)

    def _define(self, obj: Any) -> None:
        if id(obj) in self._done:
            return
        self._done.add(id(obj))
        try:
            source = textwrap.dedent(inspect.getsource(obj))
        except (OSError, TypeError) as exc:
            raise NotExtractable(f"the source of {obj.__qualname__} cannot be read ({exc})") from None
        if "." in obj.__qualname__:
            raise NotExtractable(f"{obj.__qualname__} is defined inside another class or function")
        module = sys.modules[obj.__module__]
        if isinstance(obj, type):
            for base in obj.__bases__:
                if base is not object:
                    self._name(base.__name__, base, module)
        for name in sorted(_global_names(obj)):
            if name in vars(module):  # the names the code reads that are no global are attributes or builtins
                self._name(name, vars(module)[name], module)
        self.blocks.append(source)

    def _name(self, name: str, value: Any, home: types.ModuleType) -> None:
        """Make ``name`` (a global of ``home``) available to the problem."""
        if isinstance(value, types.ModuleType):
            self._import(f"import {value.__name__}" if name == value.__name__ else
                         f"import {value.__name__} as {name}")
        elif isinstance(value, (type, types.FunctionType)):
            if installed(value):
                self._import(import_line(value, name))
            elif name != value.__name__:
                raise NotExtractable(f"{home.__name__} calls {value.__qualname__} {name}, which a problem cannot "
                                     "carry under two names")
            else:
                self._define(value)
        elif isinstance(value, (bool, int, float, str, type(None))) or _plain_tuple(value):
            self.blocks.insert(0, f"{name} = {value!r}")
        elif callable(value) and installed(value):
            self._import(import_line(value, name))
        else:
            raise NotExtractable(f"{home.__name__}.{name} is a {type(value).__name__} made at import time, which a "
                                 "problem cannot rebuild")


def _plain_tuple(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, (bool, int, float, str, type(None))) for v in value)


def _global_names(obj: Any) -> set[str]:
    """The global names the code of ``obj`` (a function, or every function of a class) reads."""
    codes = []
    if isinstance(obj, type):
        for value in vars(obj).values():
            function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            if isinstance(function, property):
                codes += [f.__code__ for f in (function.fget, function.fset) if f is not None]
            elif isinstance(function, types.FunctionType):
                codes.append(function.__code__)
    elif isinstance(obj, types.FunctionType):
        codes.append(obj.__code__)
    names: set[str] = set()
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return names
