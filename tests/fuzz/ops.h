/*
 * ops.h - one operation on the public API, as the differential tests, the
 * fuzz targets and the failure-injection scenarios describe it, and its three
 * forms: a struct, a line of text (the ".ops" format, which reproductions and
 * scenarios are written in) and a fixed-size binary record (what libFuzzer
 * mutates; every byte string decodes to some valid sequence).
 *
 * The .ops text format, one operation a line, '#' starts a comment:
 *
 *   ram MiB                          the simulated RAM (first, once)
 *   knob NAME VALUE                  thps_knob_set
 *   mmap     pN addr= len= prot= flags=
 *   munmap   pN addr= len=
 *   mprotect pN addr= len= prot=
 *   mremap   pN addr= len= new_len= flags= new_addr=
 *   madvise  pN addr= len= advice=
 *   read     pN addr= len=
 *   write    pN addr= len= seed=     bytes pattern_byte(seed, i)
 *   touch    pN addr= len= step= write=0|1 value=
 *   fork     pN                      into the lowest free slot; a free pN: a new process
 *   exit     pN
 *   shrink                           thps_drop_caches
 *   khugepaged scans=N               thps_khugepaged_run: N full scans (1..100)
 *
 * Numbers take C syntax (0x.., decimal); flags and prot are numeric, with
 * Linux's values (include/thpsim.h).
 */
#ifndef THPSIM_FUZZ_OPS_H
#define THPSIM_FUZZ_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OP_KINDS(X)                                                                        \
	X(mmap)                                                                            \
	X(munmap)                                                                          \
	X(mprotect)                                                                        \
	X(mremap)                                                                          \
	X(madvise)                                                                         \
	X(read)                                                                            \
	X(write)                                                                           \
	X(touch)                                                                           \
	X(fork)                                                                            \
	X(exit)                                                                            \
	X(shrink)                                                                          \
	X(knob)                                                                            \
	X(khugepaged)

#define OP_ENUM(name) OP_##name,
enum op_kind { OP_KINDS(OP_ENUM) NR_OP_KINDS };
#undef OP_ENUM

struct op {
	uint8_t kind;   /* enum op_kind */
	uint8_t proc;   /* process slot */
	uint8_t knob;   /* OP_knob: index into the knob table */
	uint8_t value;  /* OP_knob: index into that knob's values */
	int32_t prot;   /* mmap, mprotect: prot; madvise: advice; touch: 1 = write */
	int32_t flags;  /* mmap, mremap */
	uint32_t seed;  /* write: the bytes; touch: the byte; khugepaged: full scans */
	uint64_t addr, len;
	uint64_t len2;  /* mremap: new_len; touch: step */
	uint64_t addr2; /* mremap: new_addr */
};

/* A growable list of operations and the RAM they run on. */
struct op_list {
	struct op *op;
	size_t n, cap;
	uint64_t ram_mib;
};
void op_list_push(struct op_list *l, const struct op *op);
void op_list_free(struct op_list *l);

const char *op_name(int kind);

/* Knobs an operation may set: names and values as thps_knob_set takes them. */
int nr_op_knobs(void);
const char *op_knob_name(int knob);
int op_knob_nr_values(int knob);
const char *op_knob_value(int knob, int value);
/* The op knob named name, or -1; value number value of the knob named name. */
int op_knob_index(const char *name);
const char *op_knob_value_of(const char *name, int value);
/* The knob ops that give a machine these settings: index or -1. */
int op_knob_find(const char *name, const char *value, int *knob, int *value_idx);

/* Byte i of what "write seed=S" writes: the top byte of a 64-bit sum that
 * grows by an odd constant, so no two nearby pages of one write, and no
 * two seeds, look alike.  A seed with the top bit set writes one byte. */
#define PATTERN_K1 0x9E3779B97F4A7C15ULL
#define PATTERN_K2 0xBF58476D1CE4E5B9ULL
static inline uint8_t pattern_byte(uint32_t seed, uint64_t i)
{
	if (seed & 0x80000000u) /* a run of one byte: zero-filled pages and such */
		return (uint8_t)seed;
	return (uint8_t)((((uint64_t)seed + 1) * PATTERN_K1 + i * PATTERN_K2) >> 56);
}
void pattern_fill(uint32_t seed, uint8_t *buf, size_t len);

/* Text form.  op_format writes one line (no newline); ops_parse reads a file
 * and returns 0, or -1 after writing "file:line: why" to err. */
void op_format(const struct op *op, char *buf, size_t len);
int ops_write(FILE *f, const struct op_list *l, const char *comment);
int ops_parse(FILE *f, const char *name, struct op_list *l, char *err, size_t errlen);
int ops_load(const char *path, struct op_list *l, char *err, size_t errlen);

/* Binary form for the fuzzer: a header byte, then OP_RECORD bytes an op. */
#define OP_RECORD 16
void ops_decode(const uint8_t *data, size_t size, struct op_list *l, size_t max_ops);

#endif
