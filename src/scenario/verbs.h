/*
 * verbs.h - the table of scenario verbs, private to src/scenario.
 *
 * A verb is one row of scn_verbs (parse.c): its name, the step it makes,
 * and the handler each part of the library runs for it: the parser's
 * (parse.c), the model runner's (run_model.c), and the kernel runner's in
 * the controller and in the worker process (run_kernel.c).  The parser
 * finds a line's verb by name; the runners find a step's by its op.  So
 * adding a verb is its row, its enum scn_op and its handlers; the
 * "unknown step" message and "when" read the row.
 */
#ifndef THPSIM_SCENARIO_VERBS_H
#define THPSIM_SCENARIO_VERBS_H

#include "scenario.h"

struct parser;     /* parse.c */
struct model_run;  /* run_model.c */
struct kernel_run; /* run_kernel.c: the controller */
struct worker;     /* run_kernel.c: a scenario process on the kernel */
struct reply;      /* run_kernel.c: what a worker answers */

enum scn_verb_flags {
	SCN_VERB_OP = 1 << 0,       /* acts in the current process, which must be alive; a
				     * "set" after it is a late one */
	SCN_VERB_GUARD = 1 << 1,    /* may follow "when KNOB=VALUE" */
	SCN_VERB_INERT = 1 << 2,    /* changes no memory: the kernel runner counts no vmstat
				     * events around it */
	SCN_VERB_NO_MINFLT = 1 << 3, /* the worker's faults while it runs are the runner's own
				      * (fork copies the runner's pages), not the step's */
	SCN_VERB_UNLISTED = 1 << 4, /* left out of the "unknown step" message */
};

struct scn_verb {
	const char *name;
	enum scn_op op;  /* the step it makes (NR_SCN_OPS: none) */
	unsigned flags;  /* enum scn_verb_flags */
	/* the line in p's tokens into st (st->op is set): 0, 1 when the line
	 * makes no step, or -1 with the error printed */
	int (*parse)(struct parser *p, struct scn_step *st);
	/* the step on the model's machine: 0 or a negative errno; NULL: nothing */
	int (*model)(struct model_run *x, const struct scn_step *st);
	/* the step in the kernel runner's controller: 0, or -1 with the
	 * result's error set; NULL: nothing */
	int (*kernel)(struct kernel_run *k, const struct scn_step *st);
	/* the step in its worker process: 0 or a negative errno */
	int (*worker)(struct worker *w, const struct scn_step *st, struct reply *rep);
};

/* The row of a step's op. */
const struct scn_verb *scn_verb(enum scn_op op);

/* run_model.c */
int scn_model_set(struct model_run *x, const struct scn_step *st);
int scn_model_mmap(struct model_run *x, const struct scn_step *st);
int scn_model_munmap(struct model_run *x, const struct scn_step *st);
int scn_model_mprotect(struct model_run *x, const struct scn_step *st);
int scn_model_madvise(struct model_run *x, const struct scn_step *st);
int scn_model_mremap(struct model_run *x, const struct scn_step *st);
int scn_model_touch(struct model_run *x, const struct scn_step *st);
int scn_model_fork(struct model_run *x, const struct scn_step *st);
int scn_model_exit(struct model_run *x, const struct scn_step *st);
int scn_model_shrink(struct model_run *x, const struct scn_step *st);
int scn_model_khugepaged(struct model_run *x, const struct scn_step *st);
int scn_model_prctl(struct model_run *x, const struct scn_step *st);
int scn_model_expect(struct model_run *x, const struct scn_step *st);
int scn_model_report(struct model_run *x, const struct scn_step *st);

/* run_kernel.c: the controller */
int scn_kernel_in_worker(struct kernel_run *k, const struct scn_step *st);
int scn_kernel_read(struct kernel_run *k, const struct scn_step *st);
int scn_kernel_fork(struct kernel_run *k, const struct scn_step *st);
int scn_kernel_exit(struct kernel_run *k, const struct scn_step *st);
int scn_kernel_shrink(struct kernel_run *k, const struct scn_step *st);
int scn_kernel_khugepaged(struct kernel_run *k, const struct scn_step *st);
int scn_kernel_expect(struct kernel_run *k, const struct scn_step *st);
int scn_kernel_report(struct kernel_run *k, const struct scn_step *st);

/* run_kernel.c: the worker */
int scn_worker_mmap(struct worker *w, const struct scn_step *st, struct reply *rep);
int scn_worker_munmap(struct worker *w, const struct scn_step *st, struct reply *rep);
int scn_worker_mprotect(struct worker *w, const struct scn_step *st, struct reply *rep);
int scn_worker_madvise(struct worker *w, const struct scn_step *st, struct reply *rep);
int scn_worker_mremap(struct worker *w, const struct scn_step *st, struct reply *rep);
int scn_worker_read(struct worker *w, const struct scn_step *st, struct reply *rep);
int scn_worker_write(struct worker *w, const struct scn_step *st, struct reply *rep);
int scn_worker_fork(struct worker *w, const struct scn_step *st, struct reply *rep);
int scn_worker_exit(struct worker *w, const struct scn_step *st, struct reply *rep);
int scn_worker_prctl(struct worker *w, const struct scn_step *st, struct reply *rep);

#endif
