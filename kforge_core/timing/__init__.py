"""What timing means, the same for every side and without torch: which timer gives the headline figure
(``headline``), the timed runs as both sides name them (``timed_runs``), how a stage marks its calls and builds for
their time limits (``stage_timer``), what the timers say beside each other (``findings``) and the one wording of a
figure's timing method in every report (``wording``).

Where each side times: in a worker, ``harness/worker/run_timing.py`` (a callable's timed runs, candidates' and
baselines' alike) and ``harness/worker/candidate_steps.py`` (the candidate's timing request and the check of what it
left); in the KForge process, ``harness/host/baselines_window.py`` (the baselines timed in turn with the candidate),
``harness/host/outside_clock.py`` and ``harness/host/timed_checks.py`` (the timed calls seen from outside the
worker); in a model worker, ``model_worker/end_to_end_timing.py``. ``docs/timing.md`` says what each timer measures.
"""
