"""The parts of a bench that run no worker: the suite, the solutions, the summary (fast_p, geomean), the report,
the plan, the local executor's distribution of problems over slots."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from kforge_core.bench.local import LocalExecutor
from kforge_core.bench.plan import BenchPlan
from kforge_core.bench.results import NO_SOLUTION, ProblemJob, ProblemResult, Usage
from kforge_core.bench.report import render_bench_markdown
from kforge_core.bench.plots import plot_fast_p, plot_sol, plot_speedup_histogram
from kforge_core.bench.solutions import open_solutions, require_a_match
from kforge_core.bench.suite import discover
from kforge_core.bench.summary import fast_p, summarize
from kforge_core.commands.bench import _devices
from kforge_core.errors import KForgeError
from kforge_core.settings import Settings
from kforge_core.store import BenchInfo

PROBLEM = "import torch\nclass Model(torch.nn.Module):\n    pass\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def suite(tmp_path) -> Path:
    return _tree(tmp_path / "suite", {
        "level1/10_Tanh.py": PROBLEM, "level1/2_ReLU.py": PROBLEM, "level1/1_Matmul.py": PROBLEM,
        "level2/1_Conv_ReLU.py": PROBLEM, "level2/2_ReLU.py": PROBLEM, "level2/_helpers.py": PROBLEM,
        "__init__.py": "", ".hidden/3_x.py": PROBLEM,
    })


def test_a_suite_is_every_problem_file_in_natural_order_and_filters_pick_some(suite):
    assert [p.key for p in discover(suite)] == [
        "level1/1_Matmul", "level1/2_ReLU", "level1/10_Tanh", "level2/1_Conv_ReLU", "level2/2_ReLU"]
    assert [p.key for p in discover(suite, ("level2/*",))] == ["level2/1_Conv_ReLU", "level2/2_ReLU"]
    assert [p.key for p in discover(suite, ("*ReLU*", "10_Tanh.py"))] == [
        "level1/2_ReLU", "level1/10_Tanh", "level2/1_Conv_ReLU", "level2/2_ReLU"]
    with pytest.raises(KForgeError, match="no problem files matching nothing"):
        discover(suite, ("nothing",))
    with pytest.raises(KForgeError, match="suite not found"):
        discover(suite / "level9")


def test_solutions_in_a_directory_flat_or_mirrored(suite, tmp_path):
    problems = {p.key: p for p in discover(suite)}
    solutions = _tree(tmp_path / "solutions", {
        "level1/2_ReLU.py": "mirrored", "2_ReLU.py": "flat but shared by two problems", "1_Matmul.py": "flat",
        "10_Tanh/model_new.py": "entry", "10_Tanh/kernel.cu": "// cuda",
    })
    found = open_solutions(solutions, list(problems.values()))
    assert found.candidate_for(problems["level1/2_ReLU"]).source == "mirrored"
    assert found.candidate_for(problems["level2/2_ReLU"]) is None  # the flat name names two problems
    assert found.candidate_for(problems["level1/1_Matmul"]).source == "flat"
    tanh = found.candidate_for(problems["level1/10_Tanh"])
    assert tanh.entry == "model_new.py" and {f.name for f in tanh.files} == {"model_new.py", "kernel.cu"}
    assert tanh.label == "level1/10_Tanh"
    assert found.candidate_for(problems["level2/1_Conv_ReLU"]) is None


def test_solutions_from_jsonl_name_problems_by_key_path_file_or_level_and_number(suite, tmp_path):
    problems = {p.key: p for p in discover(suite)}
    lines = [{"problem": "level1/2_ReLU", "code": "by key"}, {"problem": "level1/1_Matmul.py", "code": "by path"},
             {"problem": "1_Conv_ReLU", "code": "by name"}, {"problem": "level1/10", "code": "by number"},
             {"problem": "2_ReLU.py", "code": "ambiguous"}, {"problem": "level1/2_ReLU", "code": "second sample"}]
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    found = open_solutions(path, list(problems.values()))
    sources = {key: (c.source if (c := found.candidate_for(p)) else None) for key, p in problems.items()}
    assert sources == {"level1/2_ReLU": "by key", "level1/1_Matmul": "by path", "level2/1_Conv_ReLU": "by name",
                       "level1/10_Tanh": "by number", "level2/2_ReLU": None}
    assert found.ignored == 1 and found.unmatched == ["2_ReLU.py"]
    path.write_text('{"problem": "x"}\n')
    with pytest.raises(KForgeError, match="set.jsonl:1: expected a JSON object"):
        open_solutions(path, list(problems.values()))


def test_solutions_that_match_no_problem_are_refused_saying_what_was_found(suite, tmp_path):
    problems = discover(suite)
    elsewhere = _tree(tmp_path / "elsewhere", {"a.py": "x", "b/model_new.py": "y", ".git/config": ""})
    with pytest.raises(KForgeError, match=r"matches any of the 5 problems \(found: a.py, b/model_new.py\)") as caught:
        require_a_match(elsewhere, problems)
    assert "level1/1_Matmul.py (mirroring the suite's folders) or 1_Matmul.py (flat)" in caught.value.hint
    lines = tmp_path / "set.jsonl"
    lines.write_text(json.dumps({"problem": "level7/1", "code": "x"}) + "\n")
    with pytest.raises(KForgeError, match=r"\(found: level7/1\)"):
        require_a_match(lines, problems)
    require_a_match(_tree(tmp_path / "one", {"1_Matmul.py": "x"}), problems)  # one match is enough
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(KForgeError, match=r"\(found: nothing\)"):
        require_a_match(empty, problems)


def test_fast_p_of_a_bench_with_nothing_correct_is_zero():
    failed = [_result("d", False, failure="numerical_mismatch"), _result("e", False, failure=NO_SOLUTION)]
    assert fast_p(failed, 2, 1.0) == 0.0 and summarize(failed)["fast_p"]["1"] == 0.0


def _result(key, correct=True, speedups=(("eager", 2.0), ("compile", 1.2)), failure=None, **more):
    return ProblemResult(key, correct, None if correct else failure, speedups=speedups if correct else (), **more)


RESULTS = [
    _result("a", speedups=(("eager", 4.0), ("compile", 1.6))),
    _result("b", speedups=(("eager", 2.0), ("compile", 0.5))),
    _result("c", speedups=(("eager", 1.0), ("compile", 1.0))),
    _result("d", False, failure="numerical_mismatch"),
    _result("e", False, failure=NO_SOLUTION),
]


def test_fast_p_is_the_fraction_of_all_problems_correct_and_faster_than_p_times_the_baseline():
    assert fast_p(RESULTS, 5, 0) == pytest.approx(3 / 5)
    assert fast_p(RESULTS, 5, 1.0) == pytest.approx(1 / 5)  # against the faster baseline: a (1.6x); c is not > 1
    assert fast_p(RESULTS, 5, 1.0, "eager") == pytest.approx(2 / 5)
    assert fast_p(RESULTS, 5, 1.5, "compile") == pytest.approx(1 / 5)
    assert fast_p(RESULTS, 5, 2.0, "eager") == pytest.approx(1 / 5)  # strictly faster: b's 2.0x is not
    untimed = [_result("a", speedups=())]
    assert fast_p(untimed, 1, 0) == 1.0 and fast_p(untimed, 1, 1.0) is None


def test_the_summary_counts_failures_by_class_and_takes_geomeans_over_correct_timed_problems():
    summary = summarize(RESULTS + [_result("f", usage=Usage(2, 100, 50, None))], total=7)
    assert summary["total"] == 7 and summary["finished"] == 6 and summary["correct"] == 4
    assert summary["failures"] == {"no_solution": 1, "numerical_mismatch": 1}
    # the problem not run yet (an interrupted bench) is no failure: fast_p is over the finished ones
    assert summary["not_run"] == 1 and summary["fast_p"]["0"] == pytest.approx(4 / 6)
    assert set(summary["fast_p"]) == {"0", "1", "1.5", "2"}
    assert summary["geomean_speedup"]["eager"] == pytest.approx((4.0 * 2.0 * 1.0 * 2.0) ** 0.25)
    assert summary["geomean_speedup"]["compile"] == pytest.approx((1.6 * 0.5 * 1.0 * 1.2) ** 0.25)
    assert summary["geomean_best_speedup"] == pytest.approx((1.6 * 0.5 * 1.0 * 1.2) ** 0.25)
    assert summary["llm"] == {"calls": 2, "input_tokens": 100, "output_tokens": 50, "cost_usd": None,
                              "cost_complete": False}
    json.dumps(summary, allow_nan=False)


def test_the_report_and_its_figures(tmp_path):
    plan = BenchPlan(tmp_path, ("level1/*",), "cpu", tmp_path / "solutions", "model_new.py", True, Settings(),
                     tuple((r.key, "0" * 16) for r in RESULTS))
    info = BenchInfo("bench-1", 0.0, 0.0, "finished", "", str(tmp_path), "cpu", plan.source, tmp_path, {})
    summary_run = {"executor": "local, cpu", "wall_seconds": 2.0, "evaluated_now": 4, "seconds_per_problem": 0.5}
    summary = summarize(RESULTS, 5) | summary_run
    text = render_bench_markdown(info, plan, RESULTS, summary)
    assert "**3 of 5 problems correct**; failures: no_solution 1, numerical_mismatch 1" in text
    assert "| the faster baseline | 0.600 | 0.200 | 0.200 | 0.000 |" in text
    assert "![fast_p curve](fast_p.png)" in text and "| 4 | d | numerical_mismatch |" in text
    assert "| precision contract | fp32: may compute in float32 |" in text
    unfinished = render_bench_markdown(info, plan, RESULTS, summarize(RESULTS, 32) | summary_run)
    assert "**3 of 5 problems correct** (27 of the 32 not run yet)" in unfinished
    assert "fast_p, the fraction of the 5 problems finished correct" in unfinished
    assert "| the faster baseline | 0.600 | 0.200 | 0.200 | 0.000 |" in unfinished
    plot_fast_p(RESULTS, 5, "t", tmp_path / "fast_p.png")
    plot_speedup_histogram(RESULTS, "t", tmp_path / "speedups.png")
    assert (tmp_path / "fast_p.png").stat().st_size > 1000 and (tmp_path / "speedups.png").stat().st_size > 1000


def _placed(key, fraction, score, eager, compile_, ms=1.0):
    """A correct result placed against a bound of ``fraction * ms``: its baselines' fractions follow from theirs."""
    sol = fraction * ms
    return _result(key, speedups=(("eager", eager / ms), ("compile", compile_ / ms)),
                   baselines_ms=(("eager", eager), ("compile", compile_)), runtime_ms=ms, sol_ms=sol,
                   sol_binds="memory", sol_fraction=fraction, sol_score=score,
                   baseline_fractions=(("eager", sol / eager), ("compile", sol / compile_)))


SOL_RESULTS = [_placed("a", 0.8, 0.9, 4.0, 2.0), _placed("b", 0.2, 0.6, 2.0, 1.0), _placed("c", 0.5, None, 0.4, 0.5),
               _result("d", False, failure="numerical_mismatch")]


def test_the_summary_gives_the_geomean_sol_score_and_the_fractions_of_the_limit():
    summary = summarize(SOL_RESULTS)
    assert summary["geomean_sol_score"] == pytest.approx((0.9 * 0.6) ** 0.5) and summary["sol_scored"] == 2
    solutions = summary["sol_fraction"]["solutions"]
    assert (solutions["count"], solutions["median"], solutions["min"], solutions["max"]) == (3, 0.5, 0.2, 0.8)
    assert solutions["p25"] == pytest.approx(0.35) and solutions["p75"] == pytest.approx(0.65)
    assert summary["sol_fraction"]["eager"]["median"] == pytest.approx(0.2)  # of 0.8/4, 0.2/2 and 0.5/0.4
    assert summarize(RESULTS)["sol_fraction"]["solutions"]["count"] == 0 and summarize(RESULTS)["geomean_sol_score"] \
        is None
    json.dumps(summary, allow_nan=False)


def test_the_report_places_each_problem_against_the_speed_of_light(tmp_path):
    plan = BenchPlan(tmp_path, ("level1/*",), "cpu", tmp_path / "solutions", "model_new.py", True, Settings(),
                     tuple((r.key, "0" * 16) for r in SOL_RESULTS))
    info = BenchInfo("bench-1", 0.0, 0.0, "finished", "", str(tmp_path), "cpu", plan.source, tmp_path, {})
    text = render_bench_markdown(info, plan, SOL_RESULTS, summarize(SOL_RESULTS, 4))
    assert "geomean SOL score **0.735** over 2 problems" in text
    assert "| the solutions | 3 | 50% | 35% | 65% | 20% | 80% |" in text
    assert "| 80% (memory) | eager 20%, compile 40% | 0.90 |" in text
    assert "![speedup against the fraction of the speed of light](sol.png)" in text
    plot_sol(SOL_RESULTS, "t", tmp_path / "sol.png")
    assert (tmp_path / "sol.png").read_bytes()[:4] == b"\x89PNG"


def test_a_plan_reads_back_as_it_was_written(tmp_path):
    plan = BenchPlan(tmp_path, ("a*",), "cpu", None, "model_new.py", False, Settings(runs_dir=tmp_path),
                     (("a", "1" * 16),))
    again = BenchPlan.from_json(json.loads(json.dumps(plan.to_json())), source="test")
    assert again == plan and again.source.startswith("llm:")


def test_devices_are_distinct_indices_for_the_local_executor():
    assert _devices(None, "local") == (None,) and _devices("0,1", "local") == (0, 1)
    for wrong in ("0,0", "a", "-1", ","):
        with pytest.raises(KForgeError):
            _devices(wrong, "local")
    with pytest.raises(KForgeError, match="local executor"):
        _devices("0", "ray")


class _FakeSlot:
    def __init__(self, index, unbuilt=()):
        self.index, self.built_ahead, self.closed, self.started = index, [], False, False
        self.unbuilt, self.waited, self.upcoming, self.wait_for_builds = set(unbuilt), [], None, False

    def baselines_built(self, job):
        return job.key not in self.unbuilt

    def start(self):
        self.started = True

    def prebuild(self, jobs):
        self.built_ahead += [j.key for j in jobs]

    def close(self):
        self.closed = True


def test_the_local_executor_runs_a_problem_at_a_time_on_each_device_and_builds_later_ones_ahead():
    slots: dict[int, _FakeSlot] = {}
    busy: dict[int, int] = {}
    lock = threading.Lock()

    def make_slot(index):
        return slots.setdefault(index, _FakeSlot(index))

    def work(slot, job):
        assert slot.started, "a slot took a problem before starting its workers"
        with lock:
            busy[slot.index] = busy.get(slot.index, 0) + 1
            assert busy[slot.index] == 1, "two problems at once on one device"
        time.sleep(0.2)
        with lock:
            busy[slot.index] -= 1
        return ProblemResult(job.key, True, None, device=str(slot.index))

    jobs = [ProblemJob(f"p{i}", Path(f"p{i}.py")) for i in range(6)]
    results = []
    start = time.perf_counter()
    LocalExecutor(make_slot, [0, 1], lookahead=2).run(jobs, work, results.append)
    assert time.perf_counter() - start < 1.1  # six problems of 0.2 s on two devices
    assert sorted(r.key for r in results) == [j.key for j in jobs]
    assert {r.device for r in results} == {"0", "1"}
    ahead = slots[0].built_ahead + slots[1].built_ahead
    assert ahead and len(set(ahead)) == len(ahead)  # each later problem handed out once
    assert "p0" not in ahead  # taken first: nothing was ahead of it
    assert "p1" in ahead or "p2" in ahead  # handed out with the first problems, not after them
    assert all(slot.closed for slot in slots.values())


def test_problems_whose_compile_builds_are_done_go_first_and_the_last_ones_wait_for_theirs():
    """p1 and p3's torch.compile baselines are still building: the slot takes p2 and p4 before them, and takes p1
    only when nothing else is left, told to wait for its build (as p3 after it, whose build ends meanwhile)."""
    slot = _FakeSlot(0, unbuilt={"p1", "p3"})
    order = []

    def work(slot, job):
        order.append((job.key, slot.wait_for_builds, slot.upcoming.key if slot.upcoming else None))
        if job.key == "p1":
            slot.unbuilt.discard("p3")
        return ProblemResult(job.key, True, None)

    jobs = [ProblemJob(f"p{i}", Path(f"p{i}.py")) for i in range(5)]
    LocalExecutor(lambda index: slot, [0]).run(jobs, work, lambda result: None)
    assert order == [("p0", False, "p2"), ("p2", False, "p4"), ("p4", False, "p1"), ("p1", True, "p3"),
                     ("p3", False, None)]


def test_an_error_of_a_slot_stops_the_local_executor():
    def make_slot(index):
        if index == 1:
            raise KForgeError("device 1 is not usable")
        return _FakeSlot(index)

    def work(slot, job):
        time.sleep(0.05)
        return ProblemResult(job.key, True, None)

    with pytest.raises(KForgeError, match="device 1"):
        LocalExecutor(make_slot, [0, 1]).run([ProblemJob(f"p{i}", Path("p.py")) for i in range(20)], work,
                                             lambda r: None)


class _FakeActorPool:
    """ray.util.ActorPool's submit/has_next/get_next_unordered over plain calls: what was started, in order."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self._running: list[str] = []

    def submit(self, call, job) -> None:
        self.started.append(job)
        self._running.append(job)

    def has_next(self) -> bool:
        return bool(self._running)

    def get_next_unordered(self) -> str:
        return self._running.pop(0)


def test_a_stopped_ray_bench_finishes_the_problems_in_hand_and_starts_no_other():
    from kforge_core.bench.ray_executor import feed

    pool, halt, results = _FakeActorPool(), threading.Event(), []

    def on_result(result):
        results.append(result)
        halt.set()  # Ctrl-C while the first result comes back

    feed(pool, ["a", "b", "c", "d", "e"], 2, on_result, halt)
    assert pool.started == ["a", "b"] and results == ["a", "b"]


def test_a_ray_bench_hands_out_one_job_per_free_actor_until_all_are_done():
    from kforge_core.bench.ray_executor import feed

    pool, results = _FakeActorPool(), []
    feed(pool, ["a", "b", "c"], 2, results.append, threading.Event())
    assert results == ["a", "b", "c"]


def test_an_interrupted_benchs_line_counts_what_was_finished():
    from rich.console import Console

    from kforge_core.commands.bench import _print_summary

    console = Console(record=True, width=300)
    _print_summary(console, summarize(RESULTS, 32) | {"precision": "fp32"})
    line = console.export_text().splitlines()[0]
    assert line.startswith("3 of 5 correct (failures: no_solution 1, numerical_mismatch 1; 27 of the 32 not run "
                           "yet); fast_0 0.600, fast_1 0.200"), line


def test_one_of_a_thing_is_not_said_in_the_plural():
    from rich.console import Console

    from kforge_core.commands.bench import _print_summary
    from kforge_core.plural import counted

    assert (counted(1, "kernel"), counted(0, "kernel"), counted(2, "timed run")) == ("1 kernel", "0 kernels",
                                                                                    "2 timed runs")
    console = Console(record=True, width=300)
    _print_summary(console, summarize(RESULTS[:1]) | {"precision": "fp32", "evaluated_now": 1, "wall_seconds": 2.0,
                                                      "seconds_per_problem": 2.0})
    assert "\n1 problem in 2.0 s: 2.00 s per problem" in console.export_text()


def test_the_report_gives_the_speedup_per_shape_and_plots_it_against_the_size(tmp_path):
    from kforge_core.bench.report import SHAPES_PLOT, write_bench_outputs
    from kforge_core.codec import to_json
    from kforge_core.harness.verdict import ShapeTiming

    timings = (ShapeTiming("own", "tensor[4, 64] float32", 256, 0.02, (("eager", 0.04),), 2.0, 0.25),
               ShapeTiming("decode", "tensor[1, 64] float32", 64, 0.02, (("eager", 0.01),), 0.5, 0.75),
               ShapeTiming("long", "tensor[33, 64] float32", 2112, message="shape_mismatch: output 0 ..."))
    checked = {"outcomes": [{"variant": "decode", "status": "held"}, {"variant": "long", "status": "failed"}]}
    results = [_result("a", verdict={"shape_timings": to_json(timings), "shapes": checked}), _result("b")]
    plan = BenchPlan(tmp_path, (), "cpu", tmp_path / "solutions", "model_new.py", True, Settings(),
                     tuple((r.key, "0" * 16) for r in results))
    info = BenchInfo("bench-1", 0.0, 0.0, "finished", "", str(tmp_path), "cpu", plan.source, tmp_path / "bench", {})
    report = write_bench_outputs(info, plan, results, {"executor": "local, cpu", "wall_seconds": 1.0,
                                                       "evaluated_now": 2, "seconds_per_problem": 0.5})
    text = report.report_path.read_text()
    assert "## Speedup per shape" in text and f"![speedup against the size of the inputs]({SHAPES_PLOT})" in text
    assert "| decode | tensor[1, 64] float32 | 64 | 0.02 | eager 0.01 | 0.50x | 75% |" in text
    assert "| long | tensor[33, 64] float32 | 2,112 | - | - | shape_mismatch: output 0 ... | - |" in text
    assert "Weighted by the passes served at each shape: 0.62x." in text
    assert "| failed at long |" in text  # the problems' table says how each did at its variants
    assert (info.bench_dir / SHAPES_PLOT).read_bytes()[:4] == b"\x89PNG"
    # across the suite: "a" has no figure at "long", so it is fast at no threshold at every shape
    assert "At every shape timed (1 solutions): fast_1 0.000, fast_1.5 0.000; geomean of each solution's slowest " \
           "shape -; weighted by the passes served at each shape (1 problems): geomean 0.62x." in text


def test_the_summary_counts_a_solution_fast_only_where_it_is_fast_at_every_shape():
    from kforge_core.codec import to_json
    from kforge_core.harness.verdict import ShapeTiming

    def timed(*speedups):
        rows = tuple(ShapeTiming(name, "x", 1, 1.0, (), speedup) for name, speedup in zip(("own", "half", "prime"),
                                                                                         speedups))
        return {"shape_timings": to_json(rows)}

    results = [_result("a", verdict=timed(2.0, 1.8, 1.6)), _result("b", verdict=timed(3.0, 1.2, 0.9)),
               _result("c", verdict=timed(1.5, None, 2.0)), _result("d"), _result("e", False, failure="x")]
    across = summarize(results)["across_shapes"]
    assert across["problems"] == 3 and across["weighted"] == 0 and across["geomean_weighted_speedup"] is None
    assert across["fast_p_every_shape"] == {"0": 2 / 3, "1": 1 / 3, "1.5": 1 / 3, "2": 0.0}
    assert across["geomean_worst_shape_speedup"] == pytest.approx((1.6 * 0.9) ** 0.5)
    assert "across_shapes" not in summarize(results[3:])  # no solution timed at its shapes


def test_a_solution_timed_before_its_compile_baseline_was_built_says_so_and_stays_out_of_that_geomean():
    from kforge_core.bench.session import describe

    missing = (("compile", "compile baseline not measured: its build was still running (31 s in) when the "
                           "candidate was timed; it goes on"),)
    early = _result("e", runtime_ms=2.0, speedups=(("eager", 2.0),), baseline_errors=missing)
    line = describe(early)
    assert "2.00x vs eager, no compile figure (its build was still running (31 s in) when the candidate was timed)" \
        in line and "it goes on" not in line
    summary = summarize(RESULTS + [early])
    assert summary["baselines_missing"] == {"compile": 1}
    assert summary["geomean_speedup"]["compile"] == pytest.approx((1.6 * 0.5 * 1.0) ** (1 / 3))
    assert summarize(RESULTS)["baselines_missing"] == {}
