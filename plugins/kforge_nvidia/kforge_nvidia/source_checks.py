"""What the harness's checks learn from the NVIDIA layer: the CUDA APIs a candidate could cheat with, looked for in
its files before it runs, and torch's CUDA runtime, watched for replaced functions while it runs."""

from __future__ import annotations

from kforge_core.hookspecs import hookimpl
from kforge_core.records import Backend, SourceCheck

from .device import L2_PERSISTENCE

# Lines kept in L2 across runs survive the harness's flush, so a timed run finds its data in cache (cheat 8); the
# device checks the set-aside after every timed run, and the source shows the intent.
L2_PERSISTENCE_APIS = SourceCheck(
    code=L2_PERSISTENCE,
    pattern=(r"cudaLimitPersistingL2CacheSize|CU_LIMIT_PERSISTING_L2_CACHE_SIZE|accessPolicyWindow|"
             r"cudaAccessPropertyPersisting|CU_ACCESS_PROPERTY_PERSISTING|hitProp|cuCtxSetLimit|cudaDeviceSetLimit"),
    what="the persisting-L2 APIs",
)


@hookimpl
def kforge_source_checks(backend: Backend) -> list[SourceCheck]:
    return [L2_PERSISTENCE_APIS]


@hookimpl
def kforge_device_namespaces(backend: Backend) -> list[str]:
    return ["torch.cuda"]
