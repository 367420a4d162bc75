/*
 * bench.h - what the files of "thpsim bench" share: the clock, the model's
 * single-process fault rates (bench.c), the reference-count experiment
 * (bench_refcount.c) and the measurements taken on the host itself: the
 * kernel's own fault rate and this process's memory (bench_host.c).
 */
#ifndef THPSIM_BENCH_H
#define THPSIM_BENCH_H

#include <stdint.h>

#include "thpsim.h"

/* Seconds on the monotonic clock, and of CPU time this thread has had
 * (0 when the clock cannot be read). */
double bench_now(void);
double bench_thread_cpu(void);

/* ---- bench_refcount.c ---- */

/* The huge zero page lifetimes, in the knob's spelling. */
#define BENCH_NR_LIFETIMES 3
extern const char *const bench_lifetimes[BENCH_NR_LIFETIMES];

struct refcount_params {
	int threads;         /* one simulated process stream per host thread */
	int procs;           /* live processes each thread keeps */
	uint64_t region;     /* bytes each process maps and read-faults */
	uint64_t step;       /* one byte read every step bytes (4 KiB..2 MiB) */
	double seconds;      /* length of one measurement */
};

struct refcount_result {
	double faults_per_s; /* huge zero page read faults, all threads */
	uint64_t faults;     /* pgfault counted by the model */
	uint64_t processes;  /* process lifetimes run */
	double seconds;      /* wall time of the measurement */
	double cpu_share;    /* CPU time the threads got / (threads x wall time):
				below 1 when the host ran something else too */
};

/* The simulated RAM a run of these parameters uses. */
uint64_t bench_refcount_ram(const struct refcount_params *prm);
#define BENCH_MAX_RAM (8192ULL << 30) /* frame numbers are 32 bits */

/* One measurement on a fresh machine: 0, or a negative errno after printing
 * what went wrong. */
int bench_refcount_run(const char *lifetime, const struct refcount_params *prm,
		       struct refcount_result *res);

/* ---- bench_host.c ---- */

/* The running kernel's read-fault rate: mmap "bytes" anonymous, read one
 * byte every 4 KiB with THP off (MADV_NOHUGEPAGE), or every 2 MiB of a
 * MADV_HUGEPAGE window when "hugepage", munmap; repeated for at least min_s
 * seconds.  *minflt_per_read gets the kernel's own count of minor faults
 * per read (about 1 when every read faulted).  0 on failure. */
double bench_native_read(uint64_t bytes, int hugepage, double min_s, double *minflt_per_read);

/* The same huge zero page loop in nproc processes at once (fork): their
 * summed rate, 0 on failure.  The kernel's own lifetime (per-mm on Linux
 * 4.9+) under the refcount experiment's load. */
double bench_native_parallel_hzp(int nproc, double seconds);

/* This process's resident memory (VmRSS) in bytes, 0 if unknown. */
uint64_t bench_host_rss(void);

/* Host CPUs this process may run on. */
int bench_nr_cpus(void);

#endif
