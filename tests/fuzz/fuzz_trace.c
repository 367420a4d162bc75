/*
 * fuzz_trace.c - fuzz target: the trace reader.  Any byte string, handed to
 * the reader as a file, must decode to events and END, or be refused with
 * an error naming the offset; never a crash, a hang or unbounded memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz.trace", 0);
	char path[64];
	struct trace_reader r;
	struct trace_event ev;
	int ret;

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (trace_reader_open(&r, path) == 0) {
		uint64_t n = 0;

		while ((ret = trace_next(&r, &ev)) > 0)
			if (++n > (1ULL << 26))
				abort(); /* more events than the bytes could hold: a loop */
		if (ret < 0 && !r.err[0])
			abort(); /* an error must say what and where */
		trace_reader_close(&r);
	}
	close(fd);
	return 0;
}
