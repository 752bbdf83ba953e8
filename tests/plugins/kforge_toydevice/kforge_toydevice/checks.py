"""What the harness's cheat checks learn from the toy plugin: its cache-pinning call, looked for in a candidate's
files, and its runtime module, watched for replaced functions."""

from kforge_core import SourceCheck, hookimpl

TOY_PINNING = SourceCheck(code="toy_cache_pinning", pattern=r"\bpin_cache\b", what="the toy cache-pinning call")


@hookimpl
def kforge_source_checks(backend):
    return [TOY_PINNING]


@hookimpl
def kforge_device_namespaces(backend):
    return ["kforge_toydevice.runtime"]
