"""What belongs to a programming language, shared by every backend that speaks it.

The core knows languages, not vendors: :mod:`.triton` serves NVIDIA's ``triton`` backend and any other backend
whose candidates are Triton kernels (Intel GPUs through ``torch.xpu``), without copying. What a vendor adds (its
device, its toolchain, its profiler) stays in its plugin.
"""
