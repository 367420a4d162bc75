/*
 * knobs.h - a list of KNOB=VALUE settings to apply to a machine: the
 * --set arguments of run, demo, replay and compare, which the scenario
 * runner applies over a scenario's own "set" steps and the replay over
 * the recording machine's settings; a compare policy's knobs.
 *
 * It lives here, below the scenario library and the command line, so that
 * both can hold one without the library including the command line's
 * header.  Names are the sysfs names (transparent_hugepage/enabled) or the
 * model's thpsim/ knobs; "thpsim/kernel=auto" stands for the running
 * kernel's detected profile (kprofile.h).
 */
#ifndef THPSIM_KNOBS_H
#define THPSIM_KNOBS_H

#include "thpsim.h"

#define KNOB_SETS_MAX 64

struct knob_sets {
	int n;                                /* settings in use */
	const char *name[KNOB_SETS_MAX];      /* into buf[i] */
	const char *value[KNOB_SETS_MAX];     /* into buf[i], after the name */
	char buf[KNOB_SETS_MAX][256];         /* "NAME\0VALUE" */
};

/* Add "NAME=VALUE": 0, -EINVAL (no '=' or no name), -ENOSPC (the list is
 * full) or -ENAMETOOLONG (longer than a buf). */
int knob_sets_add(struct knob_sets *sets, const char *arg);
/* Add NAME and VALUE: the same, with name and value apart. */
int knob_sets_add_pair(struct knob_sets *sets, const char *name, const char *value);
/* Is knob one of the list's names? */
int knob_sets_has(const struct knob_sets *sets, const char *knob);
/* Apply the settings to m in order: 0, or the first error with *failed
 * set to its index (thps_last_error(m) says why). */
int knob_sets_apply(thps_machine *m, const struct knob_sets *sets, int *failed);

#endif
