"""KernelBench's eval, imported from a checkout for the side-by-side benchmarks.

KernelBench's package imports its LLM clients (``dotenv``, ``openai``, ``litellm``) when it is imported, though its
eval never calls them. Where one of those is not installed, an empty module of that name stands in for it, so that a
GPU machine without them can still run the eval: ``load_dotenv`` (called at import) loads nothing, the clients raise
when used, so a figure can never come from one.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any

LLM_CLIENT_IMPORTS = {"dotenv": ("load_dotenv",), "openai": ("OpenAI",), "litellm": ("completion",)}


def _load_no_dotenv(*args: Any, **kwargs: Any) -> bool:
    return False  # python-dotenv's answer when no .env file was loaded


class _StandIn:
    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self._name} is not installed: KernelBench's LLM client was not meant to run here")


def stand_in_for_missing_llm_clients() -> list[str]:
    """Register empty modules for KernelBench's LLM-client imports that are not installed; the names replaced."""
    replaced = []
    for module, names in LLM_CLIENT_IMPORTS.items():
        if module in sys.modules or importlib.util.find_spec(module) is not None:
            continue
        stand_in = types.ModuleType(module)
        for name in names:
            setattr(stand_in, name, _load_no_dotenv if name == "load_dotenv" else _StandIn(f"{module}.{name}"))
        sys.modules[module] = stand_in
        replaced.append(module)
    return replaced


def load_kernelbench(checkout: Path) -> tuple[Any, Any]:
    """KernelBench's eval module and its timing module (None where the checkout has none)."""
    for root, name in ((checkout / "src", "kernelbench"), (checkout, "src")):
        if (root / name / "eval.py").is_file():
            replaced = stand_in_for_missing_llm_clients()
            if replaced:
                print(f"KernelBench's LLM clients not installed, stood in for: {', '.join(replaced)}", file=sys.stderr)
            sys.path.insert(0, str(root))
            evaluation = importlib.import_module(f"{name}.eval")
            try:
                timing = importlib.import_module(f"{name}.timing")
            except ImportError:
                timing = None
            return evaluation, timing
    raise SystemExit(f"{checkout} is not a KernelBench checkout: no src/kernelbench/eval.py or src/eval.py")
