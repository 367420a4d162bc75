/*
 * churn.c - a program that shapes its memory in every way the recorder
 * follows, for validating replays against the kernel:
 *
 *  - 30000 small malloc()s on the brk heap, half of them freed again;
 *  - large malloc()s served by mmap, some freed (munmap), one grown by
 *    realloc (mremap) and one partly given back with MADV_DONTNEED;
 *  - 4 threads, one after the other, each filling 12 MiB from a malloc
 *    arena (arenas are reserved PROT_NONE and opened up with mprotect;
 *    thread stacks are MAP_STACK);
 *  - a fork()ed child that writes into 8 MiB of its parent's memory
 *    (copy-on-write) and 16 MiB of its own, then exits.
 *
 * It asks for nothing itself: with GLIBC_TUNABLES=glibc.malloc.hugetlb=1,
 * glibc's malloc asks for THP (madvise(MADV_HUGEPAGE)) on what it maps.
 * Before exiting it prints its own Rss, Anonymous and AnonHugePages.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rollup.h"

#define MB (1024UL * 1024)

static void fill(char *p, size_t len, int step)
{
	for (size_t i = 0; i < len; i += (size_t)step)
		p[i] = (char)(i | 1);
}

static void *worker(void *arg)
{
	size_t n = 12 * MB / 64;
	char **v = malloc(64 * sizeof(*v));

	(void)arg;
	for (int i = 0; i < 64; i++) {
		v[i] = malloc(n);
		fill(v[i], n, 4096);
	}
	for (int i = 0; i < 64; i += 2)
		free(v[i]);
	return NULL;
}


int main(void)
{
	static char *small[30000];
	char *big[8], *grown;
	pthread_t th[4];
	pid_t child;

	for (int i = 0; i < 30000; i++) {
		size_t n = 200 + (size_t)(i * 7919) % 3800;

		small[i] = malloc(n);
		fill(small[i], n, 512);
	}
	for (int i = 0; i < 30000; i += 2)
		free(small[i]);
	for (int i = 0; i < 8; i++) {
		size_t n = (3 + (size_t)i) * MB;

		big[i] = malloc(n);
		fill(big[i], n / 2, 4096);
	}
	free(big[1]);
	free(big[4]);
	madvise((void *)(((unsigned long)big[6] + 4095) & ~4095UL), 2 * MB, MADV_DONTNEED);
	grown = malloc(4 * MB);
	fill(grown, 4 * MB, 4096);
	grown = realloc(grown, 32 * MB);
	fill(grown + 24 * MB, 8 * MB, 4096);

	/* one after the other: which arena a thread gets must not depend on
	 * timing, or no two runs would be alike */
	for (int i = 0; i < 4; i++) {
		pthread_create(&th[i], NULL, worker, NULL);
		pthread_join(th[i], NULL);
	}

	fflush(stdout);
	child = fork();
	if (child == 0) {
		char *own = malloc(16 * MB);

		fill(grown, 8 * MB, 4096);
		fill(own, 16 * MB, 4096);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	print_rollup();
	return 0;
}
