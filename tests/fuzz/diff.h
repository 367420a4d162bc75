/*
 * diff.h - run operations on libthpsim and on the reference model side by
 * side, and stop at the first thing they disagree on.
 *
 * After every operation: the return code (and the address mmap and mremap
 * return) must be the reference's, or one it accepts (-ENOMEM where the
 * model allocates, after which the reference follows what the model did,
 * checked against the outcomes Linux allows); bytes read must be the
 * reference's; a write must not show in any other process; the whole-state
 * checker (thps_check) must pass.  Every few operations the VMA layout and
 * VmSize must match the reference's pages.  At the end every byte of every
 * process is compared, every process exits, the shrinkers run, and every
 * frame must be free again (but the huge zero page, under the persistent
 * lifetime).
 */
#ifndef THPSIM_FUZZ_DIFF_H
#define THPSIM_FUZZ_DIFF_H

#include "ops.h"
#include "ref.h"
#include "thpsim.h"

#define DIFF_MAX_ACCESS (16ULL << 20)       /* longest read or write run */
#define DIFF_ISOLATION_BYTES (16ULL << 10)  /* read back by the other processes */

struct diff_cfg {
	uint64_t ram_mib;  /* 0: from the op list */
	int check_every;   /* thps_check after every Nth operation; 0: never */
	int layout_every;  /* compare VMAs and VmSize every Nth operation; 0: never */
	bool isolation;    /* after a write, read the same bytes in the other processes */
	bool leak_check;   /* at the end, every frame must be free again */
	thps_machine *shared; /* run on this machine (threads) instead of a new one */
	int first_slot, nr_slots; /* the process slots this run owns (threads) */
	/* failure injection from the machine's first allocation on (before the
	 * first process): thps_fail_alloc(inject_class, inject_nth, sticky);
	 * inject_count alone counts allocations without failing any */
	bool inject_count, inject_sticky;
	enum thps_alloc_class inject_class;
	uint64_t inject_nth;
};

struct diff {
	struct diff_cfg cfg;
	thps_machine *m;
	thps_proc *proc[REF_MAX_PROCS];
	struct ref ref;
	uint64_t nops;     /* operations run and compared */
	uint64_t nskipped; /* operations the reference cannot represent */
	uint64_t nenomem;  /* -ENOMEM answers the reference accepted */
	uint64_t transcript; /* hash of every answer (the metamorphic check) */
	uint8_t khugepaged_mm[REF_MAX_PROCS]; /* surely registered with khugepaged (collapse.c) */
	bool failed;
	size_t failed_at;  /* index of the diverging operation */
	char why[1024];
	uint8_t *buf, *rbuf; /* scratch */
	size_t buflen;
};

int diff_open(struct diff *d, const struct diff_cfg *cfg);
/* Run one operation: 0, or -1 when the model diverged (d->why says how). */
int diff_step(struct diff *d, const struct op *op);
/* Final comparison, exit, shrinkers, leak check; frees everything. */
int diff_close(struct diff *d);
/* The profile items ref_mmap depends on, copied from the model into d->ref. */
void diff_sync_ref_knobs(struct diff *d);

/* Run a whole list on a fresh machine: 0, or -1 with *d left describing the
 * divergence (d is closed either way). */
int diff_run(const struct op_list *l, const struct diff_cfg *cfg, struct diff *d);

/* Print the list as a unit-test file for tests/unit/ whose expectations are
 * the reference's answers (repro.c).  cfg: as the list was run. */
void diff_print_test(FILE *f, const struct op_list *l, const struct diff_cfg *cfg,
		     const char *name);
uint64_t diff_hash(const uint8_t *b, size_t n);
/* An errno as its C name ("-ENOMEM"), or as a number when not one the API returns. */
const char *diff_errname(int err);

#endif
