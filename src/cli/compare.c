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
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	struct replay_opts o;
	struct replay_result res;
	const char *path;
	char err[1024];
	int rc;
};

const char *const compare_default_policies[COMPARE_NR_DEFAULT_POLICIES][2] = {
	{ "never", "enabled=never" },
	{ "madvise", "enabled=madvise" },
	{ "always", "enabled=always,use_zero_page=1" },
	{ "always-no-hzp", "enabled=always,use_zero_page=0" },
};
#define default_policies compare_default_policies

static const char usage_text[] =
	"usage: thpsim compare TRACE [--policy NAME=KNOB=VALUE[,KNOB=VALUE]...]... [--svg FILE [--force]]\n"
	"                      [--set KNOB=VALUE]... [--format text|json] [--ram GiB] [--quiet]\n"
	"                      [--settle SECONDS] [--khugepaged on|off] [--sample-ms MS]\n"
	"                      [--as-recorded] [--layouts N] [--layout-seed S] [--khugepaged-phase MS]\n"
	"                      [--memory-max SIZE] [--memory-high SIZE] [--no-limit]\n"
	"  --memory-max, --memory-high: every policy under that memory cgroup limit (thpsim\n"
	"  replay --help); the verdict then says, per policy, whether the program survives.\n"
	"  KNOB is a name 'thpsim knobs' lists; the transparent_hugepage/ prefix may be left out\n"
	"  (enabled=always,use_zero_page=0).  Default policies: never, madvise, always,\n"
	"  always-no-hzp.  --svg draws the machine's AnonPages and AnonHugePages over time,\n"
	"  one line per policy (the recorded layout's; a pale band: lowest to highest over the\n"
	"  layouts), the difference from the first shaded; below, each policy's\n"
	"  extra peak memory against its coverage at the peak, and the occupancy of the\n"
	"  2 MiB ranges (how many of their pages the program touched); an existing FILE is\n"
	"  replaced only with --force (never through a symbolic link), and only once the\n"
	"  chart is complete.  Each policy runs under --layouts N address layouts (default "
	REPLAY_XSTR(REPLAY_LAYOUTS_DEFAULT) ",\n"
	"  as thpsim replay): the table gives the recorded layout's figures, and the ranges\n"
	"  across layouts follow it.";

int policy_add_knobs(struct knob_sets *knobs, const char *cmd, const char *name,
		     const char *spec)
{
	char buf[512], *save = NULL, *tok, knob[96];

	if (strlen(spec) >= sizeof(buf))
		return cli_usage("%s: policy %s: too long", cmd, name);
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok)
			return cli_usage("%s: policy %s: '%s' is not KNOB=VALUE", cmd, name, tok);
		*eq = 0;
		if (knobs->n >= KNOB_SETS_MAX)
			return cli_usage("%s: policy %s: too many knobs", cmd, name);
		if (!cli_resolve_knob(tok, knob, sizeof(knob)))
			return cli_usage("%s: policy %s: no knob '%s' (thpsim knobs lists them)", cmd,
					 name, tok);
		if (knob_sets_add_pair(knobs, knob, eq + 1))
			return cli_usage("%s: policy %s: '%s=%s' is too long", cmd, name, knob, eq + 1);
	}
	return 0;
}

static int parse_policy(struct policy *p, const char *name, const char *spec,
			const struct knob_sets *sets)
{
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->spec, sizeof(p->spec), "%s", spec);
	p->o.progress = 1;
	replay_opts_add_sets(&p->o, sets);
	if (policy_add_knobs(&p->o.knobs, "compare", name, spec))
		return 2;
	p->o.label = p->name;
	return 0;
}

/*
 * Every policy reads the trace from the start, on its own thread: a trace
 * on standard input ("-") or a pipe is first copied to a temporary file,
 * removed at once and read as /proc/self/fd/N (each open of it has its own
 * offset), so that nothing is left behind however compare ends.  0 with
 * tmp empty when path is a regular file, 0 with tmp the name to read and
 * *keep the descriptor to close at the end, or 2 after a message.
 */
static int spool_stream(const char *path, char *tmp, size_t len, int *keep)
{
	struct stat st;
	char buf[1 << 16];
	FILE *in, *out;
	size_t n;
	int fd;

	*keep = -1;
	tmp[0] = 0;
	if (strcmp(path, "-") && (stat(path, &st) || S_ISREG(st.st_mode)))
		return 0; /* a file (or nothing: replay says so) */
	snprintf(tmp, len, "%s/thpsim-compare-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(tmp);
	if (fd < 0) {
		msg_error(-errno, "compare: a temporary copy of %s", path);
		tmp[0] = 0;
		return 2;
	}
	in = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	out = fdopen(fd, "wb");
	if (!in || !out) {
		msg_error(-errno, "compare: %s", path);
		goto fail;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in) || fflush(out) || (*keep = dup(fd)) < 0) {
		msg_error(-errno, "compare: copying %s to %s", path, tmp);
		goto fail;
	}
	fclose(out);
	if (in != stdin)
		fclose(in);
	unlink(tmp);
	snprintf(tmp, len, "/proc/self/fd/%d", *keep);
	return 0;
fail:
	if (out)
		fclose(out);
	if (in && in != stdin)
		fclose(in);
	unlink(tmp);
	tmp[0] = 0;
	return 2;
}

static void *run_policy(void *arg)
{
	struct policy *p = arg;

	/* one thread each: the policies run side by side */
	p->rc = replay_run_layouts(p->path, &p->o, 1, &p->res, p->err, sizeof(p->err));
	return NULL;
}

/* ---- the SVG ---- */

/* A round tick step (1, 2 or 5 times a power of ten) for about n ticks. */
double svg_nice_step(double max, int n)
{
	double raw = max / n, p = 1;

	while (p * 10 <= raw)
		p *= 10;
	while (p > raw)
		p /= 10;
	return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

void svg_escape(FILE *f, const char *c, size_t n)
{
	for (size_t i = 0; i < n && c[i]; i++)
		switch (c[i]) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\n': case '\t': fputc(' ', f); break;
		default:
			if ((unsigned char)c[i] >= 0x20)
				fputc(c[i], f);
		}
}

/* The title, wrapped at spaces into lines of at most SVG_TITLE_COLS
 * characters, at most SVG_TITLE_LINES of them (the last ends in "..."
 * when the text goes on).  Returns the lines written. */
#define SVG_TITLE_COLS 100
#define SVG_TITLE_LINES 4
static int svg_title(FILE *f, int x, int y, const char *text)
{
	size_t len = strlen(text), at = 0;
	int line = 0;

	while (at < len && line < SVG_TITLE_LINES) {
		size_t n = len - at, cut;

		if (n > SVG_TITLE_COLS) {
			n = SVG_TITLE_COLS;
			for (cut = n; cut > SVG_TITLE_COLS / 2; cut--)
				if (text[at + cut] == ' ')
					break;
			if (cut > SVG_TITLE_COLS / 2)
				n = cut;
		}
		fprintf(f, "<text class=\"title\" x=\"%d\" y=\"%d\" font-size=\"%d\">", x,
			y + 18 * line, line ? 13 : 15);
		if (line == SVG_TITLE_LINES - 1 && at + n < len && n > 3) {
			svg_escape(f, text + at, n - 3);
			fputs("...", f);
		} else {
			svg_escape(f, text + at, n);
		}
		fputs("</text>\n", f);
		at += n;
		while (at < len && text[at] == ' ')
			at++;
		line++;
	}
	return line;
}

/* What a policy's line looks like, in the plot and in the legend alike:
 * the colour, a dash pattern for all but the first, and widths that
 * narrow so that coinciding lines all show. */
static const char *const svg_colors[] = { "#1b9e77", "#d95f02", "#7570b3", "#e7298a",
					  "#66a61e", "#e6ab02", "#a6761d", "#666666" };
static const char *const svg_dashes[] = { "", "9 4", "2 3", "12 3 2 3" };

static void svg_stroke(FILE *f, int k, int n)
{
	fprintf(f, "stroke=\"%s\" stroke-width=\"%.1f\"", svg_colors[k % 8],
		1.5 + 1.5 * (n - 1 - k));
	if (*svg_dashes[k % 4])
		fprintf(f, " stroke-dasharray=\"%s\"", svg_dashes[k % 4]);
}

static uint64_t svg_value(const struct replay_point *pt, int huge)
{
	return huge ? pt->mem_anon_huge_kb : pt->anon_pages_kb;
}

/* The highest of vmax and series s's values. */
static double svg_series_max(const struct replay_series *s, int huge, double vmax)
{
	for (int i = 0; i < s->n; i++)
		if ((double)svg_value(&s->p[i], huge) > vmax)
			vmax = (double)svg_value(&s->p[i], huge);
	return vmax;
}

/* One panel: the machine's AnonPages (huge 0) or AnonHugePages (huge 1)
 * of every policy over time, in kB as the tables, with the area between
 * each policy and the first (never) shaded in the policy's colour. */
static void svg_panel(FILE *f, struct policy *pol, int n, int huge, double tmax, int x0, int y0,
		      int w, int h)
{
	const char *what = huge ? "AnonHugePages" : "AnonPages";
	double vmax = 0, vstep, xstep;

	for (int k = 0; k < n; k++) {
		const struct replay_ranges *g = pol[k].res.ranges;

		vmax = svg_series_max(&pol[k].res.overall, huge, vmax);
		for (int r = 1; g && g->overall && r < g->n; r++) /* the band's too */
			vmax = svg_series_max(&g->overall[r], huge, vmax);
	}
	if (vmax <= 0)
		vmax = 1024;
	vstep = svg_nice_step(vmax, 4);
	vmax = vstep * (double)(long)(vmax / vstep + 1);
	xstep = svg_nice_step(tmax, 6);
#define SX(t) (x0 + w * ((t) / tmax))
#define SY(v) (y0 + h * (1.0 - (double)(v) / vmax))
	fprintf(f, "<g class=\"panel\" data-figure=\"%s\">\n", what);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">%s (kB): "
		   "%s</text>\n", x0, y0 - 8, what,
		huge ? "anonymous memory in huge pages" : "the program's anonymous memory");
	for (double v = 0; v <= vmax * 1.0001; v += vstep) {
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n",
			x0, SY(v), x0 + w, SY(v));
		fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n", x0 - 6,
			SY(v) + 4, v);
	}
	for (double t = 0; t <= tmax * 1.0001; t += xstep)
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", SX(t),
			y0 + h + 16, t);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", x0, y0,
		x0, y0 + h);
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n", x0,
		y0 + h, x0 + w, y0 + h);
	/* each policy's band over its layouts (and khugepaged's phases): the
	 * lowest and highest of its runs at 400 moments, first, under all */
	for (int k = 0; k < n; k++) {
		const struct replay_ranges *g = pol[k].res.ranges;
		const int steps = 400;

		if (!g || g->n < 2 || !g->overall)
			continue;
		fprintf(f, "<polygon class=\"band\" data-policy=\"%s\" fill=\"%s\" "
			   "fill-opacity=\"0.12\" stroke=\"%s\" stroke-opacity=\"0.3\" "
			   "stroke-width=\"0.5\" points=\"", pol[k].name, svg_colors[k % 8],
			svg_colors[k % 8]);
		for (int d = 0; d < 2; d++)
			for (int i = 0; i <= steps; i++) {
				double t = tmax * (d ? steps - i : i) / steps;
				uint64_t lo, hi;

				replay_band_at(&pol[k].res, (uint64_t)(t * 1e9), huge, &lo, &hi);
				fprintf(f, "%.1f,%.1f ", SX(t), SY(d ? lo : hi));
			}
		fprintf(f, "\"/>\n");
	}
	/* the differences next, under the lines */
	for (int k = 1; k < n; k++) {
		const struct replay_series *s = &pol[k].res.overall, *b = &pol[0].res.overall;

		fprintf(f, "<polygon class=\"diff\" data-policy=\"%s\" fill=\"%s\" "
			   "fill-opacity=\"0.18\" stroke=\"none\" points=\"", pol[k].name,
			svg_colors[k % 8]);
		for (int i = 0; i < s->n; i++)
			fprintf(f, "%.1f,%.1f ", SX((double)s->p[i].t_ns * 1e-9),
				SY(svg_value(&s->p[i], huge)));
		for (int i = b->n; i-- > 0;)
			fprintf(f, "%.1f,%.1f ", SX((double)b->p[i].t_ns * 1e-9),
				SY(svg_value(&b->p[i], huge)));
		fprintf(f, "\"/>\n");
	}
	for (int k = 0; k < n; k++) {
		const struct replay_series *s = &pol[k].res.overall;

		fprintf(f, "<polyline class=\"line\" data-policy=\"%s\" fill=\"none\" ", pol[k].name);
		svg_stroke(f, k, n);
		fprintf(f, " stroke-linejoin=\"round\" points=\"");
		for (int i = 0; i < s->n; i++)
			fprintf(f, "%.1f,%.1f ", SX((double)s->p[i].t_ns * 1e-9),
				SY(svg_value(&s->p[i], huge)));
		fprintf(f, "\"/>\n");
	}
	fprintf(f, "</g>\n");
#undef SX
#undef SY
}

/* The third row, which reads the verdict (below). */
static void svg_cost_panel(FILE *f, struct policy *pol, int n, int x0, int y0, int w, int h);
static void svg_occupancy_panel(FILE *f, struct policy *pol, int x0, int y0, int w, int h);

static void svg(FILE *f, const char *path, struct policy *pol, int n)
{
	const int W = 900, L = 90, R = 230, PH = 210, GAP = 70;
	char title[1024];
	double tmax = 0;
	int lines, top, H, legend_end = 0;

	for (int k = 0; k < n; k++)
		for (int i = 0; i < pol[k].res.overall.n; i++)
			if ((double)pol[k].res.overall.p[i].t_ns * 1e-9 > tmax)
				tmax = (double)pol[k].res.overall.p[i].t_ns * 1e-9;
	if (tmax <= 0)
		tmax = 1e-3;
	tmax = svg_nice_step(tmax, 6) * (double)(long)(tmax / svg_nice_step(tmax, 6) + 0.999);
	snprintf(title, sizeof(title), "%s%s", pol[0].res.command[0] ? pol[0].res.command : path,
		 pol[0].res.partial ? " (PARTIAL: the trace stopped early)" : "");
	/* the title's lines decide where the panels start: measure first */
	{
		FILE *null = fopen("/dev/null", "w");

		lines = null ? svg_title(null, 0, 0, title) : 1;
		if (null)
			fclose(null);
	}
	top = 30 + 18 * lines + 20;
	H = top + 2 * PH + GAP + 60 + 50 + PH + 60;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n",
		W, H, W, H);
	fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
	svg_title(f, 20, 24, title);
	svg_panel(f, pol, n, 0, tmax, L, top, W - L - R, PH);
	svg_panel(f, pol, n, 1, tmax, L, top + PH + GAP, W - L - R, PH);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">time of the recorded run (s)"
		   "</text>\n", L + (W - L - R) / 2, top + 2 * PH + GAP + 44);
	/* the third row: what each policy costs against what it covers, and
	 * how full the program keeps its 2 MiB ranges */
	svg_cost_panel(f, pol, n, L, top + 2 * PH + GAP + 110, 300, PH);
	svg_occupancy_panel(f, pol, L + 390, top + 2 * PH + GAP + 110, W - L - 390 - 30, PH);
	/* the legend: each line as it is drawn, then the shading */
	fprintf(f, "<g class=\"legend\">\n");
	for (int k = 0, y = top + 10; k < n; k++, y += 22) {
		const char *spec = pol[k].spec;

		fprintf(f, "<line class=\"key\" data-policy=\"%s\" x1=\"%d\" y1=\"%d\" x2=\"%d\" "
			   "y2=\"%d\" ", pol[k].name, W - R + 14, y, W - R + 54, y);
		svg_stroke(f, k, n);
		fprintf(f, "/>\n<text x=\"%d\" y=\"%d\">", W - R + 60, y + 4);
		svg_escape(f, pol[k].name, strlen(pol[k].name));
		fprintf(f, "</text>\n");
		/* its knobs, one a line */
		while (*spec) {
			size_t l = strcspn(spec, ",");

			y += 12;
			fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#555\">",
				W - R + 60, y + 4);
			svg_escape(f, spec, l < 30 ? l : 30);
			fprintf(f, "</text>\n");
			spec += l + (spec[l] == ',');
		}
		legend_end = y + 22;
	}
	if (n > 1) {
		int y = legend_end;

		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"40\" height=\"12\" fill=\"#888\" "
			   "fill-opacity=\"0.3\"/>\n", W - R + 14, y - 6);
		fprintf(f, "<text x=\"%d\" y=\"%d\">shaded: the difference</text>\n", W - R + 60,
			y + 4);
		fprintf(f, "<text x=\"%d\" y=\"%d\">from %s, in each</text>\n", W - R + 60, y + 19,
			pol[0].name);
		fprintf(f, "<text x=\"%d\" y=\"%d\">policy's colour</text>\n", W - R + 60, y + 34);
		static const char *const notes[] = {
			"Lines on top of one another", "have the same values.  meminfo:",
			"all processes, each page once.", NULL, "Pale band, outlined: lowest",
			"to highest over the layouts;", "the line: the recorded one.",
		};

		for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
			if (notes[i])
				fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#555\">%s"
					   "</text>\n", W - R + 14, y + 58 + 13 * (int)i - (i > 3 ? 7 : 0),
					notes[i]);
	}
	fprintf(f, "</g>\n</svg>\n");
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

/*
 * Where the extra memory is: each kind of mapping's Anonymous at its
 * process's peak, summed over the processes (measure_mappings.c), under
 * each policy, with the difference from the first and the part in THPs.
 * A kind no policy has memory in is left out; the rows in the order of
 * the last policy's figure, the largest first.
 */
static void print_kinds(struct policy *pol, int n)
{
	struct replay_kind_sum by[MAX_POLICIES][REPLAY_NR_KIND_ROWS], rows[REPLAY_NR_KIND_ROWS];

	for (int k = 0; k < n; k++) {
		struct replay_kind_sum s[REPLAY_NR_KIND_ROWS];

		replay_kind_sums(&pol[k].res, s);
		for (int i = 0; i < REPLAY_NR_KIND_ROWS; i++)
			by[k][s[i].kind] = s[i];
	}
	replay_kind_sums(&pol[n - 1].res, rows);
	printf("\nby kind of mapping: Anonymous kB at each process's peak, summed; +extra against %s "
	       "(of it in THPs)\n%-18s", pol[0].name, "kind");
	for (int k = 0; k < n; k++)
		printf(k ? " %24.24s" : " %12.12s", pol[k].name);
	printf("\n");
	for (int i = 0; i < REPLAY_NR_KIND_ROWS; i++) {
		int kind = rows[i].kind, any = 0;

		for (int k = 0; k < n; k++)
			any |= by[k][kind].peak.anon_kb || by[k][kind].final.anon_kb;
		if (!any || kind == REPLAY_NR_MAP_KINDS) /* file copies: final only */
			continue;
		printf("%-18.18s %12" PRIu64, replay_kind_row_label(kind), by[0][kind].peak.anon_kb);
		for (int k = 1; k < n; k++) {
			char cell[64];

			snprintf(cell, sizeof(cell), "%" PRIu64 " %+" PRId64 " (%" PRIu64 ")",
				 by[k][kind].peak.anon_kb,
				 (int64_t)by[k][kind].peak.anon_kb - (int64_t)by[0][kind].peak.anon_kb,
				 by[k][kind].peak.anon_huge_kb);
			printf(" %24s", cell);
		}
		printf("\n");
	}
}

/* One policy's verdict: what it costs, what it buys, what work it does. */
struct verdict {
	int64_t extra_peak_kb, extra_final_kb;
	double cover_peak, cover_mean;    /* % of the touched memory a PMD maps */
	/* % of it in mTHP folios: all sizes ([0]) and each order's */
	double mthp_peak[REPLAY_MTHP_ORDERS], mthp_mean[REPLAY_MTHP_ORDERS];
	int mthp;                         /* any mTHP coverage */
	/* % of the accessed memory (record --access) a PMD maps; -1: the
	 * trace has no access samples */
	double access_pmd;
	uint64_t zeroed_kb, splits, collapses, fallbacks;
};

/* Of a point's (or a peak's) touched kB, those in PMD mappings (order
 * -1), in mTHP folios of every size (0) or of one order. */
static uint64_t covered_kb(uint64_t huge, const uint64_t mthp[REPLAY_MTHP_ORDERS], int order)
{
	uint64_t kb = 0;

	if (order < 0)
		return huge;
	if (order)
		return mthp[order];
	for (int i = 1; i < REPLAY_MTHP_ORDERS; i++)
		kb += mthp[i];
	return kb;
}

/* The touched memory's share in PMD mappings (order -1) or mTHP folios
 * (covered_kb's order), averaged over the trace's time (each sample
 * holds until the next). */
static double coverage_mean(const struct replay_coverage *c, int order)
{
	double sum = 0, span = 0;

	for (int i = 0; i + 1 < c->n; i++) {
		double dt = (double)(c->p[i + 1].t_ns - c->p[i].t_ns);

		if (!c->p[i].touched_kb || dt <= 0)
			continue;
		sum += dt *
		       (double)covered_kb(c->p[i].touched_huge_kb, c->p[i].touched_mthp_kb, order) /
		       (double)c->p[i].touched_kb;
		span += dt;
	}
	return span > 0 ? 100.0 * sum / span : 0.0;
}

static void verdict_of(const struct policy *pol, int k, struct verdict *v)
{
	const struct replay_result *r = &pol[k].res, *b = &pol[0].res;
	struct replay_occupancy o;

	replay_occupancy_sum(r, 1, &o);
	v->extra_peak_kb = (int64_t)peak_anon(r) - (int64_t)peak_anon(b);
	v->extra_final_kb = (int64_t)r->final_meminfo[THPS_MEM_AnonPages] -
			    (int64_t)b->final_meminfo[THPS_MEM_AnonPages];
	v->cover_peak = share(o.touched_huge_kb, o.touched_kb);
	v->cover_mean = coverage_mean(&r->coverage, -1);
	for (int order = 0; order < REPLAY_MTHP_ORDERS; order++) {
		v->mthp_peak[order] = share(covered_kb(0, o.touched_mthp_kb, order), o.touched_kb);
		v->mthp_mean[order] = coverage_mean(&r->coverage, order);
	}
	v->mthp = v->mthp_peak[0] > 0 || v->mthp_mean[0] > 0;
	v->access_pmd = replay_access_pmd_pct(r);
	v->zeroed_kb = 0;
	for (int i = 0; i < REPLAY_NR_WORK; i++)
		if (i != REPLAY_WORK_thp_collapse_alloc)
			v->zeroed_kb += r->work[i].count * r->work[i].kb_each;
	v->splits = r->work[REPLAY_WORK_thp_split_pmd].count + r->work[REPLAY_WORK_thp_split_page].count;
	v->collapses = r->work[REPLAY_WORK_thp_collapse_alloc].count;
	v->fallbacks = r->work[REPLAY_WORK_thp_fault_fallback].count;
	for (int i = REPLAY_WORK_MTHP + 1; i < REPLAY_NR_WORK; i += 2)
		v->fallbacks += r->work[i].count;
}

/* Does any policy have touched memory in mTHP folios?  Then the verdict
 * has its columns, and the orders any has in *orders. */
static int any_mthp(const struct policy *pol, int n, unsigned *orders)
{
	int any = 0;

	*orders = 0;
	for (int k = 0; k < n; k++) {
		struct verdict v;

		verdict_of(pol, k, &v);
		any |= v.mthp;
		for (int order = 1; order < REPLAY_MTHP_ORDERS; order++)
			if (v.mthp_peak[order] > 0 || v.mthp_mean[order] > 0)
				*orders |= 1U << order;
	}
	return any;
}

static void print_verdict(struct policy *pol, int n)
{
	unsigned orders;
	int mthp = any_mthp(pol, n, &orders);

	printf("\nthe verdict, per policy: cost (extra Anon against %s), benefit (of the memory the "
	       "program\ntouched, the share a PMD maps: at the peak, and over time), work (kB "
	       "allocated at faults,\nsplits of PMDs and THPs, collapses, fallbacks)\n",
	       pol[0].name);
	int access = pol[0].res.access.n > 0;

	if (mthp)
		printf("mthp: of the memory touched, the share in mTHP folios (PTE-mapped, below "
		       "the PMD size)\n");
	if (access)
		printf("accessed: of the memory the program accessed (DAMON's samples, record "
		       "--access), the share a PMD maps\n");
	printf("%-16s %12s %12s %9s %9s", "policy", "extra peak", "extra final", "cover pk",
	       "cover avg");
	if (mthp)
		printf(" %9s %9s", "mthp pk", "mthp avg");
	if (access)
		printf(" %9s", "accessed");
	printf(" %12s %8s %9s %9s\n", "zeroed kB", "splits", "collapses", "fallbacks");
	for (int k = 0; k < n; k++) {
		struct verdict v;

		verdict_of(pol, k, &v);
		printf("%-16.16s %12" PRId64 " %12" PRId64 " %8.1f%% %8.1f%%", pol[k].name,
		       v.extra_peak_kb, v.extra_final_kb, v.cover_peak, v.cover_mean);
		if (mthp)
			printf(" %8.1f%% %8.1f%%", v.mthp_peak[0], v.mthp_mean[0]);
		if (access)
			printf(" %8.1f%%", v.access_pmd < 0 ? 0.0 : v.access_pmd);
		printf(" %12" PRIu64 " %8" PRIu64 " %9" PRIu64 " %9" PRIu64 "\n", v.zeroed_kb, v.splits,
		       v.collapses, v.fallbacks);
	}
	if (!mthp)
		return;
	/* each size's share, when the policies have more than one */
	for (int order = 1; order < REPLAY_MTHP_ORDERS && (orders & (orders - 1)); order++) {
		char name[16];

		if (!(orders >> order & 1))
			continue;
		printf("  in %s folios, pk/avg:", replay_folio_size_name(order, name, sizeof(name)));
		for (int k = 0; k < n; k++) {
			struct verdict v;

			verdict_of(pol, k, &v);
			printf(" %s %.1f%%/%.1f%%", pol[k].name, v.mthp_peak[order], v.mthp_mean[order]);
		}
		printf("\n");
	}
}

/* An axis's ticks: gridlines and labels from lo to hi by step, on x
 * (vertical lines) or on y. */
static void svg_ticks(FILE *f, int on_x, double lo, double hi, double step, int x0, int y0, int w,
		      int h)
{
	for (double v = ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-6; v += step) {
		double at = on_x ? x0 + w * (v - lo) / (hi - lo) : y0 + h * (1.0 - (v - lo) / (hi - lo));

		if (fabs(v) < step * 1e-6)
			v = 0; /* no "-0" from the sums */
		if (on_x)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n"
				   "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
				at, y0, at, y0 + h, at, y0 + h + 16, v);
		else
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
				   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
				x0, at, x0 + w, at, x0 - 6, at + 4, v);
	}
	fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
		   "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n",
		x0, y0, x0, y0 + h, x0, y0 + h, x0 + w, y0 + h);
}

/* Cost against coverage: a point per policy, x its extra peak AnonPages
 * against the first (MiB), y the share of the touched memory a PMD maps
 * at the peak; with mTHP folios, a ring at PMD and mTHP together.
 * Points that coincide stack their labels. */
static void svg_cost_panel(FILE *f, struct policy *pol, int n, int x0, int y0, int w, int h)
{
	double lo = 0, hi = 0, step, x[MAX_POLICIES], y[MAX_POLICIES], ym[MAX_POLICIES];
	unsigned orders;
	int mthp = any_mthp(pol, n, &orders);

	for (int k = 0; k < n; k++) {
		struct verdict v;

		verdict_of(pol, k, &v);
		x[k] = (double)v.extra_peak_kb / 1024.0;
		y[k] = v.cover_peak;
		ym[k] = v.cover_peak + v.mthp_peak[0];
		lo = x[k] < lo ? x[k] : lo;
		hi = x[k] > hi ? x[k] : hi;
	}
	if (hi - lo <= 0)
		hi = lo + 1;
	step = svg_nice_step(hi - lo, 4);
	lo = lo < 0 ? -step * (double)(long)(-lo / step + 0.999) : 0;
	hi = step * (double)(long)(hi / step + 0.999);
	if (hi <= lo)
		hi = lo + step;
#define SX(v) (x0 + w * (((v) - lo) / (hi - lo)))
#define SY(v) (y0 + h * (1.0 - (v) / 100.0))
	fprintf(f, "<g class=\"panel\" data-figure=\"cost-coverage\">\n");
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">what each "
		   "policy costs, what it covers</text>\n", x0 - 60, y0 - 24);
	svg_ticks(f, 1, lo, hi, step, x0, y0, w, h);
	svg_ticks(f, 0, 0, 100, 25, x0, y0, w, h);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">extra peak AnonPages against ",
		x0 + w / 2, y0 + h + 34);
	svg_escape(f, pol[0].name, strlen(pol[0].name));
	fprintf(f, " (MiB)</text>\n<text transform=\"translate(%d,%d) rotate(-90)\" "
		   "text-anchor=\"middle\">touched memory a PMD maps, at peak (%%)</text>\n",
		x0 - 40, y0 + h / 2);
	for (int k = 0; k < n; k++) {
		int same = 0;

		for (int e = 0; e < k; e++)
			same += fabs(SX(x[e]) - SX(x[k])) < 6 && fabs(SY(y[e]) - SY(y[k])) < 6;
		if (mthp && ym[k] > y[k])
			fprintf(f, "<circle class=\"point-mthp\" data-policy=\"%s\" cx=\"%.1f\" "
				   "cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"%s\"/>\n",
				pol[k].name, SX(x[k]), SY(ym[k]), svg_colors[k % 8]);
		fprintf(f, "<circle class=\"point\" data-policy=\"%s\" data-extra-mib=\"%.3f\" "
			   "data-cover-pct=\"%.1f\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>\n",
			pol[k].name, x[k], y[k], SX(x[k]), SY(y[k]), svg_colors[k % 8]);
		/* the label on the side with room */
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\" font-size=\"11\"%s>",
			SX(x[k]) + (SX(x[k]) > x0 + w / 2 ? -8 : 8), SY(y[k]) - 6 + 13.0 * same,
			svg_colors[k % 8], SX(x[k]) > x0 + w / 2 ? " text-anchor=\"end\"" : "");
		svg_escape(f, pol[k].name, strlen(pol[k].name));
		fprintf(f, "</text>\n");
	}
	if (mthp)
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"#555\">rings: PMD and "
			   "mTHP folios together</text>\n", x0 + 6, y0 + 12);
	fprintf(f, "</g>\n");
#undef SX
#undef SY
}

/* The occupancy of the 2 MiB ranges: how many ranges had how many of
 * their 512 pages touched (and written), at each process's peak, summed,
 * under the first policy (what the program touches is the same under
 * every policy; only what maps it differs). */
static void svg_occupancy_panel(FILE *f, struct policy *pol, int x0, int y0, int w, int h)
{
	uint64_t bins[2][REPLAY_OCC_BUCKETS] = { { 0 } }, most = 0;
	struct replay_occupancy o;
	double vmax, step, bw = (double)w / REPLAY_OCC_BUCKETS;

	replay_occupancy_sum(&pol[0].res, 1, &o);
	for (int k = 0; k < REPLAY_NR_MAP_KINDS; k++)
		for (int wr = 0; wr < 2; wr++)
			for (int b = 0; b < REPLAY_OCC_BUCKETS; b++)
				bins[wr][b] += o.ranges[k][wr][b];
	for (int b = 0; b < REPLAY_OCC_BUCKETS; b++)
		most = bins[0][b] > most ? bins[0][b] : most;
	vmax = most ? (double)most : 1;
	step = svg_nice_step(vmax, 4);
	if (step < 1)
		step = 1;
	vmax = step * (double)(long)(vmax / step + 0.999);
	fprintf(f, "<g class=\"panel\" data-figure=\"occupancy\">\n");
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\" font-weight=\"bold\">occupancy of "
		   "the 2 MiB ranges (", x0 - 50, y0 - 24);
	svg_escape(f, pol[0].name, strlen(pol[0].name));
	fprintf(f, ")</text>\n");
	svg_ticks(f, 0, 0, vmax, step, x0, y0, w, h);
	for (int b = 0; b < REPLAY_OCC_BUCKETS; b++) {
		double bx = x0 + bw * b;

		for (int wr = 0; wr < 2; wr++) {
			double bh = h * (double)bins[wr][b] / vmax;

			fprintf(f, "<rect class=\"%s\" data-pages=\"%s\" data-count=\"%" PRIu64 "\" "
				   "x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
				wr ? "bar-written" : "bar", replay_occ_bucket_name(b), bins[wr][b],
				bx + bw * (0.1 + 0.4 * wr), y0 + h - bh, bw * 0.4, bh,
				wr ? "#d95f02" : "#1b9e77");
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\">%s"
			   "</text>\n", bx + bw / 2, y0 + h + 14, replay_occ_bucket_name(b));
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">of its 512 pages, how many the "
		   "program touched</text>\n", x0 + w / 2, y0 + h + 34);
	fprintf(f, "<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\">2 MiB "
		   "ranges</text>\n", x0 - 44, y0 + h / 2);
	/* the key, above the plot: the bars reach its top */
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#1b9e77\"/>"
		   "<text x=\"%d\" y=\"%d\" font-size=\"10\">touched</text>\n"
		   "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#d95f02\"/>"
		   "<text x=\"%d\" y=\"%d\" font-size=\"10\">written</text>\n",
		x0 + w - 120, y0 - 16, x0 + w - 106, y0 - 7, x0 + w - 60, y0 - 16, x0 + w - 46, y0 - 7);
	fprintf(f, "</g>\n");
}

/* Under a memory limit: how many of a policy's layouts had an OOM kill. */
static int killed_layouts(const struct replay_result *r, int *n)
{
	const struct replay_ranges *g = r->ranges;
	int k = 0;

	if (!g || !g->n) {
		*n = 1;
		return r->oom_kills > 0;
	}
	*n = g->n;
	for (int j = 0; j < g->n; j++)
		k += g->machine[(size_t)RANGE_oom_kills * g->n + j] > 0;
	return k;
}

/* The verdict under the memory cgroup's limit, per policy: survives (its
 * memory.peak against memory.max), or OOM-killed (who, when, how far into
 * the trace), and in how many of the layouts. */
static void print_limits(struct policy *pol, int n)
{
	const struct thps_memcg_stat *s0 = &pol[0].res.memcg;

	printf("\nunder the memory limit (");
	if (s0->max_bytes != THPS_MEMCG_NOLIMIT)
		printf("memory.max %" PRIu64 " kB", s0->max_bytes >> 10);
	if (s0->high_bytes != THPS_MEMCG_NOLIMIT)
		printf("%smemory.high %" PRIu64 " kB", s0->max_bytes != THPS_MEMCG_NOLIMIT ? ", " : "",
		       s0->high_bytes >> 10);
	printf("; from %s):\n", pol[0].res.limit_from ? pol[0].res.limit_from : "?");
	for (int k = 0; k < n; k++) {
		const struct replay_result *r = &pol[k].res;
		int layouts, killed = killed_layouts(r, &layouts);

		printf("  %-16.16s ", pol[k].name);
		if (!r->oom_kills) {
			printf("survives, memory.peak %" PRIu64 " kB", r->memcg.peak_bytes >> 10);
			if (r->memcg.max_bytes != THPS_MEMCG_NOLIMIT && r->memcg.max_bytes)
				printf(" (%.1f%% of memory.max)",
				       100.0 * (double)r->memcg.peak_bytes / (double)r->memcg.max_bytes);
		}
		for (int i = 0, first = 1; i < r->nmms; i++) {
			const struct replay_mm *mm = r->mms[i];

			if (!mm->oom_killed)
				continue;
			printf("%s%s (pid %d) OOM-killed at %.3f s (%.1f%% of the trace)",
			       first ? "" : "; ", mm->name, mm->pid, (double)mm->oom_kill_ns * 1e-9,
			       replay_kill_share(r, mm));
			first = 0;
		}
		if (layouts > 1)
			printf("; a kill in %d of %d layouts", killed, layouts);
		printf("\n  %-16s thp_fault_fallback_charge %" PRIu64 ", thp_underused_split_page %"
		       PRIu64 ", memory.events max %" PRIu64 " high %" PRIu64 "\n", "",
		       r->vm[THPS_VM_thp_fault_fallback_charge],
		       r->vm[THPS_VM_thp_underused_split_page], r->memcg.events[THPS_MEMCG_max],
		       r->memcg.events[THPS_MEMCG_high]);
	}
}

/* The THP work each policy cost (measure_work.c): the rows any policy
 * has, each a count and, where an event allocates, the kB. */
static void print_work(struct policy *pol, int n)
{
	char name[48];
	int any = 0;

	for (int i = 0; i < REPLAY_NR_WORK; i++) {
		int some = 0;

		for (int k = 0; k < n; k++)
			some |= pol[k].res.work[i].count != 0;
		if (!some)
			continue;
		if (!any++) {
			printf("\nthe THP work, per policy: count (kB allocated)\n%-28s", "");
			for (int k = 0; k < n; k++)
				printf(" %18.18s", pol[k].name);
			printf("\n");
		}
		printf("%-28.28s", replay_work_name(i, name, sizeof(name)));
		for (int k = 0; k < n; k++) {
			const struct replay_work *w = &pol[k].res.work[i];
			char cell[48];

			if (w->kb_each && w->count)
				snprintf(cell, sizeof(cell), "%" PRIu64 " (%" PRIu64 ")", w->count,
					 w->count * w->kb_each);
			else
				snprintf(cell, sizeof(cell), "%" PRIu64, w->count);
			printf(" %18s", cell);
		}
		printf("\n");
	}
}

/* ---- across layouts ---- */

/* Replay j's machine figure f of a policy (its own one, where it ran one
 * layout). */
static uint64_t layout_value(const struct replay_result *r, int f, int j)
{
	const struct replay_ranges *g = r->ranges;

	if (!g)
		return f == RANGE_peak_AnonPages ? peak_anon(r) : 0;
	return g->machine[(size_t)f * g->n + (j < g->n ? j : 0)];
}

/* Policy k's extra peak AnonPages against the baseline's, replay by
 * replay: the same layout (the baseline's own where it ran one). */
static int64_t layout_extra(const struct policy *pol, int k, int j)
{
	const struct replay_ranges *g = pol[k].res.ranges, *b = pol[0].res.ranges;
	int layout = g ? j / g->phases : 0;
	int jb = b && b->n > 1 && layout < b->layouts ? layout * b->phases : 0;

	return (int64_t)layout_value(&pol[k].res, RANGE_peak_AnonPages, j) -
	       (int64_t)layout_value(&pol[0].res, RANGE_peak_AnonPages, jb);
}

/* Policy k's extra, lowest, weighted median and highest (shifted by
 * INT64_MIN's half so that the unsigned spread orders them). */
static void extra_spread(const struct policy *pol, int k, int64_t out[3])
{
	const struct replay_ranges *g = pol[k].res.ranges;
	int n = g ? g->n : 1;
	uint64_t *v = malloc((size_t)n * sizeof(*v)), s[3];
	const uint64_t off = 1ULL << 62;

	if (!v) {
		out[0] = out[1] = out[2] = layout_extra(pol, k, 0);
		return;
	}
	for (int j = 0; j < n; j++)
		v[j] = (uint64_t)(layout_extra(pol, k, j) + (int64_t)off);
	replay_spread_weighted(v, g ? g->weight : NULL, n, s);
	for (int i = 0; i < 3; i++)
		out[i] = (int64_t)(s[i] - off);
	free(v);
}

static void machine_spread(const struct replay_result *r, int f, uint64_t out[3])
{
	const struct replay_ranges *g = r->ranges;

	if (!g) {
		out[0] = out[1] = out[2] = layout_value(r, f, 0);
		return;
	}
	replay_spread_weighted(g->machine + (size_t)f * g->n, g->weight, g->n, out);
}

static void print_ranges(struct policy *pol, int n)
{
	static const struct {
		int f;
		const char *label;
	} cols[] = {
		{ RANGE_peak_AnonPages, "peak Anon kB" },
		{ RANGE_final_AnonPages, "final Anon kB" },
		{ RANGE_final_AnonHugePages, "final AHP kB" },
	};
	int any = 0;

	for (int k = 0; k < n; k++)
		any |= pol[k].res.ranges && pol[k].res.ranges->n > 1;
	if (!any) {
		printf("\naddress layouts: the figures cannot depend on them here (%s)\n",
		       pol[0].res.ranges && pol[0].res.ranges->fixed[0] ? pol[0].res.ranges->fixed
									: "--layouts 1");
		return;
	}
	printf("\nacross address layouts (thpsim replay --layouts): lowest..highest, median\n"
	       "%-16s %8s", "policy", "replays");
	for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++)
		printf(" %27s", cols[c].label);
	printf(" %27s\n", "extra kB");
	for (int k = 0; k < n; k++) {
		const struct replay_ranges *g = pol[k].res.ranges;
		char buf[64];
		int64_t e[3];

		printf("%-16.16s %8d", pol[k].name, g ? g->n : 1);
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			uint64_t s[3];

			machine_spread(&pol[k].res, cols[c].f, s);
			snprintf(buf, sizeof(buf), "%" PRIu64 "..%" PRIu64 ", %" PRIu64, s[0], s[2], s[1]);
			printf(" %27s", buf);
		}
		extra_spread(pol, k, e);
		snprintf(buf, sizeof(buf), "%" PRId64 "..%" PRId64 ", %" PRId64, e[0], e[2], e[1]);
		printf(" %27s\n", buf);
	}
	for (int k = 0; k < n; k++)
		if (pol[k].res.ranges && pol[k].res.ranges->fixed[0])
			printf("  %s: one layout: %s\n", pol[k].name, pol[k].res.ranges->fixed);
		else if (pol[k].res.ranges && pol[k].res.ranges->phases > 1)
			printf("  %s: %s\n", pol[k].name, pol[k].res.ranges->phase_why);
}

static void json_ranges(struct json *j, struct policy *pol, int k)
{
	static const struct {
		int f;
		const char *key;
	} rows[] = {
		{ RANGE_peak_AnonPages, "peak_AnonPages" },
		{ RANGE_peak_AnonHugePages, "peak_AnonHugePages" },
		{ RANGE_final_AnonPages, "final_AnonPages" },
		{ RANGE_final_AnonHugePages, "final_AnonHugePages" },
	};
	int64_t e[3];

	json_begin_object(j, "range");
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		uint64_t s[3];

		machine_spread(&pol[k].res, rows[r].f, s);
		json_begin_object(j, rows[r].key);
		json_uint(j, "min", s[0]);
		json_uint(j, "median", s[1]);
		json_uint(j, "max", s[2]);
		json_end_object(j);
	}
	extra_spread(pol, k, e);
	json_begin_object(j, "extra_kB");
	json_int(j, "min", e[0]);
	json_int(j, "median", e[1]);
	json_int(j, "max", e[2]);
	json_end_object(j);
	json_end_object(j);
}

static void print_text(const char *path, struct policy *pol, int n)
{
	uint64_t base = peak_anon(&pol[0].res);

	printf("thpsim compare %s\n  recorded: %s (Linux %s)\n", path, pol[0].res.command,
	       pol[0].res.kernel);
	printf("  kernel profile: ");
	for (int k = 0; k < n; k++)
		printf("%s%s Linux %s, zero_page=%s", k ? "; " : "", pol[k].name,
		       replay_knob(&pol[k].res, "thpsim/kernel"),
		       replay_knob(&pol[k].res, "thpsim/zero_page"));
	printf("\n  (the recording kernel's unless a policy sets thpsim/kernel)\n\n");
	if (pol[0].res.partial) {
		replay_print_partial(stdout, &pol[0].res);
		printf("\n");
	}
	for (int k = 0, any = 0; k < n; k++)
		if (replay_print_oom(stdout, &pol[k].res, pol[k].name) && !any++)
			printf("\n");
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
	print_ranges(pol, n);
	print_verdict(pol, n);
	if (pol[0].res.limited)
		print_limits(pol, n);
	print_kinds(pol, n);
	print_work(pol, n);
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

/* The verdict's mTHP coverage: in every size, and by size (the orders
 * any policy has). */
static void json_verdict_mthp(struct json *j, const struct verdict *v, unsigned orders)
{
	char name[16];

	json_double(j, "touched_in_mthp_at_peak_pct", v->mthp_peak[0]);
	json_double(j, "touched_in_mthp_over_time_pct", v->mthp_mean[0]);
	json_begin_object(j, "touched_in_mthp_by_size");
	for (int order = 1; order < REPLAY_MTHP_ORDERS; order++) {
		if (!(orders >> order & 1))
			continue;
		json_begin_object(j, replay_folio_size_name(order, name, sizeof(name)));
		json_double(j, "at_peak_pct", v->mthp_peak[order]);
		json_double(j, "over_time_pct", v->mthp_mean[order]);
		json_end_object(j);
	}
	json_end_object(j);
}

static void print_json(const char *path, struct policy *pol, int n)
{
	uint64_t base = peak_anon(&pol[0].res);
	unsigned orders;
	int mthp = any_mthp(pol, n, &orders);
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
		json_ranges(&j, pol, k);
		{
			struct verdict v;

			verdict_of(pol, k, &v);
			json_begin_object(&j, "verdict");
			json_int(&j, "extra_peak_kB", v.extra_peak_kb);
			json_int(&j, "extra_final_kB", v.extra_final_kb);
			json_double(&j, "touched_in_pmd_at_peak_pct", v.cover_peak);
			json_double(&j, "touched_in_pmd_over_time_pct", v.cover_mean);
			if (mthp)
				json_verdict_mthp(&j, &v, orders);
			if (v.access_pmd >= 0)
				json_double(&j, "accessed_in_pmd_pct", v.access_pmd);
			json_uint(&j, "allocated_at_faults_kB", v.zeroed_kb);
			json_uint(&j, "splits", v.splits);
			json_uint(&j, "collapses", v.collapses);
			json_uint(&j, "fallbacks", v.fallbacks);
			if (r->limited) {
				int layouts, killed = killed_layouts(r, &layouts);

				json_begin_object(&j, "limit");
				json_bool(&j, "survives", !r->oom_kills);
				json_uint(&j, "memory_peak_kB", r->memcg.peak_bytes >> 10);
				json_int(&j, "killed_layouts", killed);
				json_int(&j, "layouts", layouts);
				json_begin_array(&j, "oom_killed");
				for (int i = 0; i < r->nmms; i++) {
					const struct replay_mm *mm = r->mms[i];

					if (!mm->oom_killed)
						continue;
					json_begin_object(&j, NULL);
					json_string(&j, "name", mm->name);
					json_int(&j, "pid", mm->pid);
					json_double(&j, "t_s", (double)mm->oom_kill_ns * 1e-9);
					json_double(&j, "share_of_trace_pct", replay_kill_share(r, mm));
					json_end_object(&j);
				}
				json_end_array(&j);
				json_end_object(&j);
			}
			json_end_object(&j);
		}
		json_begin_object(&j, "replay");
		replay_json_result(&j, r, 1);
		json_end_object(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

/* What compare's command line asks for, besides each policy's knobs. */
struct compare_args {
	struct knob_sets sets;              /* --set: every policy's, under its own knobs */
	struct replay_opts common;          /* --ram, --settle, --layouts...: every policy's */
	uint64_t ram_gib;                   /* --ram, for replay_parse_common */
	const char *path;                   /* the trace ("-": standard input) */
	const char *svg_path;               /* --svg FILE, or NULL */
	const char *specs[MAX_POLICIES][2]; /* each policy's name and knobs */
	char names[MAX_POLICIES][64];       /* the --policy names specs point to */
	int n;                              /* policies in specs */
	int json, force;                    /* --format json, --force */
};

/* The command line into a: -1 to go on, else the status to exit with
 * (0 after --help, 2 after a usage message). */
static int parse_compare_args(int argc, char **argv, struct compare_args *a)
{
	for (int i = 1; i < argc; i++) {
		int c = replay_parse_common(argc, argv, &i, &a->sets, &a->common, &a->ram_gib);

		if (c > 0)
			return c;
		if (c == 0)
			continue;
		if (!strcmp(argv[i], "--policy") && i + 1 < argc) {
			const char *arg = argv[++i], *eq = strchr(arg, '=');

			if (!eq || eq == arg || !strchr(eq + 1, '='))
				return cli_usage("compare: --policy takes NAME=KNOB=VALUE[,...], not "
						 "'%s'", arg);
			if (a->n >= MAX_POLICIES)
				return cli_usage("compare: at most %d policies", MAX_POLICIES);
			snprintf(a->names[a->n], sizeof(a->names[a->n]), "%.*s", (int)(eq - arg), arg);
			a->specs[a->n][0] = a->names[a->n];
			a->specs[a->n][1] = eq + 1;
			a->n++;
		} else if (!strcmp(argv[i], "--svg") && i + 1 < argc) {
			a->svg_path = argv[++i];
		} else if (!strcmp(argv[i], "--force")) {
			a->force = 1;
		} else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (cli_parse_format(argv[++i], &a->json))
				return 2;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts(usage_text);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) { /* "-": standard input */
			return cli_bad_option("compare", argv[i], usage_text);
		} else if (!a->path) {
			a->path = argv[i];
		} else {
			return cli_usage("compare: one TRACE at a time\n%s", usage_text);
		}
	}
	if (!a->path)
		return cli_usage("compare: no TRACE\n%s", usage_text);
	return -1;
}

/* pol[0..a->n) from a's policies (the default ones when none was given),
 * each with the common options and its own knobs: 0, or 2 after a usage
 * message. */
static int make_policies(struct policy *pol, struct compare_args *a)
{
	if (!a->n)
		for (; a->n < (int)(sizeof(default_policies) / sizeof(default_policies[0])); a->n++) {
			a->specs[a->n][0] = default_policies[a->n][0];
			a->specs[a->n][1] = default_policies[a->n][1];
		}
	for (int k = 0; k < a->n; k++) {
		memset(&pol[k], 0, sizeof(pol[k]));
		struct knob_sets knobs;

		if (parse_policy(&pol[k], a->specs[k][0], a->specs[k][1], &a->sets))
			return 2;
		/* the common options (--ram, --settle, --khugepaged, --layouts...),
		 * then the policy's knobs */
		knobs = pol[k].o.knobs;
		pol[k].o = a->common;
		pol[k].o.knobs = knobs;
		pol[k].o.label = pol[k].name;
		pol[k].path = a->path; /* or the copy, once it is made */
	}
	return 0;
}

/* Every policy's replay, at most one per CPU at a time (run_policy where a
 * thread cannot be had). */
static void run_policies(struct policy *pol, int n)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

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
}

/* A failed policy's message names path, what the user gave, where it
 * names spool, the copy read in its place (spool_stream). */
static void unspool_errors(struct policy *pol, int n, const char *spool, const char *path)
{
	for (int k = 0; k < n; k++) {
		char *at = spool[0] && pol[k].rc ? strstr(pol[k].err, spool) : NULL;

		if (at) {
			char rest[sizeof(pol[k].err)];

			snprintf(rest, sizeof(rest), "%s", at + strlen(spool));
			snprintf(at, sizeof(pol[k].err) - (size_t)(at - pol[k].err), "%s%s", path,
				 rest);
		}
	}
}

/* The failed policies' messages, a trouble every policy shares said once:
 * 2 when a policy failed, else 0. */
static int report_policy_errors(const struct policy *pol, int n)
{
	int failed = 0;

	for (int k = 0; k < n; k++) {
		int said = 0;

		if (!pol[k].rc)
			continue;
		failed = 2; /* an input error: no trace there, or a bad knob value */
		for (int e = 0; e < k; e++)
			said |= pol[e].rc && !strcmp(pol[e].err, pol[k].err);
		if (said)
			continue; /* the same trouble in every policy: said once */
		for (int e = k + 1; e < n; e++)
			said |= !pol[e].rc || strcmp(pol[e].err, pol[k].err);
		if (said)
			msg_error(0, "compare: policy %s: %s", pol[k].name, pol[k].err);
		else
			msg_error(0, "compare: %s", pol[k].err);
	}
	return failed;
}

int cmd_compare(int argc, char **argv)
{
	static struct policy pol[MAX_POLICIES];
	struct compare_args a = { .common = { .progress = 1, .layout_seed = 1 } };
	const char *path;
	int failed, n, rc;
	char spool[4096];
	int spool_fd;
	struct outfile of = { 0 };
	char why[8192];

	if ((rc = parse_compare_args(argc, argv, &a)) >= 0)
		return rc;
	if (make_policies(pol, &a))
		return 2;
	path = a.path;
	n = a.n;
	/* the chart's file before the work: an existing one is refused now */
	if (a.svg_path && outfile_open(&of, a.svg_path, a.force, why, sizeof(why)))
		return msg_error(0, "compare: %s", why), 2;
	if (spool_stream(path, spool, sizeof(spool), &spool_fd)) {
		outfile_abort(&of);
		return 2;
	}
	for (int k = 0; k < n; k++)
		pol[k].path = spool[0] ? spool : path;
	run_policies(pol, n);
	/* a copied stream: its messages name what the user gave */
	unspool_errors(pol, n, spool, path);
	failed = report_policy_errors(pol, n);
	if (!failed) {
		if (a.json)
			print_json(path, pol, n);
		else
			print_text(path, pol, n);
		if (a.svg_path) {
			svg(of.f, path, pol, n);
			if (outfile_commit(&of, why, sizeof(why))) {
				msg_error(0, "compare: %s", why);
				failed = 1;
			}
		}
	}
	outfile_abort(&of); /* nothing when committed */
	if (spool_fd >= 0)
		close(spool_fd);
	if (!failed && pol[0].res.partial)
		failed = 1; /* partial figures are a finding */
	for (int k = 0; k < n && !failed; k++)
		if (pol[k].res.skips[REPLAY_SKIP_fault_oom])
			failed = 1; /* so are figures too low for want of memory */
	for (int k = 0; k < n; k++)
		replay_result_free(&pol[k].res);
	return failed;
}
