"""Which PyTorch operators ran, and which of them did computation.

A candidate legitimately calls PyTorch to allocate its outputs, to view and reshape tensors, to copy or convert
them and to fill them; those operators are on :data:`NON_COMPUTE_OPS`. Any other ATen operator that runs inside
``ModelNew.forward`` does the problem's computation in PyTorch instead of in the candidate's kernel, and is
reported by the ``reference_call`` flag.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, Callable, Iterable

# The allow-list: ATen operators that allocate, view, copy, convert, fill or ask about tensors.
NON_COMPUTE_OPS = frozenset({
    # allocation
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros",
    "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "scalar_tensor", "arange", "lift_fresh",
    "lift_fresh_copy", "resize_", "set_", "_pin_memory", "pin_memory", "record_stream",
    # fills
    "fill_", "zero_",
    # views and metadata
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "t", "transpose", "permute", "expand",
    "expand_as", "squeeze", "unsqueeze", "slice", "select", "narrow", "split", "split_with_sizes", "chunk",
    "unbind", "flatten", "unflatten", "alias", "detach", "view_as", "view_as_real", "view_as_complex",
    "unfold", "movedim", "swapaxes", "swapdims", "resolve_conj", "resolve_neg", "conj",
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "size", "stride", "dim", "numel",
    "is_contiguous", "is_same_size", "is_pinned", "_local_scalar_dense", "item", "_has_compatible_shallow_copy_type",
    # questions about dtypes (a Triton wrapper's torch.promote_types picks its output's dtype)
    "promote_types", "result_type", "can_cast", "is_floating_point", "is_complex", "is_signed",
    # copies and conversions
    "contiguous", "clone", "copy_", "_copy_from", "_copy_from_and_resize", "_to_copy", "to", "type_as",
})


def op_name(qualified: str) -> str:
    """``aten::gelu.default`` or ``aten.gelu.default`` -> ``aten::gelu``."""
    qualified = qualified.replace(".", "::", 1) if "::" not in qualified else qualified
    namespace, _, rest = qualified.partition("::")
    return f"{namespace}::{rest.split('.')[0]}"


def is_compute_op(name: str) -> bool:
    """True for an operator that computes (not on the allow-list). Non-ATen namespaces (a candidate's own
    ``mylib::kernel``, profiler ranges) are not PyTorch computation."""
    namespace, _, base = op_name(name).partition("::")
    return namespace == "aten" and base not in NON_COMPUTE_OPS


def compute_ops(names: Iterable[str]) -> Counter[str]:
    """The compute operators among ``names``, counted."""
    return Counter(op_name(n) for n in names if is_compute_op(n))


def describe_ops(counts: Counter[str]) -> str:
    return ", ".join(f"{name} x{count}" for name, count in sorted(counts.items()))


def trace_ops(call: Callable[[], Any]) -> tuple[Any, list[str]]:
    """Run ``call`` under a dispatch mode that records every operator that reaches the dispatcher (from Python
    or from C++, such as an extension calling ``at::matmul``); returns its result and the operator names. Where
    :func:`hide_recorders` ran first, the questions code usually asks about dispatch modes do not see it."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    names: list[str] = []

    class _Recorder(TorchDispatchMode):
        def __enter__(self):  # noqa: ANN204 - pushed without setting the "in a dispatch mode" flags
            torch._C._push_on_torch_dispatch_stack(self)
            _hidden.append(self)
            return self

        def __exit__(self, *exc_info: object) -> None:
            _hidden.remove(self)
            torch._C._pop_torch_dispatch_stack(None)

    def record(self: Any, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        names.append(op_name(func._schema.name))
        return func(*args, **(kwargs or {}))

    _Recorder.__torch_dispatch__ = _outside_dynamo(record)  # set after the class: see _outside_dynamo

    with _Recorder():
        result = call()
    return result, names


def _outside_dynamo(dispatch: Callable[..., Any]) -> Callable[..., Any]:
    """``dispatch`` as a mode's ``__torch_dispatch__`` that Dynamo never compiles into, without importing Dynamo.

    PyTorch wraps a mode's ``__torch_dispatch__`` (when the class body defines it) so that Dynamo skips it, and that
    wrapper imports ``torch._dynamo`` on the first operator: a second of work in a process that never compiles.
    Dynamo can only be compiling in a process that has imported it, so until then ``dispatch`` runs as it is; once
    the candidate has loaded Dynamo (a ``torch.compile`` in its forward, say), it runs under ``torch._dynamo.disable``
    as PyTorch would have it."""
    disabled: list[Callable[..., Any]] = []

    def dispatch_outside_dynamo(*args: Any, **kwargs: Any) -> Any:
        if "torch._dynamo" not in sys.modules:
            return dispatch(*args, **kwargs)
        if not disabled:
            import torch._dynamo

            disabled.append(torch._dynamo.disable(dispatch, recursive=True))
        return disabled[0](*args, **kwargs)

    return dispatch_outside_dynamo


_hidden: list[Any] = []  # the recorders on the dispatch stack now, which the stack's queries leave out


def hide_recorders() -> None:
    """Answer the questions code asks about the dispatch-mode stack (its length and its entries, through
    ``torch._C`` and ``torch.utils._python_dispatch``) as if the harness's recorder were not on it. Called in a
    worker before any candidate is imported, so the names a candidate binds when it is imported answer so too:
    a candidate that computes with PyTorch only while nobody records its operators finds nobody recording."""
    import torch
    import torch.utils._python_dispatch as python_dispatch

    if getattr(torch._C._len_torch_dispatch_stack, "hides_recorders", False):
        return
    real_length, real_at = torch._C._len_torch_dispatch_stack, torch._C._get_dispatch_stack_at

    def visible() -> list[Any]:
        return [m for m in (real_at(i) for i in range(real_length())) if not any(m is h for h in _hidden)]

    def length() -> int:
        return len(visible()) if _hidden else real_length()

    def at(index: int) -> Any:
        return visible()[index] if _hidden else real_at(index)

    length.hides_recorders = True  # type: ignore[attr-defined]
    for space in (torch._C, python_dispatch):
        space._len_torch_dispatch_stack = length
        space._get_dispatch_stack_at = at
