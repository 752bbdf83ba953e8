"""The harness's side in KForge's own process: it starts, feeds, times out and replaces workers, and never imports
candidate code (see ``kforge_core/harness/__init__.py``)."""
