/*
 * scenario.h - the scenario language: what a program does to its memory,
 * step by step, and what it expects to see (docs/scenarios.md).
 *
 * A scenario is parsed once into steps; the same steps then run in the
 * model (run_model.c) and on the running kernel (run_kernel.c).  Both runs
 * produce the same list of named values — one per expectation, a standard
 * set per report and at the end — so that validate can compare them figure
 * by figure.
 */
#ifndef THPSIM_SCENARIO_H
#define THPSIM_SCENARIO_H

#include <stdint.h>
#include <stdio.h>

#include "thpsim.h"

#define SCN_MAX_REGIONS 32
#define SCN_MAX_PROCS 16
#define SCN_NAME_MAX 32

enum scn_op {
	SCN_SET,
	SCN_MMAP,
	SCN_MUNMAP,
	SCN_MPROTECT,
	SCN_MADVISE,
	SCN_MREMAP,
	SCN_READ,
	SCN_WRITE,
	SCN_FORK,
	SCN_PROC,
	SCN_EXIT,
	SCN_SHRINK,
	SCN_KHUGEPAGED, /* khugepaged scans=N: N full scans of khugepaged */
	SCN_PRCTL,
	SCN_EXPECT,
	SCN_REPORT,
	NR_SCN_OPS
};

/* What an expectation (or a reported value) is about. */
enum scn_figure_kind {
	FIG_PROC,    /* a process's smaps_rollup/status figure, kB */
	FIG_VMSTAT,  /* a /proc/vmstat item counted from the start */
	FIG_MEMINFO, /* a /proc/meminfo field, kB */
	FIG_PAGE,    /* what maps one page: enum scn_page_state */
	FIG_MTHP,    /* hugepages-<size>kB/stats/ITEM of one size, counted from the start */
	FIG_KHUGEPAGED, /* a transparent_hugepage/khugepaged/ counter counted from the start */
};

/* The khugepaged/ counters a scenario can expect, by their sysfs names. */
#define SCN_KHUGEPAGED_ITEMS(X) X(pages_collapsed) X(full_scans)
#define SCN_KHP_ENUM(name) SCN_KHP_##name,
enum { SCN_KHUGEPAGED_ITEMS(SCN_KHP_ENUM) SCN_NR_KHUGEPAGED_ITEMS };
#undef SCN_KHP_ENUM
extern const char *const scn_khugepaged_item_names[SCN_NR_KHUGEPAGED_ITEMS];

enum scn_page_state {
	PAGE_NONE,      /* not mapped */
	PAGE_ZERO,      /* the 4 KiB zero page */
	PAGE_HUGE_ZERO, /* the huge zero page */
	PAGE_THP,       /* a page of a transparent huge page */
	PAGE_SMALL,     /* a 4 KiB anonymous page */
	NR_PAGE_STATES
};
extern const char *const scn_page_state_names[NR_PAGE_STATES];

enum scn_cmp { CMP_EQ, CMP_NE, CMP_LE, CMP_GE, CMP_LT, CMP_GT };

struct scn_figure {
	enum scn_figure_kind kind;
	int item;   /* enum thps_proc_item / thps_vm_item / thps_meminfo_item */
	int proc;   /* FIG_PROC, FIG_PAGE: the process */
	int region; /* FIG_PAGE */
	int order;  /* FIG_MTHP: the folio size, 2 (16 KiB) .. 9 (2 MiB) */
	uint64_t off;
};

/*
 * "when KNOB=VALUE[,KNOB!=VALUE]... STEP": the step runs only where every
 * condition holds for the knobs in force: the model's, or on the kernel
 * its detected profile (util/kprofile.h) with the scenario's settings.  So
 * one file holds the expectations of every kernel profile.
 */
#define SCN_MAX_CONDS 4
struct scn_guard {
	int n;
	char knob[SCN_MAX_CONDS][64];
	char value[SCN_MAX_CONDS][32];
	int neg[SCN_MAX_CONDS];
};

struct scn_step {
	int line;
	struct scn_guard when;
	enum scn_op op;
	int proc;            /* the process the step runs in */
	int region, region2; /* -1 when absent */
	uint64_t off, len, len2, step, align, off2;
	int prot;
	int advice;
	int flags;           /* mremap flags; mmap/mremap: has a fixed target */
	int stack;           /* mmap: MAP_STACK */
	uint8_t value;
	int has_value;
	int has_err;         /* madvise err=: the call is expected to fail... */
	int err;             /* ...with this errno (positive) */
	int child;           /* fork: the new process */
	uint64_t scans;      /* khugepaged: full scans */
	char knob[96];
	char knob_value[32];
	struct scn_figure fig;
	enum scn_cmp cmp;
	int64_t expect;
	char text[160];      /* the source line, for messages */
};

struct scenario {
	char path[256];
	char name[96];
	int nsteps, cap;
	struct scn_step *steps;
	int nregions;
	char regions[SCN_MAX_REGIONS][SCN_NAME_MAX];
	int nprocs;
	char procs[SCN_MAX_PROCS][SCN_NAME_MAX];
	/* the knobs set before the first operation (the kernel side needs them) */
	int nsets_before_ops;
	int has_late_set;
};

/* Does st's guard hold for the knobs of m?  1 without a guard. */
int scn_guard_holds(const struct scn_step *st, thps_machine *m);

/* Parse a file; on error print "file:line:column: message" to err and
 * return -1.  scenario_free releases what parsing allocated. */
int scenario_parse_file(const char *path, struct scenario *s, FILE *err);
int scenario_parse_string(const char *name, const char *text, struct scenario *s, FILE *err);
void scenario_free(struct scenario *s);
/* Does the scenario have a step of this verb? */
int scenario_has_op(const struct scenario *s, enum scn_op op);

/* ---- results: the named values a run produces ---- */
struct scn_value {
	int line;           /* the step that produced it */
	char key[128];      /* "line 12: vmstat thp_split_pmd", unique in a run */
	int64_t v;
	int valid;          /* 0: could not be measured here (see why) */
	char why[96];
};

struct scn_expect_result {
	int line;
	int ok;
	int valid;
	int64_t got;
	int page;       /* got is an enum scn_page_state */
	char text[160];
};

/* What an expectation found, as text: a number, or a page state's name. */
const char *scn_got_text(const struct scn_expect_result *e, char *buf, size_t len);

struct scn_result {
	int skipped;
	char skip_reason[256];
	int error;               /* a step failed unexpectedly */
	char error_msg[1024];
	int nvalues, cap_values;
	struct scn_value *values;
	int nexpects, cap_expects;
	struct scn_expect_result *expects;
	int failed_expects;
	/* JSON of the reports, written as the run goes (may be NULL) */
	char *reports_json;
	size_t reports_len;
};

void scn_result_init(struct scn_result *r);
void scn_result_free(struct scn_result *r);
void scn_add_value(struct scn_result *r, int line, const char *key, int64_t v, int valid,
		   const char *why);
void scn_add_expect(struct scn_result *r, const struct scn_step *st, int64_t got, int valid);
int scn_compare(enum scn_cmp c, int64_t a, int64_t b);
const char *scn_cmp_name(enum scn_cmp c);
/* "Rss", "vmstat thp_split_pmd", "child.AnonHugePages", "page A+0x1000" */
void scn_figure_name(const struct scenario *s, const struct scn_figure *f, char *buf, size_t len);

/* Run in the model: on a machine with the kernel profile "base" (NULL:
 * the model's default, Linux 6.18 with a zero page), then the file's
 * knobs; "sets" (util/knobs.h, may be NULL) override the file's knobs. */
struct knob_sets;
struct kprofile;
int scenario_run_model(const struct scenario *s, const struct kprofile *base,
		       const struct knob_sets *sets, struct scn_result *r);
/* Run on the running kernel, whose profile is "profile" (its guards and
 * its thpsim/ settings are taken from it); a scenario that cannot run
 * here is skipped. */
int scenario_run_kernel(const struct scenario *s, const struct kprofile *profile,
			struct scn_result *r);

/*
 * Measuring, for the runners: fn gives a figure's value now, 1 when it is
 * valid, or 0 with why it cannot be measured there.  These record what an
 * expectation, a "read ... expect=" or a report produces, under the keys
 * validate matches between the two runs.
 */
typedef int (*scn_measure_fn)(void *ctx, const struct scn_figure *f, int64_t *v, char *why,
			      size_t len);
void scn_record_expect(struct scn_result *r, const struct scenario *s, const struct scn_step *st,
		       scn_measure_fn fn, void *ctx);
void scn_record_read(struct scn_result *r, const struct scn_step *st, uint64_t mismatches);
/* "madvise ... err=E" expects the call to return -E; err is what it returned. */
void scn_record_errno(struct scn_result *r, const struct scn_step *st, int err);
/* The standard figures of every live process (alive[p]) and the counters. */
void scn_record_standard(struct scn_result *r, const struct scenario *s, int line,
			 const char *what, const int *alive, scn_measure_fn fn, void *ctx);

/* The figures each report (and the end) records, per process. */
extern const int scn_report_proc_items[];
extern const int scn_report_nproc_items;
extern const int scn_report_vm_items[];
extern const int scn_report_nvm_items;

#endif
