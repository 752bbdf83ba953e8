"""The README's section on `kforge run`, and docs/run.md behind it, stay true: their config parses, their flags
exist, their demo script is shipped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kforge_core.cli import cli
from kforge_core.config import load_settings

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
RUN_DOC = ROOT / "docs" / "run.md"


def section() -> str:
    text = README.read_text()
    start = text.index("## Running the agents: `kforge run`")
    end = text.find("\n## ", start + 10)
    return text[start:end if end != -1 else None]


# the README's short tour of `kforge run`, and the page that has the rest
PAGES = {"README": section, "docs/run.md": RUN_DOC.read_text}


@pytest.mark.parametrize("page", PAGES)
def test_the_config_example_is_valid(tmp_path, page):
    toml = re.search(r"```toml\n(.*?)```", PAGES[page](), re.S).group(1)
    (tmp_path / "kforge.toml").write_text(toml)
    (tmp_path / "my-prompts").mkdir()
    settings = load_settings(tmp_path, environ={})
    assert settings.llm.analyst_model == "anthropic:claude-sonnet-4-5" and settings.budget.optimization_attempts == 3


@pytest.mark.parametrize("page", PAGES)
def test_every_flag_it_names_exists(page):
    help_text = CliRunner().invoke(cli, ["run", "--help"]).output
    flags = set(re.findall(r"(--[a-z][a-z-]+)", PAGES[page]())) - {"--json", "--runs-dir"}
    assert flags and all(flag in help_text for flag in flags), flags - set(re.findall(r"--[a-z-]+", help_text))
    assert "--json" in CliRunner().invoke(cli, ["show", "--help"]).output


@pytest.mark.parametrize("page", PAGES)
def test_the_demo_command_names_shipped_files(page):
    named = re.findall(r"(examples/[\w/.-]+\.(?:py|jsonl))", PAGES[page]())
    assert named or page != "README"
    for path in named:
        assert (ROOT / path).exists(), path
