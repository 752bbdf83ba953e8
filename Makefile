# Two commands set everything up on a fresh machine (Python >= 3.10 with venv):
#   make demo   installs KForge's core and its CPU backend and runs the agent loop on an example problem
#   make test   installs the rest (every plugin, the test tools, Triton, Ray, the LLM integrations), runs the CPU tests
PYTHON ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
BIN := $(VENV)/bin
PLUGINS := $(wildcard plugins/kforge_*)
# setuptools tells of each editable install in a banner (a UserWarning of the build: folders named as the package
# may take precedence during imports); it says nothing about this project, so it is not shown
PIP_INSTALL := PYTHONWARNINGS=ignore::UserWarning $(BIN)/python -m pip install -q
VENV_STAMP := $(VENV)/.kforge-venv
DEMO_STAMP := $(VENV)/.kforge-demo
TEST_STAMP := $(VENV)/.kforge-test

.PHONY: demo test install gpu-test xpu-test mac-test clean

$(VENV_STAMP):
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(PIP_INSTALL) "$(TORCH)"
	touch $@

# what the demo needs: the core (a replay needs llama-index-core, one of its dependencies) and the CPU backend
$(DEMO_STAMP): $(VENV_STAMP) pyproject.toml plugins/kforge_cpu/pyproject.toml
	$(PIP_INSTALL) -e . -e plugins/kforge_cpu
	touch $@

$(TEST_STAMP): $(DEMO_STAMP) pyproject.toml $(wildcard plugins/*/pyproject.toml)
	$(PIP_INSTALL) -e ".[dev]" $(foreach p,$(PLUGINS),-e $(p))
	touch $@

install: $(TEST_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/kforge run examples/problems/elementwise_gelu_scale.py --backend cpu \
		--llm replay:examples/replay/cpu_demo.jsonl --runs-dir kforge-runs

# The suite's files are shared out among TEST_WORKERS processes (pytest-xdist), each file whole in one of them, so
# that a module's shared workers and fixtures start once.
TEST_WORKERS ?= 2

test: $(TEST_STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

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
mac-test: $(TEST_STAMP)
	$(BIN)/python -m pytest -q -m mps plugins/kforge_metal

clean:
	rm -rf $(VENV) kforge-runs .pytest_cache
