/*
 * brkjump.c - a heap that grows by brk in jumps, as CPython's and many
 * allocators' do: each jump moves the break by an uneven amount, the new
 * part is madvised MADV_HUGEPAGE (so that THP needs only "madvise" mode)
 * and written page by page at once.
 *
 * A fault gets a THP only where a whole 2 MiB-aligned block lies inside
 * the heap when it is touched; a block that straddles the break at the
 * jump stays in 4 KiB pages.  With address randomisation the heap starts
 * at a random page (arch_randomize_brk), so how many blocks fit varies
 * from run to run: the case of issue 24 (a Python heap with 2, 4 or 8 MiB
 * of THPs over runs of one program).
 *
 * Prints its own smaps_rollup figures (Rss, Anonymous, AnonHugePages) and
 * the heap's start within 2 MiB, then exits.  --jumps K takes the first K
 * jumps (default all); --scale N multiplies every jump by N.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rollup.h"

#define KB 1024L

static const long jumps_kb[] = { 1300, 2900, 700, 4100, 3300, 1800, 5200, 2500, 900, 3700 };


int main(int argc, char **argv)
{
	int n = (int)(sizeof(jumps_kb) / sizeof(jumps_kb[0]));
	long scale = 1, page = sysconf(_SC_PAGESIZE);
	uintptr_t start;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--jumps") && i + 1 < argc && atoi(argv[i + 1]) > 0 &&
		    atoi(argv[i + 1]) < n)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--scale") && i + 1 < argc && atol(argv[i + 1]) > 0)
			scale = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: brkjump [--jumps K] [--scale N]\n");
			return 2;
		}
	}
	start = (uintptr_t)sbrk(0);
	for (int j = 0; j < n; j++) {
		char *old = sbrk(jumps_kb[j] * KB * scale);
		uintptr_t from = ((uintptr_t)old + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
		uintptr_t to = (uintptr_t)old + (uintptr_t)(jumps_kb[j] * KB * scale);

		if (old == (void *)-1) {
			perror("sbrk");
			return 1;
		}
		if (to > from)
			madvise((void *)from, to - from, MADV_HUGEPAGE);
		for (char *p = old; p < old + jumps_kb[j] * KB * scale; p += page)
			*p = 1;
	}
	print_rollup();
	printf("heap_start_offset_kB: %lu\n", (unsigned long)(start % (2 * 1024 * 1024) / 1024));
	return 0;
}
