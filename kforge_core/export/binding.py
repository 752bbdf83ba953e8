"""How an exported kernel reads the module it replaces.

This file is copied, as it is, into every package ``kforge export`` writes (as ``_binding.py``), so it imports
nothing but the standard library. A kernel's layer is stateless (the ``kernels`` format forbids it state of its
own); its ``forward`` runs the accepted ``ModelNew.forward`` with ``self`` being a :class:`ModuleView` of the module
it replaces. ModelNew's attributes (``self.weight``, ``self.eps``, ``self.norm``) are looked up on that module:

1. an alias set for the kernel: ``ALIASES[kernel][attribute] = "path.on.module"``;
2. the same name on the module (``weight``);
3. a known synonym (``eps`` is ``variance_epsilon`` in Hugging Face's RMSNorm layers);
4. for an attribute ModelNew made a submodule of class ``C`` (``self.norm = nn.LayerNorm(...)``): the module
   itself when it is a ``C``, or its one child of class ``C``.

An attribute none of these finds raises :class:`BindingError`, which names it and the module.
"""

from __future__ import annotations

import types
import weakref
from typing import Any

# ModelNew's name -> names other libraries give the same thing
SYNONYMS: dict[str, tuple[str, ...]] = {
    "eps": ("variance_epsilon", "epsilon", "layer_norm_eps", "norm_eps"),
    "weight": ("gamma",),
    "bias": ("beta",),
}

# kernel -> {ModelNew attribute: path on the replaced module}; edit to bind a kernel to a layer that names its
# attributes differently
ALIASES: dict[str, dict[str, str]] = {}

_VIEWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class BindingError(AttributeError):
    """ModelNew needs an attribute the replaced module does not have under any name this module knows."""


class ModuleView:
    """The replaced module, seen under ModelNew's attribute names. ModelNew's own methods are bound to the view."""

    __slots__ = ("_module", "_paths", "_model_class")

    def __init__(self, module: Any, paths: dict[str, str], model_class: type) -> None:
        object.__setattr__(self, "_module", weakref.ref(module))  # the cache of views must not keep modules alive
        object.__setattr__(self, "_paths", paths)
        object.__setattr__(self, "_model_class", model_class)

    def __getattr__(self, name: str) -> Any:
        paths = object.__getattribute__(self, "_paths")
        module = object.__getattribute__(self, "_module")()
        if name in paths:
            return resolve(module, paths[name])
        method = getattr(object.__getattribute__(self, "_model_class"), name, None)
        if isinstance(method, types.FunctionType):
            return types.MethodType(method, self)
        return getattr(module, name)


def resolve(module: Any, path: str) -> Any:
    """``module`` itself for ``""``, else the attribute at the dotted ``path``."""
    value = module
    for part in filter(None, path.split(".")):
        value = getattr(value, part)
    return value


def attribute_paths(module: Any, needs: dict[str, str], aliases: dict[str, str] | None = None) -> dict[str, str]:
    """Where each attribute ModelNew needs lives on ``module``. ``needs`` maps an attribute to its kind:
    ``"module:LayerNorm"``, ``"parameter"``, ``"buffer"`` or ``"value"``."""
    aliases = aliases or {}
    paths, missing = {}, []
    for name, kind in needs.items():
        path = _find(module, name, kind, aliases)
        if path is None:
            missing.append(f"{name} ({kind})")
        else:
            paths[name] = path
    if missing:
        raise BindingError(f"{type(module).__name__} has no attribute for ModelNew's {', '.join(missing)}; "
                           "name one with an alias (attribute=path)")
    return paths


def _find(module: Any, name: str, kind: str, aliases: dict[str, str]) -> str | None:
    if name in aliases:
        try:
            resolve(module, aliases[name])
        except AttributeError:
            return None
        return aliases[name]
    wanted_class = kind.partition(":")[2] if kind.startswith("module:") else ""
    if _has(module, name) and (not wanted_class or type(getattr(module, name)).__name__ == wanted_class):
        return name
    for synonym in SYNONYMS.get(name, ()):
        if _has(module, synonym):
            return synonym
    if wanted_class:
        if type(module).__name__ == wanted_class:
            return ""
        children = [child_name for child_name, child in module.named_children()
                    if type(child).__name__ == wanted_class]
        if len(children) == 1:
            return children[0]
    return None


def _has(module: Any, name: str) -> bool:
    try:
        getattr(module, name)
    except AttributeError:
        return False
    return True


def view_of(module: Any, kernel: str, needs: dict[str, str], model_class: type) -> ModuleView:
    """The view ``kernel``'s ModelNew.forward runs on, made once per module (attribute values are read at each
    access, so a module whose weights change is seen as it is)."""
    cached = _VIEWS.get(module)
    if cached is None or cached[0] != kernel:
        cached = (kernel, ModuleView(module, attribute_paths(module, needs, ALIASES.get(kernel)), model_class))
        _VIEWS[module] = cached
    return cached[1]
