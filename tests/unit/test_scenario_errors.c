/*
 * test_scenario_errors.c - what the scenario language refuses, and how it
 * says so: file:line:column, the name of what is wrong, and page states by
 * name where an expectation about a page fails.
 */
#include <stdio.h>
#include <string.h>

#include "../test.h"
#include "scenario/scenario.h"

static int parse_msg(const char *text, char *err, size_t len)
{
	struct scenario s;
	FILE *f = fmemopen(err, len, "w");
	int r = scenario_parse_string("e.scn", text, &s, f);

	fclose(f);
	if (!r)
		scenario_free(&s);
	return r;
}

TEST(scenario_errors_name_the_place)
{
	char err[512];

	/* one name for two live mappings of a process */
	ASSERT_EQ(parse_msg("mmap A 2M\nmmap A 4M\n", err, sizeof(err)), -1);
	ASSERT(strstr(err, "e.scn:2:6: region 'A' is mapped already (line 1)"));
	/* free again after a whole munmap; per process after fork */
	ASSERT_OK(parse_msg("mmap A 2M\nmunmap A\nmmap A 4M\n", err, sizeof(err)));
	ASSERT_OK(parse_msg("fork c\nproc c\nmmap A 2M\nproc main\nmmap A 2M\n", err, sizeof(err)));
	ASSERT_EQ(parse_msg("mmap A 2M\nfork c\nproc c\nmmap A 2M\n", err, sizeof(err)), -1);
	ASSERT(strstr(err, "e.scn:4:6:"));
	/* a knob the model does not have, or a value it does not take */
	ASSERT_EQ(parse_msg("set nonsense 1\n", err, sizeof(err)), -1);
	ASSERT(strstr(err, "e.scn:1:5: unknown knob 'nonsense'"));
	ASSERT_EQ(parse_msg("set transparent_hugepage/enabled sometimes\n", err, sizeof(err)), -1);
	ASSERT(strstr(err, "e.scn:1:34: transparent_hugepage/enabled: bad value 'sometimes'"));
	/* khugepaged scans=N, N full scans from 1 to 100 */
	ASSERT_OK(parse_msg("khugepaged scans=2\n", err, sizeof(err)));
	ASSERT_EQ(parse_msg("khugepaged scans=0\n", err, sizeof(err)), -1);
	ASSERT(strstr(err, "e.scn:1:12: expected scans=N"));
	ASSERT_EQ(parse_msg("khugepaged 3\n", err, sizeof(err)), -1);
	ASSERT_EQ(parse_msg("khugepaged\n", err, sizeof(err)), -1);
}

TEST(scenario_guards_name_the_place)
{
	char err[512];

	/* bad guards are errors at their column */
	ASSERT_EQ(parse_msg("mmap A 2M\nwhen nonsense=1 expect Rss == 0\n", err, sizeof(err)), -1);
	ASSERT(strstr(err, "e.scn:2:6: unknown knob 'nonsense'"));
	ASSERT_EQ(parse_msg("mmap A 2M\nwhen thpsim/zero_page=2 expect Rss == 0\n", err,
			    sizeof(err)), -1);
	ASSERT(strstr(err, "e.scn:2:23:"));
	ASSERT_EQ(parse_msg("when thpsim/zero_page=1 mmap A 2M\n", err, sizeof(err)), -1);
	ASSERT(strstr(err, "e.scn:1:25: 'when' guards"));
	ASSERT_EQ(parse_msg("mmap A 2M\nwhen zero_page expect Rss == 0\n", err, sizeof(err)), -1);
	ASSERT(strstr(err, "expected KNOB=VALUE"));
}

TEST(scenario_page_states_by_name)
{
	struct scenario s;
	struct scn_result r;
	char got[32];
	FILE *f = fopen("/dev/null", "w");

	ASSERT_OK(scenario_parse_string("p.scn", "mmap A 2M\nexpect page A 0 thp\n", &s, f));
	fclose(f);
	scenario_run_model(&s, NULL, NULL, &r);
	ASSERT_EQ(r.failed_expects, 1);
	ASSERT(!strcmp(scn_got_text(&r.expects[0], got, sizeof(got)), "none"));
	scn_result_free(&r);
	scenario_free(&s);
}
