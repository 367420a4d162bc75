/*
 * test_mthp.c - multi-size THP where a kernel cannot be made to show it:
 * allocation failure and the fallback order by order (alloc_anon_folio in
 * Linux 6.8+ mm/memory.c: each failed size counts anon_fault_fallback and
 * the next lower enabled one is tried, at last a 4 KiB page), and what the
 * profile of a kernel before 6.8 leaves out.  The rest is in the mthp-*
 * scenarios, checked against Linux 6.12 in make check-kernels.
 */
#include "../test.h"

static uint64_t mthp(int order, int item)
{
	uint64_t v[THPS_NR_MTHP_STATS];

	ASSERT_OK(thps_mthp_stats(T, order, v));
	return v[item];
}

/* 64K and 16K on; the first allocation (the 64 KiB folio) fails: one
 * anon_fault_fallback for 64K, then a 16 KiB folio. */
TEST(mthp_allocation_failure_falls_back_order_by_order)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, "transparent_hugepage/hugepages-64kB/enabled=always",
		 "transparent_hugepage/hugepages-16kB/enabled=always", NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	thps_fail_alloc(T, THPS_ALLOC_PAGE, 1, 0);
	twrite(p, a, 1, 1, 7);
	ASSERT_EQ(mthp(4, THPS_MTHP_anon_fault_fallback), 1);
	ASSERT_EQ(mthp(4, THPS_MTHP_anon_fault_alloc), 0);
	ASSERT_EQ(mthp(2, THPS_MTHP_anon_fault_alloc), 1);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 16);
	/* the next fault: 64 KiB again */
	twrite(p, a + KB(64), 1, 1, 7);
	ASSERT_EQ(mthp(4, THPS_MTHP_anon_fault_alloc), 1);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 80);
	thps_fail_alloc(T, THPS_ALLOC_PAGE, 0, 0);
}

/* Linux 6.1's profile (thpsim/mthp=0): the knob is accepted, no size below
 * 2 MiB is ever mapped. */
TEST(mthp_not_offered_before_6_8)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, "thpsim/kernel=6.1", "transparent_hugepage/hugepages-64kB/enabled=always",
		 NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(2));
	twrite(p, a, 1, 1, 7);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 4);
	ASSERT_EQ(mthp(4, THPS_MTHP_anon_fault_alloc), 0);
	ASSERT_EQ(tpage(p, a + PAGE).present, 0);
}

/* The sizes below 2 MiB came with Linux 6.8 ("mm: thp: introduce multi-size
 * THP sysfs interface"); hugepages-2048kB/enabled is emulated with the
 * global mode on older kernels, and a size set to never is how a kernel
 * without the file behaves, so only those other settings are refused. */
TEST(mthp_knob_offered_from_6_8)
{
	static const char k64[] = "transparent_hugepage/hugepages-64kB/enabled";
	char why[160] = "";

	tmachine(64, "thpsim/kernel=6.1", NULL);
	ASSERT_EQ(thps_knob_offered(T, k64, "always", why, sizeof(why)), 0);
	ASSERT(strstr(why, "Linux 6.8") && strstr(why, "thpsim/mthp=0"));
	ASSERT_EQ(thps_knob_offered(T, k64, "madvise", why, sizeof(why)), 0);
	ASSERT_EQ(thps_knob_offered(T, k64, "never", why, sizeof(why)), 1);
	/* a bad value is thps_knob_set's to refuse, not a missing file */
	ASSERT_EQ(thps_knob_offered(T, k64, "sometimes", why, sizeof(why)), 1);
	ASSERT_EQ(thps_knob_offered(T, "transparent_hugepage/no-such-knob", "1", why, sizeof(why)),
		  1);
	ASSERT_EQ(thps_knob_offered(T, "transparent_hugepage/hugepages-2048kB/enabled", "always",
				    why, sizeof(why)), 1);
	ASSERT_EQ(thps_knob_offered(T, "transparent_hugepage/enabled", "always", why, sizeof(why)), 1);
	tknob("thpsim/kernel", "6.8");
	ASSERT_EQ(thps_knob_offered(T, k64, "always", why, sizeof(why)), 1);
}
