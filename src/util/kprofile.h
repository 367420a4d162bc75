/*
 * kprofile.h - the kernel profile of the running kernel: which behaviour
 * of the model's thpsim/ knobs it has, and where each answer came from.
 *
 * The model (src/mm/sysfs.c) knows, per knob, the Linux version from which
 * each value holds.  Here the host is asked: its version (uname), its build
 * configuration where readable (/proc/config.gz, /boot/config-RELEASE), and
 * short probes where neither tells (does a read fault map the zero page?).
 * The result is a list of knob=value settings, thpsim/kernel first, that
 * any machine applies (kprofile_apply) and a trace header carries.
 */
#ifndef THPSIM_KPROFILE_H
#define THPSIM_KPROFILE_H

#include <stdio.h>

#include "thpsim.h"

#define KPROFILE_MAX_ITEMS 32
#define KPROFILE_MAX_MISSING 16

struct kprofile_item {
	char knob[64];     /* "thpsim/kernel" first, then each thpsim/ knob */
	char value[32];
	char source[192];  /* how it was decided, for a person */
};

struct kprofile {
	char release[128];    /* uname -r, or the trace's "kernel" */
	char version[16];     /* "6.18": the profile's version */
	int nitems;
	struct kprofile_item item[KPROFILE_MAX_ITEMS];
	/* host facts beside the knobs (kprofile_detect only) */
	char config[96];      /* where the build configuration was read, or "" */
	int nmissing;         /* vmstat items the model has and this kernel lacks */
	char missing[KPROFILE_MAX_MISSING][48];
	int has_pmd_size_dir; /* transparent_hugepage/hugepages-2048kB/ (Linux 6.8+) */
	int has_shrink_underused; /* transparent_hugepage/shrink_underused (Linux 6.12+) */
};

/* "6.12.118+deb12-amd64" -> "6.12"; -1 when it does not start X.Y. */
int kprofile_version_of(const char *release, char *out, size_t len);

/* The running kernel's profile; err gets a reason for anything that fell
 * back to a default.  Never fails: at worst it is the version's defaults. */
void kprofile_detect(struct kprofile *p);
/* The cached result of kprofile_detect (probes run once a process). */
const struct kprofile *kprofile_host(void);

/* A recorded kernel's profile from its release alone: the version's
 * defaults (older traces carry nothing else).  -1 if not a version. */
int kprofile_from_release(struct kprofile *p, const char *release);

/* Set (or add) one item. */
void kprofile_set(struct kprofile *p, const char *knob, const char *value, const char *source);
/* "X.Y[,KNOB=VALUE]...": a version's defaults with items changed; -1 if
 * the version is not one. */
int kprofile_from_spec(struct kprofile *p, const char *spec);

/* Set every item on m; 0 or the first error (thps_last_error says it). */
int kprofile_apply(const struct kprofile *p, thps_machine *m);
/* An item's value, or NULL. */
const char *kprofile_get(const struct kprofile *p, const char *knob);

/* Print as text or JSON (the thpsim kernel-profile command). */
void kprofile_print(const struct kprofile *p, FILE *f, int json);

#endif
