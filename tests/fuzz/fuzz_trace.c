/*
 * fuzz_trace.c - fuzz target: the trace reader.  Any byte string, handed to
 * the reader as a file, must decode to events and END, or be refused with
 * an error naming the offset; never a crash, a hang or unbounded memory.
 *
 * Every block carries a CRC-32 the reader checks before decoding it, so a
 * mutated block would almost always stop there and the decoder behind it
 * would go unfuzzed.  Each input is therefore read twice: as it is (the
 * checksum and framing paths), and with every block's CRC made right (the
 * record decoder on arbitrary payloads).
 *
 * Each reading is done two ways: event by event with trace_next, and as the
 * replay reads, taking the faults that continue a run with trace_next_seq
 * (at a varying maximum).  Both must see the same faults (page and kind, in
 * order), the same end and the same counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "trace/trace.h"

/* Walk the blocks as the reader frames them and rewrite each one's CRC. */
static void fix_checksums(uint8_t *d, size_t size)
{
	size_t off;

	if (size < TRACE_PREAMBLE)
		return;
	off = TRACE_PREAMBLE + (size_t)trace_get_le32(d + 12);
	while (off <= size && size - off >= TRACE_BLOCK_HDR) {
		uint32_t len = trace_get_le32(d + off);

		if (len == 0 || len > TRACE_BLOCK_MAX || size - off - TRACE_BLOCK_HDR < len)
			return;
		trace_put_le32(d + off + 4, trace_crc32(0, d + off + TRACE_BLOCK_HDR, len));
		off += TRACE_BLOCK_HDR + len;
	}
}

struct reading {
	int ret;
	uint64_t records, faults, hash;
};

static uint64_t hash_fault(uint64_t h, uint64_t addr, int write)
{
	return (h ^ (addr | (uint64_t)write)) * 0x100000001b3ULL;
}

/* Read the whole file; with "seq", as the replay does.  0 when it opened. */
static int read_file(const char *path, int seq, struct reading *out)
{
	struct trace_reader r;
	struct trace_event ev;
	uint64_t n = 0, h = 0xcbf29ce484222325ULL;
	int ret;

	if (trace_reader_open(&r, path))
		return -1;
	while ((ret = trace_next(&r, &ev)) > 0) {
		if (++n > (1ULL << 26))
			abort(); /* more events than the bytes could hold: a loop */
		if (ev.type != TR_FAULT)
			continue;
		h = hash_fault(h, ev.addr, ev.write);
		if (seq) {
			uint64_t k = trace_next_seq(&r, ev.write, n % 37);

			if (k > n % 37)
				abort();
			for (uint64_t j = 1; j <= k; j++)
				h = hash_fault(h, ev.addr + (j << 12), ev.write);
			n += k;
		}
	}
	if (ret < 0 && !r.err[0])
		abort(); /* an error must say what and where */
	out->ret = ret;
	out->records = r.nrecords;
	out->faults = r.nfaults;
	out->hash = h;
	trace_reader_close(&r);
	return 0;
}

static void read_all(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz.trace", 0);
	char path[64];
	struct reading a, b;

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (read_file(path, 0, &a) == 0) {
		if (read_file(path, 1, &b))
			abort();
		if (a.ret != b.ret || a.records != b.records || a.faults != b.faults ||
		    a.hash != b.hash)
			abort(); /* trace_next_seq took what trace_next did not give */
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed = malloc(size ? size : 1);

	if (!fixed)
		abort();
	read_all(data, size);
	memcpy(fixed, data, size);
	fix_checksums(fixed, size);
	if (memcmp(fixed, data, size))
		read_all(fixed, size);
	free(fixed);
	return 0;
}
