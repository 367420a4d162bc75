/*
 * commands.c - the thpsim command's table of subcommands, its help (every
 * COMMAND --help, "thpsim help TOPIC", the exit-status convention) and
 * "thpsim knobs".  main.c calls thpsim_main; the tests call it too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The commands: name, entry, arguments, what it does; own_help: the
 * command prints a fuller usage for --help itself. */
static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args, *what;
	int own_help;
} commands[] = {
	{ "demo", cmd_demo, "[--size MiB] [--set KNOB=VALUE]... [--format text|json]",
	  "the cover letter's program under three THP settings", 0 },
	{ "run", cmd_run, "SCENARIO [--kernel X.Y[,KNOB=VALUE]...|auto] [--set KNOB=VALUE]... "
	  "[--format text|json]", "a scenario in the model, on Linux 6.18's profile unless --kernel",
	  0 },
	{ "kernel", cmd_kernel, "SCENARIO [--format text|json]",
	  "the same scenario on the running kernel", 0 },
	{ "validate", cmd_validate, "SCENARIO|DIR... [--format text|json]",
	  "both, side by side; exit 1 on a difference", 0 },
	{ "bench", cmd_bench, "[--threads N] [--seconds S] [--repeat R] [--procs P] [--size SIZE] "
	  "[--step SIZE] [--format text|json]",
	  "fault rates, the huge zero page refcount experiment, memory, replay speed", 0 },
	{ "knobs", cmd_knobs, "", "the knobs --set takes, their defaults and values", 0 },
	{ "kernel-profile", cmd_kernel_profile, "[--format text|json]",
	  "what the running kernel is and does, as the model's thpsim/ knobs", 1 },
	{ "record", cmd_record, "-o TRACE [--force] [--buffer MiB] [--no-aslr] [--as-root] [-q] "
	  "-- COMMAND [ARG]...",
	  "trace a real program's anonymous memory (root)", 1 },
	{ "replay", cmd_replay, "TRACE|- [--set KNOB=VALUE]... [--format text|json|csv] [--ram GiB] "
	  "[-q] [--memory-max SIZE]", "a recorded program under a THP policy (and a memory limit)", 1 },
	{ "compare", cmd_compare, "TRACE|- [--policy NAME=KNOBS]... [--svg FILE [--force]] "
	  "[--format text|json]", "several THP policies side by side", 1 },
	{ "sweep", cmd_sweep, "plan|run|merge ... (thpsim sweep --help)",
	  "a fleet's traces x policies x kernels as jobs for GNU parallel, Slurm, Kubernetes", 1 },
	{ "trace", cmd_trace, "dump TRACE|- [--limit N] [--header]",
	  "a trace as text (--limit 0: every record; --header: the header only)", 0 },
};
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const char exit_status_text[] =
	"Exit status (every command):\n"
	"  0    success\n"
	"  1    a finding: validate or an expectation found a difference, a replay's figures\n"
	"       are partial (damaged trace) or faults found no simulated memory, a kernel\n"
	"       scenario failed or was refused\n"
	"  2    usage or input error: a bad argument, a missing value, a file that cannot be\n"
	"       read or is not what it should be, an output file that exists (no --force)\n"
	"  record: the program's own status (128+N when signal N killed it), 126 or 127 when\n"
	"       it cannot be run, 125 when the recorder failed (no tracing, a failed write)\n";

static int usage(FILE *f)
{
	fprintf(f, "usage: thpsim COMMAND [ARGS]\n\n"
		   "thpsim predicts what Linux transparent huge pages do to a program's memory.\n\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "  thpsim %s %s\n      %s\n", commands[i].name, commands[i].args,
			commands[i].what);
	fprintf(f, "  thpsim help [COMMAND|exit-status]\n  thpsim version\n\n"
		   "COMMAND --help prints its usage.\n");
	return f == stderr ? 2 : 0;
}

/* COMMAND --help for a command without a fuller text of its own. */
static int command_help(size_t i)
{
	printf("usage: thpsim %s %s\n  %s\n\n%s", commands[i].name, commands[i].args,
	       commands[i].what, exit_status_text);
	return 0;
}

static int help(const char *topic)
{
	if (!topic)
		return usage(stdout);
	if (!strcmp(topic, "exit-status")) {
		fputs(exit_status_text, stdout);
		return 0;
	}
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(topic, commands[i].name)) {
			char *argv[] = { (char *)commands[i].name, "--help", NULL };

			return commands[i].own_help ? commands[i].fn(2, argv) : command_help(i);
		}
	fprintf(stderr, "thpsim: help: no topic '%s' (a command or exit-status)\n", topic);
	return 2;
}

int thpsim_main(int argc, char **argv)
{
	if (argc < 2)
		return usage(stderr);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage(stdout);
	if (!strcmp(argv[1], "help"))
		return help(argc > 2 ? argv[2] : NULL);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("thpsim %s\n", THPS_VERSION);
		return 0;
	}
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name)) {
			if (!commands[i].own_help && cli_wants_help(argc - 1, argv + 1))
				return command_help(i);
			return commands[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "thpsim: unknown command '%s'\n", argv[1]);
	return usage(stderr);
}
