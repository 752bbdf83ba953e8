"""A test plugin: backends served entirely by the core's generic stage implementations.

``torch-cpu`` runs candidates on the CPU (CI); ``torch-cuda`` on an NVIDIA GPU (the ``gpu`` tests). Tests load it
with ``PluginSelection(entry_points=False, modules=("harness.torch_backend_plugin",))``; workers import it too,
because they see the test process's ``sys.path``.
"""

from __future__ import annotations

from kforge_core import Availability, Backend, Example, Lowering, hookimpl
from kforge_core.devices.cpu import CpuDevice
from kforge_core.peaks import Peak, peaks_of
from kforge_nvidia.device import CudaDevice
from kforge_nvidia.source_checks import kforge_device_namespaces, kforge_source_checks  # noqa: F401 - hooks

# The NVIDIA layer's check hooks answer for all three backends (as the harness's checks did before plugins added
# theirs): the persisting-L2 APIs in a candidate's source, torch.cuda's functions watched.

TORCH_CPU = Backend(name="torch-cpu", programming_model="PyTorch", device="cpu",
                    description="candidates on the CPU, served by the core's generic stages")
TORCH_CUDA = Backend(name="torch-cuda", programming_model="PyTorch", device="cuda", device_class=CudaDevice,
                     description="candidates on an NVIDIA GPU, served by the core's generic stages")


class CpuUnitsDevice(CpuDevice):
    """The host CPU, with units a harness can bind its workers to through a variable of its own (for
    ``--devices``)."""

    visible_devices_env = "TORCH_TEST_UNITS"
    runtime_environment = (("TORCH_TEST_RUNTIME", "set-by-the-device"),)


TORCH_CPU_UNITS = Backend(name="torch-cpu-units", programming_model="PyTorch", device="cpu",
                          description="torch-cpu with selectable units", device_class=CpuUnitsDevice)


# far above what a CPU reaches: a bound taken from them never calls a candidate faster than the hardware
STATED_FP32 = Peak(1e14, "stated for the test device")
STATED_BANDWIDTH = Peak(1e13, "stated for the test device")


class CpuAsAcceleratorDevice(CpuDevice):
    """The host CPU treated as an accelerator's would be: builds, spare workers and the next problem's baseline
    worker may work beside timed runs (what ``host_cpu`` forbids on the host's own cores), and a baseline measured
    before is a prior that a fresh block may confirm."""

    host_cpu = False
    prior_band = 0.10
    out_of_memory_patterns = ("accelerator memory exhausted",)  # what its runtime would say

    def peaks(self):
        """Stated, as an accelerator's plugin states its GPU's from a table: a device that is not the host CPU
        measures what its vendor does not state with a GEMM of 8192 x 8192 and copies of 1 GiB (minutes on two
        cores, the first time each cache directory sees it), which none of the tests on this device is about."""
        return peaks_of(self.hardware_name(), STATED_BANDWIDTH, {"fp32": STATED_FP32},
                        cache_bandwidths=tuple((level, STATED_BANDWIDTH) for level in self.cache_levels()))


class CpuAsUnlistedAcceleratorDevice(CpuAsAcceleratorDevice):
    """The same, as an accelerator missing from its plugin's table would be, but for its fp32 rate: its memory
    bandwidth is measured in the worker as it starts, within the worker's memory limit."""

    def peaks(self):
        return peaks_of(self.hardware_name(), None, {"fp32": STATED_FP32})


TORCH_CPU_ACCELERATOR = Backend(name="torch-cpu-accelerator", programming_model="PyTorch", device="cpu",
                          description="torch-cpu, with work ahead beside timed runs as on an accelerator",
                          device_class=CpuAsAcceleratorDevice)
TORCH_CPU_UNLISTED = Backend(name="torch-cpu-unlisted", programming_model="PyTorch", device="cpu",
                             description="torch-cpu-accelerator, its memory bandwidth measured",
                             device_class=CpuAsUnlistedAcceleratorDevice)


@hookimpl
def kforge_register_backends(register):
    register(TORCH_CPU)
    register(TORCH_CUDA)
    register(TORCH_CPU_UNITS)
    register(TORCH_CPU_ACCELERATOR)
    register(TORCH_CPU_UNLISTED)


@hookimpl
def kforge_backend_availability(backend):
    if backend.name in (TORCH_CPU.name, TORCH_CPU_UNITS.name, TORCH_CPU_ACCELERATOR.name, TORCH_CPU_UNLISTED.name):
        return Availability.yes("the host CPU")
    if backend.name == TORCH_CUDA.name:
        import torch

        if not torch.cuda.is_available():
            return Availability.no("no CUDA device")
        return Availability.yes(torch.cuda.get_device_name())
    return None


@hookimpl
def kforge_lower(backend):
    """A lowering for the agent loop's tests on torch-cpu (the bench's --llm)."""
    if backend.name != TORCH_CPU.name:
        return None
    return Lowering(backend=backend.name, programming_model="Write ModelNew with NumPy.", hardware="the host CPU",
                    example=Example(problem="class Model: ...", solution="class ModelNew: ..."))
