/*
 * trace_read.c - the streaming trace reader (trace.h).
 *
 * The file is read in chunks of READ_CHUNK bytes into one buffer that holds
 * at least a whole block; a block's CRC-32 is checked before any of its
 * records is decoded, so a damaged trace is refused at the damaged block,
 * with its file offset.  A trace that ends without its END record was cut
 * short (the recorder was killed, the disk filled): the reader returns an
 * error there too, after every record of the complete blocks before it,
 * so that a caller may use those (replay marks its figures partial).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define READ_CHUNK (1 << 20)
#define READ_CAP (READ_CHUNK + TRACE_BLOCK_HDR + TRACE_BLOCK_MAX)

__attribute__((format(printf, 3, 4))) static int fail(struct trace_reader *r, uint64_t offset,
						      const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof(r->err), "%s: offset %llu: ", r->path,
			 (unsigned long long)offset);

	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

uint64_t trace_reader_offset(const struct trace_reader *r)
{
	return r->buf_offset + (uint64_t)(r->p - r->buf);
}

/* Keep the bytes from keep on, read more after them.  0 or -errno. */
static int refill(struct trace_reader *r, uint8_t *keep)
{
	size_t left = (size_t)(r->data_end - keep), n;

	if (r->eof)
		return 0;
	memmove(r->buf, keep, left);
	r->buf_offset += (uint64_t)(keep - r->buf);
	r->p = r->blk_end = r->buf;
	r->data_end = r->buf + left;
	n = fread(r->data_end, 1, r->cap - left, r->f);
	r->data_end += n;
	if (n < r->cap - left) {
		if (ferror(r->f))
			return -EIO;
		r->eof = 1;
	}
	return 0;
}

/* Move to the next block: 1, 0 at the end of the file, or an error. */
static int next_block(struct trace_reader *r)
{
	uint8_t *h = r->blk_end;
	uint64_t off;
	uint32_t len, crc;

	if ((size_t)(r->data_end - h) < TRACE_BLOCK_HDR + TRACE_BLOCK_MAX && !r->eof) {
		if (refill(r, h))
			return fail(r, trace_reader_offset(r), "read error: %s", strerror(errno));
		h = r->buf;
	}
	off = r->buf_offset + (uint64_t)(h - r->buf);
	if (h == r->data_end)
		return 0;
	if ((size_t)(r->data_end - h) < TRACE_BLOCK_HDR)
		return fail(r, off, "truncated: the file ends inside a block header");
	len = trace_get_le32(h);
	crc = trace_get_le32(h + 4);
	if (len == 0 || len > TRACE_BLOCK_MAX)
		return fail(r, off, "bad block length %u (the trace is damaged)", len);
	if ((size_t)(r->data_end - h - TRACE_BLOCK_HDR) < len)
		return fail(r, off, "truncated: a block of %u bytes, but the file ends after %zu",
			    len, (size_t)(r->data_end - h - TRACE_BLOCK_HDR));
	if (trace_crc32(0, h + TRACE_BLOCK_HDR, len) != crc)
		return fail(r, off, "block checksum mismatch (the trace is damaged)");
	r->p = h + TRACE_BLOCK_HDR;
	r->blk_end = r->p + len;
	return 1;
}

int trace_reader_open(struct trace_reader *r, const char *path)
{
	uint8_t pre[TRACE_PREAMBLE];
	uint32_t version, hlen;
	char *text, *line;
	int err;

	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", strcmp(path, "-") ? path : "(standard input)");
	if (!strcmp(path, "-")) {
		/* the reader reads forward only: a pipe will do */
		int fd = dup(0);

		r->f = fd >= 0 ? fdopen(fd, "rb") : NULL;
		if (!r->f && fd >= 0)
			close(fd);
	} else {
		r->f = fopen(path, "rb");
	}
	if (!r->f) {
		err = -errno;
		snprintf(r->err, sizeof(r->err), "%s: %s", path, strerror(errno));
		return err;
	}
	if (fread(pre, 1, sizeof(pre), r->f) != sizeof(pre) || memcmp(pre, TRACE_MAGIC, 8)) {
		fail(r, 0, "not a thpsim trace (no %s magic)", TRACE_MAGIC);
		goto bad;
	}
	version = trace_get_le32(pre + 8);
	hlen = trace_get_le32(pre + 12);
	if (version != TRACE_VERSION) {
		fail(r, 8, "trace format version %u, this thpsim reads version %d", version,
		     TRACE_VERSION);
		goto bad;
	}
	if (hlen > TRACE_HEADER_MAX - 1) {
		fail(r, 12, "header length %u is too large (the trace is damaged)", hlen);
		goto bad;
	}
	text = malloc(hlen + 1);
	if (!text) {
		fail(r, 16, "out of memory");
		goto bad;
	}
	if (fread(text, 1, hlen, r->f) != hlen) {
		free(text);
		fail(r, 16, "truncated: the file ends inside the header");
		goto bad;
	}
	text[hlen] = 0;
	line = text;
	for (uint64_t off = TRACE_PREAMBLE; *line;) {
		char *nl = strchr(line, '\n'), *eq;

		if (!nl) {
			free(text);
			fail(r, off, "header line without a newline (the trace is damaged)");
			goto bad;
		}
		*nl = 0;
		eq = strchr(line, '=');
		if (!eq || eq == line) {
			/* the message quotes the line: free the text after it */
			fail(r, off, "header line '%.60s' is not key=value", line);
			free(text);
			goto bad;
		}
		*eq = 0;
		if (trace_header_add(&r->header, line, eq + 1)) {
			free(text);
			fail(r, off, "header too large");
			goto bad;
		}
		off += (uint64_t)(nl - line) + 1;
		line = nl + 1;
	}
	free(text);
	r->cap = READ_CAP;
	r->buf = malloc(r->cap);
	if (!r->buf) {
		fail(r, 16, "out of memory");
		goto bad;
	}
	r->buf_offset = TRACE_PREAMBLE + hlen;
	r->p = r->blk_end = r->data_end = r->buf;
	return 0;
bad:
	fclose(r->f);
	r->f = NULL;
	return -EINVAL;
}

void trace_reader_close(struct trace_reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->buf);
	r->f = NULL;
	r->buf = NULL;
}

/* ---- decoding ---- */
static int get_varint(struct trace_reader *r, uint64_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (r->p >= r->blk_end)
			return -1;
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

static int get_name(struct trace_reader *r, char *out, size_t cap)
{
	uint64_t n;

	if (get_varint(r, &n) || n >= cap || n > (uint64_t)(r->blk_end - r->p))
		return -1;
	memcpy(out, r->p, n);
	out[n] = 0;
	r->p += n;
	return 0;
}

/* An ACCESS record's fields after its type: -1 when malformed; an unknown
 * kind is left in ev->kind for the caller to refuse. */
static int read_access(struct trace_reader *r, struct trace_event *ev)
{
	struct trace_access_end *e = &ev->acc;
	uint64_t kind, truth;

	if (get_varint(r, &kind))
		return -1;
	ev->kind = kind < TRACE_ACCESS_NR_KINDS ? (int)kind : TRACE_ACCESS_NR_KINDS;
	if (kind == TRACE_ACCESS_REGION)
		return get_varint(r, &ev->addr) || get_varint(r, &ev->len) ||
		       get_varint(r, &ev->count) ? -1 : 0;
	if (kind != TRACE_ACCESS_END)
		return 0;
	memset(e, 0, sizeof(*e));
	if (get_varint(r, &e->interval_us) || get_varint(r, &e->checks) || get_varint(r, &truth) ||
	    truth > 1)
		return -1;
	e->truth = (int)truth;
	if (truth && (get_varint(r, &e->present_kb) || get_varint(r, &e->pmd_kb) ||
		      get_varint(r, &e->mthp_kb)))
		return -1;
	return 0;
}

int trace_next_slow(struct trace_reader *r, struct trace_event *ev)
{
	uint64_t h, v, start;
	int err;

	if (r->done)
		return 0;
	if (!r->f)
		return -EINVAL;
	if (r->p >= r->blk_end) {
		err = next_block(r);
		if (err < 0)
			return err;
		if (err == 0)
			return fail(r, trace_reader_offset(r),
				    "truncated: the trace ends without its END record (was the "
				    "recorder stopped?)");
	}
	start = trace_reader_offset(r);
	ev->pid = r->pid;
	ev->time_ns = r->time_ns;
	ev->type = -1;
	if (get_varint(r, &h))
		goto bad;
	if (!(h & 1)) {
		ev->type = TR_FAULT;
		ev->write = !!(h & TRACE_FAULT_WRITE);
		ev->kernel = !!(h & TRACE_FAULT_KERNEL);
		r->last_page += (uint64_t)trace_unzigzag(h >> TRACE_FAULT_SHIFT);
		if (r->last_page >= TRACE_PAGE_LIMIT)
			return fail(r, start, "fault address out of range (the trace is damaged)");
		ev->addr = r->last_page << 12;
		r->nrecords++;
		r->nfaults++;
		return 1;
	}
	ev->type = h >> 1 < TR_NR_TYPES ? (int)(h >> 1) : -1;
	if (!trace_type_name(ev->type))
		return fail(r, start, "unknown record type %llu (the trace is damaged, or newer "
				      "than this thpsim)", (unsigned long long)(h >> 1));
	switch (ev->type) {
	case TR_PROC:
		if (get_varint(r, &v) || v > INT32_MAX)
			goto bad;
		r->pid = ev->pid = (int32_t)v;
		break;
	case TR_TIME:
		if (get_varint(r, &v))
			goto bad;
		r->time_ns += v;
		ev->time_ns = r->time_ns;
		break;
	case TR_SYSCALL:
		if (get_varint(r, &v) || v > 4096)
			goto bad;
		ev->nr = (int)v;
		if (get_varint(r, &v) || v > TRACE_SYSCALL_ARGS)
			goto bad;
		ev->nargs = (int)v;
		for (int i = 0; i < TRACE_SYSCALL_ARGS; i++)
			ev->args[i] = 0;
		for (int i = 0; i < ev->nargs; i++)
			if (get_varint(r, &ev->args[i]))
				goto bad;
		if (get_varint(r, &v))
			goto bad;
		ev->ret = trace_unzigzag(v);
		break;
	case TR_FORK:
		if (get_varint(r, &v) || v > INT32_MAX)
			goto bad;
		ev->child = (int32_t)v;
		if (get_varint(r, &ev->clone_flags))
			goto bad;
		break;
	case TR_EXEC:
		if (get_name(r, ev->name, sizeof(ev->name)) || get_varint(r, &ev->start_brk) ||
		    get_varint(r, &ev->brk) || get_varint(r, &ev->stack_limit))
			goto bad;
		break;
	case TR_VMA:
		if (get_varint(r, &ev->addr) || get_varint(r, &ev->len) || get_varint(r, &v) ||
		    get_name(r, ev->name, sizeof(ev->name)))
			goto bad;
		ev->prot = (int)(v & 0xf);
		ev->kind = (int)(v >> 4);
		if (ev->kind >= TRACE_VMA_NR_KINDS)
			return fail(r, start, "VMA of unknown kind %d", ev->kind);
		break;
	case TR_TOUCH:
		if (get_varint(r, &ev->addr) || get_varint(r, &ev->len) || get_varint(r, &v))
			goto bad;
		if (v >= TRACE_TOUCH_NR_KINDS)
			return fail(r, start, "TOUCH of unknown kind %llu", (unsigned long long)v);
		ev->kind = (int)v;
		break;
	case TR_EXIT:
		if (get_varint(r, &v))
			goto bad;
		ev->status = trace_unzigzag(v);
		break;
	case TR_LOST:
		if (get_varint(r, &ev->count))
			goto bad;
		break;
	case TR_KFIG:
		if (get_varint(r, &v) || v > TRACE_KFIG_MAX)
			goto bad;
		ev->nkfig = (int)v;
		for (int i = 0; i < ev->nkfig; i++)
			if (get_name(r, ev->kfig[i].name, sizeof(ev->kfig[i].name)) ||
			    get_varint(r, &ev->kfig[i].kb))
				goto bad;
		break;
	case TR_ACCESS:
		if (read_access(r, ev))
			goto bad;
		if (ev->kind >= TRACE_ACCESS_NR_KINDS)
			return fail(r, start, "ACCESS of unknown kind %d", ev->kind);
		break;
	case TR_NOTE:
	case TR_CALLER:
		if (get_name(r, ev->name, sizeof(ev->name)))
			goto bad;
		break;
	case TR_END:
		if (get_varint(r, &ev->count) || get_varint(r, &ev->faults))
			goto bad;
		if (ev->count != r->nrecords || ev->faults != r->nfaults)
			return fail(r, start, "END counts %llu records and %llu faults, the trace "
					      "has %llu and %llu (the trace is damaged)",
				    (unsigned long long)ev->count, (unsigned long long)ev->faults,
				    (unsigned long long)r->nrecords, (unsigned long long)r->nfaults);
		if (r->p != r->blk_end || r->blk_end != r->data_end || !r->eof) {
			/* the reader may simply not have read past END yet */
			if (r->p != r->blk_end || r->blk_end != r->data_end ||
			    fgetc(r->f) != EOF)
				return fail(r, trace_reader_offset(r), "data after the END record");
		}
		r->done = 1;
		return 1;
	}
	r->nrecords++;
	return 1;
bad:
	return fail(r, start, "%s record is malformed or runs past its block (the trace is "
			      "damaged)", trace_type_name(ev->type) ? trace_type_name(ev->type) : "a");
}
