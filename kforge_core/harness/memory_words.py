"""Python's and PyTorch's own words for running out of memory, read on both sides of the harness: in a worker's
exception (``worker/faults.py``) and in the last words of a worker that died starting (``host/pool.py``). A device
adds its runtime's own (``Device.out_of_memory_patterns``, read by ``HarnessDevice.classify``)."""

OUT_OF_MEMORY_PATTERNS = (
    "out of memory",
    "can't allocate memory",
    "cannot allocate memory",
    "unable to allocate",
    "std::bad_alloc",  # C++'s (PyTorch's extension initialising under a worker's memory limit)
    "unable to instantiate pytypeobject",  # pybind11's, when torch's import cannot make a type under that limit
)
