"""What the NVIDIA layer adds to the cheat checks of every NVIDIA backend: the persisting-L2 APIs in a candidate's
files (a CUDA source as a string included), and torch.cuda among the watched modules."""

import pytest

from kforge_core.harness import flags as F
from kforge_core.harness.host.static_check import check_source
from kforge_core.plugins import PluginSelection, build_plugin_manager
from kforge_core.records import Candidate
from kforge_core.registry import BackendRegistry

SOURCE = ('import torch\nSRC = r"""\nextern "C" void pin(cudaStream_t s) {\n'
          '  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20);\n}\n"""\n')


@pytest.mark.parametrize("name", ["cuda", "triton", "cute"])
def test_every_nvidia_backend_flags_the_persisting_l2_apis_and_watches_torch_cuda(name, cuda_problem):
    registry = BackendRegistry(build_plugin_manager(PluginSelection(only=(name,))))
    backend, hooks = registry.get(name).backend, registry.hooks(name)
    assert hooks.collect("device_namespaces", backend=backend) == ("torch.cuda",)
    checks = hooks.collect("source_checks", backend=backend)
    (flag,) = check_source(Candidate.from_source(SOURCE), cuda_problem, plugin_checks=checks)
    assert flag.code == F.L2_PERSISTENCE and not flag.blocking
    assert flag.message == "source: model_new.py names the persisting-L2 APIs"
