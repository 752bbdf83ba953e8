"""The compile stage with the real CuTe DSL and no GPU (``CUTE_DSL_ARCH=sm_90a``): a second evaluation of the same
candidate does not compile again, in the same process (a warm worker) or in another (the disk cache), and a DSL
error is a compile error with the candidate's line. Each run is a fresh process, as a worker is."""

import json
import os
import subprocess
import sys

import pytest

from cute_testing import CANDIDATES, EXAMPLES, HERE, needs_dsl

pytestmark = needs_dsl
GOOD = CANDIDATES / "compiles_at_import.py"


def _stage(tmp_path, *candidates, cache="cache"):
    scratch = tmp_path / f"scratch-{len(list(tmp_path.glob('scratch-*')))}"
    env = {**os.environ, "CUTE_DSL_ARCH": "sm_90a"}
    done = subprocess.run([sys.executable, str(HERE / "stage_driver.py"), str(tmp_path / cache), str(scratch),
                           *map(str, candidates)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    path = tmp_path_factory.mktemp("broken") / "broken.py"
    path.write_text(GOOD.read_text().replace("gX[tidx] * 2.0  # KERNEL_BODY", "gX[tidx] * scale  # KERNEL_BODY"))
    return path


def test_the_same_candidate_compiles_once_per_process_and_once_per_disk_cache(tmp_path):
    first, again = _stage(tmp_path, GOOD, GOOD)
    assert first["ok"] and not first["cached"] and "cute.compile launch: compiled in" in first["log"]
    assert again["ok"] and again["cached"] and "found in this process's cache" in again["log"]
    (elsewhere,) = _stage(tmp_path, GOOD)  # another process: the object file exported by the first
    assert elsewhere["ok"] and elsewhere["cached"] and "loaded from the disk cache" in elsewhere["log"]
    assert len(list((tmp_path / "cache" / "cute" / "kernels").glob("*.o"))) == 1


def test_a_changed_source_compiles_again(tmp_path):
    changed = tmp_path / "changed.py"
    changed.write_text(GOOD.read_text() + "\n# a comment is a change of source\n")
    first, other = _stage(tmp_path, GOOD, changed)
    assert not first["cached"] and not other["cached"] and other["ok"]


def test_a_tvm_ffi_kernel_is_kept_on_disk_in_tvm_ffis_form(tmp_path):
    pytest.importorskip("tvm_ffi", reason="apache-tvm-ffi is not installed")
    example = tmp_path / "example.py"
    example.write_text((EXAMPLES / "cute_solution.py").read_text() + "\nCOMPILED = compile_for(64, 4096)\n")
    (first,) = _stage(tmp_path, example)
    (elsewhere,) = _stage(tmp_path, example)
    assert first["ok"] and "cute.compile add_layernorm: compiled" in first["log"], first
    assert elsewhere["cached"] and "loaded from the disk cache" in elsewhere["log"]
    assert len(list((tmp_path / "cache" / "cute" / "kernels").glob("*.tvm.o"))) == 1


def test_a_dsl_error_is_a_compile_error_with_the_candidates_line(tmp_path, broken):
    (result,) = _stage(tmp_path, broken)
    assert result["failure"] == "compile_error" and not result["ok"]
    log = result["log"]
    assert "NameError" in log and "'scale' is not defined" in log and "model_new.py:14" in log
    assert "gY[tidx] = gX[tidx] * scale" in log and "site-packages" not in log and "\x1b[" not in log
