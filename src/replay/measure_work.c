/*
 * measure_work.c - the work a policy costs: the kernel's counters of THP
 * work (replay.h, REPLAY_WORK_VM and the mTHP sizes' fault counters), with
 * the bytes each event allocates and when the events happened.
 *
 * At each sample of the series (the engine's ticks) and at the end, the
 * counters are read from the machine and the difference from the last
 * reading is the work of that interval: the first and last intervals with
 * any, and the busiest one, say when the work came (the latency a program
 * sees: a fault that zeroes 2 MiB, a collapse while it runs).  Where each
 * event came from is the kernel's function that counts it (huge_memory.c,
 * khugepaged.c, memory.c), as in Linux.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "measure.h"

#define WORK_KB(name, kb, desc) kb,
#define WORK_DESC(name, kb, desc) desc,
#define WORK_NAME(name, kb, desc) #name,
#define WORK_ITEM(name, kb, desc) THPS_VM_##name,
static const uint64_t vm_kb[] = { REPLAY_WORK_VM(WORK_KB) };
static const char *const vm_desc[] = { REPLAY_WORK_VM(WORK_DESC) };
static const char *const vm_name[] = { REPLAY_WORK_VM(WORK_NAME) };
static const int vm_item[] = { REPLAY_WORK_VM(WORK_ITEM) };
#undef WORK_KB
#undef WORK_DESC
#undef WORK_NAME
#undef WORK_ITEM

/* An mTHP row: its order and whether it counts fallbacks. */
static int mthp_order(int row)
{
	return THPS_MTHP_MIN_ORDER + (row - REPLAY_WORK_MTHP) / 2;
}

static int mthp_fallback(int row)
{
	return (row - REPLAY_WORK_MTHP) % 2;
}

const char *replay_work_name(int row, char *buf, size_t len)
{
	if (row < 0 || row >= REPLAY_NR_WORK)
		return NULL;
	if (row < REPLAY_WORK_MTHP)
		return vm_name[row];
	snprintf(buf, len, "%s %dkB", mthp_fallback(row) ? "anon_fault_fallback" : "anon_fault_alloc",
		 4 << mthp_order(row));
	return buf;
}

const char *replay_work_desc(int row)
{
	if (row < 0 || row >= REPLAY_NR_WORK)
		return NULL;
	if (row < REPLAY_WORK_MTHP)
		return vm_desc[row];
	return mthp_fallback(row) ? "faults that could have had a folio of this size and took smaller"
				  : "folios of this size allocated and zeroed at a fault";
}

/* The counts now, from the machine's counters (vm and mthp as
 * measure_figures.c reads them). */
static void counts_now(struct replay *r, uint64_t out[REPLAY_NR_WORK])
{
	uint64_t vm[THPS_NR_VM_ITEMS], st[THPS_NR_MTHP_STATS];

	thps_vmstat(r->m, vm);
	for (int i = 0; i < REPLAY_WORK_MTHP; i++)
		out[i] = vm[vm_item[i]];
	for (int row = REPLAY_WORK_MTHP; row < REPLAY_NR_WORK; row += 2) {
		if (thps_mthp_stats(r->m, mthp_order(row), st)) {
			out[row] = out[row + 1] = 0;
			continue;
		}
		out[row] = st[THPS_MTHP_anon_fault_alloc];
		out[row + 1] = st[THPS_MTHP_anon_fault_fallback];
	}
}

/* The interval (work_seen_ns, now]: each row's events in it. */
static void work_interval(struct replay *r)
{
	struct replay_result *res = r->res;
	uint64_t now[REPLAY_NR_WORK];

	counts_now(r, now);
	for (int i = 0; i < REPLAY_NR_WORK; i++) {
		struct replay_work *w = &res->work[i];
		uint64_t d = now[i] > res->work_seen[i] ? now[i] - res->work_seen[i] : 0;

		if (!d)
			continue;
		if (!w->count)
			w->first_ns = r->now_ns;
		w->last_ns = r->now_ns;
		w->count += d;
		if (d > w->busiest) {
			w->busiest = d;
			w->busiest_from_ns = res->work_seen_ns;
			w->busiest_to_ns = r->now_ns;
		}
	}
	memcpy(res->work_seen, now, sizeof(now));
	res->work_seen_ns = r->now_ns;
}

static void work_begin(struct replay *r)
{
	struct replay_result *res = r->res;

	for (int i = 0; i < REPLAY_NR_WORK; i++)
		res->work[i] = (struct replay_work){
			.kb_each = i < REPLAY_WORK_MTHP ? vm_kb[i]
				   : mthp_fallback(i) ? 0 : 4ULL << mthp_order(i)
		};
	counts_now(r, res->work_seen); /* a machine's own work before the trace: none of it */
	res->work_seen_ns = r->now_ns;
}

static void work_tick(struct replay *r, uint64_t idx)
{
	(void)idx;
	work_interval(r);
}

static void work_finish(struct replay *r)
{
	work_interval(r);
}

static void work_json(struct json *j, const struct replay_result *res)
{
	char buf[48];

	json_begin_object(j, "work");
	for (int i = 0; i < REPLAY_NR_WORK; i++) {
		const struct replay_work *w = &res->work[i];

		json_begin_object(j, replay_work_name(i, buf, sizeof(buf)));
		json_uint(j, "count", w->count);
		json_uint(j, "kB", w->count * w->kb_each);
		if (w->count) {
			json_double(j, "first_s", (double)w->first_ns * 1e-9);
			json_double(j, "last_s", (double)w->last_ns * 1e-9);
			json_uint(j, "busiest_count", w->busiest);
			json_double(j, "busiest_from_s", (double)w->busiest_from_ns * 1e-9);
			json_double(j, "busiest_to_s", (double)w->busiest_to_ns * 1e-9);
		}
		json_end_object(j);
	}
	json_end_object(j);
}

static void work_text(FILE *f, const struct replay_result *res)
{
	char buf[48], name[48];
	int any = 0;

	for (int i = 0; i < REPLAY_NR_WORK; i++) {
		const struct replay_work *w = &res->work[i];

		if (!w->count)
			continue;
		if (!any++)
			fprintf(f, "\nthe THP work (the kernel's counters; times in the trace, s):\n"
				   "  %-30s %9s %11s %9s %9s %22s\n", "", "count", "kB", "first", "last",
				"busiest interval");
		snprintf(buf, sizeof(buf), "%" PRIu64 " in %.3f-%.3f", w->busiest,
			 (double)w->busiest_from_ns * 1e-9, (double)w->busiest_to_ns * 1e-9);
		fprintf(f, "  %-30s %9" PRIu64 " %11" PRIu64 " %9.3f %9.3f %22s\n",
			replay_work_name(i, name, sizeof(name)), w->count, w->count * w->kb_each,
			(double)w->first_ns * 1e-9, (double)w->last_ns * 1e-9, buf);
	}
	if (!any)
		fprintf(f, "\nthe THP work: none (no THP allocated, split or collapsed)\n");
}

const struct replay_measure measure_work = {
	.name = "work",
	.begin = work_begin,
	.tick = work_tick,
	.finish = work_finish,
	.json = work_json,
	.text = work_text,
};
