"""CUDA C++ as a language knows no vendor: the build cache runs whatever compiler its BuildConfig names, with that
config's flags, version and helpers (a stand-in compiler here: a script that writes the library, or fails the way
nvcc does)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from kforge_core.languages.cuda_cpp.build_cache import BuildConfig, CudaBuildError, build_key, build_library

SOURCE = 'extern "C" int add(int a, int b) { return a + b; }\n'
COMPILER = f"""#!{sys.executable}
import sys
from pathlib import Path
args = sys.argv[1:]
output, source = args[args.index("-o") + 1], Path(args[-1])
text = source.read_text()
if "#error" in text:
    line = text.splitlines().index("#error") + 1
    print(f"{{source.name}}({{line}}): error: the source asked for an error")
    sys.exit(2)
Path(output).write_text(" ".join(args) + "\\n" + text)
"""


@pytest.fixture
def config(tmp_path) -> BuildConfig:
    compiler = tmp_path / "fakecc"
    compiler.write_text(COMPILER)
    compiler.chmod(compiler.stat().st_mode | stat.S_IEXEC)
    return BuildConfig(compiler=str(compiler), flags=("-shared", "--offload-arch=gfx942"), cache_dir=tmp_path / "c",
                       version="fakecc 1.0", helpers='extern "C" int helper(void) { return 0; }')


def test_the_configs_compiler_builds_with_its_flags_and_helpers_once_per_content(config):
    first = build_library(SOURCE, "adder", config)
    again = build_library(SOURCE, "renamed", config)
    assert not first.cached and again.cached and again.library == first.library
    built = first.library.read_text()
    assert built.startswith("-shared --offload-arch=gfx942 -o lib.so adder.cu") and "int helper(void)" in built


def test_the_key_covers_flags_version_helpers_and_options(config):
    from dataclasses import replace

    variants = [replace(config, flags=("-shared",)), replace(config, version="fakecc 2.0"),
                replace(config, helpers=""), replace(config, options_hash="other")]
    assert len({build_key(SOURCE, c) for c in [config, *variants]}) == 5


def test_a_failure_names_the_compiler_is_trimmed_and_cached(config):
    broken = SOURCE + "#error\n"
    with pytest.raises(CudaBuildError, match="fakecc failed to build 'broken'") as first:
        build_library(broken, "broken", config)
    assert first.value.log.startswith("broken.cu(2): error") and not first.value.cached
    with pytest.raises(CudaBuildError) as again:
        build_library(broken, "other", config)
    assert again.value.cached
