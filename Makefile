# gpula: two commands for a fresh Debian 12 machine (run as root, or with sudo at hand).
#
#   make test   installs what is missing, builds the C++ library (with its CUDA backend when nvcc
#               is there), runs the C++ tests (ctest), pip-installs the Python package into .venv
#               and runs pytest.
#   make demo   installs what is missing, pip-installs the package into .venv and runs the MLP
#               demo (on the GPU when there is one, else on the CPU).
#
# Only what the machine can use is installed: the CUDA wheels (cuDSS) only where nvcc or a GPU
# is, the test tools (pytest, mypy, torch) only for `make test`, torch's CPU build where there is
# no GPU. Both build in one folder ($(BUILD)): the pip install of the package reuses the C++
# build of `make test` (and `make test` the one of `make demo`), so nothing is compiled twice.
# Everything else here is a step of those two.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
BUILD := build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

# Debian packages the build needs; only missing ones are installed.
APT_PACKAGES := cmake g++ make libopenblas-dev libdlpack-dev libgtest-dev
APT_PACKAGES += libsuitesparse-dev
# What the machine can use: nvcc (CMake also looks in /usr/local/cuda/bin) and a GPU (a driver
# that lists one). WITH_CUDA=0 on the command line builds and installs as on a CPU-only machine.
HAVE_NVCC := $(shell command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] && echo 1)
HAVE_GPU := $(shell nvidia-smi -L 2>/dev/null | grep -q GPU && echo 1)
WITH_CUDA ?= $(if $(HAVE_NVCC)$(HAVE_GPU),1,0)
# The CUDA backend is compiled where nvcc is (CI compiles it without a GPU); the pip build gets
# the same setting through CMAKE_ARGS, so both builds of the one folder agree.
GPULA_CUDA := $(if $(filter 1,$(WITH_CUDA)),AUTO,OFF)

# Python packages of the local environment; no build isolation, so pip needs no network for
# the build itself once these are in. Build and run (make demo): the build backend, NumPy and
# scipy-openblas32 (the dense BLAS/LAPACK the C++ library links, CMakeLists.txt says why; from
# 0.3.34 on it exports no OpenBLAS internals unprefixed: older ones crash SuiteSparse's
# OpenBLAS, tests/python/test_openblas_symbols.py), ml_dtypes for the demo's --dtype bfloat16.
PY_PACKAGES := 'numpy>=1.24' 'nanobind>=2.4' 'scikit-build-core>=0.10' \
               'scipy-openblas32>=0.3.34' 'ml_dtypes>=0.4'
# cuDSS (the CUDA sparse direct solver; its headers come from the wheel, cmake/gpula_cudss.cmake):
# only where the CUDA backend is built.
CUDA_PY_PACKAGES := $(if $(filter 1,$(WITH_CUDA)),nvidia-cudss-cu13)
# make test adds the test tools: pytest, SciPy (the references), mypy (tests/python/
# test_typing.py: mypy --strict on a user script) and torch (the tests with PyTorch operands,
# which would otherwise skip). With a GPU torch comes from PyPI, whose Linux wheel brings CUDA
# libraries and triton (5.6 GB in .venv, 2026-12); without one from PyTorch's CPU index (no
# nvidia-* or triton), or from PyPI where that index is not reachable.
TEST_PY_PACKAGES := 'pytest>=7' 'scipy>=1.10' 'mypy>=1.10'
TORCH := 'torch>=2.2'
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu

export CMAKE_BUILD_PARALLEL_LEVEL := $(JOBS)

.PHONY: test demo deps cpp-build cpp-test py-install py-test fuzz clean

test: cpp-test py-test

demo: py-install
	$(VPY) examples/python/mlp_demo.py

# ---- dependencies ------------------------------------------------------------------------------

deps:
	@missing=""; \
	for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if ! command -v $(PYTHON) >/dev/null; then missing="$$missing python3 python3-venv python3-dev"; \
	else \
	  $(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || missing="$$missing python3-venv"; \
	  $(PYTHON) -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
	    || missing="$$missing python3-dev"; \
	fi; \
	if [ -n "$$missing" ]; then \
	  echo "== installing Debian packages:$$missing"; \
	  sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	  $$sudo apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# The venv is (re)filled when this Makefile changes (the package lists live here): what the
# build and the demo need, then (make test) the test tools.
PIP := $(VPY) -m pip install -q --disable-pip-version-check

$(VENV)/.installed: Makefile | deps
	@[ -x $(VPY) ] || { echo "== creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "== installing Python packages into $(VENV)"
	$(PIP) $(PY_PACKAGES) $(CUDA_PY_PACKAGES)
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	@echo "== installing the test tools into $(VENV)"
	$(PIP) $(TEST_PY_PACKAGES)
	@if [ -n "$(HAVE_GPU)" ]; then $(PIP) $(TORCH); \
	else $(PIP) --timeout 15 --retries 1 --index-url $(TORCH_CPU_INDEX) $(TORCH) 2>/dev/null \
	  || { echo "== PyTorch's CPU index not reachable: torch from PyPI"; $(PIP) $(TORCH); }; fi
	@touch $@

# ---- C++ ---------------------------------------------------------------------------------------

# The venv's Python tells CMake where scipy-openblas32 (and cuDSS) are.
# The options pip's build (pyproject.toml) turns off are named here, so that the two builds share
# the folder and its objects (each only reconfigures it); the Python extension is built here too.
cpp-build: $(VENV)/.installed
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(abspath $(VPY)) \
	  -DGPULA_CUDA=$(GPULA_CUDA) -DGPULA_BUILD_PYTHON=ON -DGPULA_BUILD_TESTS=ON \
	  -DGPULA_BUILD_BENCH=ON -DGPULA_BUILD_EXAMPLES=ON $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

cpp-test: cpp-build
	ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# ---- fuzzing -----------------------------------------------------------------------------------

# The sparse validator's libFuzzer target (fuzz/README.md): clang, ASan + UBSan, CPU only, in its
# own build folder (clang++ must be installed); runs FUZZ_TIME seconds on a scratch copy of fuzz/corpus (new inputs land in
# build-fuzz/corpus, crashes in build-fuzz/). The seed corpus also replays in every ctest run.
FUZZ_BUILD := build-fuzz
FUZZ_TIME ?= 60
FUZZ_ARGS ?=

fuzz: $(VENV)/.installed
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DPython_EXECUTABLE=$(abspath $(VPY)) \
	  -DGPULA_FUZZ=ON -DGPULA_CUDA=OFF -DGPULA_BUILD_TESTS=OFF -DGPULA_BUILD_BENCH=OFF \
	  -DGPULA_BUILD_EXAMPLES=OFF
	cmake --build $(FUZZ_BUILD) -j$(JOBS) --target fuzz_sparse_validate
	mkdir -p $(FUZZ_BUILD)/corpus
	cd $(FUZZ_BUILD) && ./fuzz_sparse_validate -max_total_time=$(FUZZ_TIME) -print_final_stats=1 \
	  $(FUZZ_ARGS) corpus ../fuzz/corpus

# ---- Python ------------------------------------------------------------------------------------

# scikit-build-core builds in $(BUILD), the folder of cpp-build (one generator for both), so
# after `make test` it compiles nothing, and a second `make` rebuilds only what changed.
export CMAKE_GENERATOR := Unix Makefiles
py-install: $(VENV)/.installed
	@echo "== building and installing the gpula Python package into $(VENV)"
	CMAKE_ARGS="-DGPULA_CUDA=$(GPULA_CUDA) $(CMAKE_FLAGS)" $(VPY) -m pip install \
	  --disable-pip-version-check --no-build-isolation --no-deps -C build-dir=$(BUILD) .

# pytest's exit code 5 means "no tests collected": not a failure while tests/python is empty.
py-test: $(VENV)/.installed-test py-install
	@rc=0; $(VPY) -m pytest tests/python -ra || rc=$$?; \
	if [ $$rc = 5 ]; then echo "pytest: no Python tests collected"; rc=0; fi; exit $$rc

clean:
	rm -rf $(BUILD) $(VENV)
