/*
 * run.c - "thpsim run SCENARIO" and "thpsim kernel SCENARIO": one scenario
 * in the model or on the running kernel, its expectations checked.
 *
 * Exit status: 0 when every expectation holds, 1 when one fails (each is
 * named), 2 for bad arguments or a scenario file that does not parse;
 * "kernel" also exits 0 for a scenario it has to skip, after saying why.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "util/kprofile.h"
#include "scenario/scenario.h"
#include "util/json.h"

static void print_result_text(const struct scenario *s, const struct scn_result *r, const char *where)
{
	if (r->skipped) {
		printf("%s (%s) on %s: skipped: %s\n", s->name, s->path, where, r->skip_reason);
		return;
	}
	printf("%s (%s) on %s: %s\n", s->name, s->path, where,
	       r->error ? "error" : r->failed_expects ? "FAIL" : "pass");
	for (int i = 0; i < r->nexpects; i++) {
		const struct scn_expect_result *e = &r->expects[i];
		char got[32];

		if (!e->valid)
			printf("  line %-4d %-52s %12s  not measured here\n", e->line, e->text, "-");
		else
			printf("  line %-4d %-52s %12s  %s\n", e->line, e->text,
			       scn_got_text(e, got, sizeof(got)), e->ok ? "ok" : "FAILED");
	}
	if (r->error)
		printf("  %s\n", r->error_msg);
	/* the reports: values keyed "WHAT: ENTITY.FIGURE" or "WHAT: vmstat NAME" */
	for (int i = 0; i < r->nvalues;) {
		const char *key = r->values[i].key, *colon = strstr(key, ": ");
		size_t wl = colon ? (size_t)(colon - key) : 0;

		if (!colon || (strncmp(key, "end", 3) && !strstr(key, " report"))) {
			i++;
			continue;
		}
		printf("  %.*s:\n", (int)wl, key);
		while (i < r->nvalues && !strncmp(r->values[i].key, key, wl) &&
		       r->values[i].key[wl] == ':') {
			const char *ent = r->values[i].key + wl + 2;
			const char *sep = strncmp(ent, "vmstat ", 7) ? strchr(ent, '.') : ent + 6;
			size_t el = sep ? (size_t)(sep - ent) : strlen(ent);

			printf("    %-8.*s", (int)el, ent);
			while (i < r->nvalues && !strncmp(r->values[i].key, key, wl) &&
			       r->values[i].key[wl] == ':' && !strncmp(r->values[i].key + wl + 2, ent, el)) {
				const char *name = r->values[i].key + wl + 2 + el + 1;

				if (r->values[i].valid)
					printf(" %s %lld", name, (long long)r->values[i].v);
				else
					printf(" %s -", name);
				i++;
			}
			printf("\n");
		}
	}
}

void scn_result_json(struct json *j, const struct scenario *s, const struct scn_result *r,
		     const char *where)
{
	json_begin_object(j, NULL);
	json_string(j, "name", s->name);
	json_string(j, "file", s->path);
	json_string(j, "on", where);
	json_string(j, "result", r->skipped ? "skipped" : r->error ? "error"
						 : r->failed_expects ? "fail" : "pass");
	if (r->skipped)
		json_string(j, "reason", r->skip_reason);
	if (r->error)
		json_string(j, "error", r->error_msg);
	json_begin_array(j, "expects");
	for (int i = 0; i < r->nexpects; i++) {
		json_begin_object(j, NULL);
		json_int(j, "line", r->expects[i].line);
		json_string(j, "text", r->expects[i].text);
		if (r->expects[i].valid)
			json_int(j, "value", r->expects[i].got);
		else
			json_null(j, "value");
		if (r->expects[i].valid)
			json_bool(j, "ok", r->expects[i].ok);
		else
			json_null(j, "ok"); /* not measured here: neither passed nor failed */
		json_end_object(j);
	}
	json_end_array(j);
	if (r->reports_json) {
		/* reports were written as a comma-separated list of objects */
		json_begin_array(j, "reports");
		fwrite(r->reports_json, 1, r->reports_len, j->f);
		j->first[j->depth] = r->reports_len == 0;
		json_end_array(j);
	}
	json_end_object(j);
}

static int run_cmd(int argc, char **argv, int kernel)
{
	const char *cmd = kernel ? "kernel" : "run";
	struct knob_sets sets = { 0 };
	const char *path = NULL;
	struct scenario s;
	struct scn_result r;
	int json = 0, rc;
	const char *kernel_version = NULL;
	struct kprofile base;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (cli_parse_format(argv[++i], &json))
				return 2;
		} else if (!kernel && !strcmp(argv[i], "--kernel") && i + 1 < argc) {
			kernel_version = argv[++i];
		} else if (!kernel && !strcmp(argv[i], "--set") && i + 1 < argc) {
			if (cli_add_set(&sets, argv[++i]))
				return 2;
		} else if (argv[i][0] == '-' || path) {
			return cli_bad_option(cmd, argv[i], kernel ? "usage: thpsim kernel SCENARIO "
									   "[--format text|json]"
								 : "usage: thpsim run SCENARIO [--kernel "
								   "X.Y[,KNOB=VALUE]...|auto] [--set "
								   "KNOB=VALUE]... [--format text|json]");
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return cli_usage("usage: thpsim %s SCENARIO%s [--format text|json]", cmd,
				 kernel ? "" : " [--kernel X.Y[,KNOB=VALUE]...|auto] [--set KNOB=VALUE]...");
	if (kernel_version && strcmp(kernel_version, "auto") &&
	    kprofile_from_spec(&base, kernel_version))
		return cli_usage("run: --kernel takes X.Y[,KNOB=VALUE]... (3.8 or later: the "
				 "version's profile with those changes) or auto, not '%s'",
				 kernel_version);
	if (scenario_parse_file(path, &s, stderr))
		return 2;
	if (kernel)
		scenario_run_kernel(&s, kprofile_host(), &r);
	else
		scenario_run_model(&s, !kernel_version ? NULL
				   : strcmp(kernel_version, "auto") ? &base : kprofile_host(),
				   &sets, &r);
	if (json) {
		struct json j;

		json_init(&j, stdout, 1);
		scn_result_json(&j, &s, &r, kernel ? "kernel" : "model");
		json_finish(&j);
	} else {
		print_result_text(&s, &r, kernel ? "the running kernel" : "the model");
	}
	rc = r.error || r.failed_expects ? 1 : 0;
	scn_result_free(&r);
	scenario_free(&s);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	return run_cmd(argc, argv, 0);
}

int cmd_kernel(int argc, char **argv)
{
	return run_cmd(argc, argv, 1);
}
