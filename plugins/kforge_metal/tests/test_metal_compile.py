"""Compile errors of Metal shaders: the compiler's text (as ``torch.mps.compile_shader`` raises it) parsed, each
error placed at the line of the candidate's Python file, and the compile stage's classification.

The Metal compiler only runs on a Mac (the ``mps`` tests compile for real); here a function raising the
compiler's text stands in for ``torch.mps.compile_shader``, and everything around it is the real stage."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from kforge_core.records import Candidate, Failure, StageContext
from kforge_metal.backend import METAL, MetalOptions
from kforge_metal.compile_log import parse_diagnostics, render_compile_log
from kforge_metal.compile_stage import compile_candidate
from kforge_metal.shader_sources import ShaderLocator, expansion_origins, shader_strings

# What compile_shader raised for the source "What" (quoted in PyTorch's change that made it a SyntaxError).
WHAT = """program_source:1:1: error: unknown type name 'What'
What
^
program_source:1:5: error: expected unqualified-id
What
    ^
"""

CANDIDATE = textwrap.dedent('''\
    import torch
    import torch.nn as nn

    # the shader starts on the next line
    SOURCE = """
    #include <metal_stdlib>
    using namespace metal;

    kernel void rmsnorm(device const float4* x [[buffer(0)]],
                        device float4* y [[buffer(1)]],
                        uint row [[threadgroup_position_in_grid]],
                        uint tid [[thread_position_in_threadgroup]]) {
        float unused = 0.0f;
        float sum = 0.0f;
        for (uint i = tid; i < 64; i += 256) {
            acc += dot(x[i], x[i]);
        }
        y[row] = x[row] * sum;
    }
    """

    lib = torch.mps.compile_shader(SOURCE)


    class ModelNew(nn.Module):
        def __init__(self, hidden, eps=1e-6):
            super().__init__()
            self.kernel = lib.rmsnorm

        def forward(self, x):
            return x
    ''')
# The compiler's report for CANDIDATE's shader: line 12 of the string is the `acc +=` line.
UNDECLARED = """program_source:9:11: warning: unused variable 'unused' [-Wunused-variable]
    float unused = 0.0f;
          ^
program_source:12:9: error: use of undeclared identifier 'acc'
        acc += dot(x[i], x[i]);
        ^
1 warning and 1 error generated.
"""


def test_diagnostics_are_parsed_with_their_excerpts():
    first, second = parse_diagnostics(WHAT)
    assert (first.line, first.column, first.severity, first.message) == (1, 1, "error", "unknown type name 'What'")
    assert first.excerpt == ("What", "^") and second.column == 5
    warning, error = parse_diagnostics(UNDECLARED)
    assert not warning.is_error and error.is_error and error.excerpt[0].strip() == "acc += dot(x[i], x[i]);"


def test_errors_are_placed_at_the_candidates_lines_and_warnings_left_out():
    candidate = Candidate.from_source(CANDIDATE)
    (shader,) = shader_strings(candidate)
    assert (shader.file, shader.line, shader.exact) == ("model_new.py", 5, True)
    source = shader.value
    log = render_compile_log(UNDECLARED, ShaderLocator(source, [shader]))
    assert "model_new.py:16 (shader line 12):9: error: use of undeclared identifier 'acc'" in log
    assert CANDIDATE.splitlines()[15].strip() == "acc += dot(x[i], x[i]);"
    assert "unused variable" not in log
    only_warning = render_compile_log(UNDECLARED.split("program_source:12")[0], ShaderLocator(source, [shader]))
    assert "model_new.py:13 (shader line 9):11: warning: unused variable 'unused'" in only_warning


def test_a_string_that_is_not_one_line_per_line_names_the_string():
    candidate = Candidate.from_source('SOURCE = "kernel void k(device float* x [[buffer(0)]]) {\\n  oops;\\n}"\n')
    (shader,) = shader_strings(candidate)
    assert not shader.exact
    log = render_compile_log("program_source:2:3: error: use of undeclared identifier 'oops'\n",
                             ShaderLocator(shader.value, [shader]))
    assert "line 2 of the string at model_new.py:1 (shader line 2):3: error" in log


def test_a_source_built_from_pieces_maps_the_piece_that_holds_the_line():
    candidate = Candidate.from_source(textwrap.dedent('''\
        HEADER = "#include <metal_stdlib>\\nusing namespace metal;\\n"
        BODY = """
        kernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
            x[i] = y;
        }
        """
        '''))
    strings = shader_strings(candidate)
    assert [s.line for s in strings] == [2]  # only the piece with the kernel is a shader string
    source = "#include <metal_stdlib>\nusing namespace metal;\n" + strings[0].value
    locate = ShaderLocator(source, strings)
    assert locate(5) == "model_new.py:4 (shader line 5)"  # `x[i] = y;`
    assert locate(1) == "shader line 1"  # from a piece that is not a shader string


def test_lines_after_an_embedded_pytorch_header_map_back_to_the_source():
    from torch.utils._cpp_embed_headers import _embed_headers

    include = Path(torch.mps.__file__).parent.parent / "include"
    header_lines = _embed_headers(["#include <c10/metal/utils.h>\n"], [include], set()).count("\n")
    assert header_lines > 20  # the header's text replaces the include line
    source = "#include <metal_stdlib>\n#include <c10/metal/utils.h>\nusing namespace metal;\nkernel void k() {\n  bad;\n}"
    origins = expansion_origins(source)
    assert len(origins) == 5 + header_lines
    bad = 1 + header_lines + 3  # line 5 of the source, after the header's lines
    assert origins[bad - 1].line == 5 and not origins[bad - 1].header
    assert origins[2].line == 2 and origins[2].header == "c10/metal/utils.h"
    locate = ShaderLocator(source, [])
    assert locate(bad) == "shader line 5"
    assert locate(3).startswith("inside <c10/metal/utils.h>, included at shader line 2")


# ------------------------------------------------------------------------------------------- the stage


@pytest.fixture
def stage(tmp_path, small_problem, monkeypatch):
    """Run the real compile stage on a candidate, with ``compile`` standing in for torch.mps.compile_shader."""

    def run(source: str, compile, first_forward: bool = False):
        monkeypatch.setattr(torch.mps, "compile_shader", compile)
        workdir = tmp_path / f"work-{len(list(tmp_path.iterdir()))}"
        workdir.mkdir()
        candidate = Candidate.from_source(source)
        context = StageContext(problem=small_problem, workdir=workdir, options=MetalOptions(first_forward=first_forward))
        result = compile_candidate(METAL, candidate, context)
        assert torch.mps.compile_shader is compile  # the stage put back what it found
        return result

    return run


class _Kernel:
    max_threads_per_threadgroup = 1024
    thread_execution_width = 32
    static_thread_group_memory_length = 32


class _Library:
    """A compiled library as compile_shader returns it: kernels by attribute, names by dir()."""

    def __dir__(self):
        return ["rmsnorm"]

    def __getattr__(self, name):
        if name != "rmsnorm":
            raise RuntimeError(f"Failed to create function state object for: {name}")
        return _Kernel()


def test_a_shader_that_does_not_compile_is_a_compile_error_at_the_candidates_line(stage):
    def metal_compiler(source):
        raise SyntaxError(UNDECLARED)

    result = stage(CANDIDATE, metal_compiler)
    assert (result.ok, result.failure) == (False, Failure.COMPILE)
    assert result.log.startswith("the Metal compiler reported:\nmodel_new.py:16 (shader line 12):9: error: use of "
                                 "undeclared identifier 'acc'")


def test_a_kernel_the_library_lacks_is_a_compile_error_naming_the_kernels_it_has(stage):
    at_import = CANDIDATE.replace("lib = torch.mps.compile_shader(SOURCE)",
                                  "lib = torch.mps.compile_shader(SOURCE)\nKERNEL = lib.rms_norm")
    result = stage(at_import, lambda source: _Library())
    assert result.failure == Failure.COMPILE
    assert result.log == "no kernel function named 'rms_norm' in the compiled library (its kernels: rmsnorm)"


def test_a_compiled_candidate_logs_what_each_kernel_allows(stage):
    result = stage(CANDIDATE, lambda source: _Library())
    assert result.ok, result.log
    assert result.log == ("kernel rmsnorm: at most 1024 threads per threadgroup, SIMD width 32, "
                          "32 bytes of threadgroup memory")


def test_python_errors_stay_import_errors(stage):
    result = stage(CANDIDATE.replace("import torch.nn as nn", "import torch.nn as nn\nimport no_such_module"),
                   lambda source: _Library())
    assert result.failure == Failure.IMPORT and "No module named 'no_such_module'" in result.log
    result = stage("x = 1\n", lambda source: _Library())
    assert result.failure == Failure.NO_MODEL_NEW
    result = stage("def broken(:\n", lambda source: _Library())
    assert result.failure == Failure.SYNTAX
