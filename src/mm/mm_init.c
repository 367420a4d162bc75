/*
 * mm_init.c - the machine: its memory, knobs and locks set up and torn down
 * (mirrors mm/mm_init.c, where Linux sizes and initialises memory at boot).
 *
 * Entry points: thps_machine_new, thps_machine_free.  A machine is a
 * booted kernel's memory manager: RAM of cfg->ram_bytes in free buddy
 * lists, the knobs at their defaults (Linux 6.18, sysfs.c), no processes.
 * Freeing it exits every process still running, then frees the huge zero
 * page (its last reference, the shrinker's) and the memory map.
 */
#include "internal.h"

int thps_machine_new(const struct thps_config *cfg, thps_machine **out)
{
	uint64_t ram = cfg && cfg->ram_bytes ? cfg->ram_bytes : 4ULL << 30;
	thps_machine *m;
	int err;

	*out = NULL;
	m = aligned_alloc(CACHELINE_BYTES, ALIGN_UP(sizeof(*m), CACHELINE_BYTES));
	if (!m)
		return -ENOMEM;
	memset(m, 0, sizeof(*m));
	spin_lock_init(&m->knob_lock);
	spin_lock_init(&m->stat_lock);
	spin_lock_init(&m->proc_lock);
	spin_lock_init(&m->fail_lock);
	spin_lock_init(&m->khugepaged_lock);
	spin_lock_init(&m->err_lock);
	knobs_init(&m->knobs);
	huge_memory_init(m);
	mem_cgroup_init(m);
	m->next_pid = 1;
	err = page_alloc_init(m, ram >> PAGE_SHIFT);
	if (err) {
		thps_machine_free(m);
		return err;
	}
	*out = m;
	return 0;
}

void thps_machine_free(thps_machine *m)
{
	if (!m)
		return;
	while (m->procs)
		thps_exit(m->procs);
	if (m->mem_map) {
		/* the shrinker's reference is the last one: free the page */
		if (READ_ONCE(m->huge_zero_pfn) != NO_PFN) {
			atomic_set(&m->huge_zero_refcount, 1);
			m->knobs.hzp_lifetime = HZP_PER_MM;
			shrink_huge_zero_page_scan(m);
		}
		page_alloc_exit(m);
	}
	huge_memory_exit(m);
	mem_cgroup_exit(m);
	spin_lock_destroy(&m->knob_lock);
	spin_lock_destroy(&m->stat_lock);
	spin_lock_destroy(&m->proc_lock);
	spin_lock_destroy(&m->fail_lock);
	spin_lock_destroy(&m->khugepaged_lock);
	spin_lock_destroy(&m->err_lock);
	free(m->check_scratch);
	free(m);
}
