"""What the kforge_metal tests share (a module of its own: every test directory has a conftest.py)."""

from __future__ import annotations

from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
