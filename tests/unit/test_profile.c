/*
 * test_profile.c - kernel profiles: the version table, the detection's
 * parsing, and "when" guards.  Expected values are Linux's history (each
 * row's commit is named in src/mm/sysfs.c and docs/model.md), not the
 * model's output.
 */
#include <stdio.h>
#include <string.h>

#include "scenario/scenario.h"
#include "../test.h"
#include "util/kprofile.h"

static void knob_is(thps_machine *m, const char *knob, const char *want)
{
	char v[64];

	ASSERT_OK(thps_knob_get(m, knob, v, sizeof(v)));
	if (strcmp(v, want))
		test_fail(__FILE__, __LINE__, "%s is '%s', Linux history says '%s'", knob, v, want);
}

/* Each version's values, from the Linux changes of the table. */
TEST(profile_versions_follow_linux_history)
{
	static const struct {
		const char *version, *knob, *value;
	} rows[] = {
		{ "3.8", "thpsim/huge_zero_page_lifetime", "refcount" }, /* the series, patch 10 */
		{ "4.9", "thpsim/huge_zero_page_lifetime", "per-mm" },   /* Aaron Lu, 4.9 */
		{ "3.8", "thpsim/huge_zero_wp", "alloc-or-pte" },
		{ "5.7", "thpsim/huge_zero_wp", "alloc-or-split" },
		{ "6.1", "thpsim/huge_zero_wp", "split" },   /* 3917c80280c9, 5.8 */
		{ "6.12", "thpsim/huge_zero_wp", "split" },
		{ "6.13", "thpsim/huge_zero_wp", "alloc-or-split" }, /* 1ced09e0331f */
		{ "5.7", "thpsim/thp_cow", "copy" },
		{ "5.8", "thpsim/thp_cow", "split" },
		{ "6.12", "thpsim/pt_reclaim", "0" },
		{ "6.14", "thpsim/pt_reclaim", "1" },        /* 6375e95f381e */
		{ "6.11", "thpsim/split_remap_zero", "0" },
		{ "6.12", "thpsim/split_remap_zero", "1" },  /* b1f202060afe */
		{ "6.1", "thpsim/underused_shrinker", "0" },
		{ "6.12", "thpsim/underused_shrinker", "1" }, /* dafff3f4c850 */
		{ "6.1", "thpsim/mprotect_pmd_writable", "0" },
		{ "6.2", "thpsim/mprotect_pmd_writable", "1" }, /* c27f479ef542 */
		{ "6.1", "thpsim/deferred_split", "unmap-and-split" },
		{ "6.9", "thpsim/deferred_split", "unmap" },
		{ "6.10", "thpsim/deferred_split", "partial" }, /* 7491f3f34891 */
		/* measured: 6.1 and 6.12 refuse to collapse a write-protected
		 * range and count a deferred split, 6.18 does neither */
		{ "6.12", "thpsim/collapse_ro", "0" },
		{ "6.18", "thpsim/collapse_ro", "1" },
		{ "6.12", "thpsim/collapse_pte_batch", "0" },
		{ "6.18", "thpsim/collapse_pte_batch", "1" },
		{ "6.12", "thpsim/collapse_ro", "0" },
		{ "6.18", "thpsim/collapse_ro", "1" }, /* non-writable VMAs, Dev Jain */
		{ "6.16", "thpsim/collapse_pte_batch", "0" },
		{ "6.17", "thpsim/collapse_pte_batch", "1" }, /* PTE batching, Dev Jain */
	};
	thps_machine *m;

	ASSERT_OK(thps_machine_new(&(struct thps_config){ .ram_bytes = 16ULL << 20 }, &m));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ASSERT_OK(thps_knob_set(m, "thpsim/kernel", rows[i].version));
		knob_is(m, "thpsim/kernel", rows[i].version);
		knob_is(m, rows[i].knob, rows[i].value);
	}
	/* no version decides the zero page: a boot does */
	ASSERT_OK(thps_knob_set(m, "thpsim/zero_page", "0"));
	ASSERT_OK(thps_knob_set(m, "thpsim/kernel", "6.1"));
	knob_is(m, "thpsim/zero_page", "0");
	/* what is not a version, or too old, is refused and changes nothing */
	ASSERT_EQ(thps_knob_set(m, "thpsim/kernel", "6.1x"), -EINVAL);
	ASSERT_EQ(thps_knob_set(m, "thpsim/kernel", "3.7"), -EINVAL);
	ASSERT_EQ(thps_knob_set(m, "thpsim/kernel", ""), -EINVAL);
	knob_is(m, "thpsim/kernel", "6.1");
	thps_machine_free(m);
}

TEST(profile_from_a_release_and_a_spec)
{
	struct kprofile p;
	char v[16];

	ASSERT_OK(kprofile_version_of("6.12.118+deb12-amd64", v, sizeof(v)));
	ASSERT(!strcmp(v, "6.12"));
	ASSERT_OK(kprofile_version_of("6.18.44-fc-v1252", v, sizeof(v)));
	ASSERT(!strcmp(v, "6.18"));
	ASSERT_EQ(kprofile_version_of("linux", v, sizeof(v)), -1);
	ASSERT_EQ(kprofile_version_of("6", v, sizeof(v)), -1);
	ASSERT_OK(kprofile_from_release(&p, "6.1.0-57-amd64"));
	ASSERT(!strcmp(kprofile_get(&p, "thpsim/kernel"), "6.1"));
	ASSERT(!strcmp(kprofile_get(&p, "thpsim/split_remap_zero"), "0"));
	ASSERT_OK(kprofile_from_spec(&p, "6.18,thpsim/zero_page=0"));
	ASSERT(!strcmp(kprofile_get(&p, "thpsim/zero_page"), "0"));
	ASSERT(!strcmp(kprofile_get(&p, "thpsim/pt_reclaim"), "1"));
	ASSERT_EQ(kprofile_from_spec(&p, "6.18,nonsense"), -1);
	ASSERT_EQ(kprofile_from_spec(&p, "six"), -1);
}

/* The running kernel's profile: every knob has a value and a source, and
 * the zero page answer is the probe's, with or without a zero page. */
TEST(profile_detects_the_running_kernel)
{
	const struct kprofile *p = kprofile_host();
	const char *zp = kprofile_get(p, "thpsim/zero_page");

	ASSERT(p->nitems >= 9);
	ASSERT(kprofile_get(p, "thpsim/kernel"));
	ASSERT(zp && (!strcmp(zp, "0") || !strcmp(zp, "1")));
	for (int i = 0; i < p->nitems; i++)
		ASSERT(p->item[i].source[0]);
	for (int i = 0; i < p->nitems; i++)
		if (!strcmp(p->item[i].knob, "thpsim/zero_page"))
			ASSERT(strstr(p->item[i].source, "probe"));
}

TEST(profile_guards_parse_and_select)
{
	static const char text[] = "mmap A 2M align=2M\nmadvise A 0 2M hugepage\nread A 0 2M\n"
				   "when thpsim/zero_page=1 expect Rss == 0\n"
				   "when thpsim/zero_page=0 expect Rss == 2M\n"
				   "when thpsim/zero_page!=0,thpsim/kernel=6.18 expect page A 0 huge-zero\n";
	struct scenario s;
	struct scn_result r;
	struct kprofile nz;
	FILE *f = fopen("/dev/null", "w");

	ASSERT_OK(scenario_parse_string("g.scn", text, &s, f));
	fclose(f);
	/* with the zero page, the first and third hold (S1) */
	scenario_run_model(&s, NULL, NULL, &r);
	ASSERT_EQ(r.error, 0);
	ASSERT_EQ(r.nexpects, 2);
	ASSERT_EQ(r.failed_expects, 0);
	scn_result_free(&r);
	/* without it, the read allocated a THP (measured with pvm_no_zero_page=1) */
	ASSERT_OK(kprofile_from_spec(&nz, "6.18,thpsim/zero_page=0"));
	scenario_run_model(&s, &nz, NULL, &r);
	ASSERT_EQ(r.nexpects, 1);
	ASSERT_EQ(r.failed_expects, 0);
	ASSERT_EQ(r.expects[0].line, 5);
	scn_result_free(&r);
	scenario_free(&s);
}
