/*
 * snapshot.c - a server taking a snapshot, as Redis's BGSAVE does: the
 * parent fills a THP-backed heap, forks a child that reads all of it (the
 * snapshot), and keeps writing while the child runs, so that every 2 MiB
 * it touches is copied on write.  The first child exits; a second one is
 * killed by a signal (SIGKILL from the parent) half way, as a snapshot
 * cancelled.  Each process prints nothing; the recorder and the kernel's
 * figures at each exit say what happened.
 *
 *   snapshot [--heap MiB]   (default 64)
 *
 * The order of events is fixed by pipes, not by timing, so that every run
 * is the same.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MB (1024UL * 1024)
#define HUGE (2 * MB)

static void writes(char *p, size_t len, size_t step, char v)
{
	for (size_t i = 0; i < len; i += step)
		p[i] = v;
}

static unsigned long reads(const char *p, size_t len)
{
	unsigned long sum = 0;

	for (size_t i = 0; i < len; i += 4096)
		sum += (unsigned char)p[i];
	return sum;
}

/* A child reading the heap: it tells the parent it has begun (ready) and
 * waits for the go-on before its second half, so the parent's writes fall
 * while it holds the snapshot. */
static pid_t snapshot_child(char *heap, size_t len, int *to_child, int *from_child)
{
	int a[2], b[2];
	pid_t pid;
	char c;

	if (pipe(a) || pipe(b))
		exit(1);
	pid = fork();
	if (pid == 0) {
		unsigned long sum = reads(heap, len / 2);

		if (write(b[1], "r", 1) != 1 || read(a[0], &c, 1) != 1)
			_exit(2);
		sum += reads(heap + len / 2, len / 2);
		_exit(sum == 0 ? 3 : 0);
	}
	close(a[0]);
	close(b[1]);
	*to_child = a[1];
	*from_child = b[0];
	if (read(*from_child, &c, 1) != 1)
		exit(1);
	return pid;
}

int main(int argc, char **argv)
{
	size_t len = 64 * MB;
	char *raw, *heap;
	int to, from, st;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--heap"))
		len = strtoul(argv[2], NULL, 10) * MB;
	raw = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return 1;
	heap = (char *)(((unsigned long)raw + HUGE - 1) & ~(HUGE - 1));
	madvise(heap, len, MADV_HUGEPAGE);
	writes(heap, len, 4096, 1);

	/* the first snapshot: the parent rewrites a quarter of its heap, 4 KiB
	 * here and there, while the child holds it; the child then exits */
	pid = snapshot_child(heap, len, &to, &from);
	writes(heap, len / 4, 64 * 1024, 2);
	if (write(to, "g", 1) != 1)
		return 1;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	close(to);
	close(from);
	/* after it: writes to memory nobody shares any more */
	writes(heap + len / 2, len / 4, 64 * 1024, 3);

	/* the second snapshot is cancelled: killed by a signal half way */
	pid = snapshot_child(heap, len, &to, &from);
	writes(heap + len / 4, len / 4, 64 * 1024, 4);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (!WIFSIGNALED(st))
		return 1;
	writes(heap + 3 * (len / 4), len / 4, 64 * 1024, 5);
	return 0;
}
