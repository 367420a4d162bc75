/*
 * hotcold.c - a working set smaller than the memory: SIZE MiB written
 * once, then for SECONDS only HOT MiB in its middle read, every cache line
 * over and over.  What "record --access" must tell apart (the hot range
 * accessed in every sample, the rest in none); with --passes, a set amount
 * of work for the recorder's benchmark (thpsim bench: record --access
 * against record).
 *
 *   hotcold [--size MiB] [--hot MiB] [--seconds S | --passes N]
 *
 * Defaults: 32 MiB, 8 MiB hot, 1.5 s; --passes N: N passes over the hot
 * range, however long they take.  Prints "hot START END" and
 * "cold START END" (the whole mapping) as hex addresses, then, when the
 * reading starts, unmaps a page of its own mapped for the purpose: the
 * munmap of 4096 bytes in the trace marks the moment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define MB (1024UL * 1024)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	size_t size = 32 * MB, hot = 8 * MB, off;
	double secs = 1.5, t0;
	unsigned long passes = 0, pass = 0;
	volatile unsigned long sum = 0;
	char *base, *marker;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--size"))
			size = strtoul(argv[i + 1], NULL, 0) * MB;
		else if (!strcmp(argv[i], "--hot"))
			hot = strtoul(argv[i + 1], NULL, 0) * MB;
		else if (!strcmp(argv[i], "--seconds"))
			secs = strtod(argv[i + 1], NULL);
		else if (!strcmp(argv[i], "--passes"))
			passes = strtoul(argv[i + 1], NULL, 0);
		else
			return fprintf(stderr, "hotcold: unknown option %s\n", argv[i]), 2;
	}
	if (!size || !hot || hot > size)
		return fprintf(stderr, "hotcold: --hot must be 1 to --size MiB\n"), 2;
	marker = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED || marker == MAP_FAILED)
		return perror("hotcold: mmap"), 1;
	memset(base, 1, size);
	off = (size - hot) / 2 & ~(MB - 1);
	printf("hot %#lx %#lx\ncold %#lx %#lx\n", (unsigned long)(base + off),
	       (unsigned long)(base + off + hot), (unsigned long)base, (unsigned long)(base + size));
	fflush(stdout);
	munmap(marker, 4096);
	t0 = now();
	do {
		for (size_t i = off; i < off + hot; i += 64)
			sum += (unsigned char)base[i];
	} while (passes ? ++pass < passes : now() - t0 < secs);
	return sum == 0; /* every byte is 1 */
}
