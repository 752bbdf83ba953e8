"""The harness's side inside the worker process, where candidate code runs (``python -m kforge_core.harness.worker``),
and in the build-ahead child (see ``kforge_core/harness/__init__.py``)."""
