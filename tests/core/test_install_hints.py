"""Install hints name KForge's own distributions: `kforge` on the package index is an unrelated project."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "kforge_core", *sorted((ROOT / "plugins").glob("kforge_*/kforge_*"))]
FOREIGN_NAME = re.compile(r"""['"]kforge\[""")


def test_no_source_tells_the_user_to_install_the_unrelated_kforge_distribution():
    offenders = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
                 for source in SOURCES for path in sorted(source.rglob("*"))
                 if path.suffix in {".py", ".md", ".j2", ".toml"}
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if FOREIGN_NAME.search(line)]
    assert len(SOURCES) > 1 and not offenders, "\n".join(offenders)
