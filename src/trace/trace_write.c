/*
 * trace_write.c - the trace writer, the header and the helpers the writer
 * and reader share (CRC-32, names).  See trace.h and docs/trace-format.md.
 *
 * Records are encoded into a block buffer; a block is written (length,
 * CRC-32, payload) when the next record would not fit, on flush and on
 * close, and flushed to the file at once, so that a writer killed or a
 * disk that fills loses no complete block before the last.  Errors are sticky: the first one is kept and returned by close,
 * so the recorder's hot path needs no error checks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "linux_abi.h"
#include "trace.h"

/* Largest encoding of one record: a SYSCALL (1 + 2 + 1 + 6*10 + 10) or a
 * name-carrying record (a few varints and TRACE_NAME_MAX bytes). */
#define RECORD_MAX (64 + TRACE_NAME_MAX)

#define NAME_TYPE(name, val) [val] = #name,
static const char *const type_names[TR_NR_TYPES] = { TRACE_RECORD_TYPES(NAME_TYPE) };
#undef NAME_TYPE

const char *trace_type_name(int type)
{
	if (type == TR_FAULT)
		return "FAULT";
	/* numbers left free in TRACE_RECORD_TYPES have no name */
	return type >= 0 && type < TR_NR_TYPES ? type_names[type] : NULL;
}

const char *trace_vma_kind_name(int kind)
{
	static const char *const names[] = { "anon", "stack", "heap", "file", "special" };

	return kind >= 0 && kind < TRACE_VMA_NR_KINDS ? names[kind] : NULL;
}

const char *trace_syscall_name(int nr)
{
	switch (nr) {
#define SYSCALL_NAME(name, number, nargs) case number: return #name;
	LINUX_SYSCALLS(SYSCALL_NAME)
#undef SYSCALL_NAME
	default: return NULL;
	}
}

/* CRC-32 (IEEE 802.3, reflected, as zlib), slicing by 8. */
static uint32_t crc_table[8][256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320U & -(c & 1));
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

uint32_t trace_crc32(uint32_t crc, const void *buf, size_t len)
{
	static int ready; /* the table is the same whoever builds it first */
	const uint8_t *p = buf;

	if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE)) {
		crc_init();
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
	crc = ~crc;
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);
		uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
			      (uint32_t)p[7] << 24;

		crc = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
		      crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
		      crc_table[3][hi & 0xff] ^ crc_table[2][(hi >> 8) & 0xff] ^
		      crc_table[1][(hi >> 16) & 0xff] ^ crc_table[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

/* ---- header ---- */
int trace_header_add(struct trace_header *h, const char *key, const char *value)
{
	size_t kl = strlen(key), vl = strlen(value);

	if (h->n >= TRACE_HEADER_KEYS || h->used + kl + vl + 2 > sizeof(h->text))
		return -ENOSPC;
	if (!kl || strchr(key, '=') || strchr(key, '\n') || strchr(value, '\n'))
		return -EINVAL;
	h->key[h->n] = memcpy(h->text + h->used, key, kl + 1);
	h->used += kl + 1;
	h->value[h->n] = memcpy(h->text + h->used, value, vl + 1);
	h->used += vl + 1;
	h->n++;
	return 0;
}

const char *trace_header_get(const struct trace_header *h, const char *key)
{
	for (int i = 0; i < h->n; i++)
		if (!strcmp(h->key[i], key))
			return h->value[i];
	return NULL;
}

/* ---- encoding ---- */
static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static uint8_t *put_name(uint8_t *p, const char *s)
{
	size_t n = s ? strnlen(s, TRACE_NAME_MAX - 1) : 0;

	p = put_varint(p, n);
	memcpy(p, s, n);
	return p + n;
}

static int write_all(struct trace_writer *w, const void *buf, size_t len)
{
	if (w->err)
		return w->err;
	errno = 0; /* so that a stale errno is not taken for the failure's */
	if (fwrite(buf, 1, len, w->f) != len) {
		w->err = errno ? -errno : -EIO;
		return w->err;
	}
	w->offset += len;
	return 0;
}

static void flush_block(struct trace_writer *w)
{
	uint8_t hdr[TRACE_BLOCK_HDR];

	if (!w->len)
		return;
	trace_put_le32(hdr, (uint32_t)w->len);
	trace_put_le32(hdr + 4, trace_crc32(0, w->buf, w->len));
	if (!write_all(w, hdr, sizeof(hdr)))
		write_all(w, w->buf, w->len);
	/* the block goes to the file now, whole: a writer killed later (or a
	 * disk that fills later) leaves every block before intact, which a
	 * reader takes (one write(2) per 64 KiB block) */
	errno = 0;
	if (!w->err && fflush(w->f))
		w->err = errno ? -errno : -EIO;
	w->len = 0;
}

/* Room for one record of at most need bytes; returns where to write it. */
static inline uint8_t *reserve(struct trace_writer *w, size_t need)
{
	if (w->len + need > TRACE_BLOCK_MAX)
		flush_block(w);
	return w->buf + w->len;
}

static inline void commit(struct trace_writer *w, uint8_t *end)
{
	w->len = (size_t)(end - w->buf);
	w->nrecords++;
}

static inline uint8_t *put_type(uint8_t *p, int type)
{
	return put_varint(p, ((uint64_t)type << 1) | 1);
}

/* The preamble and the header, into w->f. */
static int write_preamble(struct trace_writer *w, const struct trace_header *h)
{
	uint8_t pre[TRACE_PREAMBLE];
	size_t hlen = 0;
	char *text = malloc(TRACE_HEADER_MAX + 64);

	if (!text)
		return w->err = -ENOMEM;
	hlen += (size_t)snprintf(text, TRACE_HEADER_MAX, "format=thpsim-trace %d\n", TRACE_VERSION);
	for (int i = 0; h && i < h->n; i++) {
		int n = snprintf(text + hlen, TRACE_HEADER_MAX + 64 - hlen, "%s=%s\n", h->key[i],
				 h->value[i]);

		if (n < 0 || hlen + (size_t)n > TRACE_HEADER_MAX) {
			free(text);
			return w->err = -ENOSPC;
		}
		hlen += (size_t)n;
	}
	memcpy(pre, TRACE_MAGIC, 8);
	trace_put_le32(pre + 8, TRACE_VERSION);
	trace_put_le32(pre + 12, (uint32_t)hlen);
	write_all(w, pre, sizeof(pre));
	write_all(w, text, hlen);
	free(text);
	return w->err;
}

int trace_writer_open_stream(struct trace_writer *w, FILE *f, const char *path,
			     const struct trace_header *h)
{
	memset(w, 0, sizeof(*w));
	w->path = path;
	w->pid = -1;
	w->f = f;
	w->buf = malloc(TRACE_BLOCK_MAX);
	if (!w->buf)
		return w->err = -ENOMEM;
	/* no setvbuf: each block is one fwrite and a flush (flush_block); a
	 * size given with a NULL buffer was ignored by glibc anyway */
	return write_preamble(w, h);
}

int trace_writer_open(struct trace_writer *w, const char *path, const struct trace_header *h)
{
	FILE *f = fopen(path, "wb");
	int err;

	if (!f)
		return -errno;
	err = trace_writer_open_stream(w, f, path, h);
	w->own = 1;
	if (err) {
		fclose(f);
		free(w->buf);
		w->f = NULL;
		w->buf = NULL;
	}
	return err;
}

void trace_write_proc(struct trace_writer *w, int32_t pid)
{
	uint8_t *p;

	if (pid == w->pid)
		return;
	p = reserve(w, 16);
	p = put_type(p, TR_PROC);
	p = put_varint(p, (uint64_t)(uint32_t)pid);
	commit(w, p);
	w->pid = pid;
}

void trace_write_time(struct trace_writer *w, uint64_t t_ns, uint64_t min_step_ns)
{
	uint8_t *p;

	if (t_ns < w->time_ns + min_step_ns || t_ns <= w->time_ns)
		return;
	p = reserve(w, 16);
	p = put_type(p, TR_TIME);
	p = put_varint(p, t_ns - w->time_ns);
	commit(w, p);
	w->time_ns = t_ns;
}

void trace_write_fault(struct trace_writer *w, uint64_t addr, int write, int kernel)
{
	uint64_t page = addr >> 12;
	uint8_t *p = reserve(w, 12);

	p = put_varint(p, (trace_zigzag((int64_t)(page - w->last_page)) << TRACE_FAULT_SHIFT) |
			       (kernel ? TRACE_FAULT_KERNEL : 0) | (write ? TRACE_FAULT_WRITE : 0));
	commit(w, p);
	w->last_page = page;
	w->nfaults++;
}

void trace_write_syscall(struct trace_writer *w, int nr, int nargs, const uint64_t *args,
			 int64_t ret)
{
	uint8_t *p = reserve(w, 96);

	if (nargs < 0)
		nargs = 0;
	if (nargs > TRACE_SYSCALL_ARGS)
		nargs = TRACE_SYSCALL_ARGS;
	p = put_type(p, TR_SYSCALL);
	p = put_varint(p, (uint64_t)nr);
	p = put_varint(p, (uint64_t)nargs);
	for (int i = 0; i < nargs; i++)
		p = put_varint(p, args[i]);
	p = put_varint(p, trace_zigzag(ret));
	commit(w, p);
}

void trace_write_fork(struct trace_writer *w, int32_t child, uint64_t clone_flags)
{
	uint8_t *p = reserve(w, 32);

	p = put_type(p, TR_FORK);
	p = put_varint(p, (uint64_t)(uint32_t)child);
	p = put_varint(p, clone_flags);
	commit(w, p);
}

void trace_write_exec(struct trace_writer *w, const char *file, uint64_t start_brk, uint64_t brk,
		      uint64_t stack_limit)
{
	uint8_t *p = reserve(w, RECORD_MAX);

	p = put_type(p, TR_EXEC);
	p = put_name(p, file);
	p = put_varint(p, start_brk);
	p = put_varint(p, brk);
	p = put_varint(p, stack_limit);
	commit(w, p);
}

void trace_write_vma(struct trace_writer *w, uint64_t start, uint64_t len, int prot, int kind,
		     const char *name)
{
	uint8_t *p = reserve(w, RECORD_MAX);

	p = put_type(p, TR_VMA);
	p = put_varint(p, start);
	p = put_varint(p, len);
	p = put_varint(p, (uint64_t)(prot & 0xf) | ((uint64_t)kind << 4));
	p = put_name(p, name);
	commit(w, p);
}

void trace_write_touch(struct trace_writer *w, uint64_t start, uint64_t len, int kind)
{
	uint8_t *p = reserve(w, 32);

	p = put_type(p, TR_TOUCH);
	p = put_varint(p, start);
	p = put_varint(p, len);
	p = put_varint(p, (uint64_t)kind);
	commit(w, p);
}

void trace_write_exit(struct trace_writer *w, int64_t status)
{
	uint8_t *p = reserve(w, 16);

	p = put_type(p, TR_EXIT);
	p = put_varint(p, trace_zigzag(status));
	commit(w, p);
}

void trace_write_lost(struct trace_writer *w, uint64_t count)
{
	uint8_t *p = reserve(w, 16);

	p = put_type(p, TR_LOST);
	p = put_varint(p, count);
	commit(w, p);
	w->nlost += count;
}

void trace_write_kfig(struct trace_writer *w, int n, const struct trace_kfig *k)
{
	uint8_t *p = reserve(w, 16 + TRACE_KFIG_MAX * (sizeof(k->name) + 12));

	if (n > TRACE_KFIG_MAX)
		n = TRACE_KFIG_MAX;
	p = put_type(p, TR_KFIG);
	p = put_varint(p, (uint64_t)n);
	for (int i = 0; i < n; i++) {
		size_t l = strnlen(k[i].name, sizeof(k[i].name) - 1);

		p = put_varint(p, l);
		memcpy(p, k[i].name, l);
		p += l;
		p = put_varint(p, k[i].kb);
	}
	commit(w, p);
}

void trace_write_note(struct trace_writer *w, const char *text)
{
	uint8_t *p = reserve(w, RECORD_MAX);

	p = put_type(p, TR_NOTE);
	p = put_name(p, text);
	commit(w, p);
}

void trace_write_access(struct trace_writer *w, uint64_t start, uint64_t len, uint64_t nr)
{
	uint8_t *p = reserve(w, 40);

	p = put_type(p, TR_ACCESS);
	p = put_varint(p, TRACE_ACCESS_REGION);
	p = put_varint(p, start);
	p = put_varint(p, len);
	p = put_varint(p, nr);
	commit(w, p);
}

void trace_write_access_end(struct trace_writer *w, const struct trace_access_end *e)
{
	uint8_t *p = reserve(w, 72);

	p = put_type(p, TR_ACCESS);
	p = put_varint(p, TRACE_ACCESS_END);
	p = put_varint(p, e->interval_us);
	p = put_varint(p, e->checks);
	p = put_varint(p, e->truth ? 1 : 0);
	if (e->truth) {
		p = put_varint(p, e->present_kb);
		p = put_varint(p, e->pmd_kb);
		p = put_varint(p, e->mthp_kb);
	}
	commit(w, p);
}

void trace_write_caller(struct trace_writer *w, const char *frames)
{
	uint8_t *p = reserve(w, RECORD_MAX);

	p = put_type(p, TR_CALLER);
	p = put_name(p, frames);
	commit(w, p);
}

int trace_writer_flush(struct trace_writer *w)
{
	flush_block(w);
	if (!w->err && fflush(w->f))
		w->err = -errno;
	return w->err;
}

int trace_writer_close(struct trace_writer *w)
{
	uint8_t *p;
	int err;

	if (!w->f)
		return w->err;
	p = reserve(w, 40);
	p = put_type(p, TR_END);
	/* END counts the records before it */
	p = put_varint(p, w->nrecords);
	p = put_varint(p, w->nfaults);
	commit(w, p);
	flush_block(w);
	if (w->own ? fclose(w->f) : fflush(w->f))
		if (!w->err)
			w->err = -errno;
	w->f = NULL;
	free(w->buf);
	w->buf = NULL;
	err = w->err;
	return err;
}
