"""What a shipped call was: a correctness trial, a timed call, or the call traced for its operators. Named apart
from the worker's shipping (which ships them) and judging (which judges them), and from the KForge process's checks
of the timed calls (which count them), so that none of them imports another."""

TRIAL, TIMED, TRACED = "trial", "timed", "traced"
