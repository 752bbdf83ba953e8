"""``benchmarks/bench_throughput.py`` asks once whether KernelBench's eval can be imported from the checkout it is
given, so that a missing package of the checkout's (pydantic, on a machine without it) is said as such, not counted
as every problem's verdict."""

from __future__ import annotations

import importlib.util
import json
import signal
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _script():
    sys.path.insert(0, str(BENCHMARKS))  # the script imports its sibling kernelbench_eval
    spec = importlib.util.spec_from_file_location("bench_throughput_under_test", BENCHMARKS / "bench_throughput.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _checkout(root: Path, eval_source: str) -> Path:
    (root / "src" / "kernelbench").mkdir(parents=True)
    (root / "src" / "kernelbench" / "__init__.py").write_text("")
    (root / "src" / "kernelbench" / "eval.py").write_text(eval_source)
    return root


def test_a_checkout_whose_eval_cannot_be_imported_is_said_once(tmp_path):
    script = _script()
    broken = _checkout(tmp_path / "broken", "import a_package_this_machine_lacks\n")
    assert script.kernelbench_unavailable(broken) == \
        "ModuleNotFoundError: No module named 'a_package_this_machine_lacks'"
    working = _checkout(tmp_path / "working", "def eval_kernel_against_ref(*args, **kwargs):\n    return None\n")
    assert script.kernelbench_unavailable(working) == ""


def test_in_turn_each_chunk_is_done_by_both_tools_before_the_next_and_a_stop_keeps_what_was_finished():
    script = _script()
    problems = [f"p{i}" for i in range(5)]
    calls: list[tuple[str, tuple[str, ...]]] = []
    ours: dict[str, dict] = {}

    def kforge(chunk):
        calls.append(("kforge", tuple(chunk)))
        if chunk[0] == "p4":
            raise KeyboardInterrupt  # a time limit, in KForge's part of the third chunk
        return {name: {"correct": True} for name in chunk}

    def kernelbench(chunk):
        calls.append(("kernelbench", tuple(chunk)))

    try:
        script.in_turn(problems, 2, kforge, kernelbench, ours)
    except KeyboardInterrupt:
        pass
    assert calls == [("kforge", ("p0", "p1")), ("kernelbench", ("p0", "p1")), ("kforge", ("p2", "p3")),
                     ("kernelbench", ("p2", "p3")), ("kforge", ("p4",))]
    assert sorted(ours) == ["p0", "p1", "p2", "p3"]


def test_a_stop_while_kforge_bench_runs_waits_for_what_it_finished_and_keeps_it():
    script = _script()
    # a bench told the stop as well finishes the problem in hand, then prints it
    bench = [sys.executable, "-c", "import json, time; time.sleep(1.0); "
             "print(json.dumps({'problems': [{'problem': 'p0', 'correct': True}]}))"]

    def stop(*_):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, 0.3)  # the time limit comes while the bench runs
    try:
        printed, returncode, stopped = script.bench_output(bench)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    assert isinstance(stopped, KeyboardInterrupt) and returncode == 0
    assert json.loads(printed) == {"problems": [{"problem": "p0", "correct": True}]}


def test_kforge_benchs_document_is_kept_whole_and_one_a_line_in_turns(tmp_path, monkeypatch):
    import argparse

    script = _script()
    document = {"problems": [{"problem": "p0", "correct": True}]}
    monkeypatch.setattr(script, "bench_output", lambda command: (json.dumps(document), 0, None))
    args = argparse.Namespace(suite=tmp_path, backend="cpu", solutions=tmp_path, atol=1e-2, rtol=1e-2, trials=5,
                              kforge_args="", kforge_json=tmp_path / "one.json", in_turn=0)
    problem = type("P", (), {"key": "p0"})()
    assert script._kforge(args, [problem], {}) == {"p0": document["problems"][0]}
    assert json.loads(args.kforge_json.read_text()) == document
    args.kforge_json, args.in_turn = tmp_path / "turns.jsonl", 1
    script._kforge(args, [problem], {})
    script._kforge(args, [problem], {})
    assert [json.loads(line) for line in args.kforge_json.read_text().splitlines()] == [document, document]


def test_side_by_side_compares_the_problems_both_tools_did_without_the_compile_build():
    import types

    script = _script()
    problems = [types.SimpleNamespace(key=k) for k in ("a", "b", "c", "d")]
    ours = {"a": {"seconds": 30.0, "phases": [["reference", 1.0], ["baselines_ready", 20.0], ["quiet", 2.0]]},
            "b": {"seconds": 5.0, "phases": [["baseline_builds", 1.0], ["quiet", 0.5]]},
            "c": {"seconds": 9.0, "phases": []}}  # d: KForge's turn was cut
    theirs = {"a": {"wall_s": 8.0}, "b": {"wall_s": 6.0}, "d": {"wall_s": 3.0}}  # c: KernelBench's turn was cut
    line = script.side_by_side(problems, ours, theirs)
    assert line == ("on the 2 problems both did: kforge without the build median 7.00 s, mean 7.00 s, sum 14.0 s; "
                    "kernelbench median 7.00 s, mean 7.00 s, sum 14.0 s; kforge slower on 1 (a); its timed runs "
                    "waited 2.5 s in all for other work (quiet)")
    assert script.side_by_side(problems, {}, theirs) == "no problem done by both"
    # turns of two: a and c began a bench each, and carry its start
    firsts = script.turn_firsts(problems, 2)
    assert firsts == {"a", "c"}
    assert script.side_by_side(problems, ours, theirs, firsts).endswith(
        "; without each bench's first problem (1): kforge without the build median 4.00 s, mean 4.00 s, sum 4.0 s; "
        "kernelbench median 6.00 s, mean 6.00 s, sum 6.0 s")
