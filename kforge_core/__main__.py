"""``python -m kforge_core`` is the ``kforge`` command."""

from .cli import main

main()
