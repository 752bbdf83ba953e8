"""The kforge_xpu tests import their shared stand-ins from ``xpu_testing`` (this directory is on sys.path)."""
