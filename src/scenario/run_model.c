/*
 * run_model.c - running a scenario in the model.
 *
 * Each step becomes the library call it names on a fresh machine; regions
 * are remembered per process (a fork copies them, mremap moves them).  A
 * mapping with align=A is made as a careful program does it: mmap A more,
 * then unmap the unaligned head and tail, so the kernel run can do exactly
 * the same.  Expectations, reports and the end of the run record named
 * values (scenario.h) that validate compares with the kernel's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "scenario.h"
#include "verbs.h"
#include "util/knobs.h"
#include "util/kprofile.h"

struct model_run {
	const struct scenario *s;
	struct scn_result *r;
	const struct knob_sets *sets;
	thps_machine *m;
	thps_proc *procs[SCN_MAX_PROCS];
	uint64_t addr[SCN_MAX_PROCS][SCN_MAX_REGIONS];
	uint64_t base[THPS_NR_VM_ITEMS];
	uint64_t meminfo0[THPS_NR_MEMINFO_ITEMS];
	uint64_t mthp0[THPS_MTHP_MAX_ORDER + 1][THPS_NR_MTHP_STATS];
	struct thps_khugepaged_stats khp0; /* khugepaged's counters at the start */
	FILE *json;
	int nreports;
};

static int step_error(struct model_run *x, const struct scn_step *st, int err)
{
	const char *why = thps_last_error(x->m);

	x->r->error = 1;
	snprintf(x->r->error_msg, sizeof(x->r->error_msg), "%s:%d: '%s' failed: %s%s%s%s",
		 x->s->path, st->line, st->text, strerror(-err), *why ? " (" : "", why,
		 *why ? ")" : ""); /* no empty "()" */
	return err;
}

/* VmPTE in a scenario counts PTE tables only: where the upper levels are
 * depends on the runner's own mappings on the kernel (docs/scenarios.md). */
static int64_t proc_figure(struct model_run *x, int proc, int item)
{
	uint64_t v[THPS_NR_PROC_ITEMS];

	if (!x->procs[proc] || thps_proc_figures(x->procs[proc], v))
		return 0;
	if (item == THPS_PROC_VmPTE) {
		uint64_t pte, upper;

		thps_proc_pgtables(x->procs[proc], &pte, &upper);
		return (int64_t)(pte * (THPS_PAGE_SIZE >> 10));
	}
	return (int64_t)v[item];
}

static int64_t vm_figure(struct model_run *x, int item)
{
	uint64_t v[THPS_NR_VM_ITEMS];

	thps_vmstat(x->m, v);
	return (int64_t)(v[item] - x->base[item]);
}

static int page_state(struct model_run *x, int proc, int region, uint64_t off)
{
	struct thps_pageinfo pi;

	if (!x->procs[proc] || thps_pageinfo(x->procs[proc], x->addr[proc][region] + off, &pi) ||
	    !pi.present)
		return PAGE_NONE;
	if (pi.huge_zero)
		return PAGE_HUGE_ZERO;
	if (pi.zero_page)
		return PAGE_ZERO;
	return pi.thp ? PAGE_THP : PAGE_SMALL;
}

static int64_t figure_value(struct model_run *x, const struct scn_figure *f)
{
	switch (f->kind) {
	case FIG_PROC:
		return proc_figure(x, f->proc, f->item);
	case FIG_VMSTAT:
		return vm_figure(x, f->item);
	case FIG_MEMINFO: {
		uint64_t mi[THPS_NR_MEMINFO_ITEMS];

		thps_meminfo(x->m, mi);
		return f->item == THPS_MEM_MemTotal ? (int64_t)mi[f->item]
						    : (int64_t)(mi[f->item] - x->meminfo0[f->item]);
	}
	case FIG_PAGE:
		return page_state(x, f->proc, f->region, f->off);
	case FIG_MTHP: {
		uint64_t v[THPS_NR_MTHP_STATS];

		thps_mthp_stats(x->m, f->order, v);
		return (int64_t)(v[f->item] - x->mthp0[f->order][f->item]);
	}
	case FIG_KHUGEPAGED: {
		struct thps_khugepaged_stats ks;

		thps_khugepaged_stats(x->m, &ks);
		return f->item == SCN_KHP_full_scans
			       ? (int64_t)(ks.full_scans - x->khp0.full_scans)
			       : (int64_t)(ks.pages_collapsed - x->khp0.pages_collapsed);
	}
	}
	return 0;
}

/* scn_measure_fn: everything can be measured in the model. */
static int measure(void *ctx, const struct scn_figure *f, int64_t *v, char *why, size_t len)
{
	(void)why;
	(void)len;
	*v = figure_value(ctx, f);
	return 1;
}

static void record_standard(struct model_run *x, int line, const char *what)
{
	int alive[SCN_MAX_PROCS];

	for (int p = 0; p < x->s->nprocs; p++)
		alive[p] = x->procs[p] != NULL;
	scn_record_standard(x->r, x->s, line, what, alive, measure, x);
}

static void write_report(struct model_run *x, int line, const char *label)
{
	thps_proc *procs[SCN_MAX_PROCS];
	const char *names[SCN_MAX_PROCS];
	struct report rep;
	struct json j;
	int n = 0;

	if (!x->json)
		return;
	for (int p = 0; p < x->s->nprocs; p++)
		if (x->procs[p]) {
			procs[n] = x->procs[p];
			names[n++] = x->s->procs[p];
		}
	report_take(&rep, x->m, x->base, procs, names, n);
	json_init(&j, x->json, 0);
	j.depth = 1; /* inside the caller's array */
	j.first[1] = x->nreports++ == 0;
	json_begin_object(&j, NULL);
	json_int(&j, "line", line);
	json_string(&j, "label", label);
	report_json(&j, "report", &rep);
	json_end_object(&j);
}

/* The address of st's region in its process (of region 0 without one). */
static uint64_t region_addr(const struct model_run *x, const struct scn_step *st)
{
	return x->addr[st->proc][st->region >= 0 ? st->region : 0];
}

/* ---- the verbs' handlers (verbs.h) ---- */

int scn_model_set(struct model_run *x, const struct scn_step *st)
{
	if (knob_sets_has(x->sets, st->knob))
		return 0;
	return thps_knob_set(x->m, st->knob, st->knob_value);
}

int scn_model_mmap(struct model_run *x, const struct scn_step *st)
{
	thps_proc *p = x->procs[st->proc];
	const int flags = THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS | (st->stack ? THPS_MAP_STACK : 0);
	uint64_t a, fixed = 0;
	int err;

	if (st->flags) {
		fixed = x->addr[st->proc][st->region2] + st->off2;
		err = thps_mmap(p, fixed, st->len, st->prot, flags | THPS_MAP_FIXED, &a);
	} else if (st->align > THPS_PAGE_SIZE) {
		uint64_t aligned;

		err = thps_mmap(p, 0, st->len + st->align, st->prot, flags, &a);
		if (err)
			return err;
		aligned = (a + st->align - 1) & ~(st->align - 1);
		if (aligned > a && (err = thps_munmap(p, a, aligned - a)))
			return err;
		if (a + st->align > aligned &&
		    (err = thps_munmap(p, aligned + st->len, a + st->align - aligned)))
			return err;
		a = aligned;
	} else {
		err = thps_mmap(p, 0, st->len, st->prot, flags, &a);
	}
	if (!err)
		x->addr[st->proc][st->region] = a;
	return err;
}

int scn_model_munmap(struct model_run *x, const struct scn_step *st)
{
	return thps_munmap(x->procs[st->proc], region_addr(x, st) + st->off, st->len);
}

int scn_model_mprotect(struct model_run *x, const struct scn_step *st)
{
	return thps_mprotect(x->procs[st->proc], region_addr(x, st) + st->off, st->len, st->prot);
}

int scn_model_madvise(struct model_run *x, const struct scn_step *st)
{
	int err = thps_madvise(x->procs[st->proc], region_addr(x, st) + st->off, st->len,
			       st->advice);

	if (!st->has_err)
		return err;
	scn_record_errno(x->r, st, err);
	return 0;
}

int scn_model_mremap(struct model_run *x, const struct scn_step *st)
{
	uint64_t to = st->region2 >= 0 ? x->addr[st->proc][st->region2] + st->off2 : 0, out;
	int err = thps_mremap(x->procs[st->proc], region_addr(x, st), st->len, st->len2, st->flags,
			      to, &out);

	if (!err)
		x->addr[st->proc][st->region] = out;
	return err;
}

/* read and write */
int scn_model_touch(struct model_run *x, const struct scn_step *st)
{
	struct thps_touch t = { .addr = region_addr(x, st) + st->off, .len = st->len,
				.step = st->step,
				.op = st->op == SCN_WRITE ? THPS_TOUCH_WRITE : THPS_TOUCH_READ,
				.value = st->value, .check = st->op == SCN_READ && st->has_value };
	int err = thps_touch(x->procs[st->proc], &t);

	if (!err && t.check)
		scn_record_read(x->r, st, t.mismatches);
	return err;
}

int scn_model_fork(struct model_run *x, const struct scn_step *st)
{
	int err = thps_fork(x->procs[st->proc], &x->procs[st->child]);

	if (!err)
		memcpy(x->addr[st->child], x->addr[st->proc], sizeof(x->addr[0]));
	return err;
}

int scn_model_exit(struct model_run *x, const struct scn_step *st)
{
	thps_exit(x->procs[st->proc]);
	x->procs[st->proc] = NULL;
	return 0;
}

int scn_model_shrink(struct model_run *x, const struct scn_step *st)
{
	(void)st;
	thps_drop_caches(x->m);
	return 0;
}

int scn_model_khugepaged(struct model_run *x, const struct scn_step *st)
{
	return thps_khugepaged_run(x->m, 0, st->scans);
}

int scn_model_prctl(struct model_run *x, const struct scn_step *st)
{
	return thps_prctl_thp_disable(x->procs[st->proc], st->value);
}

int scn_model_expect(struct model_run *x, const struct scn_step *st)
{
	scn_record_expect(x->r, x->s, st, measure, x);
	return 0;
}

int scn_model_report(struct model_run *x, const struct scn_step *st)
{
	char what[32];

	snprintf(what, sizeof(what), "line %d report", st->line);
	record_standard(x, st->line, what);
	write_report(x, st->line, st->knob[0] ? st->knob : what);
	return 0;
}

/*
 * A setting the profile's kernel has no file for (thps_knob_offered: a
 * kernel before Linux 6.8 has no hugepages-<size>kB/ below 2 MiB) skips
 * the scenario, as the kernel side does where the file is missing
 * (run_kernel.c).
 */
static int knob_not_offered(struct model_run *x, const struct scn_step *st)
{
	if (st->op != SCN_SET ||
	    thps_knob_offered(x->m, st->knob, st->knob_value, x->r->skip_reason,
			      sizeof(x->r->skip_reason)))
		return 0;
	x->r->skipped = 1;
	return 1;
}

static int run_step(struct model_run *x, const struct scn_step *st)
{
	const struct scn_verb *v = scn_verb(st->op);

	return v && v->model ? v->model(x, st) : 0;
}

int scenario_run_model(const struct scenario *s, const struct kprofile *base,
		       const struct knob_sets *sets, struct scn_result *r)
{
	struct model_run x = { .s = s, .r = r, .sets = sets };
	struct thps_config cfg = { .ram_bytes = 4ULL << 30 };
	char *buf = NULL;
	size_t len = 0;
	int err, bad;

	scn_result_init(r);
	err = thps_machine_new(&cfg, &x.m);
	if (err) {
		r->error = 1;
		snprintf(r->error_msg, sizeof(r->error_msg), "cannot create the machine: %s", strerror(-err));
		return err;
	}
	if (base && (err = kprofile_apply(base, x.m)))
		goto out;
	if (sets && (err = knob_sets_apply(x.m, sets, &bad))) {
		r->error = 1;
		snprintf(r->error_msg, sizeof(r->error_msg), "%s: --set %s=%s: %s", s->path,
			 sets->name[bad], sets->value[bad], thps_last_error(x.m));
		goto out;
	}
	err = thps_proc_new(x.m, &x.procs[0]);
	if (err)
		goto out;
	thps_vmstat(x.m, x.base);
	thps_meminfo(x.m, x.meminfo0);
	for (int o = THPS_MTHP_MIN_ORDER; o <= THPS_MTHP_MAX_ORDER; o++)
		thps_mthp_stats(x.m, o, x.mthp0[o]);
	thps_khugepaged_stats(x.m, &x.khp0);
	x.json = open_memstream(&buf, &len);
	for (int i = 0; i < s->nsteps; i++) {
		if (!scn_guard_holds(&s->steps[i], x.m))
			continue;
		err = run_step(&x, &s->steps[i]);
		if (err) {
			step_error(&x, &s->steps[i], err);
			break;
		}
		if (knob_not_offered(&x, &s->steps[i]))
			break;
	}
	if (!err && !r->skipped) {
		record_standard(&x, 0, "end");
		write_report(&x, 0, "end");
	}
	if (x.json) {
		fclose(x.json);
		r->reports_json = buf;
		r->reports_len = len;
	}
out:
	for (int p = 0; p < s->nprocs; p++)
		if (x.procs[p])
			thps_exit(x.procs[p]);
	if (err && !r->error) {
		r->error = 1;
		snprintf(r->error_msg, sizeof(r->error_msg), "%s: %s", s->path, thps_last_error(x.m));
	}
	thps_machine_free(x.m);
	return err;
}
