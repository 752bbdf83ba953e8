"""``kforge plugins``: the loaded plugins, their distributions and the hooks each implements."""

from __future__ import annotations

import json

import click

from ..app import App


@click.command()
@click.option("--all", "show_all", is_flag=True, help="Include the core's own built-in plugins.")
@click.pass_obj
def plugins(app: App, show_all: bool) -> None:
    """Print the installed plugins as JSON: name, distribution, version, hooks (and load failures)."""
    app.settings()  # a broken --config, kforge.toml or KFORGE_* setting is reported here too
    pm = app.plugins.pm
    out = []
    for plugin in pm.get_plugins():
        name = pm.get_name(plugin)
        if name is None or (name.startswith("kforge.") and not show_all):
            continue
        dist, version = app.plugins.provider(plugin)
        hooks = sorted(caller.name for caller in pm.get_hookcallers(plugin) or [])
        out.append({"name": name, "distribution": dist, "version": version, "hooks": hooks})
    for failure in app.plugins.failures:
        out.append({"name": failure.name, "distribution": failure.distribution, "version": failure.version,
                    "error": failure.error})
    click.echo(json.dumps(sorted(out, key=lambda p: p["name"]), indent=2))
