"""Registers a second backend called ``echo``: KForge must refuse the collision and name both providers."""

from kforge_core import Backend, hookimpl


@hookimpl
def kforge_register_backends(register):
    register(Backend(name="echo", programming_model="something else", device="cpu"))
