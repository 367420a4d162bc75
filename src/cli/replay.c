/*
 * replay.c - "thpsim replay TRACE": a recorded program under one THP policy.
 *
 * Without --set the policy is the recording machine's (the trace header
 * keeps its /sys/kernel/mm/transparent_hugepage settings), so the figures
 * predict what the program saw when it ran there without the recorder.
 * Output: per process and overall, final and peak figures with the
 * kernel's names; JSON adds each process's time series of Rss and
 * AnonHugePages, CSV is that time series alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "replay/replay.h"
#include "replay_out.h"
#include "util/json.h"

static const char usage_text[] =
	"usage: thpsim replay TRACE [TRACE]... [--set KNOB=VALUE]... [--format text|json|csv] "
	"[--ram GiB|SIZE] [--quiet] [--settle SECONDS] [--khugepaged on|off] [--sample-ms MS] "
	"[--as-recorded] [--layouts N] [--layout-seed S] [--khugepaged-phase MS]\n"
	"                     [--memory-max SIZE] [--memory-high SIZE] [--no-limit]\n"
	"  --memory-max, --memory-high: the program's memory cgroup (cgroup v2) limits, in\n"
	"  bytes or with K, M, G (or max): a THP whose charge does not fit falls back, reclaim\n"
	"  runs the THP shrinkers, and the cgroup's OOM killer ends a process when that is\n"
	"  not enough.\n"
	"  --layouts N: the trace under N address layouts (default " REPLAY_XSTR(REPLAY_LAYOUTS_DEFAULT) "; 1: the recorded one\n"
	"  alone): the recorded layout, then N-1 drawn from the seed (default 1) as Linux's\n"
	"  address randomisation would place the heap, the mmap base and the stack; each\n"
	"  figure that varies is given with its lowest, median and highest.  Layouts that cannot\n"
	"  change the figures (no mapping that could hold a THP is moved within 2 MiB, or only\n"
	"  the heap is and two heaps fall alike) are not replayed; under a memory limit all are.\n"
	"  Where only the heap's place matters and its offsets fall in more classes than N-1\n"
	"  (at most 4N), one layout runs in each class.  Where khugepaged collapses something\n"
	"  (waking at once, or at a quarter, half, three quarters or the end of its window, tried\n"
	"  in the recorded layout), each layout is also run with it waking at moments spread\n"
	"  through its window (from when the program's memory registers to the end of the trace,\n"
	"  or its sleep if shorter; 16 evenly under one layout; under 16, up to 2 moments where\n"
	"  the outcome changes, found by running the recorded layout at 16) and asleep\n"
	"  through the trace; --khugepaged-phase MS pins when it first wakes\n"
	"  after the program's memory registers (0: at once, as on an idle machine).\n"
	"  Several TRACEs, recordings of one command (thpsim record --runs N), are each replayed\n"
	"  under the same settings: their figures' lowest, median and highest, and each one's.";

int replay_parse_common(int argc, char **argv, int *i, struct knob_sets *sets,
			struct replay_opts *o, uint64_t *ram_gib)
{
	if (!strcmp(argv[*i], "--set") && *i + 1 < argc) {
		if (cli_add_set(sets, argv[++*i]))
			return 2;
		return 0;
	}
	if (!strcmp(argv[*i], "--ram") && *i + 1 < argc) {
		const char *v = argv[++*i];
		uint64_t bytes;

		/* a plain number is GiB; with K, M or G a size (a guest's free memory) */
		if (!cli_parse_u64(v, ram_gib))
			bytes = *ram_gib <= 4096 ? *ram_gib << 30 : 0;
		else if (cli_parse_size(v, &bytes))
			bytes = 0;
		if (bytes < (16ULL << 20) || bytes > (4096ULL << 30))
			return cli_usage("--ram takes GiB (1 to 4096), or a size with K, M or G from "
					 "16M, not '%s'", v);
		o->ram_bytes = bytes;
		*ram_gib = bytes >> 30;
		return 0;
	}
	if (!strcmp(argv[*i], "--free-blocks") && *i + 1 < argc) {
		char *s = argv[++*i], *end;

		o->nfree_blocks = 0;
		while (*s) {
			if (o->nfree_blocks == 11)
				return cli_usage("--free-blocks takes at most 11 counts (orders 0 to 10)");
			errno = 0;
			o->free_blocks[o->nfree_blocks++] = strtoull(s, &end, 10);
			if (end == s || errno || (*end && *end != ',') || *s == '-')
				return cli_usage("--free-blocks takes counts of free blocks of order 0, "
						 "1, ... as /proc/buddyinfo shows them, comma-separated, "
						 "not '%s'", argv[*i]);
			s = *end ? end + 1 : end;
		}
		if (!o->nfree_blocks)
			return cli_usage("--free-blocks: no count");
		return 0;
	}
	if (!strcmp(argv[*i], "--settle") && *i + 1 < argc) {
		uint64_t sec;

		if (cli_parse_u64(argv[++*i], &sec) || !sec || sec > 30 * 24 * 3600)
			return cli_usage("--settle takes seconds, 1 to 2592000 (30 days)");
		o->settle_ms = sec * 1000;
		return 0;
	}
	if (!strcmp(argv[*i], "--khugepaged") && *i + 1 < argc) {
		const char *v = argv[++*i];

		if (strcmp(v, "on") && strcmp(v, "off"))
			return cli_usage("--khugepaged takes on or off, not '%s'", v);
		o->no_khugepaged = !strcmp(v, "off");
		return 0;
	}
	if (!strcmp(argv[*i], "--sample-ms") && *i + 1 < argc) {
		uint64_t ms;

		if (cli_parse_u64(argv[++*i], &ms) || !ms || ms > 3600 * 1000)
			return cli_usage("--sample-ms takes milliseconds, 1 to 3600000");
		o->sample_every_ms = ms;
		return 0;
	}
	if (!strcmp(argv[*i], "--layouts") && *i + 1 < argc) {
		uint64_t n;

		if (cli_parse_u64(argv[++*i], &n) || !n || n > REPLAY_LAYOUTS_MAX)
			return cli_usage("--layouts takes a count, 1 to %d", REPLAY_LAYOUTS_MAX);
		o->layouts = (int)n;
		return 0;
	}
	if (!strcmp(argv[*i], "--khugepaged-phase") && *i + 1 < argc) {
		uint64_t ms;

		if (cli_parse_u64(argv[++*i], &ms) || ms > 3600 * 1000)
			return cli_usage("--khugepaged-phase takes milliseconds, 0 to 3600000");
		o->khugepaged_phase_ms = ms;
		o->khugepaged_phase_pinned = 1;
		return 0;
	}
	if (!strcmp(argv[*i], "--layout-seed") && *i + 1 < argc) {
		if (cli_parse_u64(argv[++*i], &o->layout_seed))
			return cli_usage("--layout-seed takes a number, not '%s'", argv[*i]);
		return 0;
	}
	if ((!strcmp(argv[*i], "--memory-max") || !strcmp(argv[*i], "--memory-high")) &&
	    *i + 1 < argc) {
		const char *opt = argv[*i], *v = argv[++*i];
		uint64_t bytes = THPS_MEMCG_NOLIMIT;

		if (strcmp(v, "max") && (cli_parse_size(v, &bytes) || bytes == THPS_MEMCG_NOLIMIT))
			return cli_usage("%s takes bytes (with K, M, G or T) or max, not '%s'", opt, v);
		if (!o->limit_set)
			o->memory_max = o->memory_high = THPS_MEMCG_NOLIMIT;
		o->limit_set = 1;
		if (!strcmp(opt, "--memory-max"))
			o->memory_max = bytes;
		else
			o->memory_high = bytes;
		return 0;
	}
	if (!strcmp(argv[*i], "--no-limit")) {
		o->no_limit = 1;
		return 0;
	}
	if (!strcmp(argv[*i], "--as-recorded")) {
		o->thp_disabled = 1;
		return 0;
	}
	if (!strcmp(argv[*i], "--quiet") || !strcmp(argv[*i], "-q")) {
		o->progress = 0;
		return 0;
	}
	return -1;
}

void replay_opts_add_sets(struct replay_opts *o, const struct knob_sets *sets)
{
	for (int k = 0; k < sets->n; k++)
		knob_sets_add_pair(&o->knobs, sets->name[k], sets->value[k]);
}

const char *replay_knob(const struct replay_result *res, const char *name)
{
	for (int i = 0; i < res->nknobs; i++)
		if (!strcmp(res->knob_name[i], name))
			return res->knob_value[i];
	return "?";
}

/* Sums of the processes' final figures. */
void replay_final_sums(const struct replay_result *res, uint64_t out[THPS_NR_PROC_ITEMS])
{
	memset(out, 0, sizeof(uint64_t) * THPS_NR_PROC_ITEMS);
	for (int i = 0; i < res->nmms; i++)
		for (int k = 0; k < THPS_NR_PROC_ITEMS; k++)
			out[k] += res->mms[i]->final[k];
}

uint64_t replay_peak_rss(const struct replay_result *res)
{
	uint64_t peak = res->overall_peak_rss_kb;

	/* a lone process's VmHWM is exact; the sampled sum may miss a peak */
	for (int i = 0; i < res->nmms; i++)
		if (res->mms[i]->final[THPS_PROC_VmHWM] > peak)
			peak = res->mms[i]->final[THPS_PROC_VmHWM];
	return peak;
}

uint64_t replay_peak_anon_huge(const struct replay_result *res)
{
	uint64_t peak = res->overall_peak_anon_huge_kb;

	for (int i = 0; i < res->nmms; i++)
		if (res->mms[i]->peak_anon_huge_kb > peak)
			peak = res->mms[i]->peak_anon_huge_kb;
	return peak;
}

int replay_print_oom(FILE *f, const struct replay_result *res, const char *label)
{
	if (!res->skips[REPLAY_SKIP_fault_oom])
		return 0;
	fprintf(f, "WARNING%s%s: %" PRIu64 " faults found no memory in the simulated machine: "
		   "these figures are too low; give it more with --ram GiB\n",
		label ? " " : "", label ? label : "", res->skips[REPLAY_SKIP_fault_oom]);
	return 1;
}

void replay_print_partial(FILE *f, const struct replay_result *res)
{
	if (!res->partial)
		return;
	fprintf(f, "PARTIAL: the trace stopped early: %s.\n  These figures cover its first %" PRIu64
		   " records (%.3f s of the recording), up to offset %" PRIu64 "; missing: ",
		res->partial_why, res->records, (double)res->duration_ns * 1e-9,
		res->partial_offset);
	if (res->partial_missing_bytes)
		fprintf(f, "the %" PRIu64 " bytes after it, ", res->partial_missing_bytes);
	fprintf(f, "whatever was not written, and the END record.\n  Processes alive at that "
		   "point end as \"trace cut\".\n");
}

void replay_print_skips(FILE *f, const struct replay_result *res)
{
	int any = 0;

	for (int i = 0; i < REPLAY_NR_SKIPS; i++) {
		if (!res->skips[i])
			continue;
		if (!any)
			fprintf(f, "not modelled or skipped:\n");
		any = 1;
		fprintf(f, "  %10" PRIu64 "  %s\n", res->skips[i], replay_skip_desc(i));
	}
	for (int i = 0; i < res->nnotes; i++)
		fprintf(f, "note: %s\n", res->notes[i]);
}

/* The share of the trace's records a kill came after, in per cent. */
double replay_kill_share(const struct replay_result *res, const struct replay_mm *mm)
{
	return res->records ? 100.0 * (double)mm->oom_kill_record / (double)res->records : 0.0;
}

static void print_limit(FILE *f, const char *name, uint64_t bytes)
{
	if (bytes == THPS_MEMCG_NOLIMIT)
		fprintf(f, "%s max", name);
	else
		fprintf(f, "%s %" PRIu64 " kB", name, bytes >> 10);
}

void replay_print_memcg(FILE *f, const struct replay_result *res)
{
	const struct thps_memcg_stat *s = &res->memcg;

	fprintf(f, "\nthe memory cgroup (charged: every anonymous folio whole, a THP 2 MiB at once "
		   "even\nwhen partly unmapped, and every page table):\n"
		   "  memory.current at the end %" PRIu64 " kB, memory.peak %" PRIu64 " kB; ",
		s->current_bytes >> 10, s->peak_bytes >> 10);
	print_limit(f, "memory.max", s->max_bytes);
	fprintf(f, ", ");
	print_limit(f, "memory.high", s->high_bytes);
	fprintf(f, "\n");
	if (!res->limited && !res->oom_kills)
		return;
	if (res->limited) {
		fprintf(f, "  memory.events:");
		for (int i = 0; i < THPS_NR_MEMCG_EVENTS; i++)
			fprintf(f, " %s %" PRIu64, thps_memcg_event_name(i), s->events[i]);
		fprintf(f, "\n");
	} else {
		fprintf(f, "  the machine's OOM killer: its memory (--ram) was full and reclaim "
			   "freed too little\n");
	}
	for (int i = 0; i < res->nmms; i++) {
		const struct replay_mm *mm = res->mms[i];

		if (mm->oom_killed)
			fprintf(f, "  OOM-killed: %s (pid %d) at %.3f s, after %.1f%% of the trace's "
				   "records; its peak Rss %" PRIu64 " kB\n",
				mm->name, mm->pid, (double)mm->oom_kill_ns * 1e-9,
				replay_kill_share(res, mm), mm->final[THPS_PROC_VmHWM]);
	}
	if (!res->limited)
		return;
	if (!res->oom_kills)
		fprintf(f, "  survives: no process was OOM-killed; memory.peak is %.1f%% of "
			   "memory.max\n",
			s->max_bytes == THPS_MEMCG_NOLIMIT || !s->max_bytes
				? 0.0 : 100.0 * (double)s->peak_bytes / (double)s->max_bytes);
	fprintf(f, "  not charged here: the program's file pages, kernel stacks and slab (not in "
		   "the trace),\n  and the per-CPU charge stock (up to 63 pages per CPU in "
		   "memory.current); swap is not\n  modelled: with swap, anonymous pages could "
		   "go there instead of a kill.\n");
}

static void json_limit(struct json *j, const char *key, uint64_t bytes)
{
	if (bytes == THPS_MEMCG_NOLIMIT)
		json_string(j, key, "max");
	else
		json_uint(j, key, bytes >> 10);
}

void replay_memcg_json(struct json *j, const struct replay_result *res)
{
	const struct thps_memcg_stat *s = &res->memcg;

	json_begin_object(j, "memcg");
	json_bool(j, "limited", res->limited);
	json_uint(j, "current_kB", s->current_bytes >> 10);
	json_uint(j, "peak_kB", s->peak_bytes >> 10);
	json_limit(j, "max_kB", s->max_bytes);
	json_limit(j, "high_kB", s->high_bytes);
	json_begin_object(j, "events");
	for (int i = 0; i < THPS_NR_MEMCG_EVENTS; i++)
		json_uint(j, thps_memcg_event_name(i), s->events[i]);
	json_end_object(j);
	json_uint(j, "oom_killed_processes", (uint64_t)res->oom_kills);
	json_end_object(j);
}

static double pct(int64_t d, uint64_t base)
{
	return base ? 100.0 * (double)d / (double)base : 0.0;
}

static void print_text(const char *path, const struct replay_result *res, int quiet)
{
	int never = !strcmp(replay_knob(res, "transparent_hugepage/enabled"), "never");

	printf("thpsim replay %s\n", path);
	printf("  recorded: %s (Linux %s): %" PRIu64 " records, %" PRIu64 " faults, %.3f s\n",
	       res->command, res->kernel, res->records, res->faults,
	       (double)res->duration_ns * 1e-9);
	printf("  policy: enabled=%s defrag=%s use_zero_page=%s max_ptes_none=%s\n",
	       replay_knob(res, "transparent_hugepage/enabled"),
	       replay_knob(res, "transparent_hugepage/defrag"),
	       replay_knob(res, "transparent_hugepage/use_zero_page"),
	       replay_knob(res, "transparent_hugepage/khugepaged/max_ptes_none"));
	if (res->khugepaged_on)
		printf("  khugepaged on the trace's clock: every %" PRIu64 " ms, %" PRIu64
		       " pages a wake-up: %" PRIu64 " wake-ups, %" PRIu64 " ranges collapsed\n",
		       res->khugepaged_scan_sleep_ms, res->khugepaged_pages_to_scan,
		       res->khugepaged_wakeups, res->khugepaged_collapsed);
	else
		printf("  khugepaged: off during the trace (--khugepaged off)\n");
	printf("  kernel profile: Linux %s, zero_page=%s (the recording kernel's unless --set "
	       "thpsim/kernel=X.Y; 'thpsim knobs' lists the rest)\n",
	       replay_knob(res, "thpsim/kernel"), replay_knob(res, "thpsim/zero_page"));
	if (res->unmodelled_knobs[0])
		printf("  settings of the recording machine the model does not have: %s\n",
		       res->unmodelled_knobs);
	if (res->partial) {
		printf("\n");
		replay_print_partial(stdout, res);
	}
	if (res->skips[REPLAY_SKIP_fault_oom]) {
		printf("\n");
		replay_print_oom(stdout, res, NULL);
	}
	printf("\n%-20s %7s %-12s %10s %12s %12s %10s %12s %8s %9s %9s\n", "process", "pid",
	       "ended by", "anonRss kB", "Anonymous kB", "AnonHuge kB", "VmHWM kB", "peak AHP kB",
	       "VmPTE kB", "+file kB", "faults");
	for (int i = 0; i < res->nmms; i++) {
		const struct replay_mm *mm = res->mms[i];

		printf("%-20.20s %7d %-12s %10" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64
		       " %12" PRIu64 " %8" PRIu64 " %9" PRIu64 " %9" PRIu64 "\n",
		       mm->name, mm->pid, mm->end, mm->final[THPS_PROC_Rss],
		       mm->final[THPS_PROC_Anonymous], mm->final[THPS_PROC_AnonHugePages],
		       mm->final[THPS_PROC_VmHWM], mm->peak_anon_huge_kb, mm->final[THPS_PROC_VmPTE],
		       mm->final_file_cow_kb, mm->faults);
	}
	printf("\nper process, final: just before it exited; VmHWM: its peak; peak AHP: its peak "
	       "AnonHugePages\n(sampled); anonRss: smaps_rollup Rss of its anonymous memory, the "
	       "only memory the model\nholds (the kernel's Rss adds file pages); +file: pages "
	       "the program wrote in private file\nmappings, which the kernel copies into "
	       "anonymous pages (in its Anonymous; not in the model's).\n");
	printf("\nthe machine (meminfo: each page once, however many processes map it):\n"
	       "  AnonPages      peak %10" PRIu64 " kB   final %10" PRIu64 " kB\n"
	       "  AnonHugePages  peak %10" PRIu64 " kB   final %10" PRIu64 " kB\n"
	       "  Pss, summed over the processes alive at the end: %" PRIu64 " kB\n"
	       "final: %s; peaks: at every sample and every exit.\n",
	       res->peak_anon_pages_kb, res->final_meminfo[THPS_MEM_AnonPages],
	       res->peak_meminfo_huge_kb, res->final_meminfo[THPS_MEM_AnonHugePages],
	       res->final_pss_sum_kb,
	       res->partial ? "where the readable trace ends"
			    : "when the last process alive ended (or at the end of the trace)");
	replay_print_memcg(stdout, res);
	printf("\nvmstat over the whole run:\n");
	printf("  pgfault %" PRIu64 ", thp_fault_alloc %" PRIu64 ", thp_fault_fallback %" PRIu64
	       ", thp_zero_page_alloc %" PRIu64 ", thp_split_pmd %" PRIu64
	       ", thp_deferred_split_page %" PRIu64 ", thp_split_page %" PRIu64 "\n",
	       res->vm[THPS_VM_pgfault], res->vm[THPS_VM_thp_fault_alloc],
	       res->vm[THPS_VM_thp_fault_fallback], res->vm[THPS_VM_thp_zero_page_alloc],
	       res->vm[THPS_VM_thp_split_pmd], res->vm[THPS_VM_thp_deferred_split_page],
	       res->vm[THPS_VM_thp_split_page]);
	if (res->limited || res->vm[THPS_VM_thp_underused_split_page])
		printf("  thp_fault_fallback_charge %" PRIu64 ", thp_underused_split_page %" PRIu64
		       "\n", res->vm[THPS_VM_thp_fault_fallback_charge],
		       res->vm[THPS_VM_thp_underused_split_page]);
	for (int i = 0, first = 1; i < res->nmms; i++) {
		const struct replay_mm *mm = res->mms[i];
		uint64_t pred = mm->model_at_kfig[THPS_PROC_Anonymous] + mm->kfig_file_cow_kb;
		int64_t d = (int64_t)pred - (int64_t)mm->kfig_anonymous;

		if (!mm->have_kfig)
			continue;
		if (first) {
			printf("\nthe recorded run (THP disabled by the recorder), what the kernel "
			       "reported at exit%s:\n", never ? " and the model" : "");
			first = 0;
		}
		if (never)
			printf("  %-16.16s %7d  Anonymous: kernel %" PRIu64 " kB, predicted %" PRIu64
			       " kB (model %" PRIu64 " + file %" PRIu64 ", %+.1f%%)  AnonHugePages: "
			       "kernel %" PRIu64 " kB, model %" PRIu64 " kB\n",
			       mm->name, mm->pid, mm->kfig_anonymous, pred,
			       mm->model_at_kfig[THPS_PROC_Anonymous], mm->kfig_file_cow_kb,
			       pct(d, mm->kfig_anonymous), mm->kfig_anon_huge,
			       mm->model_at_kfig[THPS_PROC_AnonHugePages]);
		else
			printf("  %-16.16s %7d  Anonymous %" PRIu64 " kB, AnonHugePages %" PRIu64
			       " kB, Rss %" PRIu64 " kB (compare with --set "
			       "transparent_hugepage/enabled=never)\n",
			       mm->name, mm->pid, mm->kfig_anonymous, mm->kfig_anon_huge, mm->kfig_rss);
	}
	replay_ranges_text(stdout, res);
	replay_measures_text(stdout, res);
	printf("\n");
	replay_print_skips(stdout, res);
	if (!quiet)
		fprintf(stderr, "thpsim replay: %" PRIu64 " records in %.2f s (%.1f M records/s)\n",
			res->records, res->seconds,
			res->seconds > 0 ? (double)res->records / res->seconds * 1e-6 : 0.0);
}

static void json_series(struct json *j, const char *key, const struct replay_series *s,
			const struct replay_series *machine)
{
	json_begin_array(j, key);
	for (int i = 0; i < s->n; i++) {
		json_begin_object(j, NULL);
		json_double(j, "t_s", (double)s->p[i].t_ns * 1e-9);
		json_uint(j, "Rss", s->p[i].rss_kb);
		json_uint(j, "AnonHugePages", s->p[i].anon_huge_kb);
		if (s == machine) {
			json_uint(j, "meminfo_AnonPages", s->p[i].anon_pages_kb);
			json_uint(j, "meminfo_AnonHugePages", s->p[i].mem_anon_huge_kb);
		}
		json_end_object(j);
	}
	json_end_array(j);
}

void replay_json_result(struct json *j, const struct replay_result *res, int with_series)
{
	uint64_t sums[THPS_NR_PROC_ITEMS];

	json_string(j, "command", res->command);
	json_string(j, "kernel", res->kernel);
	json_begin_object(j, "knobs");
	for (int i = 0; i < res->nknobs; i++)
		json_string(j, res->knob_name[i], res->knob_value[i]);
	json_end_object(j);
	json_string(j, "unmodelled_settings", res->unmodelled_knobs);
	json_uint(j, "records", res->records);
	json_uint(j, "faults", res->faults);
	json_uint(j, "lost_events", res->lost_events);
	json_double(j, "duration_s", (double)res->duration_ns * 1e-9);
	json_double(j, "replay_s", res->seconds);
	json_begin_object(j, "khugepaged");
	json_bool(j, "on", res->khugepaged_on);
	json_uint(j, "scan_sleep_millisecs", res->khugepaged_scan_sleep_ms);
	json_uint(j, "pages_to_scan", res->khugepaged_pages_to_scan);
	json_uint(j, "wakeups", res->khugepaged_wakeups);
	json_uint(j, "pages_collapsed", res->khugepaged_collapsed);
	json_end_object(j);
	json_bool(j, "partial", res->partial);
	if (res->partial) {
		json_string(j, "partial_reason", res->partial_why);
		json_uint(j, "partial_offset", res->partial_offset);
		json_uint(j, "partial_missing_bytes", res->partial_missing_bytes);
	}
	replay_final_sums(res, sums);
	/* the REPORT object of demo and run: vmstat, processes, meminfo */
	json_begin_object(j, "final");
	json_begin_object(j, "vmstat");
	for (int i = 0; i < THPS_NR_VM_ITEMS; i++)
		if (thps_vm_item_name(i))
			json_uint(j, thps_vm_item_name(i), res->vm[i]);
	json_end_object(j);
	/* hugepages-<size>kB/stats/ of each size that saw a folio */
	json_begin_object(j, "mthp");
	for (int o = THPS_MTHP_MIN_ORDER; o <= THPS_MTHP_MAX_ORDER; o++) {
		char size[16];
		uint64_t any = 0;

		for (int i = 0; i < THPS_NR_MTHP_STATS; i++)
			any |= res->mthp[o][i];
		if (!any)
			continue;
		snprintf(size, sizeof(size), "%dkB", 4 << o);
		json_begin_object(j, size);
		for (int i = 0; i < THPS_NR_MTHP_STATS; i++)
			json_uint(j, thps_mthp_stat_name(i), res->mthp[o][i]);
		json_end_object(j);
	}
	json_end_object(j);
	json_begin_array(j, "processes");
	for (int p = 0; p < res->nmms; p++) {
		const struct replay_mm *mm = res->mms[p];

		json_begin_object(j, NULL);
		json_int(j, "pid", mm->pid);
		json_string(j, "name", mm->name);
		for (int i = 0; i < THPS_NR_PROC_ITEMS; i++)
			json_uint(j, thps_proc_item_name(i), mm->final[i]);
		json_end_object(j);
	}
	json_end_array(j);
	/* the processes' finals, each taken at its own exit, summed: kept
	 * for scripts, named for what it is */
	json_begin_object(j, "sum_of_process_finals");
	for (int i = 0; i < THPS_NR_PROC_ITEMS; i++)
		json_uint(j, thps_proc_item_name(i), sums[i]);
	json_end_object(j);
	json_begin_object(j, "meminfo");
	for (int i = 0; i < THPS_NR_MEMINFO_ITEMS; i++)
		json_uint(j, thps_meminfo_item_name(i), res->final_meminfo[i]);
	json_end_object(j);
	json_uint(j, "Pss_sum", res->final_pss_sum_kb);
	replay_ranges_json_machine(j, res, 0);
	json_end_object(j);
	json_begin_object(j, "peak");
	json_uint(j, "AnonPages", res->peak_anon_pages_kb);
	json_uint(j, "AnonHugePages", res->peak_meminfo_huge_kb);
	json_uint(j, "sum_of_process_Rss", replay_peak_rss(res));
	replay_ranges_json_machine(j, res, 1);
	json_end_object(j);
	replay_ranges_json(j, res);
	replay_memcg_json(j, res);
	json_string(j, "Rss_scope", "per process: the model's smaps_rollup Rss, anonymous memory "
				    "only (the kernel's adds file pages; file_copies_kB are private "
				    "file pages written)");
	json_begin_array(j, "processes");
	for (int p = 0; p < res->nmms; p++) {
		const struct replay_mm *mm = res->mms[p];

		json_begin_object(j, NULL);
		json_int(j, "pid", mm->pid);
		json_string(j, "name", mm->name);
		json_string(j, "ended_by", mm->end);
		json_double(j, "start_s", (double)mm->start_ns * 1e-9);
		json_double(j, "end_s", (double)mm->end_ns * 1e-9);
		json_uint(j, "faults", mm->faults);
		json_uint(j, "file_copies_kB", mm->final_file_cow_kb);
		/* by private file range, as smaps shows them in file VMAs */
		json_begin_array(j, "file_copies");
		for (int i = 0; i < mm->nfinal_file_cow; i++) {
			json_begin_object(j, NULL);
			json_uint(j, "start", mm->final_file_cow[i][0]);
			json_uint(j, "end", mm->final_file_cow[i][1]);
			json_uint(j, "Anonymous", mm->final_file_cow[i][2]);
			json_end_object(j);
		}
		json_end_array(j);
		if (mm->oom_killed) {
			json_begin_object(j, "oom_kill");
			json_double(j, "t_s", (double)mm->oom_kill_ns * 1e-9);
			json_uint(j, "after_records", mm->oom_kill_record);
			json_double(j, "share_of_trace_pct", replay_kill_share(res, mm));
			json_end_object(j);
		}
		json_begin_object(j, "final");
		for (int i = 0; i < THPS_NR_PROC_ITEMS; i++)
			json_uint(j, thps_proc_item_name(i), mm->final[i]);
		replay_ranges_json_mm(j, res, p, 0);
		json_end_object(j);
		json_begin_object(j, "peak");
		json_uint(j, "Rss", mm->final[THPS_PROC_VmHWM]);
		json_uint(j, "AnonHugePages", mm->peak_anon_huge_kb);
		replay_ranges_json_mm(j, res, p, 1);
		json_end_object(j);
		if (mm->have_kfig) {
			json_begin_object(j, "recorded_kernel");
			json_uint(j, "Rss", mm->kfig_rss);
			json_uint(j, "Anonymous", mm->kfig_anonymous);
			json_uint(j, "AnonHugePages", mm->kfig_anon_huge);
			json_end_object(j);
			json_uint(j, "file_copies_kB_at_recorded_exit", mm->kfig_file_cow_kb);
			json_begin_object(j, "model_at_recorded_exit");
			for (int i = 0; i < THPS_NR_PROC_ITEMS; i++)
				json_uint(j, thps_proc_item_name(i), mm->model_at_kfig[i]);
			json_end_object(j);
		}
		if (with_series)
			json_series(j, "series", &mm->series, NULL);
		replay_measures_json_mm(j, mm);
		json_end_object(j);
	}
	json_end_array(j);
	if (with_series)
		json_series(j, "series_all", &res->overall, &res->overall);
	json_begin_object(j, "skipped");
	for (int i = 0; i < REPLAY_NR_SKIPS; i++)
		json_uint(j, replay_skip_name(i), res->skips[i]);
	json_end_object(j);
	json_begin_array(j, "notes");
	for (int i = 0; i < res->nnotes; i++)
		json_string(j, NULL, res->notes[i]);
	json_end_array(j);
	replay_measures_json(j, res);
}

/* A CSV field as RFC 4180 has it: in double quotes, quotes doubled, when
 * it holds a comma, a quote or a line break. */
static void csv_field(FILE *f, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* RFC 4180: CRLF ends every record, the header names the columns.  The
 * rows of "all" add the machine's meminfo figures (empty for a process),
 * and their lowest and highest at that moment over the layouts (the band;
 * the figure itself twice where there is one layout). */
static void print_csv(const struct replay_result *res)
{
	printf("t_s,pid,process,Rss_kB,AnonHugePages_kB,meminfo_AnonPages_kB,"
	       "meminfo_AnonHugePages_kB,meminfo_AnonPages_kB_lowest,meminfo_AnonPages_kB_highest,"
	       "meminfo_AnonHugePages_kB_lowest,meminfo_AnonHugePages_kB_highest\r\n");
	for (int p = 0; p < res->nmms; p++) {
		const struct replay_mm *mm = res->mms[p];

		for (int i = 0; i < mm->series.n; i++) {
			printf("%.6f,%d,", (double)mm->series.p[i].t_ns * 1e-9, mm->pid);
			csv_field(stdout, mm->name);
			printf(",%" PRIu64 ",%" PRIu64 ",,,,,,\r\n", mm->series.p[i].rss_kb,
			       mm->series.p[i].anon_huge_kb);
		}
	}
	for (int i = 0; i < res->overall.n; i++) {
		const struct replay_point *pt = &res->overall.p[i];
		uint64_t alo, ahi, hlo, hhi;

		replay_band_at(res, pt->t_ns, 0, &alo, &ahi);
		replay_band_at(res, pt->t_ns, 1, &hlo, &hhi);
		printf("%.6f,all,all,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		       ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\r\n", (double)pt->t_ns * 1e-9,
		       pt->rss_kb, pt->anon_huge_kb, pt->anon_pages_kb, pt->mem_anon_huge_kb, alo, ahi,
		       hlo, hhi);
	}
}

int cmd_replay(int argc, char **argv)
{
	static struct replay_result res;
	struct knob_sets sets = { 0 };
	struct replay_opts o = { .progress = 1, .layout_seed = 1 };
	const char *path = NULL, *format = "text";
	char *paths[REPLAY_MANY_MAX];
	int npaths = 0;
	uint64_t ram_gib = 0;
	char err[1024];
	int e;

	for (int i = 1; i < argc; i++) {
		int c = replay_parse_common(argc, argv, &i, &sets, &o, &ram_gib);

		if (c > 0)
			return c;
		if (c == 0)
			continue;
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			format = argv[++i];
			if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "csv"))
				return cli_usage("replay: --format takes text, json or csv, not '%s'",
						 format);
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts(usage_text);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) { /* "-": standard input */
			return cli_bad_option("replay", argv[i], usage_text);
		} else if (npaths < REPLAY_MANY_MAX) {
			paths[npaths++] = argv[i];
			path = paths[0];
		} else {
			return cli_usage("replay: at most %d TRACEs\n%s", REPLAY_MANY_MAX, usage_text);
		}
	}
	if (!path)
		return cli_usage("replay: no TRACE\n%s", usage_text);
	replay_opts_add_sets(&o, &sets);
	if (npaths > 1) {
		o.progress = 0;
		return replay_many(paths, npaths, &o, format);
	}
	e = replay_run_layouts(path, &o, replay_threads(), &res, err, sizeof(err));
	if (e) {
		msg_error(0, "replay: %s", err);
		replay_result_free(&res);
		return 2; /* an input error: no trace there, or a bad knob value */
	}
	if (!strcmp(format, "json")) {
		struct json j;

		json_init(&j, stdout, 1);
		json_begin_object(&j, NULL);
		json_string(&j, "trace", path);
		replay_json_result(&j, &res, 1);
		json_end_object(&j);
		json_finish(&j);
	} else if (!strcmp(format, "csv")) {
		print_csv(&res);
		replay_print_partial(stderr, &res);
		replay_print_oom(stderr, &res, NULL);
	} else {
		print_text(path, &res, !o.progress);
	}
	e = res.partial || res.skips[REPLAY_SKIP_fault_oom];
	replay_result_free(&res);
	return e ? 1 : 0; /* partial or too low figures are a finding */
}
