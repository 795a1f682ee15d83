# gpula: two commands for a fresh Debian 12 machine (run as root, or with sudo at hand).
#
#   make test   installs what is missing, builds the C++ library (with its CUDA backend when nvcc
#               is there), runs the C++ tests (ctest), pip-installs the Python package into .venv
#               and runs pytest.
#   make demo   installs what is missing, pip-installs the package into .venv and runs the MLP
#               demo (on the GPU when there is one, else on the CPU).
#
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
# Python packages of the local environment (build backend and test tools; no build isolation,
# so pip needs no network for the build itself once these are in).
PY_PACKAGES := 'numpy>=1.24' 'scipy>=1.10' 'nanobind>=2.4' 'scikit-build-core>=0.10' \
               'pytest>=7' 'ml_dtypes>=0.4'
# scipy-openblas32: the dense BLAS/LAPACK the C++ library links (CMakeLists.txt says why); from
# 0.3.34 on it exports no OpenBLAS internals unprefixed (older ones crash SuiteSparse's OpenBLAS,
# tests/python/test_openblas_symbols.py).
PY_PACKAGES += 'scipy-openblas32>=0.3.34' nvidia-cudss-cu13
# mypy: tests/python/test_typing.py (mypy --strict on a user script); torch: the tests with
# PyTorch operands, which CI would otherwise skip. torch comes from PyPI, whose Linux wheel
# brings CUDA libraries and triton (the CPU-only index is not reachable from every machine):
# torch 2.15 and mypy took 3.9 min on the 2-core development VM (2026-12), .venv 5.8 GB
# (torch 1.2, nvidia-* 3.2 with cuDSS, triton 1.0). It pins the nvidia-* versions (cuBLAS too).
PY_PACKAGES += 'mypy>=1.10' 'torch>=2.2'

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

# The venv is (re)filled when this Makefile changes (the package list lives here).
$(VENV)/.installed: Makefile | deps
	@[ -x $(VPY) ] || { echo "== creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "== installing Python packages into $(VENV)"
	$(VPY) -m pip install -q --disable-pip-version-check $(PY_PACKAGES)
	@touch $@

# ---- C++ ---------------------------------------------------------------------------------------

# The venv's Python tells CMake where scipy-openblas32 (and cuDSS) are.
cpp-build: $(VENV)/.installed
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$(abspath $(VPY)) $(CMAKE_FLAGS)
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

# scikit-build-core builds in its own persistent directory (pyproject's build-dir), so a second
# `make` rebuilds only what changed.
py-install: $(VENV)/.installed
	@echo "== building and installing the gpula Python package into $(VENV)"
	$(VPY) -m pip install --disable-pip-version-check --no-build-isolation --no-deps .

# pytest's exit code 5 means "no tests collected": not a failure while tests/python is empty.
py-test: py-install
	@rc=0; $(VPY) -m pytest tests/python -ra || rc=$$?; \
	if [ $$rc = 5 ]; then echo "pytest: no Python tests collected"; rc=0; fi; exit $$rc

clean:
	rm -rf $(BUILD) $(VENV)
