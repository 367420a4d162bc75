/*
 * cli.h - what the subcommands of the thpsim command share: argument
 * helpers, error printing and the subcommand entry points.
 */
#ifndef THPSIM_CLI_H
#define THPSIM_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "thpsim.h"
#include "util/knobs.h"
#include "util/sysfile.h" /* msg_error: the one-line "thpsim: ..." error */

/* --set KNOB=VALUE arguments, applied to every machine a command makes, are
 * a struct knob_sets (util/knobs.h), which the scenario library takes too. */

/* A command that ran a program killed by a signal sets this; main() then
 * dies by the same signal, so a shell sees what the program did. */
extern int cli_exit_signal;

/* Print a usage message and return 2 (the exit code for bad arguments). */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_parse_u64(const char *s, uint64_t *out);
/* Sizes with an optional K, M or G suffix (powers of 1024). */
int cli_parse_size(const char *s, uint64_t *out);
/* "text" or "json": sets *json; prints the error itself. */
int cli_parse_format(const char *s, int *json);
/* KNOB=VALUE; KNOB may leave out transparent_hugepage/ (enabled=always);
 * an unknown knob is a usage error (2). */
int cli_add_set(struct knob_sets *sets, const char *arg);
/* The full name of a knob given as is or without its transparent_hugepage/,
 * .../khugepaged/ or thpsim/ prefix, in buf; NULL when none. */
const char *cli_resolve_knob(const char *name, char *buf, size_t len);
/* An argument a command does not take: "CMD: OPT needs a value" for an
 * option that takes one and has none, else unknown; usage follows.  2. */
int cli_bad_option(const char *cmd, const char *arg, const char *usage);
/* -h or --help before any "--". */
int cli_wants_help(int argc, char **argv);
/* Apply the sets to m; prints the error and returns it on failure.
 * "thpsim/kernel=auto" applies the running kernel's detected profile. */
int cli_apply_sets(thps_machine *m, const struct knob_sets *sets);

struct json;
struct scenario;
struct scn_result;
struct kprofile;
/* One scenario run as a JSON object (run, kernel and validate share it). */
void scn_result_json(struct json *j, const struct scenario *s, const struct scn_result *r,
		     const char *where);

/* thpsim ARGS as main() runs it (commands.c): the exit status. */
int thpsim_main(int argc, char **argv);

int cmd_demo(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_kernel(int argc, char **argv);
int cmd_validate(int argc, char **argv);
/* One scenario judged as validate judges it: the model under prof against
 * the kernel side, which run_kernel runs (scenario_run_kernel; a test may
 * give a kernel of its own), again while a difference may be noise.  Sets
 * *result ("match", "diff", "fail", "error", "skipped", a constant) and
 * reason; returns the kernel runs taken, -1 when out of memory. */
typedef int (*validate_kernel_runner)(const struct scenario *s, const struct kprofile *prof,
				      struct scn_result *r);
int validate_judge(const struct scenario *s, const struct kprofile *prof,
		   validate_kernel_runner run_kernel, const char **result, char *reason,
		   size_t len);
int cmd_bench(int argc, char **argv);
int cmd_knobs(int argc, char **argv);
int cmd_kernel_profile(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_sweep(int argc, char **argv);

#endif
