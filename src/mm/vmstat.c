/*
 * vmstat.c - /proc/vmstat and /proc/meminfo (mirrors mm/vmstat.c and
 * fs/proc/meminfo.c).
 *
 * Linux keeps its event counters per CPU and sums them when /proc/vmstat is
 * read.  The model keeps them per process instead: a process's counters are
 * written only under its lock, so faults on different threads never share a
 * cache line, and they are folded into the machine's totals when it exits.
 * Work done outside any process (the shrinkers) counts in the machine's own
 * totals with atomic adds.  Gauges (nr_anon_pages, ...) are kept the same
 * way, as signed deltas that sum to the current value.
 */
#include "internal.h"

#define NAME_ITEM(name) #name,
static const char *const vm_item_names[] = { THPS_VM_EVENTS(NAME_ITEM)
					     THPS_VM_GAUGES(NAME_ITEM) };
static const char *const proc_item_names[] = { THPS_PROC_FIGURES(NAME_ITEM) };
static const char *const meminfo_names[] = { THPS_MEMINFO(NAME_ITEM) };
static const char *const mthp_stat_names[] = { THPS_MTHP_STATS(NAME_ITEM) };
#undef NAME_ITEM

const char *thps_vm_item_name(int item)
{
	if (item < 0 || item >= THPS_NR_VM_ITEMS)
		return NULL;
	return vm_item_names[item];
}

const char *thps_proc_item_name(int item)
{
	return item >= 0 && item < THPS_NR_PROC_ITEMS ? proc_item_names[item] : NULL;
}

const char *thps_meminfo_item_name(int item)
{
	return item >= 0 && item < THPS_NR_MEMINFO_ITEMS ? meminfo_names[item] : NULL;
}

const char *thps_mthp_stat_name(int stat)
{
	return stat >= 0 && stat < THPS_NR_MTHP_STATS ? mthp_stat_names[stat] : NULL;
}

_Static_assert(THPS_MTHP_MAX_ORDER == HPAGE_PMD_ORDER, "the largest mTHP size is the PMD's");

int thps_mthp_stats(thps_machine *m, int order, uint64_t out[THPS_NR_MTHP_STATS])
{
	if (order < THPS_MTHP_MIN_ORDER || order > THPS_MTHP_MAX_ORDER)
		return -EINVAL;
	for (int i = 0; i < THPS_NR_MTHP_STATS; i++) {
		int64_t v = __atomic_load_n(&m->mthp_stat[order][i], __ATOMIC_RELAXED);

		out[i] = v < 0 ? 0 : (uint64_t)v;
	}
	return 0;
}

/* An exiting process's counters join the machine's totals. */
void vmstat_fold_mm(struct thps_machine *m, struct mm_struct *mm)
{
	for (int i = 0; i < THPS_NR_VM_ITEMS; i++) {
		int64_t v = READ_ONCE(mm->stat.v[i]);

		if (v)
			__atomic_fetch_add(&m->stat.v[i], v, __ATOMIC_RELAXED);
		WRITE_ONCE(mm->stat.v[i], 0);
	}
}

void thps_vmstat(thps_machine *m, uint64_t out[THPS_NR_VM_ITEMS])
{
	int64_t sum[THPS_NR_VM_ITEMS];

	spin_lock(&m->proc_lock);
	for (int i = 0; i < THPS_NR_VM_ITEMS; i++)
		sum[i] = __atomic_load_n(&m->stat.v[i], __ATOMIC_RELAXED);
	for (struct thps_proc *p = m->procs; p; p = p->next)
		for (int i = 0; i < THPS_NR_VM_ITEMS; i++)
			sum[i] += READ_ONCE(p->mm.stat.v[i]);
	spin_unlock(&m->proc_lock);
	for (int i = 0; i < THPS_NR_VM_ITEMS; i++)
		out[i] = sum[i] < 0 ? 0 : (uint64_t)sum[i];
	out[THPS_VM_nr_free_pages] = nr_free_pages(m);
}

void thps_meminfo(thps_machine *m, uint64_t out[THPS_NR_MEMINFO_ITEMS])
{
	uint64_t v[THPS_NR_VM_ITEMS];
	const uint64_t kb = PAGE_SIZE >> 10;

	thps_vmstat(m, v);
	out[THPS_MEM_MemTotal] = m->totalram_pages * kb;
	out[THPS_MEM_MemFree] = v[THPS_VM_nr_free_pages] * kb;
	out[THPS_MEM_AnonPages] = v[THPS_VM_nr_anon_pages] * kb;
	out[THPS_MEM_AnonHugePages] = v[THPS_VM_nr_anon_transparent_hugepages] * HPAGE_PMD_NR * kb;
	out[THPS_MEM_PageTables] = v[THPS_VM_nr_page_table_pages] * kb;
}
