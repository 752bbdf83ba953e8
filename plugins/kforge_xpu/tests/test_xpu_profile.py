"""unitrace's output read into kernels, the summary the analyst gets from it and from the PyTorch profiler's XPU
activities, and the profile stage's run of unitrace. The unitrace texts are fixtures written in the tool's layout
(fixtures/README.md says how; no Intel GPU recorded them); the run goes through a stand-in unitrace, a script that
checks its command line and writes those fixtures where unitrace writes its files."""

import os
import stat
from pathlib import Path

import pytest

from kforge_core.problem import load_problem
from kforge_core.records import Candidate, KernelMetrics, ProfileResult, StageContext
from kforge_xpu.backend import XpuOptions
from kforge_xpu.device_facts import read_xpu_facts
from kforge_xpu.profile_stage import profile_with_unitrace
from kforge_xpu.summary import summarize_profile
from kforge_xpu.unitrace_report import parse_unitrace
from kforge_xpu.unitrace_run import UnitraceError, find_unitrace, run_unitrace, unitrace_command

from xpu_testing import EXAMPLE, FIXTURES, StandInXpu, b580_properties

TIMING = (FIXTURES / "unitrace_device_timing.txt").read_text()
METRICS = (FIXTURES / "unitrace_metrics.csv").read_text()
B580 = read_xpu_facts(StandInXpu(), 0)


@pytest.fixture(scope="module")
def problem():
    return load_problem(EXAMPLE / "gemm_epilogue.py")


def test_timing_properties_and_metrics_join_per_kernel():
    report = parse_unitrace(TIMING + "\n" + METRICS, forwards=3)
    assert [k.name for k in report.kernels] == ["linear_sigmoid_residual_kernel", "sigmoid_scale_add_kernel"]
    assert [k.name for k in report.commands] == ["zeCommandListAppendMemoryFill"]
    assert report.total_device_ns == 8163110
    gemm = report.kernels[0]
    assert gemm.duration_us == 2600.0
    assert (gemm.metric("calls_per_forward"), gemm.metric("us_per_forward")) == (1.0, 2600.0)
    assert (gemm.metric("simd"), gemm.metric("grf_registers"), gemm.metric("spill_bytes")) == (16, 256, 1536)
    assert gemm.metric("memory_read_bytes") == 3 * 201326592  # summed over the three instances
    assert gemm.metric("xve_active_pct") == pytest.approx(
        (92.0 * 2581250 + 90.0 * 2623125 + 91.0 * 2595625) / (2581250 + 2623125 + 2595625))  # time-weighted


def test_metrics_alone_still_name_the_kernels():
    report = parse_unitrace(METRICS, forwards=3)
    assert [k.name for k in report.kernels] == ["linear_sigmoid_residual_kernel", "sigmoid_scale_add_kernel"]
    assert report.kernels[0].metric("us_per_forward") == pytest.approx(2600.0)
    assert parse_unitrace("no tables here\n").kernels == ()


def test_unitrace_summary_ranks_kernels_and_says_what_bounds_each(problem):
    report = parse_unitrace(TIMING + "\n" + METRICS, forwards=3)
    text = summarize_profile(problem, ProfileResult(tool="unitrace", kernels=report.kernels + report.commands),
                             B580).text
    lines = text.splitlines()
    assert lines[0] == ("unitrace on Intel(R) Arc(TM) B580 Graphics (stated memory bandwidth 456 GB/s): 2 kernel(s), "
                        "2720.0 us of device time per forward.")
    assert lines[1] == ("Problem floor: 50.3 MB must move at least once (110.4 us at the stated bandwidth; the kernels "
                        "took 2720.0 us, 24.6x that); its 17.2 GFLOP of matrix work ran at 6.32 TFLOP/s.")
    assert lines[2] == ("1. linear_sigmoid_residual_kernel: 2600.0 us per forward (96%), 1 launch(es) per forward, "
                        "compute-bound (vector engines busy)")
    assert "83.9 GB/s, 18% of the stated 456 GB/s; L3 hit rate 74%" in text
    assert "vector engines 91% active, 22% stalled; hardware-thread occupancy 48%" in text
    assert "registers spill: 1536 bytes/thread" in text and "already 256 registers" in text
    assert "2. sigmoid_scale_add_kernel: 120.0 us per forward (4%), 1 launch(es) per forward, memory-bound" in text
    assert "419.4 GB/s, 92% of the stated 456 GB/s" in text
    assert text.endswith("Also on the device: zeCommandListAppendMemoryFill 1.0 us per forward")


def test_latency_bound_when_nothing_is_busy_and_no_percentages_without_a_stated_peak(problem):
    idle = KernelMetrics(name="k", duration_us=50.0, metrics=(
        ("calls", 1.0), ("total_us", 50.0), ("calls_per_forward", 1.0), ("us_per_forward", 50.0),
        ("gpu_time_ns", 50000.0), ("memory_read_bytes", 1e6), ("memory_write_bytes", 0.0),
        ("xve_active_pct", 12.0), ("occupancy_pct", 20.0)))
    a770 = read_xpu_facts(StandInXpu(b580_properties(name="Intel(R) Arc(TM) A770 Graphics")), 0)
    text = summarize_profile(problem, ProfileResult(tool="unitrace", kernels=(idle,)), a770).text
    assert "latency-bound" in text and "20.0 GB/s" in text and "% of the stated" not in text
    assert "must move" not in text and "17.2 GFLOP of matrix work" in text  # no stated bandwidth: FLOPs only


def test_pytorch_profiler_summary_has_times_and_says_what_it_lacks(problem):
    # A ProfileResult as the core's generic profile builds it from the PyTorch profiler's XPU kernel events.
    kernels = (
        KernelMetrics(name="ModelNew.forward", duration_us=2700.0, metrics=(("calls", 3.0), ("total_us", 8100.0),
                                                                           ("calls_per_forward", 1.0))),
        KernelMetrics(name="linear_sigmoid_residual_kernel", duration_us=2610.0,
                      metrics=(("calls", 3.0), ("total_us", 7830.0), ("calls_per_forward", 1.0))),
    )
    profile = ProfileResult(tool="torch.profiler", kernels=kernels, ops=("aten::empty", "aten::addmm"))
    text = summarize_profile(problem, profile, B580).text
    assert text.startswith("PyTorch profiler (XPU activities) on Intel(R) Arc(TM) B580 Graphics")
    assert "1 kernel(s), 2610.0 us of device time per forward" in text
    assert "1. linear_sigmoid_residual_kernel: 2610.0 us per forward (100%), 1 launch(es) per forward\n" in text
    assert "kernel times only" in text and "aten::addmm" in text
    assert "Problem floor" in text


def test_a_profile_with_no_kernel_says_so(problem):
    text = summarize_profile(problem, ProfileResult(tool="unitrace"), None).text
    assert text == "unitrace on the Intel GPU: no kernel ran in the candidate's forward."


STAND_IN_UNITRACE = """#!/bin/sh
# A stand-in for unitrace: checks the options the profile stage passes, then writes the fixtures as unitrace
# writes its files (named after the process) into --output-dir-path.
[ "$1" = "--conditional-collection" ] || { echo "conditional collection missing: $*" >&2; exit 9; }
out=""; prev=""
for arg in "$@"; do
  [ "$prev" = "--output-dir-path" ] && out="$arg"
  prev="$arg"
done
case " $* " in *" -q -g ComputeBasic "*) ;; *) echo "no metric query: $*" >&2; exit 9;; esac
case " $* " in *" -m kforge_xpu.profile_child "*) ;; *) echo "no profiled program: $*" >&2; exit 9;; esac
cp "TIMING" "$out/unitrace.4242.txt"
cp "METRICS" "$out/unitrace.metrics.4242.csv"
echo "[INFO] done"
"""


def _stand_in(tmp_path: Path, body: str) -> str:
    (tmp_path / "bin").mkdir(exist_ok=True)
    script = tmp_path / "bin" / "unitrace"
    script.write_text(body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_the_profile_stage_runs_unitrace_and_reads_every_file_it_wrote(tmp_path, problem):
    unitrace = _stand_in(tmp_path, STAND_IN_UNITRACE.replace("TIMING", str(FIXTURES / "unitrace_device_timing.txt"))
                          .replace("METRICS", str(FIXTURES / "unitrace_metrics.csv")))
    workdir = tmp_path / "work"
    workdir.mkdir()
    candidate = Candidate.from_source("class ModelNew: ...\n", label="c1")
    context = StageContext(problem=problem, workdir=workdir, options=XpuOptions(unitrace=unitrace))
    profile = profile_with_unitrace(candidate, context, unitrace)
    assert profile.tool == "unitrace"
    assert [k.name for k in profile.kernels][:2] == ["linear_sigmoid_residual_kernel", "sigmoid_scale_add_kernel"]
    assert {p.name for p in profile.files} == {"unitrace.4242.txt", "unitrace.metrics.4242.csv"}
    assert "[INFO] done" in profile.raw


def test_a_failing_unitrace_falls_back_to_the_pytorch_profiler(tmp_path, problem, caplog):
    unitrace = _stand_in(tmp_path, "#!/bin/sh\necho 'zetMetricGroupGet failed: insufficient permissions' >&2\nexit 1\n")
    with pytest.raises(UnitraceError, match="status 1: zetMetricGroupGet failed"):
        run_unitrace(unitrace, ["true"], tmp_path / "out", metric_group="", timeout_s=30, cwd=tmp_path)
    candidate = Candidate.from_source("class ModelNew: ...\n", label="c1")
    context = StageContext(problem=problem, workdir=tmp_path, options=XpuOptions(unitrace=unitrace))
    assert profile_with_unitrace(candidate, context, unitrace) is None
    assert "using the PyTorch profiler" in caplog.text


def test_finding_unitrace_and_its_command_line(tmp_path):
    assert find_unitrace(str(tmp_path / "missing")) is None
    plain = tmp_path / "plain"
    plain.write_text("")
    assert find_unitrace(str(plain)) is None  # not executable
    assert find_unitrace(_stand_in(tmp_path, "#!/bin/sh\n")) == str(tmp_path / "bin" / "unitrace")
    command = unitrace_command("unitrace", ["python", "x.py"], Path("/o"), "")
    assert command == ["unitrace", "--conditional-collection", "-d", "-v", "--output-dir-path", "/o", "-o",
                       "/o/unitrace.txt", "python", "x.py"]


def test_the_profiled_program_builds_and_calls_the_candidate(tmp_path):
    """The child unitrace runs, on the host CPU with Triton's interpreter (on an Intel machine it runs on xpu)."""
    import importlib.util
    import shutil
    import subprocess

    from kforge_xpu.profile_child import profile_command

    if importlib.util.find_spec("triton") is None:
        pytest.skip("triton not installed (pip install 'kforge-xpu[test]')")
    problem = tmp_path / "problem.py"
    problem.write_text((EXAMPLE / "gemm_epilogue.py").read_text().replace("2048, 2048, 2048", "64, 64, 80"))
    shutil.copy(EXAMPLE / "gemm_epilogue_triton.py", tmp_path / "model_new.py")
    command = profile_command(workdir=tmp_path, entry="model_new.py", problem=problem, calls=2, device="cpu")
    done = subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "TRITON_INTERPRET": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
