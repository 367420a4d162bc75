/*
 * record.h - the recorder's parts: the kernel's tracepoints through
 * perf_event_open (perf.c), the /proc files it reads (procfs.c), the
 * program's process before it execs (child.c: its personality and user),
 * the pages it accesses, sampled by DAMON (damon.c: record --access), and
 * the command that runs a program under them all (record.c).
 */
#ifndef THPSIM_RECORD_H
#define THPSIM_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <poll.h>
#include <sys/types.h>

#include "trace/trace.h"

/* ---- perf.c ---- */

/* The tracepoints the recorder opens, each with the fields it reads. */
enum rec_event {
	EV_FAULT_USER,   /* exceptions:page_fault_user */
	EV_FAULT_KERNEL, /* exceptions:page_fault_kernel */
	EV_SYS_ENTER,    /* raw_syscalls:sys_enter (filtered by number) */
	EV_SYS_EXIT,     /* raw_syscalls:sys_exit (filtered by number) */
	EV_NEWTASK,      /* task:task_newtask (clone flags) */
	EV_EXEC,         /* sched:sched_process_exec */
	EV_EXIT,         /* sched:sched_process_exit */
	NR_REC_EVENTS
};

/* Offsets of the fields read in each event's raw data. */
struct rec_fields {
	int id[NR_REC_EVENTS];  /* tracepoint ids */
	int fault_address, fault_error_code;
	int enter_id, enter_args, exit_id, exit_ret;
	int newtask_pid, newtask_flags;
	int exit_group_dead;    /* -1: the kernel has no group_dead field */
};

#define REC_MAX_CPUS 256

struct rec_perf {
	int ncpus;              /* CPUs with events open */
	int (*fd)[NR_REC_EVENTS];   /* fd[cpu][event] */
	void **ring;            /* ring[cpu]: one per CPU (metadata page first) */
	size_t ring_size;       /* data bytes of each, a power of two */
	uint8_t *tmp;           /* a record that wraps around the ring */
	size_t tmp_size;
	struct rec_fields f;
	char tracefs[64];       /* where tracefs is mounted */
	int mounted;            /* we mounted it */
	/* --callers: every sample starts with its event's id
	 * (PERF_SAMPLE_IDENTIFIER), and sys_enter's carry the user call chain
	 * and the word at the user stack pointer; enter_id[cpu] tells them */
	int callers;
	uint64_t *enter_id;
};

/* The native-endian fields of perf's records, at any alignment. */
static inline uint64_t rec_rd64(const uint8_t *p)
{
	uint64_t v;

	__builtin_memcpy(&v, p, 8);
	return v;
}

static inline uint32_t rec_rd32(const uint8_t *p)
{
	uint32_t v;

	__builtin_memcpy(&v, p, 4);
	return v;
}

/* Frames of a call chain kept (perf's sample_max_stack). */
#define REC_CHAIN_MAX 16

/*
 * Find tracefs (mounting it when absent and we may), read the tracepoints'
 * ids and field offsets.  On failure, writes to why (a sentence saying what
 * is missing and how to fix it) and returns a negative errno.
 */
int rec_tracing_setup(struct rec_perf *pp, char *why, size_t whylen);
/* Open every event on pid (disabled until it execs, inherited by its
 * children), one set per CPU sharing that CPU's ring buffer of ring_mib
 * MiB (the kernel refuses to map an inherited event that follows a task
 * across CPUs: every child would write to one buffer). */
int rec_perf_open(struct rec_perf *pp, pid_t pid, const int *syscalls, int nsyscalls,
		  size_t ring_mib, int callers, char *why, size_t whylen);
void rec_perf_close(struct rec_perf *pp);
/* Call fn for every record in every ring now; returns the number read.
 * Each CPU's records come in time order; across CPUs the caller sorts. */
typedef void (*rec_record_fn)(void *arg, int cpu, const void *rec, size_t len);
uint64_t rec_perf_drain(struct rec_perf *pp, rec_record_fn fn, void *arg);
/* Bytes waiting in the rings. */
size_t rec_perf_pending(struct rec_perf *pp);
/* poll(2) descriptors: one per CPU (the first event's). */
int rec_perf_pollfds(struct rec_perf *pp, struct pollfd *pfd, int max);

/* ---- callers.c: record --callers ---- */

/* A sample taken apart: who, when, the tracepoint's raw record and, for a
 * --callers sys_enter, chain[1..nchain-1] the user call chain (innermost
 * first) with chain[0] the word at the user stack pointer (0: none). */
struct rec_sample {
	int32_t pid, tid;
	uint64_t t;
	const uint8_t *raw;
	uint32_t raw_size;
	int nchain;             /* 0: no chain */
	uint64_t chain[REC_CHAIN_MAX + 1];
};
/* p, len: a PERF_RECORD_SAMPLE's body.  0, or -1 when it is malformed. */
int rec_parse_sample(const struct rec_perf *pp, const uint8_t *p, size_t len,
		     struct rec_sample *s);
/* Names for the addresses of each process (libdwfl when built with it). */
struct rec_symbols;
struct rec_symbols *rec_symbols_new(void);
/* pid's files are not what they were: it exec'd or exited. */
void rec_symbols_forget(struct rec_symbols *sy, pid_t pid);
void rec_symbols_free(struct rec_symbols *sy);
/* Whether frames get function names (built with libdw); without, a frame
 * is file+0xoffset. */
int rec_symbols_named(void);
/* s's chain as "f <- g <- main" into out; its length (0: no chain). */
size_t rec_symbols_chain(struct rec_symbols *sy, pid_t pid, const struct rec_sample *s, char *out,
			 size_t len);

/* argv as one line that bash reads back into the same words (the trace
 * header's "command"); when it does not fit in len, whole words only,
 * ending " ...". */
void rec_shell_join(char *out, size_t len, char *const argv[]);

/* ---- procfs.c ---- */

/* Add the THP settings under /sys/kernel/mm/transparent_hugepage to h,
 * keyed by the knob names thpsim uses. */
void rec_read_thp_settings(struct trace_header *h);
/* The recorder's memory cgroup (which the program inherits) and its
 * effective limits, the lowest along its path: header keys "cgroup",
 * "cgroup/memory.max", "cgroup/memory.high", "cgroup/memory.swap.max"
 * (bytes, or "max"); nothing when no memory controller is found. */
void rec_read_cgroup_limits(struct trace_header *h);
/* Write pid's address space as EXEC, VMA and TOUCH records. */
int rec_write_exec_snapshot(struct trace_writer *w, pid_t pid);
/* Read pid's smaps_rollup into k (kB).  Returns the number of figures. */
int rec_read_smaps_rollup(pid_t pid, struct trace_kfig *k, int max);
/* One VMA of /proc/PID/smaps, for attribution against the model's. */
struct rec_vma {
	uint64_t start, end;
	char name[96];          /* the pathname field: a file, [heap], [stack], or "" */
	uint64_t anon_kb, anon_huge_kb; /* Anonymous, AnonHugePages */
};
/* The VMAs of pid that hold anonymous memory, or are anonymous and of
 * 1 MiB or more, into *out (malloc'd): their number, or -errno. */
int rec_read_smaps_vmas(pid_t pid, struct rec_vma **out);

/* ---- child.c: the program's process before it execs the command ---- */

/* The user the command runs as under sudo. */
struct rec_user {
	int set;            /* 0: not under sudo (or --as-root): keep our own */
	uid_t uid;          /* SUDO_UID */
	gid_t gid;          /* SUDO_GID */
	gid_t *groups;      /* the user's supplementary groups, or just gid */
	int ngroups;
	char name[64];      /* the passwd name, or "uid N" */
};

/*
 * The user sudo was run by, when we are root and SUDO_UID is set: their
 * ids, and the groups of their passwd entry (just SUDO_GID when they have
 * none).  Not root or no SUDO_UID: u->set is 0.  0, or a negative errno
 * with a sentence in why (a SUDO_UID or SUDO_GID that is not a number).
 */
int rec_user_from_sudo(struct rec_user *u, char *why, size_t len);
void rec_user_free(struct rec_user *u);

/* What rec_child_prepare was doing when it failed, each with its words. */
#define REC_CHILD_STEPS(X)                                                            \
	X(EXEC, "exec")                                                               \
	X(PERSONALITY, "personality(ADDR_NO_RANDOMIZE)")                              \
	X(SETGROUPS, "setgroups")                                                     \
	X(SETGID, "setgid")                                                           \
	X(SETUID, "setuid")                                                           \
	X(STILL_ROOT, "the check that root is gone (setuid(0) succeeded)")
#define REC_STEP_ENUM(name, text) REC_STEP_##name,
enum rec_child_step { REC_CHILD_STEPS(REC_STEP_ENUM) REC_NR_STEPS };
#undef REC_STEP_ENUM
const char *rec_child_step_name(int step);

/*
 * In the child, right before exec: address-space randomisation off when
 * no_aslr (the current personality | ADDR_NO_RANDOMIZE), then, when u->set,
 * the user's groups, group and user.  System calls only (the child of a
 * fork).  0, or a negative errno with *step saying which failed.
 */
int rec_child_prepare(const struct rec_user *u, int no_aslr, int *step);
/* Whether the command's address space is randomised: "off" with no_aslr,
 * when the recorder itself runs without it (setarch -R) or when the
 * machine has it off (kernel.randomize_va_space=0); else "on". */
const char *rec_aslr_state(int no_aslr);

/* ---- damon.c: record --access ---- */

#define REC_DAMON_ROOT "/sys/kernel/mm/damon/admin"
/* The checks of each region in an aggregation interval (aggregation /
 * sampling). */
#define REC_DAMON_CHECKS 20
/* The aggregation interval of record --access, and its bounds (--access-ms). */
#define REC_ACCESS_MS_DEFAULT 100
#define REC_ACCESS_MS_MIN 20
#define REC_ACCESS_MS_MAX 10000

/* A region the kernel found accessed in a sample. */
struct rec_access_region {
	uint64_t start, len;    /* bytes */
	uint64_t nr;            /* DAMON's nr_accesses: checks that found it accessed */
};

struct rec_damon {
	char root[256];         /* the sysfs admin folder (REC_DAMON_ROOT) */
	int made;               /* we made kdamond 0: rec_damon_stop removes it */
	int running;            /* turned on, and no sample has failed */
	pid_t pid;              /* the target */
	uint64_t aggr_us, sample_us; /* the intervals */
	struct rec_access_region *reg; /* the last sample's accessed regions, by address */
	size_t nreg, capreg;
	struct trace_access_end end;   /* and its end */
	uint64_t samples;       /* taken */
	uint64_t last_ns;       /* the recorder's clock when the last one was taken */
};

/*
 * Before the program runs: DAMON vaddr set up on root (NULL:
 * REC_DAMON_ROOT; a test's imitation of it has the kernel's DAMON modules'
 * parameters in it too, as root/damon_stat/parameters/enabled) for an
 * aggregation interval of aggr_us, not started.  0, or a negative errno
 * with a sentence in why (no sysfs interface, not root, DAMON in use by
 * someone else: a kdamond, or one of the kernel's DAMON modules enabled;
 * no vaddr; a write refused); nothing is left changed then.
 */
int rec_damon_prepare(struct rec_damon *d, const char *root, uint64_t aggr_us, char *why,
		      size_t len);
/* Monitor pid from now on.  0, or a negative errno with why. */
int rec_damon_start(struct rec_damon *d, pid_t pid, char *why, size_t len);
/* One sample into d->reg and d->end: waits for the end of the aggregation
 * interval in progress.  0, or a negative errno (the target is gone). */
int rec_damon_sample(struct rec_damon *d);
/* The last sample as ACCESS records (the caller writes its TIME and PROC). */
void rec_damon_write(const struct rec_damon *d, struct trace_writer *w);
/* Everything undone (off, no kdamond); the regions freed.  Safe to call
 * again, or on a d that prepare refused. */
void rec_damon_stop(struct rec_damon *d);
/* The kernel's figures for pid's regions r[0..n-1] into e (present_kb,
 * pmd_kb, mthp_kb) from /proc/PID/pagemap and /proc/kpageflags; e->truth
 * 0 when they cannot be read (not root) or the regions span over 4 GiB. */
void rec_access_truth(pid_t pid, const struct rec_access_region *r, size_t n,
		      struct trace_access_end *e);

/* ---- record.c: the recorder as a library call ---- */

/* The exit status when the recorder itself failed (no tracing, the trace
 * could not be written). */
#define RECORD_FAILED 125

/* What to record ("thpsim record" parses it: src/cli/record_cmd.c). */
struct record_opts {
	const char *out;    /* the trace; with measure, the JSON file (NULL: stderr) */
	size_t ring_mib;    /* the perf ring buffer per CPU (0: 64) */
	int measure;        /* no trace: each process's smaps_rollup at its exit */
	int quiet;          /* no summary line */
	int force;          /* replace an existing out */
	int no_aslr;        /* run the command with address-space randomisation off */
	int as_root;        /* under sudo, keep the command root (else: SUDO_UID's user) */
	int callers;        /* name the call chain of each mapping call (CALLER records) */
	int access;         /* sample the first process's accesses with DAMON (ACCESS records) */
	unsigned access_ms; /* their aggregation interval (0: REC_ACCESS_MS_DEFAULT) */
	const char *damon_root; /* DAMON's sysfs folder (NULL: REC_DAMON_ROOT; tests) */
	char *const *argv;  /* the command, NULL-terminated */
	int exit_signal;    /* out: the program was killed by this signal */
};

/*
 * Run the command under the recorder.  Returns an exit status: the
 * command's (128 + N when signal N killed it, with o->exit_signal set),
 * 127 or 126 when it cannot be run, 2 for an output file it must not
 * replace, RECORD_FAILED.  Messages go to stderr; the caller's signal
 * mask is as it was.
 */
int record_run(struct record_opts *o);

#endif
