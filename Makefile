# Plain Makefile for the fleet lab (one file, composed flags, -MMD dependencies).
#
#   make                 build/libcommon.a and every program that has sources
#   make check           build and run every test (unit, fleet)
#   make check SANITIZE=address,undefined
#   make bench           build and run build/bench (BENCH_ARGS=... to filter)
#   make fuzz            libFuzzer targets with clang (FUZZ_SECONDS=N to run each)
#   make run             the default scenario (or the benchmarks until it exists)
#   make install PREFIX=/usr/local DESTDIR=
#   make clean
#
# A SANITIZE build lives in its own tree (build/san) so objects never mix.

CC       ?= cc
PKG_CONFIG ?= pkg-config
PREFIX   ?= /usr/local
DESTDIR  ?=
CFLAGS   ?= -O2 -g
LDFLAGS  ?=

PKGS      := openssl libevent libevent_openssl jansson libcbor libxxhash
CHECK_PKG := check

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wformat=2 -Wno-format-nonliteral -Wvla -Wundef \
	-Wcast-align -Wwrite-strings -Wnull-dereference
ifneq ($(CI),)
WARN += -Werror
endif

ifneq ($(SANITIZE),)
O        ?= build/san
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
else
O        ?= build
SAN_FLAGS :=
endif

PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CHECK_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(CHECK_PKG) 2>/dev/null)
CHECK_LIBS   := $(shell $(PKG_CONFIG) --libs $(CHECK_PKG) 2>/dev/null)

ALL_CFLAGS  := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SAN_FLAGS) \
	-Icommon -Ipeerd -Iorchestrator $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS := $(LDFLAGS) $(SAN_FLAGS)
LIBS        := $(PKG_LIBS) -lm

# ---- sources -------------------------------------------------------------
COMMON_SRC := $(wildcard common/*.c)
PEERD_SRC  := $(filter-out peerd/main.c,$(wildcard peerd/*.c))
ORCH_SRC   := $(filter-out orchestrator/main.c orchestrator/peerctl.c \
	orchestrator/pdt.c,$(wildcard orchestrator/*.c))
BENCH_SRC  := $(wildcard bench/*.c)
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
FUZZ_SRC   := $(wildcard tests/fuzz/fuzz_*.c)

COMMON_OBJ := $(COMMON_SRC:%.c=$(O)/obj/%.o)
PEERD_OBJ  := $(PEERD_SRC:%.c=$(O)/obj/%.o)
ORCH_OBJ   := $(ORCH_SRC:%.c=$(O)/obj/%.o)
BENCH_OBJ  := $(BENCH_SRC:%.c=$(O)/obj/%.o)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(O)/tests/%)

LIBCOMMON := $(O)/libcommon.a
LIBPEERD  := $(O)/libpeerd.a
LIBORCH   := $(O)/liborch.a

PROGS :=
ifneq ($(wildcard peerd/main.c),)
PROGS += $(O)/peerd
endif
ifneq ($(wildcard orchestrator/main.c),)
PROGS += $(O)/orchestrate
endif
ifneq ($(wildcard orchestrator/peerctl.c),)
PROGS += $(O)/peerctl
endif
ifneq ($(wildcard orchestrator/pdt.c),)
PROGS += $(O)/pdt
endif

# The git commit baked into every program (--version, run.json): "unknown"
# outside a git checkout of this tree, "-dirty" when the tree has changes.
# version.c is rewritten only when the text changes, so a build relinks
# after a commit and otherwise not at all.
GIT_SHA := $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && \
	{ git rev-parse --short=12 HEAD 2>/dev/null || echo unknown; } | tr -d '\n' && \
	{ git diff --quiet HEAD -- 2>/dev/null || printf -- -dirty; } || echo unknown)
VERSION_OBJ := $(O)/obj/gen/version.o

# The swarm's same-run baseline: one raw TCP stream (bench/tcpstream/).
TCPSTREAM := $(O)/tcpstream
# What one wake-up costs on this host, beside the same exchange hot
# (bench/wakeup/): a benchmark program, built with the bench.
WAKEUP := $(O)/wakeup
# BLAKE3 and the Bao outboard pass per code path beside SHA-256
# (bench/b3speed/), built with the bench.
B3SPEED := $(O)/b3speed

.PHONY: all deps check unit fleet bench run fuzz install clean FORCE
.SECONDARY:
.DEFAULT_GOAL := all

all: $(LIBCOMMON) $(PROGS) $(TCPSTREAM)

deps:
	@scripts/deps

# ---- objects and archives ------------------------------------------------
$(O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIBCOMMON): $(COMMON_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBPEERD): $(PEERD_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(LIBORCH): $(ORCH_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(O)/gen/version.c: FORCE
	@mkdir -p $(@D)
	@printf '#include "version.h"\nconst char version_sha[] = "%s";\n' \
		'$(GIT_SHA)' >$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(VERSION_OBJ): $(O)/gen/version.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# ---- programs ------------------------------------------------------------
$(O)/peerd: $(O)/obj/peerd/main.o $(VERSION_OBJ) $(LIBPEERD) $(LIBCOMMON)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(O)/orchestrate: $(O)/obj/orchestrator/main.o $(VERSION_OBJ) $(LIBORCH) $(LIBCOMMON)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(O)/peerctl: $(O)/obj/orchestrator/peerctl.o $(VERSION_OBJ) $(LIBCOMMON)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# The content layer's debugging tool (docs/pdt.md): libcommon only.
$(O)/pdt: $(O)/obj/orchestrator/pdt.o $(VERSION_OBJ) $(LIBCOMMON)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(TCPSTREAM): $(O)/obj/bench/tcpstream/tcpstream.o $(O)/obj/bench/loopback/loopback.o $(VERSION_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

$(WAKEUP): $(O)/obj/bench/wakeup/wakeup.o $(O)/obj/bench/loopback/loopback.o $(VERSION_OBJ)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

$(B3SPEED): $(O)/obj/bench/b3speed/b3speed.o $(VERSION_OBJ) $(LIBCOMMON)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(O)/bench: $(BENCH_OBJ) $(VERSION_OBJ) $(LIBCOMMON)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# ---- tests ---------------------------------------------------------------
# A unit test links its own object and whatever it pulls from the archives:
# a static archive contributes only the modules the test uses.
$(O)/obj/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(O)/tests/%: $(O)/obj/tests/unit/%.o $(VERSION_OBJ) $(LIBPEERD) $(LIBORCH) $(LIBCOMMON)
	@mkdir -p $(@D)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LIBS)

check: deps all $(O)/bench $(WAKEUP) $(B3SPEED) $(UNIT_BIN)
	@O=$(O) scripts/run-tests $(UNIT_BIN)

unit: $(UNIT_BIN)
	@O=$(O) scripts/run-tests --unit-only $(UNIT_BIN)

fleet: all $(O)/bench $(WAKEUP)
	@O=$(O) scripts/run-tests --fleet-only

bench: deps $(O)/bench $(WAKEUP)
	$(O)/bench $(BENCH_ARGS)
	$(WAKEUP)

run: deps all
	@if [ -x $(O)/orchestrate ] && [ -f scenarios/churn.json ]; then \
		$(O)/orchestrate scenarios/churn.json; \
	else \
		$(MAKE) --no-print-directory bench; \
	fi

# ---- fuzzing (clang + libFuzzer) -----------------------------------------
FUZZ_CC      ?= clang
FUZZ_O       := build/fuzz
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer-no-link,address,undefined \
	-Icommon -Ipeerd -Iorchestrator $(PKG_CFLAGS) -MMD -MP
FUZZ_COMMON  := $(COMMON_SRC:%.c=$(FUZZ_O)/obj/%.o)
FUZZ_PEERD   := $(PEERD_SRC:%.c=$(FUZZ_O)/obj/%.o)
FUZZ_ORCH    := $(ORCH_SRC:%.c=$(FUZZ_O)/obj/%.o)
FUZZ_BIN     := $(FUZZ_SRC:tests/fuzz/%.c=$(FUZZ_O)/%)
FUZZ_SECONDS ?= 0

$(FUZZ_O)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

# Archives, as for the unit tests: a target pulls only the modules it uses,
# so a codec target needs nothing from peerd, and a target that drives the
# daemon defines what peerd/main.c would (pd, peerd_shutdown,
# peerd_uptime_us).
$(FUZZ_O)/libcommon.a: $(FUZZ_COMMON)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_O)/libpeerd.a: $(FUZZ_PEERD)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_O)/liborch.a: $(FUZZ_ORCH)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_O)/%: $(FUZZ_O)/obj/tests/fuzz/%.o $(FUZZ_O)/libpeerd.a \
    $(FUZZ_O)/liborch.a $(FUZZ_O)/libcommon.a
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS)

fuzz: $(FUZZ_BIN)
	@if [ "$(FUZZ_SECONDS)" != 0 ]; then \
		for f in $(FUZZ_BIN); do \
			n=$$(basename $$f); mkdir -p tests/fuzz/corpus/$$n; \
			$$f -max_total_time=$(FUZZ_SECONDS) tests/fuzz/corpus/$$n tests/fuzz/seeds/$$n 2>&1 | tail -3; \
		done; \
	fi

# ---- install / clean -----------------------------------------------------
# Programs in bin/ (tcpstream too: an installed swarm run keeps its
# baseline), the scenarios where `orchestrate NAME` finds them, the docs.
SHAREDIR := $(PREFIX)/share/fleet-lab
DOCDIR   := $(PREFIX)/share/doc/fleet-lab

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SHAREDIR)/scenarios \
		$(DESTDIR)$(DOCDIR)
	for p in $(PROGS) $(TCPSTREAM); do install -m 0755 $$p $(DESTDIR)$(PREFIX)/bin/; done
	install -m 0644 scenarios/*.json $(DESTDIR)$(SHAREDIR)/scenarios/
	install -m 0644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	if ls docs/*.png >/dev/null 2>&1; then install -m 0644 docs/*.png $(DESTDIR)$(DOCDIR)/; fi

clean:
	rm -rf build

-include $(shell find $(O)/obj $(FUZZ_O)/obj -name '*.d' 2>/dev/null | sort -u)
