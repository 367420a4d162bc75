/*
 * test_replay.c - traces written by hand, replayed (src/replay): the
 * figures expected are the kernel's, observed on a Linux 6.18 host
 * (docs/kernel-observations.md) or documented Linux behaviour, for the
 * program each trace describes.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "../test.h"
#include "replay/replay.h"
#include "trace/trace.h"

#define PID 100
#define A 0x7f0000000000ULL /* a 2 MiB-aligned address */
#define RW 3
#define ANON_PRIVATE 0x22

static struct trace_writer W;
static char P[128];
static struct replay_result R;
static uint64_t settle_ms; /* treplay's --settle */
static int keep_trace;     /* treplay keeps the trace for treplay_again */

static void tbegin(const char *tag)
{
	struct trace_header h = { 0 };

	snprintf(P, sizeof(P), "/tmp/thpsim-test-%d-%s.trace", (int)getpid(), tag);
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/enabled", "madvise"));
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/use_zero_page", "1"));
	ASSERT_OK(trace_writer_open(&W, P, &h));
	trace_write_proc(&W, PID);
	trace_write_exec(&W, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
}

static void tsys(int nr, int64_t ret, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3)
{
	uint64_t args[6] = { a0, a1, a2, a3, (uint64_t)-1, 0 };

	trace_write_syscall(&W, nr, 6, args, ret);
}

static void tfaults(uint64_t addr, uint64_t len, uint64_t step, int write)
{
	for (uint64_t a = addr; a < addr + len; a += step)
		trace_write_fault(&W, a, write, 0);
}

/* Close the trace and replay it with knobs "name=value" (NULL-ended). */
static void treplay(const char *kv, ...)
{
	struct replay_opts o = { 0 };
	char err[1024];
	va_list ap;

	ASSERT_OK(trace_writer_close(&W));
	replay_result_free(&R);
	va_start(ap, kv);
	for (; kv; kv = va_arg(ap, const char *)) {
		ASSERT_OK(knob_sets_add(&o.knobs, kv));
	}
	va_end(ap);
	o.ram_bytes = 2ULL << 30;
	o.settle_ms = settle_ms;
	if (replay_run(P, &o, &R, err, sizeof(err)))
		test_fail(__FILE__, __LINE__, "replay: %s", err);
	if (!keep_trace)
		unlink(P);
}

/* The trace treplay kept, replayed again with one more knob, then gone. */
static void treplay_again(const char *kv)
{
	struct replay_opts o = { .ram_bytes = 2ULL << 30 };
	char err[1024];

	replay_result_free(&R);
	ASSERT_OK(knob_sets_add(&o.knobs, kv));
	keep_trace = 0;
	if (replay_run(P, &o, &R, err, sizeof(err)))
		test_fail(__FILE__, __LINE__, "replay: %s", err);
	unlink(P);
}

static const struct replay_mm *tmm(int pid, int nth)
{
	for (int i = 0; i < R.nmms; i++)
		if (R.mms[i]->pid == pid && nth-- == 0)
			return R.mms[i];
	test_fail(__FILE__, __LINE__, "no address space %d of pid %d", nth, pid);
}

/* The cover letter's program: posix_memalign(&p, 2 MiB, 200 MiB) (glibc
 * maps 200 MiB + 2 MiB + 4 KiB), then maybe MADV_HUGEPAGE, a read every
 * 4 KiB, a write every 2 MiB. */
static void cover_letter(int madv)
{
	uint64_t len = (200ULL << 20) + HPAGE + PAGE, map = A - HPAGE + PAGE;

	tsys(9, (int64_t)map, 0, len, RW, ANON_PRIVATE);
	if (madv)
		tsys(28, 0, A, 200ULL << 20, 14, 0);
	tfaults(A, 200ULL << 20, PAGE, 0);
	tfaults(A, 200ULL << 20, HPAGE, 1);
	trace_write_exit(&W, 0);
}

TEST(replay_cover_letter_madvise)
{
	const struct replay_mm *mm;

	/* observed (S4a): 100 read faults map the huge zero page, 100 write
	 * faults 100 THPs, Rss = AnonHugePages = 204800 kB */
	tbegin("cl1");
	cover_letter(1);
	treplay(NULL);
	mm = tmm(PID, 0);
	ASSERT_EQ(R.vm[THPS_VM_pgfault], 200);
	ASSERT_EQ(R.vm[THPS_VM_thp_fault_alloc], 100);
	ASSERT_EQ(R.vm[THPS_VM_thp_zero_page_alloc], 1);
	ASSERT_EQ(R.vm[THPS_VM_thp_split_pmd], 0);
	ASSERT_EQ(mm->final[THPS_PROC_Rss], 204800);
	ASSERT_EQ(mm->final[THPS_PROC_AnonHugePages], 204800);
	ASSERT_EQ(mm->peak_anon_huge_kb, 204800);
	ASSERT(!strcmp(mm->end, "exit"));
	ASSERT_EQ(mm->faults, 51300);
}

TEST(replay_cover_letter_never_and_always)
{
	const struct replay_mm *mm;

	/* observed (S4c/S4e): no THP: 51200 read faults, then 100 write
	 * faults, Rss 400 kB */
	tbegin("cl2");
	cover_letter(1);
	treplay("transparent_hugepage/enabled=never", NULL);
	mm = tmm(PID, 0);
	ASSERT_EQ(R.vm[THPS_VM_pgfault], 51300);
	ASSERT_EQ(mm->final[THPS_PROC_Rss], 400);
	ASSERT_EQ(mm->final[THPS_PROC_AnonHugePages], 0);
	/* 100 PTE tables, a PMD table and a PUD table: Linux's VmPTE counts
	 * every level below the PGD (mm_pgtables_bytes) */
	ASSERT_EQ(mm->final[THPS_PROC_VmPTE], 400 + 4 * 2);

	/* the cover letter: THP always without the huge zero page, the read
	 * pass alone costs 200 MiB */
	tbegin("cl3");
	cover_letter(0);
	treplay("transparent_hugepage/enabled=always", "transparent_hugepage/use_zero_page=0", NULL);
	ASSERT_EQ(tmm(PID, 0)->final[THPS_PROC_AnonHugePages], 204800);
	ASSERT_EQ(R.vm[THPS_VM_pgfault], 100);
	/* the time series saw it before the write pass: the peak is there */
	ASSERT_EQ(tmm(PID, 0)->peak_anon_huge_kb, 204800);
}

TEST(replay_fork_cow_of_a_thp)
{
	const struct replay_mm *parent, *child;

	/* observed (S9a): write A[0] (a THP), fork, the parent writes A+4K:
	 * its PMD is split (thp_split_pmd 1), Rss stays 2048, AnonHugePages
	 * 0; the child keeps the PMD; when it exits the folio is queued for
	 * deferred split */
	tbegin("fork");
	tsys(9, (int64_t)A, 0, HPAGE, RW, ANON_PRIVATE);
	tsys(28, 0, A, HPAGE, 14, 0);
	trace_write_fault(&W, A, 1, 0);
	trace_write_fork(&W, PID + 1, 0x1200011); /* fork(): SIGCHLD | CHILD_SETTID... */
	trace_write_fault(&W, A + PAGE, 1, 0);
	trace_write_proc(&W, PID + 1);
	trace_write_exit(&W, 0);
	trace_write_proc(&W, PID);
	trace_write_exit(&W, 0);
	treplay(NULL);
	ASSERT_EQ(R.nmms, 2);
	parent = tmm(PID, 0);
	child = tmm(PID + 1, 0);
	ASSERT_EQ(R.vm[THPS_VM_thp_split_pmd], 1);
	ASSERT_EQ(R.vm[THPS_VM_thp_deferred_split_page], 1);
	ASSERT_EQ(parent->final[THPS_PROC_Rss], 2048);
	ASSERT_EQ(parent->final[THPS_PROC_AnonHugePages], 0);
	ASSERT_EQ(child->final[THPS_PROC_AnonHugePages], 2048);
	ASSERT(!strcmp(child->name, "prog"));
}

/* For several processes the totals are the machine's (meminfo),
 * a page shared after fork counting once, and final is never above peak. */
TEST(replay_machine_totals_count_shared_pages_once)
{
	uint64_t sums[THPS_NR_PROC_ITEMS] = { 0 };

	/* a parent writes 4 MiB and forks 3 children, which each write one
	 * page of it (a copy) while all are alive, then exit; then the
	 * parent exits */
	tbegin("totals");
	tsys(9, (int64_t)A, 0, MB(4), RW, ANON_PRIVATE);
	tfaults(A, MB(4), PAGE, 1);
	for (int c = 1; c <= 3; c++)
		trace_write_fork(&W, PID + c, 0x1200011);
	for (int c = 1; c <= 3; c++) {
		trace_write_proc(&W, PID + c);
		trace_write_fault(&W, A + (uint64_t)c * PAGE, 1, 0);
	}
	for (int c = 1; c <= 3; c++) {
		trace_write_proc(&W, PID + c);
		trace_write_exit(&W, 0);
	}
	trace_write_proc(&W, PID);
	trace_write_exit(&W, 0);
	treplay("transparent_hugepage/enabled=never", NULL);
	ASSERT_EQ(R.nmms, 4);
	for (int i = 0; i < R.nmms; i++)
		sums[THPS_PROC_Rss] += R.mms[i]->final[THPS_PROC_Rss];
	/* what a sum over processes says: 4 MiB four times */
	ASSERT_LE(4 * 4096, sums[THPS_PROC_Rss]);
	/* the machine: 4 MiB once, and the three copies */
	ASSERT_EQ(R.peak_anon_pages_kb, 4096 + 3 * 4);
	/* the end: the parent alone, its 4 MiB */
	ASSERT_EQ(R.final_meminfo[THPS_MEM_AnonPages], 4096);
	ASSERT_LE(R.final_meminfo[THPS_MEM_AnonPages], R.peak_anon_pages_kb);
	/* Pss, walked page by page, adds up to the counters' AnonPages */
	ASSERT_EQ(R.final_pss_sum_kb, R.final_meminfo[THPS_MEM_AnonPages]);
	ASSERT_EQ(R.peak_meminfo_huge_kb, 0);
	/* THP always: the 4 MiB in two THPs, each child's copy a split */
	tbegin("totals-thp");
	tsys(9, (int64_t)A, 0, MB(4), RW, ANON_PRIVATE);
	tfaults(A, MB(4), PAGE, 1);
	trace_write_fork(&W, PID + 1, 0x1200011);
	trace_write_proc(&W, PID + 1);
	trace_write_exit(&W, 0);
	trace_write_proc(&W, PID);
	trace_write_exit(&W, 0);
	treplay("transparent_hugepage/enabled=always", NULL);
	ASSERT_EQ(R.peak_meminfo_huge_kb, 4096);
	ASSERT_EQ(R.final_meminfo[THPS_MEM_AnonHugePages], 4096);
	ASSERT_EQ(R.peak_anon_pages_kb, 4096);
}

TEST(replay_vfork_shares_until_exec)
{
	const struct replay_mm *parent, *child;

	/* vfork (CLONE_VM | CLONE_VFORK): the child writes into its parent's
	 * memory until it execs; then it has its own */
	tbegin("vfork");
	tsys(9, (int64_t)A, 0, MB(1), RW, ANON_PRIVATE);
	trace_write_fork(&W, PID + 1, 0x4111);
	trace_write_fork(&W, PID + 2, 0x3d0f00); /* a thread: nothing new */
	trace_write_proc(&W, PID + 1);
	tfaults(A, KB(16), PAGE, 1);
	trace_write_exec(&W, "/bin/other", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	tsys(9, (int64_t)A, 0, MB(1), RW, ANON_PRIVATE);
	tfaults(A, KB(8), PAGE, 1);
	trace_write_exit(&W, 0);
	trace_write_proc(&W, PID);
	tfaults(A + KB(16), KB(4), PAGE, 1);
	trace_write_exit(&W, 0);
	treplay(NULL);
	ASSERT_EQ(R.nmms, 2);
	parent = tmm(PID, 0);
	child = tmm(PID + 1, 0);
	ASSERT_EQ(parent->final[THPS_PROC_Rss], 20);
	ASSERT_EQ(child->final[THPS_PROC_Rss], 8);
	ASSERT(!strcmp(child->name, "other"));
	ASSERT_EQ(R.skips[REPLAY_SKIP_fault_noproc], 0);
}

TEST(replay_file_mappings_are_skipped_and_counted)
{
	const struct replay_mm *mm;
	uint64_t F = A + MB(4);

	/* a private file mapping: its faults are not modelled; each page
	 * written is an anonymous copy the kernel counts in Anonymous */
	tbegin("file");
	tsys(9, (int64_t)F, 0, KB(16), RW, 0x02 /* MAP_PRIVATE, a file */);
	tsys(9, (int64_t)F + KB(16), 0, KB(8), RW, 0x01 /* MAP_SHARED */);
	trace_write_fault(&W, F, 0, 0);
	trace_write_fault(&W, F, 1, 0);
	trace_write_fault(&W, F + PAGE, 1, 0);
	trace_write_fault(&W, F + 2 * PAGE, 1, 0);
	trace_write_fault(&W, F + KB(16), 1, 0); /* shared: no copy */
	tsys(11, 0, F + 2 * PAGE, PAGE, 0, 0);
	trace_write_fault(&W, A + MB(64), 1, 0); /* nothing mapped there */
	trace_write_exit(&W, 0);
	treplay(NULL);
	mm = tmm(PID, 0);
	ASSERT_EQ(R.skips[REPLAY_SKIP_fault_file], 5);
	ASSERT_EQ(R.skips[REPLAY_SKIP_mmap_foreign], 2);
	ASSERT_EQ(R.skips[REPLAY_SKIP_fault_unmapped], 1);
	ASSERT_EQ(mm->final_file_cow_kb, 8);
	ASSERT_EQ(mm->final[THPS_PROC_Rss], 0);
}

TEST(replay_file_copies_are_kept_by_file_range)
{
	const struct replay_mm *mm;
	uint64_t F = A + MB(4), G = A + MB(8);

	/* smaps shows a written private file page as Anonymous in its own
	 * file VMA: the copies are kept by range, the part of F that munmap
	 * cut away (and its copy) gone, a read-only page of G not copied */
	tbegin("file");
	tsys(9, (int64_t)F, 0, KB(16), RW, 0x02 /* MAP_PRIVATE, a file */);
	tsys(9, (int64_t)G, 0, KB(8), RW, 0x02);
	trace_write_fault(&W, F, 1, 0);
	trace_write_fault(&W, F + PAGE, 1, 0);
	trace_write_fault(&W, F + 3 * PAGE, 1, 0);
	trace_write_fault(&W, G, 0, 0);
	trace_write_fault(&W, G + PAGE, 1, 0);
	tsys(11, 0, F + 2 * PAGE, 2 * PAGE, 0, 0);
	trace_write_exit(&W, 0);
	treplay(NULL);
	mm = tmm(PID, 0);
	ASSERT_EQ(mm->final_file_cow_kb, 12);
	ASSERT_EQ(mm->nfinal_file_cow, 2);
	ASSERT_EQ(mm->final_file_cow[0][0], F);
	ASSERT_EQ(mm->final_file_cow[0][1], F + 2 * PAGE);
	ASSERT_EQ(mm->final_file_cow[0][2], 8);
	ASSERT_EQ(mm->final_file_cow[1][0], G);
	ASSERT_EQ(mm->final_file_cow[1][1], G + KB(8));
	ASSERT_EQ(mm->final_file_cow[1][2], 4);
}

TEST(replay_mprotect_and_madvise_around_file_holes)
{
	const struct replay_mm *mm;

	/* anon [A, A+8K), a file page, anon [A+12K, A+20K): mprotect and
	 * madvise of all 20 KiB apply to both anonymous parts, as Linux's
	 * apply to each mapped part */
	tbegin("holes");
	tsys(9, (int64_t)A, 0, KB(20), RW, ANON_PRIVATE);
	tsys(9, (int64_t)A + KB(8), 0, KB(4), 1, 0x12 /* a file, MAP_FIXED */);
	tfaults(A, KB(8), PAGE, 1);
	tfaults(A + KB(12), KB(8), PAGE, 1);
	tsys(28, 0, A, KB(20), 4 /* MADV_DONTNEED */, 0);
	tsys(10, 0, A, KB(20), 1 /* PROT_READ */, 0);
	trace_write_fault(&W, A + KB(16), 1, 0); /* a write: now SIGSEGV */
	trace_write_fault(&W, A + KB(16), 0, 0);
	trace_write_exit(&W, 0);
	treplay(NULL);
	mm = tmm(PID, 0);
	ASSERT_EQ(mm->final[THPS_PROC_Rss], 0);
	ASSERT_EQ(R.skips[REPLAY_SKIP_fault_unmapped], 1);
	ASSERT_EQ(R.skips[REPLAY_SKIP_call_failed], 0);
	ASSERT_EQ(R.vm[THPS_VM_pgfault], 5);
}

TEST(replay_exec_snapshot_stack_and_brk)
{
	const struct replay_mm *mm;
	uint64_t top = 0x7ffffff00000ULL, heap = 0x555555600000ULL;

	/* the stack as exec left it (two pages written), growing down on a
	 * fault 1 MiB below; the heap from start_brk with brk(2) */
	tbegin("exec");
	trace_write_exec(&W, "/bin/prog2", heap, heap, 8 << 20);
	trace_write_vma(&W, top - KB(132), KB(132), RW, TRACE_VMA_STACK, "");
	trace_write_touch(&W, top - KB(8), KB(8), TRACE_TOUCH_WRITE);
	trace_write_vma(&W, 0x555555554000ULL, KB(8), 5, TRACE_VMA_FILE, "/bin/prog2");
	trace_write_fault(&W, top - MB(1), 1, 0);
	tsys(12, (int64_t)heap, 0, 0, 0, 0);
	tsys(12, (int64_t)heap + KB(132), heap + KB(132), 0, 0, 0);
	tfaults(heap, KB(132), PAGE, 1);
	tsys(12, (int64_t)heap + KB(132), heap + MB(64), 0, 0, 0); /* refused by the kernel */
	tsys(12, (int64_t)heap + KB(64), heap + KB(64), 0, 0, 0);
	trace_write_exit(&W, 0);
	treplay(NULL);
	ASSERT_EQ(R.nmms, 2); /* the first exec's image, then this one */
	mm = tmm(PID, 1);
	ASSERT(!strcmp(mm->name, "prog2"));
	ASSERT(!strcmp(tmm(PID, 0)->end, "exec"));
	ASSERT_EQ(mm->final[THPS_PROC_Rss], 8 + 4 + 64);
	ASSERT_EQ(mm->final[THPS_PROC_VmHWM], 8 + 4 + 132);
	ASSERT_EQ(R.skips[REPLAY_SKIP_fault_unmapped], 0);
	ASSERT_EQ(R.skips[REPLAY_SKIP_brk_diverged], 0);
}

TEST(replay_populate_and_prctl)
{
	const struct replay_mm *mm;

	/* MAP_POPULATE comes as a TOUCH: under "always" it fills THPs;
	 * prctl(PR_SET_THP_DISABLE) stops later ones */
	tbegin("populate");
	tsys(9, (int64_t)A, 0, MB(4), RW, ANON_PRIVATE | 0x8000);
	trace_write_touch(&W, A, MB(4), TRACE_TOUCH_POPULATE);
	tsys(157, 0, 41, 1, 0, 0);
	tsys(9, (int64_t)A + MB(4), 0, MB(4), RW, ANON_PRIVATE);
	tfaults(A + MB(4), MB(4), HPAGE, 1);
	trace_write_exit(&W, 0);
	treplay("transparent_hugepage/enabled=always", NULL);
	mm = tmm(PID, 0);
	ASSERT_EQ(mm->final[THPS_PROC_AnonHugePages], 4096);
	ASSERT_EQ(mm->final[THPS_PROC_Rss], 4096 + 8);
}

TEST(replay_reports_lost_events_and_kernel_figures)
{
	struct trace_kfig k[2] = { { "Anonymous", 12 }, { "AnonHugePages", 0 } };
	const struct replay_mm *mm;

	tbegin("lost");
	tsys(9, (int64_t)A, 0, MB(1), RW, ANON_PRIVATE);
	tfaults(A, KB(12), PAGE, 1);
	trace_write_lost(&W, 42);
	trace_write_kfig(&W, 2, k);
	trace_write_exit(&W, 0);
	treplay(NULL);
	mm = tmm(PID, 0);
	ASSERT_EQ(R.lost_events, 42);
	ASSERT(mm->have_kfig);
	ASSERT_EQ(mm->kfig_anonymous, 12);
	ASSERT_EQ(mm->model_at_kfig[THPS_PROC_Anonymous], 12);
	ASSERT(R.nnotes > 0 && strstr(R.notes[R.nnotes - 1], "lost 42 events"));
}

TEST(replay_damaged_trace_is_partial)
{
	struct replay_opts o = { 0 };
	char err[1024];
	FILE *f;
	long n;

	tbegin("bad");
	tsys(9, (int64_t)A, 0, MB(1), RW, ANON_PRIVATE);
	tfaults(A, MB(1), PAGE, 1);
	ASSERT_OK(trace_writer_close(&W));
	f = fopen(P, "r+b");
	ASSERT(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	ASSERT_OK(ftruncate(fileno(f), n - 10));
	fclose(f);
	replay_result_free(&R);
	o.ram_bytes = 1ULL << 30;
	/* the one block is cut: nothing of it is replayed, and it says where */
	ASSERT_OK(replay_run(P, &o, &R, err, sizeof(err)));
	ASSERT(R.partial);
	ASSERT(strstr(R.partial_why, "offset") && strstr(R.partial_why, "truncated"));
	ASSERT_EQ(R.faults, 0);
	ASSERT_EQ(R.partial_missing_bytes, (uint64_t)(n - 10) - R.partial_offset);
	replay_result_free(&R);
	unlink(P);
}

/* ---- the commands' bad input: a message and a nonzero exit, no crash ---- */
#include "cli/cli.h"

TEST(replay_commands_refuse_bad_input)
{
	char *nofile[] = { "replay", "-q", "/nonexistent/t.trace", NULL };
	char *badfmt[] = { "replay", "t.trace", "--format", "xml", NULL };
	char *badset[] = { "replay", "t.trace", "--set", "novalue", NULL };
	char *twotr[] = { "replay", "a.trace", "b.trace", NULL };
	char *badpol[] = { "compare", "t.trace", "--policy", "noknobs", NULL };
	char *badknob[] = { "compare", "t.trace", "--policy", "p=nonsense=1", NULL };
	char *notrace[] = { "compare", NULL };
	char *dumpusage[] = { "trace", "show", "t.trace", NULL };
	char *dumpnofile[] = { "trace", "dump", "/nonexistent/t.trace", NULL };

	ASSERT_EQ(cmd_replay(3, nofile), 2); /* an input error */
	ASSERT_EQ(cmd_replay(4, badfmt), 2);
	ASSERT_EQ(cmd_replay(4, badset), 2);
	ASSERT_EQ(cmd_replay(3, twotr), 2);
	ASSERT_EQ(cmd_compare(4, badpol), 2);
	ASSERT_EQ(cmd_compare(4, badknob), 2);
	ASSERT_EQ(cmd_compare(1, notrace), 2);
	ASSERT_EQ(cmd_trace(3, dumpusage), 2);
	ASSERT_EQ(cmd_trace(3, dumpnofile), 2);
}

TEST(replay_unknown_knob_value_is_an_error)
{
	struct replay_opts o = { 0 };
	char err[1024];

	tbegin("knob");
	trace_write_exit(&W, 0);
	ASSERT_OK(trace_writer_close(&W));
	knob_sets_add_pair(&o.knobs, "transparent_hugepage/enabled", "sometimes");
	o.ram_bytes = 1ULL << 30;
	replay_result_free(&R);
	ASSERT_EQ(replay_run(P, &o, &R, err, sizeof(err)), -EINVAL);
	ASSERT(strstr(err, "sometimes"));
	replay_result_free(&R);
	unlink(P);
}

/* MADV_COLLAPSE, as a small C program did it on this host's 6.18 when run
 * without the recorder: 32 MiB written every 8 KiB, the first 16 MiB
 * collapsed (0), 1 MiB at 17 MiB made read-only, the second 16 MiB
 * collapsed (EINVAL at the read-only VMA, after [16M,17M) of the first
 * VMA, which holds no aligned 2 MiB).  The kernel reported AnonHugePages
 * 16384 kB and Anonymous 24680 kB (24576 of them this memory, the rest the
 * program's stack and libc's).  Under the recorder both calls failed
 * (EINVAL: its PR_SET_THP_DISABLE); replay makes them anyway. */
TEST(replay_madvise_collapse)
{
	const uint64_t len = 32ULL << 20;
	const struct replay_mm *mm;

	tbegin("collapse");
	tsys(9, (int64_t)A, 0, len, RW, ANON_PRIVATE);
	tfaults(A, len, 2 * PAGE, 1);
	tsys(28, -22, A, 16ULL << 20, 25, 0);
	tsys(10, 0, A + (17ULL << 20), 1ULL << 20, 1, 0);
	tsys(28, -22, A + (16ULL << 20), 16ULL << 20, 25, 0);
	trace_write_exit(&W, 0);
	treplay(NULL);
	mm = tmm(PID, 0);
	ASSERT_EQ(R.vm[THPS_VM_thp_collapse_alloc], 8);
	ASSERT_EQ(mm->final[THPS_PROC_AnonHugePages], 16384);
	ASSERT_EQ(mm->final[THPS_PROC_Anonymous], 16384 + 8192);
	ASSERT_EQ(R.skips[REPLAY_SKIP_call_failed], 0);
	ASSERT_EQ(R.skips[REPLAY_SKIP_call_unmodelled], 0);
}

/* --settle: a sparse MADV_HUGEPAGE heap, alive at the end of the trace,
 * is collapsed by khugepaged (max_ptes_none=511), not under
 * max_ptes_none=0, and not without --settle. */
static void sparse_heap(void)
{
	const uint64_t len = 8ULL << 20;

	tbegin("settle");
	tsys(9, (int64_t)A, 0, len, RW, ANON_PRIVATE);
	tfaults(A, len, 2 * PAGE, 1);
	tsys(28, 0, A, len, 14, 0);
}

TEST(replay_settle_lets_khugepaged_collapse)
{
	sparse_heap();
	settle_ms = 0;
	treplay(NULL);
	ASSERT_EQ(tmm(PID, 0)->final[THPS_PROC_AnonHugePages], 0);
	ASSERT_EQ(R.vm[THPS_VM_thp_collapse_alloc], 0);

	sparse_heap();
	settle_ms = 60000;
	treplay(NULL);
	ASSERT_EQ(R.settle_collapsed, 4);
	ASSERT_EQ(R.vm[THPS_VM_thp_collapse_alloc], 4);
	ASSERT_EQ(tmm(PID, 0)->final[THPS_PROC_AnonHugePages], 8192);
	ASSERT_EQ(tmm(PID, 0)->final[THPS_PROC_Anonymous], 8192);

	sparse_heap();
	treplay("transparent_hugepage/khugepaged/max_ptes_none=0", NULL);
	ASSERT_EQ(R.settle_collapsed, 0);
	ASSERT_EQ(tmm(PID, 0)->final[THPS_PROC_AnonHugePages], 0);
	ASSERT_EQ(tmm(PID, 0)->final[THPS_PROC_Anonymous], 4096);
	settle_ms = 0;
}

/* khugepaged on the trace's clock: a 16 MiB heap written every other page,
 * then MADV_HUGEPAGE at 0 ms, the process alive until 1000 ms.  With the
 * recorded scan_sleep_millisecs=100 and pages_to_scan=1024, Linux's
 * khugepaged wakes at the registration (__khugepaged_enter), looks at two
 * 2 MiB ranges a wake-up (512 units each, khugepaged_scan_mm_slot) and
 * collapses them (max_ptes_none=511): 2 more THPs every 100 ms until the
 * 8 are done at 300 ms. */
static void timed_heap(const char *scan_sleep, const char *pages)
{
	struct trace_header h = { 0 };
	const uint64_t len = 16ULL << 20;

	snprintf(P, sizeof(P), "/tmp/thpsim-test-%d-timed.trace", (int)getpid());
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/enabled", "madvise"));
	if (scan_sleep) {
		ASSERT_OK(trace_header_add(&h, "transparent_hugepage/khugepaged/scan_sleep_millisecs",
					   scan_sleep));
		ASSERT_OK(trace_header_add(&h, "transparent_hugepage/khugepaged/pages_to_scan", pages));
	}
	ASSERT_OK(trace_writer_open(&W, P, &h));
	trace_write_proc(&W, PID);
	trace_write_exec(&W, "/bin/server", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	tsys(9, (int64_t)A, 0, len, RW, ANON_PRIVATE);
	tfaults(A, len, 2 * PAGE, 1);
	tsys(28, 0, A, len, 14, 0);
	trace_write_time(&W, 1000ULL * 1000000, 0);
	trace_write_exit(&W, 0);
}

/* The AnonHugePages of pid's series at t_ms (the last point at or before). */
static uint64_t huge_at(const struct replay_mm *mm, uint64_t t_ms)
{
	uint64_t v = UINT64_MAX;

	for (int i = 0; i < mm->series.n && mm->series.p[i].t_ns <= t_ms * 1000000; i++)
		v = mm->series.p[i].anon_huge_kb;
	ASSERT(v != UINT64_MAX);
	return v;
}

static void treplay_opts(struct replay_opts *o)
{
	char err[1024];

	ASSERT_OK(trace_writer_close(&W));
	replay_result_free(&R);
	o->ram_bytes = 2ULL << 30;
	if (replay_run(P, o, &R, err, sizeof(err)))
		test_fail(__FILE__, __LINE__, "replay: %s", err);
	unlink(P);
}

TEST(replay_khugepaged_on_the_trace_clock)
{
	struct replay_opts o = { .sample_every_ms = 50 };
	const struct replay_mm *mm;

	timed_heap("100", "1024");
	treplay_opts(&o);
	mm = tmm(PID, 0);
	ASSERT_EQ(R.khugepaged_scan_sleep_ms, 100);
	ASSERT_EQ(R.khugepaged_pages_to_scan, 1024);
	ASSERT_EQ(huge_at(mm, 50), 4096);
	ASSERT_EQ(huge_at(mm, 150), 8192);
	ASSERT_EQ(huge_at(mm, 250), 12288);
	ASSERT_EQ(huge_at(mm, 350), 16384);
	ASSERT_EQ(R.khugepaged_collapsed, 8);
	/* wake-ups at 0, 100, ..., 900 ms: those before the exit at 1000 */
	ASSERT_EQ(R.khugepaged_wakeups, 10);
	ASSERT_EQ(mm->final[THPS_PROC_AnonHugePages], 16384);
	ASSERT_EQ(R.vm[THPS_VM_thp_collapse_alloc], 8);

	/* --khugepaged off: the pages stay 4 KiB */
	timed_heap("100", "1024");
	o.no_khugepaged = 1;
	treplay_opts(&o);
	ASSERT_EQ(tmm(PID, 0)->final[THPS_PROC_AnonHugePages], 0);
	ASSERT_EQ(R.khugepaged_wakeups, 0);
	o.no_khugepaged = 0;

	/* a host's defaults (10 s, 4096 pages): the wake-up at the
	 * registration scans 8 ranges, all of them; the next would be at
	 * 10 s, after the exit */
	timed_heap("10000", "4096");
	treplay_opts(&o);
	ASSERT_EQ(huge_at(tmm(PID, 0), 50), 16384);
	ASSERT_EQ(R.khugepaged_wakeups, 1);

	/* a trace without the settings: Linux's defaults, and a note */
	timed_heap(NULL, NULL);
	treplay_opts(&o);
	ASSERT_EQ(R.khugepaged_scan_sleep_ms, 10000);
	ASSERT_EQ(R.khugepaged_pages_to_scan, 4096);
	ASSERT_EQ(tmm(PID, 0)->final[THPS_PROC_AnonHugePages], 16384);
	ASSERT(R.nnotes >= 1);
}

/* ---- attribution by mapping (measure_mappings.c) ---- */
static const struct replay_mapping *tmap(const struct replay_mm *mm, uint64_t start)
{
	for (int k = 0; k < mm->mappings.n; k++)
		if (mm->mappings.v[k].start == start)
			return &mm->mappings.v[k];
	test_fail(__FILE__, __LINE__, "no mapping at %#llx", (unsigned long long)start);
}

/* Each address space's mappings and "other" sum to its figures at the
 * end, and at the peak to its Anonymous then. */
static void assert_mappings_sum(const struct replay_mm *mm)
{
	uint64_t anon = mm->other_final.anon_kb, huge = mm->other_final.anon_huge_kb;
	uint64_t peak = mm->other_peak.anon_kb;

	for (int k = 0; k < mm->mappings.n; k++) {
		anon += mm->mappings.v[k].final.anon_kb;
		huge += mm->mappings.v[k].final.anon_huge_kb;
		peak += mm->mappings.v[k].peak.anon_kb;
		ASSERT(!mm->mappings.v[k].gone || !mm->mappings.v[k].final.anon_kb);
	}
	ASSERT_EQ(anon, mm->final[THPS_PROC_Anonymous]);
	ASSERT_EQ(huge, mm->final[THPS_PROC_AnonHugePages]);
	ASSERT_EQ(peak, mm->maps_peak_anon_kb);
	/* the view is taken within 1/64 of the peak (measure_mappings.c,
	 * mappings_freeing); no shrinker here */
	ASSERT_LE(mm->maps_peak_anon_kb, mm->final[THPS_PROC_VmHWM]);
	ASSERT_LE(mm->final[THPS_PROC_VmHWM] - mm->final[THPS_PROC_VmHWM] / 64, mm->maps_peak_anon_kb);
}

/* Two mmaps the kernel merges into one VMA (the second right above the
 * first, same protection), each madvised and written once: a THP fault
 * maps the whole 2 MiB range of the fault inside the VMA
 * (do_huge_pmd_anonymous_page), so each mapping holds one THP; smaps
 * shows one VMA of 4096 kB AnonHugePages, which attribution splits. */
TEST(replay_mappings_merged_vmas_stay_two)
{
	const struct replay_mm *mm;

	tbegin("maps-merged");
	tsys(9, (int64_t)A, 0, HPAGE, RW, ANON_PRIVATE);
	tsys(9, (int64_t)(A + HPAGE), 0, HPAGE, RW, ANON_PRIVATE);
	tsys(28, 0, A, HPAGE, 14, 0);
	tsys(28, 0, A + HPAGE, HPAGE, 14, 0);
	trace_write_fault(&W, A, 1, 0);
	trace_write_fault(&W, A + HPAGE + PAGE, 1, 0);
	trace_write_exit(&W, 0);
	keep_trace = 1;
	treplay(NULL);
	mm = tmm(PID, 0);
	ASSERT_EQ(mm->final[THPS_PROC_AnonHugePages], 4096);
	ASSERT_EQ(tmap(mm, A)->final.anon_huge_kb, 2048);
	ASSERT_EQ(tmap(mm, A + HPAGE)->final.anon_huge_kb, 2048);
	ASSERT_EQ(tmap(mm, A)->kind, REPLAY_MAP_mmap_large);
	ASSERT_EQ(tmap(mm, A)->advice, 14);
	ASSERT(!strcmp(tmap(mm, A)->call, "mmap"));
	assert_mappings_sum(mm);
	/* under never: one 4 KiB page each */
	treplay_again("transparent_hugepage/enabled=never");
	mm = tmm(PID, 0);
	ASSERT_EQ(tmap(mm, A)->final.anon_kb, 4);
	ASSERT_EQ(tmap(mm, A + HPAGE)->final.anon_kb, 4);
	assert_mappings_sum(mm);
}

/*
 * CALLER records (record --callers): a chain belongs to the next SYSCALL of
 * its process, not to another process's call in between, nor to a later
 * call of its own; a mapping keeps its own through an mremap that moves it,
 * and the same chain is kept once for the result.
 */
TEST(replay_mappings_caller_is_the_next_calls)
{
	const struct replay_mm *mm;

	tbegin("maps-caller");
	trace_write_caller(&W, "__mmap <- make_big_map <- main");
	trace_write_proc(&W, PID + 1);
	trace_write_note(&W, "another process between the CALLER and its call");
	trace_write_proc(&W, PID);
	tsys(9, (int64_t)A, 0, HPAGE, RW, ANON_PRIVATE);
	tsys(9, (int64_t)(A + MB(8)), 0, HPAGE, RW, ANON_PRIVATE); /* no chain */
	trace_write_caller(&W, "__mmap <- make_big_map <- main");
	tsys(9, (int64_t)(A + MB(16)), 0, HPAGE, RW, ANON_PRIVATE);
	trace_write_caller(&W, "mremap <- grow <- main");
	tsys(25, (int64_t)(A + MB(32)), A + MB(16), HPAGE, 2 * HPAGE, 3); /* MAYMOVE|FIXED */
	trace_write_fault(&W, A, 1, 0);
	trace_write_fault(&W, A + MB(32), 1, 0);
	trace_write_exit(&W, 0);
	treplay("transparent_hugepage/enabled=never", NULL);
	mm = tmm(PID, 0);
	ASSERT(tmap(mm, A)->caller && !strcmp(tmap(mm, A)->caller, "__mmap <- make_big_map <- main"));
	ASSERT(tmap(mm, A + MB(8))->caller == NULL);
	/* moved and grown: still the mapping the mmap made, with its chain */
	ASSERT(tmap(mm, A + MB(32))->caller == tmap(mm, A)->caller);
	ASSERT_EQ(tmap(mm, A + MB(32))->end, A + MB(32) + 2 * HPAGE);
	ASSERT_EQ(R.ncallers, 2);
	assert_mappings_sum(mm);
}

/* exec's stack (grown down by a fault below it: the stack's own), the heap
 * grown by brk (one mapping, however many calls) and shrunk, a thread
 * stack (MAP_STACK) and a 40 MiB mmap, under THP never: each written page
 * is 4 kB of Anonymous where it was written (do_anonymous_page). */
TEST(replay_mappings_kinds_heap_stack_and_sizes)
{
	const struct replay_mm *mm;
	uint64_t top = 0x7ffffff00000ULL, heap = 0x555555600000ULL, ts = A + MB(64);

	tbegin("maps-kinds");
	trace_write_exec(&W, "/bin/prog2", heap, heap, 8 << 20);
	trace_write_vma(&W, top - KB(132), KB(132), RW, TRACE_VMA_STACK, "");
	trace_write_touch(&W, top - KB(8), KB(8), TRACE_TOUCH_WRITE);
	trace_write_fault(&W, top - MB(1), 1, 0);
	tsys(12, (int64_t)heap + KB(64), heap + KB(64), 0, 0, 0);
	tsys(12, (int64_t)heap + KB(200), heap + KB(200), 0, 0, 0);
	tfaults(heap, KB(200), PAGE, 1);
	tsys(12, (int64_t)heap + KB(100), heap + KB(100), 0, 0, 0);
	tsys(9, (int64_t)ts, 0, MB(8), RW, ANON_PRIVATE | 0x20000 /* MAP_STACK */);
	tfaults(ts + MB(8) - KB(16), KB(16), PAGE, 1);
	tsys(9, (int64_t)A, 0, MB(40), RW, ANON_PRIVATE);
	tfaults(A, MB(1), PAGE, 1);
	trace_write_exit(&W, 0);
	treplay("transparent_hugepage/enabled=never", NULL);
	mm = tmm(PID, 1);
	ASSERT_EQ(tmap(mm, top - MB(1))->kind, REPLAY_MAP_stack); /* grown down to the fault */
	ASSERT_EQ(tmap(mm, top - MB(1))->final.anon_kb, 8 + 4);
	ASSERT_EQ(tmap(mm, heap)->kind, REPLAY_MAP_heap);
	ASSERT_EQ(tmap(mm, heap)->end, heap + KB(100));
	ASSERT_EQ(tmap(mm, heap)->final.anon_kb, 100);
	ASSERT_EQ(tmap(mm, ts)->kind, REPLAY_MAP_thread_stack);
	ASSERT_EQ(tmap(mm, ts)->final.anon_kb, 16);
	ASSERT_EQ(tmap(mm, A)->kind, REPLAY_MAP_mmap_huge);
	ASSERT_EQ(tmap(mm, A)->final.anon_kb, 1024);
	ASSERT_EQ(mm->other_final.anon_kb, 0);
	assert_mappings_sum(mm);
}

/* munmap of a part, mremap of the rest to a new place (it keeps its kind
 * and origin, and grows), fork (the child starts with its parent's
 * mappings), and a mapping that held the peak then went. */
TEST(replay_mappings_follow_munmap_mremap_and_fork)
{
	const struct replay_mm *mm, *child;
	uint64_t to = A + MB(256);
	const struct replay_mapping *m;

	tbegin("maps-move");
	tsys(9, (int64_t)A, 0, MB(1), RW, ANON_PRIVATE);
	tfaults(A, MB(1), PAGE, 1);
	tsys(11, 0, A + KB(512), KB(512), 0, 0);
	tsys(25, (int64_t)to, A, KB(512), MB(1), 3 /* MAYMOVE|FIXED */);
	tfaults(to + KB(512), KB(64), PAGE, 1);
	tsys(9, (int64_t)(A + MB(64)), 0, MB(8), RW, ANON_PRIVATE);
	tfaults(A + MB(64), MB(8), PAGE, 1);
	tsys(11, 0, A + MB(64), MB(8), 0, 0);
	trace_write_fork(&W, PID + 1, 0x1200011);
	trace_write_proc(&W, PID + 1);
	trace_write_fault(&W, to + MB(1) - PAGE, 1, 0);
	trace_write_exit(&W, 0);
	trace_write_proc(&W, PID);
	trace_write_exit(&W, 0);
	treplay("transparent_hugepage/enabled=never", NULL);
	mm = tmm(PID, 0);
	m = tmap(mm, to);
	ASSERT_EQ(m->end, to + MB(1));
	ASSERT_EQ(m->kind, REPLAY_MAP_mmap_medium); /* its first call's length */
	ASSERT(!strcmp(m->call, "mmap"));
	ASSERT_EQ(m->final.anon_kb, 512 + 64);
	ASSERT_EQ(m->peak.anon_kb, 512 + 64);
	m = tmap(mm, A + MB(64)); /* held the peak, then went */
	ASSERT(m->gone);
	ASSERT_EQ(m->peak.anon_kb, 8192);
	ASSERT_EQ(m->final.anon_kb, 0);
	assert_mappings_sum(mm);
	child = tmm(PID + 1, 0);
	ASSERT_EQ(tmap(child, to)->final.anon_kb, 512 + 64 + 4);
	assert_mappings_sum(child);
}

/* The work measure: the kernel's counters of THP work, with when they
 * happened.  16 MiB with MADV_HUGEPAGE written once every 2 MiB at 1 s:
 * 8 THPs, each zeroed at the fault (do_huge_pmd_anonymous_page,
 * thp_fault_alloc); 300 writes to a 4 KiB-only mapping at 2 s carry the
 * replay past its first sample (every 256 records), which closes the
 * interval the THPs were made in; at 3 s munmap of 1 MiB inside the first
 * THP splits its PMD (__split_huge_pmd: thp_split_pmd) and queues the
 * folio for a deferred split (observed S9a: thp_deferred_split_page); the
 * exit at 4 s ends the last interval. */
TEST(replay_work_counts_and_when)
{
	const struct replay_work *alloc, *split;
	const uint64_t B = A + (64ULL << 20);
	char name[48];

	tbegin("work");
	tsys(9, (int64_t)A, 0, 16ULL << 20, RW, ANON_PRIVATE);
	tsys(28, 0, A, 16ULL << 20, 14, 0);
	tsys(9, (int64_t)B, 0, 2ULL << 20, RW, ANON_PRIVATE);
	tsys(28, 0, B, 2ULL << 20, 15, 0); /* MADV_NOHUGEPAGE */
	trace_write_time(&W, 1000000000ULL, 0);
	tfaults(A, 16ULL << 20, HPAGE, 1);
	trace_write_time(&W, 2000000000ULL, 0);
	tfaults(B, 300 * PAGE, PAGE, 1);
	trace_write_time(&W, 3000000000ULL, 0);
	tsys(11, 0, A + (512 << 10), 1 << 20, 0, 0);
	trace_write_time(&W, 4000000000ULL, 0);
	trace_write_exit(&W, 0);
	treplay(NULL);
	alloc = &R.work[REPLAY_WORK_thp_fault_alloc];
	split = &R.work[REPLAY_WORK_thp_split_pmd];
	ASSERT(!strcmp(replay_work_name(REPLAY_WORK_thp_split_pmd, name, sizeof(name)), "thp_split_pmd"));
	ASSERT_EQ(alloc->count, 8);
	ASSERT_EQ(alloc->count, R.vm[THPS_VM_thp_fault_alloc]);
	ASSERT_EQ(alloc->count * alloc->kb_each, 16384);
	ASSERT_EQ(alloc->first_ns, 2000000000ULL);
	ASSERT_EQ(alloc->last_ns, 2000000000ULL);
	ASSERT_EQ(alloc->busiest, 8);
	ASSERT_EQ(alloc->busiest_from_ns, 0);
	ASSERT_EQ(split->count, 1);
	ASSERT_EQ(split->count, R.vm[THPS_VM_thp_split_pmd]);
	ASSERT_EQ(split->first_ns, 4000000000ULL);
	ASSERT_EQ(split->busiest_from_ns, 2000000000ULL);
	ASSERT_EQ(R.work[REPLAY_WORK_thp_deferred_split_page].count, 1);
	ASSERT_EQ(R.work[REPLAY_WORK_thp_collapse_alloc].count, 0);
	/* the 64 KiB folios' row: none, as the trace's machine has them off */
	ASSERT(!strcmp(replay_work_name(REPLAY_WORK_MTHP + 2 * (4 - THPS_MTHP_MIN_ORDER), name,
					 sizeof(name)), "anon_fault_alloc 64kB"));
	ASSERT_EQ(R.work[REPLAY_WORK_MTHP + 2 * (4 - THPS_MTHP_MIN_ORDER)].count, 0);
}

/* Occupancy: 8 MiB mmap'd, the first 4 MiB with MADV_HUGEPAGE.  Range 0:
 * all 512 pages written; range 1: 100 pages read; range 2: one page
 * written, then unmapped (forgotten); range 3: 300 pages written, then
 * MADV_DONTNEED of 100 of them (forgotten).  A forked child starts with
 * its parent's.  Which ranges a PMD maps under madvise: 0 (a write fault
 * in a MADV_HUGEPAGE range: do_huge_pmd_anonymous_page allocates a THP)
 * and 1 (a read fault there: the huge zero page, or a THP where there is
 * no zero page, both PMD-mapped); range 3 has no advice; under never, none. */
static void occupancy_trace(void)
{
	tsys(9, (int64_t)A, 0, 8ULL << 20, RW, ANON_PRIVATE);
	tsys(28, 0, A, 4ULL << 20, 14, 0);
	tfaults(A, HPAGE, PAGE, 1);
	tfaults(A + HPAGE, 100 * PAGE, PAGE, 0);
	tfaults(A + 2 * HPAGE, PAGE, PAGE, 1);
	tfaults(A + 3 * HPAGE, 300 * PAGE, PAGE, 1);
	tsys(11, 0, A + 2 * HPAGE, HPAGE, 0, 0);
	tsys(28, 0, A + 3 * HPAGE, 100 * PAGE, 4, 0);
	trace_write_fork(&W, PID + 1, 0x1200011);
	trace_write_proc(&W, PID + 1);
	trace_write_exit(&W, 0);
	trace_write_proc(&W, PID);
	trace_write_exit(&W, 0);
}

TEST(replay_occupancy_of_the_2m_ranges)
{
	const struct replay_occupancy *o;
	const int K = REPLAY_MAP_mmap_large;

	tbegin("occ");
	occupancy_trace();
	keep_trace = 1;
	treplay(NULL); /* the trace's machine: madvise */
	o = &tmm(PID, 0)->occ_final;
	ASSERT_EQ(o->ranges[K][0][8], 1);              /* range 0: 512 */
	ASSERT_EQ(o->ranges[K][0][1], 1);              /* range 1: 100, in 65-128 */
	ASSERT_EQ(o->ranges[K][0][3], 1);              /* range 3: 200, in 193-256 */
	ASSERT_EQ(o->ranges[K][1][8], 1);              /* written: range 0 ... */
	ASSERT_EQ(o->ranges[K][1][3], 1);              /* ... and range 3 */
	ASSERT_EQ(o->ranges[K][1][1], 0);              /* range 1 was only read */
	ASSERT_EQ(o->touched_kb, (512 + 100 + 200) * 4);
	ASSERT_EQ(o->written_kb, (512 + 200) * 4);
	ASSERT_EQ(o->touched_huge_kb, (512 + 100) * 4);
	/* the child: its parent's pages, as they were at the fork */
	ASSERT_EQ(tmm(PID + 1, 0)->occ_final.touched_kb, (512 + 100 + 200) * 4);
	ASSERT_EQ(tmm(PID + 1, 0)->occ_final.ranges[K][0][8], 1);
	/* the peak view: before the munmap, with range 2's page and range 3 whole */
	o = &tmm(PID, 0)->occ_peak;
	ASSERT_EQ(o->touched_kb, (512 + 100 + 1 + 300) * 4);
	ASSERT_EQ(o->ranges[K][0][0], 1);              /* range 2: 1 page */
	ASSERT_EQ(o->ranges[K][0][4], 1);              /* range 3: 300, in 257-320 */
	/* under never the same pages, none of them in a PMD mapping */
	treplay_again("transparent_hugepage/enabled=never");
	ASSERT_EQ(tmm(PID, 0)->occ_final.touched_kb, (512 + 100 + 200) * 4);
	ASSERT_EQ(tmm(PID, 0)->occ_final.touched_huge_kb, 0);
	ASSERT_LE(1, R.coverage.n);
}

/* mTHP coverage by folio size, on Linux 6.12's profile with
 * hugepages-64kB/enabled=always and the PMD size never.  A write fault in
 * an anonymous VMA takes the largest enabled order whose aligned range
 * lies inside the VMA with every PTE of it empty (mm/memory.c,
 * alloc_anon_folio, thp_vma_suitable_order), and maps the whole folio:
 *  - 1 MiB at A, every page written: 16 folios of 64K, each of its 256
 *    pages in one (1024 kB);
 *  - 96 KiB at a 64K-aligned address, written whole: one 64K folio for
 *    the first 64K (64 kB), small pages for the last 32K, whose aligned
 *    64K range runs past the VMA;
 *  - 32 KiB, written whole: smaller than 64K, small pages only;
 *  - 64 KiB only read: the shared zero page, no folio at all.
 * Of 256 + 24 + 8 + 16 pages touched, 256 + 16 are in 64K folios. */
TEST(replay_mthp_coverage_per_folio_size)
{
	const uint64_t B = A + (16ULL << 20), C = A + (32ULL << 20), D = A + (48ULL << 20);
	const struct replay_occupancy *o;
	uint64_t most = 0;
	char name[16];

	tbegin("mthp");
	tsys(9, (int64_t)A, 0, 1ULL << 20, RW, ANON_PRIVATE);
	tsys(9, (int64_t)B, 0, 96 << 10, RW, ANON_PRIVATE);
	tsys(9, (int64_t)C, 0, 32 << 10, RW, ANON_PRIVATE);
	tsys(9, (int64_t)D, 0, 64 << 10, RW, ANON_PRIVATE);
	tfaults(A, 1ULL << 20, PAGE, 1);
	tfaults(B, 96 << 10, PAGE, 1);
	tfaults(C, 32 << 10, PAGE, 1);
	tfaults(D, 64 << 10, PAGE, 0);
	/* the series samples every 256 records: 256 more, of pages already
	 * mapped (no fault in the kernel), for a point after all of them */
	tfaults(A, 1ULL << 20, PAGE, 1);
	trace_write_exit(&W, 0);
	treplay("thpsim/kernel=6.12", "transparent_hugepage/enabled=never",
		"transparent_hugepage/hugepages-64kB/enabled=always", NULL);
	ASSERT(!strcmp(replay_folio_size_name(4, name, sizeof(name)), "64K"));
	o = &tmm(PID, 0)->occ_final;
	ASSERT_EQ(o->touched_kb, (256 + 24 + 8 + 16) * 4);
	ASSERT_EQ(o->touched_huge_kb, 0);
	ASSERT_EQ(o->touched_mthp_kb[4], (256 + 16) * 4);
	for (int order = 1; order < REPLAY_MTHP_ORDERS; order++)
		if (order != 4)
			ASSERT_EQ(o->touched_mthp_kb[order], 0);
	/* the peak view is the exit's; over time, the series reaches it */
	ASSERT_EQ(tmm(PID, 0)->occ_peak.touched_mthp_kb[4], (256 + 16) * 4);
	for (int i = 0; i < R.coverage.n; i++)
		if (R.coverage.p[i].touched_mthp_kb[4] > most)
			most = R.coverage.p[i].touched_mthp_kb[4];
	ASSERT_EQ(most, (256 + 16) * 4);
}

/*
 * The coverage of the pages a program accessed (record --access's ACCESS
 * records, measure_access.c).  8 MiB mapped at A (2 MiB-aligned), its
 * first 4 MiB madvised MADV_HUGEPAGE (madvise splits the VMA there), every
 * page written.  Under the trace's `madvise`, a write fault gives a PMD THP
 * where the aligned 2 MiB block lies in a VM_HUGEPAGE VMA
 * (do_huge_pmd_anonymous_page): blocks 0 and 1; blocks 2 and 3 are 4 KiB
 * pages.  The sample's regions: [A+1M, A+5M) (1 MiB of block 0, block 1,
 * 1 MiB of block 2), [A+7M, A+7M+64K) in block 3, and 1 MiB past the
 * mapping (nothing mapped there).  So: 5184 kB accessed, 4160 mapped,
 * 3072 by PMDs in 2 translations of 2 MiB, 256 + 16 of 4 KiB.  Under
 * `always` every block is a THP (4 translations of 2 MiB), under `never`
 * none (1040 of 4 KiB).  A second sample, after block 0 is unmapped,
 * covers [A, A+4M): block 1 alone is mapped.  A third, two regions of
 * 64 KiB inside block 1, takes one translation of 2 MiB, not two.  The
 * recording kernel's figures pass through as they were written.
 */
static void access_trace(void)
{
	tsys(9, (int64_t)A, 0, 8ULL << 20, RW, ANON_PRIVATE);
	tsys(28, 0, A, 4ULL << 20, 14, 0);
	tfaults(A, 8ULL << 20, PAGE, 1);
	trace_write_access(&W, A + (1ULL << 20), 4ULL << 20, 12);
	trace_write_access(&W, A + (7ULL << 20), 64 << 10, 3);
	trace_write_access(&W, A + (8ULL << 20), 1ULL << 20, 1);
	trace_write_access_end(&W, &(struct trace_access_end){ .interval_us = 100000,
							       .checks = 20, .truth = 1,
							       .present_kb = 4160,
							       .pmd_kb = 3072 });
	tsys(11, 0, A, HPAGE, 0, 0);
	trace_write_access(&W, A, 4ULL << 20, 20);
	trace_write_access_end(&W, &(struct trace_access_end){ .interval_us = 100000, .checks = 20 });
	trace_write_access(&W, A + HPAGE, 64 << 10, 2);
	trace_write_access(&W, A + HPAGE + (1ULL << 20), 64 << 10, 2);
	trace_write_access_end(&W, &(struct trace_access_end){ .interval_us = 100000, .checks = 20 });
	trace_write_exit(&W, 0);
}

TEST(replay_access_coverage_of_the_sampled_regions)
{
	const struct replay_access_point *p;

	tbegin("access");
	access_trace();
	keep_trace = 1;
	treplay(NULL);
	ASSERT_EQ(R.access.n, 3);
	p = &R.access.p[0];
	ASSERT_EQ(p->pid, PID);
	ASSERT_EQ(p->interval_us, 100000);
	/* the first region holds the second half of a THP: the whole THP
	 * counts, as DAMON sees it (one young bit a PMD) */
	ASSERT_EQ(p->accessed_kb, 4096 + 64 + 1024 + 1024);
	ASSERT_EQ(p->present_kb, 4096 + 64 + 1024);
	ASSERT_EQ(p->pmd_kb, 4096);
	ASSERT_EQ(p->mthp_kb, 0);
	ASSERT_EQ(p->pmd_translations, 2);
	ASSERT_EQ(p->pte_translations, 256 + 16);
	ASSERT_EQ(p->kernel, 1);
	ASSERT_EQ(p->kernel_present_kb, 4160);
	ASSERT_EQ(p->kernel_pmd_kb, 3072);
	p = &R.access.p[1];
	ASSERT_EQ(p->present_kb, 2048);
	ASSERT_EQ(p->pmd_kb, 2048);
	ASSERT_EQ(p->pmd_translations, 1);
	ASSERT_EQ(p->pte_translations, 0);
	ASSERT_EQ(p->kernel, 0);
	/* two regions of 64 KiB in one THP: the THP once, whole */
	p = &R.access.p[2];
	ASSERT_EQ(p->accessed_kb, 2048);
	ASSERT_EQ(p->present_kb, 2048);
	ASSERT_EQ(p->pmd_kb, 2048);
	ASSERT_EQ(p->pmd_translations, 1);
	/* over the samples: 8192 of 9280 kB mapped by PMDs */
	ASSERT(replay_access_pmd_pct(&R) > 88.2 && replay_access_pmd_pct(&R) < 88.3);

	/* always: every 2 MiB a region touches is a THP, each whole */
	treplay_again("transparent_hugepage/enabled=always");
	p = &R.access.p[0];
	ASSERT_EQ(p->present_kb, 8192);
	ASSERT_EQ(p->pmd_kb, 8192);
	ASSERT_EQ(p->pmd_translations, 4);
	ASSERT_EQ(p->pte_translations, 0);
	tbegin("access");
	access_trace();
	treplay("transparent_hugepage/enabled=never", NULL);
	p = &R.access.p[0];
	ASSERT_EQ(p->present_kb, 4160);
	ASSERT_EQ(p->pmd_kb, 0);
	ASSERT_EQ(p->pte_translations, 1040);
}

/*
 * Under another address layout the accessed regions move with the mapping
 * they lie in.  An mmap of 5 MiB + 4 KiB without a hint (not a multiple of
 * 2 MiB: no kernel aligns it) moves with the mmap base, by whole pages;
 * the sample is its first and last pages, mapped in every layout.  Were
 * the regions left at their recorded addresses, a layout that moved the
 * mapping would find one of them unmapped.
 */
TEST(replay_access_regions_move_with_the_layout)
{
	const uint64_t len = (5ULL << 20) + PAGE;
	struct replay_opts o = { .ram_bytes = 2ULL << 30, .layout_seed = 7 };
	char err[1024];
	int moved = 0;

	tbegin("access-layout");
	tsys(9, (int64_t)A, 0, len, RW, ANON_PRIVATE);
	tfaults(A, len, PAGE, 1);
	trace_write_access(&W, A, PAGE, 5);
	trace_write_access(&W, A + len - PAGE, PAGE, 5);
	trace_write_access_end(&W, &(struct trace_access_end){ .interval_us = 100000, .checks = 20 });
	trace_write_exit(&W, 0);
	ASSERT_OK(trace_writer_close(&W));
	for (int k = 1; k < 8; k++) {
		const struct replay_mm *mm;

		replay_result_free(&R);
		o.layout = k;
		if (replay_run(P, &o, &R, err, sizeof(err)))
			test_fail(__FILE__, __LINE__, "replay: %s", err);
		mm = tmm(PID, 0);
		for (int i = 0; i < mm->mappings.n; i++)
			if (mm->mappings.v[i].len0 == len && mm->mappings.v[i].start != A)
				moved++;
		ASSERT_EQ(R.access.n, 1);
		ASSERT_EQ(R.access.p[0].present_kb, 8);
	}
	ASSERT(moved > 0);
	unlink(P);
}

/* Under memory.max (issue 28): the parent holds 16 MiB, its child (after
 * exec, an address space of its own) writes 12 MiB more under a limit of
 * 24 MiB.  The child's fault that does not fit calls the OOM killer, whose
 * badness (Rss + page tables, oom_badness) picks the parent; the child's
 * fault then goes on and the child finishes.  The parent's later faults
 * are skipped as a killed process's; the kill is reported with the share
 * of the trace it came after. */
TEST(replay_memory_max_kills_the_biggest_and_skips_its_records)
{
	const struct replay_mm *parent, *child;
	struct replay_opts o = { .limit_set = 1, .memory_max = 24ULL << 20,
				 .memory_high = THPS_MEMCG_NOLIMIT };

	tbegin("limit");
	tsys(9, (int64_t)A, 0, 16ULL << 20, RW, ANON_PRIVATE);
	tfaults(A, 16ULL << 20, PAGE, 1);
	trace_write_fork(&W, PID + 1, 0x1200011);
	trace_write_proc(&W, PID + 1);
	trace_write_exec(&W, "/bin/child", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	tsys(9, (int64_t)A, 0, 12ULL << 20, RW, ANON_PRIVATE);
	tfaults(A, 12ULL << 20, PAGE, 1);
	trace_write_exit(&W, 0);
	trace_write_proc(&W, PID);
	tsys(9, (int64_t)(A + (64ULL << 20)), 0, 1ULL << 20, RW, ANON_PRIVATE);
	tfaults(A + (64ULL << 20), 1ULL << 20, PAGE, 1);
	trace_write_exit(&W, 0);
	ASSERT_OK(knob_sets_add(&o.knobs, "transparent_hugepage/enabled=never"));
	treplay_opts(&o);
	parent = tmm(PID, 0);
	child = tmm(PID + 1, 1); /* after the fork's copy, its exec */
	ASSERT_EQ(R.limited, 1);
	ASSERT_EQ(parent->oom_killed, 1);
	ASSERT(!strcmp(parent->end, "OOM kill"));
	ASSERT_EQ(child->oom_killed, 0);
	ASSERT(!strcmp(child->end, "exit"));
	ASSERT_EQ(child->final[THPS_PROC_Anonymous], 12 * 1024);
	ASSERT_EQ(R.memcg.events[THPS_MEMCG_oom_kill], 1);
	ASSERT_EQ(R.oom_kills, 1);
	/* the parent's 256 faults after the kill */
	ASSERT_EQ(R.skips[REPLAY_SKIP_oom_killed], 256);
	/* killed while the child faulted: after its exec, before its exit */
	ASSERT(parent->oom_kill_record > 4096 + 4);
	ASSERT(parent->oom_kill_record < 4096 + 3072 + 6);
	ASSERT_LE(R.memcg.peak_bytes, 24ULL << 20);
}

/* The limits of the cgroup a program was recorded in (the header's
 * cgroup/ keys, thpsim record) apply unless --no-limit or an option says
 * otherwise. */
TEST(replay_uses_the_recorded_cgroup_limit)
{
	struct trace_header h = { 0 };
	struct replay_opts o = { 0 };

	snprintf(P, sizeof(P), "/tmp/thpsim-test-%d-cg.trace", (int)getpid());
	ASSERT_OK(trace_header_add(&h, "transparent_hugepage/enabled", "never"));
	ASSERT_OK(trace_header_add(&h, "cgroup", "/test"));
	ASSERT_OK(trace_header_add(&h, "cgroup/memory.max", "8388608"));
	ASSERT_OK(trace_header_add(&h, "cgroup/memory.high", "max"));
	ASSERT_OK(trace_header_add(&h, "cgroup/memory.swap.max", "0"));
	ASSERT_OK(trace_writer_open(&W, P, &h));
	trace_write_proc(&W, PID);
	trace_write_exec(&W, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	tsys(9, (int64_t)A, 0, 16ULL << 20, RW, ANON_PRIVATE);
	tfaults(A, 16ULL << 20, PAGE, 1);
	trace_write_exit(&W, 0);
	ASSERT_OK(trace_writer_close(&W));
	for (int no_limit = 0; no_limit < 2; no_limit++) {
		char err[1024];

		replay_result_free(&R);
		o.ram_bytes = 2ULL << 30;
		o.no_limit = no_limit; /* --no-limit: the whole 16 MiB */
		if (replay_run(P, &o, &R, err, sizeof(err)))
			test_fail(__FILE__, __LINE__, "replay: %s", err);
		ASSERT_EQ(R.limited, !no_limit);
		ASSERT_EQ(tmm(PID, 0)->oom_killed, !no_limit);
		if (no_limit)
			ASSERT_EQ(tmm(PID, 0)->final[THPS_PROC_Anonymous], 16 * 1024);
		else
			ASSERT_EQ(R.memcg.max_bytes, 8ULL << 20);
	}
	unlink(P);
}

/* --free-blocks: the replay's machine with a fragmented machine's free
 * memory (thps_shape_free): 3 free blocks of 2 MiB and 500 pages give 3
 * THPs; the other faults take 4 KiB pages, as on a machine without
 * compaction for the fault; when those are gone the machine's OOM killer
 * ends the program. */
TEST(replay_free_blocks_shape_the_machine)
{
	struct replay_opts o = { .nfree_blocks = 10, .free_blocks = { 500, 0, 0, 0, 0, 0, 0, 0, 0, 3 } };

	tbegin("blocks");
	tsys(9, (int64_t)A, 0, 64ULL << 20, RW, ANON_PRIVATE);
	tfaults(A, 64ULL << 20, 64 << 10, 1);
	trace_write_exit(&W, 0);
	ASSERT_OK(knob_sets_add(&o.knobs, "transparent_hugepage/enabled=always"));
	treplay_opts(&o);
	ASSERT_EQ(R.vm[THPS_VM_thp_fault_alloc], 3);
	ASSERT(R.vm[THPS_VM_thp_fault_fallback] > 0);
	ASSERT_EQ(tmm(PID, 0)->oom_killed, 1);
}
