"""Lay out a published KernelBench solution set as the problems its solutions were written against and the
solutions, both named as a KernelBench checkout names its problem files, for ``kforge bench``,
``timing_agreement.py --problems`` and ``bench_throughput.py``.

    python benchmarks/solution_set.py --kernelbench KERNELBENCH_CHECKOUT --source SET --out DIR

``SET`` is CUDA-L1's JSONL (one object a line with ``level_id``, ``task_id``, ``ref_code`` and ``custom_code``), its
unpacked folders ``LEVEL/TASK/ref_code.py`` and ``custom_code.py``, or a checkout of METR's filtered set
(``tasks/level_N/TASK_name.py``, the references, and ``best_agent_solutions/level_N/task_TASK.py``, solutions whose
class is named ``Model``: a line ``ModelNew = Model`` is added to each, as KForge's candidates name it). Written: ``DIR/problems/levelN/<name>.py``
(each task's own reference: today's KernelBench has larger sizes than many published sets were written for) and
``DIR/solutions/levelN/<name>.py``. A task whose number has no problem file in the checkout is skipped and counted.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path


def tasks(source: Path) -> dict[tuple[int, int], tuple[str, str]]:
    """(level, task) -> (reference, solution)."""
    if source.is_file():
        rows = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
        return {(int(r["level_id"]), int(r["task_id"])): (r["ref_code"], r["custom_code"]) for r in rows
                if r.get("ref_code") and r.get("custom_code")}
    if (source / "best_agent_solutions").is_dir():
        return _filtered_set(source)
    found = {}
    for reference in sorted(source.glob("*/*/ref_code.py")):
        solution = reference.with_name("custom_code.py")
        if solution.is_file() and reference.parent.name.isdigit() and reference.parent.parent.name.isdigit():
            key = (int(reference.parent.parent.name), int(reference.parent.name))
            found[key] = (reference.read_text(), solution.read_text())
    return found


def _filtered_set(source: Path) -> dict[tuple[int, int], tuple[str, str]]:
    """METR's layout: each level's references under ``tasks`` by KernelBench's names, its best solutions by number."""
    found = {}
    for solution in sorted(source.glob("best_agent_solutions/level_*/task_*.py")):
        level, task = solution.parent.name.removeprefix("level_"), solution.stem.removeprefix("task_")
        references = sorted((source / "tasks" / f"level_{level}").glob(f"{task}_*.py"))
        if not (level.isdigit() and task.isdigit() and references):
            continue
        text = solution.read_text()
        if not re.search(r"^class ModelNew\b", text, re.MULTILINE):
            text += "\n\nModelNew = Model  # the set names its solution's class Model\n"
        found[(int(level), int(task))] = (references[0].read_text(), text)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernelbench", type=Path, required=True, help="a KernelBench checkout (for the names)")
    parser.add_argument("--source", type=Path, required=True, help="CUDA-L1's JSONL, or its unpacked folders")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    written, skipped = 0, 0
    for (level, task), (reference, solution) in sorted(tasks(args.source).items()):
        named = sorted((args.kernelbench / "KernelBench" / f"level{level}").glob(f"{task}_*.py"))
        if not named:
            skipped += 1
            continue
        for kind, text in (("problems", reference), ("solutions", solution)):
            path = args.out / kind / f"level{level}" / named[0].name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        written += 1
    print(f"{written} tasks written to {args.out}/problems and {args.out}/solutions; {skipped} without a problem "
          "file of that number in the checkout")


if __name__ == "__main__":
    main()
