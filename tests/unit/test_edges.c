/*
 * test_edges.c - the user-facing edges of the commands: a
 * user's file is never lost or written through a symlink, a failed trace
 * says so, a damaged trace is read up to the damage, a dead worker is an
 * error, and the output formats say what their figures are.
 *
 * The commands are called as main() calls them (cmd_record, cmd_compare,
 * ...), on files in /tmp; recording ones need root and tracing and skip
 * elsewhere.
 */
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test.h"
#include "cli/cli.h"
#include "record/record.h"
#include "replay/replay.h"
#include "trace/trace.h"
#include "util/outfile.h"

static char dir[128];

/* A fresh directory for the test's files. */
static const char *tdir(const char *tag)
{
	char cmd[300];

	snprintf(dir, sizeof(dir), "/tmp/thpsim-test-%d-%s", (int)getpid(), tag);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
	ASSERT_OK(mkdir(dir, 0700) ? -errno : 0);
	return dir;
}

static void tdir_remove(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ASSERT(f);
	fputs(text, f);
	ASSERT_EQ(fclose(f), 0);
}

/* The file's first bytes, "" when it does not exist. */
static const char *file_text(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = 0;
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return buf;
}

/* Entries in dir other than . and .. */
static int dir_entries(void)
{
	char cmd[300];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	ASSERT(p);
	ASSERT_EQ(fscanf(p, "%d", &n), 1);
	pclose(p);
	return n;
}

static int can_record(void)
{
	struct rec_perf pp;
	char why[512];

	return geteuid() == 0 && !rec_tracing_setup(&pp, why, sizeof(why));
}

/* A small complete trace: one process mapping and writing 1 MiB. */
static void small_trace(const char *path)
{
	struct trace_writer w;
	uint64_t args[6] = { 0, MB(1), 3, 0x22, (uint64_t)-1, 0 };

	ASSERT_OK(trace_writer_open(&w, path, NULL));
	trace_write_proc(&w, 100);
	trace_write_exec(&w, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	trace_write_syscall(&w, 9, 6, args, 0x7f0000000000LL);
	for (uint64_t a = 0; a < MB(1); a += PAGE)
		trace_write_fault(&w, 0x7f0000000000ULL + a, 1, 0);
	trace_write_exit(&w, 0);
	ASSERT_OK(trace_writer_close(&w));
}

/* ---- 1. files ---- */

TEST(edges_outfile_never_overwrites_without_force)
{
	char target[256], link[256], why[8192];
	struct outfile of;

	tdir("of");
	snprintf(target, sizeof(target), "%s/precious", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	put_file(target, "precious\n");
	/* without force: refused, untouched, no temporary file left */
	ASSERT_EQ(outfile_open(&of, target, 0, why, sizeof(why)), -EEXIST);
	ASSERT(strstr(why, "--force"));
	ASSERT(!strcmp(file_text(target), "precious\n"));
	/* with force: the old file stays until the new one is complete */
	ASSERT_OK(outfile_open(&of, target, 1, why, sizeof(why)));
	fputs("new\n", of.f);
	ASSERT(!strcmp(file_text(target), "precious\n"));
	ASSERT_EQ(dir_entries(), 2); /* the target and the temporary file beside it */
	outfile_abort(&of);
	ASSERT(!strcmp(file_text(target), "precious\n"));
	ASSERT_EQ(dir_entries(), 1);
	ASSERT_OK(outfile_open(&of, target, 1, why, sizeof(why)));
	fputs("new\n", of.f);
	ASSERT_OK(outfile_commit(&of, why, sizeof(why)));
	ASSERT(!strcmp(file_text(target), "new\n"));
	ASSERT_EQ(dir_entries(), 1);
	/* a symlink is never written through, even with force */
	ASSERT_EQ(symlink(target, link), 0);
	ASSERT_EQ(outfile_open(&of, link, 1, why, sizeof(why)), -ELOOP);
	ASSERT(strstr(why, "symbolic link"));
	ASSERT(!strcmp(file_text(target), "new\n"));
	/* a file that appears while writing is not replaced without force */
	unlink(target);
	ASSERT_OK(outfile_open(&of, target, 0, why, sizeof(why)));
	fputs("late\n", of.f);
	put_file(target, "appeared\n");
	ASSERT_EQ(outfile_commit(&of, why, sizeof(why)), -EEXIST);
	ASSERT(!strcmp(file_text(target), "appeared\n"));
	ASSERT_EQ(dir_entries(), 2); /* the target and the link */
	/* a device is written directly, and a failed write is an error */
	ASSERT_OK(outfile_open(&of, "/dev/full", 0, why, sizeof(why)));
	fputs("x\n", of.f);
	ASSERT_EQ(outfile_commit(&of, why, sizeof(why)), -ENOSPC);
	ASSERT(strstr(why, "/dev/full"));
	tdir_remove();
}

TEST(edges_compare_svg_keeps_an_existing_file)
{
	char trace[256], svgp[256];
	char *cmp[] = { "compare", "-q", trace, "--svg", svgp, NULL };
	char *cmpf[] = { "compare", "-q", trace, "--svg", svgp, "--force", NULL };

	tdir("svg");
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	snprintf(svgp, sizeof(svgp), "%s/chart.svg", dir);
	small_trace(trace);
	put_file(svgp, "precious\n");
	fflush(stdout);
	ASSERT_EQ(cmd_compare(5, cmp), 2);
	ASSERT(!strcmp(file_text(svgp), "precious\n"));
	ASSERT_EQ(cmd_compare(6, cmpf), 0);
	ASSERT(!strncmp(file_text(svgp), "<svg", 4));
	ASSERT_EQ(dir_entries(), 2);
	tdir_remove();
}

TEST(edges_record_never_loses_a_file)
{
	char target[256], link[256];
	char *plain[] = { "record", "-q", "-o", target, "--", "/bin/true", NULL };
	char *forced_bad[] = { "record", "-q", "--force", "-o", target, "--", "/nonexistent/cmd", NULL };
	char *via_link[] = { "record", "-q", "--force", "-o", link, "--", "/bin/true", NULL };
	char *forced[] = { "record", "-q", "--force", "-o", target, "--", "/bin/true", NULL };
	char *dashes[] = { "record", "-q", "-o", "--", "/bin/true", NULL };

	ASSERT_EQ(cmd_record(5, dashes), 2); /* -o needs a name, not "--" */
	if (!can_record())
		test_skip("recording needs root and the kernel's tracepoints");
	tdir("rec");
	snprintf(target, sizeof(target), "%s/precious.txt", dir);
	snprintf(link, sizeof(link), "%s/link.trace", dir);
	put_file(target, "precious\n");
	fflush(stdout);
	ASSERT_EQ(cmd_record(6, plain), 2);
	ASSERT(!strcmp(file_text(target), "precious\n"));
	/* a command that cannot run leaves the file as it was */
	ASSERT_EQ(cmd_record(7, forced_bad), 127);
	ASSERT(!strcmp(file_text(target), "precious\n"));
	/* a symlink is not written through */
	ASSERT_EQ(symlink(target, link), 0);
	ASSERT_EQ(cmd_record(7, via_link), 2);
	ASSERT(!strcmp(file_text(target), "precious\n"));
	ASSERT_EQ(dir_entries(), 2);
	/* with --force, replaced by a whole trace */
	ASSERT_EQ(cmd_record(7, forced), 0);
	ASSERT(!strncmp(file_text(target), TRACE_MAGIC, 8));
	ASSERT_EQ(dir_entries(), 2);
	tdir_remove();
}

/* ---- 2. a failed trace ---- */

/* A stream that takes limit bytes into a real file, then fails as a full
 * disk does under stdio: the bytes that fit are written, the write fails
 * with ENOSPC. */
struct capped {
	FILE *f;
	size_t left;
};

static ssize_t capped_write(void *c_, const char *buf, size_t len)
{
	struct capped *c = c_;
	size_t n = len < c->left ? len : c->left;

	n = fwrite(buf, 1, n, c->f);
	c->left -= n;
	if (n < len) {
		errno = ENOSPC;
		return -1;
	}
	return (ssize_t)n;
}

static int capped_close(void *c_)
{
	struct capped *c = c_;

	return fclose(c->f);
}

TEST(edges_trace_cut_short_keeps_its_complete_blocks)
{
	const uint64_t a = 0x7f0000000000ULL, b = 0x7f4000000000ULL, len = MB(128);
	uint64_t args[6] = { 0, len, 3, 0x22, (uint64_t)-1, 0 }, total = 0;
	struct capped cap = { NULL, 150000 };
	struct replay_opts o = { .ram_bytes = 1ULL << 30 };
	static struct replay_result res;
	struct trace_writer w;
	char path[256], err[1024];
	char *rp[] = { "replay", "-q", path, NULL };
	const struct replay_mm *mm;
	FILE *f;

	tdir("cut");
	snprintf(path, sizeof(path), "%s/cut.trace", dir);
	cap.f = fopen(path, "wb");
	ASSERT(cap.f);
	f = fopencookie(&cap, "w", (cookie_io_functions_t){ .write = capped_write,
							     .close = capped_close });
	ASSERT(f);
	ASSERT_OK(trace_writer_open_stream(&w, f, path, NULL));
	trace_write_proc(&w, 100);
	trace_write_exec(&w, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	trace_write_syscall(&w, 9, 6, args, (int64_t)a);
	trace_write_syscall(&w, 9, 6, args, (int64_t)b);
	/* far apart, so each fault takes a few bytes: several blocks */
	for (uint64_t off = 0; off < len; off += PAGE, total += 2) {
		trace_write_fault(&w, a + off, 1, 0);
		trace_write_fault(&w, b + off, 1, 0);
	}
	trace_write_exit(&w, 0);
	/* the writer reports the full disk */
	ASSERT_EQ(trace_writer_close(&w), -ENOSPC);
	fclose(f);
	/* the replay takes every complete block and says where it stopped */
	ASSERT_OK(replay_run(path, &o, &res, err, sizeof(err)));
	ASSERT(res.partial);
	ASSERT(strstr(res.partial_why, "offset"));
	ASSERT_LE(res.partial_offset, 150000);
	ASSERT_LE(150000 - TRACE_BLOCK_MAX - TRACE_BLOCK_HDR, res.partial_offset);
	ASSERT_EQ(res.partial_missing_bytes, 150000 - res.partial_offset);
	ASSERT_EQ(res.nmms, 1);
	mm = res.mms[0];
	ASSERT(!strcmp(mm->end, "trace cut"));
	ASSERT(mm->faults > 0 && mm->faults < total);
	/* what was read is replayed whole: a write fault is one page (THP
	 * as the header leaves it: no knobs, never) */
	ASSERT_EQ(mm->final[THPS_PROC_Anonymous], mm->faults * 4);
	replay_result_free(&res);
	/* the command prints the figures and exits 1: they are partial */
	fflush(stdout);
	ASSERT_EQ(cmd_replay(3, rp), 1);
	tdir_remove();
}

TEST(edges_record_to_a_full_disk_fails)
{
	char *full[] = { "record", "-q", "-o", "/dev/full", "--", "/bin/true", NULL };

	if (!can_record())
		test_skip("recording needs root and the kernel's tracepoints");
	ASSERT_EQ(cmd_record(6, full), 125);
}

/* ---- 3. the kernel runner: a dead worker, a scenario too large ---- */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "scenario/scenario.h"
#include "util/kprofile.h"

struct kernel_outcome {
	int rc, error;
	double seconds;
	char msg[1024];
};

/* scenario_run_kernel on text in a child that SIGALRM ends after 10 s (a
 * runner that hangs fails the test instead of hanging it). */
static void run_kernel_text(const char *name, const char *text, struct kernel_outcome *out)
{
	int pfd[2], st;
	pid_t pid;

#if defined(__SANITIZE_ADDRESS__)
	/* a worker warms every page of its own mappings, which ASan's shadow
	 * memory forbids: under ASan it dies at once (as an error now) */
	test_skip("the kernel runner's worker cannot run under ASan");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	test_skip("the kernel runner's worker cannot run under ASan");
#endif
#endif

	ASSERT_EQ(pipe(pfd), 0);
	fflush(NULL);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct kernel_outcome o = { 0 };
		struct scenario s;
		struct scn_result r;
		struct timespec a, b;

		alarm(10);
		close(pfd[0]);
		if (scenario_parse_string(name, text, &s, stderr))
			_exit(3);
		clock_gettime(CLOCK_MONOTONIC, &a);
		o.rc = scenario_run_kernel(&s, kprofile_host(), &r);
		clock_gettime(CLOCK_MONOTONIC, &b);
		o.seconds = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
		o.error = r.error;
		snprintf(o.msg, sizeof(o.msg), "%s", r.error_msg);
		if (write(pfd[1], &o, sizeof(o)) != sizeof(o))
			_exit(4);
		_exit(0);
	}
	close(pfd[1]);
	memset(out, 0, sizeof(*out));
	ASSERT_EQ(read(pfd[0], out, sizeof(*out)), sizeof(*out));
	close(pfd[0]);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		test_fail(__FILE__, __LINE__, "the kernel runner was ended by signal %d (a hang?)",
			  WTERMSIG(st));
	ASSERT_EQ(WEXITSTATUS(st), 0);
}

/* The whole run, the runner's setup included (it drops the caches, which
 * takes a while on a busy machine), then a second for the death: on an
 * idle machine the whole run takes 0.05 s; a hang ends at the alarm. */
#define SETUP_AND_A_SECOND 4.0

TEST(edges_kernel_dead_worker_is_an_error)
{
	struct kernel_outcome o;

	/* the first worker dies of its own fault */
	run_kernel_text("segv.scn", "mmap A 2M\nmprotect A 0 2M none\nwrite A 0 4K\n", &o);
	ASSERT_EQ(o.rc, -1);
	ASSERT(o.error);
	if (!strstr(o.msg, "segv.scn:3"))
		test_fail(__FILE__, __LINE__, "message: %s", o.msg);
	ASSERT(strstr(o.msg, "SIGSEGV"));
	if (o.seconds >= SETUP_AND_A_SECOND)
		test_fail(__FILE__, __LINE__, "%.2f s: %s", o.seconds, o.msg);
	/* a forked worker: its parent holds no copy of its socket */
	run_kernel_text("segv2.scn", "mmap A 2M\nwrite A 0 4K\nfork child\nproc child\n"
				     "mprotect A 0 2M none\nwrite A 0 4K\nproc main\nwrite A 4K 4K\n",
			&o);
	ASSERT(o.error);
	ASSERT(strstr(o.msg, "segv2.scn:6"));
	ASSERT(strstr(o.msg, "SIGSEGV"));
	if (o.seconds >= SETUP_AND_A_SECOND)
		test_fail(__FILE__, __LINE__, "%.2f s: %s", o.seconds, o.msg);
}

TEST(edges_kernel_refuses_a_scenario_larger_than_memory)
{
	struct kernel_outcome o;
	char text[256], buf[64];
	unsigned long long avail_kb = 0, mib;
	FILE *f = fopen("/proc/meminfo", "r");

	ASSERT(f);
	while (fscanf(f, "%63s %llu kB", buf, &mib) == 2)
		if (!strcmp(buf, "MemAvailable:"))
			avail_kb = mib;
	fclose(f);
	if (!avail_kb)
		test_skip("no MemAvailable in /proc/meminfo");
	/* twice what is available: refused before anything runs */
	mib = avail_kb * 2 / 1024;
	snprintf(text, sizeof(text), "mmap A %lluM\nwrite A 0 %lluM step=4K\n", mib, mib);
	run_kernel_text("big.scn", text, &o);
	ASSERT(o.error);
	ASSERT(strstr(o.msg, "big.scn: not run"));
	ASSERT(strstr(o.msg, "MemAvailable"));
	ASSERT(o.seconds < 1.0); /* refused before anything runs */
	/* in 2 MiB pages, one more for a THP at the end */
	snprintf(buf, sizeof(buf), "up to %llu MiB", (mib + 1) / 2 * 2 + 2);
	ASSERT(strstr(o.msg, buf));
	/* a small one runs */
	run_kernel_text("small.scn", "mmap A 2M\nwrite A 0 2M step=4K\n", &o);
	if (o.error)
		test_fail(__FILE__, __LINE__, "small.scn: %s", o.msg);
	ASSERT_EQ(o.rc, 0);
}

/* ---- 5. the chart ---- */

/* The n-th element (0-based) whose text contains marker: from its '<' to
 * its '>' into out; 0 when there is none. */
static int svg_element(const char *svg, const char *marker, int nth, char *out, size_t len)
{
	const char *p = svg;

	while ((p = strstr(p, marker))) {
		const char *a = p, *b = strchr(p, '>');

		while (a > svg && *a != '<')
			a--;
		if (!b)
			return 0;
		if (nth-- == 0) {
			snprintf(out, len, "%.*s", (int)(b - a + 1), a);
			return 1;
		}
		p = b;
	}
	return 0;
}

/* The value of attribute name in an element ("" when absent). */
static const char *svg_attr(const char *el, const char *name, char *out, size_t len)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " %s=\"", name);
	out[0] = 0;
	if ((p = strstr(el, key))) {
		p += strlen(key);
		snprintf(out, len, "%.*s", (int)strcspn(p, "\""), p);
	}
	return out;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* record --runs N -o PREFIX: PREFIX.1.trace ... PREFIX.N.trace; with one
 * of them there already (no --force), no run at all and the file kept;
 * a run whose command fails stops the runs with its status. */
TEST(edges_record_runs_writes_each_or_none)
{
	char prefix[256], f1[300], f2[300], f3[300];
	char *two[] = { "record", "-q", "--runs", "2", "-o", prefix, "--", "/bin/true", NULL };
	char *three[] = { "record", "-q", "--runs", "3", "-o", prefix, "--", "/bin/true", NULL };
	char *failing[] = { "record", "-q", "--runs", "3", "--force", "-o", prefix, "--",
			    "/bin/false", NULL };
	char *no_o[] = { "record", "--runs", "2", "--measure", "--", "/bin/true", NULL };

	ASSERT_EQ(cmd_record(6, no_o), 2);
	if (!can_record())
		test_skip("recording needs root and the kernel's tracepoints");
	tdir("runs");
	snprintf(prefix, sizeof(prefix), "%s/r", dir);
	snprintf(f1, sizeof(f1), "%s.1.trace", prefix);
	snprintf(f2, sizeof(f2), "%s.2.trace", prefix);
	snprintf(f3, sizeof(f3), "%s.3.trace", prefix);
	fflush(stdout);
	ASSERT_EQ(cmd_record(8, two), 0);
	ASSERT(!strncmp(file_text(f1), TRACE_MAGIC, 8));
	ASSERT(!strncmp(file_text(f2), TRACE_MAGIC, 8));
	ASSERT_EQ(dir_entries(), 2);
	put_file(f1, "precious\n");
	ASSERT_EQ(cmd_record(8, three), 2);
	ASSERT(!strcmp(file_text(f1), "precious\n"));
	ASSERT_EQ(dir_entries(), 2); /* no r.3.trace */
	ASSERT_EQ(cmd_record(9, failing), 1);
	ASSERT(!strncmp(file_text(f1), TRACE_MAGIC, 8)); /* run 1 recorded /bin/false's run */
	ASSERT(access(f3, F_OK)); /* and stopped there: no r.3.trace */
	ASSERT_EQ(dir_entries(), 2);
	tdir_remove();
}

/* The chart at path into buf, whole: one <svg> element, its groups and
 * texts closed. */
static void read_svg(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	ASSERT(f);
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	ASSERT(!strncmp(buf, "<svg ", 5));
	ASSERT(strstr(buf, "</svg>\n") == buf + n - 7);
	ASSERT_EQ(count(buf, "<g "), count(buf, "</g>"));
	ASSERT_EQ(count(buf, "<text"), count(buf, "</text>"));
}

/* The smallest y of a polyline's points: its highest point. */
static double top_y(const char *el)
{
	static char pts[1 << 16];
	double best = 1e9, x, y;
	int used;

	svg_attr(el, "points", pts, sizeof(pts));
	for (const char *p = pts; sscanf(p, "%lf,%lf%n", &x, &y, &used) == 2; p += used)
		if (y < best)
			best = y;
	return best;
}

TEST(edges_compare_svg_structure)
{
	static char svgtext[1 << 20], el[1 << 16], el2[1 << 16];
	char trace[256], svgp[256], cmdline[400], a[64], b[64];
	char *cmp[] = { "compare", "-q", trace, "--svg", svgp, NULL };
	const char *names[] = { "never", "madvise", "always", "always-no-hzp" };
	const uint64_t addr = 0x7f0000000000ULL;
	uint64_t args[6] = { 0, MB(8), 3, 0x22, (uint64_t)-1, 0 };
	struct trace_header h = { 0 };
	struct trace_writer w;

	tdir("chart");
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	snprintf(svgp, sizeof(svgp), "%s/chart.svg", dir);
	/* a long command with markup in it */
	snprintf(cmdline, sizeof(cmdline), "prog <a&b> %0300d", 0);
	memset(cmdline + 12, 'x', 200);
	for (int i = 20; i < 200; i += 17)
		cmdline[i] = ' ';
	ASSERT_OK(trace_header_add(&h, "command", cmdline));
	ASSERT_OK(trace_writer_open(&w, trace, &h));
	trace_write_proc(&w, 100);
	trace_write_exec(&w, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	trace_write_syscall(&w, 9, 6, args, (int64_t)addr);
	for (uint64_t o = 0; o < MB(8); o += PAGE) {
		trace_write_time(&w, o, 0);
		trace_write_fault(&w, addr + o, 1, 0);
	}
	trace_write_exit(&w, 0);
	ASSERT_OK(trace_writer_close(&w));
	fflush(stdout);
	ASSERT_EQ(cmd_compare(5, cmp), 0);
	read_svg(svgp, svgtext, sizeof(svgtext));
	/* markup in the command is escaped */
	ASSERT(!strstr(svgtext, "<a&b>"));
	ASSERT(strstr(svgtext, "&lt;a&amp;b&gt;"));
	/* the title wraps: several lines, none longer than the chart holds */
	ASSERT_LE(2, count(svgtext, "class=\"title\""));
	for (int i = 0; svg_element(svgtext, "class=\"title\"", i, el, sizeof(el)); i++) {
		const char *t = strstr(svgtext, el) + strlen(el);

		ASSERT_LE(strcspn(t, "<"), 100 + 20); /* escapes take room */
	}
	/* two panels: AnonPages and AnonHugePages */
	ASSERT(strstr(svgtext, "data-figure=\"AnonPages\""));
	ASSERT(strstr(svgtext, "data-figure=\"AnonHugePages\""));
	/* a line per policy in each, the difference from never shaded */
	ASSERT_EQ(count(svgtext, "class=\"line\""), 2 * 4);
	ASSERT_EQ(count(svgtext, "class=\"diff\""), 2 * 3);
	ASSERT_EQ(count(svgtext, "class=\"key\""), 4);
	/* the legend draws each line as the plot does */
	for (int k = 0; k < 4; k++) {
		char marker[96];

		snprintf(marker, sizeof(marker), "class=\"line\" data-policy=\"%s\"", names[k]);
		ASSERT(svg_element(svgtext, marker, 0, el, sizeof(el)));
		snprintf(marker, sizeof(marker), "class=\"key\" data-policy=\"%s\"", names[k]);
		ASSERT(svg_element(svgtext, marker, 0, el2, sizeof(el2)));
		ASSERT(!strcmp(svg_attr(el, "stroke", a, sizeof(a)), svg_attr(el2, "stroke", b, sizeof(b))));
		ASSERT(!strcmp(svg_attr(el, "stroke-width", a, sizeof(a)),
			       svg_attr(el2, "stroke-width", b, sizeof(b))));
		ASSERT(!strcmp(svg_attr(el, "stroke-dasharray", a, sizeof(a)),
			       svg_attr(el2, "stroke-dasharray", b, sizeof(b))));
	}
	/* coinciding lines stay visible: no two share colour, width and dashes */
	ASSERT(strcmp(svg_attr(el, "stroke-dasharray", a, sizeof(a)), ""));
	/* in the AnonHugePages panel, always rises above never (8 MiB in THPs) */
	{
		const char *panel = strstr(svgtext, "data-figure=\"AnonHugePages\"");

		ASSERT(svg_element(panel, "class=\"line\" data-policy=\"never\"", 0, el, sizeof(el)));
		ASSERT(svg_element(panel, "class=\"line\" data-policy=\"always\"", 0, el2, sizeof(el2)));
		ASSERT(top_y(el2) + 50 < top_y(el));
	}
	tdir_remove();
}

/* The trace of the kinds and chart tests: "prog" maps 64 MiB at 2 MiB and
 * writes a page every 2 MiB, then 1 MiB elsewhere, all of it written. */
static void big_and_small_trace(const char *path)
{
	const uint64_t big = 0x7f0000000000ULL, small = 0x7f1000000000ULL;
	uint64_t bargs[6] = { 0, MB(64), 3, 0x22, (uint64_t)-1, 0 };
	uint64_t sargs[6] = { 0, MB(1), 3, 0x22, (uint64_t)-1, 0 };
	struct trace_header h = { 0 };
	struct trace_writer w;

	ASSERT_OK(trace_header_add(&h, "command", "prog"));
	ASSERT_OK(trace_writer_open(&w, path, &h));
	trace_write_proc(&w, 100);
	trace_write_exec(&w, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	trace_write_syscall(&w, 9, 6, bargs, (int64_t)big);
	trace_write_syscall(&w, 9, 6, sargs, (int64_t)small);
	for (uint64_t o = 0; o < MB(64); o += MB(2))
		trace_write_fault(&w, big + o, 1, 0);
	for (uint64_t o = 0; o < MB(1); o += PAGE)
		trace_write_fault(&w, small + o, 1, 0);
	trace_write_exit(&w, 0);
	ASSERT_OK(trace_writer_close(&w));
}

/* The third row of the chart.  The trace: 64 MiB mmap'd with a write
 * every 2 MiB (32 ranges, one page touched in each) and 1 MiB at a 2 MiB
 * boundary written whole (one range, 256 pages).  Under never and always,
 * a point each in the cost panel, in the policy's colour, always's 62 MiB
 * to the right of never's (each of the 32 writes a THP: 32 x 2 MiB less
 * the 32 pages never had) and higher (32 of the 288 pages touched in
 * PMDs); the histogram's touched bars count the 33 ranges: 32 in 1-64,
 * one in 193-256. */
TEST(edges_compare_svg_cost_and_occupancy)
{
	static char svgtext[1 << 20], el[1 << 12];
	char trace[256], svgp[256], v[64], never_fill[64];
	char *cmp[] = { "compare", "-q", trace, "--svg", svgp, "--policy",
			"never=transparent_hugepage/enabled=never", "--policy",
			"always=transparent_hugepage/enabled=always", NULL };
	uint64_t sum = 0;
	double nx, ny, ax, ay;
	int bars = 0;

	tdir("cost");
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	snprintf(svgp, sizeof(svgp), "%s/chart.svg", dir);
	big_and_small_trace(trace);
	fflush(stdout);
	ASSERT_EQ(cmd_compare(9, cmp), 0);
	read_svg(svgp, svgtext, sizeof(svgtext));
	ASSERT(strstr(svgtext, "data-figure=\"cost-coverage\""));
	ASSERT(strstr(svgtext, "data-figure=\"occupancy\""));
	/* one point per policy, none for mTHP here */
	ASSERT_EQ(count(svgtext, "class=\"point\""), 2);
	ASSERT_EQ(count(svgtext, "class=\"point-mthp\""), 0);
	ASSERT(svg_element(svgtext, "class=\"point\" data-policy=\"never\"", 0, el, sizeof(el)));
	ASSERT_EQ(strtod(svg_attr(el, "data-extra-mib", v, sizeof(v)), NULL), 0);
	ASSERT_EQ(strtod(svg_attr(el, "data-cover-pct", v, sizeof(v)), NULL), 0);
	nx = strtod(svg_attr(el, "cx", v, sizeof(v)), NULL);
	ny = strtod(svg_attr(el, "cy", v, sizeof(v)), NULL);
	svg_attr(el, "fill", never_fill, sizeof(never_fill));
	ASSERT(svg_element(svgtext, "class=\"point\" data-policy=\"always\"", 0, el, sizeof(el)));
	ASSERT(fabs(strtod(svg_attr(el, "data-extra-mib", v, sizeof(v)), NULL) -
		    (32 * 2048 - 32 * 4) / 1024.0) < 0.001);
	ASSERT(fabs(strtod(svg_attr(el, "data-cover-pct", v, sizeof(v)), NULL) - 100.0 * 32 / 288) <
	       0.06);
	ax = strtod(svg_attr(el, "cx", v, sizeof(v)), NULL);
	ay = strtod(svg_attr(el, "cy", v, sizeof(v)), NULL);
	ASSERT(ax > nx + 100); /* to the right: more memory */
	ASSERT(ay < ny - 10);  /* higher: more covered */
	/* each in its policy's colour, as its line */
	ASSERT(strcmp(svg_attr(el, "fill", v, sizeof(v)), never_fill));
	ASSERT(svg_element(svgtext, "class=\"line\" data-policy=\"always\"", 0, el, sizeof(el)));
	ASSERT(!strcmp(svg_attr(el, "stroke", never_fill, sizeof(never_fill)), v));
	/* the histogram: a touched bar per bucket, counting the 33 ranges */
	for (int i = 0; svg_element(svgtext, "class=\"bar\"", i, el, sizeof(el)); i++, bars++) {
		uint64_t c = strtoull(svg_attr(el, "data-count", v, sizeof(v)), NULL, 10);

		sum += c;
		if (!strcmp(svg_attr(el, "data-pages", v, sizeof(v)), "1-64"))
			ASSERT_EQ(c, 32);
		if (!strcmp(v, "193-256"))
			ASSERT_EQ(c, 1);
	}
	ASSERT_EQ(bars, 9);
	ASSERT_EQ(sum, 33);
	tdir_remove();
}

/* ---- 6. one consistent command line ---- */

static char cli_out[1 << 16], cli_err[1 << 14];

static void slurp(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = 0;
	close(fd);
}

/* thpsim ARGS... (NULL-ended) as main() runs it, with standard input from
 * in (NULL: unchanged); its output in cli_out and cli_err.  The status. */
static int thpsim(const char *in, ...)
{
	char *argv[32] = { "thpsim" }, path[2][256];
	int argc = 1, save[3], fds[2], rc, infd = -1;
	va_list ap;

	va_start(ap, in);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	fflush(NULL);
	for (int k = 0; k < 2; k++) {
		snprintf(path[k], sizeof(path[k]), "%s/.cli%d", dir, k);
		fds[k] = open(path[k], O_RDWR | O_CREAT | O_TRUNC, 0600);
		ASSERT(fds[k] >= 0);
		unlink(path[k]);
	}
	for (int k = 0; k < 3; k++)
		save[k] = dup(k);
	if (in) {
		infd = open(in, O_RDONLY);
		ASSERT(infd >= 0);
		dup2(infd, 0);
		close(infd);
	}
	dup2(fds[0], 1);
	dup2(fds[1], 2);
	rc = thpsim_main(argc, argv);
	fflush(NULL);
	for (int k = 0; k < 3; k++) {
		dup2(save[k], k);
		close(save[k]);
	}
	clearerr(stdin);
	slurp(fds[0], cli_out, sizeof(cli_out));
	slurp(fds[1], cli_err, sizeof(cli_err));
	return rc;
}

static int lines(const char *s)
{
	return count(s, "\n");
}

/* compare's table by kind of mapping: a 64 MiB anonymous mmap written once
 * every 2 MiB and a 1 MiB one written throughout.  Under never each write
 * is a 4 KiB page (32 x 4 kB; 256 x 4 kB); under always each of the 32
 * writes to the big one faults a THP (do_huge_pmd_anonymous_page: the
 * 2 MiB range lies inside the VMA), and the 1 MiB mapping can hold none:
 * the extra is all in the big mmap's row, all of it in THPs. */
TEST(edges_compare_says_which_kind_of_mapping_the_extra_is_in)
{
	char trace[256], *row;
	unsigned long long never, always, huge, sn, sa, sh;
	long long extra, sextra;

	tdir("kinds");
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	big_and_small_trace(trace);
	ASSERT_EQ(thpsim(NULL, "compare", trace, "--policy", "never=transparent_hugepage/enabled=never",
			 "--policy", "always=transparent_hugepage/enabled=always", NULL), 0);
	row = strstr(cli_out, "\nmmap >=32M ");
	ASSERT(row && strstr(cli_out, "by kind of mapping"));
	ASSERT_EQ(sscanf(row + 12, "%llu %llu %lld (%llu)", &never, &always, &extra, &huge), 4);
	ASSERT_EQ(never, 32 * 4);
	ASSERT_EQ(always, 32 * 2048);
	ASSERT_EQ(extra, 32 * 2048 - 32 * 4);
	ASSERT_EQ(huge, 32 * 2048);
	row = strstr(cli_out, "\nmmap 256K-2M ");
	ASSERT(row);
	ASSERT_EQ(sscanf(row + 14, "%llu %llu %lld (%llu)", &sn, &sa, &sextra, &sh), 4);
	ASSERT_EQ(sn, 1024);
	ASSERT_EQ(sa, 1024);
	ASSERT_EQ(sextra, 0);
	ASSERT_EQ(sh, 0);
	/* the verdict: always costs the 32 THPs less the 32 pages never had,
	 * and buys a PMD for 32 of the 288 pages touched (11.1%); its work is
	 * 32 THPs zeroed at the faults, no split, collapse or fallback */
	row = strstr(cli_out, "the verdict");
	ASSERT(row);
	row = strstr(row, "\nalways ");
	ASSERT(row);
	{
		long long xp, xf;
		double cp, ca;
		unsigned long long z, sp, co, fb;

		ASSERT_EQ(sscanf(row + 8, "%lld %lld %lf%% %lf%% %llu %llu %llu %llu", &xp, &xf, &cp, &ca,
				 &z, &sp, &co, &fb), 8);
		ASSERT_EQ(xp, 32 * 2048 - 32 * 4);
		ASSERT_EQ(xf, xp); /* final: just before the last process ended */
		ASSERT(cp > 11.0 && cp < 11.2);
		ASSERT_EQ(z, 32 * 2048);
		ASSERT_EQ(sp + co + fb, 0);
	}
	/* no policy has mTHP folios: the verdict as it was */
	ASSERT(!strstr(cli_out, "mthp pk"));
	/* nor access samples: no column for them */
	ASSERT(!strstr(cli_out, "accessed"));
	tdir_remove();
}

/* The verdict's "accessed" column: a trace with one access sample over a
 * 2 MiB-aligned 8 MiB mapping written once every 2 MiB.  Under always
 * each write faults a PMD THP (do_huge_pmd_anonymous_page): all 8 MiB
 * accessed are PMD-mapped, 100%; under never and madvise (no
 * MADV_HUGEPAGE) the four pages written are 4 KiB pages: 0%. */
TEST(edges_compare_verdict_accessed_column)
{
	uint64_t args[6] = { 0, MB(8), 3, 0x22, (uint64_t)-1, 0 }, addr = 0x7f0000000000ULL;
	struct trace_header h = { 0 };
	struct trace_writer w;
	char trace[256], *row;
	double a;

	tdir("accv");
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	ASSERT_OK(trace_writer_open(&w, trace, &h));
	trace_write_proc(&w, 100);
	trace_write_exec(&w, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	trace_write_syscall(&w, 9, 6, args, (int64_t)addr);
	for (uint64_t o = 0; o < MB(8); o += MB(2))
		trace_write_fault(&w, addr + o, 1, 0);
	trace_write_access(&w, addr, MB(8), 20);
	trace_write_access_end(&w, &(struct trace_access_end){ .interval_us = 100000, .checks = 20 });
	trace_write_exit(&w, 0);
	ASSERT_OK(trace_writer_close(&w));
	ASSERT_EQ(thpsim(NULL, "compare", trace, NULL), 0);
	row = strstr(cli_out, "the verdict");
	ASSERT(row && strstr(row, "cover avg  accessed"));
	for (int k = 0; k < 3; k++) {
		static const char *const name[] = { "\nnever ", "\nmadvise ", "\nalways " };
		char *r = strstr(row, name[k]);

		ASSERT(r);
		ASSERT_EQ(sscanf(r + strlen(name[k]), "%*d %*d %*f%% %*f%% %lf%%", &a), 1);
		ASSERT(k == 2 ? a == 100.0 : a == 0.0);
	}
	ASSERT_EQ(thpsim(NULL, "compare", trace, "--format", "json", NULL), 0);
	ASSERT(strstr(cli_out, "\"accessed_in_pmd_pct\": 100"));
	ASSERT(strstr(cli_out, "\"accessed_in_pmd_pct\": 0"));
	tdir_remove();
}

/* The verdict's mTHP columns, on the same trace under never and 64K
 * folios (Linux 6.12's profile, the PMD size never).  Each write fault
 * takes an aligned 64K folio when its 64K lies in the VMA with no page
 * mapped (alloc_anon_folio): each of the 32 writes to the big mmap one
 * (1 page touched of 16), the 1 MiB mapping 16 of them; so all 288 pages
 * touched are in 64K folios, at 32 x 64 - 32 x 4 kB more than never, and
 * the work is 48 folios of 64K zeroed. */
TEST(edges_compare_verdict_mthp_columns)
{
	char trace[256], *row;
	long long xp, xf;
	double cp, ca, mp, ma;
	unsigned long long z;

	tdir("mthpv");
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	big_and_small_trace(trace);
	ASSERT_EQ(thpsim(NULL, "compare", trace, "--set", "thpsim/kernel=6.12", "--policy",
			 "never=transparent_hugepage/enabled=never", "--policy",
			 "64k=enabled=never,hugepages-64kB/enabled=always", NULL), 0);
	row = strstr(cli_out, "the verdict");
	ASSERT(row && strstr(row, "mthp pk  mthp avg"));
	row = strstr(row, "\n64k ");
	ASSERT(row);
	ASSERT_EQ(sscanf(row + 5, "%lld %lld %lf%% %lf%% %lf%% %lf%% %llu", &xp, &xf, &cp, &ca, &mp,
			 &ma, &z), 7);
	ASSERT_EQ(xp, 32 * 64 - 32 * 4);
	ASSERT(cp == 0 && mp == 100.0);
	ASSERT_EQ(z, 48 * 64);
	row = strstr(strstr(cli_out, "the verdict"), "\nnever ");
	ASSERT(row);
	ASSERT_EQ(sscanf(row + 7, "%lld %lld %lf%% %lf%% %lf%% %lf%%", &xp, &xf, &cp, &ca, &mp, &ma), 6);
	ASSERT(mp == 0 && ma == 0);
	/* JSON: the verdict's shares, by size too */
	ASSERT_EQ(thpsim(NULL, "compare", trace, "--format", "json", "--set", "thpsim/kernel=6.12",
			 "--policy", "never=transparent_hugepage/enabled=never", "--policy",
			 "64k=enabled=never,hugepages-64kB/enabled=always", NULL), 0);
	ASSERT(strstr(cli_out, "\"touched_in_mthp_at_peak_pct\""));
	ASSERT(strstr(cli_out, "\"touched_in_mthp_over_time_pct\""));
	ASSERT(strstr(cli_out, "\"touched_in_mthp_by_size\": {\n"));
	ASSERT(strstr(cli_out, "\"touched_in_mthp_kB\": {\n"));
	ASSERT(strstr(cli_out, "\"64K\": 1152")); /* 288 pages, in the occupancy */
	tdir_remove();
}

/* A trace of "prog": a 64 MiB mmap at addr, a write every 2 MiB from it. */
static void thp_trace(const char *path, const char *command, uint64_t addr)
{
	uint64_t args[6] = { 0, MB(64), 3, 0x22, (uint64_t)-1, 0 };
	struct trace_header h = { 0 };
	struct trace_writer w;

	ASSERT_OK(trace_header_add(&h, "command", command));
	ASSERT_OK(trace_writer_open(&w, path, &h));
	trace_write_proc(&w, 100);
	trace_write_exec(&w, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	trace_write_syscall(&w, 9, 6, args, (int64_t)addr);
	for (uint64_t o = 0; o < MB(64); o += MB(2))
		trace_write_fault(&w, addr + o, 1, 0);
	trace_write_exit(&w, 0);
	ASSERT_OK(trace_writer_close(&w));
}

/* Several recordings of one command: the spread of their figures.  Two
 * runs of the same program whose 64 MiB mapping landed 2 MiB-aligned in
 * one and 1 MiB off in the other: under always the first's 32 writes each
 * fault a THP, the second's only the 31 whose 2 MiB range lies inside
 * the mapping (do_huge_pmd_anonymous_page falls back at the edges).
 * Traces of two commands are refused, with nothing printed. */
TEST(edges_replay_several_recordings_gives_the_spread)
{
	char a[256], b[256], c[256], *row;
	unsigned long long lo, med, hi, v1, v2;

	tdir("many");
	snprintf(a, sizeof(a), "%s/a.trace", dir);
	snprintf(b, sizeof(b), "%s/b.trace", dir);
	snprintf(c, sizeof(c), "%s/c.trace", dir);
	thp_trace(a, "prog", 0x7f0000000000ULL);
	thp_trace(b, "prog", 0x7f0000100000ULL);
	thp_trace(c, "other", 0x7f0000000000ULL);
	ASSERT_EQ(thpsim(NULL, "replay", a, b, "--set", "transparent_hugepage/enabled=always", NULL), 0);
	row = strstr(cli_out, "\nthp_fault_alloc ");
	ASSERT(row && strstr(cli_out, "2 recordings of prog"));
	ASSERT_EQ(sscanf(row + 17, "%llu %llu %llu %llu %llu", &lo, &med, &hi, &v1, &v2), 5);
	ASSERT_EQ(v1, 32);
	ASSERT_EQ(v2, 31);
	ASSERT_EQ(lo, 31);
	ASSERT_EQ(med, 31);
	ASSERT_EQ(hi, 32);
	ASSERT_EQ(thpsim(NULL, "replay", a, c, NULL), 2);
	ASSERT(!cli_out[0]);
	ASSERT(strstr(cli_err, "several traces must be runs of one command"));
	ASSERT_EQ(thpsim(NULL, "replay", a, b, "--format", "json", NULL), 0);
	ASSERT(strstr(cli_out, "\"spread\"") && strstr(cli_out, "\"replays\""));
	tdir_remove();
}

TEST(edges_cli_help_everywhere)
{
	static const char *const cmds[] = { "demo", "run", "kernel", "validate", "bench", "knobs",
					    "record", "replay", "compare", "trace" };

	tdir("help");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		ASSERT_EQ(thpsim(NULL, cmds[i], "--help", NULL), 0);
		if (!strstr(cli_out, "usage: thpsim ") || cli_err[0])
			test_fail(__FILE__, __LINE__, "%s --help: out '%.80s' err '%.80s'", cmds[i],
				  cli_out, cli_err);
		ASSERT_EQ(thpsim(NULL, "help", cmds[i], NULL), 0);
		ASSERT(strstr(cli_out, cmds[i]));
	}
	ASSERT_EQ(thpsim(NULL, "help", "exit-status", NULL), 0);
	ASSERT(strstr(cli_out, "125"));
	ASSERT_EQ(thpsim(NULL, "help", "nonsense", NULL), 2);
	tdir_remove();
}

TEST(edges_cli_missing_values_and_exit_codes)
{
	static const char *const cases[][3] = {
		{ "replay", "t.trace", "--set" },   { "replay", "t.trace", "--format" },
		{ "compare", "t.trace", "--policy" }, { "compare", "t.trace", "--svg" },
		{ "run", "x.scn", "--set" },        { "run", "x.scn", "--format" },
		{ "kernel", "x.scn", "--format" },  { "validate", "x.scn", "--format" },
		{ "demo", "--size", NULL },         { "trace", "dump", "--limit" },
		{ "bench", "--threads", NULL },     { "record", "-o", NULL },
	};
	char trace[256], none[256];

	tdir("args");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *opt = cases[i][2] ? cases[i][2] : cases[i][1];
		char want[64];

		ASSERT_EQ(thpsim(NULL, cases[i][0], cases[i][1], cases[i][2], NULL), 2);
		snprintf(want, sizeof(want), "%s needs a value", opt);
		if (!strstr(cli_err, want))
			test_fail(__FILE__, __LINE__, "%s %s: '%.200s'", cases[i][0], opt, cli_err);
	}
	/* a file that is not there is an input error (2) for every command,
	 * said once */
	snprintf(none, sizeof(none), "%s/none", dir);
	ASSERT_EQ(thpsim(NULL, "replay", "-q", none, NULL), 2);
	ASSERT_EQ(lines(cli_err), 1);
	ASSERT_EQ(thpsim(NULL, "compare", "-q", none, NULL), 2);
	ASSERT_EQ(lines(cli_err), 1);
	ASSERT_EQ(thpsim(NULL, "trace", "dump", none, NULL), 2);
	ASSERT_EQ(thpsim(NULL, "run", none, NULL), 2);
	/* short knob names everywhere, an unknown knob refused up front */
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	small_trace(trace);
	ASSERT_EQ(thpsim(NULL, "replay", "-q", trace, "--set", "enabled=always", NULL), 0);
	ASSERT(strstr(cli_out, "enabled=always"));
	ASSERT_EQ(thpsim(NULL, "replay", "-q", trace, "--set", "nosuch=1", NULL), 2);
	ASSERT(strstr(cli_err, "no knob 'nosuch'") && !strstr(cli_err, "No such file"));
	/* validate of a file that is not a scenario: an error, counted */
	{
		char bin[256];
		FILE *f;

		snprintf(bin, sizeof(bin), "%s/bin.scn", dir);
		f = fopen(bin, "wb");
		ASSERT(f);
		fwrite("\x7f" "ELF\0\0\0", 1, 7, f);
		fclose(f);
		ASSERT_EQ(thpsim(NULL, "validate", bin, NULL), 2);
		if (!strstr(cli_out, "1 error"))
			test_fail(__FILE__, __LINE__, "validate: '%.300s'", cli_out);
	}
	/* demo refuses the knobs its runs set themselves */
	ASSERT_EQ(thpsim(NULL, "demo", "--set", "use_zero_page=0", NULL), 2);
	tdir_remove();
}

TEST(edges_cli_csv_stdin_and_findings)
{
	struct trace_writer w;
	char trace[256], big[256];
	uint64_t args[6] = { 0, 3ULL << 30, 3, 0x22, (uint64_t)-1, 0 };

	tdir("csv");
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	ASSERT_OK(trace_writer_open(&w, trace, NULL));
	trace_write_proc(&w, 100);
	trace_write_exec(&w, "/bin/a,b\"c", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	trace_write_syscall(&w, 9, 6, args, 0x7f0000000000LL);
	trace_write_fault(&w, 0x7f0000000000ULL, 1, 0);
	trace_write_exit(&w, 9); /* killed by SIGKILL */
	ASSERT_OK(trace_writer_close(&w));
	/* RFC 4180: the name quoted, its quote doubled, CRLF */
	ASSERT_EQ(thpsim(NULL, "replay", "-q", trace, "--format", "csv", NULL), 0);
	ASSERT(strstr(cli_out, ",\"a,b\"\"c\","));
	ASSERT_EQ(count(cli_out, "\r\n"), lines(cli_out));
	/* "-" is standard input, for replay, compare and trace dump */
	ASSERT_EQ(thpsim(trace, "replay", "-q", "-", NULL), 0);
	ASSERT(strstr(cli_out, "SIGKILL")); /* ended by the signal, not "exit" */
	ASSERT_EQ(thpsim(trace, "compare", "-q", "-", NULL), 0);
	ASSERT(strstr(cli_out, "always-no-hzp"));
	ASSERT_EQ(thpsim(trace, "trace", "dump", "-", NULL), 0);
	ASSERT(strstr(cli_out, "EXIT"));
	/* not a trace on standard input: said once, of "-" */
	{
		char junk[256];

		snprintf(junk, sizeof(junk), "%s/junk", dir);
		put_file(junk, "not a trace at all\n");
		ASSERT_EQ(thpsim(junk, "compare", "-q", "-", NULL), 2);
		ASSERT_EQ(lines(cli_err), 1);
		ASSERT(strstr(cli_err, "compare: -: offset 0: not a thpsim trace"));
	}
	/* a machine too small for the program: the machine's OOM killer ends
	 * it (--ram: the same machinery as a limit), which is a prediction,
	 * not a finding */
	snprintf(big, sizeof(big), "%s/big.trace", dir);
	ASSERT_OK(trace_writer_open(&w, big, NULL));
	trace_write_proc(&w, 100);
	trace_write_exec(&w, "/bin/big", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	trace_write_syscall(&w, 9, 6, args, 0x7f0000000000LL);
	for (uint64_t o = 0; o < (3ULL << 30); o += HPAGE)
		trace_write_fault(&w, 0x7f0000000000ULL + o, 1, 0);
	trace_write_exit(&w, 0);
	ASSERT_OK(trace_writer_close(&w));
	ASSERT_EQ(thpsim(NULL, "replay", "-q", big, "--ram", "1", "--set", "enabled=always", NULL),
		  0);
	ASSERT(!strstr(cli_out, "WARNING"));
	ASSERT(strstr(cli_out, "OOM kill") && strstr(cli_out, "the machine's OOM killer") &&
	       strstr(cli_out, "OOM-killed: big"));
	tdir_remove();
}

TEST(edges_errors_end_without_empty_parentheses)
{
	struct scenario s;
	struct scn_result r;

	/* a fault with nothing mapped: the model has no more to say than
	 * the errno, and the message must not end in "()" */
	ASSERT_EQ(scenario_parse_string("gone.scn", "mmap A 2M\nmunmap A\nwrite A 0 4K\n", &s,
					stderr), 0);
	scenario_run_model(&s, NULL, NULL, &r);
	ASSERT(r.error);
	ASSERT(strstr(r.error_msg, "gone.scn:3"));
	if (strstr(r.error_msg, "()"))
		test_fail(__FILE__, __LINE__, "%s", r.error_msg);
	scn_result_free(&r);
	scenario_free(&s);
}

TEST(edges_killed_writer_leaves_its_complete_blocks)
{
	const uint64_t a = 0x7f0000000000ULL, b = 0x7f4000000000ULL, len = MB(64);
	uint64_t args[6] = { 0, len, 3, 0x22, (uint64_t)-1, 0 };
	struct replay_opts o = { .ram_bytes = 1ULL << 30 };
	static struct replay_result res;
	char path[256], err[1024];
	int st;
	pid_t pid;

	tdir("killed");
	snprintf(path, sizeof(path), "%s/k.trace", dir);
	fflush(NULL);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct trace_writer w;

		if (trace_writer_open(&w, path, NULL))
			_exit(3);
		trace_write_proc(&w, 100);
		trace_write_exec(&w, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
		trace_write_syscall(&w, 9, 6, args, (int64_t)a);
		trace_write_syscall(&w, 9, 6, args, (int64_t)b);
		for (uint64_t off = 0; off < len; off += PAGE) {
			trace_write_fault(&w, a + off, 1, 0);
			trace_write_fault(&w, b + off, 1, 0);
		}
		raise(SIGKILL); /* as kill -9: no close, no stdio flush */
		_exit(4);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	/* 32768 faults of a few bytes each: the complete blocks are in the
	 * file, only the one being filled is lost */
	ASSERT_OK(replay_run(path, &o, &res, err, sizeof(err)));
	ASSERT(res.partial);
	ASSERT_EQ(res.nmms, 1);
	/* the file ends where a block ends: none was left half in a buffer */
	if (!strstr(res.partial_why, "without its END record"))
		test_fail(__FILE__, __LINE__, "%s", res.partial_why);
	ASSERT_EQ(res.partial_missing_bytes, 0);
	ASSERT_LE(32768 - TRACE_BLOCK_MAX / 3, res.mms[0]->faults);
	ASSERT(res.mms[0]->faults < 32768);
	replay_result_free(&res);
	tdir_remove();
}

/*
 * compare under several layouts, and with the options every policy
 * shares.  A 3 MiB anonymous mmap recorded at a 2 MiB boundary, written
 * through: a THP where a whole 2 MiB block lies inside it (one when its
 * start is at most 1 MiB into a block, none otherwise), so under always
 * with no THP alignment (thpsim/anon_thp_align=none: 6.1's placement)
 * each layout gets 2048 or 0 kB by the mmap base's shift, which the test
 * works out from replay_layout_shifts.  --as-recorded (every process
 * THP-disabled) must reach every policy: no THP, one layout.
 */
TEST(edges_compare_ranges_across_layouts_and_common_options)
{
	char trace[256], *row;
	const uint64_t at = 0x7f0000000000ULL;
	uint64_t args[6] = { 0, MB(3), 3, 0x22, (uint64_t)-1, 0 }, lo = UINT64_MAX, hi = 0;
	unsigned long long v[12];
	int replays;
	struct trace_header h = { 0 };
	struct trace_writer w;

	tdir("layouts");
	snprintf(trace, sizeof(trace), "%s/t.trace", dir);
	ASSERT_OK(trace_header_add(&h, "command", "prog"));
	ASSERT_OK(trace_writer_open(&w, trace, &h));
	trace_write_proc(&w, 100);
	trace_write_exec(&w, "/bin/prog", 0x555555600000ULL, 0x555555600000ULL, 8 << 20);
	trace_write_syscall(&w, 9, 6, args, (int64_t)at);
	for (uint64_t o = 0; o < MB(3); o += PAGE)
		trace_write_fault(&w, at + o, 1, 0);
	trace_write_exit(&w, 0);
	ASSERT_OK(trace_writer_close(&w));
	for (int k = 0; k < 16; k++) {
		struct replay_shifts d;
		uint64_t start, b, kb;

		replay_layout_shifts(1, k, -1, -1, &d);
		start = at + (uint64_t)d.mmap;
		b = (start + HPAGE - 1) & ~(HPAGE - 1);
		kb = b + HPAGE <= start + MB(3) ? 2048 : 0;
		lo = kb < lo ? kb : lo;
		hi = kb > hi ? kb : hi;
	}
	ASSERT(lo == 0 && hi == 2048); /* seed 1's 16 layouts have both */
	ASSERT_EQ(thpsim(NULL, "compare", "-q", trace, "--policy", "never=enabled=never", "--policy",
			 "always=enabled=always,thpsim/anon_thp_align=none", "--khugepaged", "off",
			 "--layouts", "16", NULL), 0);
	row = strstr(cli_out, "lowest..highest, median");
	ASSERT(row && (row = strstr(row, "\nalways ")));
	ASSERT_EQ(sscanf(row + 8, "%d %llu..%llu, %llu %llu..%llu, %llu %llu..%llu, %llu", &replays,
			 &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]), 10);
	ASSERT_EQ(replays, 16);
	ASSERT_EQ(v[6], lo);
	ASSERT_EQ(v[7], hi);
	/* the never row: one replay, the policy says why */
	ASSERT(strstr(cli_out, "never: one layout: every THP size is never"));
	/* every policy THP-disabled: the always row as never's */
	ASSERT_EQ(thpsim(NULL, "compare", "-q", trace, "--policy", "never=enabled=never", "--policy",
			 "always=enabled=always", "--as-recorded", NULL), 0);
	ASSERT(!strstr(cli_out, "lowest..highest")); /* nothing varies */
	ASSERT(strstr(cli_out, "every process ran THP-disabled"));
	row = strstr(cli_out, "\nalways ");
	ASSERT(row);
	ASSERT_EQ(sscanf(row + 8, "%llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]), 4);
	ASSERT_EQ(v[2], 0); /* peak AnonHugePages */
	ASSERT_EQ(v[3], 0);
	tdir_remove();
}
