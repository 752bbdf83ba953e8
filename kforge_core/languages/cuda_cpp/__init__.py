"""CUDA C++ as a language: what every backend that builds CUDA C++ source shares, whatever the vendor.

* :mod:`.build_cache`: source -> shared library through a content-hash cache (the compiler and its flags are the
  vendor's: ``nvcc`` on NVIDIA, ``hipcc`` on AMD);
* :mod:`.inline_cache`: PyTorch's ``load_inline`` made content-addressed;
* :mod:`.compile_log`: a compiler's output trimmed to the first errors, each with its line and caret;
* :mod:`.c_signature`: the ``extern "C"`` functions a source exports, with ctypes types.

Nothing here finds a toolchain or touches a device: a backend passes the compiler, its version and its flags in.
"""
