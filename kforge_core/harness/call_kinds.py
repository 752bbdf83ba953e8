"""What a shipped call was: a correctness trial, a timed call, the call traced for its operators, or the call at
one of the problem's shape variants. Named apart
from the worker's shipping (which ships them) and judging (which judges them), and from the KForge process's checks
of the timed calls (which count them), so that none of them imports another."""

TRIAL, TIMED, TRACED, VARIANT = "trial", "timed", "traced", "variant"
