/*
 * guest.c - the THP settings a scenario needs, written to /sys, but only
 * inside a disposable guest (docs/kernels.md).
 *
 * On a host the kernel side never writes /sys/kernel/mm: a scenario that
 * needs use_zero_page=0 or another max_ptes_none is skipped with the reason,
 * and "enabled" is emulated per mapping (run_kernel.c).  "make
 * check-kernels" boots Debian's kernels in QEMU with SCN_GUEST_FLAG on their
 * command line; there the machine is ours for the few seconds it lives, so
 * the runner sets the scenario's transparent_hugepage/ knobs for real before
 * the scenario and puts the old values back after it.  The flag is the only
 * thing that enables this: no heuristic (a hypervisor, an initramfs, root)
 * can make a host write its THP settings.
 *
 * Entry points: scn_guest_thp_apply() before a kernel run,
 * scn_guest_thp_restore() after it (scenario_run_kernel in run_kernel.c).
 * The *_at form takes the files to use, so the unit tests drive it on a
 * directory of their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"
#include "util/sysfile.h"

#define KNOB_PREFIX "transparent_hugepage/"
#define KHUGEPAGED_DIR "/sys/kernel/mm/transparent_hugepage/khugepaged/"
#define KHUGEPAGED_HOLD_MS "3600000"   /* no wake-up while a scenario runs */
#define KHUGEPAGED_FAST_MS "10"        /* ...and quick ones for a scans= step */
#define KHUGEPAGED_FAST_PAGES "65536"  /* 256 MiB per wake-up */

int scn_cmdline_has(const char *cmdline, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = cmdline; p && (p = strstr(p, word)); p += n) {
		int starts = p == cmdline || p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n';
		char end = p[n];

		if (starts && (end == 0 || end == ' ' || end == '\t' || end == '\n'))
			return 1;
	}
	return 0;
}

int scn_cmdline_is_guest(const char *cmdline)
{
	return scn_cmdline_has(cmdline, SCN_GUEST_FLAG);
}

/* Is WORD a word of /proc/cmdline? */
static int proc_cmdline_has(const char *word)
{
	char buf[4096];

	return sysfile_read("/proc/cmdline", buf, sizeof(buf)) > 0 && scn_cmdline_has(buf, word);
}

int scn_in_guest(void)
{
	return proc_cmdline_has(SCN_GUEST_FLAG);
}

int scn_as_host_emulated_only(void)
{
	return proc_cmdline_has(SCN_EMULATED_ONLY_FLAG);
}

/* A knob name we may turn into a path: below transparent_hugepage/, no
 * way out of it. */
static int safe_knob(const char *knob)
{
	return !strncmp(knob, KNOB_PREFIX, strlen(KNOB_PREFIX)) && !strstr(knob, "..") &&
	       knob[strlen(KNOB_PREFIX)] != 0 && knob[strlen(KNOB_PREFIX)] != '/';
}

int scn_guest_thp_apply_at(const struct scenario *s, struct scn_guest_thp *saved,
			   const char *cmdline, const char *sysdir)
{
	char buf[4096];

	saved->n = 0;
	if (sysfile_read(cmdline, buf, sizeof(buf)) <= 0 || !scn_cmdline_is_guest(buf))
		return 0;
	/* a knob set after the first step is not applied: the run skips it */
	if (s->has_late_set)
		return 0;
	for (int i = 0; i < s->nsteps && saved->n < SCN_GUEST_MAX_SAVED; i++) {
		const struct scn_step *st = &s->steps[i];
		char path[192], old[64];

		if (st->op != SCN_SET || !safe_knob(st->knob))
			continue;
		snprintf(path, sizeof(path), "%s/%s", sysdir, st->knob + strlen(KNOB_PREFIX));
		if (sysfile_choice(path, old, sizeof(old)))
			continue; /* not on this kernel: the run says so */
		if (!strcmp(old, st->knob_value))
			continue;
		if (sysfile_write(path, st->knob_value))
			continue; /* a value this kernel refuses: the run compares and skips */
		snprintf(saved->saved[saved->n].path, sizeof(saved->saved[0].path), "%s", path);
		snprintf(saved->saved[saved->n].old, sizeof(saved->saved[0].old), "%s", old);
		saved->n++;
	}
	return saved->n;
}

void scn_guest_thp_restore(struct scn_guest_thp *saved)
{
	while (saved->n > 0) {
		saved->n--;
		if (sysfile_write(saved->saved[saved->n].path, saved->saved[saved->n].old))
			fprintf(stderr, "thpsim: cannot restore %s to '%s'\n",
				saved->saved[saved->n].path, saved->saved[saved->n].old);
	}
}

int scn_guest_thp_apply(const struct scenario *s, struct scn_guest_thp *saved)
{
	return scn_guest_thp_apply_at(s, saved, "/proc/cmdline",
				      "/sys/kernel/mm/transparent_hugepage");
}

int scn_guest_khugepaged_hold(struct scn_guest_thp *saved)
{
	const char *path = KHUGEPAGED_DIR "scan_sleep_millisecs";
	char old[64];

	if (!scn_in_guest())
		return -EPERM;
	if (saved->n >= SCN_GUEST_MAX_SAVED || sysfile_choice(path, old, sizeof(old)))
		return -ENOSPC;
	if (sysfile_write(path, KHUGEPAGED_HOLD_MS))
		return -EIO;
	snprintf(saved->saved[saved->n].path, sizeof(saved->saved[0].path), "%s", path);
	snprintf(saved->saved[saved->n].old, sizeof(saved->saved[0].old), "%s", old);
	saved->n++;
	return 0;
}

static int read_full_scans(uint64_t *out)
{
	char buf[64];

	if (sysfile_read(KHUGEPAGED_DIR "full_scans", buf, sizeof(buf)) <= 0)
		return -1;
	*out = strtoull(buf, NULL, 10);
	return 0;
}

int scn_khugepaged_counter(const char *name, uint64_t *out)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), KHUGEPAGED_DIR "%s", name);
	if (sysfile_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	*out = strtoull(buf, NULL, 10);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int scn_guest_khugepaged_scans(uint64_t n, int timeout_ms, char *why, size_t len)
{
	char pages[64];
	uint64_t start, cur = 0;
	int64_t deadline;
	int err = 0;

	if (!scn_in_guest()) {
		snprintf(why, len, "not in a check-kernels guest");
		return -EPERM;
	}
	if (read_full_scans(&start) ||
	    sysfile_choice(KHUGEPAGED_DIR "pages_to_scan", pages, sizeof(pages)) ||
	    sysfile_write(KHUGEPAGED_DIR "pages_to_scan", KHUGEPAGED_FAST_PAGES) ||
	    sysfile_write(KHUGEPAGED_DIR "scan_sleep_millisecs", KHUGEPAGED_FAST_MS)) {
		snprintf(why, len, "cannot read or write %s", KHUGEPAGED_DIR);
		return -EIO;
	}
	deadline = now_ms() + timeout_ms;
	while (!read_full_scans(&cur) && cur < start + n + 1) {
		if (now_ms() > deadline) {
			snprintf(why, len, "khugepaged/full_scans went from %llu to %llu in %d ms, "
				 "not by %llu", (unsigned long long)start, (unsigned long long)cur,
				 timeout_ms, (unsigned long long)n + 1);
			err = -ETIMEDOUT;
			break;
		}
		usleep(5000);
	}
	sysfile_write(KHUGEPAGED_DIR "scan_sleep_millisecs", KHUGEPAGED_HOLD_MS);
	sysfile_write(KHUGEPAGED_DIR "pages_to_scan", pages);
	return err;
}
