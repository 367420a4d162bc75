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

