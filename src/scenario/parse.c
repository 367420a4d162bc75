/*
 * parse.c - the scenario parser: one step per line, errors as
 * "file:line:column: message" naming what was expected.
 *
 * The grammar is in docs/scenarios.md.  Sizes take K, M, G suffixes and may
 * be sums ("2M+4K"); bytes are 0..255 in decimal or hex.  Processes and
 * regions are names: "main" is the first process, "fork NAME" makes
 * another, "proc NAME" switches to it; "mmap NAME SIZE" makes a region whose
 * offsets later steps use.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "verbs.h"

const char *const scn_page_state_names[NR_PAGE_STATES] = { "none", "zero", "huge-zero", "thp",
							   "page" };

#define MAX_TOKENS 16

struct tok {
	const char *s;
	int len;
	int col;
};

struct parser {
	struct scenario *s;
	FILE *err;
	int line;
	struct tok t[MAX_TOKENS];
	int nt;
	int cur_proc;
	int exited[SCN_MAX_PROCS];
	uint64_t region_len[SCN_MAX_REGIONS];
	/* per process: the mmap that mapped each region, 0 while unmapped */
	int region_line[SCN_MAX_PROCS][SCN_MAX_REGIONS];
	int seen_op;
	thps_machine *scratch; /* checks the values of "when" conditions */
};

static int perr(struct parser *p, int col, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(struct parser *p, int col, const char *fmt, ...)
{
	va_list ap;

	fprintf(p->err, "%s:%d:%d: ", p->s->path, p->line, col);
	va_start(ap, fmt);
	vfprintf(p->err, fmt, ap);
	va_end(ap);
	fputc('\n', p->err);
	return -1;
}

static int tok_is(const struct tok *t, const char *w)
{
	return (int)strlen(w) == t->len && !strncmp(t->s, w, (size_t)t->len);
}

static void tok_copy(const struct tok *t, char *buf, size_t len)
{
	size_t n = (size_t)t->len < len - 1 ? (size_t)t->len : len - 1;

	memcpy(buf, t->s, n);
	buf[n] = 0;
}

/* One size term: digits (decimal or 0x hex) and an optional K/M/G suffix. */
static int parse_term(const char *s, int len, uint64_t *out)
{
	char buf[40];
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (len <= 0 || len >= (int)sizeof(buf) || !isdigit((unsigned char)s[0]))
		return -1;
	memcpy(buf, s, (size_t)len);
	buf[len] = 0;
	errno = 0;
	v = strtoull(buf, &end, 0);
	if (errno)
		return -1;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	default: break;
	}
	if (*end || (shift && v > (~0ULL >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

/* A size: terms joined by '+'. */
static int parse_size(const char *s, int len, uint64_t *out)
{
	uint64_t total = 0;
	int start = 0;

	for (int i = 0; i <= len; i++) {
		if (i == len || s[i] == '+') {
			uint64_t v;

			if (parse_term(s + start, i - start, &v) || total + v < total)
				return -1;
			total += v;
			start = i + 1;
		}
	}
	*out = total;
	return 0;
}

static int tok_size(struct parser *p, int i, const char *what, uint64_t *out)
{
	if (i >= p->nt)
		return perr(p, p->nt ? p->t[p->nt - 1].col + p->t[p->nt - 1].len + 1 : 1,
			    "expected %s", what);
	if (parse_size(p->t[i].s, p->t[i].len, out))
		return perr(p, p->t[i].col, "expected %s (like 4K, 2M, 0x1000 or 2M+4K), got '%.*s'",
			    what, p->t[i].len, p->t[i].s);
	return 0;
}

static int parse_byte(struct parser *p, const char *s, int len, int col, uint8_t *out)
{
	uint64_t v;

	if (parse_term(s, len, &v) || v > 255)
		return perr(p, col, "expected a byte value 0..255, got '%.*s'", len, s);
	*out = (uint8_t)v;
	return 0;
}

static int find_name(char (*names)[SCN_NAME_MAX], int n, const struct tok *t)
{
	for (int i = 0; i < n; i++)
		if ((int)strlen(names[i]) == t->len && !strncmp(names[i], t->s, (size_t)t->len))
			return i;
	return -1;
}

static int valid_name(const struct tok *t)
{
	if (t->len <= 0 || t->len >= SCN_NAME_MAX || !(isalpha((unsigned char)t->s[0]) || t->s[0] == '_'))
		return 0;
	for (int i = 0; i < t->len; i++)
		if (!isalnum((unsigned char)t->s[i]) && t->s[i] != '_' && t->s[i] != '-')
			return 0;
	return 1;
}

static int tok_region(struct parser *p, int i, int *out)
{
	if (i >= p->nt)
		return perr(p, 1, "expected a region name");
	*out = find_name(p->s->regions, p->s->nregions, &p->t[i]);
	if (*out < 0)
		return perr(p, p->t[i].col, "unknown region '%.*s' (map it first with mmap)",
			    p->t[i].len, p->t[i].s);
	return 0;
}

static int new_region(struct parser *p, int i, int *out)
{
	struct tok *t = &p->t[i];
	int r;

	if (!valid_name(t))
		return perr(p, t->col, "expected a region name (a letter, then letters, digits, _ or -), got '%.*s'",
			    t->len, t->s);
	r = find_name(p->s->regions, p->s->nregions, t);
	if (r >= 0 && p->region_line[p->cur_proc][r])
		return perr(p, t->col, "region '%.*s' is mapped already (line %d): munmap it first, "
			    "or give this mapping another name", t->len, t->s,
			    p->region_line[p->cur_proc][r]);
	if (r < 0) {
		if (p->s->nregions >= SCN_MAX_REGIONS)
			return perr(p, t->col, "too many regions (at most %d)", SCN_MAX_REGIONS);
		r = p->s->nregions++;
		tok_copy(t, p->s->regions[r], SCN_NAME_MAX);
	}
	*out = r;
	return 0;
}

static int parse_prot(struct parser *p, const struct tok *t, int *prot)
{
	*prot = 0;
	if (tok_is(t, "none"))
		return 0;
	for (int i = 0; i < t->len; i++) {
		switch (t->s[i]) {
		case 'r': *prot |= THPS_PROT_READ; break;
		case 'w': *prot |= THPS_PROT_WRITE; break;
		case 'x': *prot |= THPS_PROT_EXEC; break;
		case '-': break;
		default:
			return perr(p, t->col + i, "expected a protection: none, or r, w, x letters like rw");
		}
	}
	return 0;
}

/* key=value options after the positional arguments */
static int opt_value(const struct tok *t, const char *key, const char **v, int *vlen)
{
	size_t k = strlen(key);

	if ((size_t)t->len <= k + 1 || strncmp(t->s, key, k) || t->s[k] != '=')
		return 0;
	*v = t->s + k + 1;
	*vlen = t->len - (int)k - 1;
	return 1;
}

/* REGION+OFF */
static int parse_region_off(struct parser *p, const char *v, int vlen, int col, int *region,
			    uint64_t *off)
{
	int i = 0;
	struct tok t;

	while (i < vlen && v[i] != '+')
		i++;
	t = (struct tok){ v, i, col };
	*region = find_name(p->s->regions, p->s->nregions, &t);
	if (*region < 0)
		return perr(p, col, "unknown region '%.*s'", i, v);
	*off = 0;
	if (i < vlen && parse_size(v + i + 1, vlen - i - 1, off))
		return perr(p, col + i + 1, "expected an offset after '+'");
	return 0;
}

static int expect_args(struct parser *p, int min, int max, const char *usage)
{
	if (p->nt < min || p->nt > max)
		return perr(p, p->nt > max ? p->t[max].col : 1, "usage: %s", usage);
	return 0;
}

static int parse_figure(struct parser *p, int *i, struct scn_figure *f)
{
	struct tok *t = &p->t[*i];

	memset(f, 0, sizeof(*f));
	f->proc = p->cur_proc;
	if (tok_is(t, "vmstat") || tok_is(t, "meminfo")) {
		int vm = tok_is(t, "vmstat");
		struct tok *n;

		if (++*i >= p->nt)
			return perr(p, t->col + t->len + 1, "expected a %s name", vm ? "vmstat" : "meminfo");
		n = &p->t[*i];
		f->kind = vm ? FIG_VMSTAT : FIG_MEMINFO;
		for (int k = 0; k < (vm ? THPS_NR_VM_ITEMS : THPS_NR_MEMINFO_ITEMS); k++) {
			const char *name = vm ? thps_vm_item_name(k) : thps_meminfo_item_name(k);

			if (name && tok_is(n, name)) {
				f->item = k;
				(*i)++;
				return 0;
			}
		}
		return perr(p, n->col, "unknown %s item '%.*s'", vm ? "vmstat" : "meminfo", n->len, n->s);
	}
	if (tok_is(t, "mthp")) {
		uint64_t size;
		struct tok *n;

		if (tok_size(p, *i + 1, "a folio size (16K .. 2M)", &size))
			return -1;
		f->order = size ? __builtin_ctzll(size) - __builtin_ctzll(THPS_PAGE_SIZE) : 0;
		if ((size & (size - 1)) || f->order < THPS_MTHP_MIN_ORDER || f->order > THPS_MTHP_MAX_ORDER)
			return perr(p, p->t[*i + 1].col, "expected a folio size, a power of two from 16K "
				    "to 2M (hugepages-<size>kB), got '%.*s'", p->t[*i + 1].len, p->t[*i + 1].s);
		if (*i + 2 >= p->nt)
			return perr(p, 1, "usage: expect mthp SIZE ITEM CMP VALUE (ITEM: anon_fault_alloc, "
				    "split_deferred, nr_anon, ... of hugepages-<size>kB/stats/)");
		n = &p->t[*i + 2];
		f->kind = FIG_MTHP;
		for (int k = 0; k < THPS_NR_MTHP_STATS; k++)
			if (tok_is(n, thps_mthp_stat_name(k))) {
				f->item = k;
				*i += 3;
				return 0;
			}
		return perr(p, n->col, "unknown hugepages-<size>kB/stats/ item '%.*s'", n->len, n->s);
	}
	if (tok_is(t, "khugepaged")) {
		struct tok *n;

		if (++*i >= p->nt)
			return perr(p, t->col + t->len + 1, "expected a khugepaged counter "
				    "(pages_collapsed, full_scans)");
		n = &p->t[*i];
		f->kind = FIG_KHUGEPAGED;
		for (int k = 0; k < SCN_NR_KHUGEPAGED_ITEMS; k++)
			if (tok_is(n, scn_khugepaged_item_names[k])) {
				f->item = k;
				(*i)++;
				return 0;
			}
		return perr(p, n->col, "unknown khugepaged counter '%.*s' (pages_collapsed, full_scans)",
			    n->len, n->s);
	}
	if (tok_is(t, "page")) {
		int r;
		uint64_t off;

		if (tok_region(p, *i + 1, &r) || tok_size(p, *i + 2, "an offset", &off))
			return -1;
		f->kind = FIG_PAGE;
		f->region = r;
		f->off = off;
		*i += 3;
		return 0;
	}
	{
		/* [PROC.]FIGURE */
		const char *dot = memchr(t->s, '.', (size_t)t->len);
		struct tok name = *t;

		if (dot) {
			struct tok pt = { t->s, (int)(dot - t->s), t->col };

			f->proc = find_name(p->s->procs, p->s->nprocs, &pt);
			if (f->proc < 0)
				return perr(p, t->col, "unknown process '%.*s'", pt.len, pt.s);
			name = (struct tok){ dot + 1, t->len - pt.len - 1, t->col + pt.len + 1 };
		}
		for (int k = 0; k < THPS_NR_PROC_ITEMS; k++) {
			if (tok_is(&name, thps_proc_item_name(k))) {
				f->kind = FIG_PROC;
				f->item = k;
				(*i)++;
				return 0;
			}
		}
		return perr(p, name.col,
			    "expected a figure: a smaps_rollup/status name like Rss or AnonHugePages "
			    "(optionally PROC.Rss), vmstat NAME, meminfo NAME, mthp SIZE NAME, khugepaged NAME "
			    "or page REGION OFF; got '%.*s'",
			    name.len, name.s);
	}
}

static const struct {
	const char *s;
	enum scn_cmp c;
} cmps[] = { { "==", CMP_EQ }, { "!=", CMP_NE }, { "<=", CMP_LE },
	     { ">=", CMP_GE }, { "<", CMP_LT },  { ">", CMP_GT } };

static int parse_expect(struct parser *p, struct scn_step *st)
{
	int i = 1;
	uint64_t v;

	if (p->nt < 2)
		return perr(p, 1, "usage: expect FIGURE CMP VALUE, or expect page REGION OFF STATE");
	if (parse_figure(p, &i, &st->fig))
		return -1;
	if (st->fig.kind == FIG_PAGE) {
		if (i >= p->nt)
			return perr(p, 1, "expected a page state: none, zero, huge-zero, thp or page");
		for (int k = 0; k < NR_PAGE_STATES; k++)
			if (tok_is(&p->t[i], scn_page_state_names[k])) {
				st->cmp = CMP_EQ;
				st->expect = k;
				return expect_args(p, i + 1, i + 1, "expect page REGION OFF STATE");
			}
		return perr(p, p->t[i].col, "expected a page state: none, zero, huge-zero, thp or page");
	}
	if (i >= p->nt)
		return perr(p, 1, "expected a comparison: == != <= >= < >");
	{
		size_t k = 0;

		while (k < sizeof(cmps) / sizeof(cmps[0]) && !tok_is(&p->t[i], cmps[k].s))
			k++;
		if (k == sizeof(cmps) / sizeof(cmps[0]))
			return perr(p, p->t[i].col, "expected a comparison: == != <= >= < >, got '%.*s'",
				    p->t[i].len, p->t[i].s);
		st->cmp = cmps[k].c;
	}
	if (++i >= p->nt)
		return perr(p, p->t[i - 1].col + p->t[i - 1].len + 1, "expected a value");
	{
		struct tok *t = &p->t[i];
		int neg = t->len > 1 && t->s[0] == '-';
		int has_suffix = 0;

		for (int c = 0; c < t->len; c++)
			if (strchr("KMGkmg", t->s[c]) && !(c > 0 && t->s[c - 1] == '0' && t->s[c] == 'x'))
				has_suffix = 1;

		if (parse_size(t->s + neg, t->len - neg, &v))
			return perr(p, t->col, "expected a number or a size (4K, 2M), got '%.*s'", t->len, t->s);
		/* sizes name bytes; figures are in kB as /proc shows them */
		if (has_suffix && st->fig.kind != FIG_VMSTAT && st->fig.kind != FIG_MTHP &&
		    st->fig.kind != FIG_KHUGEPAGED)
			v >>= 10;
		st->expect = neg ? -(int64_t)v : (int64_t)v;
	}
	return expect_args(p, i + 1, i + 1, "expect FIGURE CMP VALUE");
}

static int check_proc_alive(struct parser *p, int proc)
{
	if (p->exited[proc])
		return perr(p, 1, "process '%s' has exited", p->s->procs[proc]);
	return 0;
}

/* A knob and value a step names: known, and a value it takes (checked on
 * a scratch machine, so the message is the model's own). */
static int check_knob(struct parser *p, const char *knob, const char *value, int kcol, int vcol)
{
	int err;

	if (!p->scratch && thps_machine_new(&(struct thps_config){ .ram_bytes = 16ULL << 20 },
					    &p->scratch))
		return perr(p, 1, "out of memory");
	err = thps_knob_set(p->scratch, knob, value);
	if (err == -ENOENT)
		return perr(p, kcol, "unknown knob '%s' ('thpsim knobs' lists them)", knob);
	if (err && err != -EBUSY)
		return perr(p, vcol, "%s", thps_last_error(p->scratch));
	return 0;
}

static const struct scn_verb *find_verb(const struct tok *t);

/* "when KNOB=VALUE[,KNOB!=VALUE]...": the conditions into st->when, the
 * two words taken off the line.  Only steps that change no process or
 * region may be guarded, so every profile runs the same structure. */
static int parse_when(struct parser *p, struct scn_step *st)
{
	const struct tok *c = &p->t[1];
	const struct scn_verb *v;

	if (p->nt < 3)
		return perr(p, 1, "usage: when KNOB=VALUE[,KNOB!=VALUE]... STEP");
	v = find_verb(&p->t[2]);
	/* the message names the SCN_VERB_GUARD rows of scn_verbs */
	if (!v || !(v->flags & SCN_VERB_GUARD))
		return perr(p, p->t[2].col,
			    "'when' guards expect, report, read, write, shrink and madvise only, not '%.*s'",
			    p->t[2].len, p->t[2].s);
	for (int i = 0; i < c->len;) {
		const char *cond = c->s + i, *comma = memchr(cond, ',', (size_t)(c->len - i));
		int clen = comma ? (int)(comma - cond) : c->len - i, col = c->col + i, klen;
		const char *eq = memchr(cond, '=', (size_t)clen);
		struct scn_guard *g = &st->when;
		int n = g->n, err;

		if (g->n == SCN_MAX_CONDS)
			return perr(p, col, "at most %d conditions", SCN_MAX_CONDS);
		if (!eq || eq == cond || eq + 1 == cond + clen)
			return perr(p, col, "expected KNOB=VALUE or KNOB!=VALUE, got '%.*s'", clen, cond);
		g->neg[n] = eq[-1] == '!';
		klen = (int)(eq - cond) - g->neg[n];
		snprintf(g->knob[n], sizeof(g->knob[n]), "%.*s", klen, cond);
		snprintf(g->value[n], sizeof(g->value[n]), "%.*s", (int)(cond + clen - eq - 1), eq + 1);
		err = check_knob(p, g->knob[n], g->value[n], col, col + klen + 1 + g->neg[n]);
		if (err)
			return err;
		g->n++;
		i += clen + 1;
	}
	memmove(p->t, p->t + 2, sizeof(p->t[0]) * (size_t)(p->nt - 2));
	p->nt -= 2;
	return 0;
}

int scn_guard_holds(const struct scn_step *st, thps_machine *m)
{
	for (int i = 0; i < st->when.n; i++) {
		char v[64];

		if (thps_knob_get(m, st->when.knob[i], v, sizeof(v)) ||
		    (strcmp(v, st->when.value[i]) == 0) == st->when.neg[i])
			return 0;
	}
	return 1;
}

static int parse_set(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;

	if (expect_args(p, 3, 3, "set KNOB VALUE"))
		return -1;
	tok_copy(&t[1], st->knob, sizeof(st->knob));
	tok_copy(&t[2], st->knob_value, sizeof(st->knob_value));
	if (check_knob(p, st->knob, st->knob_value, t[1].col, t[2].col))
		return -1;
	if (p->seen_op)
		p->s->has_late_set = 1;
	else
		p->s->nsets_before_ops++;
	return 0;
}

static int parse_scenario(struct parser *p, struct scn_step *st)
{
	(void)st;
	if (p->nt < 2)
		return perr(p, 1, "usage: scenario NAME");
	tok_copy(&p->t[1], p->s->name, sizeof(p->s->name));
	return 1; /* no step */
}

static int parse_mmap(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;

	st->prot = THPS_PROT_READ | THPS_PROT_WRITE;
	if (p->nt < 3)
		return perr(p, 1, "usage: mmap REGION SIZE [align=SIZE] [prot=PROT] [fixed=REGION+OFF] [stack]");
	if (new_region(p, 1, &st->region) || tok_size(p, 2, "a size", &st->len))
		return -1;
	if (!st->len)
		return perr(p, t[2].col, "a mapping needs a size above 0");
	for (int i = 3; i < p->nt; i++) {
		const char *v;
		int vl;

		if (opt_value(&t[i], "align", &v, &vl)) {
			if (parse_size(v, vl, &st->align) || (st->align & (st->align - 1)))
				return perr(p, t[i].col, "align= takes a power of two like 2M");
		} else if (opt_value(&t[i], "prot", &v, &vl)) {
			struct tok pt = { v, vl, t[i].col + 5 };

			if (parse_prot(p, &pt, &st->prot))
				return -1;
		} else if (opt_value(&t[i], "fixed", &v, &vl)) {
			if (parse_region_off(p, v, vl, t[i].col + 6, &st->region2, &st->off2))
				return -1;
			st->flags = 1;
		} else if (t[i].len == 5 && !strncmp(t[i].s, "stack", 5)) {
			st->stack = 1;
		} else {
			return perr(p, t[i].col, "expected align=, prot=, fixed= or stack, got '%.*s'",
				    t[i].len, t[i].s);
		}
	}
	p->region_len[st->region] = st->len;
	p->region_line[p->cur_proc][st->region] = p->line;
	return 0;
}

static int parse_munmap(struct parser *p, struct scn_step *st)
{
	if (expect_args(p, 2, 4, "munmap REGION [OFF [LEN]]") || tok_region(p, 1, &st->region))
		return -1;
	st->len = p->region_len[st->region];
	if (p->nt > 2 && tok_size(p, 2, "an offset", &st->off))
		return -1;
	if (p->nt > 3 && tok_size(p, 3, "a length", &st->len))
		return -1;
	else if (p->nt == 3)
		st->len = st->len > st->off ? st->len - st->off : 0;
	if (p->nt == 2)
		p->region_line[p->cur_proc][st->region] = 0; /* the name is free */
	return 0;
}

static int parse_mprotect(struct parser *p, struct scn_step *st)
{
	if (expect_args(p, 5, 5, "mprotect REGION OFF LEN PROT") || tok_region(p, 1, &st->region) ||
	    tok_size(p, 2, "an offset", &st->off) || tok_size(p, 3, "a length", &st->len))
		return -1;
	return parse_prot(p, &p->t[4], &st->prot);
}

static int parse_madvise(struct parser *p, struct scn_step *st)
{
	static const struct {
		const char *n;
		int a;
	} adv[] = { { "hugepage", THPS_MADV_HUGEPAGE }, { "nohugepage", THPS_MADV_NOHUGEPAGE },
		    { "dontneed", THPS_MADV_DONTNEED }, { "free", THPS_MADV_FREE },
		    { "normal", THPS_MADV_NORMAL }, { "collapse", THPS_MADV_COLLAPSE } };
	/* the errors a scenario may expect (err=), by their C names */
	static const struct {
		const char *n;
		int e;
	} errs[] = { { "EINVAL", EINVAL }, { "ENOMEM", ENOMEM }, { "EAGAIN", EAGAIN },
		     { "EBUSY", EBUSY }, { "EPERM", EPERM }, { "EFAULT", EFAULT } };
	struct tok *t = p->t;
	size_t k;

	if (expect_args(p, 5, 6,
			"madvise REGION OFF LEN hugepage|nohugepage|dontneed|free|normal|collapse "
			"[err=ERRNO]") ||
	    tok_region(p, 1, &st->region) || tok_size(p, 2, "an offset", &st->off) ||
	    tok_size(p, 3, "a length", &st->len))
		return -1;
	for (k = 0; k < sizeof(adv) / sizeof(adv[0]); k++)
		if (tok_is(&t[4], adv[k].n))
			break;
	if (k == sizeof(adv) / sizeof(adv[0]))
		return perr(p, t[4].col,
			    "expected hugepage, nohugepage, dontneed, free, normal or collapse, got '%.*s'",
			    t[4].len, t[4].s);
	st->advice = adv[k].a;
	if (p->nt == 6) {
		const char *v;
		int vl;

		if (!opt_value(&t[5], "err", &v, &vl))
			return perr(p, t[5].col, "expected err=ERRNO, got '%.*s'", t[5].len, t[5].s);
		for (k = 0; k < sizeof(errs) / sizeof(errs[0]); k++)
			if ((int)strlen(errs[k].n) == vl && !memcmp(errs[k].n, v, (size_t)vl))
				break;
		if (k == sizeof(errs) / sizeof(errs[0]))
			return perr(p, t[5].col + 4,
				    "expected EINVAL, ENOMEM, EAGAIN, EBUSY, EPERM or EFAULT, got '%.*s'",
				    vl, v);
		st->has_err = 1;
		st->err = errs[k].e;
	}
	return 0;
}

static int parse_mremap(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;

	if (p->nt < 4)
		return perr(p, 1, "usage: mremap REGION OLDLEN NEWLEN [maymove] [fixed=REGION+OFF]");
	if (tok_region(p, 1, &st->region) || tok_size(p, 2, "the old length", &st->len) ||
	    tok_size(p, 3, "the new length", &st->len2))
		return -1;
	for (int i = 4; i < p->nt; i++) {
		const char *v;
		int vl;

		if (tok_is(&t[i], "maymove")) {
			st->flags |= THPS_MREMAP_MAYMOVE;
		} else if (opt_value(&t[i], "fixed", &v, &vl)) {
			if (parse_region_off(p, v, vl, t[i].col + 6, &st->region2, &st->off2))
				return -1;
			st->flags |= THPS_MREMAP_FIXED | THPS_MREMAP_MAYMOVE;
		} else {
			return perr(p, t[i].col, "expected maymove or fixed=REGION+OFF, got '%.*s'",
				    t[i].len, t[i].s);
		}
	}
	p->region_len[st->region] = st->len2;
	return 0;
}

/* read and write */
static int parse_touch(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;
	int w = st->op == SCN_WRITE;

	st->step = 1;
	st->value = w ? 1 : 0;
	if (p->nt < 4)
		return perr(p, 1, "usage: %s REGION OFF LEN [step=SIZE] [%s=BYTE]", w ? "write" : "read",
			    w ? "value" : "expect");
	if (tok_region(p, 1, &st->region) || tok_size(p, 2, "an offset", &st->off) ||
	    tok_size(p, 3, "a length", &st->len))
		return -1;
	for (int i = 4; i < p->nt; i++) {
		const char *v;
		int vl;

		if (opt_value(&t[i], "step", &v, &vl)) {
			if (parse_size(v, vl, &st->step) || !st->step)
				return perr(p, t[i].col, "step= takes a size above 0 like 4K");
		} else if (opt_value(&t[i], w ? "value" : "expect", &v, &vl)) {
			if (parse_byte(p, v, vl, t[i].col, &st->value))
				return -1;
			st->has_value = 1;
		} else {
			return perr(p, t[i].col, "expected step= or %s=, got '%.*s'",
				    w ? "value" : "expect", t[i].len, t[i].s);
		}
	}
	return 0;
}

static int parse_fork(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;
	struct scenario *s = p->s;

	if (expect_args(p, 2, 2, "fork NAME"))
		return -1;
	if (!valid_name(&t[1]) || find_name(s->procs, s->nprocs, &t[1]) >= 0)
		return perr(p, t[1].col, "expected a new process name, got '%.*s'", t[1].len, t[1].s);
	if (s->nprocs >= SCN_MAX_PROCS)
		return perr(p, t[1].col, "too many processes (at most %d)", SCN_MAX_PROCS);
	st->child = s->nprocs++;
	tok_copy(&t[1], s->procs[st->child], SCN_NAME_MAX);
	memcpy(p->region_line[st->child], p->region_line[p->cur_proc], sizeof(p->region_line[0]));
	return 0;
}

static int parse_proc(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;
	int q;

	(void)st;
	if (expect_args(p, 2, 2, "proc NAME"))
		return -1;
	q = find_name(p->s->procs, p->s->nprocs, &t[1]);
	if (q < 0)
		return perr(p, t[1].col, "unknown process '%.*s' (fork it first)", t[1].len, t[1].s);
	if (p->exited[q])
		return perr(p, t[1].col, "process '%.*s' has exited", t[1].len, t[1].s);
	p->cur_proc = q;
	return 1; /* no step */
}

static int parse_exit(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;
	struct scenario *s = p->s;

	if (expect_args(p, 1, 2, "exit [NAME]"))
		return -1;
	if (p->nt == 2) {
		st->proc = find_name(s->procs, s->nprocs, &t[1]);
		if (st->proc < 0)
			return perr(p, t[1].col, "unknown process '%.*s'", t[1].len, t[1].s);
		if (check_proc_alive(p, st->proc))
			return -1;
	}
	p->exited[st->proc] = 1;
	if (st->proc == p->cur_proc)
		for (int q = 0; q < s->nprocs; q++)
			if (!p->exited[q]) {
				p->cur_proc = q;
				break;
			}
	return 0;
}

static int parse_shrink(struct parser *p, struct scn_step *st)
{
	(void)st;
	return expect_args(p, 1, 1, "shrink");
}

static int parse_khugepaged(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;
	const char *v;
	int vlen;

	if (expect_args(p, 2, 2, "khugepaged scans=N"))
		return -1;
	if (!opt_value(&t[1], "scans", &v, &vlen) || parse_size(v, vlen, &st->scans) ||
	    st->scans < 1 || st->scans > 100)
		return perr(p, t[1].col, "expected scans=N (1..100 full scans), got '%.*s'", t[1].len,
			    t[1].s);
	return 0;
}

static int parse_prctl(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;

	if (expect_args(p, 3, 3, "prctl thp_disable 0|1") || !tok_is(&t[1], "thp_disable"))
		return perr(p, t[1 < p->nt ? 1 : 0].col, "usage: prctl thp_disable 0|1");
	if (!tok_is(&t[2], "0") && !tok_is(&t[2], "1"))
		return perr(p, t[2].col, "expected 0 or 1");
	st->value = tok_is(&t[2], "1");
	return 0;
}

static int parse_report(struct parser *p, struct scn_step *st)
{
	struct tok *t = p->t;

	if (p->nt > 1) {
		size_t n = (size_t)(t[p->nt - 1].s + t[p->nt - 1].len - t[1].s);

		if (n >= sizeof(st->knob))
			n = sizeof(st->knob) - 1;
		memcpy(st->knob, t[1].s, n);
		st->knob[n] = 0;
	}
	return 0;
}

/*
 * The verbs (verbs.h), in the order the "unknown step" message names them.
 * Rows of a step are in enum scn_op order, so scn_verb() indexes them.
 */
#define OP SCN_VERB_OP
#define GUARD SCN_VERB_GUARD
#define INERT SCN_VERB_INERT
static const struct scn_verb scn_verbs[] = {
	{ "set", SCN_SET, INERT, parse_set, scn_model_set, NULL, NULL },
	{ "mmap", SCN_MMAP, OP, parse_mmap, scn_model_mmap, scn_kernel_in_worker, scn_worker_mmap },
	{ "munmap", SCN_MUNMAP, OP, parse_munmap, scn_model_munmap, scn_kernel_in_worker,
	  scn_worker_munmap },
	{ "mprotect", SCN_MPROTECT, OP, parse_mprotect, scn_model_mprotect, scn_kernel_in_worker,
	  scn_worker_mprotect },
	{ "madvise", SCN_MADVISE, OP | GUARD, parse_madvise, scn_model_madvise,
	  scn_kernel_in_worker, scn_worker_madvise },
	{ "mremap", SCN_MREMAP, OP, parse_mremap, scn_model_mremap, scn_kernel_in_worker,
	  scn_worker_mremap },
	{ "read", SCN_READ, OP | GUARD, parse_touch, scn_model_touch, scn_kernel_read,
	  scn_worker_read },
	{ "write", SCN_WRITE, OP | GUARD, parse_touch, scn_model_touch, scn_kernel_in_worker,
	  scn_worker_write },
	{ "fork", SCN_FORK, OP | SCN_VERB_NO_MINFLT, parse_fork, scn_model_fork, scn_kernel_fork,
	  scn_worker_fork },
	{ "proc", SCN_PROC, OP | INERT, parse_proc, NULL, NULL, NULL },
	{ "exit", SCN_EXIT, OP, parse_exit, scn_model_exit, scn_kernel_exit, scn_worker_exit },
	{ "shrink", SCN_SHRINK, OP | GUARD, parse_shrink, scn_model_shrink, scn_kernel_shrink, NULL },
	{ "khugepaged", SCN_KHUGEPAGED, OP, parse_khugepaged, scn_model_khugepaged,
	  scn_kernel_khugepaged, NULL },
	{ "prctl", SCN_PRCTL, OP, parse_prctl, scn_model_prctl, scn_kernel_in_worker,
	  scn_worker_prctl },
	{ "expect", SCN_EXPECT, OP | GUARD | INERT, parse_expect, scn_model_expect,
	  scn_kernel_expect, NULL },
	{ "report", SCN_REPORT, OP | GUARD | INERT, parse_report, scn_model_report,
	  scn_kernel_report, NULL },
	{ "scenario", NR_SCN_OPS, SCN_VERB_UNLISTED, parse_scenario, NULL, NULL, NULL },
};
#undef OP
#undef GUARD
#undef INERT
#define NR_VERBS ((int)(sizeof(scn_verbs) / sizeof(scn_verbs[0])))

const struct scn_verb *scn_verb(enum scn_op op)
{
	return (int)op >= 0 && op < NR_SCN_OPS ? &scn_verbs[op] : NULL;
}

static const struct scn_verb *find_verb(const struct tok *t)
{
	for (int i = 0; i < NR_VERBS; i++)
		if (tok_is(t, scn_verbs[i].name))
			return &scn_verbs[i];
	return NULL;
}

static int unknown_verb(struct parser *p)
{
	char list[256];
	size_t n = 0;

	for (int i = 0; i < NR_VERBS && n < sizeof(list); i++)
		if (!(scn_verbs[i].flags & SCN_VERB_UNLISTED))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s, ", scn_verbs[i].name);
	return perr(p, p->t->col, "unknown step '%.*s' (expected %swhen)", p->t->len, p->t->s,
		    n < sizeof(list) ? list : "");
}

static int parse_line(struct parser *p, struct scn_step *st)
{
	const struct scn_verb *v;

	if (tok_is(p->t, "when") && parse_when(p, st))
		return -1;
	st->proc = p->cur_proc;
	st->region = st->region2 = -1;
	v = find_verb(p->t);
	if (!v || (v->flags & SCN_VERB_OP)) {
		p->seen_op = 1;
		if (check_proc_alive(p, p->cur_proc))
			return -1;
	}
	if (!v)
		return unknown_verb(p);
	st->op = v->op;
	return v->parse(p, st);
}

static int tokenize(struct parser *p, const char *line, int len)
{
	p->nt = 0;
	for (int i = 0; i < len;) {
		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
			i++;
		if (i >= len || line[i] == '#')
			break;
		if (p->nt >= MAX_TOKENS)
			return perr(p, i + 1, "too many words on one line (at most %d)", MAX_TOKENS);
		p->t[p->nt].s = line + i;
		p->t[p->nt].col = i + 1;
		while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '#')
			i++;
		p->t[p->nt].len = (int)(line + i - p->t[p->nt].s);
		p->nt++;
	}
	return 0;
}

int scenario_parse_string(const char *name, const char *text, struct scenario *s, FILE *err)
{
	struct parser p = { .s = s, .err = err };
	const char *line = text;
	int ret = 0;

	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", name);
	{
		const char *base = strrchr(name, '/');

		snprintf(s->name, sizeof(s->name), "%s", base ? base + 1 : name);
		if (strlen(s->name) > 4 && !strcmp(s->name + strlen(s->name) - 4, ".scn"))
			s->name[strlen(s->name) - 4] = 0;
	}
	s->nprocs = 1;
	snprintf(s->procs[0], SCN_NAME_MAX, "main");
	for (p.line = 1; *line; p.line++) {
		const char *nl = strchr(line, '\n');
		int len = nl ? (int)(nl - line) : (int)strlen(line);
		struct scn_step st;
		int r;

		if (memchr(line, 0, (size_t)len)) {
			ret = perr(&p, 1, "a NUL byte in the text");
			break;
		}
		if (tokenize(&p, line, len)) {
			ret = -1;
			break;
		}
		line += len + (nl ? 1 : 0);
		if (!p.nt)
			continue;
		memset(&st, 0, sizeof(st));
		st.line = p.line;
		snprintf(st.text, sizeof(st.text), "%.*s",
			 (int)(p.t[p.nt - 1].s + p.t[p.nt - 1].len - p.t[0].s), p.t[0].s);
		r = parse_line(&p, &st);
		if (r < 0) {
			ret = -1;
			break;
		}
		if (r > 0)
			continue;
		if (s->nsteps == s->cap) {
			int cap = s->cap ? s->cap * 2 : 32;
			struct scn_step *n = realloc(s->steps, (size_t)cap * sizeof(*n));

			if (!n) {
				ret = perr(&p, 1, "out of memory");
				break;
			}
			s->steps = n;
			s->cap = cap;
		}
		s->steps[s->nsteps++] = st;
	}
	if (p.scratch)
		thps_machine_free(p.scratch);
	if (ret)
		scenario_free(s);
	return ret;
}

int scenario_parse_file(const char *path, struct scenario *s, FILE *err)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	int ret;

	memset(s, 0, sizeof(*s));
	if (!f) {
		fprintf(err, "%s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) || n > (16 << 20)) {
		fprintf(err, "%s: cannot read (or larger than 16 MiB)\n", path);
		fclose(f);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(err, "%s: cannot read: %s\n", path, strerror(errno));
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[n] = 0;
	if (memchr(buf, 0, (size_t)n)) {
		fprintf(err, "%s: not a text file (it holds a NUL byte)\n", path);
		free(buf);
		return -1;
	}
	ret = scenario_parse_string(path, buf, s, err);
	free(buf);
	return ret;
}

int scenario_has_op(const struct scenario *s, enum scn_op op)
{
	for (int i = 0; i < s->nsteps; i++)
		if (s->steps[i].op == op)
			return 1;
	return 0;
}

void scenario_free(struct scenario *s)
{
	free(s->steps);
	s->steps = NULL;
	s->nsteps = s->cap = 0;
}
