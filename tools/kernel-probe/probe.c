/*
 * thpsim kernel probe: observe THP / huge-zero-page behaviour of the running
 * kernel.  Original code written for the thpsim research notes.
 *
 * Build:  gcc -O1 -Wall -static -o probe probe.c
 * Run:    ./probe [-r reps] [scenario-id ...]   (root; no args = all scenarios)
 *         ./probe -l   lists scenario ids
 *
 * Design
 *  - The orchestrator forks one fresh child per (scenario, repetition).
 *  - Every process involved in a scenario writes one-line records to a pipe
 *    that the orchestrator drains; records are rendered as markdown tables.
 *  - Before its baseline, every scenario process "warms" itself: it touches
 *    every page of every non-experiment mapping (read for read-only, byte
 *    read+write-back for writable private mappings) so that probe bookkeeping
 *    (stack, bss, libc text, ...) causes no page faults during measurement.
 *    After fork() the parent re-warms; the faults this costs are counted as
 *    "probe.housekeeping_faults" and reported, and subtracted in
 *    rusage.minflt_net.
 *  - /proc/sys/vm/stat_refresh is read before /proc/vmstat so that per-cpu
 *    node/zone counter drift (nr_anon_pages ...) is folded in.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdarg.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
#include <time.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/utsname.h>

#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#endif
#ifndef PR_GET_THP_DISABLE
#define PR_GET_THP_DISABLE 42
#endif
#ifndef PR_THP_DISABLE_EXCEPT_ADVISED
#define PR_THP_DISABLE_EXCEPT_ADVISED (1 << 1)
#endif
#ifndef MADV_FREE
#define MADV_FREE 8
#endif

#define KiB 1024UL
#define MiB (1024UL * 1024UL)
#define HPS (2 * MiB)
#define PGS 4096UL

/* ------------------------------------------------------------------ */
/* output records                                                      */
/* ------------------------------------------------------------------ */
static int outfd = -1;
static char linebuf[4000];
static const char *role = "";

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void rec(char kind, const char *fmt, ...)
{
	va_list ap;
	int n;
	linebuf[0] = kind;
	linebuf[1] = '|';
	va_start(ap, fmt);
	n = vsnprintf(linebuf + 2, sizeof(linebuf) - 4, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(linebuf) - 4)
		n = (int)sizeof(linebuf) - 4;
	n += 2;
	for (int i = 2; i < n; i++)
		if (linebuf[i] == '\n')
			linebuf[i] = ' ';
	linebuf[n++] = '\n';
	write_all(outfd, linebuf, (size_t)n);
}
#define NOTE(...) rec('N', __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* small file helpers (no stdio, static buffers)                       */
/* ------------------------------------------------------------------ */
static char fbuf[1 << 20];	/* /proc/self/smaps and maps */
static char vbuf[64 << 10];	/* /proc/vmstat */
static char sbuf[16 << 10];	/* smaps_rollup / status */

static ssize_t read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	size_t got = 0;
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t r = read(fd, buf + got, cap - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got >= cap - 1)
			break;
	}
	close(fd);
	buf[got] = 0;
	return (ssize_t)got;
}

static void write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	if (fd < 0) {
		NOTE("open(%s) for write failed: %s", path, strerror(errno));
		return;
	}
	if (write(fd, s, strlen(s)) < 0)
		NOTE("write(%s) failed: %s", path, strerror(errno));
	close(fd);
}

static void drop_caches2(void)
{
	write_str("/proc/sys/vm/drop_caches", "2");
}

/* find "Name:" at line start inside [p, end) and return its numeric value */
static long long field_in(const char *p, const char *end, const char *name)
{
	size_t nl = strlen(name);
	while (p < end) {
		if (!strncmp(p, name, nl) && p[nl] == ':')
			return strtoll(p + nl + 1, NULL, 10);
		const char *e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			break;
		p = e + 1;
	}
	return -1;
}

/* ------------------------------------------------------------------ */
/* vmstat                                                              */
/* ------------------------------------------------------------------ */
#define MAXVM 64
static char vm_names[MAXVM][48];
static int nvm;

static void vm_refresh(void)
{
	char tmp[8];
	int fd = open("/proc/sys/vm/stat_refresh", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, tmp, sizeof(tmp)) < 0) {
		}
		close(fd);
	}
}

static void vm_discover(void)
{
	read_file("/proc/vmstat", vbuf, sizeof(vbuf));
	char *p = vbuf;
	while (*p && nvm < MAXVM) {
		char *sp = strchr(p, ' ');
		char *nl = strchr(p, '\n');
		if (!sp || !nl)
			break;
		size_t l = (size_t)(sp - p);
		if ((l > 4 && !strncmp(p, "thp_", 4)) ||
		    (l == 7 && !strncmp(p, "pgfault", 7)) ||
		    (l == 29 && !strncmp(p, "nr_anon_transparent_hugepages", 29)) ||
		    (l == 13 && !strncmp(p, "nr_anon_pages", 13))) {
			if (l < sizeof(vm_names[0])) {
				memcpy(vm_names[nvm], p, l);
				vm_names[nvm][l] = 0;
				nvm++;
			}
		}
		p = nl + 1;
	}
}

static void vm_read(long long *out)
{
	vm_refresh();
	read_file("/proc/vmstat", vbuf, sizeof(vbuf));
	for (int i = 0; i < nvm; i++)
		out[i] = -1;
	char *p = vbuf;
	while (*p) {
		char *sp = strchr(p, ' ');
		char *nl = strchr(p, '\n');
		if (!sp || !nl)
			break;
		size_t l = (size_t)(sp - p);
		for (int i = 0; i < nvm; i++)
			if (strlen(vm_names[i]) == l && !strncmp(vm_names[i], p, l)) {
				out[i] = strtoll(sp + 1, NULL, 10);
				break;
			}
		p = nl + 1;
	}
}

/* ------------------------------------------------------------------ */
/* per-process figures                                                 */
/* ------------------------------------------------------------------ */
static const char *ro_names[] = {
	"Rss", "Pss", "Pss_Anon", "Pss_File", "Pss_Shmem", "Shared_Clean",
	"Shared_Dirty", "Private_Clean", "Private_Dirty", "Referenced",
	"Anonymous", "KSM", "LazyFree", "AnonHugePages", "ShmemPmdMapped",
	"FilePmdMapped", "Swap", "Locked",
};
#define NRO (int)(sizeof(ro_names) / sizeof(ro_names[0]))
static const char *st_names[] = {
	"VmRSS", "RssAnon", "RssFile", "RssShmem", "VmPTE", "VmHWM", "VmSize",
};
#define NST (int)(sizeof(st_names) / sizeof(st_names[0]))

/* region figures, summed over the VMAs that intersect the region */
static const char *rf_names[] = {
	"Rss", "Pss", "Anonymous", "AnonHugePages", "Private_Dirty",
	"Shared_Dirty", "Private_Clean", "LazyFree",
};
#define NRF (int)(sizeof(rf_names) / sizeof(rf_names[0]))

#define MAXREG 8
struct region {
	char name[16];
	uintptr_t map_lo, map_hi;	/* whole experiment mapping (skip in warm) */
	uintptr_t lo, hi;		/* region of interest */
	int used;
};
static struct region regs[MAXREG];

struct snap {
	long long vm[MAXVM];
	long long ro[NRO > 0 ? 32 : 1];
	long long st[16];
	long long minflt, majflt;
	long long rg[MAXREG][NRF + 1];	/* + number of VMAs */
	char rdesc[MAXREG][1600];
};
static struct snap base, cur;
static long long hk;	/* housekeeping faults (excluded) */

static void regions_scan(struct snap *s)
{
	for (int r = 0; r < MAXREG; r++) {
		for (int f = 0; f <= NRF; f++)
			s->rg[r][f] = 0;
		s->rdesc[r][0] = 0;
	}
	read_file("/proc/self/smaps", fbuf, sizeof(fbuf));
	char *p = fbuf, *end = fbuf + strlen(fbuf);
	while (p < end) {
		/* header line: start-end perms ... */
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		char *q;
		unsigned long long vs = strtoull(p, &q, 16);
		if (*q != '-') {
			p = nl + 1;
			continue;
		}
		unsigned long long ve = strtoull(q + 1, &q, 16);
		/* body: up to next header */
		char *body = nl + 1, *bend = body;
		while (bend < end) {
			char *n2 = memchr(bend, '\n', (size_t)(end - bend));
			if (!n2) {
				bend = end;
				break;
			}
			char c = *bend;
			if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
				/* next header? check for '-' in hex */
				char *h = bend;
				while ((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f'))
					h++;
				if (*h == '-')
					break;
			}
			bend = n2 + 1;
		}
		for (int r = 0; r < MAXREG; r++) {
			if (!regs[r].used)
				continue;
			if (vs < regs[r].hi && ve > regs[r].lo) {
				for (int f = 0; f < NRF; f++) {
					long long v = field_in(body, bend, rf_names[f]);
					if (v > 0)
						s->rg[r][f] += v;
				}
				s->rg[r][NRF]++;
				long long elig = field_in(body, bend, "THPeligible");
				long long ahp = field_in(body, bend, "AnonHugePages");
				long long rss = field_in(body, bend, "Rss");
				/* VmFlags: look for hg / nh */
				const char *vf = NULL;
				for (char *t = body; t < bend; t++)
					if (!strncmp(t, "VmFlags:", 8)) {
						vf = t;
						break;
					}
				int hg = 0, nh = 0;
				if (vf) {
					const char *ve2 = memchr(vf, '\n', (size_t)(bend - vf));
					for (const char *t = vf; ve2 && t + 2 < ve2; t++) {
						if (t[0] == ' ' && t[1] == 'h' && t[2] == 'g')
							hg = 1;
						if (t[0] == ' ' && t[1] == 'n' && t[2] == 'h')
							nh = 1;
					}
				}
				size_t L = strlen(s->rdesc[r]);
				long long off_s = (long long)vs - (long long)regs[r].lo;
				long long off_e = (long long)ve - (long long)regs[r].lo;
				snprintf(s->rdesc[r] + L, sizeof(s->rdesc[r]) - L,
					 "%s[%s0x%llx,%s0x%llx) %c%c%c%c%s%s THPeligible=%lld Rss=%lld AnonHugePages=%lld",
					 L ? "; " : "",
					 off_s < 0 ? "-" : "+", (unsigned long long)(off_s < 0 ? -off_s : off_s),
					 off_e < 0 ? "-" : "+", (unsigned long long)(off_e < 0 ? -off_e : off_e),
					 q[1], q[2], q[3], q[4],
					 hg ? " hg" : "", nh ? " nh" : "", elig, rss, ahp);
			}
		}
		p = bend;
	}
}

static void snap_take(struct snap *s)
{
	struct rusage ru;
	vm_read(s->vm);
	read_file("/proc/self/smaps_rollup", sbuf, sizeof(sbuf));
	for (int i = 0; i < NRO; i++)
		s->ro[i] = field_in(sbuf, sbuf + strlen(sbuf), ro_names[i]);
	read_file("/proc/self/status", sbuf, sizeof(sbuf));
	for (int i = 0; i < NST; i++)
		s->st[i] = field_in(sbuf, sbuf + strlen(sbuf), st_names[i]);
	regions_scan(s);
	getrusage(RUSAGE_SELF, &ru);
	s->minflt = ru.ru_minflt;
	s->majflt = ru.ru_majflt;
}

static void baseline(void)
{
	snap_take(&base);
	hk = 0;
}

static void checkpoint(const char *fmt, ...)
{
	char label[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(label, sizeof(label), fmt, ap);
	va_end(ap);
	snap_take(&cur);
	rec('C', "%s%s", role, label);
	for (int i = 0; i < nvm; i++)
		rec('V', "vmstat.%s|%lld|%lld", vm_names[i], cur.vm[i] - base.vm[i], cur.vm[i]);
	for (int i = 0; i < NRO; i++)
		rec('V', "smaps_rollup.%s|%lld|%lld", ro_names[i], cur.ro[i] - base.ro[i], cur.ro[i]);
	for (int i = 0; i < NST; i++)
		rec('V', "status.%s|%lld|%lld", st_names[i], cur.st[i] - base.st[i], cur.st[i]);
	rec('V', "rusage.minflt|%lld|%lld", cur.minflt - base.minflt, cur.minflt);
	rec('V', "rusage.minflt_net|%lld|-", cur.minflt - base.minflt - hk);
	rec('V', "rusage.majflt|%lld|%lld", cur.majflt - base.majflt, cur.majflt);
	rec('V', "probe.housekeeping_faults|%lld|-", hk);
	for (int r = 0; r < MAXREG; r++) {
		if (!regs[r].used)
			continue;
		for (int f = 0; f < NRF; f++)
			rec('V', "region[%s].%s|%lld|%lld", regs[r].name, rf_names[f],
			    cur.rg[r][f] - base.rg[r][f], cur.rg[r][f]);
		rec('V', "region[%s].nr_vmas|%lld|%lld", regs[r].name,
		    cur.rg[r][NRF] - base.rg[r][NRF], cur.rg[r][NRF]);
		rec('N', "region[%s] VMAs (offsets from region start, kB): %s", regs[r].name,
		    cur.rdesc[r][0] ? cur.rdesc[r] : "(none)");
	}
}

/* ------------------------------------------------------------------ */
/* pagemap / kpageflags                                                */
/* ------------------------------------------------------------------ */
static const char *kpf_names[] = {
	"LOCKED", "ERROR", "REFERENCED", "UPTODATE", "DIRTY", "LRU", "ACTIVE",
	"SLAB", "WRITEBACK", "RECLAIM", "BUDDY", "MMAP", "ANON", "SWAPCACHE",
	"SWAPBACKED", "COMPOUND_HEAD", "COMPOUND_TAIL", "HUGE", "UNEVICTABLE",
	"HWPOISON", "NOPAGE", "KSM", "THP", "OFFLINE", "ZERO_PAGE", "IDLE",
	"PGTABLE",
};

static int pread64b(const char *path, uint64_t idx, uint64_t *out)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t r = pread(fd, out, 8, (off_t)(idx * 8));
	close(fd);
	return r == 8 ? 0 : -1;
}

static void kpf_str(uint64_t pfn, char *out, size_t cap)
{
	uint64_t f = 0, c = 0;
	out[0] = 0;
	if (pread64b("/proc/kpageflags", pfn, &f)) {
		snprintf(out, cap, "kpageflags=?");
		return;
	}
	pread64b("/proc/kpagecount", pfn, &c);
	size_t L = (size_t)snprintf(out, cap, "kpagecount=%llu kpageflags=", (unsigned long long)c);
	int first = 1;
	for (unsigned i = 0; i < sizeof(kpf_names) / sizeof(kpf_names[0]); i++)
		if (f & (1ULL << i)) {
			L += (size_t)snprintf(out + L, cap - L, "%s%s", first ? "" : ",", kpf_names[i]);
			first = 0;
		}
	if (first)
		snprintf(out + L, cap - L, "0");
}

/* returns pfn (0 if not present) */
static uint64_t pm_note(const char *what, const void *addr)
{
	uint64_t e = 0;
	uintptr_t a = (uintptr_t)addr;
	if (pread64b("/proc/self/pagemap", a / PGS, &e)) {
		NOTE("pagemap %s: read failed", what);
		return 0;
	}
	int present = (int)(e >> 63 & 1), swapped = (int)(e >> 62 & 1);
	int file = (int)(e >> 61 & 1), excl = (int)(e >> 56 & 1), sd = (int)(e >> 55 & 1);
	uint64_t pfn = e & ((1ULL << 55) - 1);
	char kb[300];
	if (present) {
		kpf_str(pfn, kb, sizeof(kb));
		NOTE("pagemap %s: present=1 file/shared=%d exclusive=%d soft_dirty=%d pfn=0x%llx (pfn - 4K-index-in-2MiB = 0x%llx) %s",
		     what, file, excl, sd, (unsigned long long)pfn,
		     (unsigned long long)(pfn - ((a & (HPS - 1)) / PGS)), kb);
		return pfn;
	}
	NOTE("pagemap %s: present=0 swapped=%d file/shared=%d", what, swapped, file);
	return 0;
}

/* ------------------------------------------------------------------ */
/* warm-up: make the probe's own pages resident and private            */
/* ------------------------------------------------------------------ */
static int overlaps_experiment(uintptr_t s, uintptr_t e)
{
	for (int r = 0; r < MAXREG; r++)
		if (regs[r].used && s < regs[r].map_hi && e > regs[r].map_lo)
			return 1;
	return 0;
}

static void __attribute__((noinline)) touch_stack(void)
{
	volatile char big[192 * 1024];
	for (size_t i = 0; i < sizeof(big); i += 512)
		big[i] = (char)i;
}

static char mapsbuf[256 << 10];

static void warm(void)
{
	struct timespec ts;
	touch_stack();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	read_file("/proc/self/maps", mapsbuf, sizeof(mapsbuf));
	char *p = mapsbuf;
	while (*p) {
		char *nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = 0;
		char *q;
		uintptr_t s = (uintptr_t)strtoull(p, &q, 16);
		uintptr_t e = (uintptr_t)strtoull(q + 1, &q, 16);
		char perms[5] = { q[1], q[2], q[3], q[4], 0 };
		int skip = overlaps_experiment(s, e) || perms[0] != 'r' ||
			   strstr(p, "[vvar") || strstr(p, "[vsyscall]") || strstr(p, "[vdso]");
		if (!skip) {
			for (uintptr_t a = s; a < e; a += PGS) {
				volatile char *c = (volatile char *)a;
				char v = *c;
				if (perms[1] == 'w' && perms[3] == 'p')
					*c = v;
			}
		}
		p = nl + 1;
	}
	/* exercise the measuring code once so its paths are resident */
	snap_take(&cur);
	char kb[300];
	kpf_str(0, kb, sizeof(kb));
	uint64_t e = 0;
	pread64b("/proc/self/pagemap", ((uintptr_t)&e) / PGS, &e);
}

static long long minflt_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* fork helper: returns pid; child gets role "child: ", is warmed, and has
 * a fresh baseline.  Parent re-warms and books the faults as housekeeping. */
static pid_t probe_fork(void)
{
	long long before = minflt_now();
	pid_t pid = fork();
	if (pid == 0) {
		role = "child: ";
		warm();
		baseline();
		return 0;
	}
	warm();
	hk += minflt_now() - before;
	return pid;
}

/* simple one-byte sync over pipes */
static void sync_send(int fd)
{
	char c = 'x';
	write_all(fd, &c, 1);
}
static void sync_wait(int fd)
{
	char c;
	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------------ */
/* experiment regions                                                  */
/* ------------------------------------------------------------------ */
static const char *adv_name(int adv)
{
	switch (adv) {
	case 0: return "none";
	case MADV_HUGEPAGE: return "MADV_HUGEPAGE";
	case MADV_NOHUGEPAGE: return "MADV_NOHUGEPAGE";
	}
	return "?";
}

static int reg_add(const char *name, void *map_lo, size_t map_len, void *lo, size_t len)
{
	for (int r = 0; r < MAXREG; r++)
		if (!regs[r].used) {
			snprintf(regs[r].name, sizeof(regs[r].name), "%s", name);
			regs[r].map_lo = (uintptr_t)map_lo;
			regs[r].map_hi = (uintptr_t)map_lo + map_len;
			regs[r].lo = (uintptr_t)lo;
			regs[r].hi = (uintptr_t)lo + len;
			regs[r].used = 1;
			/* baseline for a region added after baseline(): zero */
			for (int f = 0; f <= NRF; f++)
				base.rg[r][f] = 0;
			return r;
		}
	return -1;
}

/* mmap size+2MiB, align up by hand, madvise the aligned range */
static char *alloc_region(const char *name, size_t size, int adv)
{
	size_t len = size + HPS;
	char *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED) {
		NOTE("mmap failed: %s", strerror(errno));
		_exit(2);
	}
	char *a = (char *)(((uintptr_t)b + HPS - 1) & ~(HPS - 1));
	int rc = 0;
	if (adv)
		rc = madvise(a, size, adv);
	reg_add(name, b, len, a, size);
	NOTE("setup %s: mmap(%zu MiB + 2 MiB) returned a %s2MiB-aligned address; %s = base+0x%lx; madvise(%s, %zu MiB, %s) rc=%d",
	     name, size / MiB, ((uintptr_t)b & (HPS - 1)) ? "non-" : "",
	     name, (unsigned long)(a - b), name, size / MiB, adv_name(adv), rc);
	return a;
}

struct rd { long long n, nonzero; unsigned sum; int first; };

static struct rd read_pass(const char *p, size_t len, size_t stride)
{
	struct rd r = { 0, 0, 0, -1 };
	for (size_t o = 0; o < len; o += stride) {
		unsigned char v = *(volatile const unsigned char *)(p + o);
		r.n++;
		r.sum += v;
		if (v) {
			r.nonzero++;
			if (r.first < 0)
				r.first = (int)o;
		}
	}
	return r;
}

static void read_note(const char *what, struct rd r)
{
	NOTE("bytes read back (%s): %lld bytes read, %lld non-zero, sum=%u%s", what, r.n, r.nonzero, r.sum,
	     r.nonzero ? "" : " (all zero)");
}

static void write_pass(char *p, size_t len, size_t stride, unsigned char v)
{
	for (size_t o = 0; o < len; o += stride)
		*(volatile unsigned char *)(p + o) = v;
}

static void child_exit(void)
{
	_exit(0);
}

static void wait_child(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		NOTE("child %d ended abnormally (status 0x%x)", pid, st);
}

/* ------------------------------------------------------------------ */
/* scenarios                                                           */
/* ------------------------------------------------------------------ */
static void s1(void)
{
	char *A = alloc_region("A", 4 * MiB, MADV_HUGEPAGE);
	baseline();
	struct rd r = read_pass(A, 4 * MiB, PGS);
	checkpoint("after reading 1 byte every 4 KiB of A (4 MiB)");
	read_note("read pass", r);
	pm_note("A+0", A);
	pm_note("A+4K", A + PGS);
	pm_note("A+2M", A + HPS);
	pm_note("A+2M+4K", A + HPS + PGS);
}

static void s2(void)
{
	char *A = alloc_region("A", 4 * MiB, MADV_HUGEPAGE);
	baseline();
	struct rd r = read_pass(A, 4 * MiB, PGS);
	checkpoint("after reading 1 byte every 4 KiB of A (4 MiB)");
	read_note("read pass", r);
	pm_note("A+0", A);
	A[0] = 1;
	checkpoint("after writing 1 byte (0x01) at A");
	pm_note("A+0", A);
	pm_note("A+4K", A + PGS);
	pm_note("A+2M", A + HPS);
	r = read_pass(A, 4 * MiB, PGS);
	checkpoint("after re-reading 1 byte every 4 KiB of A");
	read_note("re-read", r);
}

static void s3(void)
{
	char *A = alloc_region("A", 4 * MiB, MADV_HUGEPAGE);
	baseline();
	A[0] = 1;
	checkpoint("after writing 1 byte at A (no prior read)");
	pm_note("A+0", A);
	pm_note("A+4K", A + PGS);
	pm_note("A+2M", A + HPS);
	struct rd r = read_pass(A, 4 * MiB, PGS);
	checkpoint("after then reading 1 byte every 4 KiB of A (4 MiB)");
	read_note("read pass", r);
	pm_note("A+2M", A + HPS);
}

static void s4_common(char *A, size_t size)
{
	baseline();
	struct rd r = read_pass(A, size, PGS);
	checkpoint("after read pass (1 byte every 4 KiB of 200 MiB)");
	read_note("read pass", r);
	pm_note("A+0", A);
	pm_note("A+198M", A + 198 * MiB);
	write_pass(A, size, HPS, 0x5a);
	checkpoint("after write pass (1 byte every 2 MiB)");
	pm_note("A+0", A);
	pm_note("A+4K", A + PGS);
	r = read_pass(A, size, PGS);
	checkpoint("after second read pass (1 byte every 4 KiB)");
	read_note("second read pass", r);
}

static void s4a(void)
{
	void *p = NULL;
	size_t size = 200 * MiB;
	int rc = posix_memalign(&p, HPS, size);
	if (rc) {
		NOTE("posix_memalign failed %d", rc);
		return;
	}
	char *A = p;
	int m = madvise(A, size, MADV_HUGEPAGE);
	/* the malloc chunk lies inside a larger mmap; register a generous span */
	reg_add("A", A - HPS, size + 2 * HPS, A, size);
	NOTE("setup: posix_memalign(2 MiB, 200 MiB) = %p (2MiB-aligned=%d); madvise(A,200MiB,MADV_HUGEPAGE) rc=%d",
	     (void *)A, ((uintptr_t)A & (HPS - 1)) == 0, m);
	s4_common(A, size);
}

static void s4b(void) { s4_common(alloc_region("A", 200 * MiB, MADV_HUGEPAGE), 200 * MiB); }
static void s4c(void) { s4_common(alloc_region("A", 200 * MiB, 0), 200 * MiB); }
static void s4d(void) { s4_common(alloc_region("A", 200 * MiB, MADV_NOHUGEPAGE), 200 * MiB); }

static void s4e(void)
{
	void *p = NULL;
	size_t size = 200 * MiB;
	if (posix_memalign(&p, HPS, size))
		return;
	char *A = p;
	reg_add("A", A - HPS, size + 2 * HPS, A, size);
	NOTE("setup: posix_memalign(2 MiB, 200 MiB) = %p, no madvise", (void *)A);
	s4_common(A, size);
}

static void rw_common(size_t size, int adv)
{
	char *A = alloc_region("A", size, adv);
	baseline();
	struct rd r = read_pass(A, size, PGS);
	checkpoint("after reading 1 byte every 4 KiB of A (%zu MiB)", size / MiB);
	read_note("read pass", r);
	pm_note("A+0", A);
	pm_note("A+4K", A + PGS);
	A[0] = 1;
	checkpoint("after writing 1 byte at A");
	pm_note("A+0", A);
	write_pass(A, size, PGS, 2);
	checkpoint("after writing 1 byte every 4 KiB of A");
	pm_note("A+0", A);
}

static void s5(void) { rw_common(4 * MiB, 0); }
static void s16(void) { rw_common(4 * MiB, MADV_NOHUGEPAGE); }

/* a VMA with no 2 MiB-aligned 2 MiB window */
static void s6_common(size_t off, size_t len)
{
	size_t res = 8 * MiB;
	char *b = mmap(NULL, res, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *X = (char *)(((uintptr_t)b + HPS - 1) & ~(HPS - 1));
	char *V = X + off;
	/* trim everything except [V, V+len) */
	if (V > b)
		munmap(b, (size_t)(V - b));
	if (V + len < b + res)
		munmap(V + len, (size_t)(b + res - (V + len)));
	int rc = madvise(V, len, MADV_HUGEPAGE);
	reg_add("V", V, len, V, len);
	NOTE("setup: VMA [X+%zuK, X+%zuK) (X 2MiB-aligned), length %zu KiB, madvise(MADV_HUGEPAGE) rc=%d",
	     off / KiB, (off + len) / KiB, len / KiB, rc);
	baseline();
	struct rd r = read_pass(V, len, PGS);
	checkpoint("after reading 1 byte every 4 KiB of the VMA");
	read_note("read pass", r);
	pm_note("V+0", V);
	pm_note("X+2M (inside VMA)", X + HPS);
	V[0] = 1;
	checkpoint("after writing 1 byte at VMA start");
	pm_note("V+0", V);
}
static void s6a(void) { s6_common(512 * KiB, 3 * MiB); }
static void s6b(void) { s6_common(1 * MiB, 2 * MiB); }

static void s7(void)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	char *B = alloc_region("B", 2 * MiB, MADV_HUGEPAGE);
	char *C = alloc_region("C", 2 * MiB, 0);
	baseline();
	struct rd r = read_pass(A, 2 * MiB, PGS);
	checkpoint("after reading A (2 MiB, every 4 KiB)");
	read_note("A", r);
	r = read_pass(B, 2 * MiB, PGS);
	checkpoint("after reading B (2 MiB, every 4 KiB)");
	read_note("B", r);
	uint64_t pa = pm_note("A+0", A);
	uint64_t pb = pm_note("B+0", B);
	pm_note("A+1M", A + MiB);
	pm_note("B+1M", B + MiB);
	NOTE("A and B map the same huge zero pfn: %s", pa && pa == pb ? "YES" : "NO");
	r = read_pass(C, 2 * MiB, PGS);
	checkpoint("after reading C (2 MiB, no madvise -> 4K zero page)");
	read_note("C", r);
	uint64_t pc0 = pm_note("C+0", C);
	uint64_t pc1 = pm_note("C+4K", C + PGS);
	NOTE("C+0 and C+4K map the same (4K) pfn: %s", pc0 && pc0 == pc1 ? "YES" : "NO");
}

/* 8: fork after read (huge zero) */
static void s8_common(int adv, int child_writes)
{
	int p2c[2], c2p[2];
	char *A = alloc_region("A", 2 * MiB, adv);
	if (pipe(p2c) || pipe(c2p))
		return;
	baseline();
	struct rd r = read_pass(A, 2 * MiB, PGS);
	checkpoint("parent after reading A (before fork)");
	read_note("parent read", r);
	pm_note("parent A+0", A);
	pid_t pid = probe_fork();
	if (pid == 0) {
		checkpoint("right after fork (child warm-up done, nothing touched)");
		pm_note("child A+0 before reading", A);
		r = read_pass(A, 2 * MiB, PGS);
		checkpoint("after reading A every 4 KiB");
		read_note("child read", r);
		pm_note("child A+0", A);
		if (child_writes) {
			memset(A, 0xff, 2 * MiB);
			checkpoint("after child memset(A, 0xff, 2 MiB)");
			pm_note("child A+0", A);
			sync_send(c2p[1]);
			sync_wait(p2c[0]);
		} else {
			sync_send(c2p[1]);
			sync_wait(p2c[0]);
			r = read_pass(A, 2 * MiB, PGS);
			checkpoint("after parent wrote 0xff; child re-reads A every 4 KiB");
			read_note("child re-read (expect zeros)", r);
			pm_note("child A+0", A);
		}
		child_exit();
	}
	sync_wait(c2p[0]);
	checkpoint("parent after fork + child's first steps");
	pm_note("parent A+0", A);
	if (!child_writes) {
		memset(A, 0xff, 2 * MiB);
		checkpoint("parent after memset(A, 0xff, 2 MiB)");
		pm_note("parent A+0", A);
		r = read_pass(A, 2 * MiB, PGS);
		read_note("parent read after its memset", r);
	} else {
		r = read_pass(A, 2 * MiB, PGS);
		checkpoint("parent re-reads A after child's memset");
		read_note("parent re-read (expect zeros)", r);
		pm_note("parent A+0", A);
	}
	sync_send(p2c[1]);
	wait_child(pid);
	checkpoint("parent after child exited");
}
static void s8a(void) { s8_common(MADV_HUGEPAGE, 0); }
static void s8b(void) { s8_common(MADV_HUGEPAGE, 1); }
static void s8c(void) { s8_common(0, 0); }

/* 9: fork after write (real THP) */
static void s9_common(int child_writes)
{
	int p2c[2], c2p[2];
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	if (pipe(p2c) || pipe(c2p))
		return;
	baseline();
	A[0] = 0x11;
	checkpoint("parent after writing 1 byte at A (THP fault) before fork");
	pm_note("parent A+0", A);
	pid_t pid = probe_fork();
	if (pid == 0) {
		checkpoint("right after fork");
		pm_note("child A+0", A);
		if (child_writes) {
			A[PGS] = 0x22;
			checkpoint("after child writes 1 byte at A+4K");
			pm_note("child A+0", A);
			pm_note("child A+4K", A + PGS);
			sync_send(c2p[1]);
			sync_wait(p2c[0]);
		} else {
			sync_send(c2p[1]);
			sync_wait(p2c[0]);
			checkpoint("after parent wrote 1 byte at A+4K");
			pm_note("child A+0", A);
			pm_note("child A+4K", A + PGS);
			struct rd r = read_pass(A, 2 * MiB, PGS);
			read_note("child read (expect one 0x11 at A)", r);
		}
		child_exit();
	}
	sync_wait(c2p[0]);
	if (!child_writes) {
		checkpoint("parent after fork (child idle)");
		A[PGS] = 0x22;
		checkpoint("parent after writing 1 byte at A+4K");
		pm_note("parent A+0", A);
		pm_note("parent A+4K", A + PGS);
		pm_note("parent A+8K", A + 2 * PGS);
	} else {
		checkpoint("parent after child wrote A+4K");
		pm_note("parent A+0", A);
		pm_note("parent A+4K", A + PGS);
	}
	sync_send(p2c[1]);
	wait_child(pid);
	checkpoint("parent after child exited");
	pm_note("parent A+0", A);
	drop_caches2();
	checkpoint("parent after drop_caches=2");
	pm_note("parent A+0", A);
	pm_note("parent A+8K", A + 2 * PGS);
}
static void s9a(void) { s9_common(0); }
static void s9b(void) { s9_common(1); }

static void s10(void)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	baseline();
	struct rd r = read_pass(A, 2 * MiB, PGS);
	checkpoint("after reading A every 4 KiB");
	read_note("read", r);
	pm_note("A+0", A);
	int rc = mprotect(A, 2 * MiB, PROT_READ);
	checkpoint("after mprotect(A, 2 MiB, PROT_READ) rc=%d", rc);
	pm_note("A+0", A);
	rc = mprotect(A, 2 * MiB, PROT_READ | PROT_WRITE);
	checkpoint("after mprotect(A, 2 MiB, PROT_READ|PROT_WRITE) rc=%d", rc);
	pm_note("A+0", A);
	A[0] = 1;
	checkpoint("after writing 1 byte at A");
	pm_note("A+0", A);
}

static void s10b(void)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	baseline();
	A[0] = 1;
	checkpoint("after writing 1 byte at A (THP)");
	int rc = mprotect(A, 2 * MiB, PROT_READ);
	checkpoint("after mprotect(A, 2 MiB, PROT_READ) rc=%d", rc);
	pm_note("A+0", A);
	rc = mprotect(A, 2 * MiB, PROT_READ | PROT_WRITE);
	checkpoint("after mprotect(A, 2 MiB, PROT_READ|PROT_WRITE) rc=%d", rc);
	A[PGS] = 1;
	checkpoint("after writing 1 byte at A+4K");
	pm_note("A+0", A);
}

static void s11_common(int thp_first)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	baseline();
	if (thp_first) {
		A[0] = 1;
		checkpoint("after writing 1 byte at A (THP)");
	} else {
		struct rd r = read_pass(A, 2 * MiB, PGS);
		checkpoint("after reading A every 4 KiB");
		read_note("read", r);
	}
	pm_note("A+0", A);
	int rc = mprotect(A + PGS, PGS, PROT_READ);
	checkpoint("after mprotect(A+4K, 4K, PROT_READ) rc=%d", rc);
	pm_note("A+0", A);
	pm_note("A+4K", A + PGS);
	pm_note("A+8K", A + 2 * PGS);
	pm_note("A+1M", A + MiB);
	A[MiB] = 3;
	checkpoint("after writing 1 byte at A+1M");
	pm_note("A+1M", A + MiB);
	pm_note("A+1M+4K", A + MiB + PGS);
	struct rd r = read_pass(A, 2 * MiB, PGS);
	checkpoint("after re-reading A every 4 KiB");
	read_note("re-read", r);
}
static void s11a(void) { s11_common(0); }
static void s11b(void) { s11_common(1); }

static void s12_common(int thp_first)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	baseline();
	if (thp_first) {
		memset(A, 0x77, 2 * MiB);
		checkpoint("after memset(A, 0x77, 2 MiB) (THP)");
	} else {
		struct rd r = read_pass(A, 2 * MiB, PGS);
		checkpoint("after reading A every 4 KiB");
		read_note("read", r);
	}
	pm_note("A+0", A);
	int rc = madvise(A, 2 * MiB, MADV_DONTNEED);
	checkpoint("after madvise(A, 2 MiB, MADV_DONTNEED) rc=%d", rc);
	pm_note("A+0", A);
	struct rd r = read_pass(A, 2 * MiB, PGS);
	checkpoint("after re-reading A every 4 KiB");
	read_note("re-read", r);
	pm_note("A+0", A);
}
static void s12a(void) { s12_common(0); }
static void s12b(void) { s12_common(1); }

static void s13_common(int thp_first)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	baseline();
	if (thp_first) {
		memset(A, 0x77, 2 * MiB);
		checkpoint("after memset(A, 0x77, 2 MiB) (THP)");
	} else {
		struct rd r = read_pass(A, 2 * MiB, PGS);
		checkpoint("after reading A every 4 KiB");
		read_note("read", r);
	}
	pm_note("A+0", A);
	int rc = madvise(A, PGS, MADV_DONTNEED);
	checkpoint("after madvise(A, 4K, MADV_DONTNEED) rc=%d", rc);
	pm_note("A+0", A);
	pm_note("A+4K", A + PGS);
	unsigned char v0 = *(volatile unsigned char *)A;
	checkpoint("after reading 1 byte at A (value 0x%02x)", v0);
	pm_note("A+0", A);
	unsigned char v1 = *(volatile unsigned char *)(A + PGS);
	checkpoint("after reading 1 byte at A+4K (value 0x%02x)", v1);
	pm_note("A+4K", A + PGS);
	drop_caches2();
	checkpoint("after drop_caches=2");
	pm_note("A+4K", A + PGS);
}
static void s13a(void) { s13_common(0); }
static void s13b(void) { s13_common(1); }

static void s14a(void)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	baseline();
	struct rd r = read_pass(A, 2 * MiB, PGS);
	checkpoint("after reading A every 4 KiB");
	read_note("read", r);
	int rc = munmap(A, PGS);
	checkpoint("after munmap(A, 4K) rc=%d", rc);
	pm_note("A+4K", A + PGS);
	r = read_pass(A + PGS, 2 * MiB - PGS, PGS);
	checkpoint("after re-reading A+4K..A+2M every 4 KiB");
	read_note("re-read", r);
	drop_caches2();
	checkpoint("after drop_caches=2");
}

static void s14b(void)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	baseline();
	memset(A, 0x77, 2 * MiB);
	checkpoint("after memset(A, 0x77, 2 MiB) (THP)");
	pm_note("A+1M", A + MiB);
	int rc = munmap(A, MiB);
	checkpoint("after munmap(A, 1 MiB) rc=%d", rc);
	pm_note("A+1M", A + MiB);
	drop_caches2();
	checkpoint("after drop_caches=2");
	pm_note("A+1M", A + MiB);
	pm_note("A+1M+4K", A + MiB + PGS);
	struct rd r = read_pass(A + MiB, MiB, PGS);
	read_note("remaining half (expect all 0x77)", r);
}

/* 15: mremap */
static void s15_common(int thp_first, size_t dst_off)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	size_t dlen = 6 * MiB;
	char *db = mmap(NULL, dlen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *D = (char *)(((uintptr_t)db + HPS - 1) & ~(HPS - 1));
	D += HPS; /* keep away from reservation edges */
	char *dst = D + dst_off;
	reg_add("dst", db, dlen, dst, 2 * MiB);
	baseline();
	if (thp_first) {
		memset(A, 0x77, 2 * MiB);
		checkpoint("after memset(A, 0x77, 2 MiB) (THP)");
	} else {
		struct rd r = read_pass(A, 2 * MiB, PGS);
		checkpoint("after reading A every 4 KiB");
		read_note("read", r);
	}
	pm_note("A+0", A);
	char *n = mremap(A, 2 * MiB, 2 * MiB, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	checkpoint("after mremap(A, 2M, 2M, MAYMOVE|FIXED, dst = 2MiB-aligned%s) -> %s",
		   dst_off ? " + 4K" : "", n == MAP_FAILED ? strerror(errno) : (n == dst ? "ok" : "moved elsewhere"));
	if (n == MAP_FAILED)
		return;
	pm_note("dst+0", dst);
	pm_note("dst+4K", dst + PGS);
	struct rd r = read_pass(dst, 2 * MiB, PGS);
	checkpoint("after reading dst every 4 KiB");
	read_note("dst read", r);
	dst[8 * KiB] = 1;
	checkpoint("after writing 1 byte at dst+8K");
	pm_note("dst+0", dst);
	pm_note("dst+8K", dst + 8 * KiB);
	drop_caches2();
	checkpoint("after drop_caches=2");
}
static void s15a(void) { s15_common(0, 0); }
static void s15b(void) { s15_common(0, PGS); }
static void s15c(void) { s15_common(1, 0); }
static void s15d(void) { s15_common(1, PGS); }

static void s17_common(unsigned long flags, int write_first)
{
	int rc = prctl(PR_SET_THP_DISABLE, 1, flags, 0, 0);
	int e = errno;
	int g = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
	NOTE("prctl(PR_SET_THP_DISABLE, 1, 0x%lx) rc=%d%s%s; PR_GET_THP_DISABLE=%d", flags, rc,
	     rc ? " errno=" : "", rc ? strerror(e) : "", g);
	read_file("/proc/self/status", sbuf, sizeof(sbuf));
	long long thpe = field_in(sbuf, sbuf + strlen(sbuf), "THP_enabled");
	NOTE("/proc/self/status THP_enabled: %lld", thpe);
	char *A = alloc_region("A", 4 * MiB, MADV_HUGEPAGE);
	baseline();
	if (write_first) {
		A[0] = 1;
		checkpoint("after writing 1 byte at A (no prior read)");
		pm_note("A+0", A);
		struct rd r = read_pass(A, 4 * MiB, PGS);
		checkpoint("after reading A every 4 KiB");
		read_note("read", r);
		pm_note("A+2M", A + HPS);
	} else {
		struct rd r = read_pass(A, 4 * MiB, PGS);
		checkpoint("after reading A every 4 KiB (4 MiB)");
		read_note("read", r);
		pm_note("A+0", A);
		A[0] = 1;
		checkpoint("after writing 1 byte at A");
		pm_note("A+0", A);
	}
}
static void s17a(void) { s17_common(0, 0); }
static void s17b(void) { s17_common(0, 1); }
static void s17c(void) { s17_common(PR_THP_DISABLE_EXCEPT_ADVISED, 0); }
static void s17d(void) { s17_common(PR_THP_DISABLE_EXCEPT_ADVISED, 1); }

/* 18: huge zero page lifecycle */
static uint64_t last_pfn;
static void hz_state(const char *what)
{
	char kb[300];
	if (!last_pfn) {
		NOTE("%s: no huge zero pfn known yet", what);
		return;
	}
	kpf_str(last_pfn, kb, sizeof(kb));
	NOTE("%s: pfn 0x%llx (last seen huge zero pfn): %s", what, (unsigned long long)last_pfn, kb);
}

static void s18(void)
{
	int pp[2], rp[2];
	if (pipe(pp) || pipe(rp))
		return;
	NOTE("thp_zero_page_alloc at scenario start (absolute): see first table, abs column");
	baseline();
	drop_caches2();
	checkpoint("step 1: drop_caches=2 (free an unused huge zero page, if any)");
	/* reader 1 */
	pid_t pid = probe_fork();
	if (pid == 0) {
		char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
		baseline();
		read_pass(A, 2 * MiB, PGS);
		checkpoint("reader 1: after reading A");
		uint64_t pfn = pm_note("reader 1 A+0", A);
		write_all(pp[1], (char *)&pfn, 8);
		child_exit();
	}
	while (read(pp[0], &last_pfn, 8) < 0 && errno == EINTR)
		;
	wait_child(pid);
	checkpoint("step 2: reader 1 read A and exited");
	hz_state("after reader 1 exit");

	pid = probe_fork();
	if (pid == 0) {
		char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
		baseline();
		read_pass(A, 2 * MiB, PGS);
		checkpoint("reader 2: after reading A");
		uint64_t pfn = pm_note("reader 2 A+0", A);
		write_all(pp[1], (char *)&pfn, 8);
		child_exit();
	}
	uint64_t pfn2 = 0;
	while (read(pp[0], &pfn2, 8) < 0 && errno == EINTR)
		;
	wait_child(pid);
	checkpoint("step 3: reader 2 (no drop_caches in between) read A and exited");
	NOTE("reader 2 pfn %s reader 1 pfn", pfn2 == last_pfn ? "==" : "!=");

	drop_caches2();
	checkpoint("step 4: drop_caches=2 with no user of the huge zero page");
	hz_state("after drop_caches");

	pid = probe_fork();
	if (pid == 0) {
		char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
		baseline();
		read_pass(A, 2 * MiB, PGS);
		checkpoint("reader 3: after reading A");
		uint64_t pfn = pm_note("reader 3 A+0", A);
		write_all(pp[1], (char *)&pfn, 8);
		sync_wait(rp[0]); /* hold the huge zero page */
		child_exit();
	}
	uint64_t pfn3 = 0;
	while (read(pp[0], &pfn3, 8) < 0 && errno == EINTR)
		;
	checkpoint("step 5: reader 3 (after drop_caches) read A and is holding it");
	NOTE("reader 3 pfn %s reader 1 pfn", pfn3 == last_pfn ? "==" : "!=");
	last_pfn = pfn3;
	drop_caches2();
	checkpoint("step 6: drop_caches=2 while reader 3 still maps the huge zero page");
	hz_state("after drop_caches while held");
	sync_send(rp[1]);
	wait_child(pid);
	checkpoint("step 7: reader 3 exited");
	hz_state("after reader 3 exit (no drop_caches)");
	drop_caches2();
	checkpoint("step 8: drop_caches=2 after reader 3 exited");
	hz_state("after final drop_caches");
}

static void s19(void)
{
	char *A = alloc_region("A", 8 * MiB, MADV_HUGEPAGE);
	baseline();
	write_pass(A, 8 * MiB, HPS, 0x33);
	checkpoint("after writing 1 byte into each 2 MiB of A (8 MiB)");
	int rc = munmap(A + 3 * MiB + 512 * KiB, MiB);
	checkpoint("after munmap(A+3.5M, 1 MiB) (straddles THP #1 and #2) rc=%d", rc);
	pm_note("A+2M", A + 2 * MiB);
	pm_note("A+4.5M", A + 4 * MiB + 512 * KiB);
	drop_caches2();
	checkpoint("after drop_caches=2");
	pm_note("A+2M", A + 2 * MiB);
	pm_note("A+4.5M", A + 4 * MiB + 512 * KiB);
	pm_note("A+0 (untouched THP #0)", A);
}

static void s20_common(int thp_first)
{
	char *A = alloc_region("A", 2 * MiB, MADV_HUGEPAGE);
	baseline();
	if (thp_first) {
		memset(A, 0x77, 2 * MiB);
		checkpoint("after memset(A, 0x77, 2 MiB) (THP)");
	} else {
		struct rd r = read_pass(A, 2 * MiB, PGS);
		checkpoint("after reading A every 4 KiB");
		read_note("read", r);
	}
	pm_note("A+0", A);
	int rc = madvise(A, 2 * MiB, MADV_FREE);
	checkpoint("after madvise(A, 2 MiB, MADV_FREE) rc=%d", rc);
	pm_note("A+0", A);
	rc = madvise(A, PGS, MADV_FREE);
	checkpoint("after madvise(A, 4K, MADV_FREE) rc=%d", rc);
	pm_note("A+0", A);
	pm_note("A+4K", A + PGS);
	struct rd r = read_pass(A, 2 * MiB, PGS);
	checkpoint("after re-reading A every 4 KiB");
	read_note("re-read", r);
	drop_caches2();
	checkpoint("after drop_caches=2");
	pm_note("A+0", A);
}
static void s20a(void) { s20_common(0); }
static void s20b(void) { s20_common(1); }

static void s21_common(int adv, int write)
{
	char *A = alloc_region("A", 4 * MiB, adv);
	baseline();
	if (write) {
		write_pass(A, 4 * MiB, PGS, 9);
		checkpoint("after writing 1 byte every 4 KiB of A (4 MiB)");
	} else {
		struct rd r = read_pass(A, 4 * MiB, PGS);
		checkpoint("after reading 1 byte every 4 KiB of A (4 MiB)");
		read_note("read", r);
	}
	int rc = madvise(A, 4 * MiB, MADV_DONTNEED);
	checkpoint("after madvise(A, 4 MiB, MADV_DONTNEED) rc=%d", rc);
	rc = munmap(A, 4 * MiB);
	checkpoint("after munmap(A, 4 MiB) rc=%d", rc);
}
static void s21a(void) { s21_common(MADV_HUGEPAGE, 0); }
static void s21b(void) { s21_common(0, 0); }
static void s21c(void) { s21_common(0, 1); }
static void s21d(void) { s21_common(MADV_HUGEPAGE, 1); }

/* timing */
static long long ns_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
static void t_common(int adv)
{
	size_t size = 200 * MiB;
	char *A = alloc_region("A", size, adv);
	baseline();
	long long t0 = ns_now();
	struct rd r = read_pass(A, size, PGS);
	long long t1 = ns_now();
	write_pass(A, size, HPS, 1);
	long long t2 = ns_now();
	checkpoint("after read pass (every 4 KiB) and write pass (every 2 MiB)");
	read_note("read pass", r);
	NOTE("TIMING read pass 200 MiB every 4 KiB: %lld us; write pass every 2 MiB: %lld us", (t1 - t0) / 1000,
	     (t2 - t1) / 1000);
}
static void tA(void) { t_common(MADV_HUGEPAGE); }
static void tB(void) { t_common(0); }

struct scen {
	const char *id;
	void (*fn)(void);
	int reps;
	const char *title;
	int nokeeper;	/* run without the huge-zero-page keeper process */
};
static const struct scen scens[] = {
	{ "1", s1, 3, "read one byte every 4 KiB of A (4 MiB, MADV_HUGEPAGE)" },
	{ "2", s2, 3, "scenario 1, then write one byte at A" },
	{ "3", s3, 3, "write first (no read), then read the rest" },
	{ "4a", s4a, 3, "cover-letter program: posix_memalign(2 MiB, 200 MiB) + MADV_HUGEPAGE; read every 4 KiB, write every 2 MiB" },
	{ "4b", s4b, 3, "cover-letter program, mmap+align variant, MADV_HUGEPAGE" },
	{ "4c", s4c, 3, "cover-letter program, mmap+align, no madvise (THP off for region in madvise mode)" },
	{ "4d", s4d, 3, "cover-letter program, mmap+align, MADV_NOHUGEPAGE" },
	{ "4e", s4e, 3, "cover-letter program, posix_memalign, no madvise" },
	{ "5", s5, 3, "region without madvise (4 MiB): read, write one byte, write every 4 KiB" },
	{ "6a", s6a, 3, "3 MiB VMA at aligned+512K (no aligned 2 MiB window), MADV_HUGEPAGE: read, write" },
	{ "6b", s6b, 3, "2 MiB VMA at aligned+1M, MADV_HUGEPAGE: read, write" },
	{ "7", s7, 3, "two MADV_HUGEPAGE regions read in one process (+ a non-THP region for the 4K zero page)" },
	{ "8a", s8a, 3, "fork after reading A (huge zero); child reads; parent memset 0xff; child re-reads" },
	{ "8b", s8b, 3, "fork after reading A (huge zero); child memsets 0xff; parent re-reads" },
	{ "8c", s8c, 3, "as 8a but A without madvise (4K zero pages)" },
	{ "9a", s9a, 3, "fork after writing A (real THP); parent writes 1 byte at A+4K" },
	{ "9b", s9b, 3, "fork after writing A (real THP); child writes 1 byte at A+4K" },
	{ "10", s10, 3, "mprotect whole 2 MiB RO then RW on huge zero PMD; then write" },
	{ "10b", s10b, 3, "mprotect whole 2 MiB RO then RW on a real THP; then write" },
	{ "11a", s11a, 3, "mprotect(A+4K, 4K, RO) on huge zero PMD; write A+1M" },
	{ "11b", s11b, 3, "mprotect(A+4K, 4K, RO) on a real THP; write A+1M" },
	{ "12a", s12a, 3, "MADV_DONTNEED whole 2 MiB after read (huge zero), re-read" },
	{ "12b", s12b, 3, "MADV_DONTNEED whole 2 MiB on a real THP, re-read" },
	{ "13a", s13a, 3, "MADV_DONTNEED(A, 4K) after read (huge zero); re-read A, A+4K; drop_caches" },
	{ "13b", s13b, 3, "MADV_DONTNEED(A, 4K) on a real THP; re-read A, A+4K; drop_caches" },
	{ "14a", s14a, 3, "munmap first 4K after read (huge zero)" },
	{ "14b", s14b, 3, "munmap first half (1 MiB) of a real THP; drop_caches=2" },
	{ "15a", s15a, 3, "mremap huge-zero-mapped 2 MiB to aligned dst; read; write" },
	{ "15b", s15b, 3, "mremap huge-zero-mapped 2 MiB to dst = aligned+4K; read; write" },
	{ "15c", s15c, 3, "mremap real THP to aligned dst; read; write" },
	{ "15d", s15d, 3, "mremap real THP to dst = aligned+4K; read; write" },
	{ "16", s16, 3, "MADV_NOHUGEPAGE region (4 MiB): read, write one byte, write every 4 KiB" },
	{ "17a", s17a, 3, "prctl(PR_SET_THP_DISABLE,1): scenario 1 then write" },
	{ "17b", s17b, 3, "prctl(PR_SET_THP_DISABLE,1): scenario 3 (write first)" },
	{ "17c", s17c, 3, "prctl(PR_SET_THP_DISABLE,1,PR_THP_DISABLE_EXCEPT_ADVISED): read then write" },
	{ "17d", s17d, 3, "prctl(PR_SET_THP_DISABLE,1,PR_THP_DISABLE_EXCEPT_ADVISED): write first" },
	{ "18", s18, 3, "huge zero page lifecycle vs. shrinker (drop_caches=2)", 1 },
	{ "19", s19, 3, "write 1 byte per 2 MiB of 8 MiB (4 THPs); munmap 1 MiB in the middle; drop_caches" },
	{ "20a", s20a, 3, "MADV_FREE on huge-zero-mapped 2 MiB (whole, then 4K)" },
	{ "20b", s20b, 3, "MADV_FREE on a real THP (whole, then 4K)" },
	{ "21a", s21a, 3, "VmPTE: read 4 MiB with MADV_HUGEPAGE; DONTNEED; munmap" },
	{ "21b", s21b, 3, "VmPTE: read 4 MiB without madvise; DONTNEED; munmap" },
	{ "21c", s21c, 3, "VmPTE: write every 4 KiB of 4 MiB without madvise; DONTNEED; munmap" },
	{ "21d", s21d, 3, "VmPTE: write every 4 KiB of 4 MiB with MADV_HUGEPAGE; DONTNEED; munmap" },
	{ "T1", tA, 5, "timing: 200 MiB read pass / write pass with MADV_HUGEPAGE" },
	{ "T2", tB, 5, "timing: 200 MiB read pass / write pass without madvise" },
};
#define NSCEN (int)(sizeof(scens) / sizeof(scens[0]))

/* ------------------------------------------------------------------ */
/* orchestrator: collect records, render markdown                      */
/* ------------------------------------------------------------------ */
#define MAXREP 8
#define RBUF (4 << 20)
static char *repbuf[MAXREP];
static size_t replen[MAXREP];

/* always-shown metrics (others shown when any delta != 0) */
static const char *always[] = {
	"vmstat.pgfault", "vmstat.nr_anon_pages", "vmstat.nr_anon_transparent_hugepages",
	"vmstat.thp_fault_alloc", "vmstat.thp_split_pmd", "vmstat.thp_zero_page_alloc",
	"smaps_rollup.Rss", "smaps_rollup.AnonHugePages", "status.VmRSS", "status.RssAnon",
	"status.VmPTE", "rusage.minflt",
};

static int is_always(const char *m)
{
	for (unsigned i = 0; i < sizeof(always) / sizeof(always[0]); i++)
		if (!strcmp(always[i], m))
			return 1;
	if (!strncmp(m, "region[", 7) &&
	    (strstr(m, "].Rss") || strstr(m, "].AnonHugePages") || strstr(m, "].nr_vmas")))
		return 1;
	return 0;
}

/* line iterator over one rep buffer: list of lines */
struct lines { char **l; int n; };
static struct lines split_lines(char *b, size_t len)
{
	struct lines L;
	int cnt = 0;
	for (size_t i = 0; i < len; i++)
		if (b[i] == '\n')
			cnt++;
	L.l = calloc((size_t)cnt + 1, sizeof(char *));
	L.n = 0;
	char *p = b;
	for (size_t i = 0; i < len; i++)
		if (b[i] == '\n') {
			b[i] = 0;
			L.l[L.n++] = p;
			p = b + i + 1;
		}
	return L;
}

/* render a cell: identical across reps -> single value, else v1 / v2 / v3 */
static void cell(char **vals, int nrep, char *out, size_t cap)
{
	int same = 1;
	for (int r = 1; r < nrep; r++)
		if (strcmp(vals[r], vals[0]))
			same = 0;
	if (same) {
		snprintf(out, cap, "%s", vals[0]);
		return;
	}
	size_t L = 0;
	out[0] = 0;
	for (int r = 0; r < nrep; r++)
		L += (size_t)snprintf(out + L, cap - L, "%s%s", r ? " / " : "", vals[r]);
}

static void render(const struct scen *s, int nrep)
{
	struct lines L[MAXREP];
	for (int r = 0; r < nrep; r++)
		L[r] = split_lines(repbuf[r], replen[r]);
	printf("\n### Scenario %s — %s\n\n", s->id, s->title);
	/* preamble notes (before first checkpoint) */
	int idx[MAXREP] = { 0 };
	for (;;) {
		/* gather segment for each rep: optional C line then V/N lines until next C */
		int have = 0;
		char *label[MAXREP];
		int segs[MAXREP], sege[MAXREP];
		for (int r = 0; r < nrep; r++) {
			label[r] = NULL;
			segs[r] = idx[r];
			if (idx[r] < L[r].n && L[r].l[idx[r]][0] == 'C') {
				label[r] = L[r].l[idx[r]] + 2;
				idx[r]++;
				segs[r] = idx[r];
			}
			while (idx[r] < L[r].n && L[r].l[idx[r]][0] != 'C')
				idx[r]++;
			sege[r] = idx[r];
			if (label[r] || sege[r] > segs[r])
				have = 1;
		}
		if (!have)
			break;
		if (label[0]) {
			printf("**%s**", label[0]);
			for (int r = 1; r < nrep; r++)
				if (!label[r] || strcmp(label[r], label[0]))
					printf(" (rep %d label differs: %s)", r + 1, label[r] ? label[r] : "none");
			printf("\n\n");
		}
		/* metrics table from rep 0 order */
		int printed_header = 0, hidden = 0;
		for (int i = segs[0]; i < sege[0]; i++) {
			char *ln = L[0].l[i];
			if (ln[0] != 'V')
				continue;
			char name[200];
			const char *p = ln + 2, *bar = strchr(p, '|');
			snprintf(name, sizeof(name), "%.*s", (int)(bar - p), p);
			char *dv[MAXREP], *av[MAXREP];
			char dbuf[MAXREP][64], abuf[MAXREP][64];
			int anynz = 0;
			for (int r = 0; r < nrep; r++) {
				strcpy(dbuf[r], "?");
				strcpy(abuf[r], "?");
				for (int j = segs[r]; j < sege[r]; j++) {
					char *l2 = L[r].l[j];
					if (l2[0] == 'V' && !strncmp(l2 + 2, name, strlen(name)) &&
					    l2[2 + strlen(name)] == '|') {
						char *d = l2 + 3 + strlen(name);
						char *b2 = strchr(d, '|');
						snprintf(dbuf[r], 64, "%.*s", (int)(b2 - d), d);
						snprintf(abuf[r], 64, "%s", b2 + 1);
						break;
					}
				}
				if (strcmp(dbuf[r], "0"))
					anynz = 1;
				dv[r] = dbuf[r];
				av[r] = abuf[r];
			}
			if (!strcmp(name, "rusage.minflt_net") || !strcmp(name, "probe.housekeeping_faults")) {
				/* show only when housekeeping faults happened */
				int hz = 0;
				for (int r = 0; r < nrep; r++) {
					for (int j = segs[r]; j < sege[r]; j++) {
						char *l2 = L[r].l[j];
						if (!strncmp(l2, "V|probe.housekeeping_faults|", 28) && strncmp(l2 + 28, "0|", 2))
							hz = 1;
					}
				}
				if (!hz)
					continue;
			} else if (!anynz && !is_always(name)) {
				hidden++;
				continue;
			}
			if (!printed_header) {
				printf("| metric | Δ vs baseline | absolute |\n|---|---|---|\n");
				printed_header = 1;
			}
			char c1[300], c2[300];
			cell(dv, nrep, c1, sizeof(c1));
			cell(av, nrep, c2, sizeof(c2));
			printf("| %s | %s | %s |\n", name, c1, c2);
		}
		if (printed_header)
			printf("\n(%d other tracked metrics: Δ = 0 in all reps)\n\n", hidden);
		/* notes */
		for (int i = segs[0]; i < sege[0]; i++) {
			char *ln = L[0].l[i];
			if (ln[0] != 'N')
				continue;
			/* position k among notes */
			int k = 0;
			for (int j = segs[0]; j < i; j++)
				if (L[0].l[j][0] == 'N')
					k++;
			char *nv[MAXREP];
			int same = 1;
			for (int r = 0; r < nrep; r++) {
				nv[r] = "(missing)";
				int kk = 0;
				for (int j = segs[r]; j < sege[r]; j++)
					if (L[r].l[j][0] == 'N') {
						if (kk == k) {
							nv[r] = L[r].l[j] + 2;
							break;
						}
						kk++;
					}
				if (strcmp(nv[r], nv[0]))
					same = 0;
			}
			if (same)
				printf("- %s\n", nv[0]);
			else
				for (int r = 0; r < nrep; r++)
					printf("- rep %d: %s\n", r + 1, nv[r]);
		}
		printf("\n");
	}
	for (int r = 0; r < nrep; r++)
		free(L[r].l);
	fflush(stdout);
}

/* keeper: a process that maps the huge zero page and sleeps, so that the
 * drop_caches=2 steps of one scenario do not free the huge zero page and
 * make thp_zero_page_alloc deltas depend on scenario order. */
static pid_t keeper_pid;
static void keeper_start(void)
{
	if (keeper_pid)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		char *b = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *a = (char *)(((uintptr_t)b + HPS - 1) & ~(HPS - 1));
		madvise(a, HPS, MADV_HUGEPAGE);
		(void)*(volatile char *)a;
		for (;;)
			pause();
	}
	keeper_pid = pid;
	usleep(100000);
}
static void keeper_stop(void)
{
	if (!keeper_pid)
		return;
	kill(keeper_pid, SIGKILL);
	waitpid(keeper_pid, NULL, 0);
	keeper_pid = 0;
}

static void run_scen(const struct scen *s, int reps_override)
{
	if (s->nokeeper)
		keeper_stop();
	else
		keeper_start();
	printf("\n<!-- keeper process holding the huge zero page during this scenario: %s -->\n",
	       keeper_pid ? "yes" : "no");
	int nrep = reps_override ? reps_override : s->reps;
	if (nrep > MAXREP)
		nrep = MAXREP;
	for (int r = 0; r < nrep; r++) {
		int pfd[2];
		if (pipe(pfd)) {
			perror("pipe");
			exit(1);
		}
		pid_t pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			outfd = pfd[1];
			for (int i = 0; i < MAXREG; i++)
				regs[i].used = 0;
			warm();
			s->fn();
			_exit(0);
		}
		close(pfd[1]);
		replen[r] = 0;
		for (;;) {
			ssize_t n = read(pfd[0], repbuf[r] + replen[r], RBUF - 1 - replen[r]);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			replen[r] += (size_t)n;
		}
		close(pfd[0]);
		int st;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			char msg[100];
			int m = snprintf(msg, sizeof(msg), "N|scenario process ended abnormally: status 0x%x\n", st);
			memcpy(repbuf[r] + replen[r], msg, (size_t)m);
			replen[r] += (size_t)m;
		}
		usleep(200000);
	}
	render(s, nrep);
}

int main(int argc, char **argv)
{
	int reps = 0, opt;
	while ((opt = getopt(argc, argv, "r:l")) != -1) {
		if (opt == 'r')
			reps = atoi(optarg);
		else if (opt == 'l') {
			for (int i = 0; i < NSCEN; i++)
				printf("%-4s %s\n", scens[i].id, scens[i].title);
			return 0;
		}
	}
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	vm_discover();
	for (int r = 0; r < MAXREP; r++) {
		repbuf[r] = mmap(NULL, RBUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		madvise(repbuf[r], RBUF, MADV_DONTFORK);
		memset(repbuf[r], 0, RBUF);
	}
	struct utsname u;
	uname(&u);
	{
		long long v[MAXVM];
		vm_read(v);
		printf("<!-- probe start: %s %s; vmstat:", u.release, u.machine);
		for (int i = 0; i < nvm; i++)
			if (v[i])
				printf(" %s=%lld", vm_names[i], v[i]);
		printf(" -->\n");
	}
	{
		long long v[MAXVM];
		vm_read(v);
		for (int i = 0; i < nvm; i++)
			if (!strcmp(vm_names[i], "thp_zero_page_alloc"))
				printf("<!-- thp_zero_page_alloc before keeper start: %lld -->\n", v[i]);
		keeper_start();
		vm_read(v);
		for (int i = 0; i < nvm; i++)
			if (!strcmp(vm_names[i], "thp_zero_page_alloc"))
				printf("<!-- thp_zero_page_alloc after keeper start: %lld -->\n", v[i]);
	}
	if (optind >= argc) {
		for (int i = 0; i < NSCEN; i++)
			run_scen(&scens[i], scens[i].id[0] == 'T' ? 0 : reps);
	} else {
		for (int a = optind; a < argc; a++) {
			int found = 0;
			for (int i = 0; i < NSCEN; i++)
				if (!strcmp(scens[i].id, argv[a])) {
					run_scen(&scens[i], reps);
					found = 1;
				}
			if (!found)
				fprintf(stderr, "unknown scenario %s\n", argv[a]);
		}
	}
	keeper_stop();
	return 0;
}
