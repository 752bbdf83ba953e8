"""The exit codes of ``kforge``, one meaning each (README, "The CLI").

0: done, and what was evaluated is correct. 1: a mistake you can act on (``KForgeError``: a bad problem, setting,
backend or command). 2: click's own code for a command line it cannot parse. 3: the command ran, but a candidate it
evaluated is not correct (``kforge eval``) or the run found no correct candidate (``kforge run``). 130: a bench
stopped by Ctrl-C (its ``--resume`` command is printed). 141: the reader of the output went away (``kforge runs |
head``: the pipe closed); the command ended there, quietly, and changed nothing more in the store (the shell's code
for a process ended by SIGPIPE).
"""

EXIT_INCORRECT = 3
EXIT_OUTPUT_CLOSED = 141
