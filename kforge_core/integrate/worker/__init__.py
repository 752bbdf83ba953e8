"""The side of ``kforge integrate`` that runs in its own worker process: it builds the model, loads the kernels,
swaps them in, checks and times. Nothing here runs in KForge's process."""
