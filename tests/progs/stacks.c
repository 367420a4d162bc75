/*
 * stacks.c - OpenJDK's thread stacks (JDK-8312182): many threads, each
 * with a 2 MiB stack and no glibc guard page (the JVM sets its own guard
 * pages later), so the stacks are adjacent anonymous mmaps that merge into
 * one VMA.  Under THP always each thread's first touch of its stack finds
 * a whole 2 MiB block inside that VMA and faults a THP, on kernels where
 * MAP_STACK is only a hint (6.1: measured 407,552 kB AnonHugePages for 200
 * threads); since "mm: mmap: map MAP_STACK to VM_NOHUGEPAGE" (6.7) the
 * stacks get none (thpsim/map_stack_nohugepage).
 *
 *	stacks [--threads N] [--touch KiB]
 *
 * Each thread (default 32) writes --touch KiB (default 16) of its stack
 * and waits until all have; the main thread then prints its smaps_rollup
 * figures (Rss, Anonymous, AnonHugePages) and exits with the threads still
 * in their stacks, so that the figures at exit are those of the live
 * threads (a thread that ends has glibc release its stack with
 * MADV_DONTNEED).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rollup.h"

static pthread_barrier_t all_touched;
static unsigned long touch = 16 * 1024;

static void *thread(void *arg)
{
	volatile char *buf = __builtin_alloca(touch);

	(void)arg;
	for (unsigned long i = 0; i < touch; i += 4096)
		buf[i] = 1;
	pthread_barrier_wait(&all_touched);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = 32;
	pthread_attr_t attr;
	pthread_t *th;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			n = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--touch") && i + 1 < argc)
			touch = strtoul(argv[++i], NULL, 0) * 1024;
		else {
			fprintf(stderr, "usage: stacks [--threads N] [--touch KiB]\n");
			return 2;
		}
	}
	if (!n || n > 4096 || !touch || touch > 1024 * 1024) {
		fprintf(stderr, "stacks: --threads 1 to 4096, --touch 1 to 1024 KiB\n");
		return 2;
	}
	th = calloc(n, sizeof(*th));
	if (!th)
		return 1;
	pthread_barrier_init(&all_touched, NULL, (unsigned)n + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 2 * 1024 * 1024);
	pthread_attr_setguardsize(&attr, 0);
	for (unsigned long i = 0; i < n; i++)
		if (pthread_create(&th[i], &attr, thread, NULL)) {
			perror("pthread_create");
			return 1;
		}
	pthread_barrier_wait(&all_touched);
	print_rollup();
	fflush(stdout);
	exit(0);
}
