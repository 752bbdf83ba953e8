"""``python -m kforge_core.hotspots.worker REQUEST.json REPORT.json``: one ``kforge hotspots``, in its own
process."""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

from ..request import HotspotsRequest
from .run import HotspotsFailure, hotspots


def main(argv: list[str]) -> int:
    request_path, report_path = Path(argv[0]), Path(argv[1])
    request = HotspotsRequest.from_json(json.loads(request_path.read_text()))
    try:
        report = {"ok": True, "report": hotspots(request)}
    except HotspotsFailure as exc:  # an expected failure says what happened in one line
        report = {"ok": False, "error": str(exc), "traceback": traceback.format_exc()}
    except Exception as exc:  # the host reports it: the worker's whole job is to say what happened
        report = {"ok": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
    report_path.write_text(json.dumps(report, indent=2))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
