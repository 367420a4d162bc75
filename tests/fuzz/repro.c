/*
 * repro.c - a sequence of operations printed as a unit test for
 * tests/unit/, so that a divergence the soak or a fuzzer found becomes a
 * regression test: paste the file into tests/unit/ and it builds with the
 * harness (tests/test.h).
 *
 * The expectations are the reference model's answers, worked out before
 * each step (never the model's), so the test fails where the model
 * diverged.  The operations run on the model alongside only to know where
 * the divergence was and to stop there.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

/* "r == E" with the other acceptable answers. */
static void emit_check(FILE *f, const struct ref_expect *e)
{
	if (e->alt == REF_NO_ALT && !e->enomem_ok) {
		fprintf(f, "\tASSERT_EQ(r, %s);\n", diff_errname(e->err));
		return;
	}
	fprintf(f, "\tASSERT(r == %s", diff_errname(e->err));
	if (e->alt != REF_NO_ALT)
		fprintf(f, " || r == %s", diff_errname(e->alt));
	if (e->enomem_ok)
		fprintf(f, " || r == -ENOMEM");
	fprintf(f, ");\n");
}

static uint64_t ref_hash(const struct ref *r, int slot, uint64_t addr, uint64_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	uint64_t h;

	if (!b)
		abort();
	ref_read(r, slot, addr, b, len);
	h = diff_hash(b, len);
	free(b);
	return h;
}

static void emit_read(FILE *f, const struct ref *r, int slot, uint64_t addr, uint64_t len)
{
	uint64_t ok = ref_access_ok(r, slot, addr, len, false);

	if (ok != len) {
		fprintf(f, "\tASSERT_EQ(repro_read(p[%d], %#" PRIx64 ", %#" PRIx64 ", &h), -EFAULT);\n",
			slot, addr, len);
		return;
	}
	fprintf(f, "\tASSERT_EQ(repro_read(p[%d], %#" PRIx64 ", %#" PRIx64 ", &h), 0);\n", slot, addr,
		len);
	fprintf(f, "\tASSERT_EQ(h, %#" PRIx64 "ULL);\n", ref_hash(r, slot, addr, len));
}

static const char helpers[] =
	"#include <stdlib.h>\n\n#include \"../test.h\"\n\n"
	"/* the bytes of \"write seed=S\" (tests/fuzz/ops.h, pattern_byte) */\n"
	"static uint8_t repro_pattern(uint32_t seed, uint64_t i)\n{\n"
	"\tif (seed & 0x80000000u)\n\t\treturn (uint8_t)seed;\n"
	"\treturn (uint8_t)((((uint64_t)seed + 1) * 0x9E3779B97F4A7C15ULL +\n"
	"\t\t\t  i * 0xBF58476D1CE4E5B9ULL) >> 56);\n}\n\n"
	"static int repro_write(thps_proc *p, uint64_t addr, uint64_t len, uint32_t seed)\n{\n"
	"\tuint8_t *b = malloc(len ? len : 1);\n\tint r;\n\n\tASSERT(b);\n"
	"\tfor (uint64_t i = 0; i < len; i++)\n\t\tb[i] = repro_pattern(seed, i);\n"
	"\tr = thps_write(p, addr, b, len);\n\tfree(b);\n\treturn r;\n}\n\n"
	"/* read, and hash what was read (FNV-1a) */\n"
	"static int repro_read(thps_proc *p, uint64_t addr, uint64_t len, uint64_t *hash)\n{\n"
	"\tuint8_t *b = malloc(len ? len : 1);\n\tuint64_t h = 0xcbf29ce484222325ULL;\n\tint r;\n\n"
	"\tASSERT(b);\n\tr = thps_read(p, addr, b, len);\n"
	"\tfor (uint64_t i = 0; i < len; i++)\n\t\th = (h ^ b[i]) * 0x100000001b3ULL;\n"
	"\tfree(b);\n\t*hash = r ? 0 : h;\n\treturn r;\n}\n\n";

static void emit_op(FILE *f, struct diff *d, const struct op *op, int slot)
{
	struct ref *r = &d->ref;
	struct ref_expect e = { .alt = REF_NO_ALT };

	switch (op->kind) {
	case OP_mmap:
		diff_sync_ref_knobs(d);
		e = ref_mmap(r, slot, op->addr, op->len, op->prot, op->flags, REF_DECIDE, 0);
		fprintf(f, "\tr = thps_mmap(p[%d], %#" PRIx64 ", %#" PRIx64 ", %#x, %#x, &a);\n", slot,
			op->addr, op->len, op->prot, op->flags);
		break;
	case OP_munmap:
		e = ref_munmap(r, slot, op->addr, op->len, REF_DECIDE);
		fprintf(f, "\tr = thps_munmap(p[%d], %#" PRIx64 ", %#" PRIx64 ");\n", slot, op->addr,
			op->len);
		break;
	case OP_mprotect:
		e = ref_mprotect(r, slot, op->addr, op->len, op->prot, REF_DECIDE);
		fprintf(f, "\tr = thps_mprotect(p[%d], %#" PRIx64 ", %#" PRIx64 ", %#x);\n", slot,
			op->addr, op->len, op->prot);
		break;
	case OP_madvise:
		e = ref_madvise(r, slot, op->addr, op->len, op->prot, REF_DECIDE);
		fprintf(f, "\tr = thps_madvise(p[%d], %#" PRIx64 ", %#" PRIx64 ", %d);\n", slot,
			op->addr, op->len, op->prot);
		break;
	case OP_mremap:
		e = ref_mremap(r, slot, op->addr, op->len, op->len2, op->flags, op->addr2, REF_DECIDE);
		fprintf(f,
			"\tr = thps_mremap(p[%d], %#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 ", %#x, %#" PRIx64
			", &a);\n",
			slot, op->addr, op->len, op->len2, op->flags, op->addr2);
		break;
	default:
		return;
	}
	emit_check(f, &e);
	if ((op->kind == OP_mmap || op->kind == OP_mremap) && !e.err)
		fprintf(f, "\tif (!r)\n\t\tASSERT_EQ(a, %#" PRIx64 "ULL);\n", e.addr);
}

void diff_print_test(FILE *f, const struct op_list *l, const struct diff_cfg *cfg,
		     const char *name)
{
	struct diff_cfg c = *cfg;
	struct diff d;
	char line[256];

	c.ram_mib = c.ram_mib ? c.ram_mib : l->ram_mib;
	c.first_slot = 0;
	c.nr_slots = REF_MAX_PROCS;
	c.shared = NULL;
	fprintf(f, "/*\n * A reproduction printed by thpsim-soak: the reference model's answers\n"
		   " * are the expectations (tests/fuzz/README.md).\n */\n%s", helpers);
	fprintf(f, "TEST(%s)\n{\n\tthps_proc *p[%d] = { 0 };\n\tuint64_t a = 0, h = 0;\n"
		   "\tstruct thps_touch t;\n\tint r = 0;\n\n\t(void)a;\n\t(void)h;\n\t(void)t;\n"
		   "\t(void)r;\n\ttmachine(%" PRIu64 ", NULL);\n\tp[0] = tproc();\n",
		name, REF_MAX_PROCS, c.ram_mib);
	if (diff_open(&d, &c)) {
		fprintf(f, "\t/* could not start: %s */\n}\n", d.why);
		return;
	}
	for (size_t i = 0; i < l->n; i++) {
		const struct op *op = &l->op[i];
		int slot = op->proc % REF_MAX_PROCS;

		op_format(op, line, sizeof(line));
		if (op->kind != OP_shrink && op->kind != OP_knob && op->kind != OP_fork &&
		    op->kind != OP_khugepaged && !d.proc[slot]) {
			fprintf(f, "\t/* %s: no such process, skipped */\n", line);
			continue;
		}
		fprintf(f, "\t/* %s */\n", line);
		switch (op->kind) {
		case OP_read:
			if (op->len <= DIFF_MAX_ACCESS)
				emit_read(f, &d.ref, slot, op->addr, op->len);
			break;
		case OP_write: {
			uint64_t ok = ref_access_ok(&d.ref, slot, op->addr, op->len, true);

			fprintf(f, "\tASSERT_EQ(repro_write(p[%d], %#" PRIx64 ", %#" PRIx64 ", %#x), %s);\n",
				slot, op->addr, op->len, op->seed, ok == op->len ? "0" : "-EFAULT");
			break;
		}
		case OP_touch: {
			uint64_t end = op->addr + op->len, done = 0, mism = 0;
			int want = 0;

			if (!op->len2 || end < op->addr)
				want = -EINVAL;
			else
				for (uint64_t a = op->addr; a < end; a += op->len2) {
					if (ref_access_ok(&d.ref, slot, a, 1, op->prot) != 1) {
						want = -EFAULT;
						break;
					}
					if (!op->prot && ref_byte(&d.ref, slot, a) != (uint8_t)op->seed)
						mism++;
					done = a - op->addr + 1;
					if (a + op->len2 < a)
						break;
				}
			fprintf(f,
				"\tt = (struct thps_touch){ .addr = %#" PRIx64 ", .len = %#" PRIx64
				", .step = %#" PRIx64 ", .op = %s, .value = %u, .check = 1 };\n",
				op->addr, op->len, op->len2, op->prot ? "THPS_TOUCH_WRITE" : "THPS_TOUCH_READ",
				op->seed & 0xff);
			fprintf(f, "\tASSERT_EQ(thps_touch(p[%d], &t), %s);\n", slot, diff_errname(want));
			fprintf(f, "\tASSERT_EQ(t.done, %#" PRIx64 ");\n", done);
			if (!op->prot)
				fprintf(f, "\tASSERT_EQ(t.mismatches, %" PRIu64 ");\n", mism);
			break;
		}
		case OP_fork: {
			int child = -1;

			if (!d.proc[slot]) {
				fprintf(f, "\tASSERT_OK(thps_proc_new(T, &p[%d]));\n", slot);
				break;
			}
			for (int q = 0; q < REF_MAX_PROCS; q++)
				if (!d.proc[q]) {
					child = q;
					break;
				}
			if (child < 0)
				fprintf(f, "\t/* no free slot: skipped */\n");
			else
				fprintf(f, "\tASSERT_OK(thps_fork(p[%d], &p[%d]));\n", slot, child);
			break;
		}
		case OP_exit:
			fprintf(f, "\tthps_exit(p[%d]);\n\tp[%d] = NULL;\n", slot, slot);
			break;
		case OP_shrink:
			fprintf(f, "\tthps_drop_caches(T);\n");
			break;
		case OP_khugepaged:
			fprintf(f, "\tASSERT_OK(thps_khugepaged_run(T, 0, %u));\n", op->seed);
			break;
		case OP_knob:
			fprintf(f, "\tthps_knob_set(T, \"%s\", \"%s\");\n", op_knob_name(op->knob),
				op_knob_value(op->knob, op->value));
			break;
		default:
			emit_op(f, &d, op, slot);
			break;
		}
		if (c.check_every)
			fprintf(f, "\ttcheck();\n");
		if (diff_step(&d, op)) {
			fprintf(f, "\t/* the model diverged here: %s */\n}\n", d.why);
			diff_close(&d);
			return;
		}
		if (op->kind == OP_write && c.isolation && op->len <= DIFF_MAX_ACCESS)
			for (int q = 0; q < REF_MAX_PROCS; q++)
				if (q != slot && d.proc[q])
					emit_read(f, &d.ref, q, op->addr,
						  op->len < DIFF_ISOLATION_BYTES ? op->len
										 : DIFF_ISOLATION_BYTES);
	}
	/* the end: every byte, VmSize, then nothing left behind */
	fprintf(f, "\t/* the end: every mapped byte, VmSize, exit, shrinkers, every frame free */\n");
	for (int s = 0; s < REF_MAX_PROCS; s++) {
		if (!d.proc[s])
			continue;
		for (uint64_t i = 0; i < REF_PAGES;) {
			const struct ref_page *p = &d.ref.mm[s]->page[i];
			uint64_t j = i;

			if (!(p->flags & RP_MAPPED) || !p->prot) {
				i++;
				continue;
			}
			while (j < REF_PAGES && (d.ref.mm[s]->page[j].flags & RP_MAPPED) &&
			       d.ref.mm[s]->page[j].prot)
				j++;
			emit_read(f, &d.ref, s, REF_BASE + (i << REF_PAGE_SHIFT), (j - i) << REF_PAGE_SHIFT);
			i = j;
		}
		fprintf(f, "\tASSERT_EQ(fig(p[%d], THPS_PROC_VmSize), %" PRIu64 ");\n", s,
			d.ref.mm[s]->nr_mapped * (REF_PAGE_SIZE >> 10));
	}
	fprintf(f, "\tfor (int i = 0; i < %d; i++)\n\t\tif (p[i])\n\t\t\ttexit(p[i]);\n"
		   "\ttdrop_caches();\n\t{\n\t\tuint64_t mi[THPS_NR_MEMINFO_ITEMS], v[THPS_NR_VM_ITEMS];\n"
		   "\t\tchar life[32];\n\n\t\tthps_meminfo(T, mi);\n\t\tthps_vmstat(T, v);\n"
		   "\t\tthps_knob_get(T, \"thpsim/huge_zero_page_lifetime\", life, sizeof(life));\n"
		   "\t\tASSERT_EQ(mi[THPS_MEM_MemFree] + (!strcmp(life, \"persistent\") && "
		   "v[THPS_VM_thp_zero_page_alloc] ? 2048 : 0), mi[THPS_MEM_MemTotal]);\n\t}\n}\n",
		REF_MAX_PROCS);
	if (diff_close(&d))
		fprintf(f, "/* the model diverged at the end: %s */\n", d.why);
}
