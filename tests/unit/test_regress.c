/*
 * test_regress.c - model bugs the differential soak and the fuzzers found
 * (tests/fuzz), one test each, with the sequence reduced by hand to what
 * matters.  Expected answers come from Linux: its source, or what the
 * running kernel answered to tools/kernel-probe/errno-probe.c (quoted).
 */
#include "../test.h"

#define RW (THPS_PROT_READ | THPS_PROT_WRITE)
#define ANON (THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS)

/*
 * mmap hints and protection bits.  Observed: "mmap hint unaligned free: ok,
 * at the hint rounded down" (x86's arch_get_unmapped_area_topdown does
 * addr &= PAGE_MASK; the model rounded up), "mmap hint near 2^64: ok,
 * below TASK_SIZE" (the model took the hint: its end wrapped past 2^64),
 * "mmap prot 0x80: ok", "mmap PROT_SEM: ok" (calc_vm_prot_bits ignores
 * other bits; the model refused them).
 */
TEST(regress_mmap_hint_and_prot)
{
	thps_proc *p;
	uint64_t a, b;
	uint8_t byte = 1;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(1), RW, ANON);
	tmunmap(p, a, MB(1));
	ASSERT_OK(thps_mmap(p, a + 1, PAGE, RW, ANON, &b));
	ASSERT_EQ(b, a);
	ASSERT_OK(thps_mmap(p, ~0ULL & ~(PAGE - 1), 2 * PAGE, RW, ANON, &b));
	ASSERT(b + 2 * PAGE <= (1ULL << 47) - PAGE);
	ASSERT_OK(thps_mmap(p, 0, PAGE, 0x80 | RW, ANON, &b));
	ASSERT_OK(thps_write(p, b, &byte, 1));
	ASSERT_OK(thps_mmap(p, 0, PAGE, 0x8 | THPS_PROT_READ, ANON, &b));
	ASSERT_EQ(thps_write(p, b, &byte, 1), -EFAULT);
	tcheck();
	texit(p);
}

/*
 * The order of mprotect's and madvise's argument checks (do_mprotect_pkey,
 * is_valid_madvise).  Observed: "mprotect len 0 bad prot: ok", "mprotect
 * len wraps to 0: ENOMEM", "mprotect PROT_SEM: ok", "mprotect past
 * TASK_SIZE bad prot: EINVAL", "madvise len wraps to 0: EINVAL", "madvise
 * past TASK_SIZE: ENOMEM".  The model checked the bits before the length,
 * took a length that rounds to zero for an empty range, refused PROT_SEM
 * and answered -EINVAL past TASK_SIZE.
 */
TEST(regress_mprotect_madvise_argument_order)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = tproc();
	a = tmmap(p, 0, MB(1), RW, ANON);
	ASSERT_EQ(thps_mprotect(p, a, 0, 0x80), 0);
	ASSERT_EQ(thps_mprotect(p, a, ~0ULL - 100, THPS_PROT_READ), -ENOMEM);
	ASSERT_EQ(thps_mprotect(p, a, PAGE, 0x8 | THPS_PROT_READ), 0);
	ASSERT_EQ(thps_mprotect(p, 0x7ffffffff000ULL, 2 * PAGE, 0x10), -EINVAL);
	ASSERT_EQ(thps_madvise(p, a, ~0ULL - 100, THPS_MADV_DONTNEED), -EINVAL);
	ASSERT_EQ(thps_madvise(p, 0x7ffffffff000ULL, 2 * PAGE, THPS_MADV_HUGEPAGE), -ENOMEM);
	tcheck();
	texit(p);
}

