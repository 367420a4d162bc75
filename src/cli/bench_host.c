/*
 * bench_host.c - what "thpsim bench" measures on the host rather than in
 * the model: the running kernel's own 4 KiB read-fault rate (the anchor the
 * model's rate is compared with), this process's resident memory, and the
 * number of CPUs it may use.
 *
 * The native loops are the model's read loops done for real: an anonymous
 * private mapping with THP turned off for it (MADV_NOHUGEPAGE, so the
 * machine's THP setting does not matter), one byte read every 4 KiB, so
 * every read is a fault that maps the shared zero page, then munmap; and a
 * MADV_HUGEPAGE mapping read every 2 MiB, each read a huge zero page fault
 * when transparent_hugepage/use_zero_page is 1 and enabled is not "never"
 * (only read here, never changed).  The kernel's own minor-fault count
 * (getrusage) says whether each read really faulted.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_thread_cpu(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long minflt(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_minflt;
}

double bench_native_read(uint64_t bytes, int hugepage, double min_s, double *minflt_per_read)
{
	const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
	const uint64_t step = hugepage ? 2ULL << 20 : (uint64_t)page;
	uint64_t reads = 0;
	long f0 = minflt();
	double t0 = bench_now(), t = t0;
	unsigned sum = 0;

	*minflt_per_read = 0;
	do {
		volatile const unsigned char *p;
		void *map = mmap(NULL, bytes + (hugepage ? step : 0), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		uint64_t skip;

		if (map == MAP_FAILED)
			return 0;
		/* a huge zero page needs a 2 MiB-aligned window */
		skip = hugepage ? (step - ((uintptr_t)map & (step - 1))) & (step - 1) : 0;
		if (hugepage && madvise((char *)map + skip, bytes, MADV_HUGEPAGE)) {
			munmap(map, bytes + step);
			return 0;
		}
		/* EINVAL on a kernel without THP, where it is off anyway */
		if (!hugepage)
			(void)madvise(map, bytes, MADV_NOHUGEPAGE);
		p = (const unsigned char *)map + skip;
		for (uint64_t off = 0; off < bytes; off += step)
			sum += p[off];
		munmap(map, bytes + (hugepage ? step : 0));
		reads += bytes / step;
		t = bench_now();
	} while (t - t0 < min_s);
	if (sum) /* the zero pages read as zero; anything else is not a fault */
		return 0;
	*minflt_per_read = (double)(minflt() - f0) / (double)reads;
	return (double)reads / (t - t0);
}

double bench_native_parallel_hzp(int nproc, double seconds)
{
	pid_t pids[256];
	int fd[2], started = 0, ok = 1;
	double total = 0;

	if (nproc < 1 || nproc > 256 || pipe(fd))
		return 0;
	fflush(NULL);
	for (int i = 0; i < nproc; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			ok = 0;
			break;
		}
		if (pid == 0) {
			/* a child: huge zero page faults for the whole time; its
			 * rate goes up the pipe (0 if the loop failed) */
			double minflt_per_read, r = bench_native_read(256ULL << 20, 1, seconds,
								      &minflt_per_read);

			close(fd[0]);
			_exit(write(fd[1], &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
		}
		pids[started++] = pid;
	}
	close(fd[1]);
	for (int i = 0; i < started; i++) {
		double r;

		if (read(fd[0], &r, sizeof(r)) == (ssize_t)sizeof(r) && r > 0)
			total += r;
		else
			ok = 0;
	}
	close(fd[0]);
	for (int i = 0; i < started; i++) {
		int st;

		if (waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			ok = 0;
	}
	return ok ? total : 0;
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
