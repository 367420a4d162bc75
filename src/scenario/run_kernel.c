/*
 * run_kernel.c - running a scenario on the running Linux kernel with real
 * system calls, measuring what /proc says (docs/scenarios.md, "On the
 * kernel"; what cannot be compared is in docs/divergences.md).
 *
 * A controller (this process) parses nothing new: it forks one worker per
 * scenario process and drives each over a socket; a worker executes the
 * scenario's steps itself (it inherited the parsed scenario) and answers
 * with its figures.  Real fork(): the "fork" step forks the worker, and the
 * child becomes the worker of the new process.
 *
 * Keeping the runner out of the figures:
 *  - before its baseline, a worker touches every page of its own mappings
 *    (reading read-only ones, writing back writable private ones) and grows
 *    its stack, so executing the steps faults nothing of its own; after a
 *    fork both sides do it again, so the runner's pages are private again;
 *  - a worker counts page faults (getrusage minflt) around each step's
 *    system calls and memory accesses only: "vmstat pgfault" is their sum;
 *  - per-process figures are changes from the first worker's baseline.
 *
 * Settings: the kernel's THP settings are never written.  A scenario's
 * "set transparent_hugepage/enabled" is emulated (always: MADV_HUGEPAGE on
 * every mapping; never: PR_SET_THP_DISABLE; madvise on an "always" machine:
 * MADV_NOHUGEPAGE on every mapping); any other knob must already have the
 * scenario's value, or the scenario is skipped with the reason.  (Inside a
 * check-kernels guest, and only there, guest.c writes them: docs/kernels.md.)
 *
 * The kernel's profile (util/kprofile.h, detected by the caller) stands for
 * the thpsim/ knobs: a scenario's thpsim/ setting must agree with it, and
 * its "when" guards are read against it.  A vmstat item this kernel does
 * not have is not compared, with that reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "verbs.h"

/* How long a "khugepaged scans=N" step may wait for khugepaged. */
#define KHUGEPAGED_TIMEOUT_MS 30000

#include "scenario.h"
#include "util/json.h"
#include "util/kprofile.h"
#include "util/sysfile.h"

#define SYS_MM "/sys/kernel/mm/"
#define SYS_THP SYS_MM "transparent_hugepage/"

enum { EMU_NONE, EMU_HUGEPAGE, EMU_NOHUGEPAGE, EMU_DISABLE };

enum cmd_op { CMD_STEP, CMD_FIGS, CMD_PAGE, CMD_QUIT };

struct cmd {
	int op;
	int step;
	int region;
	uint64_t off;
};

struct reply {
	int err;
	int pid;           /* fork: the child's */
	int64_t minflt;
	uint64_t mismatches;
	int page_state;
	int page_valid;
	int64_t fig[THPS_NR_PROC_ITEMS];
};

struct worker {
	int idx;                /* scenario process */
	int fd;                 /* our end of the socket */
	int emulate;            /* EMU_* applied to each new mapping */
	int stack_nohugepage;   /* the profile's thpsim/map_stack_nohugepage */
	const struct scenario *s;
	uint64_t addr[SCN_MAX_REGIONS];
	uint64_t len[SCN_MAX_REGIONS];
	/* every range the scenario mapped or moved memory to: what is not the
	 * runner's own (a partial mremap leaves a region in two places) */
	uint64_t span_start[2 * SCN_MAX_REGIONS + 64], span_len[2 * SCN_MAX_REGIONS + 64];
	int nspans;
	int is_root;
	/* the 1 GiB (PMD table) and 512 GiB (PUD table) ranges believed to
	 * have a table: see upper_tables */
	uint64_t tabled[256];
	uint8_t tabled_level[256];
	int ntabled;
};

/* ---- small helpers that allocate nothing (workers must not fault) ---- */


/* The value after "key:" (or "key " in /proc/vmstat) on its own line. */
static int find_field(const char *buf, const char *key, char sep, int64_t *out)
{
	size_t k = strlen(key);

	for (const char *p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, key, k) && p[k] == sep) {
			const char *q = p + k + 1;

			while (*q == ' ' || *q == '\t')
				q++;
			*out = strtoll(q, NULL, 10);
			return 0;
		}
	}
	return -1;
}

static int64_t minflt_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

static int send_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		/* a dead peer is an error here, not SIGPIPE */
		ssize_t n = send(fd, c, len, MSG_NOSIGNAL);

		if (n <= 0)
			return -1;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

static int recv_all(int fd, void *p, size_t len)
{
	char *c = p;

	while (len) {
		ssize_t n = read(fd, c, len);

		if (n <= 0)
			return -1;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * ---- a worker that dies (kill -9, the OOM killer, a fault) ----
 * The controller sees a worker's death as the end of its socket only when
 * no other process holds the worker's end: the controller closes every
 * worker end once the first worker has them, and each fork gives its
 * child the ends of the child's own subtree of processes (those it will
 * fork) and keeps the rest.  Workers are forked with CLONE_PARENT, so the
 * controller is every worker's parent and can say which signal ended it.
 */

/* p is root or a process root forks, directly or not. */
static int in_subtree(const struct scenario *s, int p, int root)
{
	for (int hops = 0; hops <= SCN_MAX_PROCS; hops++) {
		int parent = -1;

		if (p == root)
			return 1;
		for (int i = 0; i < s->nsteps && parent < 0; i++)
			if (s->steps[i].op == SCN_FORK && s->steps[i].child == p)
				parent = s->steps[i].proc;
		if (parent < 0)
			return 0;
		p = parent;
	}
	return 0;
}

/* Close the worker ends of root's subtree (inside) or of the others. */
static void close_worker_ends(int (*socks)[2], const struct scenario *s, int root, int inside)
{
	for (int p = 0; p < s->nprocs; p++)
		if (in_subtree(s, p, root) == inside && socks[p][1] >= 0) {
			close(socks[p][1]);
			socks[p][1] = -1;
		}
}

/* How worker pid ended, as words for an error message; waits up to a
 * second for it to be reapable. */
static void worker_death(pid_t pid, char *out, size_t len)
{
	int st;

	for (int i = 0; i < 100; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG | __WALL);

		if (w == pid && WIFSIGNALED(st)) {
			snprintf(out, len, "its worker (pid %d) was killed by signal %d (SIG%s)%s",
				 (int)pid, WTERMSIG(st), sigabbrev_np(WTERMSIG(st)) ?: "?",
				 WTERMSIG(st) == SIGKILL ? ": kill -9, or the OOM killer (see "
							   "dmesg)" : "");
			return;
		}
		if (w == pid) {
			snprintf(out, len, "its worker (pid %d) exited with status %d", (int)pid,
				 WEXITSTATUS(st));
			return;
		}
		if (w < 0)
			break;
		usleep(10000);
	}
	snprintf(out, len, "its worker (pid %d) stopped answering", (int)pid);
}

/*
 * A scenario larger than the memory the machine has available would reach
 * the OOM killer, which may kill more than the worker: refuse it first.
 * What it can fault in is at most its reads and writes, each rounded up
 * to whole huge pages (a THP for a 4 KiB touch), copies after fork
 * included (they are writes of their own).  0, or -1 with r->error set.
 */
static int fits_in_memory(const struct scenario *s, struct scn_result *r)
{
	const uint64_t huge = THPS_HPAGE_PMD_SIZE;
	uint64_t need = 0;
	int64_t avail_kb;
	char buf[8192];

	for (int i = 0; i < s->nsteps; i++)
		if (s->steps[i].op == SCN_READ || s->steps[i].op == SCN_WRITE)
			need += (s->steps[i].len + huge - 1) / huge * huge + huge;
	if (sysfile_read("/proc/meminfo", buf, sizeof(buf)) <= 0 ||
	    find_field(buf, "MemAvailable", ':', &avail_kb) || avail_kb < 0)
		return 0; /* cannot tell: run it */
	if (need <= (uint64_t)avail_kb << 10)
		return 0;
	r->error = 1;
	snprintf(r->error_msg, sizeof(r->error_msg),
		 "%s: not run: it may touch up to %llu MiB (its reads and writes, in 2 MiB pages) "
		 "and this machine has %llu MiB available (MemAvailable); running it would wake "
		 "the OOM killer", s->path, (unsigned long long)(need >> 20),
		 (unsigned long long)(avail_kb >> 10));
	return -1;
}

/* ---- the worker ---- */
static char maps_buf[1 << 18];
static char smaps_buf[1 << 20];
static char proc_buf[1 << 14];

static int in_regions(const struct worker *w, uint64_t start, uint64_t end)
{
	for (int i = 0; i < w->nspans; i++)
		if (start < w->span_start[i] + w->span_len[i] && w->span_start[i] < end)
			return 1;
	return 0;
}

static void add_span(struct worker *w, uint64_t start, uint64_t len)
{
	if (w->nspans < (int)(sizeof(w->span_start) / sizeof(w->span_start[0]))) {
		w->span_start[w->nspans] = start;
		w->span_len[w->nspans++] = len;
	}
}

__attribute__((noinline)) static void grow_stack(void)
{
	volatile char pad[192 << 10];

	for (size_t i = 0; i < sizeof(pad); i += 4096)
		pad[i] = 0;
}

/* Each mapping of the runner's own (none of the scenario's regions), from
 * /proc/self/maps: fn(w, start, end, perms, line). */
static void for_each_own_mapping(const struct worker *w,
				 void (*fn)(const struct worker *w, unsigned long long start,
					    unsigned long long end, const char *perms,
					    const char *line))
{
	if (sysfile_read("/proc/self/maps", maps_buf, sizeof(maps_buf)) <= 0)
		return;
	for (char *line = maps_buf; line && *line;) {
		char *nl = strchr(line, '\n');
		unsigned long long start, end;
		char perms[8] = { 0 };

		if (nl)
			*nl = 0;
		if (sscanf(line, "%llx-%llx %4s", &start, &end, perms) == 3 &&
		    !in_regions(w, start, end))
			fn(w, start, end, perms, line);
		line = nl ? nl + 1 : NULL;
	}
}

/*
 * No THP of any size in the runner's own memory, before it touches any:
 * where a guest turns on 64 KiB folios, the runner's stack and heap would be
 * made of them, and after a fork their copy-on-write would queue them for
 * split, moving the hugepages-<size>kB/stats/ a scenario reads.  (Folios
 * already there stay; the stack is grown only after this.)
 */
static void no_thp(const struct worker *w, unsigned long long start, unsigned long long end,
		   const char *perms, const char *line)
{
	(void)w;
	(void)line;
	if (perms[1] == 'w' && perms[3] == 'p')
		madvise((void *)(uintptr_t)start, end - start, MADV_NOHUGEPAGE);
}

/* Fault in every page of one of the runner's mappings. */
static void touch_mapping(const struct worker *w, unsigned long long start, unsigned long long end,
			  const char *perms, const char *line)
{
	void *s0 = (void *)(uintptr_t)start;
	int ro_data;

	(void)w;
	if (perms[0] != 'r' || strstr(line, "[vvar") || strstr(line, "[vsyscall]"))
		return;
	/* read-only private file data (relro, rodata): copy it now, or after a
	 * fork it stays shared and moves between the processes' Private_* and
	 * Shared_* figures */
	ro_data = !strcmp(perms, "r--p") && strchr(line, '/');
	if (ro_data && mprotect(s0, end - start, PROT_READ | PROT_WRITE))
		ro_data = 0;
	for (unsigned long long a = start; a < end; a += 4096) {
		volatile uint8_t *p = (volatile uint8_t *)(uintptr_t)a;
		uint8_t v = *p;

		if ((perms[1] == 'w' && perms[3] == 'p') || ro_data)
			*p = v;
	}
	if (ro_data)
		mprotect(s0, end - start, PROT_READ);
}

/* Touch every page of the runner's own mappings, so that nothing the
 * worker does later faults except the scenario's own steps. */
static void warm(const struct worker *w)
{
	for_each_own_mapping(w, no_thp);
	grow_stack();
	for_each_own_mapping(w, touch_mapping);
}

/*
 * The PMD and PUD tables the process has, estimated: Linux allocates the
 * table of a 1 GiB (PMD) or 512 GiB (PUD) range at the first fault in it,
 * and munmap frees it once no mapping meets the range (free_pgtables).  A
 * mapping never touched has none: counting every range a mapping meets
 * once miscounted a region that was alone in its 1 GiB and never touched.
 * So a range is noted when a step reads or writes in it, when a mapping in
 * it has resident pages after a step (note_tables: fork and mremap make
 * tables too), or when mremap moves pages there from a noted range; it is
 * forgotten when no mapping meets it.
 */
static const uint8_t table_shift[] = { 30, 39 }; /* a PMD table's range, a PUD table's */

static int tabled_index(const struct worker *w, uint64_t g, uint8_t level)
{
	for (int i = 0; i < w->ntabled; i++)
		if (w->tabled[i] == g && w->tabled_level[i] == level)
			return i;
	return -1;
}

static void note_range(struct worker *w, uint64_t start, uint64_t end)
{
	for (uint8_t l = 0; l < 2; l++)
		for (uint64_t g = start >> table_shift[l]; g <= (end - 1) >> table_shift[l]; g++)
			if (tabled_index(w, g, l) < 0 &&
			    w->ntabled < (int)(sizeof(w->tabled) / sizeof(w->tabled[0]))) {
				w->tabled[w->ntabled] = g;
				w->tabled_level[w->ntabled++] = l;
			}
}

/* Whether a PMD table is noted under some of [start, end). */
static int range_noted(const struct worker *w, uint64_t start, uint64_t end)
{
	for (uint64_t g = start >> table_shift[0]; end > start && g <= (end - 1) >> table_shift[0];
	     g++)
		if (tabled_index(w, g, 0) >= 0)
			return 1;
	return 0;
}

/* Note the ranges of every mapping with resident pages (smaps' Rss).  A
 * range mapped by the zero page (4 kB or huge) only has an Rss of 0, so
 * the read and write steps note what they touch themselves.  Leaves
 * /proc/self/smaps in smaps_buf, unchanged; returns 0 when it cannot be
 * read. */
static int note_tables(struct worker *w)
{
	unsigned long long start = 0, end = 0;
	int have = 0;

	if (sysfile_read("/proc/self/smaps", smaps_buf, sizeof(smaps_buf)) <= 0)
		return 0;
	for (char *line = smaps_buf; line && *line;) {
		long long rss;

		if (sscanf(line, "%llx-%llx ", &start, &end) == 2)
			have = end <= (1ULL << 47);
		else if (have && sscanf(line, "Rss: %lld", &rss) == 1 && rss > 0)
			note_range(w, start, end);
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return 1;
}

/* The noted ranges some mapping still meets; the others are forgotten. */
static int64_t upper_tables(struct worker *w)
{
	uint8_t met[256] = { 0 };
	int64_t n = 0;
	int keep = 0;

	if (sysfile_read("/proc/self/maps", maps_buf, sizeof(maps_buf)) <= 0)
		return 0;
	for (char *line = maps_buf; line && *line;) {
		unsigned long long start, end;

		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && end <= (1ULL << 47))
			for (int i = 0; i < w->ntabled; i++) {
				uint8_t sh = table_shift[w->tabled_level[i]];

				if (start >> sh <= w->tabled[i] && w->tabled[i] <= (end - 1) >> sh)
					met[i] = 1;
			}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	for (int i = 0; i < w->ntabled; i++)
		if (met[i]) {
			w->tabled[keep] = w->tabled[i];
			w->tabled_level[keep++] = w->tabled_level[i];
			n++;
		}
	w->ntabled = keep;
	return n;
}

/*
 * A worker's figures.  The smaps_rollup fields (and VmRSS, RssAnon, which
 * equal Rss and Anonymous there) are summed over the VMAs of
 * /proc/self/smaps that meet the scenario's regions: the runner's own pages
 * never enter them, whatever a fork does to their sharing.  VmPTE and VmHWM
 * are the process's, and the caller counts them from a baseline.
 */
static void read_figures(struct worker *w, int64_t fig[THPS_NR_PROC_ITEMS])
{
	static const char *const smaps[] = { "Rss", "Pss", "Pss_Anon", "Shared_Clean",
					     "Shared_Dirty", "Private_Clean", "Private_Dirty",
					     "Anonymous", "AnonHugePages" };
	int in = 0;

	for (int i = 0; i < THPS_NR_PROC_ITEMS; i++)
		fig[i] = 0;
	if (note_tables(w)) { /* which read /proc/self/smaps */
		for (char *line = smaps_buf; line && *line;) {
			char *nl = strchr(line, '\n');
			unsigned long long start, end;
			char c;

			if (nl)
				*nl = 0;
			if (sscanf(line, "%llx-%llx %c", &start, &end, &c) == 3) {
				in = in_regions(w, start, end);
			} else if (in) {
				for (size_t i = 0; i < sizeof(smaps) / sizeof(smaps[0]); i++) {
					size_t n = strlen(smaps[i]);

					if (!strncmp(line, smaps[i], n) && line[n] == ':')
						for (int k = 0; k < THPS_NR_PROC_ITEMS; k++)
							if (!strcmp(thps_proc_item_name(k), smaps[i]))
								fig[k] += strtoll(line + n + 1, NULL, 10);
				}
			}
			line = nl ? nl + 1 : NULL;
		}
	}
	fig[THPS_PROC_VmRSS] = fig[THPS_PROC_Rss];
	fig[THPS_PROC_RssAnon] = fig[THPS_PROC_Anonymous];
	if (sysfile_read("/proc/self/status", proc_buf, sizeof(proc_buf)) > 0) {
		find_field(proc_buf, "VmHWM", ':', &fig[THPS_PROC_VmHWM]);
		find_field(proc_buf, "VmPTE", ':', &fig[THPS_PROC_VmPTE]);
		find_field(proc_buf, "VmSize", ':', &fig[THPS_PROC_VmSize]);
	}
	/* VmPTE in a scenario counts PTE tables only (as the model's run does) */
	fig[THPS_PROC_VmPTE] -= upper_tables(w) * 4;
}

/* What maps the page at addr: /proc/self/pagemap, then /proc/kpageflags. */
static void page_state(const struct worker *w, uint64_t addr, struct reply *rep)
{
	uint64_t e = 0, flags = 0, pfn;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

	rep->page_valid = 0;
	if (fd < 0)
		return;
	if (pread(fd, &e, 8, (off_t)((addr >> 12) * 8)) != 8) {
		close(fd);
		return;
	}
	close(fd);
	if (!(e >> 63)) {
		rep->page_state = PAGE_NONE;
		rep->page_valid = 1;
		return;
	}
	pfn = e & ((1ULL << 55) - 1);
	if (!w->is_root || !pfn)
		return; /* present, but only root sees the frame */
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (pread(fd, &flags, 8, (off_t)(pfn * 8)) == 8) {
		const uint64_t zero = 1ULL << 24, thp = 1ULL << 22;

		rep->page_valid = 1;
		if ((flags & zero) && (flags & thp))
			rep->page_state = PAGE_HUGE_ZERO;
		else if (flags & zero)
			rep->page_state = PAGE_ZERO;
		else if (flags & thp)
			rep->page_state = PAGE_THP;
		else
			rep->page_state = PAGE_SMALL;
	}
	close(fd);
}

static void apply_emulation(const struct worker *w, uint64_t a, uint64_t len)
{
	if (w->emulate == EMU_HUGEPAGE)
		madvise((void *)(uintptr_t)a, len, MADV_HUGEPAGE);
	else if (w->emulate == EMU_NOHUGEPAGE)
		madvise((void *)(uintptr_t)a, len, MADV_NOHUGEPAGE);
}

/* ---- the verbs' handlers in the worker (verbs.h) ---- */

/* The address of st's region in this worker (0 without one). */
static uint64_t region_addr(const struct worker *w, const struct scn_step *st)
{
	return st->region >= 0 ? w->addr[st->region] : 0;
}

static int sys_ret(int r)
{
	return r ? -errno : 0;
}

/* How many more times a worker's MADV_COLLAPSE is made after EAGAIN, 10 ms
 * apart (scn_worker_madvise). */
#define COLLAPSE_EAGAIN_TRIES 20

int scn_worker_mmap(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	int prot = st->prot, flags = MAP_PRIVATE | MAP_ANONYMOUS | (st->stack ? MAP_STACK : 0);
	void *p;
	uint64_t a;

	(void)rep;
	if (st->flags) {
		p = mmap((void *)(uintptr_t)(w->addr[st->region2] + st->off2), st->len, prot,
			 flags | MAP_FIXED, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		a = (uint64_t)(uintptr_t)p;
	} else if (st->align > 4096) {
		/* Reserve whole aligned blocks, so that no page table under the
		 * region is shared with a mapping of the runner's: a 1 MiB
		 * region aligned to 2 MiB placed just below a library would
		 * find its PTE table there already, and VmPTE would miss it
		 * (the model's regions share no table with anything).  The
		 * blocks are reserved without access, which commits no memory
		 * (a 2 GiB writable reservation fails in a 2 GiB guest), and the
		 * region is mapped over them.
		 *
		 * After the region lie `align` free bytes, as in the model:
		 * a scenario may map there (fixed=A+LEN, the next region
		 * butting against this one).  A kernel that places the
		 * reservation on the boundary leaves them (the tail of the
		 * reservation); one that does not (Linux before 6.7 never
		 * does, later ones only for multiples of 2 MiB:
		 * thpsim/anon_thp_align) leaves less, and a fixed= mapping
		 * past the end would replace the runner's own memory above
		 * it: on 6.1 the PTE table it shared with that memory kept
		 * the huge zero page out and VmPTE 4 kB short.  So there the
		 * reservation is one block longer, and what lies beyond the
		 * free bytes stays reserved. */
		uint64_t aligned, keep, round = (st->len + st->align - 1) & ~(st->align - 1);
		uint64_t span = round + st->align;

		p = mmap(NULL, span, PROT_NONE, flags | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		a = (uint64_t)(uintptr_t)p;
		if (a & (st->align - 1)) {
			munmap(p, span);
			span += st->align;
			p = mmap(NULL, span, PROT_NONE, flags | MAP_NORESERVE, -1, 0);
			if (p == MAP_FAILED)
				return -errno;
			a = (uint64_t)(uintptr_t)p;
		}
		aligned = (a + st->align - 1) & ~(st->align - 1);
		keep = aligned + round + st->align;
		if (mmap((void *)(uintptr_t)aligned, st->len, prot, flags | MAP_FIXED, -1, 0) ==
		    MAP_FAILED) {
			int err = errno;

			munmap(p, span);
			return -err;
		}
		if (aligned > a)
			munmap(p, aligned - a);
		munmap((void *)(uintptr_t)(aligned + st->len), keep - aligned - st->len);
		a = aligned;
	} else {
		p = mmap(NULL, st->len, prot, flags, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		a = (uint64_t)(uintptr_t)p;
	}
	w->addr[st->region] = a;
	w->len[st->region] = st->len;
	add_span(w, a, st->len);
	/* an emulated "always" leaves a MAP_STACK mapping alone where the
	 * kernel gives it VM_NOHUGEPAGE, as a real "always" does */
	if (!st->stack || w->emulate != EMU_HUGEPAGE || !w->stack_nohugepage)
		apply_emulation(w, a, st->len);
	return 0;
}

int scn_worker_munmap(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	(void)rep;
	return sys_ret(munmap((void *)(uintptr_t)(region_addr(w, st) + st->off), st->len));
}

int scn_worker_mprotect(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	(void)rep;
	return sys_ret(mprotect((void *)(uintptr_t)(region_addr(w, st) + st->off), st->len,
				st->prot));
}

int scn_worker_madvise(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	int adv = st->advice == THPS_MADV_DONTNEED ? MADV_DONTNEED :
		  st->advice == THPS_MADV_FREE ? MADV_FREE :
		  st->advice == THPS_MADV_HUGEPAGE ? MADV_HUGEPAGE :
		  st->advice == THPS_MADV_NOHUGEPAGE ? MADV_NOHUGEPAGE :
		  st->advice == THPS_MADV_COLLAPSE ? THPS_MADV_COLLAPSE /* 25, Linux 6.1+ */ :
						      MADV_NORMAL;
	void *addr = (void *)(uintptr_t)(region_addr(w, st) + st->off);
	int ret = madvise(addr, st->len, adv);

	(void)rep;
	/* MADV_COLLAPSE fails with EAGAIN when a page holds a reference no
	 * mapping explains, or is locked or off the LRU for a moment
	 * (madvise_collapse_errno; Linux commit ae63c898f400 chose EAGAIN so
	 * that userspace tries again).  Another process's work on the host
	 * makes such moments; the model has none, so the kernel side tries
	 * again as a program would, unless the scenario asks for that EAGAIN.
	 * Ranges collapsed by a failed call stay collapsed and count once. */
	for (int tries = 0; ret && errno == EAGAIN && adv == THPS_MADV_COLLAPSE &&
			    !(st->has_err && st->err == EAGAIN) && tries < COLLAPSE_EAGAIN_TRIES;
	     tries++) {
		usleep(10000);
		ret = madvise(addr, st->len, adv);
	}
	return sys_ret(ret);
}

int scn_worker_mremap(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	int flags = ((st->flags & THPS_MREMAP_MAYMOVE) ? MREMAP_MAYMOVE : 0) |
		    ((st->flags & THPS_MREMAP_FIXED) ? MREMAP_FIXED : 0);
	void *to = st->region2 >= 0 ? (void *)(uintptr_t)(w->addr[st->region2] + st->off2) : NULL;
	uint64_t from = region_addr(w, st);
	/* move_page_tables makes tables at the new place where the old had
	 * some, zero pages or not (see note_tables) */
	int had_tables = range_noted(w, from, from + st->len);
	void *p = mremap((void *)(uintptr_t)from, st->len, st->len2, flags, to);

	(void)rep;
	if (p == MAP_FAILED)
		return -errno;
	if (had_tables && p != (void *)(uintptr_t)from)
		note_range(w, (uint64_t)(uintptr_t)p, (uint64_t)(uintptr_t)p + st->len);
	w->addr[st->region] = (uint64_t)(uintptr_t)p;
	w->len[st->region] = st->len2;
	add_span(w, (uint64_t)(uintptr_t)p, st->len2);
	return 0;
}

int scn_worker_read(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	uint64_t a = region_addr(w, st), bad = 0;

	for (uint64_t o = 0; o < st->len; o += st->step)
		bad += *(volatile uint8_t *)(uintptr_t)(a + st->off + o) != st->value;
	rep->mismatches = bad;
	if (st->len)
		note_range(w, a + st->off, a + st->off + st->len);
	return 0;
}

int scn_worker_write(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	uint64_t a = region_addr(w, st);

	(void)rep;
	for (uint64_t o = 0; o < st->len; o += st->step)
		*(volatile uint8_t *)(uintptr_t)(a + st->off + o) = st->value;
	if (st->len)
		note_range(w, a + st->off, a + st->off + st->len);
	return 0;
}

int scn_worker_prctl(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	(void)w;
	(void)rep;
	return sys_ret(prctl(PR_SET_THP_DISABLE, st->value, 0, 0, 0));
}

int scn_worker_exit(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	(void)w;
	(void)st;
	(void)rep;
	_exit(0);
}

static void worker_loop(struct worker *w) __attribute__((noreturn));
static int (*worker_socks)[2];

/* fork step: the child becomes the worker of process st->child. */
int scn_worker_fork(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	int (*socks)[2] = worker_socks;
	/* a fork whose child's parent is the controller (see worker_death) */
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);

	if (pid < 0)
		return -errno;
	rep->pid = pid;
	close_worker_ends(socks, w->s, st->child, pid != 0);
	if (pid == 0) {
		struct reply ready = { 0 };

		w->idx = st->child;
		w->fd = socks[st->child][1];
		warm(w);
		send_all(w->fd, &ready, sizeof(ready));
		worker_loop(w);
	}
	warm(w); /* the runner's pages are shared with the child: copy them now */
	return 0;
}

/* Run one step; rep->minflt gets the faults it took. */
static void worker_step(struct worker *w, const struct scn_step *st, struct reply *rep)
{
	const struct scn_verb *v = scn_verb(st->op);
	int64_t f0 = minflt_now();

	rep->err = v && v->worker ? v->worker(w, st, rep) : 0;
	if (v && !(v->flags & SCN_VERB_NO_MINFLT))
		rep->minflt = minflt_now() - f0;
	if (!v || !(v->flags & SCN_VERB_INERT))
		note_tables(w); /* before a later step can zap what made a table */
}

static void worker_loop(struct worker *w)
{
	for (;;) {
		struct cmd c;
		struct reply rep;

		if (recv_all(w->fd, &c, sizeof(c)))
			_exit(0);
		memset(&rep, 0, sizeof(rep));
		switch (c.op) {
		case CMD_STEP:
			worker_step(w, &w->s->steps[c.step], &rep);
			break;
		case CMD_FIGS:
			read_figures(w, rep.fig);
			break;
		case CMD_PAGE:
			page_state(w, w->addr[c.region] + c.off, &rep);
			break;
		case CMD_QUIT:
			_exit(0);
		}
		if (send_all(w->fd, &rep, sizeof(rep)))
			_exit(1);
	}
}

/* ---- the controller ---- */
struct kernel_run {
	const struct scenario *s;
	struct scn_result *r;
	int socks[SCN_MAX_PROCS][2];
	pid_t pids[SCN_MAX_PROCS];
	int pidfd[SCN_MAX_PROCS]; /* to wait for a worker that is not our child */
	int alive[SCN_MAX_PROCS];
	int64_t base_fig[THPS_NR_PROC_ITEMS];
	int64_t vm_base[THPS_NR_VM_ITEMS];
	/* hugepages-<size>kB/stats/ at the start, -1 where this kernel has none */
	int64_t mthp_base[THPS_MTHP_MAX_ORDER + 1][THPS_NR_MTHP_STATS];
	uint64_t khp_base[SCN_NR_KHUGEPAGED_ITEMS]; /* khugepaged/ counters at the start */
	int khp_ok;                                  /* they could be read */
	/* vmstat events summed over the steps' own execution: /proc/vmstat
	 * is system-wide, and other processes fault THPs too (on a kernel
	 * without the zero page even their reads do), so the window is each
	 * step, not the whole run */
	int64_t vm_sum[THPS_NR_VM_ITEMS];
	int64_t pgfault;      /* the sum of the steps' minflt */
	int forked;
	int hzp_comparable;
	char hzp_why[96];
	int is_root;
	FILE *json;          /* the reports, as the model's run writes them */
	int nreports;
	const struct kprofile *profile;
	thps_machine *knobs; /* the profile and the scenario's settings, for guards */
};

/* Which vmstat items this kernel has, from the last read_vmstat. */
static int vm_present[THPS_NR_VM_ITEMS];

static int read_vmstat(int64_t v[THPS_NR_VM_ITEMS])
{
	static char buf[1 << 14];

	if (sysfile_read("/proc/vmstat", buf, sizeof(buf)) <= 0)
		return -1;
	for (int i = 0; i < THPS_NR_VM_ITEMS; i++) {
		const char *name = thps_vm_item_name(i);

		v[i] = 0;
		vm_present[i] = name && !find_field(buf, name, ' ', &v[i]);
	}
	return 0;
}


static int skip(struct scn_result *r, const char *fmt, const char *a, const char *b)
{
	r->skipped = 1;
	snprintf(r->skip_reason, sizeof(r->skip_reason), fmt, a, b);
	return 0;
}

/* The effective PMD-THP mode: the per-size setting unless it inherits. */
static void effective_mode(const char *global, const char *pmd, char *out, size_t len)
{
	snprintf(out, len, "%s", !strcmp(pmd, "inherit") || !*pmd ? global : pmd);
}

/* Decide how the scenario's settings run here: 0 and *emulate, or skipped. */
/* The scenario's thpsim/ settings on top of the profile must leave every
 * thpsim/ knob as the profile has it: else this kernel does not behave so. */
static int profile_agrees(const struct kernel_run *k, struct scn_result *r)
{
	for (int i = 0; thps_knob_name(i); i++) {
		const char *name = thps_knob_name(i), *want;
		char have[64];

		/* behaviour, not its version: a scenario of Linux 5.8 runs on a 6.1
		 * that behaves alike */
		if (strncmp(name, "thpsim/", 7) || !strcmp(name, "thpsim/kernel") ||
		    !(want = kprofile_get(k->profile, name)))
			continue;
		thps_knob_get(k->knobs, name, have, sizeof(have));
		if (!strcmp(have, want))
			continue;
		r->skipped = 1;
		snprintf(r->skip_reason, sizeof(r->skip_reason),
			 "the scenario's settings make %s=%s, this kernel (Linux %s profile, "
			 "'thpsim kernel-profile') has %s",
			 name, have, k->profile->version, want);
		return 0;
	}
	return 1;
}

/* The /sys file of the knob the kernel runner treats as kernel (the knob
 * table's column, enum thps_knob_kernel). */
static const char *knob_file(int kernel, char *buf, size_t len)
{
	const char *name = thps_knob_of_kernel(kernel);

	snprintf(buf, len, "%s%s", SYS_MM, name ? name : "");
	return buf;
}

static int plan_settings(const struct scenario *s, struct scn_result *r, int *emulate)
{
	char global[32] = "", pmd[32] = "", want_global[32], want_pmd[32] = "inherit", have[32],
	     want[32], path[160];

	*emulate = EMU_NONE;
	if (sysfile_choice(knob_file(THPS_KNOB_KERNEL_MODE, path, sizeof(path)), global,
			   sizeof(global)))
		return skip(r, "this kernel has no transparent huge pages (%s%s missing)", path, "");
	sysfile_choice(knob_file(THPS_KNOB_KERNEL_PMD_MODE, path, sizeof(path)), pmd, sizeof(pmd));
	snprintf(want_global, sizeof(want_global), "%s", "madvise"); /* the model's default */
	if (s->has_late_set)
		return skip(r, "%s%s", "a knob set after the first step cannot be emulated on the kernel",
			    "");
	for (int i = 0; i < s->nsteps; i++) {
		const struct scn_step *st = &s->steps[i];

		if (st->op != SCN_SET)
			continue;
		switch (thps_knob_kernel(thps_knob_index(st->knob))) {
		case THPS_KNOB_KERNEL_MODE:
			snprintf(want_global, sizeof(want_global), "%s", st->knob_value);
			continue;
		case THPS_KNOB_KERNEL_PMD_MODE:
			snprintf(want_pmd, sizeof(want_pmd), "%s", st->knob_value);
			continue;
		case THPS_KNOB_KERNEL_PROFILE:
			continue; /* against the profile: profile_agrees */
		case THPS_KNOB_KERNEL_MATCH:
			break;
		default:
			return skip(r, "unknown knob %s%s", st->knob, "");
		}
		snprintf(path, sizeof(path), "%s%s", SYS_MM, st->knob);
		if (sysfile_choice(path, have, sizeof(have)))
			return skip(r, "this kernel has no %s%s", path, "");
		if (strcmp(have, st->knob_value)) {
			char why[200];

			snprintf(why, sizeof(why), "this machine has %s=%s, the scenario needs %s", st->knob,
				 have, st->knob_value);
			return skip(r, "%s (the kernel side never writes /sys)%s", why, "");
		}
	}
	effective_mode(global, pmd, have, sizeof(have));
	effective_mode(want_global, want_pmd, want, sizeof(want));
	if (!strcmp(have, want))
		return 0;
	if (!strcmp(want, "never"))
		*emulate = EMU_DISABLE;
	else if (!strcmp(want, "always") && !strcmp(have, "madvise"))
		*emulate = EMU_HUGEPAGE;
	else if (!strcmp(want, "madvise") && !strcmp(have, "always"))
		*emulate = EMU_NOHUGEPAGE;
	else
		return skip(r, "THP is '%s' here and cannot emulate '%s'", have, want);
	return 0;
}

/*
 * Is thp_zero_page_alloc comparable?  Free an unused huge zero page
 * (drop_caches), then see whether a read fault allocates one: if it does,
 * nobody else held one, and it is freed again before the scenario.
 */
static void probe_huge_zero(struct kernel_run *k, int emulate)
{
	int64_t v0[THPS_NR_VM_ITEMS], v1[THPS_NR_VM_ITEMS];
	pid_t pid;
	int status;
	char use[8];

	k->hzp_comparable = 0;
	if (!k->is_root) {
		snprintf(k->hzp_why, sizeof(k->hzp_why), "needs root to drop caches");
		return;
	}
	if (emulate == EMU_DISABLE || !strcmp(kprofile_get(k->profile, "thpsim/zero_page"), "0") ||
	    (sysfile_choice(SYS_THP "use_zero_page", use, sizeof(use)) == 0 && !strcmp(use, "0"))) {
		k->hzp_comparable = 1; /* no huge zero page can be used at all */
		return;
	}
	{
		char zp[8] = "", g[32] = "", pmd[32] = "", mode[32], path[160];

		/* use_zero_page=0 or THP never (a check-kernels guest sets them
		 * for real): no fault allocates one, the counter stays put */
		sysfile_choice(SYS_THP "use_zero_page", zp, sizeof(zp));
		sysfile_choice(knob_file(THPS_KNOB_KERNEL_MODE, path, sizeof(path)), g, sizeof(g));
		sysfile_choice(knob_file(THPS_KNOB_KERNEL_PMD_MODE, path, sizeof(path)), pmd,
			       sizeof(pmd));
		effective_mode(g, pmd, mode, sizeof(mode));
		if (!strcmp(zp, "0") || !strcmp(mode, "never")) {
			k->hzp_comparable = 1;
			return;
		}
	}
	sysfile_write("/proc/sys/vm/drop_caches", "2");
	read_vmstat(v0);
	pid = fork();
	if (pid == 0) {
		char *p = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *a = (char *)(((uintptr_t)p + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));

		if (p != MAP_FAILED) {
			madvise(a, 2 << 20, MADV_HUGEPAGE);
			(void)*(volatile char *)a;
		}
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	read_vmstat(v1);
	sysfile_write("/proc/sys/vm/drop_caches", "2");
	if (v1[THPS_VM_thp_zero_page_alloc] > v0[THPS_VM_thp_zero_page_alloc]) {
		k->hzp_comparable = 1;
		return;
	}
	snprintf(k->hzp_why, sizeof(k->hzp_why),
		 "another process holds the huge zero page, so it exists before the run");
}

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* Wait until a worker has exited (its address space torn down). */
static void wait_exit(struct kernel_run *k, int proc)
{
	struct pollfd pfd = { .fd = k->pidfd[proc], .events = POLLIN };

	if (k->pidfd[proc] >= 0) {
		poll(&pfd, 1, 30000);
		close(k->pidfd[proc]);
		k->pidfd[proc] = -1;
	}
	waitpid(k->pids[proc], NULL, __WALL); /* every worker is our child */
	k->alive[proc] = 0;
}

static int talk(struct kernel_run *k, int proc, const struct cmd *c, struct reply *rep)
{
	if (send_all(k->socks[proc][0], c, sizeof(*c)) ||
	    recv_all(k->socks[proc][0], rep, sizeof(*rep)))
		return -1;
	return 0;
}

static int valid_proc_item(const struct kernel_run *k, int proc, int item, char *why, size_t len)
{
	switch (item) {
	case THPS_PROC_VmPTE:
	case THPS_PROC_VmHWM:
		if (proc) {
			snprintf(why, len, "a forked runner's own tables and peak are not the scenario's");
			return 0;
		}
		if (item == THPS_PROC_VmHWM) {
			snprintf(why, len, "the runner's own pages raise the peak");
			return 0;
		}
		return 1;
	case THPS_PROC_VmSize:
		snprintf(why, len, "the runner's own mappings");
		return 0;
	default:
		return 1;
	}
}

static int proc_value(struct kernel_run *k, int proc, int item, int64_t *v, char *why, size_t len)
{
	struct cmd c = { .op = CMD_FIGS };
	struct reply rep;

	if (!k->alive[proc]) {
		*v = 0;
		return 1;
	}
	if (talk(k, proc, &c, &rep)) {
		snprintf(why, len, "the worker did not answer");
		return 0;
	}
	*v = rep.fig[item];
	if (item == THPS_PROC_VmPTE || item == THPS_PROC_VmHWM || item == THPS_PROC_VmSize)
		*v -= k->base_fig[item];
	return valid_proc_item(k, proc, item, why, len);
}

static int vm_value(struct kernel_run *k, int item, int64_t *v, char *why, size_t len)
{
	int64_t now[THPS_NR_VM_ITEMS];

	if (item == THPS_VM_pgfault) {
		*v = k->pgfault;
		return 1;
	}
	read_vmstat(now);
	*v = item < THPS_NR_VM_EVENTS ? k->vm_sum[item] : now[item] - k->vm_base[item];
	/* khugepaged collapses at times of its own choosing, between steps as
	 * well (it wakes when the first mm registers, __khugepaged_enter):
	 * its events count over the whole run; in a guest nothing else
	 * collapses (enabled=madvise, no other process asks for THPs) */
	if ((item == THPS_VM_thp_collapse_alloc || item == THPS_VM_thp_collapse_alloc_failed) &&
	    scenario_has_op(k->s, SCN_KHUGEPAGED))
		*v = now[item] - k->vm_base[item];
	if (!vm_present[item]) {
		snprintf(why, len, "this kernel has no vmstat item %s", thps_vm_item_name(item));
		return 0;
	}
	if (item == THPS_VM_thp_zero_page_alloc && !k->hzp_comparable) {
		snprintf(why, len, "%s", k->hzp_why);
		return 0;
	}
	if (item >= THPS_NR_VM_EVENTS) {
		snprintf(why, len, "a system-wide gauge moved by the runner and other processes");
		return 0;
	}
	return 1;
}

/* transparent_hugepage/hugepages-<size>kB/stats/ITEM: 0, or -1 when this
 * kernel has no such file (before Linux 6.9, or an item added later). */
static int read_mthp_stat(int order, int item, int64_t *v)
{
	char path[160], buf[32];

	snprintf(path, sizeof(path), SYS_THP "hugepages-%dkB/stats/%s", 4 << order,
		 thps_mthp_stat_name(item));
	if (sysfile_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	*v = strtoll(buf, NULL, 10);
	return 0;
}

static void read_mthp_base(struct kernel_run *k)
{
	for (int o = THPS_MTHP_MIN_ORDER; o <= THPS_MTHP_MAX_ORDER; o++)
		for (int i = 0; i < THPS_NR_MTHP_STATS; i++)
			if (read_mthp_stat(o, i, &k->mthp_base[o][i]))
				k->mthp_base[o][i] = -1;
}

static int figure(struct kernel_run *k, const struct scn_figure *f, int64_t *v, char *why,
		  size_t len)
{
	switch (f->kind) {
	case FIG_MTHP:
		*v = 0;
		if (k->mthp_base[f->order][f->item] < 0 || read_mthp_stat(f->order, f->item, v)) {
			snprintf(why, len, "this kernel has no hugepages-%dkB/stats/%s", 4 << f->order,
				 thps_mthp_stat_name(f->item));
			return 0;
		}
		*v -= k->mthp_base[f->order][f->item];
		return 1;
	case FIG_PROC:
		return proc_value(k, f->proc, f->item, v, why, len);
	case FIG_VMSTAT:
		return vm_value(k, f->item, v, why, len);
	case FIG_MEMINFO:
		*v = 0;
		snprintf(why, len, "meminfo is system-wide");
		return 0;
	case FIG_KHUGEPAGED: {
		uint64_t now;

		*v = 0;
		if (!k->khp_ok || scn_khugepaged_counter(scn_khugepaged_item_names[f->item], &now)) {
			snprintf(why, len, "cannot read transparent_hugepage/khugepaged/%s",
				 scn_khugepaged_item_names[f->item]);
			return 0;
		}
		*v = (int64_t)(now - k->khp_base[f->item]);
		/* khugepaged is the kernel's own only in a check-kernels guest,
		 * where nothing but the scenario asks for THPs */
		if (!scn_in_guest()) {
			snprintf(why, len, "khugepaged runs with this machine's settings, for every "
				 "process");
			return 0;
		}
		/* the runner waits for N+1 scans (the scan under way may have
		 * passed the scenario's processes), the model makes N or N+1 */
		if (f->item == SCN_KHP_full_scans) {
			snprintf(why, len, "the guest's runner waits for one scan more than the step "
				 "asks (the scan under way may have passed the processes)");
			return 0;
		}
		return 1;
	}
	case FIG_PAGE: {
		struct cmd c = { .op = CMD_PAGE, .region = f->region, .off = f->off };
		struct reply rep;

		*v = PAGE_NONE;
		if (!k->alive[f->proc] || talk(k, f->proc, &c, &rep)) {
			snprintf(why, len, "the process has exited");
			return 0;
		}
		*v = rep.page_state;
		if (!rep.page_valid)
			snprintf(why, len, "needs root to read /proc/kpageflags");
		return rep.page_valid;
	}
	}
	return 0;
}

/* A REPORT object of what the kernel shows now (the model's shape). */
static void write_report(struct kernel_run *k, int line, const char *label)
{
	static const char *const meminfo[] = { "MemTotal", "MemFree", "AnonPages", "AnonHugePages",
					       "PageTables" };
	static char buf[1 << 13];
	int64_t vm[THPS_NR_VM_ITEMS];
	struct json j;

	if (!k->json)
		return;
	read_vmstat(vm);
	json_init(&j, k->json, 0);
	j.depth = 1;
	j.first[1] = k->nreports++ == 0;
	json_begin_object(&j, NULL);
	json_int(&j, "line", line);
	json_string(&j, "label", label);
	json_begin_object(&j, "report");
	json_begin_object(&j, "vmstat");
	for (int i = 0; i < THPS_NR_VM_ITEMS; i++)
		if (thps_vm_item_name(i))
			json_int(&j, thps_vm_item_name(i),
				 i == THPS_VM_pgfault ? k->pgfault
				 : i < THPS_NR_VM_EVENTS ? k->vm_sum[i] : vm[i] - k->vm_base[i]);
	json_end_object(&j);
	json_begin_array(&j, "processes");
	for (int p = 0; p < k->s->nprocs; p++) {
		struct cmd c = { .op = CMD_FIGS };
		struct reply rep;

		if (!k->alive[p] || talk(k, p, &c, &rep))
			continue;
		json_begin_object(&j, NULL);
		json_int(&j, "pid", k->pids[p]);
		json_string(&j, "name", k->s->procs[p]);
		for (int i = 0; i < THPS_NR_PROC_ITEMS; i++) {
			int64_t v = rep.fig[i];

			if (i == THPS_PROC_VmPTE || i == THPS_PROC_VmHWM || i == THPS_PROC_VmSize)
				v -= k->base_fig[i];
			json_int(&j, thps_proc_item_name(i), v);
		}
		json_end_object(&j);
	}
	json_end_array(&j);
	json_begin_object(&j, "meminfo");
	if (sysfile_read("/proc/meminfo", buf, sizeof(buf)) > 0)
		for (size_t i = 0; i < sizeof(meminfo) / sizeof(meminfo[0]); i++) {
			int64_t v = 0;

			find_field(buf, meminfo[i], ':', &v);
			json_int(&j, meminfo[i], v);
		}
	json_end_object(&j);
	json_end_object(&j);
	json_end_object(&j);
}

static int measure(void *ctx, const struct scn_figure *f, int64_t *v, char *why, size_t len)
{
	return figure(ctx, f, v, why, len);
}

static void record_standard(struct kernel_run *k, int line, const char *what)
{
	scn_record_standard(k->r, k->s, line, what, k->alive, measure, k);
}

static int step_failed(struct kernel_run *k, const struct scn_step *st, const char *what)
{
	k->r->error = 1;
	snprintf(k->r->error_msg, sizeof(k->r->error_msg), "%s:%d: '%s' failed on the kernel: %s",
		 k->s->path, st->line, st->text, what);
	return -1;
}

/* ---- the verbs' handlers in the controller (verbs.h) ---- */

/* Have st's worker run it: 0, or -1 with the result's error set. */
static int ask_worker(struct kernel_run *k, const struct scn_step *st, struct reply *rep)
{
	struct cmd c = { .op = CMD_STEP, .step = (int)(st - k->s->steps) };

	if (talk(k, st->proc, &c, rep)) {
		char why[160];

		worker_death(k->pids[st->proc], why, sizeof(why));
		k->alive[st->proc] = 0;
		return step_failed(k, st, why);
	}
	if (st->has_err) /* madvise ... err=E */
		scn_record_errno(k->r, st, rep->err);
	else if (rep->err)
		return step_failed(k, st, strerror(-rep->err));
	k->pgfault += rep->minflt;
	return 0;
}

int scn_kernel_in_worker(struct kernel_run *k, const struct scn_step *st)
{
	struct reply rep;

	return ask_worker(k, st, &rep);
}

int scn_kernel_read(struct kernel_run *k, const struct scn_step *st)
{
	struct reply rep;

	if (ask_worker(k, st, &rep))
		return -1;
	if (st->has_value)
		scn_record_read(k->r, st, rep.mismatches);
	return 0;
}

int scn_kernel_fork(struct kernel_run *k, const struct scn_step *st)
{
	struct reply rep, ready;

	if (ask_worker(k, st, &rep))
		return -1;
	k->pids[st->child] = rep.pid;
	k->pidfd[st->child] = pidfd_open_(rep.pid);
	if (recv_all(k->socks[st->child][0], &ready, sizeof(ready))) {
		char why[160];

		worker_death(k->pids[st->child], why, sizeof(why));
		return step_failed(k, st, why);
	}
	k->alive[st->child] = 1;
	k->forked = 1;
	return 0;
}

int scn_kernel_exit(struct kernel_run *k, const struct scn_step *st)
{
	struct cmd c = { .op = CMD_STEP, .step = (int)(st - k->s->steps) };

	send_all(k->socks[st->proc][0], &c, sizeof(c));
	wait_exit(k, st->proc);
	return 0;
}

int scn_kernel_shrink(struct kernel_run *k, const struct scn_step *st)
{
	if (sysfile_write("/proc/sys/vm/drop_caches", "2"))
		return step_failed(k, st, "cannot write /proc/sys/vm/drop_caches (needs root)");
	return 0;
}

int scn_kernel_khugepaged(struct kernel_run *k, const struct scn_step *st)
{
	char why[192];

	if (scn_guest_khugepaged_scans(st->scans, KHUGEPAGED_TIMEOUT_MS, why, sizeof(why)))
		return step_failed(k, st, why);
	return 0;
}

int scn_kernel_expect(struct kernel_run *k, const struct scn_step *st)
{
	scn_record_expect(k->r, k->s, st, measure, k);
	return 0;
}

int scn_kernel_report(struct kernel_run *k, const struct scn_step *st)
{
	char what[32];

	snprintf(what, sizeof(what), "line %d report", st->line);
	record_standard(k, st->line, what);
	write_report(k, st->line, st->knob[0] ? st->knob : what);
	return 0;
}

static int control_step_raw(struct kernel_run *k, const struct scn_step *st)
{
	const struct scn_verb *v = scn_verb(st->op);

	if (!scn_guard_holds(st, k->knobs))
		return 0;
	return v && v->kernel ? v->kernel(k, st) : 0;
}

/* A step, with the vmstat events counted while it acts. */
static int control_step(struct kernel_run *k, int i)
{
	const struct scn_step *st = &k->s->steps[i];
	const struct scn_verb *v = scn_verb(st->op);
	int64_t before[THPS_NR_VM_ITEMS], after[THPS_NR_VM_ITEMS];
	int ret;

	if ((v && (v->flags & SCN_VERB_INERT)) || !scn_guard_holds(st, k->knobs))
		return control_step_raw(k, st);
	read_vmstat(before);
	ret = control_step_raw(k, st);
	read_vmstat(after);
	for (int e = 0; e < THPS_NR_VM_EVENTS; e++)
		k->vm_sum[e] += after[e] - before[e];
	return ret;
}

/* The knobs guards and settings are read against: the profile, then the
 * scenario's own settings.  0, or -1 with r->error set. */
static int knob_machine(struct kernel_run *k)
{
	const struct scenario *s = k->s;

	if (thps_machine_new(&(struct thps_config){ .ram_bytes = 16ULL << 20 }, &k->knobs) ||
	    kprofile_apply(k->profile, k->knobs)) {
		k->r->error = 1;
		snprintf(k->r->error_msg, sizeof(k->r->error_msg), "cannot apply the kernel profile");
		return -1;
	}
	for (int i = 0; i < s->nsteps; i++)
		if (s->steps[i].op == SCN_SET)
			thps_knob_set(k->knobs, s->steps[i].knob, s->steps[i].knob_value);
	return 0;
}

static int run_kernel(struct kernel_run *k);

int scenario_run_kernel(const struct scenario *s, const struct kprofile *profile,
			struct scn_result *r)
{
	struct kernel_run k = { .s = s, .r = r, .profile = profile };
	int ret;

	scn_result_init(r);
	if (knob_machine(&k))
		return -1;
	if (profile_agrees(&k, r)) {
		/* in a check-kernels guest (only there) the scenario's THP
		 * settings are written for the run and put back after it */
		struct scn_guest_thp saved;
		/* The controller maps no THP and no huge zero page of its own
		 * while the scenario runs: under "always" (a guest sets it) its
		 * own reads would take the huge zero page, which it would hold
		 * (per-mm) so that the scenario's first read allocates none. */
		int was = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);

		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
		scn_guest_thp_apply(s, &saved);
		/* khugepaged scans only at the scenario's khugepaged steps */
		if (scenario_has_op(s, SCN_KHUGEPAGED))
			scn_guest_khugepaged_hold(&saved);
		ret = run_kernel(&k);
		scn_guest_thp_restore(&saved);
		prctl(PR_SET_THP_DISABLE, was > 0, 0, 0, 0);
	} else {
		ret = 0;
	}
	thps_machine_free(k.knobs);
	return ret;
}

static int run_kernel(struct kernel_run *kr)
{
	struct kernel_run k = *kr;
	const struct scenario *s = k.s;
	struct scn_result *r = k.r;
	struct worker w = { .s = s };
	int emulate, status;
	struct reply ready;

	if (plan_settings(s, r, &emulate) || r->skipped)
		return 0;
	if (emulate == EMU_NONE && !scn_in_guest() && scn_as_host_emulated_only())
		return skip(r, "%s%s", "nothing to emulate: it runs here as it did in this guest's own "
			    "run of the corpus, on the same kernel with the same settings ("
			    SCN_EMULATED_ONLY_FLAG ")", "");
	if (fits_in_memory(s, r))
		return -1;
	k.is_root = geteuid() == 0;
	for (int p = 0; p < SCN_MAX_PROCS; p++)
		k.pidfd[p] = -1;
	if (scenario_has_op(s, SCN_KHUGEPAGED) && !scn_in_guest())
		return skip(r, "%s%s", "'khugepaged scans=N' needs khugepaged's scan_sleep_millisecs "
			    "and pages_to_scan changed, which the runner does only inside a check-kernels "
			    "guest: this host's /sys is never written", "");
	for (int i = 0; i < s->nsteps; i++) {
		int collapse = s->steps[i].op == SCN_MADVISE &&
			       s->steps[i].advice == THPS_MADV_COLLAPSE;

		if (s->steps[i].op == SCN_SHRINK && !k.is_root)
			return skip(r, "%s%s", "'shrink' needs root (it writes /proc/sys/vm/drop_caches)", "");
		/* MADV_COLLAPSE ignores enabled=never and =madvise, but obeys
		 * PR_SET_THP_DISABLE and VM_NOHUGEPAGE (thp_vma_allowable_order
		 * without TVA_ENFORCE_SYSFS), which emulate them */
		if (collapse && emulate == EMU_DISABLE)
			return skip(r, "%s%s", "MADV_COLLAPSE ignores transparent_hugepage/enabled=never, "
				    "which the kernel side emulates with PR_SET_THP_DISABLE, which it obeys",
				    "");
		if (collapse && emulate == EMU_NOHUGEPAGE)
			return skip(r, "%s%s", "MADV_COLLAPSE works under transparent_hugepage/"
				    "enabled=madvise, which the kernel side emulates on this 'always' "
				    "machine with MADV_NOHUGEPAGE, on which it fails (EINVAL)", "");
	}
	probe_huge_zero(&k, emulate);
	for (int p = 0; p < s->nprocs; p++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, k.socks[p])) {
			r->error = 1;
			snprintf(r->error_msg, sizeof(r->error_msg), "socketpair: %s", strerror(errno));
			return -1;
		}
	}
	fflush(NULL);
	k.pids[0] = fork();
	if (k.pids[0] < 0) {
		r->error = 1;
		snprintf(r->error_msg, sizeof(r->error_msg), "fork: %s", strerror(errno));
		return -1;
	}
	if (k.pids[0] == 0) {
		signal(SIGPIPE, SIG_DFL);
		for (int p = 0; p < s->nprocs; p++)
			close(k.socks[p][0]); /* the controller's ends */
		w.idx = 0;
		w.fd = k.socks[0][1];
		w.is_root = k.is_root;
		w.emulate = emulate == EMU_DISABLE ? EMU_NONE : emulate;
		w.stack_nohugepage = !strcmp(kprofile_get(k.profile, "thpsim/map_stack_nohugepage") ?: "0",
					     "1");
		worker_socks = k.socks;
		/* the controller's flag (scenario_run_kernel) off, unless the
		 * scenario wants THP never; only once the runner's own pages are
		 * faulted in, so that none of them is a THP of any size */
		warm(&w);
		prctl(PR_SET_THP_DISABLE, emulate == EMU_DISABLE, 0, 0, 0);
		send_all(w.fd, &ready, sizeof(ready));
		worker_loop(&w);
	}
	k.alive[0] = 1;
	k.pidfd[0] = pidfd_open_(k.pids[0]);
	close_worker_ends(k.socks, s, 0, 1); /* the worker has them */
	if (recv_all(k.socks[0][0], &ready, sizeof(ready))) {
		char why[160];

		worker_death(k.pids[0], why, sizeof(why));
		r->error = 1;
		snprintf(r->error_msg, sizeof(r->error_msg), "%s: the worker did not start: %s",
			 s->path, why);
		return -1;
	}
	{
		struct cmd c = { .op = CMD_FIGS };
		struct reply rep;

		talk(&k, 0, &c, &rep);
		memcpy(k.base_fig, rep.fig, sizeof(k.base_fig));
	}
	read_vmstat(k.vm_base);
	read_mthp_base(&k);
	k.khp_ok = 1;
	for (int i = 0; i < SCN_NR_KHUGEPAGED_ITEMS; i++)
		if (scn_khugepaged_counter(scn_khugepaged_item_names[i], &k.khp_base[i]))
			k.khp_ok = 0;
	{
		char *buf = NULL;
		size_t len = 0;

		k.json = open_memstream(&buf, &len);
		for (int i = 0; i < s->nsteps; i++)
			if (control_step(&k, i))
				break;
		if (!r->error) {
			record_standard(&k, 0, "end");
			write_report(&k, 0, "end");
		}
		if (k.json) {
			fclose(k.json);
			r->reports_json = buf;
			r->reports_len = len;
		}
	}
	for (int p = s->nprocs; p-- > 0;) {
		struct cmd c = { .op = CMD_QUIT };

		if (k.alive[p]) {
			send_all(k.socks[p][0], &c, sizeof(c));
			wait_exit(&k, p);
		}
		close(k.socks[p][0]);
		if (k.pidfd[p] >= 0)
			close(k.pidfd[p]);
	}
	if (k.pidfd[0] >= 0 || k.alive[0])
		waitpid(k.pids[0], &status, WNOHANG);
	return r->error ? -1 : 0;
}

