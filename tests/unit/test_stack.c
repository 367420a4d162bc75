/*
 * test_stack.c - the stack and the break as exec leaves them: a
 * MAP_GROWSDOWN mapping grows down on a fault below it (Linux's
 * expand_downwards: within RLIMIT_STACK, 256 pages of stack_guard_gap above
 * the mapping below), MAP_STACK mappings get no THP (Linux 6.7+), and
 * thps_brk_init moves the heap to where a recorded kernel put it.
 */
#include "../test.h"

#define RW (THPS_PROT_READ | THPS_PROT_WRITE)
#define ANON (THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS)
#define STACK_TOP 0x7ffff0000000ULL

TEST(stack_grows_down_on_fault)
{
	thps_proc *p;
	uint8_t b = 1;

	tmachine(256, NULL);
	p = tproc();
	tmmap(p, STACK_TOP - KB(132), KB(132), RW, ANON | THPS_MAP_FIXED | THPS_MAP_GROWSDOWN);
	/* one page below the stack, then 1 MiB below: both grow it */
	ASSERT_OK(thps_write(p, STACK_TOP - KB(136), &b, 1));
	tcheck();
	ASSERT_OK(thps_write(p, STACK_TOP - MB(1), &b, 1));
	tcheck();
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 8);
	ASSERT_EQ(fig(p, THPS_PROC_VmSize), 1024);
	/* still one VMA: a read just below its old start finds it */
	ASSERT_EQ(tbyte(p, STACK_TOP - KB(140)), 0);
	/* past RLIMIT_STACK (8 MiB by default) the access is a SIGSEGV */
	ASSERT_EQ(thps_write(p, STACK_TOP - MB(8) - PAGE, &b, 1), -EFAULT);
	ASSERT_EQ(fig(p, THPS_PROC_VmSize), 1024);
	ASSERT_OK(thps_set_stack_rlimit(p, MB(16)));
	ASSERT_OK(thps_write(p, STACK_TOP - MB(8) - PAGE, &b, 1));
	tcheck();
	ASSERT_EQ(fig(p, THPS_PROC_VmSize), 8 * 1024 + 4);
	texit(p);
}

TEST(stack_keeps_guard_gap)
{
	thps_proc *p;
	uint8_t b = 1;

	tmachine(256, NULL);
	p = tproc();
	tmmap(p, STACK_TOP - KB(132), KB(132), RW, ANON | THPS_MAP_FIXED | THPS_MAP_GROWSDOWN);
	/* a mapping 2 MiB below the stack: growing to within 1 MiB of it fails */
	tmmap(p, STACK_TOP - MB(2) - KB(132), PAGE, RW, ANON | THPS_MAP_FIXED);
	ASSERT_OK(thps_write(p, STACK_TOP - MB(1), &b, 1));
	tcheck();
	ASSERT_EQ(thps_write(p, STACK_TOP - MB(2) - KB(132) + PAGE + KB(512), &b, 1), -EFAULT);
	/* an ordinary mapping does not grow */
	ASSERT_EQ(thps_write(p, STACK_TOP - MB(2) - KB(132) - PAGE, &b, 1), -EFAULT);
	texit(p);
}

TEST(stack_grown_gets_thp_with_always)
{
	thps_proc *p;
	uint8_t b = 1;

	/* Linux refuses THP only to the temporary stack of an exec: a stack
	 * that grew over an aligned 2 MiB takes a THP under "always" */
	tmachine(256, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	tmmap(p, STACK_TOP - KB(132), KB(132), RW, ANON | THPS_MAP_FIXED | THPS_MAP_GROWSDOWN);
	ASSERT_OK(thps_write(p, STACK_TOP - MB(4), &b, 1));
	tcheck();
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
	texit(p);
}

TEST(map_stack_is_nohugepage)
{
	thps_proc *p;
	uint64_t a;

	/* observed on Linux 6.18: MAP_STACK shows VmFlags nh and
	 * THPeligible 0 */
	tmachine(256, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	a = tmmap(p, 0, MB(4), RW, ANON | THPS_MAP_STACK);
	twrite(p, a, MB(4), HPAGE, 1);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 8);
	/* MADV_HUGEPAGE still overrides it */
	tmadvise(p, a, MB(4), THPS_MADV_HUGEPAGE);
	tmadvise(p, a, MB(4), THPS_MADV_DONTNEED);
	twrite(p, a, MB(4), HPAGE, 1);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 4096);
	texit(p);
}

TEST(brk_init_places_the_heap)
{
	thps_proc *p;
	uint64_t brk;

	tmachine(256, NULL);
	p = tproc();
	ASSERT_OK(thps_brk_init(p, 0x5555a0000000ULL, 0x5555a0000000ULL));
	ASSERT_OK(thps_brk(p, 0, &brk));
	ASSERT_EQ(brk, 0x5555a0000000ULL);
	ASSERT_OK(thps_brk(p, 0x5555a0021000ULL, &brk));
	ASSERT_EQ(brk, 0x5555a0021000ULL);
	twrite(p, 0x5555a0000000ULL, KB(132), PAGE, 1);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 132);
	/* below start_brk: refused, the break stays (brk(2) returns it) */
	ASSERT_OK(thps_brk(p, 0x55559fff0000ULL, &brk));
	ASSERT_EQ(brk, 0x5555a0021000ULL);
	/* a heap the caller has not mapped is refused */
	ASSERT_EQ(thps_brk_init(p, 0x5555b0000000ULL, 0x5555b0002000ULL), -EINVAL);
	ASSERT_EQ(thps_brk_init(p, 0x5555b0000001ULL, 0x5555b0000001ULL), -EINVAL);
	texit(p);
}

TEST(proc_usage_equals_figures)
{
	thps_proc *p, *c;
	uint64_t a, rss, huge;

	tmachine(256, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(8));
	twrite(p, a, MB(8), HPAGE, 1);          /* 4 THPs */
	tread(p, a + MB(8) - PAGE, PAGE, PAGE, 0);
	tmunmap(p, a + MB(3), PAGE);            /* one PMD split */
	c = tfork(p);
	twrite(c, a + MB(6), PAGE, PAGE, 2);    /* the child's PMD split by COW */
	for (thps_proc *q = p;; q = c) {
		ASSERT_OK(thps_proc_usage(q, &rss, &huge));
		ASSERT_EQ(rss, fig(q, THPS_PROC_Rss));
		ASSERT_EQ(huge, fig(q, THPS_PROC_AnonHugePages));
		if (q == c)
			break;
	}
	ASSERT_EQ(huge, 4096);
	texit(c);
	texit(p);
}

/* The same across 1 GiB boundaries, where thps_proc_usage reads a whole
 * PMD table per walk: a mapping of 3 GiB + 4 MiB with THPs on both sides
 * of a boundary, a whole GiB never touched (no PMD table there) and a THP
 * beyond it. */
TEST(proc_usage_equals_figures_across_pmd_tables)
{
	const uint64_t gib = MB(1024);
	thps_proc *p;
	uint64_t a, start, rss, huge;

	tmachine(64, "transparent_hugepage/enabled=always", NULL);
	p = tproc();
	a = tmmap_aligned(p, 3 * gib + MB(4));
	start = (a + gib - 1) & ~(gib - 1); /* the first 1 GiB boundary inside */
	ASSERT(start > a && a + 3 * gib + MB(4) > start + 2 * gib + MB(4));
	twrite(p, start - HPAGE, HPAGE, HPAGE, 1);         /* last THP before it */
	twrite(p, start, 2 * HPAGE, HPAGE, 2);             /* first two after it */
	twrite(p, start + gib - HPAGE, HPAGE, HPAGE, 3);   /* last before the next */
	twrite(p, a + 3 * gib + MB(2), HPAGE, HPAGE, 4);   /* the mapping's last THP */
	ASSERT_OK(thps_proc_usage(p, &rss, &huge));
	ASSERT_EQ(rss, fig(p, THPS_PROC_Rss));
	ASSERT_EQ(huge, fig(p, THPS_PROC_AnonHugePages));
	ASSERT_EQ(huge, 5 * 2048);
	texit(p);
}
