import ctypes

import pytest

from kforge_core.languages.cuda_cpp.c_signature import SignatureError, parse_exports

SOURCE = r'''
#include <cuda_runtime.h>
__global__ void k(float* x) {}
// extern "C" void commented_out(int a) {}
extern "C" cudaError_t launch(const float* __restrict__ x, __half *y, int64_t n, float scale,
                              unsigned int flags, cudaStream_t stream) { return cudaSuccess; }
extern "C" int count(void) { return 3; }
extern "C" __host__ void fill(double value, bool flag, size_t bytes, long long offset) {}
static void helper(int) {}
'''


def test_reads_every_extern_c_definition():
    exports = parse_exports(SOURCE)
    assert sorted(exports) == ["count", "fill", "launch"]
    launch = exports["launch"]
    assert launch.returns == "cudaError_t" and launch.restype is ctypes.c_int
    assert [p.name for p in launch.params] == ["x", "y", "n", "scale", "flags", "stream"]
    assert [p.is_pointer for p in launch.params] == [True, True, False, False, False, False]
    assert launch.params[-1].is_stream
    assert [p.ctype for p in launch.params] == [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float,
                                                ctypes.c_uint, ctypes.c_void_p]
    assert exports["count"].params == ()
    assert [p.ctype for p in exports["fill"].params] == [ctypes.c_double, ctypes.c_bool, ctypes.c_size_t,
                                                         ctypes.c_longlong]


@pytest.mark.parametrize("source, message", [
    ('extern "C" void f(std::vector<int> v) {}', "std::vector"),
    ('extern "C" void f(MyStruct s) {}', "MyStruct"),
    ('extern "C" float* f(int n) {}', "return type"),
])
def test_unsupported_types_are_named(source, message):
    with pytest.raises(SignatureError, match=message):
        parse_exports(source)
