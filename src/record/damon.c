/*
 * damon.c - "record --access": which pages the program's first process
 * accesses, sampled by the kernel's DAMON (Data Access MONitor) with its
 * virtual-address operations ("vaddr"), through its sysfs interface under
 * /sys/kernel/mm/damon/admin (Linux's Documentation/admin-guide/mm/damon/
 * usage.rst describes the files).
 *
 * DAMON splits the process's address space into regions and checks one
 * page of each region every sampling interval (was it accessed since the
 * last check?), adding the hits up over an aggregation interval: a region's
 * nr_accesses is how many of the interval's checks found it accessed (0 to
 * aggregation / sampling).  One scheme with the "stat" action and an access
 * pattern that every accessed region matches (nr_accesses at least 1, any
 * size or age) makes the kernel list those regions ("tried regions") when
 * asked: a sample is that list, for the aggregation interval going on when
 * it was asked for (the request waits for its end).  The regions not
 * accessed are not listed: the kernel made a sysfs folder for each region
 * it listed, and the recorder read each one's nr_accesses, to leave out
 * those with 0 (mm/damon/core.c, __damos_valid_target: the pattern is
 * checked at the end of the interval, where the count it checks is the
 * one the folder reports).
 *
 * Lifecycle; rec_damon_stop undoes whatever was done, on every way out of
 * the recorder:
 *   rec_damon_prepare  before the program runs (the trace header says
 *                      whether access sampling is on): refuse unless the
 *                      sysfs interface is there, we are root, no kdamond
 *                      exists (someone else's monitor is left alone, even
 *                      one that is off), none of the kernel's own DAMON
 *                      modules runs (they run alone: Debian's 6.18 starts
 *                      DAMON_STAT at boot, and "on" then fails with EBUSY)
 *                      and vaddr is available; then one
 *                      kdamond, one context, one target, one stat scheme,
 *                      the intervals.
 *   rec_damon_start    after the first process's exec: its pid, "on".
 *   rec_damon_sample   one aggregation interval's accessed regions, and
 *                      the kernel's own figures for them (rec_access_truth:
 *                      /proc/PID/pagemap and /proc/kpageflags).
 *   rec_damon_stop     "off", then no kdamond.
 *
 * DAMON follows the target's mm, which the process keeps across later
 * execs (sh -c 'exec prog' works); its children are not monitored.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "record.h"
#include "util/sysfile.h"

/* What each sample asks of the kdamond, as its state file takes it. */
#define DAMON_UPDATE "update_schemes_tried_regions"
/* The scheme's access pattern: every size, age and count. */
#define DAMON_ANY_U64 "18446744073709551615"
#define DAMON_ANY_U32 "4294967295"

/* The files under the admin folder, relative to it. */
#define KDAMOND "kdamonds/0"
#define CONTEXT KDAMOND "/contexts/0"
#define SCHEME CONTEXT "/schemes/0"

static void dpath(const struct rec_damon *d, char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", d->root, rel);
}

static int dwrite(const struct rec_damon *d, const char *rel, const char *value)
{
	char p[512];

	dpath(d, p, sizeof(p), rel);
	return sysfile_write(p, value);
}

/* A number file: 0, or -errno (-EINVAL when it holds no number). */
static int dread_u64(const char *path, uint64_t *v)
{
	char buf[64], *end;
	ssize_t n = sysfile_read(path, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	*v = strtoull(buf, &end, 10);
	return end == buf ? -EINVAL : 0;
}

static int why_fail(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int why_fail(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return err;
}

/* The kernel's own users of DAMON, each with its module parameter
 * "enabled" (Y or N): while one runs, DAMON starts nothing else (it runs
 * its monitor exclusively). */
static const char *const damon_modules[] = { "damon_stat", "damon_reclaim", "damon_lru_sort" };

/* 0, or -EBUSY with why when one of damon_modules is enabled; their
 * parameters are under /sys/module, or beside an imitated admin folder. */
static int check_modules(const struct rec_damon *d, int imitated, char *why, size_t len)
{
	char p[512], v[8];

	for (size_t i = 0; i < sizeof(damon_modules) / sizeof(damon_modules[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s/parameters/enabled", imitated ? d->root : "/sys/module",
			 damon_modules[i]);
		if (sysfile_read(p, v, sizeof(v)) > 0 && v[0] == 'Y')
			return why_fail(why, len, -EBUSY, "DAMON is in use on this machine (the "
					"kernel's %s: %s is Y): thpsim leaves it alone",
					damon_modules[i], p);
	}
	return 0;
}

/* Whether the word w is one of the words of s (avail_operations: one a
 * line; "fvaddr" is not "vaddr"). */
static int has_word(const char *s, const char *w)
{
	size_t wl = strlen(w);

	for (const char *p = s; (p = strstr(p, w)); p += wl)
		if ((p == s || p[-1] == '\n' || p[-1] == ' ') &&
		    (p[wl] == 0 || p[wl] == '\n' || p[wl] == ' '))
			return 1;
	return 0;
}

/* The settings after the context exists, written in this order. */
static int configure(struct rec_damon *d, char *why, size_t len)
{
	char sample[32], aggr[32];
	const struct {
		const char *rel, *value;
	} rows[] = {
		{ CONTEXT "/operations", "vaddr" },
		{ CONTEXT "/targets/nr_targets", "1" },
		{ CONTEXT "/schemes/nr_schemes", "1" },
		{ SCHEME "/action", "stat" },
		{ SCHEME "/access_pattern/sz/min", "0" },
		{ SCHEME "/access_pattern/sz/max", DAMON_ANY_U64 },
		{ SCHEME "/access_pattern/nr_accesses/min", "1" },
		{ SCHEME "/access_pattern/nr_accesses/max", DAMON_ANY_U32 },
		{ SCHEME "/access_pattern/age/min", "0" },
		{ SCHEME "/access_pattern/age/max", DAMON_ANY_U64 },
		{ CONTEXT "/monitoring_attrs/intervals/sample_us", sample },
		{ CONTEXT "/monitoring_attrs/intervals/aggr_us", aggr },
		{ CONTEXT "/monitoring_attrs/intervals/update_us", aggr },
	};

	snprintf(sample, sizeof(sample), "%llu", (unsigned long long)d->sample_us);
	snprintf(aggr, sizeof(aggr), "%llu", (unsigned long long)d->aggr_us);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int err = dwrite(d, rows[i].rel, rows[i].value);

		if (err)
			return why_fail(why, len, err, "setting up DAMON failed: writing %s to "
					"%s/%s: %s", rows[i].value, d->root, rows[i].rel,
					strerror(-err));
	}
	return 0;
}

/* Is vaddr among the context's operations?  0, or -EOPNOTSUPP.  A kernel
 * without avail_operations (before 5.18) is asked by writing it. */
static int check_vaddr(struct rec_damon *d, char *why, size_t len)
{
	char p[512], ops[512];

	dpath(d, p, sizeof(p), CONTEXT "/avail_operations");
	if (sysfile_read(p, ops, sizeof(ops)) >= 0 ? has_word(ops, "vaddr")
						    : !dwrite(d, CONTEXT "/operations", "vaddr"))
		return 0;
	return why_fail(why, len, -EOPNOTSUPP, "this kernel has no DAMON virtual-address "
			"monitoring (CONFIG_DAMON_VADDR)");
}

int rec_damon_prepare(struct rec_damon *d, const char *root, uint64_t aggr_us, char *why,
		      size_t len)
{
	char p[512];
	struct stat st;
	uint64_t n = 0;
	int err;

	memset(d, 0, sizeof(*d));
	snprintf(d->root, sizeof(d->root), "%s", root ? root : REC_DAMON_ROOT);
	d->aggr_us = aggr_us;
	d->sample_us = aggr_us / REC_DAMON_CHECKS;
	if (stat(d->root, &st) || !S_ISDIR(st.st_mode))
		return why_fail(why, len, -ENOENT, "this kernel has no DAMON sysfs interface "
				"(CONFIG_DAMON_SYSFS)");
	if (geteuid() != 0)
		return why_fail(why, len, -EPERM, "not root: DAMON's sysfs files are root's");
	dpath(d, p, sizeof(p), "kdamonds/nr_kdamonds");
	if ((err = dread_u64(p, &n)))
		return why_fail(why, len, err, "cannot read %s: %s", p, strerror(-err));
	if (n != 0)
		return why_fail(why, len, -EBUSY, "DAMON is in use on this machine (%llu "
				"kdamonds): thpsim leaves it alone", (unsigned long long)n);
	if ((err = check_modules(d, root != NULL, why, len)))
		return err;
	if ((err = sysfile_write(p, "1")))
		return why_fail(why, len, err, "cannot make a kdamond (%s): %s", p,
				strerror(-err));
	d->made = 1;
	err = dwrite(d, KDAMOND "/contexts/nr_contexts", "1");
	if (err)
		why_fail(why, len, err, "setting up DAMON failed: writing 1 to %s/" KDAMOND
			 "/contexts/nr_contexts: %s", d->root, strerror(-err));
	if (!err)
		err = check_vaddr(d, why, len);
	if (!err)
		err = configure(d, why, len);
	if (err)
		rec_damon_stop(d);
	return err;
}

int rec_damon_start(struct rec_damon *d, pid_t pid, char *why, size_t len)
{
	char v[32];
	int err;

	snprintf(v, sizeof(v), "%d", (int)pid);
	err = dwrite(d, CONTEXT "/targets/0/pid_target", v);
	if (err)
		return why_fail(why, len, err, "DAMON refused the target pid %d: %s", (int)pid,
				strerror(-err));
	err = dwrite(d, KDAMOND "/state", "on");
	if (err)
		return why_fail(why, len, err, "DAMON did not start (writing on to %s/" KDAMOND
				"/state): %s%s", d->root, strerror(-err),
				err == -EBUSY ? " (another user of DAMON runs alone)" : "");
	d->pid = pid;
	d->running = 1;
	return 0;
}

static int region_cmp(const void *a, const void *b)
{
	const struct rec_access_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Region N of the tried regions, when it was accessed: into d->reg.  0, or
 * -errno. */
static int read_region(struct rec_damon *d, const char *dir, const char *name)
{
	char p[512];
	uint64_t nr = 0, start = 0, end = 0;
	struct rec_access_region *r;
	int err;

	snprintf(p, sizeof(p), "%s/%s/nr_accesses", dir, name);
	if ((err = dread_u64(p, &nr)) || !nr)
		return err;
	snprintf(p, sizeof(p), "%s/%s/start", dir, name);
	if ((err = dread_u64(p, &start)))
		return err;
	snprintf(p, sizeof(p), "%s/%s/end", dir, name);
	if ((err = dread_u64(p, &end)))
		return err;
	if (end <= start)
		return 0;
	if (d->nreg == d->capreg) {
		size_t cap = d->capreg ? d->capreg * 2 : 256;

		if (!(r = realloc(d->reg, cap * sizeof(*r))))
			return -ENOMEM;
		d->reg = r;
		d->capreg = cap;
	}
	d->reg[d->nreg++] = (struct rec_access_region){ start, end - start, nr };
	return 0;
}

int rec_damon_sample(struct rec_damon *d)
{
	char dir[512];
	struct dirent *de;
	DIR *dd;
	int err;

	if (!d->running)
		return -EINVAL;
	d->nreg = 0;
	/* waits for the end of the aggregation interval in progress */
	if ((err = dwrite(d, KDAMOND "/state", DAMON_UPDATE)))
		return err;
	dpath(d, dir, sizeof(dir), SCHEME "/tried_regions");
	if (!(dd = opendir(dir)))
		return -errno;
	while (!err && (de = readdir(dd)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			err = read_region(d, dir, de->d_name);
	closedir(dd);
	if (err)
		return err;
	qsort(d->reg, d->nreg, sizeof(*d->reg), region_cmp);
	memset(&d->end, 0, sizeof(d->end));
	d->end.interval_us = d->aggr_us;
	d->end.checks = d->aggr_us / d->sample_us;
	rec_access_truth(d->pid, d->reg, d->nreg, &d->end);
	d->samples++;
	return 0;
}

void rec_damon_write(const struct rec_damon *d, struct trace_writer *w)
{
	for (size_t i = 0; i < d->nreg; i++)
		trace_write_access(w, d->reg[i].start, d->reg[i].len, d->reg[i].nr);
	trace_write_access_end(w, &d->end);
}

/* The kdamond's state file says "off" (it stopped itself when its target
 * exited, or was turned off): up to 5 s. */
static void wait_off(const struct rec_damon *d)
{
	char p[512], s[32];
	struct timespec ms10 = { 0, 10000000 };

	dpath(d, p, sizeof(p), KDAMOND "/state");
	for (int i = 0; i < 500; i++) {
		if (sysfile_read(p, s, sizeof(s)) < 0 || !strncmp(s, "off", 3))
			return;
		nanosleep(&ms10, NULL);
	}
}

void rec_damon_stop(struct rec_damon *d)
{
	struct timespec ms10 = { 0, 10000000 };

	if (d->made) {
		if (d->running)
			dwrite(d, KDAMOND "/state", "off"); /* fails when it stopped itself */
		wait_off(d);
		/* refused (EBUSY) while the kdamond still runs */
		for (int i = 0; i < 500 && dwrite(d, "kdamonds/nr_kdamonds", "0"); i++)
			nanosleep(&ms10, NULL);
	}
	free(d->reg);
	d->reg = NULL;
	d->nreg = d->capreg = 0;
	d->made = d->running = 0;
}

/* ---- the kernel's own figures for the accessed regions ---- */

/* /proc/PID/pagemap: one 64-bit entry per page (Linux's
 * Documentation/admin-guide/mm/pagemap.rst); /proc/kpageflags: one per
 * PFN. */
#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
#define KPF_COMPOUND_HEAD 15
#define KPF_THP 22
#define PAGE_SHIFT_4K 12
#define PMD_PAGES 512ULL /* 4 KiB pages in a 2 MiB block */
#define PMD_BYTES (PMD_PAGES << PAGE_SHIFT_4K)
/* Accessed regions spanning more are not looked at (truth 0): the cost of
 * a sample stays bounded (1 Mi pagemap entries, 8 MiB read). */
#define TRUTH_MAX_BYTES (4ULL << 30)

/* The flags of PFN pfn..pfn+n-1 into f (n <= PMD_PAGES): 0, or -1. */
static int kpageflags(int kfd, uint64_t pfn, uint64_t n, uint64_t *f)
{
	return pread(kfd, f, n * 8, (off_t)(pfn * 8)) == (ssize_t)(n * 8) ? 0 : -1;
}

/* Pages of a 2 MiB block mapped by a PMD: all present, one run of PFNs
 * from a 512-aligned one that heads a compound THP page. */
static int pmd_mapped(int kfd, const uint64_t *pm)
{
	uint64_t pfn0 = pm[0] & PM_PFN_MASK, f;

	if (pfn0 % PMD_PAGES)
		return 0;
	for (uint64_t i = 0; i < PMD_PAGES; i++)
		if (!(pm[i] & PM_PRESENT) || (pm[i] & PM_PFN_MASK) != pfn0 + i)
			return 0;
	return !kpageflags(kfd, pfn0, 1, &f) && (f >> KPF_COMPOUND_HEAD & 1) && (f >> KPF_THP & 1);
}

/* Present pages [lo, hi) of the block whose entries are pm: the THP ones
 * into e->mthp_kb, reading kpageflags a run of consecutive PFNs at a time.
 * 0, or -1 when kpageflags cannot be read. */
static int small_thps(int kfd, const uint64_t *pm, uint64_t lo, uint64_t hi,
		      struct trace_access_end *e)
{
	uint64_t f[PMD_PAGES];

	for (uint64_t i = lo; i < hi;) {
		uint64_t pfn = pm[i] & PM_PFN_MASK, n = 1;

		if (!(pm[i] & PM_PRESENT)) {
			i++;
			continue;
		}
		while (i + n < hi && (pm[i + n] & PM_PRESENT) && (pm[i + n] & PM_PFN_MASK) == pfn + n)
			n++;
		if (kpageflags(kfd, pfn, n, f))
			return -1;
		for (uint64_t k = 0; k < n; k++)
			if (f[k] >> KPF_THP & 1)
				e->mthp_kb += 4;
		i += n;
	}
	return 0;
}

/* One accessed region, a 2 MiB block of pagemap at a time.  0, or -1. */
static int region_truth(int pfd, int kfd, uint64_t start, uint64_t end, struct trace_access_end *e)
{
	uint64_t pm[PMD_PAGES];

	for (uint64_t b = start & ~(PMD_BYTES - 1); b < end; b += PMD_BYTES) {
		uint64_t lo = (start > b ? start - b : 0) >> PAGE_SHIFT_4K;
		uint64_t hi = ((end < b + PMD_BYTES ? end : b + PMD_BYTES) - b) >> PAGE_SHIFT_4K;
		uint64_t present = 0;
		ssize_t got;

		/* the block may end past the last user page (the stack's, at the
		 * top when randomisation is off): pagemap stops there */
		memset(pm, 0, sizeof(pm));
		got = pread(pfd, pm, sizeof(pm), (off_t)((b >> PAGE_SHIFT_4K) * 8));
		if (got < 0 || (uint64_t)got < hi * 8)
			return -1;
		for (uint64_t i = lo; i < hi; i++) {
			if (!(pm[i] & PM_PRESENT))
				continue;
			if (!(pm[i] & PM_PFN_MASK))
				return -1; /* PFNs hidden: not root */
			present++;
		}
		if (!present)
			continue;
		e->present_kb += present * 4;
		if (present == hi - lo && pmd_mapped(kfd, pm))
			e->pmd_kb += present * 4;
		else if (small_thps(kfd, pm, lo, hi, e))
			return -1;
	}
	return 0;
}

void rec_access_truth(pid_t pid, const struct rec_access_region *r, size_t n,
		      struct trace_access_end *e)
{
	char path[64];
	uint64_t span = 0;
	int pfd, kfd, bad = 0;

	e->truth = 0;
	e->present_kb = e->pmd_kb = e->mthp_kb = 0;
	for (size_t i = 0; i < n; i++)
		span += r[i].len;
	if (span > TRUTH_MAX_BYTES)
		return;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	pfd = open(path, O_RDONLY | O_CLOEXEC);
	kfd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (pfd < 0 || kfd < 0)
		bad = 1;
	for (size_t i = 0; i < n && !bad; i++)
		bad = region_truth(pfd, kfd, r[i].start & ~4095ULL, r[i].start + r[i].len, e);
	if (pfd >= 0)
		close(pfd);
	if (kfd >= 0)
		close(kfd);
	e->truth = !bad;
	if (bad)
		e->present_kb = e->pmd_kb = e->mthp_kb = 0;
}
