/*
 * accesses.c - a program whose working set differs from what it touched,
 * for the coverage of the accessed memory (record --access, issue 25):
 * a phase that fills its memory, then a phase of SECONDS that reads only
 * part of it, over and over (DAMON samples the second phase).
 *
 *   --mode hot     48 MiB mmap'd (a 2 MiB multiple: 6.12+ aligns it), all
 *                  written, then the first 24 MiB read (half: a region
 *                  DAMON finds accessed outside it, some 700 KiB of other
 *                  memory for one interval now and then, moves the share
 *                  by under 3 points, where it moved a 12 MiB one by 5)
 *   --mode heap    40 000 objects of 512 bytes from malloc (a brk heap
 *                  grown in glibc's steps: a 2 MiB block is huge only when
 *                  it lay inside the heap at its first touch), then the
 *                  first half of them read
 *   --mode mixed   a buffer of 6 MiB from malloc (mmap'd: 6 MiB and a page,
 *                  not a 2 MiB multiple, so not aligned: the 2 MiB blocks
 *                  wholly inside it are huge) and 2 MiB mmap'd MAP_STACK,
 *                  as a thread stack is (never THP on 6.7+), both written,
 *                  then both read
 *
 * --seconds S sets the reading phase (default 2).  Prints its own
 * smaps_rollup figures at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "rollup.h"

#define MB (1024L * 1024)

static double seconds = 2;
static volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read a word of every page of [p, p + len). */
static void read_pass(const char *p, long len)
{
	uint64_t s = 0;

	for (long o = 0; o < len; o += 4096)
		s += *(volatile const uint64_t *)(p + o);
	sink += s;
}

/* The same until the phase is over. */
static void read_until(const char *p, long len, double end)
{
	while (now() < end)
		read_pass(p, len);
}

static int hot(void)
{
	char *p = mmap(NULL, 48 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return perror("mmap"), 1;
	memset(p, 1, 48 * MB);
	read_until(p, 24 * MB, now() + seconds);
	return 0;
}

static int heap(void)
{
	enum { N = 40000 };
	static char *obj[N];
	uint64_t s = 0;
	double end;

	for (int i = 0; i < N; i++) {
		if (!(obj[i] = malloc(512)))
			return perror("malloc"), 1;
		memset(obj[i], (char)i, 512);
	}
	end = now() + seconds;
	while (now() < end)
		for (int i = 0; i < N / 2; i++)
			s += *(volatile char *)obj[i];
	sink += s;
	return 0;
}

static int mixed(void)
{
	char *buf = malloc(6 * MB);
	char *stack = mmap(NULL, 2 * MB, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	double end;

	if (!buf || stack == MAP_FAILED)
		return perror("mixed"), 1;
	memset(buf, 1, 6 * MB);
	memset(stack, 2, 2 * MB);
	end = now() + seconds;
	while (now() < end) {
		read_pass(buf, 6 * MB);
		read_pass(stack, 2 * MB);
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = "hot";
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mode") && i + 1 < argc)
			mode = argv[++i];
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc && atof(argv[i + 1]) > 0)
			seconds = atof(argv[++i]);
		else {
			fprintf(stderr, "usage: accesses [--mode hot|heap|mixed] [--seconds S]\n");
			return 2;
		}
	}
	if (!strcmp(mode, "hot"))
		rc = hot();
	else if (!strcmp(mode, "heap"))
		rc = heap();
	else if (!strcmp(mode, "mixed"))
		rc = mixed();
	else {
		fprintf(stderr, "accesses: no mode '%s' (hot, heap, mixed)\n", mode);
		return 2;
	}
	print_rollup();
	return rc;
}
