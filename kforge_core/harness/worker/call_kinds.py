"""What a shipped call was: a correctness trial, a timed run, or the call traced for its operators. Named apart
from :mod:`.shipping` (which ships them) and :mod:`.judge` (which judges them) so that neither imports the other."""

TRIAL, TIMED, TRACED = "trial", "timed", "traced"
