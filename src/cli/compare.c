/*
 * compare.c - "thpsim compare TRACE": one recorded program under several THP
 * policies, side by side.
 *
 * Each policy is a full replay on its own simulated machine (the replays
 * run on parallel threads: machines share nothing).  The default policies
 * answer the usual question: THP never; madvise, as the program asked;
 * always; and always without the huge zero page (the kernel before 3.8).
 * Each starts from the recording machine's settings, then --set, then its
 * own knobs.  The totals are the machine's (meminfo AnonPages and
 * AnonHugePages, peak and final): for a program of several processes a
 * sum of their Rss counts a page shared after fork once per process, and
 * a sum of figures each taken at its own exit is no moment's figure.
 * Extra memory is peak AnonPages against the first policy (THP never by
 * default).  --svg draws them over time, one line per policy.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "replay/replay.h"
#include "replay_out.h"
#include "util/json.h"
#include "util/outfile.h"

#define MAX_POLICIES 16

struct policy {
	char name[64];
	char spec[512];                  /* knob=value,... as given */
	char buf[512];                   /* split copy of spec */
	struct replay_opts o;
	struct replay_result res;
	const char *path;
	char err[1024];
	int rc;
};

static const char *const default_policies[][2] = {
	{ "never", "enabled=never" },
	{ "madvise", "enabled=madvise" },
	{ "always", "enabled=always,use_zero_page=1" },
	{ "always-no-hzp", "enabled=always,use_zero_page=0" },
};

static const char usage_text[] =
	"usage: thpsim compare TRACE [--policy NAME=KNOB=VALUE[,KNOB=VALUE]...]... [--svg FILE [--force]]\n"
	"                      [--set KNOB=VALUE]... [--format text|json] [--ram GiB] [--quiet]\n"
	"  KNOB is a name 'thpsim knobs' lists; the transparent_hugepage/ prefix may be left out\n"
	"  (enabled=always,use_zero_page=0).  Default policies: never, madvise, always,\n"
	"  always-no-hzp.  --svg writes a chart; an existing FILE is replaced only with\n"
	"  --force (never through a symbolic link), and only once the chart is complete.";

/* A knob name as given, or with transparent_hugepage/ (or .../khugepaged/)
 * in front when that is what names a knob. */
static const char *resolve_knob(const char *name, char *buf, size_t len)
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

static char knob_names[MAX_POLICIES][REPLAY_MAX_KNOBS][96];

static int parse_policy(struct policy *p, int idx, const char *name, const char *spec,
			const struct cli_sets *sets)
{
	char *save = NULL, *tok;

	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->spec, sizeof(p->spec), "%s", spec);
	snprintf(p->buf, sizeof(p->buf), "%s", spec);
	p->o.progress = 1;
	replay_opts_add_sets(&p->o, sets);
	for (tok = strtok_r(p->buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok)
			return cli_usage("compare: policy %s: '%s' is not KNOB=VALUE", name, tok);
		*eq = 0;
		if (p->o.nknobs >= REPLAY_MAX_KNOBS)
			return cli_usage("compare: policy %s: too many knobs", name);
		if (!resolve_knob(tok, knob_names[idx][p->o.nknobs], sizeof(knob_names[0][0])))
			return cli_usage("compare: policy %s: no knob '%s' (thpsim knobs lists them)",
					 name, tok);
		p->o.knob_name[p->o.nknobs] = knob_names[idx][p->o.nknobs];
		p->o.knob_value[p->o.nknobs] = eq + 1;
		p->o.nknobs++;
	}
	p->o.label = p->name;
	return 0;
}

static void *run_policy(void *arg)
{
	struct policy *p = arg;

	p->rc = replay_run(p->path, &p->o, &p->res, p->err, sizeof(p->err));
	return NULL;
}

/* ---- the SVG ---- */

/* A round tick step (1, 2 or 5 times a power of ten) for about n ticks. */
static double nice_step(double max, int n)
{
	double raw = max / n, p = 1;

	while (p * 10 <= raw)
		p *= 10;
	while (p > raw)
		p /= 10;
	return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

static void svg(FILE *f, const char *path, struct policy *pol, int n)
{
	static const char *const colors[] = { "#1b9e77", "#d95f02", "#7570b3", "#e7298a",
					      "#66a61e", "#e6ab02", "#a6761d", "#666666" };
	const int W = 860, H = 460, L = 80, R = 190, T = 50, B = 60;
	double tmax = 0, ymax = 0, ystep, xstep;

	for (int k = 0; k < n; k++)
		for (int i = 0; i < pol[k].res.overall.n; i++) {
			const struct replay_point *pt = &pol[k].res.overall.p[i];

			if ((double)pt->t_ns * 1e-9 > tmax)
				tmax = (double)pt->t_ns * 1e-9;
			if ((double)pt->rss_kb / 1024.0 > ymax)
				ymax = (double)pt->rss_kb / 1024.0;
		}
	if (tmax <= 0)
		tmax = 1e-3;
	if (ymax <= 0)
		ymax = 1;
	ystep = nice_step(ymax, 5);
	xstep = nice_step(tmax, 6);
	ymax = ystep * (double)(long)(ymax / ystep + 1);
	tmax = xstep * (double)(long)(tmax / xstep + 0.999);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
		W, H, W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\">Rss over time: ", L);
	for (const char *c = pol[0].res.command[0] ? pol[0].res.command : path; *c; c++)
		switch (*c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		default: fputc(*c, f);
		}
	fprintf(f, "</text>\n");
	/* axes and grid, at round values */
	for (double v = 0; v <= ymax * 1.0001; v += ystep) {
		double y = T + (H - T - B) * (1.0 - v / ymax);

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L,
			y, W - R, y);
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 6,
			y + 4, v);
	}
	for (double v = 0; v <= tmax * 1.0001; v += xstep)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
			L + (W - L - R) * (v / tmax), H - B + 18, v);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, T, L,
		H - B);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", L, H - B,
		W - R, H - B);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time of the recorded run (s)"
		   "</text>\n", (L + W - R) / 2, H - 18);
	fprintf(f, "<text x=\"18\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 18 %d)\">"
		   "Rss, all processes (MiB)</text>\n", (T + H - B) / 2, (T + H - B) / 2);
	for (int k = 0; k < n; k++) {
		const struct replay_series *s = &pol[k].res.overall;
		const char *col = colors[k % 8];

		/* earlier lines wider, so that lines on top of each other all show */
		fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s "
			   "stroke-linejoin=\"round\" points=\"", col, 2.0 + 2.0 * (n - 1 - k),
			k % 2 ? " stroke-dasharray=\"8 4\"" : "");
		for (int i = 0; i < s->n; i++)
			fprintf(f, "%.1f,%.1f ",
				L + (W - L - R) * ((double)s->p[i].t_ns * 1e-9 / tmax),
				T + (H - T - B) * (1.0 - ((double)s->p[i].rss_kb / 1024.0) / ymax));
		fprintf(f, "\"/>\n");
		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			   "stroke-width=\"3\"/>\n", W - R + 14, T + 10 + 22 * k, W - R + 40,
			T + 10 + 22 * k, col);
		fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", W - R + 46, T + 14 + 22 * k,
			pol[k].name);
	}
	fprintf(f, "</svg>\n");
}

/* The machine-wide figures of one policy (meminfo over the whole run). */
static uint64_t peak_anon(const struct replay_result *r)
{
	return r->peak_anon_pages_kb;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_text(const char *path, struct policy *pol, int n)
{
	uint64_t base = peak_anon(&pol[0].res);

	printf("thpsim compare %s\n  recorded: %s (Linux %s)\n\n", path, pol[0].res.command,
	       pol[0].res.kernel);
	if (pol[0].res.partial) {
		replay_print_partial(stdout, &pol[0].res);
		printf("\n");
	}
	printf("%-16s %14s %14s %14s %14s %10s %8s %12s %7s %7s\n", "policy", "peak Anon kB",
	       "final Anon kB", "peak AHP kB", "final AHP kB", "faults", "THPs", "extra kB",
	       "extra", "huge");
	for (int k = 0; k < n; k++) {
		const struct replay_result *r = &pol[k].res;
		uint64_t peak = peak_anon(r);
		int64_t extra = (int64_t)peak - (int64_t)base;

		printf("%-16.16s %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %10" PRIu64
		       " %8" PRIu64 " %12" PRId64 " %6.1f%% %6.1f%%\n",
		       pol[k].name, peak, r->final_meminfo[THPS_MEM_AnonPages],
		       r->peak_meminfo_huge_kb, r->final_meminfo[THPS_MEM_AnonHugePages],
		       r->vm[THPS_VM_pgfault], r->vm[THPS_VM_thp_fault_alloc], extra,
		       base ? 100.0 * (double)extra / (double)base : 0.0,
		       share(r->peak_meminfo_huge_kb, peak));
	}
	printf("\npolicies (over the recording machine's settings):\n");
	for (int k = 0; k < n; k++)
		printf("  %-16s %s\n", pol[k].name, pol[k].spec);
	printf("Anon: the machine's meminfo AnonPages, the program's anonymous memory with each "
	       "page counted\nonce however many processes map it (copy-on-write after fork); "
	       "AHP: meminfo AnonHugePages.\npeak: the highest at any sample or exit; final: "
	       "when the last process alive ended (or\nat the end of the trace); faults: "
	       "pgfault; THPs: thp_fault_alloc; extra: peak Anon against\n%s; huge: peak AHP / "
	       "peak Anon.  Per-process figures: thpsim replay.\n\n", pol[0].name);
	replay_print_skips(stdout, &pol[0].res);
}

static void print_json(const char *path, struct policy *pol, int n)
{
	uint64_t base = peak_anon(&pol[0].res);
	struct json j;

	json_init(&j, stdout, 1);
	json_begin_object(&j, NULL);
	json_string(&j, "trace", path);
	json_string(&j, "baseline", pol[0].name);
	json_bool(&j, "partial", pol[0].res.partial);
	json_begin_array(&j, "policies");
	for (int k = 0; k < n; k++) {
		const struct replay_result *r = &pol[k].res;
		uint64_t peak = peak_anon(r);
		int64_t extra = (int64_t)peak - (int64_t)base;

		json_begin_object(&j, NULL);
		json_string(&j, "name", pol[k].name);
		json_string(&j, "policy", pol[k].spec);
		json_begin_object(&j, "peak");
		json_uint(&j, "AnonPages", peak);
		json_uint(&j, "AnonHugePages", r->peak_meminfo_huge_kb);
		json_end_object(&j);
		json_begin_object(&j, "final");
		json_uint(&j, "AnonPages", r->final_meminfo[THPS_MEM_AnonPages]);
		json_uint(&j, "AnonHugePages", r->final_meminfo[THPS_MEM_AnonHugePages]);
		json_uint(&j, "Pss_sum", r->final_pss_sum_kb);
		json_end_object(&j);
		json_uint(&j, "pgfault", r->vm[THPS_VM_pgfault]);
		json_uint(&j, "thp_fault_alloc", r->vm[THPS_VM_thp_fault_alloc]);
		json_int(&j, "extra_kB", extra);
		json_double(&j, "extra_pct", base ? 100.0 * (double)extra / (double)base : 0.0);
		json_double(&j, "huge_share_pct", share(r->peak_meminfo_huge_kb, peak));
		json_begin_object(&j, "replay");
		replay_json_result(&j, r, 1);
		json_end_object(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

int cmd_compare(int argc, char **argv)
{
	static struct policy pol[MAX_POLICIES];
	struct cli_sets sets = { 0 };
	struct replay_opts common = { .progress = 1 };
	const char *path = NULL, *svg_path = NULL, *specs[MAX_POLICIES][2];
	char namebuf[MAX_POLICIES][64];
	int json = 0, n = 0, failed = 0, force = 0, err;
	struct outfile of = { 0 };
	char why[8192];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t ram_gib = 0;

	for (int i = 1; i < argc; i++) {
		int c = replay_parse_common(argc, argv, &i, &sets, &common, &ram_gib);

		if (c > 0)
			return c;
		if (c == 0)
			continue;
		if (!strcmp(argv[i], "--policy") && i + 1 < argc) {
			const char *arg = argv[++i], *eq = strchr(arg, '=');

			if (!eq || eq == arg || !strchr(eq + 1, '='))
				return cli_usage("compare: --policy takes NAME=KNOB=VALUE[,...], not "
						 "'%s'", arg);
			if (n >= MAX_POLICIES)
				return cli_usage("compare: at most %d policies", MAX_POLICIES);
			snprintf(namebuf[n], sizeof(namebuf[n]), "%.*s", (int)(eq - arg), arg);
			specs[n][0] = namebuf[n];
			specs[n][1] = eq + 1;
			n++;
		} else if (!strcmp(argv[i], "--svg") && i + 1 < argc) {
			svg_path = argv[++i];
		} else if (!strcmp(argv[i], "--force")) {
			force = 1;
		} else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (cli_parse_format(argv[++i], &json))
				return 2;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts(usage_text);
			return 0;
		} else if (argv[i][0] == '-') {
			return cli_usage("compare: unknown option '%s'\n%s", argv[i], usage_text);
		} else if (!path) {
			path = argv[i];
		} else {
			return cli_usage("compare: one TRACE at a time\n%s", usage_text);
		}
	}
	if (!path)
		return cli_usage("compare: no TRACE\n%s", usage_text);
	if (!n)
		for (; n < (int)(sizeof(default_policies) / sizeof(default_policies[0])); n++) {
			specs[n][0] = default_policies[n][0];
			specs[n][1] = default_policies[n][1];
		}
	for (int k = 0; k < n; k++) {
		memset(&pol[k], 0, sizeof(pol[k]));
		if (parse_policy(&pol[k], k, specs[k][0], specs[k][1], &sets))
			return 2;
		pol[k].o.ram_bytes = common.ram_bytes;
		pol[k].o.progress = common.progress;
		pol[k].path = path;
	}
	/* the chart's file before the work: an existing one is refused now */
	if (svg_path && (err = outfile_open(&of, svg_path, force, why, sizeof(why)))) {
		cli_error(0, "compare: %s", why);
		return err == -EEXIST || err == -ELOOP || err == -EISDIR ? 2 : 1;
	}
	/* run them, at most one per CPU at a time */
	if (ncpu < 1)
		ncpu = 1;
	for (int k = 0; k < n; k += (int)ncpu) {
		pthread_t th[MAX_POLICIES];
		int started[MAX_POLICIES] = { 0 };

		for (int t = k; t < n && t < k + ncpu; t++)
			started[t] = !pthread_create(&th[t], NULL, run_policy, &pol[t]);
		for (int t = k; t < n && t < k + ncpu; t++) {
			if (started[t])
				pthread_join(th[t], NULL);
			else
				run_policy(&pol[t]);
		}
	}
	for (int k = 0; k < n; k++)
		if (pol[k].rc) {
			cli_error(0, "compare: policy %s: %s", pol[k].name, pol[k].err);
			failed = 1;
		}
	if (!failed) {
		if (json)
			print_json(path, pol, n);
		else
			print_text(path, pol, n);
		if (svg_path) {
			svg(of.f, path, pol, n);
			if (outfile_commit(&of, why, sizeof(why))) {
				cli_error(0, "compare: %s", why);
				failed = 1;
			}
		}
	}
	outfile_abort(&of); /* nothing when committed */
	if (!failed && pol[0].res.partial)
		failed = 1; /* partial figures are a finding */
	for (int k = 0; k < n; k++)
		replay_result_free(&pol[k].res);
	return failed;
}
