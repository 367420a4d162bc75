/*
 * gen.c - the random operation generator (see gen.h).
 *
 * The weights below are a judgement, not a measurement: every system call
 * often, with valid arguments most of the time and each kind of invalid
 * argument now and then; addresses mostly inside or at the edges of what is
 * mapped (recent mappings are remembered), often 2 MiB-aligned so THPs and
 * the huge zero page appear; lengths that are one page, whole 2 MiB, or
 * awkward.  Small simulated machines make memory run out, so fallback and
 * -ENOMEM paths run too.
 */
#include "gen.h"

uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	return n ? rng_next(r) % n : 0;
}

uint64_t rng_mix(uint64_t s, uint64_t i)
{
	struct rng r = { s ^ (i * 0xD1B54A32D192ED03ULL) };

	rng_next(&r);
	return rng_next(&r);
}

static bool chance(struct gen *g, unsigned percent)
{
	return rng_below(&g->rng, 100) < percent;
}

/* Pick from weights: an index into w. */
static int pick(struct gen *g, const unsigned *w, int n)
{
	unsigned total = 0, x;

	for (int i = 0; i < n; i++)
		total += w[i];
	x = (unsigned)rng_below(&g->rng, total);
	for (int i = 0; i < n; i++) {
		if (x < w[i])
			return i;
		x -= w[i];
	}
	return n - 1;
}
#define PICK(g, w) pick((g), (w), (int)(sizeof(w) / sizeof((w)[0])))

static void push_knob(struct op_list *l, const char *name, const char *value)
{
	struct op op = { .kind = OP_knob };
	int k, v;

	if (op_knob_find(name, value, &k, &v))
		return;
	op.knob = (uint8_t)k;
	op.value = (uint8_t)v;
	op_list_push(l, &op);
}

void gen_start(struct gen *g, uint64_t seed, bool no_knobs, struct op_list *l)
{
	static const uint64_t rams[] = { 16, 32, 64, 128, 256, 1024 };
	static const unsigned ram_w[] = { 10, 15, 25, 25, 20, 5 };
	static const unsigned en_w[] = { 45, 40, 15 };
	static const char *const en[] = { "always", "madvise", "never" };
	static const unsigned ptes_w[] = { 50, 10, 5, 10, 15, 10 };

	g->rng.s = seed;
	g->no_knobs = no_knobs;
	g->nrecent = 0;
	l->ram_mib = rams[PICK(g, ram_w)];
	if (no_knobs)
		return;
	push_knob(l, "transparent_hugepage/enabled", en[PICK(g, en_w)]);
	if (chance(g, 20))
		push_knob(l, "transparent_hugepage/use_zero_page", "0");
	if (chance(g, 10)) {
		int n = op_knob_nr_values(op_knob_index("thpsim/kernel"));

		push_knob(l, "thpsim/kernel",
			  op_knob_value_of("thpsim/kernel", (int)rng_below(&g->rng, (uint64_t)n)));
	} else {
		push_knob(l, "thpsim/huge_zero_page_lifetime",
			  op_knob_value_of("thpsim/huge_zero_page_lifetime", (int)rng_below(&g->rng, 3)));
		push_knob(l, "thpsim/huge_zero_wp",
			  op_knob_value_of("thpsim/huge_zero_wp", (int)rng_below(&g->rng, 3)));
		push_knob(l, "thpsim/thp_cow",
			  op_knob_value_of("thpsim/thp_cow", (int)rng_below(&g->rng, 2)));
	}
	push_knob(l, "transparent_hugepage/khugepaged/max_ptes_none",
		  op_knob_value_of("transparent_hugepage/khugepaged/max_ptes_none", PICK(g, ptes_w)));
	if (chance(g, 30))
		push_knob(l, "transparent_hugepage/shrink_underused", "0");
	if (chance(g, 30))
		push_knob(l, "transparent_hugepage/defrag",
			  op_knob_value_of("transparent_hugepage/defrag", (int)rng_below(&g->rng, 5)));
	if (chance(g, 20))
		push_knob(l, "transparent_hugepage/hugepages-2048kB/enabled",
			  op_knob_value_of("transparent_hugepage/hugepages-2048kB/enabled",
					   (int)rng_below(&g->rng, 4)));
}

size_t gen_length(struct gen *g)
{
	/* roughly log-uniform from 40 to 2600 */
	size_t n = 40;

	for (int i = (int)rng_below(&g->rng, 7); i > 0; i--)
		n *= 2;
	return n + (size_t)rng_below(&g->rng, n);
}

static void remember(struct gen *g, uint64_t addr, uint64_t len)
{
	g->recent[g->nrecent % GEN_RECENT].addr = addr;
	g->recent[g->nrecent % GEN_RECENT].len = len;
	g->nrecent++;
}

static uint64_t pages(uint64_t n)
{
	return n << REF_PAGE_SHIFT;
}

static uint64_t gen_len(struct gen *g)
{
	static const unsigned w[] = { 25, 20, 20, 15, 8, 5, 4, 3 };

	switch (PICK(g, w)) {
	case 0: return REF_PAGE_SIZE;
	case 1: return pages(2 + rng_below(&g->rng, 15));
	case 2: return REF_PMD_SIZE * (1 + rng_below(&g->rng, 4));
	case 3: return pages(1 + rng_below(&g->rng, 256));
	case 4: return 1 + rng_below(&g->rng, 3 * REF_PAGE_SIZE);
	case 5: return pages(1 + rng_below(&g->rng, 2048));
	case 6: return REF_PMD_SIZE * (1 + rng_below(&g->rng, 4)) + pages(1 + rng_below(&g->rng, 511));
	default: {
		static const uint64_t edge[] = { 0, ~0ULL, ~0ULL - 100, 1ULL << 47, 1ULL << 62, 1 };

		return edge[rng_below(&g->rng, 6)];
	}
	}
}

/* An address: near what is mapped, in the top of the window where mmap
 * places things, anywhere in it, or an edge case. */
static uint64_t gen_addr(struct gen *g, const struct diff *d, int slot, uint64_t *region_len)
{
	static const unsigned w[] = { 55, 25, 12, 8 };
	uint64_t a;

	*region_len = 0;
	switch (PICK(g, w)) {
	case 0:
		if (g->nrecent) {
			unsigned n = g->nrecent < GEN_RECENT ? g->nrecent : GEN_RECENT;

			for (int tries = 0; tries < 3; tries++) {
				unsigned i = (unsigned)rng_below(&g->rng, n);
				const struct ref_page *p = ref_page_at(&d->ref, slot, g->recent[i].addr);

				a = g->recent[i].addr;
				*region_len = g->recent[i].len;
				if (p && (p->flags & RP_MAPPED))
					break;
			}
			if (chance(g, 60) && *region_len > REF_PAGE_SIZE) {
				uint64_t off = pages(rng_below(&g->rng, *region_len >> REF_PAGE_SHIFT));

				if (chance(g, 40))
					off &= ~(REF_PMD_SIZE - 1);
				a += off;
				*region_len -= off;
			}
			return a;
		}
		/* fall through */
	case 1:
		a = REF_TOP - pages(1 + rng_below(&g->rng, 8192));
		if (chance(g, 50))
			a &= ~(REF_PMD_SIZE - 1);
		return a;
	case 2:
		a = REF_BASE + pages(rng_below(&g->rng, REF_PAGES));
		if (chance(g, 40))
			a &= ~(REF_PMD_SIZE - 1);
		return a;
	default: {
		uint64_t edge[] = { 0, REF_TOP - REF_PAGE_SIZE + 1 + rng_below(&g->rng, 4095),
				    REF_BASE - REF_PAGE_SIZE, REF_TOP, 1ULL << 47, ~0ULL & ~0xfffULL,
				    REF_TOP - pages(1 + rng_below(&g->rng, 512)) + 1 };

		return edge[rng_below(&g->rng, sizeof(edge) / sizeof(edge[0]))];
	}
	}
}

static int gen_slot(struct gen *g, const struct diff *d)
{
	int live[REF_MAX_PROCS], n = 0;

	for (int s = 0; s < REF_MAX_PROCS; s++)
		if (d->proc[s])
			live[n++] = s;
	if (!n || chance(g, 1))
		return (int)rng_below(&g->rng, REF_MAX_PROCS);
	return live[rng_below(&g->rng, (uint64_t)n)];
}

static int gen_prot(struct gen *g, bool for_mmap)
{
	static const unsigned mmap_w[] = { 70, 10, 5, 5, 5, 5 };
	static const unsigned mprot_w[] = { 40, 30, 15, 5, 5, 5 };
	static const int mmap_p[] = { 3, 1, 0, 7, 2, 0x80 | 3 };
	static const int mprot_p[] = { 3, 1, 0, 5, 2, 0x10 };

	return for_mmap ? mmap_p[PICK(g, mmap_w)] : mprot_p[PICK(g, mprot_w)];
}

struct op gen_op(struct gen *g, const struct diff *d)
{
	static const unsigned w[NR_OP_KINDS] = {
		[OP_mmap] = 12,  [OP_munmap] = 5, [OP_mprotect] = 7, [OP_mremap] = 8,
		[OP_madvise] = 10, [OP_read] = 16, [OP_write] = 16,  [OP_touch] = 12,
		[OP_fork] = 4,   [OP_exit] = 3,   [OP_shrink] = 4,   [OP_knob] = 3,
		[OP_khugepaged] = 1,
	};
	struct op op = { 0 };
	uint64_t region;
	int slot = gen_slot(g, d);

	op.proc = (uint8_t)slot;
	do
		op.kind = (uint8_t)PICK(g, w);
	while (op.kind == OP_knob && g->no_knobs);
	/* keep the footprint small: a few processes of a few MiB each are what
	 * the model finds hard, and the checker's cost grows with it */
	if (d->ref.mm[slot] && d->ref.mm[slot]->nr_mapped > (24u << 20) >> REF_PAGE_SHIFT &&
	    chance(g, 10)) {
		op.kind = OP_munmap;
		op.addr = (REF_TOP - pages(rng_below(&g->rng, REF_PAGES))) & ~(REF_PMD_SIZE - 1);
		op.len = REF_PMD_SIZE * (1 + rng_below(&g->rng, 16));
		return op;
	}
	if (op.kind == OP_fork) {
		int live = 0;

		for (int s = 0; s < REF_MAX_PROCS; s++)
			live += d->proc[s] != NULL;
		if (live >= 4 && chance(g, 60))
			op.kind = OP_exit;
	}
	switch (op.kind) {
	case OP_mmap: {
		static const unsigned mode_w[] = { 45, 10, 30, 15 };
		int mode = PICK(g, mode_w);
		struct ref_expect e;

		op.len = chance(g, 5) ? gen_len(g) : (chance(g, 40) ? REF_PMD_SIZE * (1 + rng_below(&g->rng, 4))
								    : pages(1 + rng_below(&g->rng, 1024)));
		op.prot = gen_prot(g, true);
		op.flags = chance(g, 2) ? 0x21 : 0x22;
		op.addr = mode == 0 ? 0 : gen_addr(g, d, slot, &region);
		if (mode == 2)
			op.flags |= 0x10;
		else if (mode == 3)
			op.flags |= 0x100000;
		if (chance(g, 5))
			op.flags |= 0x8000; /* MAP_POPULATE */
		if (chance(g, 5))
			op.flags |= 0x4000; /* MAP_NORESERVE */
		if (chance(g, 5))
			op.flags |= 0x20000; /* MAP_STACK: VM_NOHUGEPAGE */
		if (chance(g, 1))
			op.flags |= chance(g, 50) ? 0x40000 : 0x2000; /* MAP_HUGETLB, MAP_LOCKED */
		if (!d->ref.mm[slot])
			break;
		diff_sync_ref_knobs((struct diff *)d);
		e = ref_mmap((struct ref *)&d->ref, slot, op.addr, op.len, op.prot, op.flags, REF_DECIDE, 0);
		if (!e.skip && !e.err)
			remember(g, e.addr, (op.len + REF_PAGE_SIZE - 1) & ~(REF_PAGE_SIZE - 1));
		break;
	}
	case OP_munmap:
		op.addr = gen_addr(g, d, slot, &region);
		op.len = region && chance(g, 30) ? region : gen_len(g);
		break;
	case OP_mprotect:
		op.addr = gen_addr(g, d, slot, &region);
		op.len = region && chance(g, 30) ? region : gen_len(g);
		op.prot = gen_prot(g, false);
		break;
	case OP_madvise: {
		static const unsigned adv_w[] = { 35, 25, 15, 15, 5, 5, 15 };
		static const int adv[] = { 14, 4, 8, 15, 0, 12345, 25 /* MADV_COLLAPSE */ };

		op.addr = gen_addr(g, d, slot, &region);
		op.len = region && chance(g, 40) ? region : gen_len(g);
		op.prot = adv[PICK(g, adv_w)];
		/* a collapse needs whole aligned 2 MiB: give it some */
		if (op.prot == 25 && chance(g, 60)) {
			op.addr &= ~(REF_PMD_SIZE - 1);
			op.len = REF_PMD_SIZE * (1 + rng_below(&g->rng, 3));
		}
		break;
	}
	case OP_mremap: {
		static const unsigned fl_w[] = { 20, 45, 30, 2, 3 };
		static const int fl[] = { 0, 1, 3, 2, 5 };
		struct ref_expect e;

		op.addr = gen_addr(g, d, slot, &region);
		op.len = region && chance(g, 50) ? region : gen_len(g);
		op.flags = fl[PICK(g, fl_w)];
		switch (rng_below(&g->rng, 5)) {
		case 0: op.len2 = op.len; break;
		case 1: op.len2 = op.len + pages(1 + rng_below(&g->rng, 1024)); break;
		case 2: op.len2 = op.len / 2; break;
		case 3: op.len2 = REF_PMD_SIZE * (1 + rng_below(&g->rng, 3)); break;
		default: op.len2 = gen_len(g); break;
		}
		op.addr2 = REF_TOP - pages(1 + rng_below(&g->rng, 16384));
		if (chance(g, 50))
			op.addr2 &= ~(REF_PMD_SIZE - 1);
		if (!d->ref.mm[slot])
			break;
		e = ref_mremap((struct ref *)&d->ref, slot, op.addr, op.len, op.len2, op.flags, op.addr2,
			       REF_DECIDE);
		if (g->no_knobs && e.alt != REF_NO_ALT) {
			/* where VMAs merged decides, and merging depends on the THP
			 * settings (a huge zero page fault prepares an anon_vma, a
			 * 4 KiB zero page fault does not): not for the metamorphic
			 * check, which compares settings */
			op.kind = OP_read;
			op.len = op.len < 4096 ? op.len : 4096;
			break;
		}
		if (!e.skip && !e.err)
			remember(g, e.addr, (op.len2 + REF_PAGE_SIZE - 1) & ~(REF_PAGE_SIZE - 1));
		break;
	}
	case OP_read:
	case OP_write:
		op.addr = gen_addr(g, d, slot, &region);
		switch (rng_below(&g->rng, 6)) {
		case 0: op.len = 1 + rng_below(&g->rng, 64); break;
		case 1: op.len = 1 + rng_below(&g->rng, 3 * REF_PAGE_SIZE); break;
		case 2: op.len = REF_PAGE_SIZE; break;
		case 3: op.len = pages(1 + rng_below(&g->rng, 16)); break;
		case 4:
			op.len = region && region < REF_PMD_SIZE ? region : REF_PMD_SIZE;
			if (chance(g, 70)) /* whole 2 MiB now and then: touch covers the rest */
				op.len = 1 + rng_below(&g->rng, op.len < (64 << 10) ? op.len : 64 << 10);
			break;
		default: op.len = rng_below(&g->rng, 64 << 10); break;
		}
		if (chance(g, 30))
			op.addr += rng_below(&g->rng, REF_PAGE_SIZE);
		op.seed = chance(g, 15) ? 0x80000000u | (uint32_t)rng_below(&g->rng, 3)
					: (uint32_t)rng_next(&g->rng);
		break;
	case OP_touch: {
		static const uint64_t steps[] = { 4096, 4096, 4096, 2 << 20, 512, 3 * 4096 };

		op.addr = gen_addr(g, d, slot, &region);
		op.len = region && chance(g, 50) ? region : REF_PMD_SIZE * (1 + rng_below(&g->rng, 4));
		if (op.len > (16u << 20))
			op.len = 16u << 20;
		op.len2 = steps[rng_below(&g->rng, 6)];
		op.prot = chance(g, 55);
		op.seed = chance(g, 30) ? 0 : (uint32_t)rng_below(&g->rng, 256);
		break;
	}
	case OP_exit: {
		int live = 0;

		for (int s = 0; s < REF_MAX_PROCS; s++)
			live += d->proc[s] != NULL;
		if (live <= 1 && !chance(g, 3))
			op.kind = OP_shrink;
		break;
	}
	case OP_khugepaged:
		op.seed = 1 + (uint32_t)rng_below(&g->rng, 3); /* full scans */
		break;
	case OP_knob: {
		int k = (int)rng_below(&g->rng, (uint64_t)nr_op_knobs());

		op.knob = (uint8_t)k;
		op.value = (uint8_t)rng_below(&g->rng, (uint64_t)op_knob_nr_values(k));
		break;
	}
	default:
		break;
	}
	return op;
}
