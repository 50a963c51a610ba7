# Two entry points on a fresh machine:
#   make book   set up .venv, execute every chapter once with papermill (profile full with CUDA, ci otherwise;
#               PROFILE=ci|full chooses), split chapters 2-4 into pages (lib/posteval/pages.py), build
#               _build/html with -W and the PDF
#   make test   `make book PROFILE=ci` (each chapter executed once), then the whole suite on what it made: the
#               executed chapters against their references (nbval's rules), the HTML, PDF and JupyterLab checks
#   make test-fast   the inner loop: every test that executes no chapter (page checks on the reference notebooks)
#   make test-other-machine   the cross-dispatch check (scripts/cross_dispatch.py), then make test with MKL limited
#               to SSE4.2 (as on another x86 CPU)
#   make lab    set up .venv, start JupyterLab at the repository root (chapters/*.md open as notebooks) on chapter 1;
#               CHAPTER=03 (or 03_top_quark) opens chapters/03_top_quark.md instead
#   make pdf    the whole book as one PDF from the built HTML (headless Chromium): _build/pdf/pointwise-metrics-mislead.pdf
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
MATHJAX := vendor/mathjax/tex-mml-chtml.js
MATHJAX_VERSION := 3.2.2
# the profile `make book` executes the chapters at: auto (full with CUDA, ci otherwise), ci or full
PROFILE ?= auto
# more arguments for the runner, e.g. RUN_ARGS="01 --set n_eval=20000"
RUN_ARGS ?=
# the chapter `make lab` opens: its number (03) or its name (03_top_quark)
CHAPTER ?= 01
LAB_CHAPTER = $(firstword $(wildcard chapters/$(CHAPTER)*.md))
# the book this Makefile builds is the one in its own folder (posteval.paths), wherever the package lies
export POSTEVAL_BOOK_ROOT := $(CURDIR)
# chapter 3's event files: the checkout's data_cache/ (the library's own default is the user's cache folder)
export POINTWISE_CACHE ?= $(CURDIR)/data_cache
# The chapters' portable CPU kernels (posteval.runtime.PORTABLE_KERNELS, whose docstring says why each) in the
# environment of every command below, JupyterLab's kernels included: numpy reads its setting when Python
# starts it. A value already in the environment wins; tests/test_book.py checks these are the library's.
export ATEN_CPU_CAPABILITY ?= default
export MKL_CBWR ?= COMPATIBLE
export ONEDNN_MAX_CPU_ISA ?= SSE41
export NPY_DISABLE_CPU_FEATURES ?= X86_V3,X86_V4,AVX512_ICL,AVX512_SPR

.PHONY: book test test-fast test-other-machine setup html pdf clean chromium lab

setup: $(STAMP) $(MATHJAX)

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# MathJax is served from the book itself so that math typesets without network.
$(MATHJAX):
	rm -rf vendor/mathjax vendor/package && mkdir -p vendor
	cd vendor && npm pack --silent mathjax@$(MATHJAX_VERSION) >/dev/null && tar xzf mathjax-$(MATHJAX_VERSION).tgz \
	  && mv package/es5 mathjax && rm -rf package mathjax-$(MATHJAX_VERSION).tgz
	test -f $(MATHJAX)

chromium:
	command -v chromium >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

book: setup
	$(PY) -m posteval.book run --profile $(PROFILE) $(RUN_ARGS)
	$(MAKE) html
	$(MAKE) pdf

html: setup
	rm -rf _build/html _build/.doctrees
	$(VENV)/bin/jupyter-book build . -W -n --keep-going

# Every page of the built HTML (make html first) printed by headless Chromium in the order of _toc.yml and
# merged (pypdf) into _build/pdf/pointwise-metrics-mislead.pdf, copied into _build/html/ where each page's
# download menu links it (_ext/book_pdf.py, _ext/source_links.py).
pdf: setup chromium
	test -f _build/html/index.html || $(MAKE) html
	$(PY) _ext/book_pdf.py --html _build/html --out _build/pdf/pointwise-metrics-mislead.pdf

# One execution path: `make book` at the ci profile executes every chapter once (papermill, the runner users
# run) and builds the HTML (-W) and the PDF from those executed chapters; the suite then checks what it made
# (--built-book): each executed chapter against its reference by nbval's rules (tests/nbcompare.py), the pages,
# the PDF and JupyterLab, and every test that executes no chapter, on two pytest workers (pytest-xdist).
# scripts/cpu_seconds.py prints the CPU-seconds (user + sys) and the hypervisor's steal time of each step.
test: setup chromium
	$(PY) scripts/cpu_seconds.py "make book (profile ci)" $(MAKE) book PROFILE=ci RUN_ARGS=
	$(PY) scripts/cpu_seconds.py "pytest --built-book" $(PY) -m pytest tests -n 2 --dist loadfile --no-loadscope-reorder --built-book \
	  -p no:cacheprovider -o console_output_style=classic --durations=25

# The inner loop: every test that executes no chapter (unit tests, doctests, pairing, the book, HTML, PDF and
# JupyterLab checks built from the committed reference notebooks); `make test` adds the chapters' execution.
test-fast: setup chromium
	$(PY) -m pytest tests -n 2 --dist loadfile --no-loadscope-reorder -p no:cacheprovider -o console_output_style=classic --durations=15

# Another machine, the same digits: the cross-dispatch check (scripts/cross_dispatch.py) trains every model
# class and runs the training kernels under the portable settings with MKL's, oneDNN's and numpy's widest ISA
# forced otherwise (as another CPU would choose them) and requires identical digits, and other digits from
# each control that leaves a library to the CPU; then the whole suite with MKL limited to SSE4.2.
# COMPARE=results/kernels/amd_epyc_avx2.json also requires this CPU's portable hashes to equal that machine's
# (the cross-vendor measurement; only at a commit whose hashed code is that file's).
test-other-machine: setup
	mkdir -p _build/test-artifacts
	$(PY) scripts/cross_dispatch.py --json _build/test-artifacts/cross_dispatch.json $(if $(COMPARE),--compare $(COMPARE))
	MKL_ENABLE_INSTRUCTIONS=SSE4_2 $(MAKE) test

# jupyter-config/ (on the config path): jupytext contents manager showing glued numbers, figures,
# tables and references as the HTML book does (posteval.lab), .md opens as a notebook (its .ipynb
# twin is not listed), kernels over IPC. LAB_ARGS passes options through (e.g. LAB_ARGS="--no-browser --port=8899").
lab: setup
	@test -n "$(LAB_CHAPTER)" || { echo "make lab: no chapter chapters/$(CHAPTER)*.md (CHAPTER=01, 02, ...)" >&2; exit 2; }
	JUPYTER_CONFIG_PATH=$(CURDIR)/jupyter-config $(VENV)/bin/jupyter lab --ServerApp.root_dir=$(CURDIR) \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS) $(LAB_CHAPTER)

clean:
	rm -rf _build book/*.ipynb book/executed book/results
