# schedlab build: `make` builds every binary into bin/; `make test` installs
# what the tests need, builds the sanitizer-instrumented unit tests and runs
# every test (unit and end-to-end); `make demo` installs missing Debian
# packages, builds and runs examples/quick.json.
#
# Sources are found by folder, so a new file needs no Makefile change
# (docs/architecture.md says which folder a new file belongs in):
#   analysis/ db/                  pure libraries (libc, jansson, SQLite, GSL)
#   workloads/                     workload drivers (argv builders, parsers)
#   workloads/native/              sl-*.c: one static native workload each;
#                                  the other files are linked into all of them
#   harness/util/                  plumbing (strbuf, proc, shquote, sha256,
#                                  cpulist, cmdline): the only harness code lower layers use
#   harness/agent/                 the agent (main.c is its entry point) and what the
#                                  controller shares with it; the static agent links
#                                  main.c and what it uses of build/libagent.a
#                                  (agent/ and util/: preempt_offer.c, the
#                                  controller's, stays out)
#   harness/targets/ orchestrate/ results/    the controller's library
#   harness/cli/                   the commands (cmd_*.c) and main.c
#   tests/unit/test_*.c            one unit-test binary each (TAP output)
#
# Every library object goes into an archive (build/libschedlab.a,
# build/libagent.a, build/libnative.a, and build/asan/libschedlab.a for the
# unit tests), so objects are real targets, kept between builds, and a
# binary links only what it uses.

CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -pthread -D_GNU_SOURCE -I.
# binaries that do not depend on where the checkout lies: a sealed guest
# runs them, and its values repeat bit for bit only for the same bytes
# (docs/virtual-time.md, "Sealed runs")
CFLAGS  += -ffile-prefix-map=$(CURDIR)=.
ASAN    := -fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g
LIBS    := -ljansson -lsqlite3 -lgsl -lgslcblas -llz4 -lmicrohttpd -lm -pthread
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
CFLAGS  += -DSCHEDLAB_VERSION='"$(VERSION)"'
# The agent's version is the last commit that changed what it is built from
# (12 hex digits, "-dirty" for uncommitted changes there), not HEAD's: a
# sealed guest runs the agent, and its values repeat bit for bit only for
# the same bytes, so a commit elsewhere must not move them (t0520's
# rt-app start-up fell on either side of its window as HEAD's name changed)
AGENT_VERSION := $(shell git log -1 --format=%h --abbrev=12 -- harness/agent harness/util Makefile 2>/dev/null)$(shell git diff --quiet HEAD -- harness/agent harness/util Makefile 2>/dev/null || echo -dirty)

UTIL     := $(wildcard harness/util/*.c)
AGENTMAIN:= harness/agent/main.c
AGENT    := $(filter-out $(AGENTMAIN),$(wildcard harness/agent/*.c))
CLI      := $(wildcard harness/cli/*.c)
HLIB     := $(wildcard harness/targets/*.c harness/orchestrate/*.c harness/results/*.c harness/serve/*.c)
LIBSRC   := $(wildcard analysis/*.c db/*.c workloads/*.c) $(HLIB) $(AGENT) $(UTIL)
NATIVE   := $(wildcard workloads/native/sl-*.c)
NATPURE  := $(filter-out $(NATIVE),$(wildcard workloads/native/*.c))
NATLIB   := $(NATPURE) analysis/hist.c analysis/rng.c analysis/tasksched.c $(UTIL)
UNIT     := $(wildcard tests/unit/test_*.c)
FUZZ     := $(wildcard fuzz/fuzz_*.c)
FUZZCC   ?= clang
FUZZFL   := -O1 -g -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -pthread \
	    -D_GNU_SOURCE -I. -DSCHEDLAB_VERSION='"fuzz"' -fno-omit-frame-pointer \
	    -fsanitize=address,undefined

OBJ      = $(patsubst %.c,build/obj/%.o,$(1))
AOBJ     = $(patsubst %.c,build/asan/%.o,$(1))

BINS := bin/schedlab bin/schedlab-agent $(patsubst workloads/native/%.c,bin/%,$(NATIVE))
UNITBINS := $(patsubst tests/unit/%.c,build/tests/%,$(UNIT))

all: $(BINS)

build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

build/asan/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ASAN) -MMD -MP -c -o $@ $<

build/libschedlab.a: $(call OBJ,$(LIBSRC))
	@rm -f $@
	ar rcs $@ $^

$(call OBJ,$(AGENT) $(AGENTMAIN)): VERSION := $(or $(AGENT_VERSION),unknown)
build/libagent.a: $(call OBJ,$(AGENT) $(UTIL))
	@rm -f $@
	ar rcs $@ $^

build/libnative.a: $(call OBJ,$(NATLIB))
	@rm -f $@
	ar rcs $@ $^

build/asan/libschedlab.a: $(call AOBJ,$(LIBSRC) $(NATPURE))
	@rm -f $@
	ar rcs $@ $^

# fuzzing (fuzz/README.md): the library built with clang's sanitizers and
# coverage, one libFuzzer binary per fuzz/fuzz_*.c
FOBJ     = $(patsubst %.c,build/fuzz/%.o,$(1))
FUZZBINS := $(patsubst fuzz/%.c,build/fuzz/bin/%,$(FUZZ))

build/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZCC) $(FUZZFL) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

build/fuzz/libschedlab.a: $(call FOBJ,$(LIBSRC) $(NATPURE))
	@rm -f $@
	ar rcs $@ $^

build/fuzz/bin/%: build/fuzz/fuzz/%.o build/fuzz/libschedlab.a
	@mkdir -p $(dir $@)
	$(FUZZCC) $(FUZZFL) -fsanitize=fuzzer -o $@ $^ $(LIBS)

fuzz-build: $(FUZZBINS)

# every target for FUZZ_SECONDS (default 300) from its corpus, then every
# input that once crashed replayed; a crash fails naming target and input
FUZZ_SECONDS ?= 300
fuzz: fuzz-build
	@scripts/fuzz.sh $(FUZZ_SECONDS)

bin/schedlab: $(call OBJ,$(CLI)) build/libschedlab.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

# static: runs in a bare initramfs or on a lab box without our libraries
bin/schedlab-agent: $(call OBJ,$(AGENTMAIN)) build/libagent.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -static -o $@ $^ -ljansson -lm -pthread

bin/sl-%: build/obj/workloads/native/sl-%.o build/libnative.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -static -o $@ $^ -ljansson -lm -pthread

# unit tests: the library with sanitizers on, one binary per test file
build/tests/%: tests/unit/%.c build/asan/libschedlab.a tests/unit/tap.h
	@mkdir -p build/tests
	$(CC) $(CFLAGS) $(ASAN) -DSCHEDLAB_TESTDATA_DIR='"$(CURDIR)/tests/data"' -o $@ $< build/asan/libschedlab.a $(LIBS)

unit: $(UNITBINS)

# the tests install what they need (scripts/install-deps.sh --all: Debian's
# packages; and `make -C kernels qemu`: a qemu >= 8.1 under ~/.cache/schedlab
# when the system's is older) and then run everything; a missing prerequisite
# is a failure that names its package
test: deps-test all unit
	@tests/run.sh

# tests too long for make test's budget (docs/testing.md): the drift-guarded
# bisection on real builds and boots (about 15 min under TCG); the logic
# they drive is simulated in make test (test_bisect drift_guard)
test-slow: deps-test all unit
	@tests/run.sh tests/slow/*.sh

# the fast half of the suite: no script tagged qemu, kbuild or slow (its
# `# tags:` line, tests/run.sh), and a test whose prerequisite is missing is
# skipped with the package to install
test-quick: all unit
	@SCHEDLAB_SKIP_SLOW=1 SCHEDLAB_ALLOW_SKIP=1 tests/run.sh

demo: deps all
	@rm -f schedlab.db schedlab.db-wal schedlab.db-shm
	bin/schedlab run examples/quick.json --db schedlab.db; rc=$$?; \
	bin/schedlab sessions --db schedlab.db; \
	bin/schedlab query --db schedlab.db "SELECT workload, metric, count(*) AS n, round(avg(value),3) AS mean, unit FROM results GROUP BY workload, metric ORDER BY workload, metric"; \
	exit $$rc

deps:
	@scripts/install-deps.sh

# and a qemu >= 8.1 for the virtual-time tests on more than one vCPU (the
# system's, or Debian 13's from a root under ~/.cache/schedlab: about 3-4
# minutes the first time, nothing after; docs/virtual-time.md); and Debian
# 13 backports' Linux 7.3 with its example sched_ext schedulers for t0549
# (docs/sched_ext.md: 1 min import and 9 min build the first time on a busy
# 2-CPU host, under 1 s after)
deps-test:
	@scripts/install-deps.sh --all
	@$(MAKE) -s --no-print-directory -C kernels qemu
	@$(MAKE) -s --no-print-directory -C kernels scx

bench: all bench-ingest bench-pingpong
	@bench/run-all.sh

# the store path's rate (bench/ingest.c); not part of all or test
bench-ingest: build/bench/ingest
build/bench/ingest: bench/ingest.c build/libschedlab.a
	@mkdir -p build/bench
	$(CC) $(CFLAGS) -o $@ $< build/libschedlab.a $(LIBS)

# the error rate of verdicts paired by seed (bench/paired-seeds.c,
# docs/statistics.md "Paired by seed"); not part of all or test
bench-paired: build/bench/paired-seeds
	@build/bench/paired-seeds
build/bench/paired-seeds: bench/paired-seeds.c build/libschedlab.a
	@mkdir -p build/bench
	$(CC) $(CFLAGS) -o $@ $< build/libschedlab.a $(LIBS)

# the bare ping-pong loop beside sl-pingpong (bench/pingpong-vs-perf.sh)
bench-pingpong: build/bench/pingpong-bare
build/bench/pingpong-bare: bench/pingpong-bare.c
	@mkdir -p build/bench
	$(CC) $(CFLAGS) -static -o $@ $<

# what an evidence trigger's decision costs (bench/evidence-decide.c)
bench-evidence: build/bench/evidence-decide
build/bench/evidence-decide: bench/evidence-decide.c build/libschedlab.a
	@mkdir -p build/bench
	$(CC) $(CFLAGS) -o $@ $< build/libschedlab.a $(LIBS)

# PREFIX=/usr/local DESTDIR= : the binaries and the nightly script into $(PREFIX)/bin
PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BINS) contrib/schedlab-nightly $(DESTDIR)$(PREFIX)/bin/

clean:
	rm -rf bin build

# objects are never intermediate: a second `make test` compiles nothing
.SECONDARY:
.PHONY: all unit test test-slow test-quick demo deps deps-test bench bench-ingest bench-pingpong bench-paired bench-evidence install clean fuzz fuzz-build
-include $(shell find build -name '*.d' 2>/dev/null)
