/*
 * test_validate.c - how validate judges one scenario when the kernel side
 * is noisy: a difference that does not repeat is run again and reported as
 * a match that needed more runs, with what the first run saw; one that
 * repeats on every run stays a diff (or an error, for a step only the
 * kernel fails); the model's own failures are never run again.  The kernel
 * here is a stand-in: the model's own figures, changed on the runs a test
 * chooses.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../test.h"
#include "cli/cli.h"
#include "scenario/scenario.h"
#include "util/kprofile.h"

/* How a stand-in kernel run goes wrong: a figure differs, an expectation
 * fails, or a step fails. */
enum fake_fault { FAKE_FIGURE, FAKE_EXPECT, FAKE_STEP };

static int fake_runs;             /* kernel runs taken so far */
static int fake_bad_runs;         /* the first this many runs go wrong... */
static enum fake_fault fake_how;  /* ...this way */

static int fake_kernel(const struct scenario *s, const struct kprofile *prof,
		       struct scn_result *r)
{
	int ret = scenario_run_model(s, prof, NULL, r);

	if (++fake_runs <= fake_bad_runs) {
		if (fake_how == FAKE_STEP) {
			r->error = 1;
			snprintf(r->error_msg, sizeof(r->error_msg),
				 "t.scn:3: 'write A 0 1' failed on the kernel: "
				 "Resource temporarily unavailable");
		} else if (fake_how == FAKE_EXPECT && r->nexpects) {
			r->expects[0].ok = 0;
			r->failed_expects++;
		} else if (r->nvalues) {
			r->values[0].v += 4096;
		}
	}
	return ret;
}

static int judge_text(const char *text, int bad_runs, enum fake_fault how, const char **result,
		      char *reason, size_t len)
{
	struct scenario s;
	struct kprofile p;
	int runs;

	ASSERT_EQ(kprofile_from_spec(&p, "6.18"), 0);
	ASSERT_EQ(scenario_parse_string("t.scn", text, &s, stderr), 0);
	fake_runs = 0;
	fake_bad_runs = bad_runs;
	fake_how = how;
	runs = validate_judge(&s, &p, fake_kernel, result, reason, len);
	scenario_free(&s);
	ASSERT_EQ(runs, fake_runs);
	return runs;
}

#define SCN "mmap A 4M align=2M\nmadvise A 0 4M hugepage\nwrite A 0 1\nexpect Rss == 2M\n"

TEST(validate_a_difference_that_does_not_repeat_matches_and_says_what_run_1_saw)
{
	const char *result;
	char reason[512];

	ASSERT_EQ(judge_text(SCN, 1, FAKE_FIGURE, &result, reason, sizeof(reason)), 2);
	ASSERT(!strcmp(result, "match"));
	ASSERT(strstr(reason, "matched on run 2 of the kernel side"));
	ASSERT(strstr(reason, "did not repeat"));
	ASSERT(strstr(reason, "run 1: "));
	ASSERT(strstr(reason, ", kernel "));
	/* the third run matches after two that differed */
	ASSERT_EQ(judge_text(SCN, 2, FAKE_FIGURE, &result, reason, sizeof(reason)), 3);
	ASSERT(!strcmp(result, "match"));
	ASSERT(strstr(reason, "matched on run 3"));
}

TEST(validate_a_difference_on_every_run_is_a_diff)
{
	const char *result;
	char reason[512];

	ASSERT_EQ(judge_text(SCN, 100, FAKE_FIGURE, &result, reason, sizeof(reason)), 4);
	ASSERT(!strcmp(result, "diff"));
	ASSERT(!strstr(reason, "matched"));
}

/* A kernel side that goes wrong (how) on its first run only is a match on
 * run 2 whose reason quotes run 1 (run1); one that goes wrong on every run
 * stops after 4 runs as always_result, its reason naming always_why. */
static void once_then_always(enum fake_fault how, const char *run1, const char *always_result,
			     const char *always_why)
{
	const char *result;
	char reason[512];

	ASSERT_EQ(judge_text(SCN, 1, how, &result, reason, sizeof(reason)), 2);
	ASSERT(!strcmp(result, "match"));
	ASSERT(strstr(reason, run1));
	ASSERT_EQ(judge_text(SCN, 100, how, &result, reason, sizeof(reason)), 4);
	ASSERT(!strcmp(result, always_result));
	ASSERT(strstr(reason, always_why));
}

TEST(validate_a_kernel_expectation_that_fails_once_is_run_again)
{
	once_then_always(FAKE_EXPECT, "run 1: the kernel failed line 4: ", "fail", "the kernel");
}

TEST(validate_a_kernel_step_that_fails_once_is_run_again)
{
	/* MADV_COLLAPSE's EAGAIN, say: the next run of the kernel side works;
	 * one that fails on every run is an error, with its message */
	once_then_always(FAKE_STEP, "run 1: kernel: t.scn:3: 'write A 0 1' failed on the kernel",
			 "error", "kernel: t.scn:3: ");
}

TEST(validate_the_models_own_failure_is_not_run_again)
{
	const char *result;
	char reason[512];

	/* a wrong expectation fails on both sides alike: run once */
	ASSERT_EQ(judge_text("mmap A 2M align=2M\nwrite A 0 1\nexpect Rss == 8K\n", 0,
			     FAKE_FIGURE, &result, reason, sizeof(reason)), 1);
	ASSERT(!strcmp(result, "fail"));
	ASSERT(strstr(reason, "both sides"));
	/* a model that matches a kernel run needs one run only */
	ASSERT_EQ(judge_text(SCN, 0, FAKE_FIGURE, &result, reason, sizeof(reason)), 1);
	ASSERT(!strcmp(result, "match"));
	ASSERT(!strcmp(reason, ""));
}
