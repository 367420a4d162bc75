/*
 * test_patches.c - one test per patch of "Introduce huge zero page" (Kirill
 * A. Shutemov, 2012; ../shared/seeds/002..011), named after the behaviour
 * it checks; the comment above each gives the patch's number and title.
 *
 * Expected figures are the kernel's: the patches' own text, the Linux 6.18
 * functions they became (mm/huge_memory.c), the selftest
 * tools/testing/selftests/mm/cow.c, and what a Linux 6.18 host showed
 * for the same steps (docs/kernel-observations.md).  Each test runs every
 * lifetime and write-fault choice where the patch's behaviour depends on it.
 */
#include <pthread.h>

#include "../test.h"

static const char *const lifetimes[] = { "refcount", "per-mm", "persistent" };

#define RW (THPS_PROT_READ | THPS_PROT_WRITE)

/* A process with a 2 MiB-aligned THP-eligible region of len bytes. */
static thps_proc *proc_with_region(uint64_t len, uint64_t *addr)
{
	thps_proc *p = tproc();

	*addr = tmmap_aligned(p, len);
	tmadvise(p, *addr, len, THPS_MADV_HUGEPAGE);
	return p;
}

/* 01 "thp: huge zero page: basic preparation": one zero-filled order-9
 * page; is_huge_zero_pfn() matches nothing until it exists. */
TEST(hzp_is_one_zero_filled_order9_page)
{
	thps_proc *p;
	uint64_t a, free_before;
	struct thps_pageinfo pi;
	static uint8_t buf[2 << 20];

	tmachine(64, NULL);
	p = proc_with_region(MB(4), &a);
	/* before it exists, no mapping is the huge zero page, not even pfn 0
	 * (the 4 KiB zero page): huge_zero_pfn starts at ~0 */
	tknob("transparent_hugepage/enabled", "never");
	tread(p, a + MB(2), PAGE, PAGE, 0);
	pi = tpage(p, a + MB(2));
	ASSERT(pi.present && pi.zero_page && !pi.huge_zero && !pi.huge);
	tknob("transparent_hugepage/enabled", "madvise");

	free_before = tmeminfo(THPS_MEM_MemFree);
	tread(p, a, PAGE, PAGE, 0);
	pi = tpage(p, a);
	ASSERT(pi.present && pi.huge && pi.huge_zero && !pi.writable);
	ASSERT_EQ(pi.pfn % 512, 0);
	/* an order-9 allocation: 2 MiB of RAM leave the free pool */
	ASSERT_LE(tmeminfo(THPS_MEM_MemFree) + 2048, free_before);
	/* zero-filled, all 2 MiB */
	memset(buf, 0xaa, sizeof(buf));
	ASSERT_OK(thps_read(p, a, buf, sizeof(buf)));
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i])
			test_fail(__FILE__, __LINE__, "huge zero page byte %zu is %#x", i, buf[i]);
	tcheck();
	texit(p);
}

/* thps_pmd_mapped (the coverage series' question, many ranges at once)
 * answers as thps_pageinfo's huge: a PMD maps the huge zero page (a read)
 * and a THP (a write) under madvise; not a range written under never (4 KiB
 * pages), one never touched, nor an address nothing maps. */
TEST(pmd_mapped_agrees_with_pageinfo)
{
	thps_proc *p;
	uint64_t a, addr[5];
	uint8_t mapped[5];
	const uint8_t want[5] = { 1, 1, 0, 0, 0 };

	tmachine(64, NULL);
	p = proc_with_region(MB(8), &a);
	tread(p, a, PAGE, PAGE, 0);
	twrite(p, a + MB(2), PAGE, PAGE, 1);
	tknob("transparent_hugepage/enabled", "never");
	twrite(p, a + MB(6), PAGE, PAGE, 1);
	tknob("transparent_hugepage/enabled", "madvise");
	addr[0] = a + 12345;
	addr[1] = a + MB(2) + PAGE;
	addr[2] = a + MB(4);
	addr[3] = a + MB(6);
	addr[4] = 0x1000;
	memset(mapped, 7, sizeof(mapped));
	ASSERT_OK(thps_pmd_mapped(p, addr, 5, mapped));
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(mapped[i], want[i]);
		ASSERT_EQ(mapped[i], (uint8_t)tpage(p, addr[i]).huge);
	}
	ASSERT_OK(thps_pmd_mapped(p, addr, 0, mapped)); /* nothing asked */
	tcheck();
	texit(p);
}

/* 02 "thp: zap_huge_pmd(): zap huge zero pmd": clearing the PMD frees the
 * deposited table and nothing else; Rss never moved. */
TEST(hzp_zap_frees_only_the_deposited_table)
{
	for (size_t l = 0; l < 3; l++) {
		thps_proc *p;
		uint64_t a, pte_kb;

		tmachine(64, NULL);
		tknob("thpsim/huge_zero_page_lifetime", lifetimes[l]);
		p = proc_with_region(MB(4), &a);
		tread(p, a, MB(4), PAGE, 0);
		ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 1);
		pte_kb = fig(p, THPS_PROC_VmPTE);
		ASSERT_EQ(fig(p, THPS_PROC_Rss), 0);

		/* MADV_DONTNEED of the whole first 2 MiB: a zap, no split */
		tmadvise(p, a, MB(2), THPS_MADV_DONTNEED);
		ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 0);
		ASSERT(!tpage(p, a).present);
		ASSERT(tpage(p, a + MB(2)).huge_zero);
		ASSERT_EQ(fig(p, THPS_PROC_VmPTE), pte_kb - 4); /* the deposited table */
		ASSERT_EQ(fig(p, THPS_PROC_Rss), 0);

		/* the second PMD goes with munmap */
		tmunmap(p, a + MB(2), MB(2));
		ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 0);

		/* with no mapping left, only the per-mapping lifetime lets the
		 * shrinker free the page while the process lives */
		tdrop_caches();
		tread(p, a, PAGE, PAGE, 0);
		ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), l == 0 ? 2 : 1);
		texit(p);
	}
}

/* 03 "thp: copy_huge_pmd(): copy huge zero page": fork maps the same huge
 * zero page in the child; nothing is allocated; writes stay private
 * (cow.c: "Basic COW after fork() with huge zeropage"). */
TEST(hzp_fork_maps_it_in_the_child_without_allocating)
{
	for (size_t l = 0; l < 3; l++) {
		thps_proc *p, *c;
		uint64_t a;

		tmachine(64, NULL);
		tknob("thpsim/huge_zero_page_lifetime", lifetimes[l]);
		p = proc_with_region(MB(2), &a);
		tread(p, a, MB(2), PAGE, 0);
		vm_mark();
		c = tfork(p);
		ASSERT(tpage(c, a).huge_zero);
		ASSERT_EQ(tpage(c, a).pfn, tpage(p, a).pfn);
		ASSERT_EQ(fig(c, THPS_PROC_Rss), 0);
		/* the child reads without faulting: the PMD was copied */
		tread(c, a, MB(2), PAGE, 0);
		ASSERT_EQ(vm_delta(THPS_VM_pgfault), 0);
		ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 0);

		/* the parent writes every byte: it gets a THP, the child reads 0 */
		twrite(p, a, MB(2), 1, 0xff);
		ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 1);
		ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
		tread(c, a, MB(2), 1, 0);
		ASSERT(tpage(c, a).huge_zero);
		/* and the child's own write gets its own */
		twrite(c, a + 5, 1, 1, 0x42);
		ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 2);
		tread(p, a + 5, 1, 1, 0xff);
		tread(c, a + 5, 1, 1, 0x42);
		tread(c, a + 6, 1, 1, 0);
		texit(c);
		texit(p);
	}
}

/* A write after a read: returns the process, region at *a. */
static thps_proc *read_then_write(uint64_t *a, int fail_thp)
{
	thps_proc *p = proc_with_region(MB(2), a);

	tread(p, *a, MB(2), PAGE, 0);
	vm_mark();
	if (fail_thp) /* the next data allocation, the THP, fails */
		thps_fail_alloc(T, THPS_ALLOC_PAGE, 1, 0);
	twrite(p, *a + 12345, 1, 1, 0x77);
	thps_fail_alloc(T, THPS_ALLOC_PAGE, 0, 0);
	tread(p, *a + 12345, 1, 1, 0x77);
	tread(p, *a, 12345, 1, 0);
	tread(p, *a + 12346, MB(2) - 12346, 1, 0);
	return p;
}

/* 04 "thp: do_huge_pmd_wp_page(): handle huge zero page": a write to the
 * huge zero page allocates a THP; when none can be had, a PTE table with
 * one new page at the fault address and the zero page elsewhere (3.8), or
 * the same reached by splitting (6.13+); 5.8-6.12 always split. */
TEST(hzp_write_allocates_a_thp_or_falls_back_to_ptes)
{
	static const char *const wp[] = { "alloc-or-pte", "split", "alloc-or-split" };

	for (size_t w = 0; w < 3; w++) {
		for (size_t l = 0; l < 3; l++) {
			/* "split" never tries a THP: nothing to fail there */
			for (int fail_thp = 0; fail_thp < (w == 1 ? 1 : 2); fail_thp++) {
				thps_proc *p;
				uint64_t a;
				int got_thp = w != 1 && !fail_thp;

				tmachine(64, NULL);
				tknob("thpsim/huge_zero_wp", wp[w]);
				tknob("thpsim/huge_zero_page_lifetime", lifetimes[l]);
				p = read_then_write(&a, fail_thp);
				if (got_thp) {
					ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 1);
					ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 2048);
					ASSERT_EQ(fig(p, THPS_PROC_Rss), 2048);
					ASSERT(tpage(p, a).huge && tpage(p, a).writable);
					ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 0);
					ASSERT_EQ(vm_delta(THPS_VM_thp_fault_fallback), 0);
				} else {
					/* 511 zero-page PTEs and one new page */
					ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 0);
					ASSERT_EQ(fig(p, THPS_PROC_Rss), 4);
					ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
					ASSERT(tpage(p, a).zero_page && !tpage(p, a).huge);
					ASSERT(!tpage(p, a + 12345).zero_page && tpage(p, a + 12345).writable);
					/* thp_fault_fallback counts the failed allocation;
					 * the split counts unless the 3.8 fallback built the
					 * table itself */
					ASSERT_EQ(vm_delta(THPS_VM_thp_fault_fallback), fail_thp);
					ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), w == 0 ? 0 : 1);
				}
				texit(p);
				tdrop_caches();
				ASSERT_EQ(tmeminfo(THPS_MEM_MemFree) + (l == 2 ? 2048 : 0), tmeminfo(THPS_MEM_MemTotal));
			}
		}
	}
}

/* 05 "thp: change_huge_pmd(): keep huge zero page write-protected":
 * mprotect of the whole 2 MiB changes the PMD in place; it never becomes
 * writable, so the next write still faults and allocates (notes §3 #11). */
TEST(hzp_mprotect_keeps_the_pmd_write_protected)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = proc_with_region(MB(2), &a);
	tread(p, a, MB(2), PAGE, 0);
	tmprotect(p, a, MB(2), THPS_PROT_READ);
	tmprotect(p, a, MB(2), RW);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 0);
	ASSERT(tpage(p, a).huge_zero && !tpage(p, a).writable);
	twrite(p, a, 1, 1, 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 1);

	/* a THP this process owns alone becomes writable again without a
	 * fault (can_change_pmd_writable) */
	tmprotect(p, a, MB(2), THPS_PROT_READ);
	ASSERT(!tpage(p, a).writable);
	tmprotect(p, a, MB(2), RW);
	ASSERT(tpage(p, a).writable);
	vm_mark();
	twrite(p, a + 1, 1, 1, 2);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 0);
	texit(p);
}

/* 06 "thp: change split_huge_page_pmd() interface": splitting takes the VMA
 * and an address, and splits the PMD that maps that address, nothing else. */
TEST(hzp_split_takes_the_pmd_of_one_address_only)
{
	thps_proc *p;
	uint64_t a;

	tmachine(64, NULL);
	p = proc_with_region(MB(6), &a);
	tread(p, a, MB(6), PAGE, 0);
	/* a VMA boundary at a + 2 MiB + 4 KiB: only the middle PMD splits */
	tmprotect(p, a + MB(2) + PAGE, PAGE, THPS_PROT_READ);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
	ASSERT(tpage(p, a).huge_zero);
	ASSERT(!tpage(p, a + MB(2)).huge && tpage(p, a + MB(2)).zero_page);
	ASSERT(tpage(p, a + MB(4)).huge_zero);
	/* a boundary on a 2 MiB edge splits nothing */
	tmprotect(p, a + MB(4), MB(2), THPS_PROT_READ);
	ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
	ASSERT(tpage(p, a + MB(4)).huge_zero);
	tread(p, a, MB(6), PAGE, 0);
	texit(p);
}

/* 07 "thp: implement splitting pmd for huge zero page": the PMD becomes a
 * table of 512 zero-page PTEs; the page itself is never split.  Rss stays 0
 * (notes §3 #12, #14, #15). */
TEST(hzp_split_maps_512_zero_page_ptes)
{
	for (size_t l = 0; l < 3; l++) {
		thps_proc *p;
		uint64_t a;

		tmachine(64, NULL);
		tknob("thpsim/huge_zero_page_lifetime", lifetimes[l]);
		p = proc_with_region(MB(2), &a);
		tread(p, a, MB(2), PAGE, 0);
		tmadvise(p, a, PAGE, THPS_MADV_DONTNEED);
		ASSERT_EQ(vm_delta(THPS_VM_thp_split_pmd), 1);
		ASSERT(!tpage(p, a).present);
		for (uint64_t off = PAGE; off < MB(2); off += PAGE) {
			struct thps_pageinfo pi = tpage(p, a + off);

			ASSERT(pi.present && pi.zero_page && !pi.huge && !pi.writable);
		}
		ASSERT_EQ(fig(p, THPS_PROC_Rss), 0);
		/* re-reading the zapped page maps the 4 KiB zero page: the PMD
		 * is a table now */
		vm_mark();
		tread(p, a, MB(2), PAGE, 0);
		ASSERT_EQ(vm_delta(THPS_VM_pgfault), 1);
		ASSERT(tpage(p, a).zero_page);
		/* a write after the split copies 4 KiB */
		twrite(p, a + PAGE, 1, 1, 9);
		ASSERT_EQ(fig(p, THPS_PROC_Rss), 4);
		ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 0);
		texit(p);
	}
}

/* 08 "thp: setup huge zero page on non-write page fault": a read fault in a
 * THP-eligible range maps the huge zero page; one fault per 2 MiB. */
TEST(hzp_read_fault_maps_it_once_per_2mib)
{
	thps_proc *p;
	uint64_t a;

	/* THP on for the region: 2 faults for 4 MiB, no Rss */
	tmachine(64, NULL);
	p = proc_with_region(MB(4), &a);
	tread(p, a, MB(4), PAGE, 0);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 2);
	ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 1);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 0);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 0);
	texit(p);

	/* madvise mode without MADV_HUGEPAGE: 4 KiB zero pages, 1024 faults */
	tmachine(64, NULL);
	p = tproc();
	a = tmmap_aligned(p, MB(4));
	tread(p, a, MB(4), PAGE, 0);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 1024);
	ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 0);
	ASSERT(tpage(p, a).zero_page);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 0);
	texit(p);

	/* use_zero_page=0, the kernel before the series: a read allocates */
	tmachine(64, "transparent_hugepage/use_zero_page=0", NULL);
	p = proc_with_region(MB(4), &a);
	tread(p, a, MB(4), PAGE, 0);
	ASSERT_EQ(vm_delta(THPS_VM_pgfault), 2);
	ASSERT_EQ(vm_delta(THPS_VM_thp_fault_alloc), 2);
	ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 0);
	ASSERT_EQ(fig(p, THPS_PROC_Rss), 4096);
	ASSERT_EQ(fig(p, THPS_PROC_AnonHugePages), 4096);
	texit(p);
}

struct racer {
	int ok;
	uint64_t pfn;
};

static void *race_first_fault(void *arg)
{
	struct racer *r = arg;
	thps_proc *p;
	uint64_t a;
	struct thps_touch t = { .len = PAGE, .step = PAGE, .op = THPS_TOUCH_READ, .check = 1 };
	struct thps_pageinfo pi;

	if (thps_proc_new(T, &p))
		return NULL;
	if (thps_mmap(p, 0, MB(2), RW, THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS, &a) ||
	    thps_madvise(p, a, MB(2), THPS_MADV_HUGEPAGE))
		return NULL;
	t.addr = a;
	if (thps_touch(p, &t) || t.mismatches || thps_pageinfo(p, a, &pi))
		return NULL;
	r->pfn = pi.pfn;
	r->ok = pi.huge_zero;
	thps_exit(p);
	return NULL;
}

/* 09 "thp: lazy huge zero page allocation": nothing is allocated until the
 * first read fault needs it; racing first faults install exactly one, the
 * losers free theirs (cmpxchg on huge_zero_pfn). */
TEST(hzp_allocated_at_first_read_fault_exactly_once)
{
	thps_proc *p;
	uint64_t a, b, free0;
	pthread_t th[4];
	struct racer r[4] = { { 0 } };

	tmachine(64, NULL);
	free0 = tmeminfo(THPS_MEM_MemFree);
	p = proc_with_region(MB(2), &a);
	ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 0);
	tread(p, a, PAGE, PAGE, 0);
	ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 1);
	/* a second region shares it (notes §3 #9) */
	b = tmmap_aligned(p, MB(2));
	tmadvise(p, b, MB(2), THPS_MADV_HUGEPAGE);
	tread(p, b, PAGE, PAGE, 0);
	ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 1);
	ASSERT_EQ(tpage(p, a).pfn, tpage(p, b).pfn);
	texit(p);
	tdrop_caches();
	ASSERT_EQ(tmeminfo(THPS_MEM_MemFree), free0);

	/* four processes race for the first fault, under the 3.8 lifetime */
	tmachine(64, "thpsim/huge_zero_page_lifetime=refcount", NULL);
	for (int i = 0; i < 4; i++)
		ASSERT_OK(pthread_create(&th[i], NULL, race_first_fault, &r[i]));
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	tcheck();
	for (int i = 0; i < 4; i++)
		ASSERT(r[i].ok);
	/* each allocation counts, winners' and losers' alike */
	ASSERT_LE(1, vm_delta(THPS_VM_thp_zero_page_alloc));
	ASSERT_LE(vm_delta(THPS_VM_thp_zero_page_alloc), 4);
	tdrop_caches();
	ASSERT_EQ(tmeminfo(THPS_MEM_MemFree), tmeminfo(THPS_MEM_MemTotal));
}

/* 10 "thp: implement refcounting for huge zero page": the shrinker frees the
 * page only when its own reference is the last; who holds the others is
 * the lifetime (notes §3 #28: a process reads and exits, drop_caches frees
 * it, the next reader allocates it again). */
TEST(hzp_shrinker_frees_it_only_when_unreferenced)
{
	for (size_t l = 0; l < 3; l++) {
		thps_proc *p, *c;
		uint64_t a, total;

		tmachine(64, NULL);
		tknob("thpsim/huge_zero_page_lifetime", lifetimes[l]);
		total = tmeminfo(THPS_MEM_MemTotal);
		p = proc_with_region(MB(4), &a);
		tread(p, a, MB(4), PAGE, 0);
		c = tfork(p);
		/* in use: the shrinker leaves it */
		tdrop_caches();
		tread(p, a, MB(4), PAGE, 0);
		ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), 1);
		texit(c);
		/* the parent still maps it: still there */
		tdrop_caches();
		ASSERT(tpage(p, a).huge_zero);
		texit(p);
		/* nobody uses it: freed, unless persistent */
		tdrop_caches();
		ASSERT_EQ(tmeminfo(THPS_MEM_MemFree) + (l == 2 ? 2048 : 0), total);
		p = proc_with_region(MB(2), &a);
		tread(p, a, PAGE, PAGE, 0);
		ASSERT_EQ(vm_delta(THPS_VM_thp_zero_page_alloc), l == 2 ? 1 : 2);
		texit(p);
	}
}

/* The shrinker also runs when an allocation fails: an unused huge zero page
 * gives its 2 MiB back to a process that needs them. */
TEST(hzp_shrinker_gives_it_back_when_allocation_fails)
{
	uint64_t written[2];

	for (int use_hzp = 0; use_hzp < 2; use_hzp++) {
		thps_proc *p;
		uint64_t a;
		struct thps_touch t = { .step = PAGE, .op = THPS_TOUCH_WRITE, .value = 1 };

		tmachine(64, NULL);
		if (use_hzp) {
			p = proc_with_region(MB(2), &a);
			tread(p, a, PAGE, PAGE, 0);
			texit(p); /* refcount back to the shrinker's 1 */
		}
		p = tproc();
		a = tmmap(p, 0, MB(128), RW, THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS);
		t.addr = a;
		t.len = MB(128);
		ASSERT_EQ(thps_touch(p, &t), -ENOMEM);
		written[use_hzp] = t.done;
		tcheck();
		texit(p);
	}
	/* the huge zero page's frames were reclaimed for the second run */
	ASSERT_EQ(written[0], written[1]);
}
