"""The example transformer block at a size the tests run in milliseconds."""

from examples.models.tiny_block import build_model as build_block


def build_model():
    return build_block(tokens=16, width=16)
