"""The README's section on `kforge run` stays true: its config parses, its flags exist, its demo script is shipped."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from kforge_core.cli import cli
from kforge_core.config import load_settings

README = Path(__file__).resolve().parents[2] / "README.md"


def section() -> str:
    text = README.read_text()
    start = text.index("## Running the agents: `kforge run`")
    end = text.find("\n## ", start + 10)
    return text[start:end if end != -1 else None]


def test_the_config_example_is_valid(tmp_path):
    toml = re.search(r"```toml\n(.*?)```", section(), re.S).group(1)
    (tmp_path / "kforge.toml").write_text(toml)
    (tmp_path / "my-prompts").mkdir()
    settings = load_settings(tmp_path, environ={})
    assert settings.llm.analyst_model == "anthropic:claude-sonnet-4-5" and settings.budget.optimization_attempts == 3


def test_every_flag_it_names_exists():
    help_text = CliRunner().invoke(cli, ["run", "--help"]).output
    flags = set(re.findall(r"(--[a-z][a-z-]+)", section())) - {"--json", "--runs-dir"}
    assert flags and all(flag in help_text for flag in flags), flags - set(re.findall(r"--[a-z-]+", help_text))
    assert "--json" in CliRunner().invoke(cli, ["show", "--help"]).output


def test_the_demo_command_names_shipped_files():
    root = README.parent
    for path in re.findall(r"(examples/[\w/.-]+\.(?:py|jsonl))", section()):
        assert (root / path).exists(), path
