# thpsim - a plain GNU Makefile.
#
#   make              library, header and the thpsim command (build/)
#   make check        every stage below, each even after one fails; ends with
#                     "check: N passed, N failed[, N skipped]" (CHECK_KERNELS=0:
#                     without the QEMU kernels)
#   make check-unit, check-fuzz, check-asan, tsan, check-scenarios,
#        check-layers, check-kernels   one stage alone
#   make demo         the cover letter's program under three THP settings
#   make bench        fault rates vs this kernel, the refcount experiment, memory
#   make SAN=address,undefined check-unit   a sanitizer build of the tests
#   make tsan         the threaded test under ThreadSanitizer
#   make soak OPS=N SEED=S   N differential operations against the reference
#   make fuzz FUZZ_TIME=s    each fuzz target for s seconds (libFuzzer, clang)
#   make inject       allocation-failure injection over every scenario
#   make check-kernels   the scenarios and tests/progs on Debian's 6.1 and
#                     6.12 kernels booted in QEMU (docs/kernels.md)
#   make install      PREFIX=/usr/local, DESTDIR= for staging
#
# Variables: CC (gcc or clang), DEBUG (0: no VM_BUG_ON, 1: default,
# 2: expensive checks, used by the tests), SAN (sanitizers), O (build dir).

CC      ?= cc
O       ?= build
DEBUG   ?= 1
OPT     ?= -O2
WERROR  ?= -Werror
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra $(WERROR) -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wno-unused-parameter
# messages may be cut to their buffers on purpose (gcc warns, clang has no such option)
WARN    += $(if $(findstring clang,$(shell $(CC) --version 2>/dev/null)),,-Wno-format-truncation)
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -DTHPS_DEBUG=$(DEBUG) \
             -Iinclude -Isrc -pthread
ifneq ($(SAN),)
ALL_CFLAGS += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SAN)
endif
ifeq ($(LIBFUZZER),1)
ALL_CFLAGS += -fsanitize=fuzzer-no-link
endif
LDLIBS  += -pthread -lm
# record --callers names functions with elfutils' libdwfl when it is there
# (Debian: libdw-dev); without it, frames are file+0xoffset.  LIBDW=0: never.
LIBDW   ?= $(shell echo '\#include <elfutils/libdwfl.h>' | $(CC) -E - >/dev/null 2>&1 && echo 1)
ifeq ($(LIBDW),1)
$(O)/src/record/callers.o: ALL_CFLAGS += -DHAVE_LIBDW
LDLIBS  += -ldw -lelf
endif

MM_SRC  := $(wildcard src/mm/*.c)
CLI_SRC := $(wildcard src/cli/*.c) $(wildcard src/util/*.c) $(wildcard src/scenario/*.c) \
           $(wildcard src/trace/*.c) $(wildcard src/record/*.c) $(wildcard src/replay/*.c)
TEST_SRC := $(wildcard tests/unit/*.c)

MM_OBJ  := $(MM_SRC:%.c=$(O)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(O)/%.o)

# The model's own headers (src/mm/*.h) are for src/mm and the unit tests
# that look inside it (white-box); every other file sees include/thpsim.h.
WHITEBOX_TESTS := test_page_alloc test_fault_run test_regress_internal
$(MM_OBJ) $(patsubst %,$(O)/tests/unit/%.o,$(WHITEBOX_TESTS)): ALL_CFLAGS += -Isrc/mm

LIB  := $(O)/libthpsim.a
BIN  := $(O)/thpsim
TEST := $(O)/thpsim-test

# Real programs the recorder tests and the validation run (tests/progs).
PROGS := $(patsubst tests/progs/%.c,$(O)/progs/%,$(wildcard tests/progs/*.c))
# A Go program (tests/progs/gocache), where Go is installed (Debian's
# golang-go): a real garbage-collected runtime for the guests of make
# check-kernels, static (no cgo) as Go builds by default.
GO ?= $(shell command -v go 2>/dev/null)
GOPROGS := $(if $(GO),$(O)/progs/gocache)
GO_CACHE ?= $(abspath $(O))/go-build

# tests/fuzz: the reference model, the differential executor, the generator
# (tests/fuzz/README.md).  A fuzz target is tests/fuzz/fuzz_NAME.c with a
# seed corpus in tests/fuzz/corpus/NAME/.
FUZZ_SRC := tests/fuzz/ref.c tests/fuzz/ops.c tests/fuzz/diff.c tests/fuzz/collapse.c tests/fuzz/gen.c tests/fuzz/repro.c
FUZZ_OBJ := $(FUZZ_SRC:%.c=$(O)/%.o)
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_LINK = $(FUZZ_OBJ) $(filter-out $(O)/src/cli/main.o,$(CLI_OBJ)) $(LIB)
SOAK := $(O)/thpsim-soak

.PHONY: all install uninstall check check-unit check-asan check-fuzz check-scenarios check-sweep check-slurm check-layers tsan \
	demo bench clean \
	progs validate soak fuzz fuzz-replay inject check-kernels check-kernels-run kernels-static

all: $(LIB) $(BIN) $(PROGS) $(GOPROGS)

progs: $(PROGS)

$(O)/progs/%: tests/progs/%.c tests/progs/rollup.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -O2 -g -Wall -pthread $(PROG_LDFLAGS) -o $@ $<

$(O)/progs/gocache: tests/progs/gocache/main.go
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GO      $@")
	$(Q)cd tests/progs/gocache && CGO_ENABLED=0 GOCACHE=$(GO_CACHE) \
		GOPATH=$(abspath $(O))/go GOFLAGS=-trimpath $(GO) build -o $(abspath $@) main.go

# V=1 shows the commands
Q := $(if $(V),,@)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(MM_OBJ)
	@rm -f $@
	@$(if $(Q),echo "  AR      $@")
	$(Q)ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

$(TEST): $(TEST_OBJ) $(LIB) $(filter-out $(O)/src/cli/main.o,$(CLI_OBJ))
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(SOAK): $(O)/tests/fuzz/soak.o $(FUZZ_LINK)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# each fuzz target twice: a corpus replay driver (any compiler) and, with
# LIBFUZZER=1 (clang), the libFuzzer binary
$(O)/fuzz-replay-%: $(O)/tests/fuzz/fuzz_%.o $(O)/tests/fuzz/replay_main.o $(FUZZ_LINK)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/fuzz-%: $(O)/tests/fuzz/fuzz_%.o $(FUZZ_LINK)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

# The unit tests run against a build with expensive checks on.
#
# Every command a stage runs goes through tools/check-run.sh, which keeps
# its output in $(LOGS)/NAME.log and its exit status in $(LOGS)/NAME.rc for
# tools/check-summary.sh.  Run alone, a stage stops at its first failing
# command, as make does; make check sets CHECK_KEEP_GOING=1 so that every
# command of every stage runs, and the summary says what failed.
#
# Each build folder has one make building into it: check-unit builds in
# $(O)/test, check-fuzz in $(O)/fuzz, check-asan in $(O)/asan, tsan in
# $(O)/tsan, check-kernels in $(O)/static; so the stages can run side by
# side under -j without two compilers writing the same object or archive.
# (make check runs them one after another, and check-fuzz in $(O)/test.)
LOGS := $(O)/logs
SHELL := /bin/bash
# The stages' builds compile on every CPU (the stages' tests themselves run
# one stage at a time: the kernel side and the guests measure real time and
# system-wide counters, which other work on the machine disturbs).
CHECK_J ?= -j$(shell nproc 2>/dev/null || echo 1)
RUN := tools/check-run.sh $(LOGS)

check-unit:
	@$(RUN) unit-build $(MAKE) $(CHECK_J) --no-print-directory O=$(O)/test DEBUG=2 \
		$(O)/test/thpsim-test $(patsubst $(O)/%,$(O)/test/%,$(PROGS))
	@$(RUN) unit env THPSIM_PROGS=$(O)/test/progs $(O)/test/thpsim-test

check-asan:
	@$(RUN) asan-build $(MAKE) $(CHECK_J) --no-print-directory O=$(O)/asan DEBUG=2 \
		SAN=address,undefined OPT=-O1 \
		$(O)/asan/thpsim-test $(patsubst $(O)/%,$(O)/asan/%,$(PROGS)) \
		$(O)/asan/thpsim-soak $(addprefix $(O)/asan/fuzz-replay-,$(FUZZ_TARGETS))
	@export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1; \
	$(RUN) asan env THPSIM_PROGS=$(O)/asan/progs $(O)/asan/thpsim-test && \
	$(foreach t,$(FUZZ_TARGETS),$(RUN) asan-fuzz-$(t) $(O)/asan/fuzz-replay-$(t) tests/fuzz/corpus/$(t) &&) \
	$(RUN) asan-soak $(O)/asan/thpsim-soak --ops 3000 --seed 7

# The fuzz corpora replayed, a short fixed-seed soak, allocation-failure
# injection at every allocation of every scenario, the regression files.
SOAK_CHECK_OPS ?= 30000
# FUZZ_O: its build folder.  Its flags are check-unit's, so make check,
# whose stages run one after another (-j1), builds it in check-unit's
# $(O)/test and compiles only tests/fuzz there (38 s of one CPU beside the
# guests, 2026-12-07); alone it has a folder of its own.
FUZZ_O ?= $(O)/fuzz
check-fuzz:
	@$(RUN) fuzz-build $(MAKE) $(CHECK_J) --no-print-directory O=$(FUZZ_O) DEBUG=2 $(FUZZ_O)/thpsim-soak \
		$(addprefix $(FUZZ_O)/fuzz-replay-,$(FUZZ_TARGETS))
	@$(foreach t,$(FUZZ_TARGETS),$(RUN) fuzz-replay-$(t) $(FUZZ_O)/fuzz-replay-$(t) tests/fuzz/corpus/$(t) &&) \
	$(RUN) regress $(FUZZ_O)/thpsim-soak --replay tests/fuzz/regress/*.ops && \
	$(RUN) inject $(FUZZ_O)/thpsim-soak --inject tests/fuzz/scenarios/*.ops && \
	$(RUN) soak $(FUZZ_O)/thpsim-soak --ops $(SOAK_CHECK_OPS) --seed 1 --metamorphic-every 16

tsan:
	@$(RUN) tsan-build $(MAKE) $(CHECK_J) --no-print-directory O=$(O)/tsan DEBUG=1 SAN=thread OPT=-O1 CC=clang \
		$(O)/tsan/thpsim-test $(O)/tsan/thpsim-soak
	@$(RUN) tsan env TSAN_OPTIONS=halt_on_error=1 $(O)/tsan/thpsim-test threads && \
	$(RUN) tsan-soak env TSAN_OPTIONS="halt_on_error=1 suppressions=tests/fuzz/tsan.supp" \
		$(O)/tsan/thpsim-soak --threads 4 --ops 8000 --seed 3

# The scenario corpus in the model and, where it can run, on this kernel
# (its detected profile: thpsim kernel-profile); then in the model alone
# under every kernel profile the corpus has expectations for.
check-scenarios: $(BIN)
	@$(RUN) kernel-profile $(BIN) kernel-profile && \
	$(RUN) scenarios $(BIN) validate scenarios && \
	$(RUN) profiles tools/check-profiles.sh $(BIN) scenarios

# A sweep of tests/progs' recordings with GNU parallel, merged and held
# against thpsim compare; resumed after removed, cut-short and killed jobs
# (tools/sweep/check.sh; docs/sweep.md).
check-sweep: $(BIN) $(PROGS)
	@$(RUN) sweep tools/sweep/check.sh $(BIN) $(O)/progs

# The same sweep as a Slurm job array on a single-node cluster started here
# (Debian's slurm-wlm and munge), against GNU parallel's and compare's.
check-slurm: $(BIN) $(PROGS)
	@rm -rf $(LOGS)/slurm.* && mkdir -p $(LOGS)
	@$(RUN) slurm tools/sweep/check-slurm.sh $(BIN) $(O)/progs $(O)/kernels

# No lower layer includes a higher layer's header (docs/architecture.md).
check-layers:
	@$(RUN) layers tools/check-layers.sh

# The same on real kernels: Debian's 6.1, 6.12 and 6.18 booted in QEMU (TCG), with
# a static thpsim and static tests/progs of their own build folder.  Where
# QEMU or the kernels cannot be had, the kernels count as skipped
# (tools/kernels/check-kernels.sh; CHECK_KERNELS=0 skips them on purpose).
# The script writes $(LOGS)/kernels.log itself; its output, the same table,
# is kept as kernels-qemu.log, which the summary counts.  The static thpsim
# is built without libdw (LIBDW=0: Debian's static libelf needs zlib, lzma,
# zstd and bzip2 static too), so record --callers in a guest names frames
# file+0xoffset.
check-kernels: kernels-static
	@$(MAKE) --no-print-directory check-kernels-run

kernels-static:
	@$(RUN) static-build $(MAKE) $(CHECK_J) --no-print-directory O=$(O)/static LDFLAGS=-static LIBDW=0 \
		GO_CACHE=$(GO_CACHE) \
		PROG_LDFLAGS=-static $(O)/static/thpsim $(O)/static/thpsim-test \
		$(patsubst $(O)/%,$(O)/static/%,$(PROGS) $(GOPROGS))

# Every stage, each command of each even after one fails; the last line is
# "check: N passed, N failed[, N skipped]" and the status is 1 on any failure.
# After the build and the guests' static build, the guests run (one at a
# time: two at once slow each other down under TCG, docs/kernels.md) on
# one core while the host's stages run on the other, one after another and
# each build with one job: a guest is one vCPU of TCG, one host core, and
# with the host's stages before the guests (two lanes side by side, 1 min
# 52 s) the second core idled through the guests' 7 to 9 minutes.  First
# every stage that runs real programs on this kernel (recordings with perf
# and DAMON, the scenarios, the sweep), then the model alone (fuzz corpora,
# failure injection, soak, TSan, layers).
CHECK_LANE_REAL := check-unit check-asan check-scenarios check-sweep
CHECK_LANE_MODEL := check-fuzz tsan check-layers
check:
	@rm -rf $(LOGS) && mkdir -p $(LOGS)
	@$(RUN) build $(MAKE) $(CHECK_J) --no-print-directory all
	@$(MAKE) --no-print-directory -k CHECK_KEEP_GOING=1 kernels-static; s=$$?; \
	$(MAKE) --no-print-directory -k CHECK_KEEP_GOING=1 check-kernels-run & \
	$(MAKE) --no-print-directory -j1 -k CHECK_KEEP_GOING=1 CHECK_J=-j1 FUZZ_O=$(O)/test \
		$(CHECK_LANE_REAL) $(CHECK_LANE_MODEL); a=$$?; \
	wait $$!; k=$$?; \
	tools/check-summary.sh $(LOGS) $$((s | a | k))

# the guests of make check, their static build made already
check-kernels-run:
	@$(RUN) summarize python3 tools/kernels/test_summarize.py && \
	$(RUN) kernels-qemu tools/kernels/check-kernels.sh $(O) $(O)/static

# make soak OPS=N SEED=S: N differential operations from seed S; ends with
# "ops=N divergences=D seed=S" (a divergence is shrunk and printed).
OPS ?= 1000000
SEED ?= 1
JOBS ?= 1
soak: $(SOAK)
	$(SOAK) --ops $(OPS) --seed $(SEED) --jobs $(JOBS) --progress 600 --out $(O)

inject: $(SOAK)
	$(SOAK) --inject tests/fuzz/scenarios/*.ops
	$(SOAK) --inject --sticky tests/fuzz/scenarios/*.ops

# make fuzz FUZZ_TIME=s: every fuzz target for s seconds under libFuzzer
# (needs clang; FUZZ_CC=gcc, or no clang, replays the corpora instead).  New
# inputs go to $(O)/fuzz-corpus/NAME, crashes to $(O)/fuzz-crash-NAME-*.
FUZZ_TIME ?= 60
FUZZ_CC ?= $(shell command -v clang >/dev/null 2>&1 && echo clang || echo $(CC))
fuzz:
ifneq ($(findstring clang,$(FUZZ_CC)),)
	$(MAKE) --no-print-directory O=$(O)/libfuzzer CC=$(FUZZ_CC) SAN=address,undefined \
		LIBFUZZER=1 OPT=-O1 $(addprefix $(O)/libfuzzer/fuzz-,$(FUZZ_TARGETS))
	for t in $(FUZZ_TARGETS); do \
		mkdir -p $(O)/fuzz-corpus/$$t; \
		$(O)/libfuzzer/fuzz-$$t -max_total_time=$(FUZZ_TIME) -max_len=4096 -timeout=60 \
			-print_final_stats=1 -artifact_prefix=$(O)/fuzz-crash-$$t- \
			$(O)/fuzz-corpus/$$t tests/fuzz/corpus/$$t || exit 1; \
	done
else
	$(MAKE) --no-print-directory fuzz-replay
endif

fuzz-replay:
	$(MAKE) --no-print-directory $(addprefix $(O)/fuzz-replay-,$(FUZZ_TARGETS))
	for t in $(FUZZ_TARGETS); do $(O)/fuzz-replay-$$t tests/fuzz/corpus/$$t || exit 1; done

demo: $(BIN)
	$(BIN) demo

bench: $(BIN) $(PROGS)
	$(BIN) bench

# Recorded programs against the kernel (root; see docs/validation.md).
validate: all
	tools/validate/validate.sh $(O)

# make install PREFIX=/usr/local DESTDIR=: the command, its man page, the
# library and its header.
PREFIX ?= /usr/local
DESTDIR ?=
install: $(BIN) $(LIB)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/thpsim
	install -m 644 docs/thpsim.1 $(DESTDIR)$(PREFIX)/share/man/man1/thpsim.1
	install -m 644 include/thpsim.h $(DESTDIR)$(PREFIX)/include/thpsim.h
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libthpsim.a

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/thpsim $(DESTDIR)$(PREFIX)/share/man/man1/thpsim.1 \
		$(DESTDIR)$(PREFIX)/include/thpsim.h $(DESTDIR)$(PREFIX)/lib/libthpsim.a

clean:
	rm -rf $(O)

-include $(shell find $(O) -name '*.d' 2>/dev/null)
