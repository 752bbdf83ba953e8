"""Running ncu when another process has the GPU's counters (no GPU needed: a stand-in ncu on the PATH's terms)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kforge_nvidia import ncu
from kforge_nvidia.ncu import NcuError, run_ncu

BUSY = ("==ERROR== Profiling failed because a driver resource was unavailable. Ensure that no other tool (like DCGM) "
        "is concurrently collecting profiling data.")


def _stand_in(tmp_path: Path, busy_times: int) -> str:
    """An ncu that is refused the counters ``busy_times`` times, then writes its report; ``--import`` prints CSV."""
    script = tmp_path / "ncu"
    script.write_text(f"""#!{sys.executable}
import sys
from pathlib import Path
args = sys.argv[1:]
if "--import" in args:
    print('"ID","Kernel Name"')
    sys.exit(0)
calls = Path({str(tmp_path / "calls")!r})
calls.write_text(calls.read_text() + "x" if calls.exists() else "x")
if len(calls.read_text()) <= {busy_times}:
    print({BUSY!r}, file=sys.stderr)
    sys.exit(9)
Path(args[args.index("--export") + 1]).write_text("report")
""")
    script.chmod(0o755)
    return str(script)


def test_a_profile_refused_while_another_holds_the_counters_is_tried_again(tmp_path, monkeypatch):
    monkeypatch.setattr(ncu, "BUSY_WAITS_S", (0.01, 0.01, 0.01))
    run = run_ncu(_stand_in(tmp_path, busy_times=2), ["child"], tmp_path / "scratch", 30, tmp_path)
    assert (tmp_path / "calls").read_text() == "xxx"
    assert run.report.read_text() == "report"


def test_counters_busy_past_every_wait_is_an_ncu_error_that_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(ncu, "BUSY_WAITS_S", (0.01,))
    with pytest.raises(NcuError, match="driver resource was unavailable"):
        run_ncu(_stand_in(tmp_path, busy_times=5), ["child"], tmp_path / "scratch", 30, tmp_path)
    assert (tmp_path / "calls").read_text() == "xx"
