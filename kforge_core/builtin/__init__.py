"""The core's own hook implementations, registered through the plugin manager like any other plugin."""
