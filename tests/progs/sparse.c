/*
 * sparse.c - the shape of a sparse hash table or a bump-allocated heap
 * under a memory limit (issue 28): one byte written every STEP KiB over a
 * SIZE MiB anonymous mapping, which under THP "always" makes each 2 MiB a
 * THP of which 2 MiB / STEP pages hold data.
 *
 *   sparse [--size MiB] [--step KiB] [--madvise] [--dontneed PCT]
 *          [--fork] [--threads N] [--progress FILE]
 *
 * --madvise: MADV_HUGEPAGE on the mapping.  --dontneed PCT: after the
 * first half is written, MADV_DONTNEED on the first PCT per cent of each
 * 2 MiB of it (partly unmapped THPs for the deferred split), then the
 * second half.  --fork: a child writes its half (copy-on-write of the
 * parent's memory not touched; new pages of its own) while the parent
 * waits.  --threads N: the mapping is written by N threads, each its own
 * slice, one after the other.  --progress FILE: how much of the mapping
 * has been written, in thousandths, kept up to date every 2 MiB in FILE
 * (shared, so it survives an OOM kill and counts every process's part).
 * Prints its smaps_rollup figures at the end.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rollup.h"

#define MB (1024UL * 1024)

static char *base;
static size_t size_b = 1024 * MB, step_b = 64 * 1024;
static char *progress; /* a shared page: thousandths written, as text */

struct slice {
	size_t from, to;
};

static void fill(size_t from, size_t to)
{
	for (size_t i = from; i < to; i += step_b) {
		base[i] = 1;
		if (progress && !((i + step_b) & (2 * MB - 1)))
			snprintf(progress, 16, "%zu\n", (i + step_b) * 1000 / size_b);
	}
}

static void *worker(void *arg)
{
	struct slice *s = arg;

	fill(s->from, s->to);
	return NULL;
}

int main(int argc, char **argv)
{
	int madv = 0, do_fork = 0, threads = 0, dontneed = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size_b = strtoul(argv[++i], NULL, 0) * MB;
		else if (!strcmp(argv[i], "--step") && i + 1 < argc)
			step_b = strtoul(argv[++i], NULL, 0) * 1024;
		else if (!strcmp(argv[i], "--madvise"))
			madv = 1;
		else if (!strcmp(argv[i], "--fork"))
			do_fork = 1;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dontneed") && i + 1 < argc)
			dontneed = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--progress") && i + 1 < argc) {
			int fd = open(argv[++i], O_RDWR | O_CREAT | O_TRUNC, 0644);

			if (fd < 0 || ftruncate(fd, 4096) ||
			    (progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
				    MAP_FAILED) {
				perror("sparse: --progress");
				return 1;
			}
			close(fd);
		}
		else {
			fprintf(stderr, "sparse: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!size_b || !step_b || dontneed < 0 || dontneed > 100 || threads < 0) {
		fprintf(stderr, "sparse: bad arguments\n");
		return 2;
	}
	base = mmap(NULL, size_b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (madv)
		madvise(base, size_b, MADV_HUGEPAGE);
	if (threads) {
		for (int t = 0; t < threads; t++) {
			struct slice s = { size_b / (size_t)threads * (size_t)t,
					   size_b / (size_t)threads * (size_t)(t + 1) };
			pthread_t th;

			pthread_create(&th, NULL, worker, &s);
			pthread_join(th, NULL);
		}
	} else if (dontneed) {
		fill(0, size_b / 2);
		for (size_t r = 0; r < size_b / 2; r += 2 * MB)
			madvise(base + r, 2 * MB * (size_t)dontneed / 100 & ~4095UL, MADV_DONTNEED);
		fill(size_b / 2, size_b);
	} else if (do_fork) {
		pid_t child;

		fill(0, size_b / 2);
		child = fork();
		if (child == 0) {
			fill(size_b / 2, size_b);
			print_rollup();
			_exit(0);
		}
		waitpid(child, NULL, 0);
	} else {
		fill(0, size_b);
	}
	print_rollup();
	return 0;
}
