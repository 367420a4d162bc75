/*
 * validate.c - "thpsim validate SCENARIO|DIR...": each scenario in the model
 * and on the running kernel, figure by figure.
 *
 * Every named value the model's run records (each expectation, each report,
 * the end) is looked up in the kernel's run.  A scenario is:
 *   match    every value the kernel could measure is equal, every
 *            expectation holds on both sides;
 *   diff     some value differs (each one is listed with both figures);
 *   fail     the values agree but an expectation does not hold;
 *   error    a step failed;
 *   skipped  the kernel side cannot run here (the reason is given); the
 *            model's own expectations are still checked, and a failure
 *            there makes it "fail".
 * Values the kernel side cannot measure faithfully are listed as not
 * compared, with the reason (docs/divergences.md); they never pass
 * silently.  Exit status 1 on any diff, fail or error.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "util/kprofile.h"
#include "scenario/scenario.h"
#include "util/json.h"

struct diff {
	const char *key;
	int64_t model, kernel;
};

struct outcome {
	const char *result;
	char reason[512];
	int ndiffs, nnot, ncompared;
	struct diff diffs[64];
	struct {
		const char *key, *why;
	} not_compared[256];
};

/*
 * /proc/vmstat is system-wide: while a step runs, another process may
 * fault, split or queue THPs of its own (observed here with builds and
 * tests beside validate, on a kernel without the zero page: up to 70
 * extra thp_fault_alloc in one scenario).  Such noise only ever adds.  A
 * scenario whose every difference is a vmstat event the kernel counted
 * more of is run again on the kernel, up to NOISE_RETRIES times; the
 * kernel's behaviour repeats, the noise does not.
 */
#define NOISE_RETRIES 3
/* The kernel's khugepaged runs on its own: it may wake at a moment no
 * step chose (Linux wakes it at an mm's first registration, and every
 * scan_sleep_millisecs after; on a host it may scan a scenario's range
 * while the scenario runs), and a THP allocation may fail for a while on a
 * machine whose memory is fragmented.  So the kernel side of any scenario
 * that differs, or fails an expectation the model keeps, is run again, up
 * to NOISE_RETRIES times.  A difference that does not repeat is reported
 * as a match that needed more runs, with what the first run saw; one that
 * repeats every time is a diff. */

static int only_vmstat_excess(const struct outcome *o)
{
	if (strcmp(o->result, "diff") || !o->ndiffs)
		return 0;
	for (int d = 0; d < o->ndiffs; d++)
		if (!strstr(o->diffs[d].key, " vmstat ") || o->diffs[d].kernel <= o->diffs[d].model)
			return 0;
	return 1;
}

/* Worth another run of the kernel side: a difference, an expectation
 * only the kernel fails, or a step only the kernel could not do (the
 * model's own failures repeat, always).  A kernel step may fail for a
 * moment: MADV_COLLAPSE's EAGAIN, a THP allocation on fragmented memory. */
static int kernel_may_be_noise(const struct outcome *o, const struct scn_result *m,
			       const struct scn_result *k)
{
	return !strcmp(o->result, "diff") ||
	       (!strcmp(o->result, "fail") && !m->failed_expects && k->failed_expects) ||
	       (!strcmp(o->result, "error") && !m->error && k->error);
}

/* What a kernel run that did not match saw, in a line: its first
 * differences, or the first expectation it failed. */
static void describe_run(const struct outcome *o, const struct scn_result *k, char *buf,
			 size_t len)
{
	size_t at = 0;
	char got[32];

	buf[0] = '\0';
	if (k->error) {
		snprintf(buf, len, "kernel: %s", k->error_msg);
		return;
	}
	for (int d = 0; d < o->ndiffs && d < 3 && at < len; d++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s model %lld, kernel %lld",
				       d ? "; " : "", o->diffs[d].key,
				       (long long)o->diffs[d].model, (long long)o->diffs[d].kernel);
	if (o->ndiffs > 3 && at < len)
		snprintf(buf + at, len - at, "; and %d more", o->ndiffs - 3);
	if (o->ndiffs)
		return;
	for (int e = 0; e < k->nexpects; e++)
		if (!k->expects[e].ok) {
			snprintf(buf, len, "the kernel failed line %d: %s (got %s)", k->expects[e].line,
				 k->expects[e].text, scn_got_text(&k->expects[e], got, sizeof(got)));
			return;
		}
}

static const struct scn_value *find_value(const struct scn_result *r, const char *key)
{
	for (int i = 0; i < r->nvalues; i++)
		if (!strcmp(r->values[i].key, key))
			return &r->values[i];
	return NULL;
}

static void compare(const struct scn_result *m, const struct scn_result *k, struct outcome *o)
{
	memset(o, 0, sizeof(*o));
	if (m->error) {
		o->result = "error";
		snprintf(o->reason, sizeof(o->reason), "model: %s", m->error_msg);
		return;
	}
	if (k->skipped) {
		o->result = m->failed_expects ? "fail" : "skipped";
		snprintf(o->reason, sizeof(o->reason), "%s%s", k->skip_reason,
			 m->failed_expects ? " (and the model fails an expectation)" : "");
		return;
	}
	if (k->error) {
		o->result = "error";
		snprintf(o->reason, sizeof(o->reason), "kernel: %s", k->error_msg);
		return;
	}
	for (int i = 0; i < m->nvalues; i++) {
		const struct scn_value *mv = &m->values[i], *kv = find_value(k, mv->key);

		if (!kv || !kv->valid) {
			if (o->nnot < (int)(sizeof(o->not_compared) / sizeof(o->not_compared[0]))) {
				o->not_compared[o->nnot].key = mv->key;
				o->not_compared[o->nnot].why = kv ? kv->why : "not measured on the kernel";
			}
			o->nnot++;
			continue;
		}
		o->ncompared++;
		if (kv->v != mv->v) {
			if (o->ndiffs < (int)(sizeof(o->diffs) / sizeof(o->diffs[0])))
				o->diffs[o->ndiffs] = (struct diff){ mv->key, mv->v, kv->v };
			o->ndiffs++;
		}
	}
	if (o->ndiffs)
		o->result = "diff";
	else if (m->failed_expects || k->failed_expects) {
		o->result = "fail";
		snprintf(o->reason, sizeof(o->reason), "an expectation fails on %s",
			 m->failed_expects && k->failed_expects ? "both sides"
			 : m->failed_expects ? "the model" : "the kernel");
	} else
		o->result = "match";
}

/* The kernel side of one scenario against the model's result m: run by
 * run_kernel, and again while what it saw may be noise (NOISE_RETRIES
 * above).  k is the last run's result; returns the runs taken. */
static int judge(const struct scenario *s, const struct kprofile *prof,
		 validate_kernel_runner run_kernel, const struct scn_result *m, struct scn_result *k,
		 struct outcome *o)
{
	int runs = 1;

	run_kernel(s, prof, k);
	compare(m, k, o);
	if (kernel_may_be_noise(o, m, k)) {
		const char *why = only_vmstat_excess(o)
			? "other processes moved system-wide vmstat counters"
			: scenario_has_op(s, SCN_KHUGEPAGED)
			? "the kernel's khugepaged ran at a moment of its own, or other "
			  "processes moved system-wide counters"
			: "a difference that did not repeat";
		char first[320];

		describe_run(o, k, first, sizeof(first));
		while (runs <= NOISE_RETRIES && kernel_may_be_noise(o, m, k)) {
			scn_result_free(k);
			run_kernel(s, prof, k);
			compare(m, k, o);
			runs++;
			if (!strcmp(o->result, "match"))
				snprintf(o->reason, sizeof(o->reason),
					 "matched on run %d of the kernel side (%s); run 1: %s", runs,
					 why, first);
		}
	}
	return runs;
}

int validate_judge(const struct scenario *s, const struct kprofile *prof,
		   validate_kernel_runner run_kernel, const char **result, char *reason,
		   size_t len)
{
	struct scn_result m, k;
	struct outcome *o = calloc(1, sizeof(*o));
	int runs;

	if (!o)
		return -1;
	scenario_run_model(s, prof, NULL, &m);
	runs = judge(s, prof, run_kernel, &m, &k, o);
	*result = o->result;
	snprintf(reason, len, "%s", o->reason);
	scn_result_free(&m);
	scn_result_free(&k);
	free(o);
	return runs;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The scenario files an argument names: the file, or a directory's *.scn. */
static int collect(const char *arg, char ***files, int *n, int *cap)
{
	struct stat st;

	if (stat(arg, &st))
		return cli_usage("validate: cannot open '%s'", arg);
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(arg);
		struct dirent *e;
		int first = *n;

		if (!d)
			return cli_usage("validate: cannot read directory '%s'", arg);
		while ((e = readdir(d))) {
			size_t l = strlen(e->d_name);
			char *path;

			if (l < 5 || strcmp(e->d_name + l - 4, ".scn"))
				continue;
			path = malloc(strlen(arg) + l + 2);
			if (!path)
				break;
			sprintf(path, "%s/%s", arg, e->d_name);
			if (*n == *cap) {
				*cap = *cap ? *cap * 2 : 64;
				*files = realloc(*files, (size_t)*cap * sizeof(**files));
			}
			(*files)[(*n)++] = path;
		}
		closedir(d);
		qsort(*files + first, (size_t)(*n - first), sizeof(**files), cmp_str);
		return 0;
	}
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*files = realloc(*files, (size_t)*cap * sizeof(**files));
	}
	(*files)[(*n)++] = strdup(arg);
	return 0;
}

/* The results validate counts, in the order its summary gives them. */
enum { V_MATCH, V_DIFF, V_FAIL, V_ERROR, V_SKIPPED, V_NR_RESULTS };
static const char *const result_names[V_NR_RESULTS] = { "match", "diff", "fail", "error",
							"skipped" };

/* validate's output and what it has counted so far. */
struct vout {
	int json;
	struct json j;
	int counts[V_NR_RESULTS];
	int bad;                /* the exit status so far */
};

/* The options, then the scenario files the other arguments name (once the
 * options are known good).  0, or 2 after a message. */
static int parse_args(int argc, char **argv, int *json, char ***files, int *n)
{
	static const char usage[] = "usage: thpsim validate SCENARIO|DIR... [--format text|json]";
	int cap = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (cli_parse_format(argv[++i], json))
				return 2;
		} else if (argv[i][0] == '-') {
			return cli_bad_option("validate", argv[i], usage);
		}
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format"))
			i++;
		else if (collect(argv[i], files, n, &cap))
			return 2;
	}
	if (!*n)
		return cli_usage("%s", usage);
	return 0;
}

/* The kernel and the profile the model runs. */
static void print_head(struct vout *v, const struct kprofile *prof)
{
	if (v->json) {
		json_init(&v->j, stdout, 1);
		json_begin_object(&v->j, NULL);
		json_string(&v->j, "kernel", prof->release);
		json_begin_object(&v->j, "profile");
		for (int i = 0; i < prof->nitems; i++)
			json_string(&v->j, prof->item[i].knob, prof->item[i].value);
		json_end_object(&v->j);
		json_begin_array(&v->j, "scenarios");
	} else {
		printf("kernel %s: the model runs its profile,", prof->release);
		for (int i = 0; i < prof->nitems; i++)
			printf(" %s=%s", prof->item[i].knob + 7, prof->item[i].value);
		printf(" ('thpsim kernel-profile' says why)\n");
	}
}

/* A file that does not parse: counted as an error, so that the summary
 * never says "0 error" of it. */
static void print_unparsed(struct vout *v, const char *file, int out_of_memory)
{
	v->bad = 2;
	v->counts[V_ERROR]++;
	if (v->json) {
		json_begin_object(&v->j, NULL);
		json_string(&v->j, "file", file);
		json_string(&v->j, "result", "error");
		json_string(&v->j, "reason", out_of_memory ? "out of memory" : "does not parse (the "
					      "message is on standard error)");
		json_end_object(&v->j);
	} else {
		printf("%-8s %-40s does not parse (the message is above)\n", "error", file);
	}
}

/* The expectations a side failed, as JSON objects (the kernel's none
 * when it was skipped). */
static void json_failed_expectations(struct json *j, const struct scn_result *m,
				     const struct scn_result *k)
{
	json_begin_array(j, "failed_expectations");
	for (int side = 0; side < 2; side++) {
		const struct scn_result *x = side ? k : m;

		for (int e = 0; e < x->nexpects && !(side && k->skipped); e++) {
			if (x->expects[e].ok)
				continue;
			json_begin_object(j, NULL);
			json_string(j, "side", side ? "kernel" : "model");
			json_int(j, "line", x->expects[e].line);
			json_string(j, "text", x->expects[e].text);
			json_int(j, "got", x->expects[e].got);
			json_end_object(j);
		}
	}
	json_end_array(j);
}

static void print_outcome_json(struct json *j, const struct scenario *s,
			       const struct outcome *o, const struct scn_result *m,
			       const struct scn_result *k)
{
	json_begin_object(j, NULL);
	json_string(j, "name", s->name);
	json_string(j, "file", s->path);
	json_string(j, "result", o->result);
	json_string(j, "reason", o->reason);
	json_int(j, "compared", o->ncompared);
	json_begin_array(j, "diffs");
	for (int d = 0; d < o->ndiffs && d < 64; d++) {
		json_begin_object(j, NULL);
		json_string(j, "figure", o->diffs[d].key);
		json_int(j, "model", o->diffs[d].model);
		json_int(j, "kernel", o->diffs[d].kernel);
		json_end_object(j);
	}
	json_end_array(j);
	json_failed_expectations(j, m, k);
	json_begin_array(j, "not_compared");
	for (int d = 0; d < o->nnot && d < 256; d++) {
		json_begin_object(j, NULL);
		json_string(j, "figure", o->not_compared[d].key);
		json_string(j, "why", o->not_compared[d].why);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

/* One side's failed expectations, a line each. */
static void print_failed_expectations(const char *side, const struct scn_result *x)
{
	char got[32];

	for (int e = 0; e < x->nexpects; e++)
		if (!x->expects[e].ok)
			printf("         %s fails line %d: %s (got %s)\n", side, x->expects[e].line,
			       x->expects[e].text, scn_got_text(&x->expects[e], got, sizeof(got)));
}

static void print_outcome_text(const struct scenario *s, const struct outcome *o,
			       const struct scn_result *m, const struct scn_result *k)
{
	printf("%-8s %-40s %3d figures compared, %d not", o->result, s->name, o->ncompared,
	       o->nnot);
	if (o->reason[0])
		printf("\n         %s", o->reason);
	printf("\n");
	for (int d = 0; d < o->ndiffs && d < 64; d++)
		printf("         %-56s model %lld, kernel %lld\n", o->diffs[d].key,
		       (long long)o->diffs[d].model, (long long)o->diffs[d].kernel);
	if (strcmp(o->result, "match"))
		print_failed_expectations("model", m);
	if (!k->skipped && strcmp(o->result, "match"))
		print_failed_expectations("kernel", k);
}

/* One scenario file: parsed, run in the model and on the kernel, judged,
 * counted and printed. */
static void validate_file(struct vout *v, const char *file, const struct kprofile *prof)
{
	struct scenario s;
	struct scn_result m, k;
	struct outcome *o = calloc(1, sizeof(*o));

	if (!o || scenario_parse_file(file, &s, stderr)) {
		print_unparsed(v, file, !o);
		free(o);
		return;
	}
	scenario_run_model(&s, prof, NULL, &m);
	judge(&s, prof, scenario_run_kernel, &m, &k, o);
	for (int c = 0; c < V_NR_RESULTS; c++)
		v->counts[c] += !strcmp(o->result, result_names[c]);
	if (strcmp(o->result, "match") && strcmp(o->result, "skipped") && !v->bad)
		v->bad = 1;
	if (v->json)
		print_outcome_json(&v->j, &s, o, &m, &k);
	else
		print_outcome_text(&s, o, &m, &k);
	free(o);
	scn_result_free(&m);
	scn_result_free(&k);
	scenario_free(&s);
	fflush(stdout);
}

static void print_totals(struct vout *v, int n)
{
	const int *c = v->counts;

	if (v->json) {
		json_end_array(&v->j);
		json_begin_object(&v->j, "summary");
		for (int i = 0; i < V_NR_RESULTS; i++)
			json_int(&v->j, result_names[i], c[i]);
		json_end_object(&v->j);
		json_end_object(&v->j);
		json_finish(&v->j);
		return;
	}
	printf("%d scenarios: %d match, %d diff, %d fail, %d error, %d skipped\n", n, c[V_MATCH],
	       c[V_DIFF], c[V_FAIL], c[V_ERROR], c[V_SKIPPED]);
	/* match and skipped pass; the line test runners' summaries read */
	printf("validate: %d passed, %d failed\n", c[V_MATCH] + c[V_SKIPPED],
	       c[V_DIFF] + c[V_FAIL] + c[V_ERROR]);
}

int cmd_validate(int argc, char **argv)
{
	struct vout v = { 0 };
	const struct kprofile *prof;
	char **files = NULL;
	int n = 0;

	if (parse_args(argc, argv, &v.json, &files, &n))
		return 2;
	prof = kprofile_host();
	print_head(&v, prof);
	for (int f = 0; f < n; f++)
		validate_file(&v, files[f], prof);
	print_totals(&v, n);
	for (int f = 0; f < n; f++)
		free(files[f]);
	free(files);
	return v.bad;
}
