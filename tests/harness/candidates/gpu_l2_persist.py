"""Cheat 8: asks the driver to set aside L2 for persisting lines and marks its input persisting, so data would
survive a harness's L2 flush between timed runs."""

import ctypes

import torch

from harness.gpu_kernels import ext

_cuda = ctypes.CDLL("libcuda.so.1")
_CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
_CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1
_CU_ACCESS_PROPERTY_PERSISTING = 2


class _Window(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t), ("hitRatio", ctypes.c_float),
                ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int)]


class _AttrValue(ctypes.Union):
    _fields_ = [("window", _Window), ("pad", ctypes.c_char * 64)]


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.stream = torch.cuda.Stream()

    def forward(self, x):
        _cuda.cuCtxSetLimit(ctypes.c_int(_CU_LIMIT_PERSISTING_L2_CACHE_SIZE), ctypes.c_size_t(4 << 20))
        value = _AttrValue()
        value.window = _Window(x.data_ptr(), min(x.numel() * 4, 4 << 20), 1.0, _CU_ACCESS_PROPERTY_PERSISTING, 0)
        _cuda.cuStreamSetAttribute(ctypes.c_void_p(self.stream.cuda_stream),
                                   ctypes.c_int(_CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW), ctypes.byref(value))
        self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stream):
            out = ext.relu_scale(x, self.scale)
        torch.cuda.current_stream().wait_stream(self.stream)
        return out
