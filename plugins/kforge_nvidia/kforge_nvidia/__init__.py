"""KForge's NVIDIA layer: what every backend whose kernels run on an NVIDIA GPU shares, whatever its language.

* :mod:`.device`: :class:`~kforge_nvidia.device.CudaDevice`, the GPU as the harness drives it (``torch.cuda``);
* :mod:`.device_facts`: the GPU's facts and peak rates, for the lowering and the roofline;
* :mod:`.driver` and :mod:`.availability`: the GPUs as ``libcuda`` reports them, and whether this torch can use
  one, asked without importing torch;
* :mod:`.toolchain`: finding ``nvcc``, ``ncu`` and ``compute-sanitizer``;
* :mod:`.options`: :class:`~kforge_nvidia.options.NvidiaOptions`, the options every language here shares;
* :mod:`.builds` and :mod:`.compile_stage`: the compile stage of a language built on the first call (import,
  warm-up, ``load_inline`` through its content-addressed cache), around the language's own build routes;
* :mod:`.child`: the program a profiler or sanitizer runs (one candidate's forward);
* :mod:`.sanitize`: a failing candidate rerun under compute-sanitizer memcheck;
* :mod:`.ncu`, :mod:`.ncu_csv`, :mod:`.ncu_summary` and :mod:`.profile_stage`: Nsight Compute, its CSV and the
  analyst's summary;
* :mod:`.source_checks`: the hooks that add NVIDIA's own static-check patterns and torch's ``cuda`` namespace to
  the harness's checks.

This package registers no backend and has no entry point: a language's package (``kforge_cuda``,
``kforge_triton``, ``kforge_cute``) registers its backend and gathers the hook implementations of this layer it
uses, so that the core routes them to it. Importing this package imports nothing else.
"""
