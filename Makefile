# schedlab build: `make` builds every binary into bin/; `make test` builds the
# sanitizer-instrumented unit tests and runs every test (unit and end-to-end);
# `make demo` installs missing Debian packages, builds and runs examples/quick.json.
#
# Sources are found by wildcard per layer so that a new file in a folder needs
# no Makefile change:
#   analysis/*.c db/*.c            pure libraries (libc, jansson, SQLite, GSL)
#   workloads/*.c                  workload drivers (argv builders, parsers)
#   harness/*.c                    the controller; cmd_*.c are subcommands,
#                                  main.c the command table, agent_main.c the agent
#   workloads/native/sl-*.c        native workloads, one static binary each;
#                                  workloads/native/lib*.c is shared by them
#   tests/unit/test_*.c            one unit-test binary each (TAP output)

CC      ?= cc
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -pthread -D_GNU_SOURCE -I.
ASAN    := -fsanitize=address,undefined -fno-omit-frame-pointer -O1 -g
LIBS    := -ljansson -lsqlite3 -lgsl -lgslcblas -lm -pthread
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
CFLAGS  += -DSCHEDLAB_VERSION='"$(VERSION)"'

ANALYSIS := $(wildcard analysis/*.c)
DB       := $(wildcard db/*.c)
WL       := $(wildcard workloads/*.c)
HMAIN    := harness/main.c harness/agent_main.c
CMDS     := $(wildcard harness/cmd_*.c)
HCORE    := $(filter-out $(HMAIN) $(CMDS),$(wildcard harness/*.c))
LIBSRC   := $(ANALYSIS) $(DB) $(WL) $(HCORE)
# what the statically linked agent needs: plumbing, protocol, sysinfo, knobs
AGENTSRC := harness/agent_main.c harness/agent.c harness/proc.c harness/strbuf.c \
            harness/protocol.c harness/sysinfo.c harness/knobs.c \

NATIVE   := $(wildcard workloads/native/sl-*.c)
NATLIB   := $(wildcard workloads/native/lib*.c) analysis/hist.c analysis/jbb.c analysis/cpulist.c
UNIT     := $(wildcard tests/unit/test_*.c)

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

bin/schedlab: $(call OBJ,harness/main.c $(CMDS) $(LIBSRC))
	@mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

bin/schedlab-agent: $(call OBJ,$(AGENTSRC))
	@mkdir -p bin
	$(CC) $(CFLAGS) -static -o $@ $^ -ljansson -lm -pthread

bin/sl-%: build/obj/workloads/native/sl-%.o $(call OBJ,$(NATLIB))
	@mkdir -p bin
	$(CC) $(CFLAGS) -static -o $@ $^ -ljansson -lm -pthread

# unit tests: every library object, sanitizers on, one binary per test file
build/tests/%: tests/unit/%.c $(call AOBJ,$(LIBSRC)) tests/unit/tap.h
	@mkdir -p build/tests
	$(CC) $(CFLAGS) $(ASAN) -o $@ $< $(call AOBJ,$(LIBSRC)) $(LIBS)

unit: $(UNITBINS)

test: all unit
	@tests/run.sh

# the fast half of the suite (no qemu boot)
test-quick: all unit
	@SCHEDLAB_SKIP_SLOW=1 tests/run.sh

demo: deps all
	@rm -f schedlab.db schedlab.db-wal schedlab.db-shm
	bin/schedlab run examples/quick.json --db schedlab.db; rc=$$?; \
	bin/schedlab sessions --db schedlab.db; \
	bin/schedlab query --db schedlab.db "SELECT workload, metric, count(*) AS n, round(avg(value),3) AS mean, unit FROM results GROUP BY workload, metric ORDER BY workload, metric"; \
	exit $$rc

deps:
	@scripts/install-deps.sh

bench: all
	@bench/run-all.sh

# PREFIX=/usr/local DESTDIR= : the binaries and the nightly script into $(PREFIX)/bin
PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 $(BINS) contrib/schedlab-nightly $(DESTDIR)$(PREFIX)/bin/

clean:
	rm -rf bin build

.PHONY: all unit test test-quick demo deps bench install clean
-include $(shell find build -name '*.d' 2>/dev/null)
