# thpsim - a plain GNU Makefile.
#
#   make              library, header and the thpsim command (build/)
#   make check        every test, then the ASan+UBSan build of the tests
#   make demo         the cover letter's program under three THP settings
#   make bench        fault rates vs this kernel, the refcount experiment, memory
#   make SAN=address,undefined check-unit   a sanitizer build of the tests
#   make tsan         the threaded test under ThreadSanitizer
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
             -Iinclude -Isrc/mm -Isrc -pthread
ifneq ($(SAN),)
ALL_CFLAGS += -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SAN)
endif
LDLIBS  += -pthread -lm

MM_SRC  := $(wildcard src/mm/*.c)
CLI_SRC := $(wildcard src/cli/*.c) $(wildcard src/util/*.c) $(wildcard src/scenario/*.c) \
           $(wildcard src/trace/*.c) $(wildcard src/record/*.c) $(wildcard src/replay/*.c)
TEST_SRC := $(wildcard tests/unit/*.c)

MM_OBJ  := $(MM_SRC:%.c=$(O)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(O)/%.o)

LIB  := $(O)/libthpsim.a
BIN  := $(O)/thpsim
TEST := $(O)/thpsim-test

# Real programs the recorder tests and the validation run (tests/progs).
PROGS := $(patsubst tests/progs/%.c,$(O)/progs/%,$(wildcard tests/progs/*.c))

.PHONY: all check check-unit check-asan check-scenarios tsan demo bench clean progs validate

all: $(LIB) $(BIN) $(PROGS)

progs: $(PROGS)

$(O)/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -O2 -g -Wall -pthread -o $@ $<

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

# The unit tests run against a build with expensive checks on.
# Each run's output is kept in $(O)/logs for the summary line at the end.
LOGS := $(O)/logs
SHELL := /bin/bash

check-unit:
	$(MAKE) --no-print-directory O=$(O)/test DEBUG=2 $(O)/test/thpsim-test $(O)/test/progs/coverletter $(O)/test/progs/churn
	@mkdir -p $(LOGS)
	set -o pipefail; THPSIM_PROGS=$(O)/test/progs $(O)/test/thpsim-test | tee $(LOGS)/unit.log

check-asan:
	$(MAKE) --no-print-directory O=$(O)/asan DEBUG=2 SAN=address,undefined OPT=-O1 \
		$(O)/asan/thpsim-test $(O)/asan/progs/coverletter $(O)/asan/progs/churn
	@mkdir -p $(LOGS)
	set -o pipefail; ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		THPSIM_PROGS=$(O)/asan/progs $(O)/asan/thpsim-test | tee $(LOGS)/asan.log

tsan:
	$(MAKE) --no-print-directory O=$(O)/tsan DEBUG=1 SAN=thread OPT=-O1 CC=clang \
		$(O)/tsan/thpsim-test
	@mkdir -p $(LOGS)
	set -o pipefail; TSAN_OPTIONS=halt_on_error=1 $(O)/tsan/thpsim-test threads | tee $(LOGS)/tsan.log

# The scenario corpus in the model and, where it can run, on this kernel.
check-scenarios: $(BIN)
	@mkdir -p $(LOGS)
	set -o pipefail; $(BIN) validate scenarios | tee $(LOGS)/scenarios.log

check: all
	@rm -rf $(LOGS)
	$(MAKE) --no-print-directory check-unit check-asan tsan check-scenarios
	@awk '{ sub(/^[a-z]+: /, "") } \
		/^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$$/ { p += $$1; f += $$3; s += $$5 } \
		END { print "make check: unit tests, ASan+UBSan build, TSan build, scenarios"; \
		      if (s) printf "check: %d passed, %d failed, %d skipped\n", p, f, s; \
		      else printf "check: %d passed, %d failed\n", p, f; exit f > 0 }' \
		$(LOGS)/*.log

demo: $(BIN)
	$(BIN) demo

bench: $(BIN)
	$(BIN) bench

# Recorded programs against the kernel (root; see docs/validation.md).
validate: all
	tools/validate/validate.sh $(O)

clean:
	rm -rf $(O)

-include $(shell find $(O) -name '*.d' 2>/dev/null)
