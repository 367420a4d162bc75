/*
 * server.c - a long-running server's heap, shaped for khugepaged: a large
 * anonymous heap written sparsely in 4 KiB pages while THP may not use it,
 * then made eligible (MADV_HUGEPAGE, as jemalloc's and glibc's THP options
 * do), then idle, as a server between requests.  khugepaged collapses each
 * 2 MiB range that holds a written page (max_ptes_none=511): the program's
 * AnonHugePages grows, minutes after its last write, at the pace of
 * khugepaged's pages_to_scan and scan_sleep_millisecs.
 *
 *	server [--size MiB] [--stride KiB] [--used PERCENT] [--idle SECONDS]
 *	       [--collapse PERCENT] [--release]
 *
 * The heap (--size, default 128 MiB, 2 MiB-aligned) is written one byte
 * every --stride (default 64 KiB) over its first --used percent (default
 * 75: the rest of the heap is never touched and stays empty, which
 * khugepaged passes over), with MADV_NOHUGEPAGE so that every write is a
 * 4 KiB fault whatever transparent_hugepage/enabled says; then
 * MADV_HUGEPAGE.  Then it says it is ready, and every second, from one
 * second after that, it prints its own AnonHugePages from
 * /proc/self/smaps_rollup:
 *
 *	thpsim-ready T_MS
 *	thpsim-series T_MS AnonHugePages_kB
 *
 * (T_MS is the time since the start, CLOCK_MONOTONIC) for --idle seconds
 * (default 8), and exits.  The idle seconds count from the ready line, not
 * from the start: under the recorder the writes take longer (under TCG more
 * than a second for --stride 4), and counted from the start the recorded
 * run would idle that much less than the real one, leaving khugepaged less
 * time in the trace than it had in the run (6.18 guest, refill: 61440 kB at
 * the trace's end against 65536 kB).  tools/kernels lines the two series up
 * on their ready lines.  With --collapse, right after MADV_HUGEPAGE it
 * asks for the first PERCENT of the heap (in whole 2 MiB) with
 * MADV_COLLAPSE (Linux 6.1+), as a program that wants its THPs now does,
 * and says on stderr if the call failed.  tools/kernels compares the series with the one
 * thpsim replay predicts from the program's trace.
 *
 * --release is Go issue 64332: the heap is madvised first, so the writes
 * fault THPs, then returned to the kernel with MADV_DONTNEED, all but the
 * first page of each 2 MiB (as a runtime's scavenger releases the free
 * part of its heap).  The zap splits each PMD; with max_ptes_none=511
 * khugepaged then finds one present page in each range, collapses it back
 * into a THP, and the memory the program gave back returns while it idles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MB (1024UL * 1024)
#define HPAGE (2 * MB)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1+; older C libraries lack the name */
#endif

static unsigned long anon_huge_kb(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "AnonHugePages:", 14))
			kb = strtoul(line + 14, NULL, 10);
	fclose(f);
	return kb;
}

static long long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000LL + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
	unsigned long size = 128 * MB, stride = 64 * 1024, used = 75, idle = 8, collapse = 0;
	int release = 0;
	struct timespec t0, next;
	char *map, *heap;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = strtoul(argv[++i], NULL, 0) * MB;
		else if (!strcmp(argv[i], "--stride") && i + 1 < argc)
			stride = strtoul(argv[++i], NULL, 0) * 1024;
		else if (!strcmp(argv[i], "--used") && i + 1 < argc)
			used = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--idle") && i + 1 < argc)
			idle = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--collapse") && i + 1 < argc)
			collapse = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--release"))
			release = 1;
		else {
			fprintf(stderr, "usage: server [--size MiB] [--stride KiB] [--used PERCENT] "
					"[--idle SECONDS] [--collapse PERCENT] [--release]\n");
			return 2;
		}
	}
	if (!size || !stride || stride % 4096 || used > 100 || collapse > 100) {
		fprintf(stderr, "server: bad --size, --stride, --used or --collapse\n");
		return 2;
	}
	/* 2 MiB-aligned: every 2 MiB of the heap can become one THP */
	map = mmap(NULL, size + HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	heap = (char *)(((unsigned long)map + HPAGE - 1) & ~(HPAGE - 1));
	if (heap > map)
		munmap(map, (size_t)(heap - map));
	munmap(heap + size, (size_t)(map + HPAGE - heap));
	madvise(heap, size, release ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	for (unsigned long off = 0; off < size / 100 * used; off += stride)
		heap[off] = 1;
	if (release)
		for (unsigned long off = 0; off + HPAGE <= size / 100 * used; off += HPAGE)
			madvise(heap + off + 4096, HPAGE - 4096, MADV_DONTNEED);
	madvise(heap, size, MADV_HUGEPAGE);
	if (collapse) {
		unsigned long len = size / 100 * collapse / HPAGE * HPAGE;

		if (len && madvise(heap, len, MADV_COLLAPSE))
			fprintf(stderr, "server: MADV_COLLAPSE of %lu MiB: %s\n", len / MB,
				strerror(errno));
	}

	clock_gettime(CLOCK_MONOTONIC, &next);
	printf("thpsim-ready %lld\n", ms_since(&t0));
	fflush(stdout);
	for (unsigned long s = 1; s <= idle; s++) {
		next.tv_sec++;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL))
			;
		printf("thpsim-series %lld %lu\n", ms_since(&t0), anon_huge_kb());
		fflush(stdout);
	}
	return heap[0] == 1 ? 0 : 1;
}
