"""Trimming is tested on what the tools really print: nvcc run here on broken sources, and recorded logs."""

import subprocess

from kforge_core.languages.cuda_cpp.compile_log import MAX_CHARS, MAX_ERRORS, trim_compile_log

BROKEN = r'''
#include <cuda_runtime.h>
__global__ void scale(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 2.0f
}
''' + "\n".join(f"__global__ void k{j}(float* y) {{ y[0] = undefined_{j}; }}" for j in range(8)) + "\n"


def _nvcc_log(nvcc, tmp_path, source):
    path = tmp_path / "kernel.cu"
    path.write_text(source)
    done = subprocess.run([nvcc, "-c", "-arch=sm_90", str(path), "-o", str(tmp_path / "k.o")],
                          capture_output=True, text=True)
    assert done.returncode != 0
    return done.stdout + done.stderr


def test_real_nvcc_errors_keep_line_source_and_caret(nvcc, tmp_path):
    log = _nvcc_log(nvcc, tmp_path, BROKEN)
    trimmed = trim_compile_log(log, roots=(str(tmp_path),))
    first = trimmed.splitlines()[0]
    assert first.startswith("kernel.cu(6): error") and str(tmp_path) not in trimmed
    assert "}" in trimmed.splitlines()[1] and "^" in trimmed.splitlines()[2]  # the source line and its caret
    assert trimmed.count(": error") == MAX_ERRORS
    assert "more errors" in trimmed
    assert "detected in the compilation" not in trimmed
    assert len(trimmed) < len(log)


def test_real_ptxas_error(nvcc, tmp_path):
    log = _nvcc_log(nvcc, tmp_path, "__global__ void k(float* y) { __shared__ float s[100000]; "
                                    "s[threadIdx.x] = 1; y[threadIdx.x] = s[threadIdx.x + 1]; }\n")
    trimmed = trim_compile_log(log)
    assert trimmed.startswith("ptxas error") and "too much shared data" in trimmed


def test_gcc_style_errors_from_the_pytorch_extension_builder():
    log = """[1/3] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=x -I/opt/torch/include -c /tmp/b/main.cpp -o main.o
FAILED: main.o
/tmp/b/main.cpp:7:5: error: 'undefined_thing' was not declared in this scope
    7 |     undefined_thing();
      |     ^~~~~~~~~~~~~~~
/tmp/b/main.cpp:9:1: warning: no return statement in function returning non-void
ninja: build stopped: subcommand failed."""
    trimmed = trim_compile_log(log, roots=("/tmp/b",))
    assert trimmed.splitlines()[0] == "main.cpp:7:5: error: 'undefined_thing' was not declared in this scope"
    assert "^~~~" in trimmed and "warning" not in trimmed and "ninja" not in trimmed and "c++ -MMD" not in trimmed


def test_linker_error_is_kept():
    log = "/usr/bin/ld: lib.o: in function `launch':\nkernel.cu:(.text+0x1a): undefined reference to `helper(int)'\n" \
          "collect2: error: ld returned 1 exit status"
    assert "undefined reference to `helper(int)'" in trim_compile_log(log)


def test_log_without_a_recognisable_error_keeps_its_end_and_is_clipped():
    log = "\n".join(f"line {i}" for i in range(2000))
    trimmed = trim_compile_log(log)
    assert trimmed.endswith("line 1999") and "line 0\n" not in trimmed
    assert len(trim_compile_log("x" * 50_000)) <= MAX_CHARS
