# Two commands set everything up on a fresh machine (Python >= 3.10 with venv):
#   make demo   installs KForge with its CPU backend and runs the agent loop on an example problem
#   make test   installs KForge with every plugin and the test tools, and runs the CPU test suite
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin
PLUGINS := $(wildcard plugins/kforge_*)
STAMP := $(VENV)/.kforge-installed

.PHONY: demo test install gpu-test xpu-test mac-test clean

$(STAMP): pyproject.toml $(wildcard plugins/*/pyproject.toml)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[dev]" $(foreach p,$(PLUGINS),-e $(p))
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/kforge run examples/problems/elementwise_gelu_scale.py --backend cpu \
		--llm replay:examples/replay/cpu_demo.jsonl --runs-dir kforge-runs

test: $(STAMP)
	$(BIN)/python -m pytest -q

# On a machine with an NVIDIA GPU, into the Python that already has torch with CUDA (nothing is downloaded). The GPU
# tests live in tests/harness and the plugins; the loop's tests need the llm extras and hold no GPU test.
gpu-test:
	$(PYTHON) -m pip install -q --no-deps --no-build-isolation -e . $(foreach p,$(PLUGINS),-e $(p))
	$(PYTHON) -m pytest -q -m gpu tests/harness plugins

# On a machine with an Intel GPU, into the Python that has PyTorch's XPU build and pytorch-triton-xpu (nothing is
# downloaded): the xpu backend's tests that need the device (plugins/kforge_xpu/tests/test_xpu_on_intel.py).
xpu-test:
	$(PYTHON) -m pip install -q --no-deps --no-build-isolation -e . -e plugins/kforge_xpu
	$(PYTHON) -m pytest -q -m xpu plugins/kforge_xpu

# On a Mac with Apple silicon: the metal backend's device tests (the shipped example compiled and evaluated, a
# shader error placed, a profile with Metal System Trace where Xcode is installed), in the same .venv as make test.
mac-test: $(STAMP)
	$(BIN)/python -m pytest -q -m mps plugins/kforge_metal

clean:
	rm -rf $(VENV) kforge-runs .pytest_cache
