"""The backend-option flags that ``kforge eval`` and ``kforge run`` share: ``--option KEY=VALUE`` and
``--sanitize``, which land in ``[backends.<name>]`` on top of the config file and the environment."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import click

from ..app import App
from ..config import parse_value
from ..errors import KForgeError
from ..settings import Settings

SANITIZE_OPTION = "sanitize"  # the option of backends whose plugin can rerun a failing candidate under a checker


def backend_option_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--option/-o KEY=VALUE`` (repeatable) and ``--sanitize`` to ``command``."""
    command = click.option(
        "--sanitize", is_flag=True,
        help="Rerun a candidate that fails verification under the backend's memory checker; its report joins "
             "the verdict (the backend's `sanitize` option).")(command)
    return click.option(
        "--option", "-o", "backend_options", multiple=True, metavar="KEY=VALUE",
        help="Set one of the backend's options (see its [backends.NAME] table), e.g. -o sanitize=true.")(command)


def settings_with_backend_options(app: App, flags: dict[str, Any], assignments: tuple[str, ...],
                                  sanitize: bool) -> Settings:
    """The settings for the command's ``flags`` (dotted keys), with the backend's options from ``--option`` and
    ``--sanitize`` on top; an option the backend does not have is an error naming its options."""
    settings = app.settings(**flags)
    options = dict(_parse(assignments))
    if sanitize:
        options[SANITIZE_OPTION] = True
    if not options:
        return settings
    backend = app.backend(settings.backend).backend
    known = _option_names(backend)
    for key in options:
        if key not in known:
            what = "takes no options" if not known else f"has no option {key!r} (its options: {', '.join(known)})"
            hint = ("its plugin cannot rerun candidates under a memory checker" if key == SANITIZE_OPTION
                    else "see the plugin's documentation for its options")
            raise KForgeError(f"backend {backend.name!r} {what}", hint=hint)
    return app.settings(**flags, **{f"backends.{backend.name}.{key}": value for key, value in options.items()})


def _parse(assignments: tuple[str, ...]) -> list[tuple[str, Any]]:
    parsed = []
    for assignment in assignments:
        key, sep, text = assignment.partition("=")
        if not sep or not key.strip():
            raise KForgeError(f"--option {assignment!r}: expected KEY=VALUE", hint="for example -o sanitize=true")
        parsed.append((key.strip(), parse_value(text.strip())))
    return parsed


def _option_names(backend: Any) -> list[str]:
    if backend.options_type is None:
        return []
    return [f.name for f in dataclasses.fields(backend.options_type) if f.init]
