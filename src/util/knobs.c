/*
 * knobs.c - the KNOB=VALUE list (knobs.h).
 */
#include <errno.h>
#include <string.h>

#include "util/knobs.h"
#include "util/kprofile.h"

int knob_sets_add(struct knob_sets *sets, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n;

	if (!eq || eq == arg)
		return -EINVAL;
	if (sets->n >= KNOB_SETS_MAX)
		return -ENOSPC;
	n = strlen(arg);
	if (n >= sizeof(sets->buf[0]))
		return -ENAMETOOLONG;
	memcpy(sets->buf[sets->n], arg, n + 1);
	sets->buf[sets->n][eq - arg] = 0;
	sets->name[sets->n] = sets->buf[sets->n];
	sets->value[sets->n] = sets->buf[sets->n] + (eq - arg) + 1;
	sets->n++;
	return 0;
}

int knob_sets_has(const struct knob_sets *sets, const char *knob)
{
	for (int i = 0; sets && i < sets->n; i++)
		if (!strcmp(sets->name[i], knob))
			return 1;
	return 0;
}

int knob_sets_apply(thps_machine *m, const struct knob_sets *sets, int *failed)
{
	for (int i = 0; i < sets->n; i++) {
		int err;

		if (!strcmp(sets->name[i], "thpsim/kernel") && !strcmp(sets->value[i], "auto"))
			err = kprofile_apply(kprofile_host(), m);
		else
			err = thps_knob_set(m, sets->name[i], sets->value[i]);
		if (err) {
			*failed = i;
			return err;
		}
	}
	return 0;
}
