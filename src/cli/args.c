/*
 * args.c - argument helpers and error printing shared by the subcommands.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
	switch (knob_sets_add(sets, arg)) {
	case 0:
		return 0;
	case -ENOSPC:
		return cli_usage("too many --set arguments (at most %d)", KNOB_SETS_MAX);
	case -ENAMETOOLONG:
		return cli_usage("--set argument too long");
	default:
		return cli_usage("--set takes KNOB=VALUE, not '%s' (thpsim knobs lists them)", arg);
	}
}

int cli_apply_sets(thps_machine *m, const struct cli_sets *sets)
{
	int bad, err = knob_sets_apply(m, sets, &bad);

	if (err)
		cli_error(0, "--set %s=%s: %s", sets->name[bad], sets->value[bad], thps_last_error(m));
	return err;
}
