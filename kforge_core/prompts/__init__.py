"""The agents' prompts: Jinja2 templates shipped here, which a user may override one by one with ``prompts_dir``.

A file in ``prompts_dir`` with the name of a shipped template (``generation.j2``) replaces it; the others keep
coming from here. Templates are rendered with ``StrictUndefined`` so a misspelt variable fails loudly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from ..errors import KForgeError

TEMPLATES = ("generation_system.j2", "generation.j2", "analysis_system.j2", "analysis.j2")


class PromptTemplates:
    """Renders the named templates, from ``prompts_dir`` first, then from the package."""

    def __init__(self, prompts_dir: Path | None = None) -> None:
        if prompts_dir is not None and not prompts_dir.is_dir():
            raise KForgeError(f"prompts_dir {prompts_dir} is not a directory")
        loaders: list[jinja2.BaseLoader] = [jinja2.PackageLoader("kforge_core", "prompts")]
        if prompts_dir is not None:
            loaders.insert(0, jinja2.FileSystemLoader(str(prompts_dir)))
        self.prompts_dir = prompts_dir
        self._env = jinja2.Environment(
            loader=jinja2.ChoiceLoader(loaders),
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
            trim_blocks=True,
            lstrip_blocks=True,
            autoescape=False,
        )

    def render(self, name: str, **context: Any) -> str:
        try:
            return self._env.get_template(name).render(**context).strip() + "\n"
        except jinja2.TemplateError as exc:
            where = getattr(exc, "filename", None) or name
            line = getattr(exc, "lineno", None)
            raise KForgeError(f"prompt template {where}{f':{line}' if line else ''}: {exc}") from None
