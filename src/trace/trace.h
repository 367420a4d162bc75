/*
 * trace.h - the thpsim trace format: a streaming writer and reader.
 *
 * A trace is what `thpsim record` saw a real program do to its anonymous
 * memory, independent of any THP policy: the address space each exec left,
 * the system calls that shape memory (with their arguments and results),
 * forks and exits, and the first read and first write of every 4 KiB page,
 * in order.  docs/trace-format.md is the specification; this header is its
 * implementation.
 *
 * Layout: a fixed preamble (magic, version, header length), a text header of
 * "key=value" lines (the recording machine's THP settings and what was run),
 * then blocks of at most TRACE_BLOCK_MAX bytes, each with its length and a
 * CRC-32 so that damage is found and located.  Records never span blocks.
 * Every number in a record is a LEB128 varint (signed ones zigzag-encoded),
 * and a fault is one byte when it lands within 8 pages of the previous one,
 * so traces are small and the reader is fast.
 *
 * The writer buffers one block and the reader one read buffer: both use
 * bounded memory for a trace of any length.  The reader's hot path, a fault
 * record, is inlined here (trace_next).
 */
#ifndef THPSIM_TRACE_H
#define THPSIM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_MAGIC "THPTRACE"
#define TRACE_VERSION 1
#define TRACE_PREAMBLE 16           /* magic, u32 version, u32 header length */
#define TRACE_BLOCK_HDR 8           /* u32 payload length, u32 CRC-32 */
#define TRACE_BLOCK_MAX (64 << 10)  /* payload bytes of one block */
#define TRACE_HEADER_MAX (64 << 10) /* bytes of the text header */
#define TRACE_NAME_MAX 4096         /* bytes of a name or a note */
#define TRACE_SYSCALL_ARGS 6

/*
 * A FAULT record is its first varint: the zigzag distance in pages from
 * the previous fault << TRACE_FAULT_SHIFT, the kernel and write bits, and
 * bit 0 clear (docs/trace-format.md).  A page is below TRACE_PAGE_LIMIT
 * (its address below 2^64); a trace that steps past it is damaged.
 */
#define TRACE_FAULT_WRITE 0x2u
#define TRACE_FAULT_KERNEL 0x4u
#define TRACE_FAULT_SHIFT 3
#define TRACE_PAGE_LIMIT (1ULL << 52)

/* Record types (docs/trace-format.md).  FAULT is told by its low bit.  The
 * numbers need not be contiguous (12 is another record's): the reader asks
 * trace_type_name whether a number exists. */
#define TRACE_RECORD_TYPES(X)                                                  \
	X(PROC, 0)    /* pid: the process the next records belong to */       \
	X(TIME, 1)    /* ns since the previous TIME */                        \
	X(SYSCALL, 2) /* nr, nargs, args..., result */                        \
	X(FORK, 3)    /* child pid, clone flags */                            \
	X(EXEC, 4)    /* file name, start_brk, brk, stack limit */            \
	X(VMA, 5)     /* start, pages, prot and kind, name: after EXEC */     \
	X(TOUCH, 6)   /* start, length, kind: memory filled without faults */ \
	X(EXIT, 7)    /* exit status */                                        \
	X(LOST, 8)    /* events the kernel dropped */                          \
	X(KFIG, 9)    /* figures the kernel reported, name and kB pairs */     \
	X(NOTE, 10)   /* text for a person */                                  \
	X(END, 11)    /* record and fault counts: the trace is complete */ \
	X(ACCESS, 12) /* pages the pid accessed (DAMON), or a sample's end */ \
	X(CALLER, 13) /* user call chain of the pid's next SYSCALL, as text */

#define TRACE_ENUM(name, val) TR_##name = val,
enum trace_type { TRACE_RECORD_TYPES(TRACE_ENUM) TR_NR_TYPES, TR_FAULT = 100 };
#undef TRACE_ENUM
const char *trace_type_name(int type);

/* VMA kinds in an EXEC's address space. */
enum trace_vma_kind {
	TRACE_VMA_ANON,    /* anonymous private (bss, ...) */
	TRACE_VMA_STACK,   /* [stack] */
	TRACE_VMA_HEAP,    /* [heap] */
	TRACE_VMA_FILE,    /* file-backed */
	TRACE_VMA_SPECIAL, /* [vdso], [vvar], ... */
	TRACE_VMA_NR_KINDS
};
#define TRACE_VMA_SHARED 0x8 /* in vma.prot: a shared mapping */
const char *trace_vma_kind_name(int kind);

/* TOUCH kinds. */
enum trace_touch_kind {
	TRACE_TOUCH_READ,
	TRACE_TOUCH_WRITE,
	TRACE_TOUCH_POPULATE, /* as the kernel populates: write if writable */
	TRACE_TOUCH_NR_KINDS
};

/* ACCESS kinds: a region accessed in the current sample, or the sample's
 * end (after its regions). */
enum trace_access_kind {
	TRACE_ACCESS_REGION, /* addr, len: a region; count: DAMON's nr_accesses */
	TRACE_ACCESS_END,    /* the sample: see struct trace_access_end */
	TRACE_ACCESS_NR_KINDS
};

/* An ACCESS sample's end: how it was taken and, when the recorder could
 * see them, the kernel's own figures for the accessed regions (pagemap
 * and kpageflags): kB present, in PMD-mapped THPs, in smaller THPs. */
struct trace_access_end {
	uint64_t interval_us; /* the sample's length (DAMON's aggregation interval) */
	uint64_t checks;      /* the checks of each region in it (aggregation / sampling) */
	int truth;            /* the kernel's figures below are there */
	uint64_t present_kb, pmd_kb, mthp_kb;
};

/* KFIG: the kernel's figures for a process, in kB. */
#define TRACE_KFIG_MAX 16
struct trace_kfig {
	char name[24];
	uint64_t kb;
};

struct trace_event {
	int type;         /* enum trace_type */
	int32_t pid;      /* the process (last PROC record) */
	uint64_t time_ns; /* since the recording began (sum of TIMEs) */
	/* FAULT */
	uint64_t addr;    /* FAULT, VMA, TOUCH: start address */
	int write;        /* FAULT: a write */
	int kernel;       /* FAULT: taken in kernel mode (copy_to_user, ...) */
	/* SYSCALL */
	int nr, nargs;
	uint64_t args[TRACE_SYSCALL_ARGS];
	int64_t ret;
	/* FORK */
	int32_t child;
	uint64_t clone_flags;
	/* EXEC */
	uint64_t start_brk, brk, stack_limit;
	/* VMA, TOUCH */
	uint64_t len;
	int prot;         /* VMA: PROT_* bits | TRACE_VMA_SHARED */
	int kind;         /* VMA: enum trace_vma_kind; TOUCH: enum trace_touch_kind */
	/* ACCESS: kind is enum trace_access_kind; a region's addr and len,
	 * count its nr_accesses; a sample's end in acc */
	struct trace_access_end acc;
	/* EXIT */
	int64_t status;
	/* LOST, END */
	uint64_t count, faults;
	/* KFIG */
	int nkfig;
	struct trace_kfig kfig[TRACE_KFIG_MAX];
	/* EXEC file name, VMA name, NOTE text, CALLER frames (NUL-terminated) */
	char name[TRACE_NAME_MAX];
};

/* ---- the header ---- */
#define TRACE_HEADER_KEYS 128
struct trace_header {
	int n;
	char *key[TRACE_HEADER_KEYS];
	char *value[TRACE_HEADER_KEYS];
	char text[TRACE_HEADER_MAX]; /* backing store */
	size_t used;
};
int trace_header_add(struct trace_header *h, const char *key, const char *value);
/* NULL when absent. */
const char *trace_header_get(const struct trace_header *h, const char *key);

/* ---- writer ---- */
struct trace_writer {
	FILE *f;
	const char *path;
	uint8_t *buf;         /* the block being filled */
	size_t len;           /* bytes in it */
	uint64_t offset;      /* file offset of the next block */
	int err;              /* first error (negative errno), sticky */
	int own;              /* close f on close (opened by path) */
	int32_t pid;          /* last PROC written */
	uint64_t last_page;   /* last fault page, for deltas */
	uint64_t time_ns;     /* time of the last TIME written */
	uint64_t nrecords, nfaults, nlost;
};

/* Open path ("-" is not allowed) and write the preamble and header. */
int trace_writer_open(struct trace_writer *w, const char *path, const struct trace_header *h);
/* The same into f, which the caller opened and closes (trace_writer_close
 * only flushes it): how the recorder writes through a temporary file. */
int trace_writer_open_stream(struct trace_writer *w, FILE *f, const char *path,
			     const struct trace_header *h);
/* Make the next records belong to pid (writes PROC when it changes). */
void trace_write_proc(struct trace_writer *w, int32_t pid);
/* Advance the time to t_ns (writes TIME when it moved by min_step_ns). */
void trace_write_time(struct trace_writer *w, uint64_t t_ns, uint64_t min_step_ns);
void trace_write_fault(struct trace_writer *w, uint64_t addr, int write, int kernel);
void trace_write_syscall(struct trace_writer *w, int nr, int nargs, const uint64_t *args,
			 int64_t ret);
void trace_write_fork(struct trace_writer *w, int32_t child, uint64_t clone_flags);
void trace_write_exec(struct trace_writer *w, const char *file, uint64_t start_brk, uint64_t brk,
		      uint64_t stack_limit);
void trace_write_vma(struct trace_writer *w, uint64_t start, uint64_t len, int prot, int kind,
		     const char *name);
void trace_write_touch(struct trace_writer *w, uint64_t start, uint64_t len, int kind);
void trace_write_exit(struct trace_writer *w, int64_t status);
void trace_write_lost(struct trace_writer *w, uint64_t count);
void trace_write_kfig(struct trace_writer *w, int n, const struct trace_kfig *k);
void trace_write_note(struct trace_writer *w, const char *text);
/* ACCESS: a region pid accessed in the sample being written (nr_accesses
 * of the sample's checks, more than 0), then the sample's end. */
void trace_write_access(struct trace_writer *w, uint64_t start, uint64_t len, uint64_t nr);
void trace_write_access_end(struct trace_writer *w, const struct trace_access_end *e);
/* The call chain of pid's next SYSCALL record, innermost frame first,
 * joined by " <- " (e.g. "mmap <- make_big_map <- main"). */
void trace_write_caller(struct trace_writer *w, const char *frames);
/* Write the blocks buffered so far (the trace stays open). */
int trace_writer_flush(struct trace_writer *w);
/* Write END, flush and close: 0 or the first error.  A writer that hit an
 * error stops writing, so the file holds whole blocks up to it (and maybe
 * part of one): a reader takes every complete block. */
int trace_writer_close(struct trace_writer *w);

/* ---- reader ---- */
struct trace_reader {
	FILE *f;
	char path[512];
	struct trace_header header;
	uint8_t *buf;          /* read buffer */
	size_t cap;            /* its size */
	uint8_t *p, *blk_end;  /* the current block's payload: next byte, end */
	uint8_t *data_end;     /* end of the bytes read into buf */
	uint64_t buf_offset;   /* file offset of buf[0] */
	int eof;               /* the file has no more bytes */
	int done;              /* END was read */
	int32_t pid;
	uint64_t last_page, time_ns;
	uint64_t nrecords, nfaults;
	char err[768];         /* the error, with the offset */
};

/* Open and read the header: 0, or a negative errno with r->err set.  "-"
 * is standard input (a pipe will do: the reader never seeks). */
int trace_reader_open(struct trace_reader *r, const char *path);
void trace_reader_close(struct trace_reader *r);
/* File offset of the next byte to decode. */
uint64_t trace_reader_offset(const struct trace_reader *r);
/* 1 with *ev filled, 0 after END, or a negative errno with r->err set
 * ("PATH: offset N: what is wrong"). */
int trace_next_slow(struct trace_reader *r, struct trace_event *ev);

/* Signed numbers in records: zigzag, so that small magnitudes of either
 * sign take few varint bytes. */
static inline uint64_t trace_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t trace_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* The common record, a fault within 8 pages of the previous one (one byte:
 * bit 0 and the varint's continuation bit 7 clear), decoded inline;
 * everything else, and a step out of the address space, goes to
 * trace_next_slow. */
static inline int trace_next(struct trace_reader *r, struct trace_event *ev)
{
	if (__builtin_expect(r->p < r->blk_end && !(*r->p & 0x81), 1)) {
		unsigned h = *r->p, d = h >> TRACE_FAULT_SHIFT;
		uint64_t page = r->last_page + (uint64_t)trace_unzigzag(d);

		if (__builtin_expect(page >= TRACE_PAGE_LIMIT, 0))
			return trace_next_slow(r, ev); /* which says where */
		r->p++;
		r->last_page = page;
		ev->type = TR_FAULT;
		ev->write = !!(h & TRACE_FAULT_WRITE);
		ev->kernel = !!(h & TRACE_FAULT_KERNEL);
		ev->addr = page << 12;
		ev->pid = r->pid;
		ev->time_ns = r->time_ns;
		r->nrecords++;
		r->nfaults++;
		return 1;
	}
	return trace_next_slow(r, ev);
}

/*
 * After a fault record: take the fault records that follow it, each one
 * page above the one before with the same write bit (user or kernel mode
 * alike), at most max of them and within the block read.  Returns how
 * many; r->last_page is the last one's page.  These are most of a trace
 * (a program filling memory), and a reader that only extends a run of
 * faults need not decode each into an event.
 */
static inline uint64_t trace_next_seq(struct trace_reader *r, int write, uint64_t max)
{
	uint8_t *p = r->p;
	const unsigned next = 2u << TRACE_FAULT_SHIFT | (write ? TRACE_FAULT_WRITE : 0); /* +1 */
	uint64_t n = 0;

	if ((uint64_t)(r->blk_end - p) < max)
		max = (uint64_t)(r->blk_end - p);
	/* the record that would step out of the address space is trace_next's */
	if (TRACE_PAGE_LIMIT - 1 - r->last_page < max)
		max = TRACE_PAGE_LIMIT - 1 - r->last_page;
	while (n < max && (p[n] & ~TRACE_FAULT_KERNEL) == next)
		n++;
	r->p = p + n;
	r->last_page += n;
	r->nrecords += n;
	r->nfaults += n;
	return n;
}

/* ---- helpers shared by the writer, the reader and the tests ---- */
uint32_t trace_crc32(uint32_t crc, const void *buf, size_t len);

/* The format's little-endian 32-bit fields (preamble, block headers). */
static inline uint32_t trace_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void trace_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}
/* x86-64 system call names the recorder traces; NULL for others. */
const char *trace_syscall_name(int nr);

#endif
