"""The ``kforge`` command. User-facing errors become a clean message and exit code here, and only here."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import click

from .app import App, configure_logging
from .errors import KForgeError
from .commands.exit_codes import EXIT_OUTPUT_CLOSED
from .redacting_stream import OutputClosed, RedactingStream


class KForgeGroup(click.Group):
    """Turns a :class:`KForgeError` from any command into ``Error: ...`` and its exit code, and a closed output
    (:class:`OutputClosed`) into a quiet end."""

    def invoke(self, ctx: click.Context):  # type: ignore[override]
        try:
            try:
                return super().invoke(ctx)
            except KForgeError as exc:
                app = ctx.obj if isinstance(ctx.obj, App) else None
                if app is not None and app.debug:
                    traceback.print_exc()
                click.echo(f"Error: {exc}", err=True)
                ctx.exit(exc.exit_code)
        except OutputClosed:
            ctx.exit(EXIT_OUTPUT_CLOSED)  # nobody reads on: nothing to say, and the work left the store as it was


@click.group(cls=KForgeGroup)
@click.version_option(package_name="kforge-core")
@click.option("--debug", is_flag=True, help="Show tracebacks and plugin import failures in full.")
@click.option("--no-plugins", is_flag=True, help="Load no installed plugin (only the core's own).")
@click.option(
    "--config", "config_file", type=click.Path(dir_okay=False, path_type=Path),
    help="Read settings from this TOML file instead of ./kforge.toml or ./pyproject.toml.",
)
@click.pass_context
def cli(ctx: click.Context, debug: bool, no_plugins: bool, config_file: Path | None) -> None:
    """KForge: two LLM agents turn a PyTorch reference into a correct, fast kernel for your accelerator."""
    _redact_output(ctx)
    configure_logging(debug)
    if not isinstance(ctx.obj, App):  # tests may pass a prepared App
        ctx.obj = App(debug=debug, load_plugins=not no_plugins, config_file=config_file)


def _redact_output(ctx: click.Context) -> None:
    """Secrets never reach the terminal: standard output and error are redacted until the command ends."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(sys.stdout), RedactingStream(sys.stderr)  # type: ignore[assignment]

    def restore() -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OutputClosed:  # found only now: the command's work is done either way
                pass
        sys.stdout, sys.stderr = streams

    ctx.call_on_close(restore)


def _add_commands() -> None:
    from .commands import backends, bench, check, plugins_cmd, run, runs, show
    from .commands import index as index_cmd
    from .commands import search as search_cmd
    from .commands import eval as eval_cmd
    from .commands import export as export_cmd
    from .commands import integrate as integrate_cmd
    from .commands import hotspots as hotspots_cmd

    cli.add_command(backends.backends)
    cli.add_command(plugins_cmd.plugins)
    cli.add_command(check.check)
    cli.add_command(eval_cmd.eval_command)
    cli.add_command(run.run)
    cli.add_command(bench.bench)
    cli.add_command(runs.runs)
    cli.add_command(show.show)
    cli.add_command(export_cmd.export)
    cli.add_command(integrate_cmd.integrate)
    cli.add_command(hotspots_cmd.hotspots)
    cli.add_command(index_cmd.index)
    cli.add_command(search_cmd.search)


_add_commands()


def main(argv: list[str] | None = None) -> None:
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="kforge")
