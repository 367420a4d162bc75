/*
 * ops.c - operations: the knobs (those of the model's knob table with values
 * to try), the .ops text format (writer and parser, errors with file:line)
 * and the decoder of fuzzer bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "thpsim.h"
#include "ref.h"

#define OP_NAME(name) #name,
static const char *const op_names[] = { OP_KINDS(OP_NAME) };
#undef OP_NAME

const char *op_name(int kind)
{
	return kind >= 0 && kind < NR_OP_KINDS ? op_names[kind] : "?";
}

void op_list_push(struct op_list *l, const struct op *op)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->op = realloc(l->op, l->cap * sizeof(*l->op));
		if (!l->op)
			abort();
	}
	l->op[l->n++] = *op;
}

void op_list_free(struct op_list *l)
{
	free(l->op);
	memset(l, 0, sizeof(*l));
}

void pattern_fill(uint32_t seed, uint8_t *buf, size_t len)
{
	uint64_t x = ((uint64_t)seed + 1) * PATTERN_K1;

	if (seed & 0x80000000u) {
		memset(buf, (uint8_t)seed, len);
		return;
	}
	for (size_t i = 0; i < len; i++, x += PATTERN_K2)
		buf[i] = (uint8_t)(x >> 56);
}

/* ---- knobs: those the knob table gives values to try (thps_knob_fuzz_value) ---- */

/* The thps_knob_name index of op knob k, or -1.  Not cached: the soak's
 * threads call it, and the table is a few dozen rows. */
static int knob_id(int k)
{
	for (int i = 0; k >= 0 && thps_knob_name(i); i++)
		if (thps_knob_fuzz_value(i, 0) && k-- == 0)
			return i;
	return -1;
}

int nr_op_knobs(void)
{
	int n = 0;

	while (knob_id(n) >= 0)
		n++;
	return n;
}

const char *op_knob_name(int knob)
{
	return thps_knob_name(knob_id(knob));
}

int op_knob_nr_values(int knob)
{
	int n = 0;

	while (thps_knob_fuzz_value(knob_id(knob), n))
		n++;
	return n;
}

const char *op_knob_value(int knob, int value)
{
	return thps_knob_fuzz_value(knob_id(knob), value);
}

int op_knob_index(const char *name)
{
	for (int k = 0; op_knob_name(k); k++)
		if (!strcmp(op_knob_name(k), name))
			return k;
	return -1;
}

const char *op_knob_value_of(const char *name, int value)
{
	return op_knob_value(op_knob_index(name), value);
}

int op_knob_find(const char *name, const char *value, int *knob, int *value_idx)
{
	for (int k = 0; op_knob_name(k); k++) {
		if (strcmp(op_knob_name(k), name))
			continue;
		*knob = k;
		for (int v = 0; v < op_knob_nr_values(k); v++)
			if (!strcmp(op_knob_value(k, v), value)) {
				*value_idx = v;
				return 0;
			}
		return -EINVAL;
	}
	return -ENOENT;
}

/* ---- text ---- */
void op_format(const struct op *op, char *buf, size_t len)
{
	const char *n = op_name(op->kind);

	switch (op->kind) {
	case OP_mmap:
		snprintf(buf, len, "mmap p%d addr=%#" PRIx64 " len=%#" PRIx64 " prot=%#x flags=%#x",
			 op->proc, op->addr, op->len, op->prot, op->flags);
		break;
	case OP_munmap:
		snprintf(buf, len, "munmap p%d addr=%#" PRIx64 " len=%#" PRIx64, op->proc, op->addr,
			 op->len);
		break;
	case OP_mprotect:
		snprintf(buf, len, "mprotect p%d addr=%#" PRIx64 " len=%#" PRIx64 " prot=%#x", op->proc,
			 op->addr, op->len, op->prot);
		break;
	case OP_mremap:
		snprintf(buf, len,
			 "mremap p%d addr=%#" PRIx64 " len=%#" PRIx64 " new_len=%#" PRIx64
			 " flags=%#x new_addr=%#" PRIx64,
			 op->proc, op->addr, op->len, op->len2, op->flags, op->addr2);
		break;
	case OP_madvise:
		snprintf(buf, len, "madvise p%d addr=%#" PRIx64 " len=%#" PRIx64 " advice=%d", op->proc,
			 op->addr, op->len, op->prot);
		break;
	case OP_read:
		snprintf(buf, len, "read p%d addr=%#" PRIx64 " len=%#" PRIx64, op->proc, op->addr,
			 op->len);
		break;
	case OP_write:
		snprintf(buf, len, "write p%d addr=%#" PRIx64 " len=%#" PRIx64 " seed=%#x", op->proc,
			 op->addr, op->len, op->seed);
		break;
	case OP_touch:
		snprintf(buf, len,
			 "touch p%d addr=%#" PRIx64 " len=%#" PRIx64 " step=%#" PRIx64
			 " write=%d value=%u",
			 op->proc, op->addr, op->len, op->len2, op->prot ? 1 : 0, op->seed & 0xff);
		break;
	case OP_fork:
	case OP_exit:
		snprintf(buf, len, "%s p%d", n, op->proc);
		break;
	case OP_khugepaged:
		snprintf(buf, len, "khugepaged scans=%u", op->seed);
		break;
	case OP_knob:
		snprintf(buf, len, "knob %s %s", op_knob_name(op->knob) ? op_knob_name(op->knob) : "?",
			 op_knob_value(op->knob, op->value) ? op_knob_value(op->knob, op->value) : "?");
		break;
	default:
		snprintf(buf, len, "%s", n);
		break;
	}
}

int ops_write(FILE *f, const struct op_list *l, const char *comment)
{
	char line[256];

	if (comment)
		fprintf(f, "# %s\n", comment);
	fprintf(f, "ram %" PRIu64 "\n", l->ram_mib);
	for (size_t i = 0; i < l->n; i++) {
		op_format(&l->op[i], line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	return ferror(f) ? -1 : 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

/* The keys each kind takes, and where each goes. */
enum field { F_ADDR, F_LEN, F_PROT, F_FLAGS, F_NEW_LEN, F_NEW_ADDR, F_ADVICE, F_SEED, F_STEP,
	     F_WRITE, F_VALUE, F_SCANS, NR_FIELDS };
static const char *const field_names[NR_FIELDS] = { "addr", "len", "prot", "flags", "new_len",
						    "new_addr", "advice", "seed", "step",
						    "write", "value", "scans" };
static const unsigned kind_fields[NR_OP_KINDS] = {
	[OP_mmap] = 1u << F_ADDR | 1u << F_LEN | 1u << F_PROT | 1u << F_FLAGS,
	[OP_munmap] = 1u << F_ADDR | 1u << F_LEN,
	[OP_mprotect] = 1u << F_ADDR | 1u << F_LEN | 1u << F_PROT,
	[OP_mremap] = 1u << F_ADDR | 1u << F_LEN | 1u << F_NEW_LEN | 1u << F_FLAGS | 1u << F_NEW_ADDR,
	[OP_madvise] = 1u << F_ADDR | 1u << F_LEN | 1u << F_ADVICE,
	[OP_read] = 1u << F_ADDR | 1u << F_LEN,
	[OP_write] = 1u << F_ADDR | 1u << F_LEN | 1u << F_SEED,
	[OP_touch] = 1u << F_ADDR | 1u << F_LEN | 1u << F_STEP | 1u << F_WRITE | 1u << F_VALUE,
	[OP_khugepaged] = 1u << F_SCANS,
};

static int set_field(struct op *op, enum field f, uint64_t v)
{
	switch (f) {
	case F_ADDR: op->addr = v; break;
	case F_LEN: op->len = v; break;
	case F_NEW_LEN: op->len2 = v; break;
	case F_STEP: op->len2 = v; break;
	case F_NEW_ADDR: op->addr2 = v; break;
	case F_PROT:
	case F_ADVICE:
	case F_WRITE:
		if (v > INT32_MAX)
			return -1;
		op->prot = (int32_t)v;
		break;
	case F_FLAGS:
		if (v > INT32_MAX)
			return -1;
		op->flags = (int32_t)v;
		break;
	case F_SCANS:
		if (!v || v > 100)
			return -1;
		op->seed = (uint32_t)v;
		break;
	case F_SEED:
	case F_VALUE:
		if (v > UINT32_MAX)
			return -1;
		op->seed = (uint32_t)v;
		break;
	default:
		return -1;
	}
	return 0;
}

#define PERR(...)                                                                          \
	do {                                                                               \
		int n_ = snprintf(err, errlen, "%s:%d: ", name, lineno);                   \
		if (n_ >= 0 && (size_t)n_ < errlen)                                        \
			snprintf(err + n_, errlen - (size_t)n_, __VA_ARGS__);              \
		return -1;                                                                 \
	} while (0)

int ops_parse(FILE *f, const char *name, struct op_list *l, char *err, size_t errlen)
{
	char line[1024];
	int lineno = 0;
	bool seen_op = false;

	memset(l, 0, sizeof(*l));
	l->ram_mib = 64;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok, *hash = strchr(line, '#');
		struct op op = { 0 };
		int kind;
		unsigned seen = 0;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			PERR("line longer than %zu characters", sizeof(line) - 2);
		if (hash)
			*hash = 0;
		tok = strtok_r(line, " \t\r\n", &save);
		if (!tok)
			continue;
		if (!strcmp(tok, "ram")) {
			char *v = strtok_r(NULL, " \t\r\n", &save);
			uint64_t mib;

			if (seen_op)
				PERR("'ram' must come before the first operation");
			if (!v || parse_u64(v, &mib) || mib < 4 || mib > 65536)
				PERR("'ram' takes a size in MiB from 4 to 65536");
			if (strtok_r(NULL, " \t\r\n", &save))
				PERR("'ram' takes one value");
			l->ram_mib = mib;
			continue;
		}
		for (kind = 0; kind < NR_OP_KINDS; kind++)
			if (!strcmp(tok, op_names[kind]))
				break;
		if (kind == NR_OP_KINDS)
			PERR("unknown operation '%s'", tok);
		op.kind = (uint8_t)kind;
		seen_op = true;
		if (kind == OP_knob) {
			char *k = strtok_r(NULL, " \t\r\n", &save), *v = strtok_r(NULL, " \t\r\n", &save);
			int ki, vi;

			if (!k || !v || strtok_r(NULL, " \t\r\n", &save))
				PERR("usage: knob NAME VALUE");
			switch (op_knob_find(k, v, &ki, &vi)) {
			case 0:
				break;
			case -ENOENT:
				PERR("unknown knob '%s'", k);
			default:
				PERR("knob %s: value '%s' is not one the tests use", k, v);
			}
			op.knob = (uint8_t)ki;
			op.value = (uint8_t)vi;
			op_list_push(l, &op);
			continue;
		}
		if (kind != OP_shrink && kind != OP_khugepaged) {
			char *p = strtok_r(NULL, " \t\r\n", &save);
			uint64_t slot;

			if (!p || p[0] != 'p' || parse_u64(p + 1, &slot) || slot >= REF_MAX_PROCS)
				PERR("%s: expected a process p0..p%d", tok, REF_MAX_PROCS - 1);
			op.proc = (uint8_t)slot;
		}
		if (kind == OP_touch)
			op.len2 = REF_PAGE_SIZE;
		while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
			char *eq = strchr(tok, '=');
			uint64_t v;
			int fi;

			if (!eq)
				PERR("expected key=value, got '%s'", tok);
			*eq = 0;
			for (fi = 0; fi < NR_FIELDS; fi++)
				if (!strcmp(tok, field_names[fi]))
					break;
			if (fi == NR_FIELDS || !(kind_fields[kind] & (1u << fi)))
				PERR("%s takes no '%s'", op_names[kind], tok);
			if (seen & (1u << fi))
				PERR("'%s' given twice", tok);
			seen |= 1u << fi;
			if (parse_u64(eq + 1, &v) || set_field(&op, (enum field)fi, v))
				PERR("%s=%s: not a number in range", tok, eq + 1);
		}
		{
			unsigned need = kind_fields[kind] & ~(1u << F_STEP | 1u << F_SEED | 1u << F_VALUE |
							      1u << F_WRITE | 1u << F_NEW_ADDR);

			if (kind == OP_mremap && (op.flags & 2))
				need |= 1u << F_NEW_ADDR;
			if ((seen & need) != need)
				for (int fi = 0; fi < NR_FIELDS; fi++)
					if ((need & ~seen) & (1u << fi))
						PERR("%s needs %s=", op_names[kind], field_names[fi]);
		}
		op_list_push(l, &op);
	}
	if (ferror(f))
		PERR("read error");
	return 0;
}

int ops_load(const char *path, struct op_list *l, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	int ret;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	ret = ops_parse(f, path, l, err, errlen);
	fclose(f);
	if (ret)
		op_list_free(l);
	return ret;
}

/* ---- bytes from the fuzzer ----
 * Record layout: kind, slot, a selector byte (prot/advice/flags and edge
 * cases), a length class, then three little-endian 32-bit numbers: address,
 * length and a spare one (seed, new address).  Addresses fall in the
 * reference's window (or just past it), mostly near its top where mmap
 * places things; lengths come in classes that matter to the model (a page,
 * a few pages, whole 2 MiB, odd sizes, zero, absurd). */
static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static const uint8_t kind_table[32] = {
	OP_mmap,    OP_mmap,    OP_mmap,     OP_mmap,   OP_munmap,  OP_munmap,  OP_mprotect,
	OP_mprotect, OP_mremap, OP_mremap,   OP_mremap, OP_madvise, OP_madvise, OP_madvise,
	OP_read,    OP_read,    OP_read,     OP_write,  OP_write,   OP_write,   OP_write,
	OP_touch,   OP_touch,   OP_touch,    OP_fork,   OP_fork,    OP_exit,    OP_shrink,
	OP_shrink,  OP_knob,    OP_khugepaged, OP_touch,
};

static uint64_t decode_addr(uint8_t sel, uint32_t v)
{
	uint64_t a;

	if (sel & 0x80) /* the top 32 MiB, where mmap places things */
		a = REF_TOP - ((uint64_t)(v % 8192 + 1) << REF_PAGE_SHIFT);
	else
		a = REF_BASE + ((uint64_t)(v % (REF_PAGES + 64)) << REF_PAGE_SHIFT);
	if ((sel & 0x60) == 0x60) /* 2 MiB aligned */
		a &= ~(REF_PMD_SIZE - 1);
	if ((sel & 0x70) == 0x10) /* unaligned */
		a += 1 + (v >> 20) % 4095;
	return a;
}

static uint64_t decode_len(uint8_t cls, uint32_t v)
{
	switch (cls & 7) {
	case 0: return REF_PAGE_SIZE;
	case 1: return (uint64_t)(v % 16 + 1) << REF_PAGE_SHIFT;
	case 2: return (uint64_t)(v % 4 + 1) * REF_PMD_SIZE;
	case 3: return v % (8u << 20);
	case 4: return (uint64_t)(v % 1024 + 1) << REF_PAGE_SHIFT;
	case 5: return (cls & 8) ? 0 : v % 256;
	case 6: return (cls & 8) ? ~(uint64_t)v : (uint64_t)v << 24;
	default: return v % (64u << 10);
	}
}

void ops_decode(const uint8_t *data, size_t size, struct op_list *l, size_t max_ops)
{
	static const uint64_t rams[4] = { 16, 32, 64, 256 };
	static const int prots[8] = { 3, 3, 1, 0, 7, 2, 0x80 | 3, 8 | 1 };
	static const int advices[8] = { 14, 14, 4, 25 /* MADV_COLLAPSE */, 8, 15, 0, 12345 };

	memset(l, 0, sizeof(*l));
	l->ram_mib = size ? rams[data[0] & 3] : 64;
	if (size)
		data++, size--;
	for (; size >= OP_RECORD && l->n < max_ops; data += OP_RECORD, size -= OP_RECORD) {
		struct op op = { 0 };
		uint8_t sel = data[2], cls = data[3];
		uint32_t a = le32(data + 4), n = le32(data + 8), x = le32(data + 12);

		op.kind = kind_table[data[0] & 31];
		op.proc = (uint8_t)(data[1] % 4);
		op.addr = decode_addr(sel, a);
		op.len = decode_len(cls, n);
		switch (op.kind) {
		case OP_mmap:
			op.prot = prots[(cls >> 4) & 7];
			op.flags = 0x22;
			if (sel & 1)
				op.flags |= 0x10; /* MAP_FIXED */
			else if (sel & 2)
				op.flags |= 0x100000; /* MAP_FIXED_NOREPLACE */
			else if (!(sel & 4))
				op.addr = 0; /* no hint */
			if ((sel & 0x0c) == 0x0c)
				op.flags |= 0x8000; /* MAP_POPULATE */
			if ((x & 0xff) == 0xff)
				op.flags = (int32_t)(x >> 8) & 0x1ff13f; /* anything */
			break;
		case OP_mprotect:
			op.prot = prots[(cls >> 4) & 7];
			break;
		case OP_madvise:
			op.prot = advices[(cls >> 4) & 7];
			break;
		case OP_mremap:
			op.len2 = decode_len((uint8_t)(x >> 24), x & 0xffffff);
			op.flags = (sel >> 2) & 3;
			if ((x & 0x7) == 7)
				op.flags |= 4; /* MREMAP_DONTUNMAP: not modelled */
			op.addr2 = decode_addr((uint8_t)x, x >> 8);
			break;
		case OP_read:
			if (op.len > (1u << 20))
				op.len = op.len % (1u << 20);
			break;
		case OP_write:
			if (op.len > (1u << 20))
				op.len = op.len % (1u << 20);
			op.seed = (x & 3) == 3 ? 0x80000000u | (x >> 24) : x;
			break;
		case OP_touch: {
			static const uint64_t steps[4] = { 4096, 512, 2 << 20, 4096 * 3 };

			op.len2 = steps[x & 3];
			op.prot = (x >> 2) & 1;
			op.seed = x >> 24;
			if (op.len > (16u << 20))
				op.len = op.len % (16u << 20);
			break;
		}
		case OP_knob:
			op.knob = (uint8_t)(sel % nr_op_knobs());
			op.value = (uint8_t)(cls % op_knob_nr_values(op.knob));
			break;
		case OP_khugepaged:
			op.seed = 1 + x % 3;
			break;
		default:
			break;
		}
		op_list_push(l, &op);
	}
}
