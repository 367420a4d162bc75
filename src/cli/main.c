/*
 * main.c - the thpsim command: the subcommand table and "thpsim knobs".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>

#include "cli.h"

int cmd_knobs(int argc, char **argv)
{
	thps_machine *m;
	char val[64];

	(void)argc;
	(void)argv;
	if (thps_machine_new(&(struct thps_config){ .ram_bytes = 64ULL << 20 }, &m))
		return 1;
	printf("%-48s %-16s %s\n", "knob", "default", "values");
	for (int i = 0; thps_knob_name(i); i++) {
		thps_knob_get(m, thps_knob_name(i), val, sizeof(val));
		printf("%-48s %-16s %s\n", thps_knob_name(i), val, thps_knob_help(i));
	}
	thps_machine_free(m);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "demo", cmd_demo, "[--size MiB] [--set KNOB=VALUE]... [--format text|json]   the cover letter's program under three THP settings" },
	{ "run", cmd_run, "SCENARIO [--kernel X.Y[,KNOB=VALUE]...|auto] [--set KNOB=VALUE]... [--format text|json]   a scenario in the model, on Linux 6.18's profile unless --kernel" },
	{ "kernel", cmd_kernel, "SCENARIO [--format text|json]   the same scenario on the running kernel" },
	{ "validate", cmd_validate, "SCENARIO|DIR... [--format text|json]   both, side by side; exit 1 on a difference" },
	{ "bench", cmd_bench, "[--threads N] [--seconds S] [--repeat R] [--procs P] [--size SIZE] [--step SIZE] [--format text|json]   fault rates, the huge zero page refcount experiment, memory, replay speed" },
	{ "knobs", cmd_knobs, "   the knobs --set takes, their defaults and values" },
	{ "kernel-profile", cmd_kernel_profile, "[--format text|json]   what the running kernel is and does, as the model's thpsim/ knobs" },
	{ "record", cmd_record, "-o TRACE [--buffer MiB] -- COMMAND [ARG]...   trace a real program's anonymous memory (root)" },
	{ "replay", cmd_replay, "TRACE [--set KNOB=VALUE]... [--format text|json|csv]   a recorded program under a THP policy" },
	{ "compare", cmd_compare, "TRACE [--policy NAME=KNOBS]... [--svg FILE] [--format text|json]   several THP policies side by side" },
	{ "trace", cmd_trace, "dump TRACE [--limit N] [--header]   a trace as text" },
};

static int usage(FILE *f)
{
	fprintf(f, "usage: thpsim COMMAND [ARGS]\n\n"
		   "thpsim predicts what Linux transparent huge pages do to a program's memory.\n\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  thpsim %s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "  thpsim version\n");
	return f == stderr ? 2 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help"))
		return usage(stdout);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("thpsim %s\n", THPS_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			int rc = commands[i].fn(argc - 1, argv + 1);

			if (cli_exit_signal) {
				sigset_t s;

				signal(cli_exit_signal, SIG_DFL);
				sigemptyset(&s);
				sigaddset(&s, cli_exit_signal);
				sigprocmask(SIG_UNBLOCK, &s, NULL);
				prctl(PR_SET_DUMPABLE, 0); /* no core of thpsim itself */
				raise(cli_exit_signal);
			}
			return rc;
		}
	fprintf(stderr, "thpsim: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
