/*
 * harness.c - the test runner and the helpers of test.h.
 *
 * thpsim-test [NAME...] runs every test whose name contains one of the
 * arguments (all without arguments), each on a fresh machine in a process
 * of its own, and ends with "N passed, N failed[, N skipped]".
 *
 * A test runs in a child so that a crash (a segfault, an abort from a
 * VM_BUG_ON, a sanitizer report) is one failure with the test's name and the
 * signal, and the tests after it still run and the summary still appears.
 * The child tells its result by exit status; anything else it does (a
 * signal, another status such as LeakSanitizer's) is a failure.
 * THPSIM_TEST_FORK=0 runs every test in the runner itself, for a debugger.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test.h"

#define MAX_TESTS 512

static struct {
	const char *name, *file;
	test_fn fn;
} tests[MAX_TESTS];
static int nr_tests;
static jmp_buf fail_jmp;
static char fail_msg[1024];
static int skipping;
thps_machine *T;
static uint64_t marked[THPS_NR_VM_ITEMS];

void test_register(const char *name, test_fn fn, const char *file)
{
	if (nr_tests < MAX_TESTS) {
		tests[nr_tests].name = name;
		tests[nr_tests].fn = fn;
		tests[nr_tests].file = file;
		nr_tests++;
	}
}

_Noreturn void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(fail_msg, sizeof(fail_msg), "%s:%d: ", file, line);

	va_start(ap, fmt);
	vsnprintf(fail_msg + n, sizeof(fail_msg) - (size_t)n, fmt, ap);
	va_end(ap);
	longjmp(fail_jmp, 1);
}

_Noreturn void test_skip(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(fail_msg, sizeof(fail_msg), fmt, ap);
	va_end(ap);
	skipping = 1;
	longjmp(fail_jmp, 1);
}

thps_machine *tmachine(uint64_t ram_mib, ...)
{
	struct thps_config cfg = { .ram_bytes = ram_mib << 20 };
	va_list ap;
	const char *kv;

	if (T)
		thps_machine_free(T);
	ASSERT_OK(thps_machine_new(&cfg, &T));
	va_start(ap, ram_mib);
	while ((kv = va_arg(ap, const char *))) {
		char name[128];
		const char *eq = strchr(kv, '=');

		ASSERT(eq && (size_t)(eq - kv) < sizeof(name));
		memcpy(name, kv, (size_t)(eq - kv));
		name[eq - kv] = 0;
		if (thps_knob_set(T, name, eq + 1))
			test_fail(__FILE__, __LINE__, "knob %s: %s", kv, thps_last_error(T));
	}
	va_end(ap);
	vm_mark();
	return T;
}

void tcheck_at(const char *file, int line)
{
	if (thps_check(T))
		test_fail(file, line, "state check: %s", thps_last_error(T));
}

void tknob(const char *name, const char *value)
{
	if (thps_knob_set(T, name, value))
		test_fail(__FILE__, __LINE__, "knob %s=%s: %s", name, value, thps_last_error(T));
}

thps_proc *tproc(void)
{
	thps_proc *p;

	ASSERT_OK(thps_proc_new(T, &p));
	tcheck();
	return p;
}

thps_proc *tfork(thps_proc *parent)
{
	thps_proc *c;

	ASSERT_OK(thps_fork(parent, &c));
	tcheck();
	return c;
}

void texit(thps_proc *p)
{
	thps_exit(p);
	tcheck();
}

uint64_t tmmap(thps_proc *p, uint64_t addr, uint64_t len, int prot, int flags)
{
	uint64_t a;
	int err = thps_mmap(p, addr, len, prot, flags, &a);

	if (err)
		test_fail(__FILE__, __LINE__, "mmap: %s", thps_last_error(T));
	tcheck();
	return a;
}

uint64_t tmmap_aligned(thps_proc *p, uint64_t len)
{
	uint64_t a = tmmap(p, 0, len + HPAGE, THPS_PROT_READ | THPS_PROT_WRITE,
			   THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS);
	uint64_t aligned = (a + HPAGE - 1) & ~(HPAGE - 1);

	/* trim to exactly [aligned, aligned + len), as a careful program does */
	if (aligned > a)
		tmunmap(p, a, aligned - a);
	if (aligned + len < a + len + HPAGE)
		tmunmap(p, aligned + len, a + len + HPAGE - aligned - len);
	return aligned;
}

void tmadvise(thps_proc *p, uint64_t addr, uint64_t len, int advice)
{
	if (thps_madvise(p, addr, len, advice))
		test_fail(__FILE__, __LINE__, "madvise: %s", thps_last_error(T));
	tcheck();
}

void tmprotect(thps_proc *p, uint64_t addr, uint64_t len, int prot)
{
	if (thps_mprotect(p, addr, len, prot))
		test_fail(__FILE__, __LINE__, "mprotect: %s", thps_last_error(T));
	tcheck();
}

void tmunmap(thps_proc *p, uint64_t addr, uint64_t len)
{
	if (thps_munmap(p, addr, len))
		test_fail(__FILE__, __LINE__, "munmap: %s", thps_last_error(T));
	tcheck();
}

void tread(thps_proc *p, uint64_t addr, uint64_t len, uint64_t step, uint8_t expect)
{
	struct thps_touch t = { .addr = addr, .len = len, .step = step, .op = THPS_TOUCH_READ,
				.value = expect, .check = 1 };

	ASSERT_OK(thps_touch(p, &t));
	if (t.mismatches)
		test_fail(__FILE__, __LINE__, "read %#" PRIx64 "+%#" PRIx64 ": %" PRIu64
			  " bytes differ from %#x", addr, len, t.mismatches, expect);
	tcheck();
}

void twrite(thps_proc *p, uint64_t addr, uint64_t len, uint64_t step, uint8_t value)
{
	struct thps_touch t = { .addr = addr, .len = len, .step = step, .op = THPS_TOUCH_WRITE,
				.value = value };

	ASSERT_OK(thps_touch(p, &t));
	tcheck();
}

uint8_t tbyte(thps_proc *p, uint64_t addr)
{
	uint8_t b;

	ASSERT_OK(thps_read(p, addr, &b, 1));
	tcheck();
	return b;
}

void tdrop_caches(void)
{
	thps_drop_caches(T);
	tcheck();
}

uint64_t vm(int item)
{
	uint64_t v[THPS_NR_VM_ITEMS];

	thps_vmstat(T, v);
	return v[item];
}

void vm_mark(void)
{
	thps_vmstat(T, marked);
}

int64_t vm_delta(int item)
{
	return (int64_t)(vm(item) - marked[item]);
}

uint64_t fig(thps_proc *p, int item)
{
	uint64_t v[THPS_NR_PROC_ITEMS];

	ASSERT_OK(thps_proc_figures(p, v));
	return v[item];
}

struct thps_pageinfo tpage(thps_proc *p, uint64_t addr)
{
	struct thps_pageinfo pi;

	ASSERT_OK(thps_pageinfo(p, addr, &pi));
	return pi;
}

uint64_t tmeminfo(int item)
{
	uint64_t mi[THPS_NR_MEMINFO_ITEMS];

	thps_meminfo(T, mi);
	return mi[item];
}

static void count_vma(void *arg, uint64_t s, uint64_t e, int prot, const char *f)
{
	(void)s;
	(void)e;
	(void)prot;
	(void)f;
	(*(int *)arg)++;
}

int tvmas(thps_proc *p)
{
	int n = 0;

	ASSERT_OK(thps_for_each_vma(p, count_vma, &n));
	return n;
}

static int selected(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (strstr(name, argv[i]))
			return 1;
	return 0;
}

/* Run one test: 1 passed, 0 failed, 2 skipped.  A failed test's machine
 * is left as it is (freeing an inconsistent one could trip its own checks). */
static int run_one(int i)
{
	T = NULL;
	skipping = 0;
	if (setjmp(fail_jmp)) {
		if (skipping) {
			printf("skip %s: %s\n", tests[i].name, fail_msg);
			if (T)
				thps_machine_free(T);
			T = NULL;
			return 2;
		}
		printf("FAIL %s\n     %s\n", tests[i].name, fail_msg);
		T = NULL;
		return 0;
	}
	tests[i].fn();
	printf("ok   %s\n", tests[i].name);
	if (T)
		thps_machine_free(T);
	T = NULL;
	return 1;
}

/* How a child reports: its exit status (not 1, which is what a sanitizer
 * that stops a test exits with). */
enum { CHILD_PASSED = 0, CHILD_FAILED = 70, CHILD_SKIPPED = 77 };

/* Run test i in a child; same return values as run_one.  The child exits
 * through exit() so that LeakSanitizer checks each test on its own. */
static int run_forked(int i)
{
	pid_t pid;
	int st;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		printf("FAIL %s\n     fork: %s\n", tests[i].name, strerror(errno));
		return 0;
	}
	if (pid == 0) {
		int r = run_one(i);

		fflush(stdout);
		exit(r == 1 ? CHILD_PASSED : r == 2 ? CHILD_SKIPPED : CHILD_FAILED);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			printf("FAIL %s\n     waitpid: %s\n", tests[i].name, strerror(errno));
			return 0;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_PASSED)
		return 1;
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_SKIPPED)
		return 2;
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_FAILED)
		return 0; /* it printed FAIL and why */
	if (WIFSIGNALED(st))
		printf("FAIL %s\n     the test's process died of signal %d (%s)\n", tests[i].name,
		       WTERMSIG(st), strsignal(WTERMSIG(st)));
	else
		printf("FAIL %s\n     the test's process exited with status %d (a sanitizer's "
		       "report is above)\n", tests[i].name, WEXITSTATUS(st));
	return 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("THPSIM_TEST_FORK");
	int forking = !env || strcmp(env, "0");
	int passed = 0, failed = 0, skipped = 0;

	for (int i = 0; i < nr_tests; i++) {
		if (!selected(tests[i].name, argc, argv))
			continue;
		switch (forking ? run_forked(i) : run_one(i)) {
		case 1: passed++; break;
		case 2: skipped++; break;
		default: failed++; break;
		}
		fflush(stdout);
	}
	if (skipped)
		printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	else
		printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : passed ? 0 : 1;
}
