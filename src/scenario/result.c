/*
 * result.c - the named values and expectation outcomes a scenario run
 * produces (scenario.h).
 */
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

void scn_result_init(struct scn_result *r)
{
	memset(r, 0, sizeof(*r));
}

void scn_result_free(struct scn_result *r)
{
	free(r->values);
	free(r->expects);
	free(r->reports_json);
	memset(r, 0, sizeof(*r));
}

static int grow(void **p, int *cap, int n, size_t size)
{
	if (n < *cap)
		return 0;
	{
		int c = *cap ? *cap * 2 : 64;
		void *q = realloc(*p, (size_t)c * size);

		if (!q)
			return -1;
		*p = q;
		*cap = c;
	}
	return 0;
}

void scn_add_value(struct scn_result *r, int line, const char *key, int64_t v, int valid,
		   const char *why)
{
	struct scn_value *x;

	if (grow((void **)&r->values, &r->cap_values, r->nvalues, sizeof(*r->values)))
		return;
	x = &r->values[r->nvalues++];
	x->line = line;
	snprintf(x->key, sizeof(x->key), "%s", key);
	x->v = v;
	x->valid = valid;
	snprintf(x->why, sizeof(x->why), "%s", why ? why : "");
}

int scn_compare(enum scn_cmp c, int64_t a, int64_t b)
{
	switch (c) {
	case CMP_EQ: return a == b;
	case CMP_NE: return a != b;
	case CMP_LE: return a <= b;
	case CMP_GE: return a >= b;
	case CMP_LT: return a < b;
	case CMP_GT: return a > b;
	}
	return 0;
}

const char *scn_cmp_name(enum scn_cmp c)
{
	static const char *const n[] = { "==", "!=", "<=", ">=", "<", ">" };

	return n[c];
}

const char *scn_got_text(const struct scn_expect_result *e, char *buf, size_t len)
{
	if (e->page && e->got >= 0 && e->got < NR_PAGE_STATES)
		snprintf(buf, len, "%s", scn_page_state_names[e->got]);
	else
		snprintf(buf, len, "%lld", (long long)e->got);
	return buf;
}

void scn_add_expect(struct scn_result *r, const struct scn_step *st, int64_t got, int valid)
{
	struct scn_expect_result *e;

	if (grow((void **)&r->expects, &r->cap_expects, r->nexpects, sizeof(*r->expects)))
		return;
	e = &r->expects[r->nexpects++];
	e->line = st->line;
	e->valid = valid;
	e->got = got;
	e->page = st->fig.kind == FIG_PAGE;
	e->ok = !valid || scn_compare(st->cmp, got, st->expect);
	snprintf(e->text, sizeof(e->text), "%s", st->text);
	if (!e->ok)
		r->failed_expects++;
}

#define SCN_KHP_NAME(name) #name,
const char *const scn_khugepaged_item_names[SCN_NR_KHUGEPAGED_ITEMS] = {
	SCN_KHUGEPAGED_ITEMS(SCN_KHP_NAME)
};
#undef SCN_KHP_NAME

void scn_figure_name(const struct scenario *s, const struct scn_figure *f, char *buf, size_t len)
{
	switch (f->kind) {
	case FIG_PROC:
		snprintf(buf, len, "%s.%s", s->procs[f->proc], thps_proc_item_name(f->item));
		break;
	case FIG_VMSTAT:
		snprintf(buf, len, "vmstat %s", thps_vm_item_name(f->item));
		break;
	case FIG_MEMINFO:
		snprintf(buf, len, "meminfo %s", thps_meminfo_item_name(f->item));
		break;
	case FIG_KHUGEPAGED:
		snprintf(buf, len, "khugepaged %s", scn_khugepaged_item_names[f->item]);
		break;
	case FIG_PAGE:
		snprintf(buf, len, "%s.page %s+%#llx", s->procs[f->proc], s->regions[f->region],
			 (unsigned long long)f->off);
		break;
	case FIG_MTHP:
		snprintf(buf, len, "mthp %dkB %s", 4 << f->order, thps_mthp_stat_name(f->item));
		break;
	}
}

void scn_record_expect(struct scn_result *r, const struct scenario *s, const struct scn_step *st,
		       scn_measure_fn fn, void *ctx)
{
	char name[96], key[128], why[96] = "";
	int64_t v = 0;
	int valid = fn(ctx, &st->fig, &v, why, sizeof(why));

	scn_figure_name(s, &st->fig, name, sizeof(name));
	snprintf(key, sizeof(key), "line %d: %s", st->line, name);
	scn_add_value(r, st->line, key, v, valid, why);
	scn_add_expect(r, st, v, valid);
}

/* "read ... expect=B" expects no byte to differ. */
void scn_record_read(struct scn_result *r, const struct scn_step *st, uint64_t mismatches)
{
	struct scn_step e = *st;
	char key[128];

	e.cmp = CMP_EQ;
	e.expect = 0;
	scn_add_expect(r, &e, (int64_t)mismatches, 1);
	snprintf(key, sizeof(key), "line %d: bytes that differ from %#x", st->line, st->value);
	scn_add_value(r, st->line, key, (int64_t)mismatches, 1, NULL);
}

void scn_record_errno(struct scn_result *r, const struct scn_step *st, int err)
{
	struct scn_step e = *st;
	char key[128];

	e.cmp = CMP_EQ;
	e.expect = st->err;
	scn_add_expect(r, &e, -err, 1);
	snprintf(key, sizeof(key), "line %d: errno", st->line);
	scn_add_value(r, st->line, key, -err, 1, NULL);
}

void scn_record_standard(struct scn_result *r, const struct scenario *s, int line,
			 const char *what, const int *alive, scn_measure_fn fn, void *ctx)
{
	struct scn_figure f = { 0 };
	char key[128], why[96];
	int64_t v;
	int valid;

	f.kind = FIG_PROC;
	for (f.proc = 0; f.proc < s->nprocs; f.proc++) {
		if (!alive[f.proc])
			continue;
		for (int i = 0; i < scn_report_nproc_items; i++) {
			f.item = scn_report_proc_items[i];
			why[0] = 0;
			v = 0;
			valid = fn(ctx, &f, &v, why, sizeof(why));
			snprintf(key, sizeof(key), "%s: %s.%s", what, s->procs[f.proc],
				 thps_proc_item_name(f.item));
			scn_add_value(r, line, key, v, valid, why);
		}
	}
	f.kind = FIG_VMSTAT;
	f.proc = 0;
	for (int i = 0; i < scn_report_nvm_items; i++) {
		f.item = scn_report_vm_items[i];
		why[0] = 0;
		v = 0;
		valid = fn(ctx, &f, &v, why, sizeof(why));
		snprintf(key, sizeof(key), "%s: vmstat %s", what, thps_vm_item_name(f.item));
		scn_add_value(r, line, key, v, valid, why);
	}
}

/* What every report and the end of a run record. */
const int scn_report_proc_items[] = { THPS_PROC_Rss, THPS_PROC_Anonymous, THPS_PROC_AnonHugePages,
				      THPS_PROC_RssAnon, THPS_PROC_VmPTE };
const int scn_report_nproc_items = sizeof(scn_report_proc_items) / sizeof(scn_report_proc_items[0]);
const int scn_report_vm_items[] = { THPS_VM_thp_fault_alloc,  THPS_VM_thp_fault_fallback,
				    THPS_VM_thp_split_pmd,    THPS_VM_thp_split_page,
				    THPS_VM_thp_deferred_split_page, THPS_VM_thp_zero_page_alloc,
				    THPS_VM_pgfault };
const int scn_report_nvm_items = sizeof(scn_report_vm_items) / sizeof(scn_report_vm_items[0]);
