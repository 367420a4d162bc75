/*
 * mappings.c - a program with one of each kind of anonymous mapping, for
 * attribution by mapping (docs/validation.md): each VMA's Anonymous and
 * AnonHugePages in the kernel's smaps at exit against the model's
 * mappings over the same range.
 *
 *   - a brk heap grown in jumps (sbrk), every page written;
 *   - a 64 MiB mmap with MADV_HUGEPAGE, one byte written every 64 KiB;
 *   - a 32 MiB mmap without advice, its first 8 MiB written;
 *   - 48 mmaps of 128 KiB, every page written;
 *   - 6 threads with glibc's default stacks (MAP_STACK), each writing
 *     256 KiB of its stack, then waiting until the process exits (a
 *     joined thread's stack would be given back with MADV_DONTNEED);
 *   - a fork: the child writes 4 MiB of the 64 MiB mapping (copy on
 *     write) and 1 MiB of the heap, then exits; the parent waits.
 *
 *   mappings [--heap-jumps N]   (default 6 jumps of 3 MiB)
 *
 * Nothing depends on timing: main waits until each thread has written its
 * stack, and for the child, so every run does the same calls in the same
 * order.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define KB 1024UL
#define MB (1024 * KB)

static void writes(volatile char *p, size_t len, size_t step)
{
	for (size_t i = 0; i < len; i += step)
		p[i] = 1;
}

/* not inlined: record --callers names it (tests/unit/test_record.c) */
__attribute__((noinline)) static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mappings: mmap");
		exit(1);
	}
	return p;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int written;

static void *thread(void *arg)
{
	volatile char buf[256 * KB];

	(void)arg;
	writes(buf, sizeof(buf), 4 * KB);
	pthread_mutex_lock(&lock);
	written++;
	pthread_cond_broadcast(&cond);
	for (;;) /* until the process exits */
		pthread_cond_wait(&cond, &lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int jumps = 6;
	char *heap, *big, *plain;
	pthread_t t[6];
	pid_t child;

	if (argc == 3 && !strcmp(argv[1], "--heap-jumps"))
		jumps = atoi(argv[2]);
	heap = sbrk(0);
	for (int i = 0; i < jumps; i++) {
		if (sbrk(3 * MB) == (void *)-1) {
			perror("mappings: sbrk");
			return 1;
		}
		writes(heap + (size_t)i * 3 * MB, 3 * MB, 4 * KB);
	}
	big = map(64 * MB);
	madvise(big, 64 * MB, MADV_HUGEPAGE);
	writes(big, 64 * MB, 64 * KB);
	plain = map(32 * MB);
	writes(plain, 8 * MB, 4 * KB);
	for (int i = 0; i < 48; i++)
		writes(map(128 * KB), 128 * KB, 4 * KB);
	for (int i = 0; i < 6; i++)
		if (pthread_create(&t[i], NULL, thread, NULL)) {
			fprintf(stderr, "mappings: pthread_create failed\n");
			return 1;
		}
	pthread_mutex_lock(&lock);
	while (written < 6)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	child = fork();
	if (child < 0) {
		perror("mappings: fork");
		return 1;
	}
	if (child == 0) {
		writes(big, 4 * MB, 4 * KB);
		writes(heap, 1 * MB, 4 * KB);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	return 0;
}
