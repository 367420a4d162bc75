/*
 * measure_figures.c - the figures the kernel would show: each address
 * space's smaps_rollup and status at its end, the machine's meminfo at
 * the end of the program and at its peak, and /proc/vmstat and the
 * per-size mTHP stats/ at the end of the run.
 *
 * The machine's peaks are taken at every sample (measure_series.c asks
 * for them with figures_machine_now) and at every exit.  Its final
 * figures are taken when the last process alive ends, or at the end of
 * the trace for those still alive, with the sum of their Pss (in the
 * model, anonymous memory only, that sum equals AnonPages).
 */
#include "measure.h"

void figures_machine_now(struct replay *r, uint64_t *anon_pages, uint64_t *mem_huge)
{
	uint64_t mi[THPS_NR_MEMINFO_ITEMS];

	thps_meminfo(r->m, mi);
	*anon_pages = mi[THPS_MEM_AnonPages];
	*mem_huge = mi[THPS_MEM_AnonHugePages];
	if (*anon_pages > r->res->peak_anon_pages_kb)
		r->res->peak_anon_pages_kb = *anon_pages;
	if (*mem_huge > r->res->peak_meminfo_huge_kb)
		r->res->peak_meminfo_huge_kb = *mem_huge;
}

/* The machine's figures at the end of the program: meminfo and the sum
 * of the live processes' Pss (each shared page divided among its
 * mappers, so the sum counts it once).  known: a process whose figures
 * were just taken (its final ones), or NULL. */
static void machine_final(struct replay *r, const struct replay_mm *known)
{
	struct replay_result *res = r->res;
	uint64_t fig[THPS_NR_PROC_ITEMS], a, h;

	figures_machine_now(r, &a, &h);
	thps_meminfo(r->m, res->final_meminfo);
	res->final_pss_sum_kb = 0;
	for (int i = 0; i < res->nmms; i++)
		if (res->mms[i] == known) {
			res->final_pss_sum_kb += known->final[THPS_PROC_Pss];
		} else if (!res->mms[i]->ended && res->mms[i]->proc) {
			thps_proc_figures(res->mms[i]->proc, fig);
			res->final_pss_sum_kb += fig[THPS_PROC_Pss];
		}
}

static void figures_mm_end(struct replay *r, struct replay_mm *mm)
{
	struct replay_result *res = r->res;
	uint64_t a, h;
	int live = 0;

	figures_machine_now(r, &a, &h); /* cheap: the peaks are exact */
	for (int i = 0; i < res->nmms; i++)
		live += !res->mms[i]->ended;
	/* its figures first: the machine's end, if it is the last one alive,
	 * takes its Pss from them rather than walk its page tables again
	 * (a third of the time at the exit of a process whose THPs were split) */
	thps_proc_figures(mm->proc, mm->final);
	if (live == 1 && !r->final_taken)
		machine_final(r, mm); /* the last one alive, so far: the end */
	mm->final_file_cow_kb = mm->cow_n * 4;
	foreign_cow_by_range(mm); /* without memory, only the total */
}

/* What is alive at the end of the trace ends there, all together. */
static void figures_trace_end(struct replay *r)
{
	for (int i = 0; i < r->res->nmms; i++)
		if (!r->res->mms[i]->ended) {
			machine_final(r, NULL);
			r->final_taken = 1;
			return;
		}
}

static void figures_finish(struct replay *r)
{
	thps_vmstat(r->m, r->res->vm);
	for (int order = THPS_MTHP_MIN_ORDER; order <= THPS_MTHP_MAX_ORDER; order++)
		thps_mthp_stats(r->m, order, r->res->mthp[order]);
}

const struct replay_measure measure_figures = {
	.name = "figures",
	.mm_end = figures_mm_end,
	.trace_end = figures_trace_end,
	.finish = figures_finish,
};
