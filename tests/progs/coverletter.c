/*
 * coverletter.c - the program of the cover letter of "Introduce huge zero
 * page" (Kirill A. Shutemov, 2012), as a real binary:
 *
 *	posix_memalign((void **)&p, 2 * MB, 200 * MB);
 *	for (i = 0; i < 200 * MB; i += 4096)
 *		assert(p[i] == 0);
 *	pause();
 *
 * Options make the variants validation needs: --madvise adds
 * madvise(p, size, MADV_HUGEPAGE) after the allocation (the program asking
 * for THP on a machine in "madvise" mode), --write STEP then writes one
 * byte every STEP bytes, --size MiB changes the 200 MiB, and --pause keeps
 * the original pause().  Without --pause the program prints its own
 * smaps_rollup figures (Rss, Anonymous, AnonHugePages) and exits, so that a
 * run can be compared with what thpsim predicts for it.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rollup.h"

#define MB (1024 * 1024)


int main(int argc, char **argv)
{
	long size = 200, step = 0;
	int madv = 0, do_pause = 0;
	char *p;
	long i;

	for (int a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--madvise"))
			madv = 1;
		else if (!strcmp(argv[a], "--pause"))
			do_pause = 1;
		else if (!strcmp(argv[a], "--write") && a + 1 < argc)
			step = atol(argv[++a]);
		else if (!strcmp(argv[a], "--size") && a + 1 < argc)
			size = atol(argv[++a]);
		else {
			fprintf(stderr, "usage: coverletter [--madvise] [--write STEP] [--size MiB] "
					"[--pause]\n");
			return 2;
		}
	}
	if (posix_memalign((void **)&p, 2 * MB, (size_t)size * MB))
		return 1;
	if (madv && madvise(p, (size_t)size * MB, MADV_HUGEPAGE))
		perror("madvise");
	for (i = 0; i < size * MB; i += 4096)
		assert(p[i] == 0);
	for (i = 0; step > 0 && i < size * MB; i += step)
		p[i] = 1;
	if (do_pause)
		pause();
	print_rollup();
	return 0;
}
