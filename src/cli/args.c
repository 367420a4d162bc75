/*
 * args.c - argument helpers and error printing shared by the subcommands.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/kprofile.h"

int cli_exit_signal;

int cli_error(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("thpsim: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, " (%s)", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	return err;
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("thpsim: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	if (*end || (shift && v > (~0ULL >> shift)))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

int cli_parse_format(const char *s, int *json)
{
	if (!strcmp(s, "json"))
		*json = 1;
	else if (!strcmp(s, "text"))
		*json = 0;
	else
		return cli_usage("--format takes text or json, not '%s'", s);
	return 0;
}

int cli_add_set(struct cli_sets *sets, const char *arg)
{
	const char *eq = strchr(arg, '=');
	size_t n;

	if (!eq || eq == arg)
		return cli_usage("--set takes KNOB=VALUE, not '%s' (thpsim knobs lists them)", arg);
	if (sets->n >= CLI_MAX_SETS)
		return cli_usage("too many --set arguments (at most %d)", CLI_MAX_SETS);
	n = strlen(arg);
	if (n >= sizeof(sets->buf[0]))
		return cli_usage("--set argument too long");
	memcpy(sets->buf[sets->n], arg, n + 1);
	sets->buf[sets->n][eq - arg] = 0;
	sets->name[sets->n] = sets->buf[sets->n];
	sets->value[sets->n] = sets->buf[sets->n] + (eq - arg) + 1;
	sets->n++;
	return 0;
}

int cli_apply_sets(thps_machine *m, const struct cli_sets *sets)
{
	for (int i = 0; i < sets->n; i++) {
		int err;

		if (!strcmp(sets->name[i], "thpsim/kernel") && !strcmp(sets->value[i], "auto"))
			err = kprofile_apply(kprofile_host(), m);
		else
			err = thps_knob_set(m, sets->name[i], sets->value[i]);

		if (err) {
			cli_error(0, "--set %s=%s: %s", sets->name[i], sets->value[i], thps_last_error(m));
			return err;
		}
	}
	return 0;
}

