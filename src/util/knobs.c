/*
 * knobs.c - the KNOB=VALUE list (knobs.h).
 */
#include <errno.h>
#include <string.h>

#include "util/knobs.h"
#include "util/kprofile.h"

int knob_sets_add_pair(struct knob_sets *sets, const char *name, const char *value)
{
	size_t n = strlen(name), v = strlen(value);

	if (!n)
		return -EINVAL;
	if (sets->n >= KNOB_SETS_MAX)
		return -ENOSPC;
	if (n + 1 + v >= sizeof(sets->buf[0]))
		return -ENAMETOOLONG;
	memcpy(sets->buf[sets->n], name, n + 1);
	memcpy(sets->buf[sets->n] + n + 1, value, v + 1);
	sets->name[sets->n] = sets->buf[sets->n];
	sets->value[sets->n] = sets->buf[sets->n] + n + 1;
	sets->n++;
	return 0;
}

int knob_sets_add(struct knob_sets *sets, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[sizeof(sets->buf[0])];

	if (!eq || eq == arg)
		return -EINVAL;
	if ((size_t)(eq - arg) >= sizeof(name))
		return sets->n >= KNOB_SETS_MAX ? -ENOSPC : -ENAMETOOLONG;
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = 0;
	return knob_sets_add_pair(sets, name, eq + 1);
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
