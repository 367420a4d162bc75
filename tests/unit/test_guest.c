/*
 * test_guest.c - guest.c: the kernel side writes THP settings only when the
 * kernel command line carries thpsim.guest=1, writes exactly the scenario's
 * transparent_hugepage/ knobs, and puts the old values back.  Driven on a
 * directory of plain files standing in for /sys/kernel/mm/transparent_hugepage.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test.h"
#include "scenario/guest.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ASSERT(f);
	fputs(text, f);
	fclose(f);
}

static const char *get(const char *name)
{
	static char buf[128];
	char path[128];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	ASSERT(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* A fake sysfs directory as a 6.12 kernel booted with THP "madvise" has it. */
static void fake_sysfs(void)
{
	char sub[96];

	snprintf(dir, sizeof(dir), "/tmp/thpsim-guest-XXXXXX");
	ASSERT(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/khugepaged", dir);
	ASSERT_OK(mkdir(sub, 0700) ? -errno : 0);
	put("enabled", "always [madvise] never\n");
	put("use_zero_page", "1\n");
	put("khugepaged/max_ptes_none", "511\n");
	put("outside", "untouched\n");
}

static void remove_fake(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(system(cmd), 0);
}

static void parse(const char *text, struct scenario *s)
{
	ASSERT_OK(scenario_parse_string("t.scn", text, s, stderr));
}

static const char *const SCN =
	"set transparent_hugepage/enabled always\n"
	"set transparent_hugepage/use_zero_page 0\n"
	"set transparent_hugepage/khugepaged/max_ptes_none 409\n"
	"mmap A 2M align=2M\n";

TEST(guest_flag_is_a_word_of_the_command_line)
{
	ASSERT(scn_cmdline_is_guest("thpsim.guest=1"));
	ASSERT(scn_cmdline_is_guest("console=ttyS0 thpsim.guest=1 quiet\n"));
	ASSERT(scn_cmdline_is_guest("BOOT_IMAGE=/vmlinuz thpsim.guest=1\n"));
	ASSERT(!scn_cmdline_is_guest(""));
	ASSERT(!scn_cmdline_is_guest("BOOT_IMAGE=/vmlinuz root=/dev/vda ro\n"));
	ASSERT(!scn_cmdline_is_guest("thpsim.guest=10"));
	ASSERT(!scn_cmdline_is_guest("thpsim.guest=0 xthpsim.guest=1"));
	ASSERT(!scn_cmdline_is_guest("thpsim.guest=1x thpsim.guest"));
	/* the guest's run as a host: its own command line, the flag swapped */
	ASSERT(scn_cmdline_has("console=ttyS0 thpsim.as_host=emulated quiet\n", SCN_EMULATED_ONLY_FLAG));
	ASSERT(!scn_cmdline_is_guest("console=ttyS0 thpsim.as_host=emulated quiet\n"));
	ASSERT(!scn_cmdline_has("thpsim.as_host=emulatedx", SCN_EMULATED_ONLY_FLAG));
	ASSERT(!scn_cmdline_has("console=ttyS0 thpsim.guest=1\n", SCN_EMULATED_ONLY_FLAG));
}

TEST(guest_host_writes_nothing)
{
	struct scenario s;
	struct scn_guest_thp saved;

	fake_sysfs();
	put("cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/vda ro thpsim.guest=0\n");
	parse(SCN, &s);
	ASSERT_EQ(scn_guest_thp_apply_at(&s, &saved, "/nonexistent/cmdline", dir), 0);
	ASSERT_EQ(saved.n, 0);
	{
		char cmdline[128];

		snprintf(cmdline, sizeof(cmdline), "%s/cmdline", dir);
		ASSERT_EQ(scn_guest_thp_apply_at(&s, &saved, cmdline, dir), 0);
	}
	ASSERT(!strcmp(get("enabled"), "always [madvise] never\n"));
	ASSERT(!strcmp(get("use_zero_page"), "1\n"));
	ASSERT(!strcmp(get("khugepaged/max_ptes_none"), "511\n"));
	scenario_free(&s);
	remove_fake();
}

TEST(guest_writes_the_scenario_knobs_and_restores_them)
{
	struct scenario s;
	struct scn_guest_thp saved;
	char cmdline[128];

	fake_sysfs();
	put("cmdline", "console=ttyS0 transparent_hugepage=madvise thpsim.guest=1\n");
	snprintf(cmdline, sizeof(cmdline), "%s/cmdline", dir);
	parse(SCN, &s);
	ASSERT_EQ(scn_guest_thp_apply_at(&s, &saved, cmdline, dir), 3);
	ASSERT(!strcmp(get("enabled"), "always"));
	ASSERT(!strcmp(get("use_zero_page"), "0"));
	ASSERT(!strcmp(get("khugepaged/max_ptes_none"), "409"));
	ASSERT(!strcmp(get("outside"), "untouched\n"));
	scn_guest_thp_restore(&saved);
	ASSERT_EQ(saved.n, 0);
	ASSERT(!strcmp(get("enabled"), "madvise"));
	ASSERT(!strcmp(get("use_zero_page"), "1"));
	ASSERT(!strcmp(get("khugepaged/max_ptes_none"), "511"));
	scenario_free(&s);

	/* a value already in place is not written (nothing to restore); a
	 * knob this kernel lacks is left for the run to skip by name */
	put("use_zero_page", "0\n");
	parse("set transparent_hugepage/use_zero_page 0\n"
	      "set transparent_hugepage/shrink_underused 0\nmmap A 2M\n", &s);
	ASSERT_EQ(scn_guest_thp_apply_at(&s, &saved, cmdline, dir), 0);
	{
		char path[128];

		snprintf(path, sizeof(path), "%s/shrink_underused", dir);
		ASSERT(access(path, F_OK) != 0);
	}
	scenario_free(&s);

	/* a knob set after the first step: the run skips the scenario, so
	 * nothing is written */
	parse("mmap A 2M\nset transparent_hugepage/enabled never\n", &s);
	ASSERT_EQ(scn_guest_thp_apply_at(&s, &saved, cmdline, dir), 0);
	ASSERT(!strcmp(get("enabled"), "madvise"));
	scenario_free(&s);
	remove_fake();
}
