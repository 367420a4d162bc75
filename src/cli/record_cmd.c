/*
 * record_cmd.c - "thpsim record": the arguments, the usage text and the
 * exit status; the recorder itself is a library call (src/record,
 * record_run).
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "record/record.h"

static const char usage_text[] =
	"usage: thpsim record -o TRACE [--force] [--buffer MiB] [--no-aslr] [--as-root] [-q]\n"
	"                     [--runs N] [--callers] [--access] [--access-ms N]\n"
	"                     -- COMMAND [ARG]...\n"
	"       thpsim record --measure [-o FILE.json] [--force] [--no-aslr] [--as-root]\n"
	"                     [--access] [--access-ms N] -- COMMAND [ARG]...\n"
	"  Runs COMMAND (and every process it starts) and writes a trace of what it does\n"
	"  to its anonymous memory; replay it with 'thpsim replay TRACE'.  Needs root.\n"
	"  Under sudo (SUDO_UID and SUDO_GID set), COMMAND runs as the user who ran sudo,\n"
	"  with that user's groups; the recorder itself stays root.\n"
	"  -o TRACE     the trace; an existing file is replaced only with --force, a\n"
	"               symbolic link never; written beside it as .TRACE.XXXXXX and\n"
	"               renamed when complete\n"
	"  --buffer MiB the kernel's ring buffer per CPU (default 64)\n"
	"  -q, --quiet  no summary line\n"
	"  --no-aslr    run COMMAND with address-space randomisation off (as setarch -R), so\n"
	"               that its mappings land at the same addresses on every run; the\n"
	"               trace header (aslr=) and the --measure JSON say whether it was on\n"
	"  --as-root    under sudo, run COMMAND as root rather than as the user who ran sudo\n"
	"  --callers    keep the user call chain of each mmap, brk and mremap, named by\n"
	"               function where the files have symbols (else file+0xoffset), so\n"
	"               that replay says which code made each mapping ('caller'); chains\n"
	"               follow frame pointers, and code built without them shows less\n"
	"  --access     sample which pages COMMAND's first process accesses with the\n"
	"               kernel's DAMON (virtual-address monitoring: CONFIG_DAMON_VADDR and\n"
	"               CONFIG_DAMON_SYSFS), one sample per aggregation interval, with\n"
	"               the pages present and in THPs in the accessed regions; its\n"
	"               children are not sampled.  Where DAMON cannot be used (no such\n"
	"               kernel, or DAMON already in use: it is left alone) the trace is\n"
	"               recorded without samples and its header says why (access=).\n"
	"               With --measure, the samples (the regions' kB, and of them the\n"
	"               kB present, in PMD-mapped THPs and in smaller THPs, as the\n"
	"               machine's THP settings made them) go to the JSON (\"access\")\n"
	"  --access-ms N  --access with an aggregation interval of N ms (20 to 10000,\n"
	"               default 100; DAMON checks each region N/20 ms apart)\n"
	"  --runs N     run COMMAND N times (1 to 100), one after the other: -o PREFIX\n"
	"               writes PREFIX.1.trace ... PREFIX.N.trace (.json with --measure),\n"
	"               none written if any is there without --force; replay them\n"
	"               together with 'thpsim replay PREFIX.*.trace'; stops at a run\n"
	"               whose COMMAND or recorder fails, with its status\n"
	"  --measure    run COMMAND with the machine's THP settings, without tracing, and\n"
	"               write what the kernel reported for each process when it exited\n"
	"               (smaps_rollup) as JSON, to FILE.json or standard error\n"
	"  Exit status: COMMAND's (128 + N when killed by signal N), 126 or 127 when it\n"
	"  cannot be run, 125 when the recorder failed (no tracing, the trace could not\n"
	"  be written, randomisation could not be turned off, the user's ids could not be\n"
	"  taken), 2 for bad arguments, a SUDO_UID or SUDO_GID that is not a number, or an\n"
	"  existing -o file without --force.";

/* --runs: run k's file name, PREFIX.k.trace (or .json). */
static int run_name(char *buf, size_t len, const char *prefix, uint64_t k, int measure)
{
	return snprintf(buf, len, "%s.%" PRIu64 ".%s", prefix, k, measure ? "json" : "trace") >=
	       (int)len;
}

/* COMMAND n times into PREFIX.k.trace: every name checked before the
 * first run, so that a refusal leaves nothing written. */
static int record_runs(struct record_opts *base, const char *prefix, uint64_t n)
{
	char name[4096];
	struct stat st;
	int rc = 0;

	for (uint64_t k = 1; k <= n; k++) {
		if (run_name(name, sizeof(name), prefix, k, base->measure))
			return cli_usage("record: -o %s: the name is too long", prefix);
		if (!base->force && !lstat(name, &st)) {
			msg_error(0, "record: %s exists: not overwriting it (use --force to replace it); "
				  "no run made", name);
			return 2;
		}
	}
	for (uint64_t k = 1; k <= n && !rc; k++) {
		struct record_opts o = *base;

		run_name(name, sizeof(name), prefix, k, base->measure);
		o.out = name;
		rc = record_run(&o);
		cli_exit_signal = o.exit_signal;
		if (rc)
			msg_error(0, "record: run %" PRIu64 " of %" PRIu64 " ended with status %d: "
				  "no more runs", k, n, rc);
	}
	if (!rc && !base->quiet)
		fprintf(stderr, "thpsim record: %" PRIu64 " runs in %s.1.%s ... %s.%" PRIu64 ".%s%s\n",
			n, prefix, base->measure ? "json" : "trace", prefix, n,
			base->measure ? "json" : "trace",
			base->measure ? "" : " (thpsim replay them together for the spread)");
	return rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = { 0 };
	const char *out = NULL;
	uint64_t ring_mib = 64, runs = 0;
	uint64_t access_ms = 0;
	int measure = 0, quiet = 0, force = 0, no_aslr = 0, as_root = 0, callers = 0, access = 0;
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
			if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1]))
				return cli_usage("record: %s needs a value (a file name)\n%s", argv[i],
						 usage_text);
			out = argv[++i];
		} else if (!strcmp(argv[i], "--force")) {
			force = 1;
		} else if (!strcmp(argv[i], "--buffer") && i + 1 < argc) {
			if (cli_parse_u64(argv[++i], &ring_mib) || !ring_mib || ring_mib > 4096)
				return cli_usage("record: --buffer takes MiB, 1 to 4096");
		} else if (!strcmp(argv[i], "--measure")) {
			measure = 1;
		} else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
			quiet = 1;
		} else if (!strcmp(argv[i], "--no-aslr")) {
			no_aslr = 1;
		} else if (!strcmp(argv[i], "--as-root")) {
			as_root = 1;
		} else if (!strcmp(argv[i], "--callers")) {
			callers = 1;
		} else if (!strcmp(argv[i], "--access")) {
			access = 1;
		} else if (!strcmp(argv[i], "--access-ms")) {
			if (i + 1 >= argc || cli_parse_u64(argv[++i], &access_ms) ||
			    access_ms < REC_ACCESS_MS_MIN || access_ms > REC_ACCESS_MS_MAX)
				return cli_usage("record: --access-ms takes milliseconds, %d to %d (the "
						 "aggregation interval of DAMON's access samples)",
						 REC_ACCESS_MS_MIN, REC_ACCESS_MS_MAX);
			access = 1;
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			if (cli_parse_u64(argv[++i], &runs) || !runs || runs > 100)
				return cli_usage("record: --runs takes a count, 1 to 100");
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts(usage_text);
			return 0;
		} else if (argv[i][0] == '-') {
			return cli_bad_option("record", argv[i], usage_text);
		} else {
			break;
		}
	}
	if (i >= argc)
		return cli_usage("record: no COMMAND to run\n%s", usage_text);
	if (!out && !measure)
		return cli_usage("record: -o TRACE is required\n%s", usage_text);
	if (runs && !out)
		return cli_usage("record: --runs needs -o PREFIX\n%s", usage_text);

	o.out = out;
	o.ring_mib = (size_t)ring_mib;
	o.measure = measure;
	o.quiet = quiet;
	o.force = force;
	o.no_aslr = no_aslr;
	o.as_root = as_root;
	o.callers = callers;
	o.access = access;
	o.access_ms = (unsigned)access_ms;
	o.argv = argv + i;
	if (runs)
		return record_runs(&o, out, runs);
	rc = record_run(&o);
	/* a program killed by a signal: main() dies by it too */
	cli_exit_signal = o.exit_signal;
	return rc;
}
