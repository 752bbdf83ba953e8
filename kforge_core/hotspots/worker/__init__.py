"""The side of ``kforge hotspots`` that runs the model, in its own worker process: it builds the model, profiles
its phases, groups device time by the modules a kernel replaces, and writes the hot groups as problems."""
