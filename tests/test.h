/*
 * test.h - the unit-test harness: a test list the runner selects by name,
 * assertions that print both values, and helpers that drive the model and
 * run the whole-state checker after every step.
 */
#ifndef THPSIM_TEST_H
#define THPSIM_TEST_H

#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "thpsim.h"

typedef void (*test_fn)(void);
void test_register(const char *name, test_fn fn, const char *file);

#define TEST(name)                                                                         \
	static void name(void);                                                            \
	__attribute__((constructor)) static void register_##name(void)                     \
	{                                                                                  \
		test_register(#name, name, __FILE__);                                      \
	}                                                                                  \
	static void name(void)

_Noreturn void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* End the test as skipped, saying why (no root, no tracing...). */
_Noreturn void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define ASSERT(c)                                                                          \
	do {                                                                               \
		if (!(c))                                                                  \
			test_fail(__FILE__, __LINE__, "%s", #c);                           \
	} while (0)
#define ASSERT_EQ(a, b)                                                                    \
	do {                                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);                        \
		if (a_ != b_)                                                              \
			test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
	} while (0)
#define ASSERT_NE(a, b)                                                                    \
	do {                                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);                        \
		if (a_ == b_)                                                              \
			test_fail(__FILE__, __LINE__, "%s != %s: both %lld", #a, #b, a_);  \
	} while (0)
#define ASSERT_LE(a, b)                                                                    \
	do {                                                                               \
		long long a_ = (long long)(a), b_ = (long long)(b);                        \
		if (a_ > b_)                                                               \
			test_fail(__FILE__, __LINE__, "%s <= %s: %lld > %lld", #a, #b, a_, b_); \
	} while (0)
#define ASSERT_OK(e)                                                                       \
	do {                                                                               \
		int e_ = (e);                                                              \
		if (e_)                                                                    \
			test_fail(__FILE__, __LINE__, "%s returned %d (%s)", #e, e_,       \
				  strerror(-e_));                                          \
	} while (0)

#define KB(x) ((uint64_t)(x) << 10)
#define MB(x) ((uint64_t)(x) << 20)
#define HPAGE THPS_HPAGE_PMD_SIZE
#define PAGE THPS_PAGE_SIZE

/* ---- helpers (tests/unit/harness.c) ----
 * Each runs the whole-state checker after its step and fails the test, with
 * the checker's message, when the state is inconsistent. */
extern thps_machine *T; /* the current test's machine */

/* A fresh machine of ram_mib MiB with knobs "name=value" (NULL-terminated). */
thps_machine *tmachine(uint64_t ram_mib, ...);
void tcheck_at(const char *file, int line);
#define tcheck() tcheck_at(__FILE__, __LINE__)
thps_proc *tproc(void);
thps_proc *tfork(thps_proc *p);
void texit(thps_proc *p);
void tknob(const char *name, const char *value);
/* mmap len bytes at a 2 MiB-aligned address (MAP_FIXED_NOREPLACE), RW. */
uint64_t tmmap_aligned(thps_proc *p, uint64_t len);
uint64_t tmmap(thps_proc *p, uint64_t addr, uint64_t len, int prot, int flags);
void tmadvise(thps_proc *p, uint64_t addr, uint64_t len, int advice);
void tmprotect(thps_proc *p, uint64_t addr, uint64_t len, int prot);
void tmunmap(thps_proc *p, uint64_t addr, uint64_t len);
/* touch one byte every step: read (expecting value) or write value */
void tread(thps_proc *p, uint64_t addr, uint64_t len, uint64_t step, uint8_t expect);
void twrite(thps_proc *p, uint64_t addr, uint64_t len, uint64_t step, uint8_t value);
uint8_t tbyte(thps_proc *p, uint64_t addr);
void tdrop_caches(void);

/* figures */
uint64_t vm(int item);             /* current /proc/vmstat value */
void vm_mark(void);                /* remember the counters now */
int64_t vm_delta(int item);        /* change since vm_mark() */
uint64_t fig(thps_proc *p, int item); /* a per-process figure, kB */
struct thps_pageinfo tpage(thps_proc *p, uint64_t addr);
uint64_t tmeminfo(int item);       /* a /proc/meminfo field, kB */
int tvmas(thps_proc *p);            /* how many VMAs */

#endif
