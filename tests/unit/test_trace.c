/*
 * test_trace.c - the trace format (src/trace): every record written is read
 * back the same, a fault near the previous one takes one byte, and a
 * truncated or damaged trace is refused with the offset of the damage.
 */
#include <stdlib.h>
#include <unistd.h>

#include "../test.h"
#include "trace/trace.h"

static void tmp_path(char *buf, size_t len, const char *tag)
{
	snprintf(buf, len, "/tmp/thpsim-test-%d-%s.trace", (int)getpid(), tag);
}

static long file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	ASSERT(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	return n;
}

/* A trace with one record of every kind. */
static void write_sample(const char *path)
{
	struct trace_writer w;
	struct trace_header h = { 0 };
	struct trace_kfig k[2] = { { "Anonymous", 108 }, { "AnonHugePages", 2048 } };
	uint64_t args[6] = { 0, 0x2000, 3, 0x22, (uint64_t)-1, 0 };

	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/enabled", "madvise"));
	ASSERT_OK(trace_header_add(&h, "command", "prog --flag"));
	ASSERT_OK(trace_writer_open(&w, path, &h));
	trace_write_proc(&w, 1234);
	trace_write_exec(&w, "/usr/bin/prog", 0x555555559000ULL, 0x55555557a000ULL, 8 << 20);
	trace_write_vma(&w, 0x7ffffffde000ULL, 0x21000, 3, TRACE_VMA_STACK, "");
	trace_write_vma(&w, 0x7ffff7fc3000ULL, 0x2000, 5 | TRACE_VMA_SHARED, TRACE_VMA_FILE, "/lib/x.so");
	trace_write_touch(&w, 0x7fffffffd000ULL, 0x2000, TRACE_TOUCH_WRITE);
	trace_write_time(&w, 1000, 0);
	trace_write_fault(&w, 0x7ffff7a00123ULL, 0, 0);
	trace_write_fault(&w, 0x7ffff7a01000ULL, 1, 0);
	trace_write_fault(&w, 0x7ffff7a00000ULL, 1, 1);
	trace_write_fault(&w, 0x1000ULL, 0, 0); /* a long way back */
	trace_write_syscall(&w, 9, 6, args, 0x7ffff7800000LL);
	trace_write_syscall(&w, 12, 1, args, -12);
	trace_write_fork(&w, 1235, 0x1200011);
	trace_write_proc(&w, 1235);
	trace_write_time(&w, 5000, 0);
	trace_write_exit(&w, 3 << 8);
	trace_write_lost(&w, 77);
	trace_write_kfig(&w, 2, k);
	trace_write_note(&w, "hello");
	trace_write_caller(&w, "mmap <- make_big_map <- main");
	trace_write_access(&w, 0x7ffff7800000ULL, 0x400000, 17);
	trace_write_access_end(&w, &(struct trace_access_end){ .interval_us = 100000, .checks = 20 });
	trace_write_access_end(&w, &(struct trace_access_end){ .interval_us = 200000, .checks = 40,
							       .truth = 1, .present_kb = 4096,
							       .pmd_kb = 2048, .mthp_kb = 64 });
	ASSERT_OK(trace_writer_close(&w));
}

TEST(trace_roundtrip)
{
	static struct trace_reader r;
	static struct trace_event ev;
	char path[128];

	tmp_path(path, sizeof(path), "rt");
	write_sample(path);
	ASSERT_OK(trace_reader_open(&r, path));
	ASSERT(!strcmp(trace_header_get(&r.header, "transparent_hugepage/enabled"), "madvise"));
	ASSERT(!strcmp(trace_header_get(&r.header, "command"), "prog --flag"));
	ASSERT(!strcmp(trace_header_get(&r.header, "format"), "thpsim-trace 1"));

	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_PROC);
	ASSERT_EQ(ev.pid, 1234);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_EXEC);
	ASSERT(!strcmp(ev.name, "/usr/bin/prog"));
	ASSERT_EQ(ev.start_brk, 0x555555559000ULL);
	ASSERT_EQ(ev.brk, 0x55555557a000ULL);
	ASSERT_EQ(ev.stack_limit, 8 << 20);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_VMA);
	ASSERT_EQ(ev.addr, 0x7ffffffde000ULL);
	ASSERT_EQ(ev.len, 0x21000);
	ASSERT_EQ(ev.prot, 3);
	ASSERT_EQ(ev.kind, TRACE_VMA_STACK);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.prot, 5 | TRACE_VMA_SHARED);
	ASSERT_EQ(ev.kind, TRACE_VMA_FILE);
	ASSERT(!strcmp(ev.name, "/lib/x.so"));
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_TOUCH);
	ASSERT_EQ(ev.addr, 0x7fffffffd000ULL);
	ASSERT_EQ(ev.len, 0x2000);
	ASSERT_EQ(ev.kind, TRACE_TOUCH_WRITE);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_TIME);
	ASSERT_EQ(ev.time_ns, 1000);
	/* faults keep the page, not the byte */
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_FAULT);
	ASSERT_EQ(ev.addr, 0x7ffff7a00000ULL);
	ASSERT_EQ(ev.write, 0);
	ASSERT_EQ(ev.pid, 1234);
	ASSERT_EQ(ev.time_ns, 1000);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.addr, 0x7ffff7a01000ULL);
	ASSERT_EQ(ev.write, 1);
	ASSERT_EQ(ev.kernel, 0);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.addr, 0x7ffff7a00000ULL);
	ASSERT_EQ(ev.kernel, 1);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.addr, 0x1000);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_SYSCALL);
	ASSERT_EQ(ev.nr, 9);
	ASSERT_EQ(ev.nargs, 6);
	ASSERT_EQ(ev.args[1], 0x2000);
	ASSERT_EQ(ev.args[4], (uint64_t)-1);
	ASSERT_EQ(ev.ret, 0x7ffff7800000LL);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.nr, 12);
	ASSERT_EQ(ev.ret, -12);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_FORK);
	ASSERT_EQ(ev.child, 1235);
	ASSERT_EQ(ev.clone_flags, 0x1200011);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_PROC);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_TIME);
	ASSERT_EQ(ev.time_ns, 5000);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_EXIT);
	ASSERT_EQ(ev.pid, 1235);
	ASSERT_EQ(ev.status, 3 << 8);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_LOST);
	ASSERT_EQ(ev.count, 77);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_KFIG);
	ASSERT_EQ(ev.nkfig, 2);
	ASSERT(!strcmp(ev.kfig[1].name, "AnonHugePages"));
	ASSERT_EQ(ev.kfig[1].kb, 2048);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_NOTE);
	ASSERT(!strcmp(ev.name, "hello"));
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_CALLER);
	ASSERT_EQ(ev.pid, 1235);
	ASSERT(!strcmp(ev.name, "mmap <- make_big_map <- main"));
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_ACCESS);
	ASSERT_EQ(ev.kind, TRACE_ACCESS_REGION);
	ASSERT_EQ(ev.addr, 0x7ffff7800000ULL);
	ASSERT_EQ(ev.len, 0x400000);
	ASSERT_EQ(ev.count, 17);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_ACCESS);
	ASSERT_EQ(ev.kind, TRACE_ACCESS_END);
	ASSERT_EQ(ev.acc.interval_us, 100000);
	ASSERT_EQ(ev.acc.checks, 20);
	ASSERT_EQ(ev.acc.truth, 0);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.kind, TRACE_ACCESS_END);
	ASSERT_EQ(ev.acc.checks, 40);
	ASSERT_EQ(ev.acc.truth, 1);
	ASSERT_EQ(ev.acc.present_kb, 4096);
	ASSERT_EQ(ev.acc.pmd_kb, 2048);
	ASSERT_EQ(ev.acc.mthp_kb, 64);
	ASSERT_EQ(trace_next(&r, &ev), 1);
	ASSERT_EQ(ev.type, TR_END);
	ASSERT_EQ(trace_next(&r, &ev), 0);
	ASSERT_EQ(trace_next(&r, &ev), 0);
	trace_reader_close(&r);
	unlink(path);
}

TEST(trace_sequential_fault_is_one_byte)
{
	struct trace_writer w;
	static struct trace_reader r;
	static struct trace_event ev;
	char path[128];
	long before, after;
	const int n = 300000; /* several blocks */
	uint64_t seen = 0;

	tmp_path(path, sizeof(path), "seq");
	ASSERT_OK(trace_writer_open(&w, path, NULL));
	trace_write_proc(&w, 7);
	ASSERT_OK(trace_writer_flush(&w));
	before = file_size(path);
	for (int i = 0; i < n; i++)
		trace_write_fault(&w, 0x7f0000000000ULL + (uint64_t)i * 4096, i & 1, 0);
	ASSERT_OK(trace_writer_close(&w));
	after = file_size(path);
	/* one byte a fault, plus block headers and END */
	ASSERT_LE(after - before, n + (n / (64 << 10) + 2) * 8 + 32);
	ASSERT_LE(n, after - before);
	ASSERT_OK(trace_reader_open(&r, path));
	while (trace_next(&r, &ev) > 0)
		if (ev.type == TR_FAULT) {
			ASSERT_EQ(ev.addr, 0x7f0000000000ULL + seen * 4096);
			ASSERT_EQ(ev.write, (int)(seen & 1));
			ASSERT_EQ(ev.pid, 7);
			seen++;
		}
	ASSERT_EQ(seen, n);
	ASSERT(r.done);
	trace_reader_close(&r);
	unlink(path);
}

/*
 * trace_next_seq (the replay's way through runs of faults) takes exactly
 * the records trace_next would have decoded as "one page up, same write
 * bit": read a trace both ways and compare every fault's page and kind.
 * The trace mixes such runs with gaps, steps back, the other write bit,
 * kernel-mode faults, other records, and runs over block boundaries; the
 * second reader asks for a different maximum each time, zero included.
 */
TEST(trace_next_seq_takes_exactly_the_next_pages)
{
	struct trace_writer w;
	static struct trace_reader r;
	static struct trace_event ev;
	static uint64_t page[200000];
	static uint8_t wr[200000];
	uint64_t args[6] = { 0 }, a = 0x7f0000000000ULL >> 12, x = 88172645463325252ULL;
	uint64_t n = 0, seen = 0, taken = 0;
	char path[128];

	tmp_path(path, sizeof(path), "nseq");
	ASSERT_OK(trace_writer_open(&w, path, NULL));
	trace_write_proc(&w, 7);
	for (int i = 0; i < 200000; i++) {
		unsigned k;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = (unsigned)(x % 16);
		if (k == 0)
			a += 2 + x % 9; /* a gap */
		else if (k == 1)
			a -= 1 + x % 5; /* back */
		else
			a++;
		if (k == 2)
			trace_write_syscall(&w, 11, 2, args, 0);
		wr[i] = k == 3 ? !wr[i ? i - 1 : 0] : (i ? wr[i - 1] : 0);
		page[i] = a;
		trace_write_fault(&w, a << 12, wr[i], k == 4);
	}
	ASSERT_OK(trace_writer_close(&w));

	ASSERT_OK(trace_reader_open(&r, path));
	while (trace_next(&r, &ev) > 0)
		if (ev.type == TR_FAULT) {
			ASSERT_EQ(ev.addr, page[n] << 12);
			ASSERT_EQ(ev.write, wr[n]);
			n++;
		}
	trace_reader_close(&r);
	ASSERT_EQ(n, 200000);

	ASSERT_OK(trace_reader_open(&r, path));
	while (trace_next(&r, &ev) > 0) {
		uint64_t k, before = r.nrecords;

		if (ev.type != TR_FAULT)
			continue;
		ASSERT_EQ(ev.addr, page[seen] << 12);
		ASSERT_EQ(ev.write, wr[seen]);
		seen++;
		k = trace_next_seq(&r, ev.write, seen % 23);
		ASSERT_LE(k, seen % 23);
		ASSERT_EQ(r.nrecords, before + k);
		for (uint64_t j = 1; j <= k; j++, seen++) {
			ASSERT_EQ(page[seen], (ev.addr >> 12) + j);
			ASSERT_EQ(wr[seen], ev.write);
		}
		ASSERT_EQ(r.last_page, page[seen - 1]);
		taken += k;
	}
	ASSERT(r.done);
	ASSERT_EQ(seen, n);
	ASSERT_EQ(r.nfaults, n);
	ASSERT(taken > 50000); /* most of the trace went by runs */
	trace_reader_close(&r);
	unlink(path);
}

/* Read the whole trace; the error message, or NULL when it read cleanly. */
static const char *read_all(const char *path, char *msg, size_t len)
{
	static struct trace_reader r;
	static struct trace_event ev;
	int e;

	if (trace_reader_open(&r, path)) {
		snprintf(msg, len, "%s", r.err);
		return msg;
	}
	while ((e = trace_next(&r, &ev)) > 0)
		;
	trace_reader_close(&r);
	if (!e)
		return NULL;
	snprintf(msg, len, "%s", r.err);
	return msg;
}

static void copy_prefix(const char *from, const char *to, long n)
{
	FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
	char *buf = malloc((size_t)n);

	ASSERT(a && b && buf);
	ASSERT_EQ(fread(buf, 1, (size_t)n, a), n);
	ASSERT_EQ(fwrite(buf, 1, (size_t)n, b), n);
	fclose(a);
	fclose(b);
	free(buf);
}

static uint32_t le32_at(const char *path, long off)
{
	FILE *f = fopen(path, "rb");
	uint8_t b[4];

	ASSERT(f);
	fseek(f, off, SEEK_SET);
	ASSERT_EQ(fread(b, 1, 4, f), 4);
	fclose(f);
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* Offset of the first block: after the preamble and the header. */
static long first_block(const char *path)
{
	return TRACE_PREAMBLE + (long)le32_at(path, 12);
}

static void flip_byte(const char *path, long off)
{
	FILE *f = fopen(path, "r+b");
	int c;

	ASSERT(f);
	fseek(f, off, SEEK_SET);
	c = fgetc(f);
	fseek(f, off, SEEK_SET);
	fputc(c ^ 0x10, f);
	fclose(f);
}

TEST(trace_truncated_is_refused_with_offset)
{
	char path[128], cut[128], msg[1024], want[64];
	struct trace_writer w;
	long size, blocks, second;

	tmp_path(path, sizeof(path), "full");
	tmp_path(cut, sizeof(cut), "cut");
	ASSERT_OK(trace_writer_open(&w, path, NULL));
	trace_write_proc(&w, 1);
	for (int i = 0; i < 200000; i++)
		trace_write_fault(&w, (uint64_t)i * 40960, 0, 0); /* 3 bytes each */
	ASSERT_OK(trace_writer_close(&w));
	size = file_size(path);
	ASSERT(read_all(path, msg, sizeof(msg)) == NULL);
	blocks = first_block(path);
	second = blocks + TRACE_BLOCK_HDR + (long)le32_at(path, blocks);

	/* cut inside the second block: its offset is named */
	copy_prefix(path, cut, second + 100);
	ASSERT(read_all(cut, msg, sizeof(msg)));
	snprintf(want, sizeof(want), "offset %ld: truncated", second);
	if (!strstr(msg, want))
		test_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", msg, want);
	/* cut at a block boundary: no END record */
	copy_prefix(path, cut, second);
	ASSERT(read_all(cut, msg, sizeof(msg)));
	ASSERT(strstr(msg, "without its END record"));
	/* cut in the header */
	copy_prefix(path, cut, 20);
	ASSERT(read_all(cut, msg, sizeof(msg)));
	ASSERT(strstr(msg, "truncated"));
	/* the last byte missing */
	copy_prefix(path, cut, size - 1);
	ASSERT(read_all(cut, msg, sizeof(msg)));
	ASSERT(strstr(msg, "truncated"));
	unlink(path);
	unlink(cut);
}

TEST(trace_damage_is_refused_with_offset)
{
	char path[128], msg[1024], want[64];
	long blocks;

	tmp_path(path, sizeof(path), "dmg");
	write_sample(path);
	blocks = first_block(path);
	flip_byte(path, blocks + TRACE_BLOCK_HDR + 5);
	ASSERT(read_all(path, msg, sizeof(msg)));
	snprintf(want, sizeof(want), "offset %ld: block checksum mismatch", blocks);
	if (!strstr(msg, want))
		test_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", msg, want);

	write_sample(path);
	flip_byte(path, 0);
	ASSERT(read_all(path, msg, sizeof(msg)));
	ASSERT(strstr(msg, "not a thpsim trace"));

	write_sample(path);
	flip_byte(path, 8); /* the version */
	ASSERT(read_all(path, msg, sizeof(msg)));
	ASSERT(strstr(msg, "offset 8: trace format version"));

	/* a block length beyond the limit */
	write_sample(path);
	flip_byte(path, blocks + 3);
	ASSERT(read_all(path, msg, sizeof(msg)));
	ASSERT(strstr(msg, "bad block length"));

	ASSERT(read_all("/nonexistent/x.trace", msg, sizeof(msg)));
	ASSERT(strstr(msg, "No such file"));
	unlink(path);
}

/*
 * Rewrite the first block's payload where "from" (n bytes) first occurs
 * into "to", with the block's CRC made right again: damage a reader can
 * only see in the records.  The file offset of the change.
 */
static long patch_records(const char *path, const uint8_t *from, const uint8_t *to, size_t n)
{
	FILE *f = fopen(path, "r+b");
	long blocks = first_block(path), size, at = -1;
	uint8_t *d;
	uint32_t len;

	ASSERT(f);
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	d = malloc((size_t)size);
	ASSERT(d);
	fseek(f, 0, SEEK_SET);
	ASSERT_EQ(fread(d, 1, (size_t)size, f), size);
	len = trace_get_le32(d + blocks);
	for (long i = blocks + TRACE_BLOCK_HDR; i + (long)n <= blocks + TRACE_BLOCK_HDR + len; i++)
		if (!memcmp(d + i, from, n)) {
			at = i;
			break;
		}
	ASSERT(at >= 0);
	memcpy(d + at, to, n);
	trace_put_le32(d + blocks + 4, trace_crc32(0, d + blocks + TRACE_BLOCK_HDR, len));
	fseek(f, 0, SEEK_SET);
	ASSERT_EQ(fwrite(d, 1, (size_t)size, f), size);
	fclose(f);
	free(d);
	return at;
}

/* Read until the error, taking runs with trace_next_seq or not; the error
 * message, and in *faults the faults read before it. */
static const char *read_to_error(const char *path, int seq, uint64_t *faults, char *msg,
				 size_t len)
{
	static struct trace_reader r;
	static struct trace_event ev;
	int e;

	*faults = 0;
	ASSERT_OK(trace_reader_open(&r, path));
	while ((e = trace_next(&r, &ev)) > 0)
		if (ev.type == TR_FAULT) {
			(*faults)++;
			if (seq)
				*faults += trace_next_seq(&r, ev.write, 64);
		}
	trace_reader_close(&r);
	ASSERT(e < 0);
	snprintf(msg, len, "%s", r.err);
	return msg;
}

/*
 * A record type past the last (CALLER's 13) is refused as unknown, with
 * its offset, rather than read as another (the trace is newer than the
 * reader, or damaged); so is an ACCESS of a kind the reader does not
 * know.  The NOTE record (type 10, h = 0x15) is rewritten to type 14
 * (h = 0x1d); the first ACCESS (type 12, h = 0x19, kind 0) to kind 2.
 */
TEST(trace_type_in_a_gap_is_refused)
{
	const uint8_t note[] = { 0x15, 5, 'h', 'e', 'l', 'l', 'o' };
	const uint8_t gap[] = { 0x1d, 5, 'h', 'e', 'l', 'l', 'o' };
	/* the first ACCESS: kind, start, length, nr_accesses */
	const uint8_t access[] = { 0x19, 0x00, 0x80, 0x80, 0x80, 0xbc, 0xff, 0xff, 0x1f,
				   0x80, 0x80, 0x80, 0x02, 0x11 };
	uint8_t odd_kind[sizeof(access)];
	char path[128], msg[1024], want[80];
	uint64_t faults;
	long at;

	ASSERT(trace_type_name(14) == NULL);
	ASSERT(!strcmp(trace_type_name(TR_ACCESS), "ACCESS"));
	ASSERT(!strcmp(trace_type_name(TR_CALLER), "CALLER"));
	tmp_path(path, sizeof(path), "gap");
	write_sample(path);
	at = patch_records(path, note, gap, sizeof(note));
	read_to_error(path, 0, &faults, msg, sizeof(msg));
	snprintf(want, sizeof(want), "offset %ld: unknown record type 14", at);
	if (!strstr(msg, want))
		test_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", msg, want);
	memcpy(odd_kind, access, sizeof(access));
	odd_kind[1] = 0x02;
	write_sample(path);
	at = patch_records(path, access, odd_kind, sizeof(access));
	read_to_error(path, 0, &faults, msg, sizeof(msg));
	snprintf(want, sizeof(want), "offset %ld: ACCESS of unknown kind 2", at);
	if (!strstr(msg, want))
		test_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", msg, want);
	unlink(path);
}

/*
 * A fault page must lie below 2^52 (its address below 2^64).  A damaged
 * trace whose one-byte deltas step past the top of the address space, or
 * below page 0, is refused with the offset of that record, by trace_next's
 * inline path and by trace_next_seq alike (both once took such a step, and
 * the address wrapped around).  The writer cannot make such a trace, so
 * one is made and its deltas rewritten: one byte per fault, 0x08 one page
 * down, 0x10 one page up.
 */
TEST(trace_fault_outside_the_address_space_is_refused)
{
	static const uint8_t down2[] = { 0x08, 0x08 }, up2[] = { 0x10, 0x10 };
	static const uint8_t from0[] = { 0x07, 0x00, 0x10 }, below0[] = { 0x07, 0x00, 0x08 };
	const uint64_t top = TRACE_PAGE_LIMIT - 1;
	struct trace_writer w;
	char path[128], msg[1024], want[64];
	uint64_t faults;
	long at;

	tmp_path(path, sizeof(path), "range");
	for (int seq = 0; seq <= 1; seq++) {
		/* the top page, then two steps up from it */
		ASSERT_OK(trace_writer_open(&w, path, NULL));
		trace_write_proc(&w, 7);
		trace_write_fault(&w, top << 12, 0, 0);
		trace_write_fault(&w, (top - 1) << 12, 0, 0);
		trace_write_fault(&w, (top - 2) << 12, 0, 0);
		ASSERT_OK(trace_writer_close(&w));
		at = patch_records(path, down2, up2, 2);
		read_to_error(path, seq, &faults, msg, sizeof(msg));
		ASSERT_EQ(faults, 1);
		snprintf(want, sizeof(want), "offset %ld: fault address out of range", at);
		if (!strstr(msg, want))
			test_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", msg, want);

		/* page 0, then a step down from it */
		ASSERT_OK(trace_writer_open(&w, path, NULL));
		trace_write_proc(&w, 7);
		trace_write_fault(&w, 0, 0, 0);
		trace_write_fault(&w, 4096, 0, 0);
		ASSERT_OK(trace_writer_close(&w));
		at = patch_records(path, from0, below0, 3) + 2;
		read_to_error(path, seq, &faults, msg, sizeof(msg));
		ASSERT_EQ(faults, 1);
		snprintf(want, sizeof(want), "offset %ld: fault address out of range", at);
		if (!strstr(msg, want))
			test_fail(__FILE__, __LINE__, "message '%s' lacks '%s'", msg, want);
	}
	unlink(path);
}

TEST(trace_crc32_check_value)
{
	/* the CRC-32 (IEEE) check value of "123456789" is 0xcbf43926 */
	ASSERT_EQ(trace_crc32(0, "123456789", 9), 0xcbf43926u);
	ASSERT_EQ(trace_crc32(trace_crc32(0, "1234", 4), "56789", 5), 0xcbf43926u);
}
