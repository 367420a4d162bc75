/*
 * test_scenario.c - the scenario parser and the model runner: every bad
 * input gets "file:line:column: message", nothing crashes, and the model
 * run checks expectations (and fails a wrong one).
 */
#include <stdlib.h>
#include <unistd.h>

#include "../test.h"
#include "scenario/scenario.h"

static int parse(const char *text, char *err, size_t len)
{
	struct scenario s;
	FILE *f = fmemopen(err, len, "w");
	int r;

	ASSERT(f);
	memset(err, 0, len);
	r = scenario_parse_string("t.scn", text, &s, f);
	fclose(f);
	if (!r)
		scenario_free(&s);
	return r;
}

TEST(scenario_parse_errors_name_line_and_column)
{
	static const struct {
		const char *text, *where, *what;
	} bad[] = {
		{ "mmap A 2M\nread A 0 4Q\n", "t.scn:2:10:", "expected a length" },
		{ "frob\n", "t.scn:1:1:", "unknown step 'frob'" },
		{ "read B 0 4K\n", "t.scn:1:6:", "unknown region 'B'" },
		{ "mmap A 2M\nexpect Rsss == 1\n", "t.scn:2:8:", "expected a figure" },
		{ "mmap A 2M\nexpect Rss =~ 1\n", "t.scn:2:12:", "expected a comparison" },
		{ "mmap A 2M\nexpect Rss ==\n", "t.scn:2:", "expected a value" },
		{ "mmap A 0\n", "t.scn:1:8:", "above 0" },
		{ "mmap A 2M align=3M\n", "t.scn:1:11:", "power of two" },
		{ "mmap A 2M prot=rz\n", "t.scn:1:", "expected a protection" },
		{ "mmap A 2M\nmadvise A 0 2M sideways\n", "t.scn:2:16:", "expected hugepage" },
		{ "mmap A 2M\nmadvise A 0 2M collapse err=EWHAT\n", "t.scn:2:29:", "expected EINVAL" },
		{ "mmap A 2M\nmadvise A 0 2M collapse oops\n", "t.scn:2:25:", "expected err=" },
		{ "mmap A 2M\nwrite A 0 1 value=300\n", "t.scn:2:13:", "byte value" },
		{ "fork main\n", "t.scn:1:6:", "new process name" },
		{ "proc nobody\n", "t.scn:1:6:", "unknown process" },
		{ "fork c\nexit c\nproc c\n", "t.scn:3:6:", "has exited" },
		{ "mmap A 2M\nexpect vmstat bogus == 1\n", "t.scn:2:15:", "unknown vmstat item" },
		{ "mmap A 2M\nexpect page A 0 purple\n", "t.scn:2:17:", "page state" },
		{ "set onlyname\n", "t.scn:1:", "usage: set KNOB VALUE" },
		{ "mmap A 2M\nmremap A 2M 4M sideways\n", "t.scn:2:16:", "expected maymove" },
		{ "mmap A 99999999999999999999G\n", "t.scn:1:8:", "expected a size" },
	};
	char err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i].text, err, sizeof(err));

		if (r == 0)
			test_fail(__FILE__, __LINE__, "accepted: %s", bad[i].text);
		if (!strstr(err, bad[i].where) || !strstr(err, bad[i].what))
			test_fail(__FILE__, __LINE__, "for '%s' the message was '%s', wanted %s ... %s",
				  bad[i].text, err, bad[i].where, bad[i].what);
	}
}

TEST(scenario_parse_good)
{
	struct scenario s;
	FILE *f = fopen("/dev/null", "w");

	ASSERT_OK(scenario_parse_string("good.scn",
					"# a comment\n"
					"set transparent_hugepage/enabled always\n"
					"\n"
					"mmap A 4M+2M align=2M prot=rw   # trailing comment\n"
					"madvise A 0 2M hugepage\n"
					"read A 0 6M step=4K expect=0\n"
					"fork kid\n"
					"proc kid\n"
					"write A 0x1000 1 value=0xff\n"
					"expect kid.Rss <= 2M\n"
					"expect main.AnonHugePages == 0\n"
					"expect vmstat thp_zero_page_alloc >= 1\n"
					"expect page A 4K thp\n"
					"exit kid\n"
					"shrink\n"
					"report the end\n",
					&s, f));
	fclose(f);
	ASSERT_EQ(s.nsteps, 13);
	ASSERT_EQ(s.nprocs, 2);
	ASSERT_EQ(s.nregions, 1);
	ASSERT_EQ(s.steps[1].len, MB(6));
	ASSERT_EQ(s.steps[1].align, MB(2));
	ASSERT_EQ(s.steps[5].value, 0xff);
	ASSERT_EQ(s.steps[5].proc, 1);
	ASSERT_EQ(s.steps[6].expect, 2048); /* 2M in kB */
	ASSERT_EQ(s.steps[8].expect, 1);   /* vmstat counts are not sizes */
	ASSERT_EQ(s.nsets_before_ops, 1);
	scenario_free(&s);
}

/* Random bytes and random mutations of a good scenario never crash the
 * parser (a short, fixed-seed version of the fuzz target). */
/*
 * A NUL byte: the string API ends the text there (it takes a C string), so
 * what follows is not read; a file holding one is refused by name, since a
 * NUL cannot be part of a scenario and would otherwise hide the rest.
 */
TEST(scenario_parse_stops_at_nul_and_refuses_a_file_with_one)
{
	static const char text[] = "mmap A 2M\0frob\n";
	char path[] = "/tmp/thpsim-test-nul-XXXXXX", err[512];
	struct scenario s;
	FILE *f;
	int fd;

	/* the string: one step, and "frob" (an unknown step) never seen */
	f = fmemopen(err, sizeof(err), "w");
	ASSERT(f);
	memset(err, 0, sizeof(err));
	ASSERT_OK(scenario_parse_string("t.scn", text, &s, f));
	fclose(f);
	ASSERT_EQ(s.nsteps, 1);
	ASSERT_EQ(s.steps[0].op, SCN_MMAP);
	ASSERT_EQ(err[0], 0);
	scenario_free(&s);

	/* the same bytes, NUL and all, in a file */
	fd = mkstemp(path);
	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, text, sizeof(text) - 1), (long long)sizeof(text) - 1);
	close(fd);
	f = fmemopen(err, sizeof(err), "w");
	ASSERT(f);
	memset(err, 0, sizeof(err));
	ASSERT_EQ(scenario_parse_file(path, &s, f), -1);
	fclose(f);
	unlink(path);
	if (!strstr(err, path) || !strstr(err, "NUL byte"))
		test_fail(__FILE__, __LINE__, "the message was '%s', wanted %s ... NUL byte", err, path);
}

/* Is msg one "t.scn:LINE:COLUMN: what" line with LINE in 1..lines? */
static int is_located_message(const char *msg, int lines)
{
	int line, col, n = 0;

	if (sscanf(msg, "t.scn:%d:%d: %n", &line, &col, &n) != 2 || !n)
		return 0;
	return line >= 1 && line <= lines && col >= 1 && msg[n] && msg[n] != '\n' &&
	       strchr(msg, '\n') == msg + strlen(msg) - 1;
}

/* Mutations of a good scenario: each is either accepted, saying nothing,
 * or refused with one "t.scn:LINE:COLUMN: message" naming a line of the
 * text; and both happen (the mutations are neither all harmless nor all
 * fatal).  Nothing crashes: under ASan that is checked too. */
TEST(scenario_parse_garbage_is_accepted_or_located)
{
	static const char good[] = "mmap A 4M align=2M\nmadvise A 0 4M hugepage\n"
				   "read A 0 4M step=4K expect=0\nfork c\nproc c\n"
				   "write A 0 1 value=1\nexpect c.Rss == 2M\nexit c\n";
	unsigned seed = 7;
	char text[256], err[512];
	int accepted = 0, refused = 0;

	for (int i = 0; i < 3000; i++) {
		size_t n = sizeof(good) - 1;
		int lines = 0, r;

		memcpy(text, good, n);
		for (int k = 0; k < 1 + i % 6; k++)
			text[rand_r(&seed) % n] = (char)(rand_r(&seed) % 96 + 32 - (rand_r(&seed) % 8 == 0) * 22);
		text[n] = 0;
		for (size_t c = 0; c < n; c++)
			lines += text[c] == '\n';
		lines += text[n - 1] != '\n';
		r = parse(text, err, sizeof(err));
		if (r == 0) {
			if (err[0])
				test_fail(__FILE__, __LINE__, "accepted '%s' but said '%s'", text, err);
			accepted++;
		} else {
			if (r != -1 || !is_located_message(err, lines))
				test_fail(__FILE__, __LINE__, "refused '%s' with %d and '%s', wanted -1 and "
					  "one t.scn:LINE:COLUMN: message", text, r, err);
			refused++;
		}
	}
	ASSERT(accepted > 0);
	ASSERT(refused > 0);
}

static void run_text(const char *text, struct scn_result *r)
{
	struct scenario s;
	FILE *f = fopen("/dev/null", "w");

	ASSERT_OK(scenario_parse_string("t.scn", text, &s, f));
	fclose(f);
	scenario_run_model(&s, NULL, NULL, r);
	scenario_free(&s);
}

TEST(scenario_model_run_checks_expectations)
{
	struct scn_result r;

	/* the kernel's figures for S1 hold in the model */
	run_text("mmap A 4M align=2M\nmadvise A 0 4M hugepage\nread A 0 4M step=4K expect=0\n"
		 "expect vmstat pgfault == 2\nexpect Rss == 0\nexpect page A 0 huge-zero\n", &r);
	ASSERT_EQ(r.error, 0);
	ASSERT_EQ(r.failed_expects, 0);
	ASSERT_EQ(r.nexpects, 4);
	scn_result_free(&r);
	/* a wrong expectation is reported as failing, with the value found */
	run_text("mmap A 4M align=2M\nread A 0 4M step=4K\nexpect vmstat pgfault == 2\n", &r);
	ASSERT_EQ(r.failed_expects, 1);
	ASSERT_EQ(r.expects[0].got, 1024);
	scn_result_free(&r);
	/* a step that fails is an error naming its line */
	run_text("mmap A 2M prot=r\nwrite A 0 1\n", &r);
	ASSERT_EQ(r.error, 1);
	ASSERT(strstr(r.error_msg, "t.scn:2:"));
	scn_result_free(&r);
}
