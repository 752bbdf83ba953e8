"""The exit codes of ``kforge``, one meaning each (README, "The CLI").

0: done, and what was evaluated is correct. 1: a mistake you can act on (``KForgeError``: a bad problem, setting,
backend or command). 2: click's own code for a command line it cannot parse. 3: the command ran, but a candidate it
evaluated is not correct (``kforge eval``) or the run found no correct candidate (``kforge run``).
"""

EXIT_INCORRECT = 3
