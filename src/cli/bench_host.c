/*
 * bench_host.c - what "thpsim bench" measures on the host rather than in
 * the model: the running kernel's own 4 KiB read-fault rate (the anchor the
 * model's rate is compared with), this process's resident memory, and the
 * number of CPUs it may use.
 *
 * The native loop is the model's read_4k loop done for real: an anonymous
 * private mapping with THP turned off for it (MADV_NOHUGEPAGE, so the
 * machine's THP setting does not matter), one byte read every 4 KiB, so
 * every read is a fault that maps the shared zero page, then munmap.  The
 * kernel's own minor-fault count (getrusage) says whether each read really
 * faulted.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long minflt(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_minflt;
}

double bench_native_read_4k(uint64_t bytes, double min_s, double *minflt_per_page)
{
	const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
	uint64_t pages = 0;
	long f0 = minflt();
	double t0 = bench_now(), t = t0;
	unsigned sum = 0;

	*minflt_per_page = 0;
	do {
		volatile const unsigned char *p;
		void *map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (map == MAP_FAILED)
			return 0;
		/* EINVAL on a kernel without THP, where it is off anyway */
		(void)madvise(map, bytes, MADV_NOHUGEPAGE);
		p = map;
		for (uint64_t off = 0; off < bytes; off += (uint64_t)page)
			sum += p[off];
		munmap(map, bytes);
		pages += bytes / (uint64_t)page;
		t = bench_now();
	} while (t - t0 < min_s);
	if (sum) /* the zero page reads as zero; anything else is not a fault */
		return 0;
	*minflt_per_page = (double)(minflt() - f0) / (double)pages;
	return (double)pages / (t - t0);
}

uint64_t bench_host_rss(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb << 10;
}

int bench_nr_cpus(void)
{
	cpu_set_t set;
	long n;

	if (!sched_getaffinity(0, sizeof(set), &set) && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}
