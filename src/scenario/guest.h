/*
 * guest.h - the kernel side's THP settings inside a check-kernels guest
 * (guest.c).  On a host every function here does nothing.
 */
#ifndef THPSIM_SCENARIO_GUEST_H
#define THPSIM_SCENARIO_GUEST_H

#include "scenario.h"

/* The flag on the kernel command line that says "this is a disposable
 * guest booted by make check-kernels": only then may /sys be written. */
#define SCN_GUEST_FLAG "thpsim.guest=1"

#define SCN_GUEST_MAX_SAVED 16

struct scn_guest_thp {
	int n;                          /* settings written, restored in reverse */
	struct {
		char path[192];         /* the sysfs file */
		char old[64];           /* its value before the scenario */
	} saved[SCN_GUEST_MAX_SAVED];
};

/* The flag a check-kernels guest puts on the command line it shows its
 * run of the corpus as a host (tools/kernels/init, validate_as_host): a
 * scenario that runs there as in the guest's own run, nothing emulated
 * (the settings it needs are this kernel's already), is skipped, since
 * the guest's own run has run it alike on the same kernel. */
#define SCN_EMULATED_ONLY_FLAG "thpsim.as_host=emulated"

/* Does this command line (the text of /proc/cmdline) carry SCN_GUEST_FLAG
 * as a word of its own? */
int scn_cmdline_is_guest(const char *cmdline);
/* Does it carry WORD as a word of its own? */
int scn_cmdline_has(const char *cmdline, const char *word);

/*
 * Inside a guest, write the scenario's "set transparent_hugepage/..." knobs
 * (those before its first step) under SYSDIR, keeping the old values in
 * *saved; the kernel side then finds the settings the scenario asks for.
 * CMDLINE is the file to read the flag from (/proc/cmdline); without the
 * flag nothing is written.  Returns the number of settings written; a knob
 * the kernel does not have is left alone (the run skips it, by name).
 */
int scn_guest_thp_apply_at(const struct scenario *s, struct scn_guest_thp *saved,
			   const char *cmdline, const char *sysdir);
/* Put back what apply wrote, last first. */
void scn_guest_thp_restore(struct scn_guest_thp *saved);

/* The same, on /proc/cmdline and /sys/kernel/mm/transparent_hugepage/. */
int scn_guest_thp_apply(const struct scenario *s, struct scn_guest_thp *saved);

/* Is this a check-kernels guest (SCN_GUEST_FLAG on /proc/cmdline)? */
int scn_in_guest(void);
/* Is SCN_EMULATED_ONLY_FLAG on /proc/cmdline? */
int scn_as_host_emulated_only(void);

/*
 * khugepaged inside a guest.  hold: khugepaged's scan_sleep_millisecs set
 * to an hour, so that it does not scan while the scenario's steps run
 * (writing the file restarts its sleep); the old value is kept in *saved
 * and put back by scn_guest_thp_restore.  scans: let it make n full scans
 * (scan_sleep_millisecs small, pages_to_scan large, then wait until
 * full_scans has grown by n + 1, since the scan under way may have passed
 * the scenario's processes; at most timeout_ms), then hold it again.
 * 0, or -errno with why in buf.  On a host both do nothing and fail.
 */
/* A transparent_hugepage/khugepaged/ file read as a number (any machine):
 * 0, or -1 when it cannot be read. */
int scn_khugepaged_counter(const char *name, uint64_t *out);
int scn_guest_khugepaged_hold(struct scn_guest_thp *saved);
int scn_guest_khugepaged_scans(uint64_t n, int timeout_ms, char *why, size_t len);

#endif
