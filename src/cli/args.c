/*
 * args.c - argument helpers and error printing shared by the subcommands.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/sysfile.h"

int cli_exit_signal;

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

/* Options that take a value, in any command: without one, they are
 * missing their value, not unknown. */
static const char *const value_options[] = {
	"--set", "--format", "--ram", "--policy", "--svg", "-o", "--output", "--buffer",
	"--limit", "--size", "--threads", "--seconds", "--repeat", "--procs", "--step",
	"--memory-max", "--memory-high", "--free-blocks",
};

int cli_bad_option(const char *cmd, const char *arg, const char *usage)
{
	for (size_t i = 0; i < sizeof(value_options) / sizeof(value_options[0]); i++)
		if (!strcmp(arg, value_options[i]))
			return cli_usage("%s: %s needs a value\n%s", cmd, arg, usage);
	if (arg[0] == '-')
		return cli_usage("%s: unknown option '%s'\n%s", cmd, arg, usage);
	return cli_usage("%s: unexpected argument '%s'\n%s", cmd, arg, usage);
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

const char *cli_resolve_knob(const char *name, char *buf, size_t len)
{
	static const char *const prefixes[] = { "", "transparent_hugepage/",
						"transparent_hugepage/khugepaged/", "thpsim/" };

	for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
		snprintf(buf, len, "%s%s", prefixes[p], name);
		for (int i = 0; thps_knob_name(i); i++)
			if (!strcmp(thps_knob_name(i), buf))
				return buf;
	}
	return NULL;
}

int cli_add_set(struct knob_sets *sets, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[128], full[256];

	if (!eq || eq == arg)
		return cli_usage("--set takes KNOB=VALUE, not '%s' (thpsim knobs lists them)", arg);
	/* the short names compare --policy takes (enabled, use_zero_page...)
	 * are taken here too, and an unknown knob is an error now */
	snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
	if (!cli_resolve_knob(name, full, sizeof(full)))
		return cli_usage("--set %s: no knob '%s' (thpsim knobs lists them)", arg, name);
	if (strlen(full) + strlen(eq) + 1 > sizeof(full))
		return cli_usage("--set argument too long");
	strcat(full, eq);
	switch (knob_sets_add(sets, full)) {
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

int cli_apply_sets(thps_machine *m, const struct knob_sets *sets)
{
	int bad, err = knob_sets_apply(m, sets, &bad);

	if (err)
		msg_error(0, "--set %s=%s: %s", sets->name[bad], sets->value[bad], thps_last_error(m));
	return err;
}
