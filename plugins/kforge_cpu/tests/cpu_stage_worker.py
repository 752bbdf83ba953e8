"""Runs the cpu backend's stage hooks in this fresh process, as a harness worker does: a plugin manager of its own,
each candidate's scratch directory as the working directory, the hooks called through pluggy.

Usage: python cpu_stage_worker.py JOBS.pickle RESULTS.pickle, where a job is
``{"candidate": Candidate, "context": StageContext, "stages": ["compile", "profile"]}``; the results are, per job,
``{stage: hook result}`` (later stages are skipped once compile fails).
"""

from __future__ import annotations

import os
import pickle
import sys


def run(jobs: list[dict]) -> list[dict]:
    from kforge_core.plugins import PluginSelection, build_plugin_manager
    from kforge_core.registry import BackendRegistry

    loaded = build_plugin_manager(PluginSelection(only=("cpu",)))
    backend = BackendRegistry(loaded).get("cpu").backend
    results = []
    for job in jobs:
        os.chdir(job["context"].workdir)
        done: dict = {}
        for stage in job["stages"]:
            hook = getattr(loaded.hook, f"kforge_{stage}")
            done[stage] = hook(backend=backend, candidate=job["candidate"], context=job["context"])
            if stage == "compile" and not done[stage].ok:
                break
        results.append(done)
    return results


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        jobs = pickle.load(f)
    results = run(jobs)
    with open(sys.argv[2], "wb") as f:
        pickle.dump(results, f)
