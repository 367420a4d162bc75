/*
 * sweep.c - "thpsim sweep": a fleet's traces x policies x kernel profiles
 * cut into independent jobs for the engines people already run (GNU
 * parallel, Slurm job arrays, Kubernetes Indexed Jobs), one job run by its
 * index, and the results merged into a fleet report.
 *
 *   sweep plan TRACE|DIR... [--service NAME=TRACE|DIR]... [--policy NAME=KNOBS]...
 *              [--kernel X.Y]... [--layouts N] [--memory-max SIZE] [--weights FILE] -o PLAN
 *   sweep run PLAN [--index I | --all [-j N]] [-o DIR]
 *   sweep merge PLAN [DIR] [--format text|json|csv]
 *
 * The plan is JSON lines, one job a line: its index and name, the trace
 * and its checksum (FNV-1a 64 of the bytes), the policy's name and knobs,
 * the kernel profile ("recorded": the recording kernel's), the options,
 * the service the trace is a recording of, with its number of recordings
 * and its weight (how many instances it stands for), and thpsim's version.
 * A job's result is DIR/NAME.json, written to a temporary file and renamed, so a job killed half-way leaves nothing that looks finished
 * and a job run twice writes the same file.  merge checks every result
 * against the plan (version, checksum, policy, kernel, options) and names
 * each job missing or failed; only when every job is there does it print
 * the report: per policy and kernel, the weighted totals of peak and final
 * AnonPages and AnonHugePages (a service counted as its instances times
 * the mean of its recordings), the extra against the baseline policy
 * ("never", else the first), the spread across layouts and recordings (the
 * weighted sums of each service's lowest and highest), the OOM kills under
 * a limit, and the services that cost the most.
 *
 * A job's figures are those of "thpsim compare TRACE --policy NAME=KNOBS
 * --set thpsim/kernel=X.Y --layouts N": the same replay, one policy.
 */
#include <errno.h>
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "replay/replay.h"
#include "trace/trace.h"
#include "replay_out.h"
#include "util/json.h"
#include "util/jsonread.h"
#include "util/outfile.h"

static const char usage_text[] =
	"usage: thpsim sweep plan TRACE|DIR... [--service NAME=TRACE|DIR]... [--policy NAME=KNOBS]...\n"
	"                         [--kernel X.Y]... [--layouts N] [--memory-max SIZE] [--weights FILE]\n"
	"                         -o PLAN [--force]\n"
	"       thpsim sweep run PLAN [--index I | --all [-j N] | --missing [-j N]] [-o DIR]\n"
	"       thpsim sweep merge PLAN [DIR] [--format text|json|csv] [--svg FILE [--force]]\n"
	"  plan: every (trace, kernel, policy) job, one JSON line each (a DIR gives its *.trace);\n"
	"  policies default to compare's (never, madvise, always, always-no-hzp), kernels to\n"
	"  the recording kernel's profile; --service: several recordings of one program, one\n"
	"  service (counted at the mean of its recordings, its spread over all of them);\n"
	"  --weights FILE: lines 'NAME WEIGHT', how many instances a service (or a trace\n"
	"  named alone) stands for (default 1).\n"
	"  run: job I (0-based; default $SLURM_ARRAY_TASK_ID, then $JOB_COMPLETION_INDEX, then\n"
	"  $PARALLEL_SEQ - 1), its result DIR/JOB.json (default DIR: PLAN.results); --all: every\n"
	"  job here, N at a time; --missing: the jobs without a result merge would take.\n"
	"  merge: every result checked against the plan; the fleet report, or the jobs missing\n"
	"  or failed (exit 1); --svg: the report as a chart (an existing FILE only with --force).";

#define SWEEP_MAX_POLICIES 16
#define SWEEP_MAX_KERNELS 8
#define SWEEP_FIGS 4

static const char *const fig_names[SWEEP_FIGS] = {
	"peak_AnonPages", "final_AnonPages", "peak_AnonHugePages", "final_AnonHugePages",
};
/* the same figures in the replay's ranges (ranges.c) */
static const int fig_ranges[SWEEP_FIGS] = {
	RANGE_peak_AnonPages, RANGE_final_AnonPages, RANGE_peak_AnonHugePages,
	RANGE_final_AnonHugePages,
};

struct job {
	int index;
	char name[256];
	char trace[4096];
	char checksum[17];
	char policy[64], knobs[512], kernel[16];
	int layouts;
	uint64_t memory_max;      /* bytes; THPS_MEMCG_NOLIMIT: none */
	double weight;            /* instances of the trace's service */
	char service[128];        /* what the trace is a recording of */
	int recordings;           /* of that service in the plan */
	int svc;                  /* the service's number (merge) */
	char version[32];
	int line;                 /* in the plan */
};

struct plan {
	struct job *v;
	int n;
	char path[4096];
};

/* ---- helpers ---- */

static int fnv1a_file(const char *path, char out[17])
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned char buf[1 << 16];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		for (size_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ULL;
	if (ferror(f)) {
		int e = -errno;

		fclose(f);
		return e ? e : -EIO;
	}
	fclose(f);
	snprintf(out, 17, "%016" PRIx64, h);
	return 0;
}

static void job_name_part(char *dst, size_t len, const char *src)
{
	size_t o = strlen(dst);

	for (; *src && o + 1 < len; src++)
		dst[o++] = (strchr("._-", *src) || (*src >= '0' && *src <= '9') ||
			    (*src >= 'a' && *src <= 'z') || (*src >= 'A' && *src <= 'Z'))
				   ? *src : '_';
	dst[o] = 0;
}

static int read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0, r;
	char *buf = malloc(cap + 1);

	if (!f || !buf) {
		int e = f ? -ENOMEM : -errno;

		free(buf);
		if (f)
			fclose(f);
		return e;
	}
	while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			char *b = realloc(buf, cap * 2 + 1);

			if (!b) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = b;
			cap *= 2;
		}
	}
	fclose(f);
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/* A weighted total: an integer when whole, else every digit. */
static void json_total(struct json *j, const char *key, double v)
{
	if (v == (double)(int64_t)v && v > -9e15 && v < 9e15)
		json_int(j, key, (int64_t)v);
	else
		json_exact(j, key, v);
}

/* ---- the plan ---- */

/*
 * What "sweep plan" collects: the traces, and the service each is a
 * recording of.  A trace named alone is a service of one recording, named
 * after its file; "--service NAME=PATH" (as often as wanted, a trace or a
 * DIR's *.trace) makes several recordings of one program one service, whose
 * weight is shared among them, so that the fleet counts its instances once
 * and its spread covers every recording's layouts.
 */
struct plan_in {
	char **trace;       /* ntr paths, in the order given (a DIR's sorted) */
	int *svc;           /* each trace's service */
	int ntr;
	struct service {
		char name[128];
		int named;          /* from --service (else a lone trace's) */
		int recordings;
		double weight;      /* instances of the service */
	} *sv;
	int nsv;
};

static void plan_in_free(struct plan_in *in)
{
	for (int t = 0; t < in->ntr; t++)
		free(in->trace[t]);
	free(in->trace);
	free(in->svc);
	free(in->sv);
}

/* Service NAME's index, made when new: >= 0, or -ENOMEM. */
static int service_of(struct plan_in *in, const char *name, int named)
{
	struct service *nv;

	for (int i = 0; i < in->nsv; i++)
		if (!strcmp(in->sv[i].name, name))
			return i;
	nv = realloc(in->sv, (size_t)(in->nsv + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	in->sv = nv;
	memset(&nv[in->nsv], 0, sizeof(*nv));
	snprintf(nv[in->nsv].name, sizeof(nv[in->nsv].name), "%s", name);
	nv[in->nsv].named = named;
	nv[in->nsv].weight = 1;
	return in->nsv++;
}

static int add_trace(struct plan_in *in, const char *path, int svc)
{
	char **nv = realloc(in->trace, (size_t)(in->ntr + 1) * sizeof(*nv));
	int *ns;

	if (!nv)
		return -ENOMEM;
	in->trace = nv;
	ns = realloc(in->svc, (size_t)(in->ntr + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	in->svc = ns;
	if (!(nv[in->ntr] = strdup(path)))
		return -ENOMEM;
	ns[in->ntr++] = svc;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A TRACE or a DIR's *.trace, sorted, as recordings of service svc (-1: each
 * its own): 0 or 2 after a message. */
static int collect(struct plan_in *in, const char *arg, int svc)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	char **found = NULL;
	int nf = 0, rc = 0;

	if (stat(arg, &st))
		return msg_error(-errno, "sweep plan: %s", arg), 2;
	if (!S_ISDIR(st.st_mode)) {
		found = malloc(sizeof(*found));
		if (!found || !(found[0] = strdup(arg)))
			return free(found), msg_error(-ENOMEM, "sweep plan"), 2;
		nf = 1;
	} else if (!(d = opendir(arg))) {
		return msg_error(-errno, "sweep plan: %s", arg), 2;
	} else {
		while (!rc && (e = readdir(d))) {
			size_t l = strlen(e->d_name);
			char p[4096], **nv;

			if (l <= 6 || strcmp(e->d_name + l - 6, ".trace"))
				continue;
			snprintf(p, sizeof(p), "%s/%s", arg, e->d_name);
			if (stat(p, &st) || !S_ISREG(st.st_mode))
				rc = (msg_error(-EINVAL, "sweep plan: %s is not a readable trace file", p), 2);
			else if (!(nv = realloc(found, (size_t)(nf + 1) * sizeof(*nv))) ||
				 !((found = nv)[nf] = strdup(p)))
				rc = (msg_error(-ENOMEM, "sweep plan"), 2);
			else
				nf++;
		}
		closedir(d);
		if (!rc && !nf)
			rc = cli_usage("sweep plan: %s holds no *.trace file", arg);
		if (nf > 1)
			qsort(found, (size_t)nf, sizeof(*found), cmp_str);
	}
	for (int i = 0; i < nf; i++) {
		for (int t = 0; t < in->ntr && !rc; t++)
			if (!strcmp(in->trace[t], found[i]))
				rc = cli_usage("sweep plan: %s is named twice", found[i]);
		if (!rc && add_trace(in, found[i], svc))
			rc = (msg_error(-ENOMEM, "sweep plan"), 2);
		free(found[i]);
	}
	free(found);
	return rc;
}

/* A trace's file name without ".trace", made fit for a job name. */
static void trace_base(char *base, size_t len, const char *path)
{
	const char *b = strrchr(path, '/');
	size_t l;

	base[0] = 0;
	job_name_part(base, len, b ? b + 1 : path);
	l = strlen(base);
	if (l > 6 && !strcmp(base + l - 6, ".trace"))
		base[l - 6] = 0;
}

/*
 * The services settled: each lone trace (svc -1) becomes a service named as
 * its jobs are (base[t]); a service's recordings counted, and checked to be
 * of one command (its trace headers' "command", as "replay A B C" wants).
 * 0, or 2 after a message.
 */
static int settle_services(struct plan_in *in, char (*base)[256])
{
	for (int t = 0; t < in->ntr; t++) {
		int s;

		if (in->svc[t] >= 0)
			continue;
		for (s = 0; s < in->nsv; s++)
			if (in->sv[s].named && !strcmp(in->sv[s].name, base[t]))
				return cli_usage("sweep plan: the service '%s' has the name of the trace "
						 "%s, given alone: rename the service", base[t], in->trace[t]);
		if ((s = service_of(in, base[t], 0)) < 0)
			return msg_error(s, "sweep plan"), 2;
		in->svc[t] = s;
	}
	for (int t = 0; t < in->ntr; t++)
		in->sv[in->svc[t]].recordings++;
	for (int s = 0; s < in->nsv; s++) {
		char first[512] = "";
		const char *firstpath = NULL;

		if (in->sv[s].recordings < 2)
			continue;
		for (int t = 0; t < in->ntr; t++) {
			struct trace_reader r;
			char cmd[512];
			const char *c;

			if (in->svc[t] != s)
				continue;
			if (trace_reader_open(&r, in->trace[t])) {
				fprintf(stderr, "thpsim: sweep plan: %s\n", r.err);
				trace_reader_close(&r);
				return 2;
			}
			c = trace_header_get(&r.header, "command");
			snprintf(cmd, sizeof(cmd), "%s", c ? c : "");
			trace_reader_close(&r);
			if (!firstpath) {
				firstpath = in->trace[t];
				snprintf(first, sizeof(first), "%s", cmd);
			} else if (strcmp(cmd, first)) {
				return cli_usage("sweep plan: service '%s': %s recorded '%s', %s '%s': the "
						 "recordings of a service are runs of one command",
						 in->sv[s].name, in->trace[t], cmd, firstpath, first);
			}
		}
	}
	return 0;
}

/* --weights FILE: "NAME WEIGHT" lines, NAME a service or a lone trace (as
 * given or its file name): 0, or 2 after a message naming FILE:LINE. */
static int read_weights(const char *file, struct plan_in *in)
{
	FILE *f = fopen(file, "r");
	char line[4608], word[64];
	int ln = 0, rc = 0;

	if (!f)
		return msg_error(-errno, "sweep plan: --weights %s", file), 2;
	while (!rc && fgets(line, sizeof(line), f)) {
		char name[4096], *end;
		double v;
		int found = 0;

		ln++;
		if (line[strspn(line, " \t\n")] == 0 || line[strspn(line, " \t")] == '#')
			continue;
		if (sscanf(line, "%4095s %63s", name, word) != 2) {
			rc = cli_usage("%s:%d: 'NAME WEIGHT' expected", file, ln);
			break;
		}
		v = strtod(word, &end);
		if (*end || !(v > 0) || v > 1e9) {
			rc = cli_usage("%s:%d: the weight '%s' is not a number above 0", file, ln, word);
			break;
		}
		for (int s = 0; s < in->nsv; s++)
			if (in->sv[s].named && !strcmp(in->sv[s].name, name)) {
				in->sv[s].weight = v;
				found = 1;
			}
		for (int t = 0; t < in->ntr && !rc; t++) {
			const char *b = strrchr(in->trace[t], '/');
			const struct service *sv = &in->sv[in->svc[t]];

			if (strcmp(in->trace[t], name) && strcmp(b ? b + 1 : in->trace[t], name))
				continue;
			if (sv->named)
				rc = cli_usage("%s:%d: %s is a recording of the service '%s': give the "
					       "service's weight", file, ln, name, sv->name);
			in->sv[in->svc[t]].weight = v;
			found = 1;
		}
		if (!rc && !found)
			rc = cli_usage("%s:%d: '%s' is none of the plan's services or traces", file, ln,
				       name);
	}
	fclose(f);
	return rc;
}

static int check_kernel(const char *k)
{
	thps_machine *m;
	int err;

	if (!strcmp(k, "recorded"))
		return 0;
	if (thps_machine_new(&(struct thps_config){ .ram_bytes = 64ULL << 20 }, &m))
		return -ENOMEM;
	err = thps_knob_set(m, "thpsim/kernel", k);
	thps_machine_free(m);
	return err;
}

/* What else "sweep plan" is asked for. */
struct plan_opts {
	const char *out, *weights;
	const char *pol[SWEEP_MAX_POLICIES][2];
	char polname[SWEEP_MAX_POLICIES][64];
	const char *kernels[SWEEP_MAX_KERNELS];
	int npol, nker, force;
	uint64_t layouts, memmax;
};

/* One option of "sweep plan" at argv[*i] into po or in: -1 to go on, else
 * 2 after a message. */
static int plan_arg(int argc, char **argv, int *i, struct plan_opts *po, struct plan_in *in)
{
	const char *a = argv[*i];

	if (!strcmp(a, "-o") && *i + 1 < argc) {
		po->out = argv[++*i];
	} else if (!strcmp(a, "--force")) {
		po->force = 1;
	} else if (!strcmp(a, "--weights") && *i + 1 < argc) {
		po->weights = argv[++*i];
	} else if (!strcmp(a, "--layouts") && *i + 1 < argc) {
		if (cli_parse_u64(argv[++*i], &po->layouts) || !po->layouts ||
		    po->layouts > REPLAY_LAYOUTS_MAX)
			return cli_usage("sweep plan: --layouts takes 1 to %d", REPLAY_LAYOUTS_MAX);
	} else if (!strcmp(a, "--memory-max") && *i + 1 < argc) {
		const char *v = argv[++*i];

		if (strcmp(v, "max") &&
		    (cli_parse_size(v, &po->memmax) || po->memmax == THPS_MEMCG_NOLIMIT))
			return cli_usage("sweep plan: --memory-max takes bytes (K, M, G, T) or max, "
					 "not '%s'", v);
	} else if (!strcmp(a, "--kernel") && *i + 1 < argc) {
		if (po->nker >= SWEEP_MAX_KERNELS)
			return cli_usage("sweep plan: at most %d kernels", SWEEP_MAX_KERNELS);
		if (check_kernel(argv[*i + 1]))
			return cli_usage("sweep plan: --kernel %s: no such profile (X.Y, as "
					 "thpsim/kernel takes, or 'recorded')", argv[*i + 1]);
		po->kernels[po->nker++] = argv[++*i];
	} else if (!strcmp(a, "--policy") && *i + 1 < argc) {
		const char *arg = argv[++*i], *eq = strchr(arg, '=');
		struct knob_sets ks = { 0 };

		if (!eq || eq == arg || !strchr(eq + 1, '=') || eq - arg >= 64)
			return cli_usage("sweep plan: --policy takes NAME=KNOB=VALUE[,...], not '%s'",
					 arg);
		if (po->npol >= SWEEP_MAX_POLICIES)
			return cli_usage("sweep plan: at most %d policies", SWEEP_MAX_POLICIES);
		snprintf(po->polname[po->npol], 64, "%.*s", (int)(eq - arg), arg);
		if (policy_add_knobs(&ks, "sweep plan", po->polname[po->npol], eq + 1))
			return 2;
		po->pol[po->npol][0] = po->polname[po->npol];
		po->pol[po->npol][1] = eq + 1;
		po->npol++;
	} else if (!strcmp(a, "--service") && *i + 1 < argc) {
		const char *arg = argv[++*i], *eq = strchr(arg, '=');
		char name[128];
		int s;

		if (!eq || eq == arg || !eq[1] || eq - arg >= (int)sizeof(name))
			return cli_usage("sweep plan: --service takes NAME=TRACE|DIR, not '%s'", arg);
		snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
		if ((s = service_of(in, name, 1)) < 0)
			return msg_error(s, "sweep plan"), 2;
		return collect(in, eq + 1, s) ? 2 : -1;
	} else if (a[0] == '-') {
		return cli_bad_option("sweep plan", a, usage_text);
	} else if (collect(in, a, -1)) {
		return 2;
	}
	return -1;
}

/* PLAN's lines, one a job, trace-major, into of: the number of jobs, or -1
 * after a message. */
static int write_plan(struct outfile *of, const struct plan_opts *po, const struct plan_in *in,
		      char (*base)[256])
{
	struct json j;
	int idx = 0;

	for (int t = 0; t < in->ntr; t++) {
		const struct service *sv = &in->sv[in->svc[t]];
		char sum[17];
		int err = fnv1a_file(in->trace[t], sum);

		if (err) {
			msg_error(err, "sweep plan: %s", in->trace[t]);
			return -1;
		}
		for (int k = 0; k < po->nker; k++)
			for (int p = 0; p < po->npol; p++) {
				char name[256];

				snprintf(name, sizeof(name), "%s.", base[t]);
				job_name_part(name, sizeof(name), po->pol[p][0]);
				snprintf(name + strlen(name), sizeof(name) - strlen(name), ".");
				job_name_part(name, sizeof(name), po->kernels[k]);
				json_init(&j, of->f, 0);
				json_begin_object(&j, NULL);
				json_int(&j, "index", idx++);
				json_string(&j, "job", name);
				json_string(&j, "trace", in->trace[t]);
				json_string(&j, "checksum", sum);
				json_string(&j, "policy", po->pol[p][0]);
				json_string(&j, "knobs", po->pol[p][1]);
				json_string(&j, "kernel", po->kernels[k]);
				json_int(&j, "layouts", (int64_t)po->layouts);
				if (po->memmax == THPS_MEMCG_NOLIMIT)
					json_string(&j, "memory_max", "max");
				else
					json_uint(&j, "memory_max", po->memmax);
				json_string(&j, "service", sv->name);
				json_int(&j, "recordings", sv->recordings);
				json_total(&j, "weight", sv->weight);
				json_string(&j, "version", THPS_VERSION);
				json_end_object(&j);
				json_finish(&j);
			}
	}
	return idx;
}

static int sweep_plan(int argc, char **argv)
{
	struct plan_opts po = { .layouts = REPLAY_LAYOUTS_DEFAULT, .memmax = THPS_MEMCG_NOLIMIT };
	struct plan_in in = { 0 };
	char (*base)[256] = NULL, why[8192];
	struct outfile of = { 0 };
	int rc = 2, njobs;

	for (int i = 2; i < argc; i++)
		if ((rc = plan_arg(argc, argv, &i, &po, &in)) >= 0)
			goto out;
	rc = 2;
	if (!po.out) {
		rc = cli_usage("sweep plan: no -o PLAN\n%s", usage_text);
		goto out;
	}
	if (!in.ntr) {
		rc = cli_usage("sweep plan: no TRACE or DIR\n%s", usage_text);
		goto out;
	}
	if (!po.npol)
		for (; po.npol < COMPARE_NR_DEFAULT_POLICIES; po.npol++) {
			po.pol[po.npol][0] = compare_default_policies[po.npol][0];
			po.pol[po.npol][1] = compare_default_policies[po.npol][1];
		}
	if (!po.nker)
		po.kernels[po.nker++] = "recorded";
	base = calloc((size_t)in.ntr, sizeof(*base));
	if (!base)
		goto out;
	for (int t = 0; t < in.ntr; t++) {
		trace_base(base[t], sizeof(base[t]), in.trace[t]);
		for (int u = 0; u < t; u++)
			if (!strcmp(base[u], base[t])) { /* one name in two directories */
				snprintf(base[t] + strlen(base[t]), sizeof(base[t]) - strlen(base[t]),
					 "-%d", t);
				break;
			}
	}
	if ((rc = settle_services(&in, base)) || (po.weights && (rc = read_weights(po.weights, &in))))
		goto out;
	rc = 2;
	if (outfile_open(&of, po.out, po.force, why, sizeof(why))) {
		fprintf(stderr, "thpsim: sweep plan: %s\n", why);
		goto out;
	}
	njobs = write_plan(&of, &po, &in, base);
	if (njobs < 0) {
		outfile_abort(&of);
		goto out;
	}
	if (outfile_commit(&of, why, sizeof(why))) {
		fprintf(stderr, "thpsim: sweep plan: %s\n", why);
		goto out;
	}
	fprintf(stderr, "thpsim sweep plan: %d jobs (%d traces of %d services x %d kernels x %d "
			"policies) in %s\n", njobs, in.ntr, in.nsv, po.nker, po.npol, po.out);
	rc = 0;
out:
	plan_in_free(&in);
	free(base);
	return rc;
}

/* Read PLAN: 0, or 2 after a message naming PLAN:LINE. */
static int read_plan(const char *path, struct plan *pl)
{
	char *text, *line, *save = NULL, err[256];
	size_t len;
	int ln = 0, e = read_file(path, &text, &len);

	memset(pl, 0, sizeof(*pl));
	snprintf(pl->path, sizeof(pl->path), "%s", path);
	if (e)
		return msg_error(e, "sweep: plan %s", path), 2;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct jv *v;
		struct job *jb, *nv;
		const struct jv *mm;

		ln++;
		if (!line[strspn(line, " \t\r")])
			continue;
		v = jv_parse(line, strlen(line), err, sizeof(err));
		if (!v || v->type != JV_OBJ) {
			fprintf(stderr, "thpsim: %s:%d: not a plan line: %s\n", path, ln,
				v ? "not a JSON object" : err);
			jv_free(v);
			free(text);
			return 2;
		}
		nv = realloc(pl->v, (size_t)(pl->n + 1) * sizeof(*nv));
		if (!nv) {
			jv_free(v);
			free(text);
			return msg_error(-ENOMEM, "sweep: plan %s", path), 2;
		}
		pl->v = nv;
		jb = &pl->v[pl->n];
		memset(jb, 0, sizeof(*jb));
		jb->line = ln;
		jb->index = (int)jv_num(v, "index", -1);
		snprintf(jb->name, sizeof(jb->name), "%s", jv_str(v, "job", ""));
		snprintf(jb->trace, sizeof(jb->trace), "%s", jv_str(v, "trace", ""));
		snprintf(jb->checksum, sizeof(jb->checksum), "%s", jv_str(v, "checksum", ""));
		snprintf(jb->policy, sizeof(jb->policy), "%s", jv_str(v, "policy", ""));
		snprintf(jb->knobs, sizeof(jb->knobs), "%s", jv_str(v, "knobs", ""));
		snprintf(jb->kernel, sizeof(jb->kernel), "%s", jv_str(v, "kernel", ""));
		snprintf(jb->version, sizeof(jb->version), "%s", jv_str(v, "version", ""));
		jb->layouts = (int)jv_num(v, "layouts", 0);
		jb->weight = jv_num(v, "weight", 0);
		snprintf(jb->service, sizeof(jb->service), "%s", jv_str(v, "service", jb->trace));
		jb->recordings = (int)jv_num(v, "recordings", 1);
		mm = jv_get(v, "memory_max");
		jb->memory_max = mm && mm->type == JV_NUM ? (uint64_t)mm->num : THPS_MEMCG_NOLIMIT;
		jv_free(v);
		if (jb->index != pl->n || !jb->name[0] || !jb->trace[0] || strlen(jb->checksum) != 16 ||
		    !jb->policy[0] || !jb->kernel[0] || jb->layouts < 1 || !(jb->weight > 0) ||
		    !jb->service[0] || jb->recordings < 1) {
			fprintf(stderr, "thpsim: %s:%d: a plan line needs index %d, job, trace, "
					"checksum, policy, kernel, layouts, weight, and a service with "
					"1 or more recordings\n",
				path, ln, pl->n);
			free(text);
			return 2;
		}
		pl->n++;
	}
	free(text);
	if (!pl->n)
		return cli_usage("sweep: plan %s holds no job", path);
	return 0;
}

/* A command's PLAN read, and its results directory (default PLAN.results,
 * in defdir): 0, or 2 after a message. */
static int open_plan(const char *cmd, const char *plan, struct plan *pl, const char **dir,
		     char *defdir, size_t len)
{
	int rc;

	if (!plan)
		return cli_usage("%s: no PLAN\n%s", cmd, usage_text);
	if ((rc = read_plan(plan, pl)))
		return rc;
	if (!*dir) {
		snprintf(defdir, len, "%s.results", plan);
		*dir = defdir;
	}
	return 0;
}

/* ---- running a job ---- */

static void result_path(const char *dir, const struct job *jb, char *out, size_t len)
{
	snprintf(out, len, "%s/%s.json", dir, jb->name);
}

/* One job: replay, then DIR/NAME.json, atomically.  0, or 1 after a
 * message (a failed job also leaves a result saying so). */
static int run_job(const struct plan *pl, const struct job *jb, const char *dir)
{
	struct replay_opts o = { .layout_seed = 1 };
	struct replay_result res;
	char sum[17], err[1024] = "", path[4608], why[8192];
	struct outfile of = { 0 };
	struct json j;
	int e, rc = 0;

	if (strcmp(jb->version, THPS_VERSION)) {
		fprintf(stderr, "thpsim: %s:%d: job %d (%s) was planned by thpsim %s, this is %s\n",
			pl->path, jb->line, jb->index, jb->name, jb->version, THPS_VERSION);
		return 1;
	}
	e = fnv1a_file(jb->trace, sum);
	if (e) {
		msg_error(e, "sweep run: job %d (%s): trace %s", jb->index, jb->name, jb->trace);
		return 1;
	}
	if (strcmp(sum, jb->checksum)) {
		fprintf(stderr, "thpsim: sweep run: job %d (%s): trace %s changed since the plan "
				"(checksum %s, planned %s)\n",
			jb->index, jb->name, jb->trace, sum, jb->checksum);
		return 1;
	}
	if (strcmp(jb->kernel, "recorded"))
		knob_sets_add_pair(&o.knobs, "thpsim/kernel", jb->kernel);
	if (policy_add_knobs(&o.knobs, "sweep run", jb->policy, jb->knobs))
		return 1;
	o.layouts = jb->layouts;
	if (jb->memory_max != THPS_MEMCG_NOLIMIT) {
		o.limit_set = 1;
		o.memory_max = jb->memory_max;
		o.memory_high = THPS_MEMCG_NOLIMIT;
	}
	o.label = jb->name;
	e = replay_run_layouts(jb->trace, &o, 1, &res, err, sizeof(err));
	if (mkdir(dir, 0777) && errno != EEXIST) {
		msg_error(-errno, "sweep run: %s", dir);
		replay_result_free(&res);
		return 1;
	}
	result_path(dir, jb, path, sizeof(path));
	if (outfile_open(&of, path, 1, why, sizeof(why))) {
		fprintf(stderr, "thpsim: sweep run: job %d (%s): %s\n", jb->index, jb->name, why);
		replay_result_free(&res);
		return 1;
	}
	json_init(&j, of.f, 1);
	json_begin_object(&j, NULL);
	json_string(&j, "job", jb->name);
	json_int(&j, "index", jb->index);
	json_string(&j, "version", THPS_VERSION);
	json_string(&j, "trace", jb->trace);
	json_string(&j, "checksum", jb->checksum);
	json_string(&j, "policy", jb->policy);
	json_string(&j, "knobs", jb->knobs);
	json_string(&j, "kernel", jb->kernel);
	json_int(&j, "layouts", jb->layouts);
	if (e) {
		json_string(&j, "status", "failed");
		json_string(&j, "error", err);
		fprintf(stderr, "thpsim: sweep run: job %d (%s): %s\n", jb->index, jb->name, err);
		rc = 1;
	} else {
		const uint64_t figs[SWEEP_FIGS] = {
			res.peak_anon_pages_kb, res.final_meminfo[THPS_MEM_AnonPages],
			res.peak_meminfo_huge_kb, res.final_meminfo[THPS_MEM_AnonHugePages],
		};
		const struct replay_ranges *g = res.ranges;

		json_string(&j, "status", res.partial ? "partial" : "ok");
		json_begin_object(&j, "figures");
		for (int f = 0; f < SWEEP_FIGS; f++)
			json_uint(&j, fig_names[f], figs[f]);
		json_uint(&j, "thp_fault_alloc", res.vm[THPS_VM_thp_fault_alloc]);
		json_uint(&j, "memory_peak_kB", res.memcg.peak_bytes >> 10);
		json_int(&j, "oom_kills", res.oom_kills);
		json_end_object(&j);
		/* each figure's lowest, median and highest across the layouts
		 * (the recorded one's figure alone when they cannot differ) */
		json_begin_object(&j, "ranges");
		for (int f = 0; f < SWEEP_FIGS + 1; f++) {
			int r = f < SWEEP_FIGS ? fig_ranges[f] : RANGE_oom_kills;
			uint64_t s[3] = { f < SWEEP_FIGS ? figs[f] : (uint64_t)res.oom_kills,
					  f < SWEEP_FIGS ? figs[f] : (uint64_t)res.oom_kills,
					  f < SWEEP_FIGS ? figs[f] : (uint64_t)res.oom_kills };

			if (g && g->n > 1)
				replay_spread_weighted(g->machine + (size_t)r * g->n, g->weight, g->n, s);
			json_begin_object(&j, f < SWEEP_FIGS ? fig_names[f] : "oom_kills");
			json_uint(&j, "min", s[0]);
			json_uint(&j, "median", s[1]);
			json_uint(&j, "max", s[2]);
			json_end_object(&j);
		}
		json_end_object(&j);
		json_int(&j, "replays", g ? g->n : 1);
		json_double(&j, "seconds", res.seconds + (g ? g->seconds : 0));
	}
	json_end_object(&j);
	json_finish(&j);
	if (outfile_commit(&of, why, sizeof(why))) {
		fprintf(stderr, "thpsim: sweep run: job %d (%s): %s\n", jb->index, jb->name, why);
		rc = 1;
	}
	if (!e)
		replay_result_free(&res);
	return rc;
}

struct all_ctx {
	const struct plan *pl;
	const char *dir;
	pthread_mutex_t lock;
	int next, failed, missing_only;
};

struct result;
static int load_result(const char *dir, const struct job *jb, struct result *r, char *why,
		       size_t len);

static int job_done(const char *dir, const struct job *jb);

static void *all_worker(void *arg)
{
	struct all_ctx *c = arg;

	for (;;) {
		int i;

		pthread_mutex_lock(&c->lock);
		i = c->next++;
		pthread_mutex_unlock(&c->lock);
		if (i >= c->pl->n)
			return NULL;
		if (c->missing_only && job_done(c->dir, &c->pl->v[i]))
			continue;
		if (run_job(c->pl, &c->pl->v[i], c->dir)) {
			pthread_mutex_lock(&c->lock);
			c->failed++;
			pthread_mutex_unlock(&c->lock);
		}
	}
}

/* The job index the engines give: Slurm's array task, a Kubernetes
 * Indexed Job's completion index, GNU parallel's sequence number (from 1). */
static int engine_index(long *out, const char **from)
{
	static const struct { const char *var; long base; } vars[] = {
		{ "SLURM_ARRAY_TASK_ID", 0 }, { "JOB_COMPLETION_INDEX", 0 }, { "PARALLEL_SEQ", 1 },
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i].var);
		char *end;

		if (!v || !*v)
			continue;
		errno = 0;
		*out = strtol(v, &end, 10) - vars[i].base;
		*from = vars[i].var;
		return *end || errno ? -EINVAL : 0;
	}
	return -ENOENT;
}

static int sweep_run(int argc, char **argv)
{
	const char *plan = NULL, *dir = NULL, *from = "--index";
	char defdir[4160];
	long index = -1;
	uint64_t jobs = 1;
	int all = 0, missing = 0, rc;
	struct plan pl;

	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--index") && i + 1 < argc) {
			uint64_t v;

			if (cli_parse_u64(argv[++i], &v) || v > 1000000000)
				return cli_usage("sweep run: --index takes a job number, not '%s'", argv[i]);
			index = (long)v;
		} else if (!strcmp(argv[i], "--all")) {
			all = 1;
		} else if (!strcmp(argv[i], "--missing")) {
			all = missing = 1;
		} else if (!strcmp(argv[i], "-j") && i + 1 < argc) {
			if (cli_parse_u64(argv[++i], &jobs) || !jobs || jobs > 1024)
				return cli_usage("sweep run: -j takes 1 to 1024");
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			dir = argv[++i];
		} else if (argv[i][0] == '-') {
			return cli_bad_option("sweep run", argv[i], usage_text);
		} else if (!plan) {
			plan = argv[i];
		} else {
			return cli_usage("sweep run: one PLAN\n%s", usage_text);
		}
	}
	if ((rc = open_plan("sweep run", plan, &pl, &dir, defdir, sizeof(defdir))))
		return rc;
	if (all) {
		struct all_ctx c = { .pl = &pl, .dir = dir, .lock = PTHREAD_MUTEX_INITIALIZER,
				     .missing_only = missing };
		pthread_t th[1024];
		uint64_t t;

		for (t = 0; t < jobs && t < (uint64_t)pl.n; t++)
			if (pthread_create(&th[t], NULL, all_worker, &c))
				break;
		if (!t)
			all_worker(&c);
		for (uint64_t k = 0; k < t; k++)
			pthread_join(th[k], NULL);
		free(pl.v);
		return c.failed ? 1 : 0;
	}
	if (index < 0) {
		int e = engine_index(&index, &from);

		if (e == -ENOENT) {
			free(pl.v);
			return cli_usage("sweep run: no --index, and none of $SLURM_ARRAY_TASK_ID, "
					 "$JOB_COMPLETION_INDEX, $PARALLEL_SEQ is set");
		}
		if (e) {
			free(pl.v);
			return cli_usage("sweep run: $%s is not a number", from);
		}
	}
	if (index < 0 || index >= pl.n) {
		rc = cli_usage("sweep run: job %ld (from %s) is not in %s, which has jobs 0 to %d",
			       index, from, plan, pl.n - 1);
		free(pl.v);
		return rc;
	}
	rc = run_job(&pl, &pl.v[index], dir);
	free(pl.v);
	return rc;
}

/* ---- merging ---- */

struct result {
	int ok;
	uint64_t fig[SWEEP_FIGS], range[SWEEP_FIGS][3];
	uint64_t thp_fault_alloc, memory_peak_kb;
	int oom_kills, kill_layouts_max;
};

/* The result of job jb: 0, or -1 with why set. */
static int load_result(const char *dir, const struct job *jb, struct result *r, char *why,
		       size_t len)
{
	char path[4608], *text, err[256];
	size_t n;
	struct jv *v;
	const struct jv *figs, *ranges;
	int e;

	memset(r, 0, sizeof(*r));
	result_path(dir, jb, path, sizeof(path));
	e = read_file(path, &text, &n);
	if (e == -ENOENT) {
		snprintf(why, len, "missing (no %s)", path);
		return -1;
	}
	if (e) {
		snprintf(why, len, "%s: %s", path, strerror(-e));
		return -1;
	}
	v = jv_parse(text, n, err, sizeof(err));
	free(text);
	if (!v || v->type != JV_OBJ) {
		snprintf(why, len, "%s is not a complete result (%s): cut short? run the job again",
			 path, v ? "not an object" : err);
		jv_free(v);
		return -1;
	}
	if (strcmp(jv_str(v, "version", ""), THPS_VERSION)) {
		snprintf(why, len, "%s is from thpsim %s, this is %s: results of different "
				   "versions are not merged", path, jv_str(v, "version", "?"), THPS_VERSION);
		goto bad;
	}
	if (strcmp(jv_str(v, "job", ""), jb->name) || jv_num(v, "index", -1) != jb->index ||
	    strcmp(jv_str(v, "checksum", ""), jb->checksum) ||
	    strcmp(jv_str(v, "policy", ""), jb->policy) || strcmp(jv_str(v, "knobs", ""), jb->knobs) ||
	    strcmp(jv_str(v, "kernel", ""), jb->kernel) || jv_num(v, "layouts", 0) != jb->layouts) {
		snprintf(why, len, "%s does not match the plan (another plan's result, or the trace "
				   "changed): run the job again", path);
		goto bad;
	}
	if (strcmp(jv_str(v, "status", ""), "ok")) {
		snprintf(why, len, "failed: %s", jv_str(v, "error", jv_str(v, "status", "?")));
		goto bad;
	}
	figs = jv_get(v, "figures");
	ranges = jv_get(v, "ranges");
	for (int f = 0; f < SWEEP_FIGS; f++) {
		const struct jv *rg = jv_get(ranges, fig_names[f]);

		if (!jv_get(figs, fig_names[f]) || !rg) {
			snprintf(why, len, "%s lacks %s", path, fig_names[f]);
			goto bad;
		}
		r->fig[f] = (uint64_t)jv_num(figs, fig_names[f], 0);
		r->range[f][0] = (uint64_t)jv_num(rg, "min", 0);
		r->range[f][1] = (uint64_t)jv_num(rg, "median", 0);
		r->range[f][2] = (uint64_t)jv_num(rg, "max", 0);
	}
	r->thp_fault_alloc = (uint64_t)jv_num(figs, "thp_fault_alloc", 0);
	r->memory_peak_kb = (uint64_t)jv_num(figs, "memory_peak_kB", 0);
	r->oom_kills = (int)jv_num(figs, "oom_kills", 0);
	r->kill_layouts_max = (int)jv_num(jv_get(ranges, "oom_kills"), "max", 0);
	r->ok = 1;
	jv_free(v);
	return 0;
bad:
	jv_free(v);
	return -1;
}

/* A job whose result merge would take. */
static int job_done(const char *dir, const struct job *jb)
{
	struct result r;
	char why[4800];

	return load_result(dir, jb, &r, why, sizeof(why)) == 0;
}

/* One (policy, kernel) group's totals. */
struct group {
	const char *policy, *kernel;
	double fig[SWEEP_FIGS], lo[SWEEP_FIGS], hi[SWEEP_FIGS];
	double killed, killed_some_layout; /* weighted: instances with a kill */
	int jobs, baseline;                /* baseline: the group extra is against */
};

/* One service's figures in one group, per instance: the mean over its
 * recordings, and the lowest and highest over their layouts. */
struct svc_acc {
	double mean[SWEEP_FIGS], lo[SWEEP_FIGS], hi[SWEEP_FIGS];
	int seen;
};

/* What merge works out from the plan and the results. */
struct merged {
	struct group g[SWEEP_MAX_POLICIES * SWEEP_MAX_KERNELS];
	int ng;
	int *gid;              /* each job's group */
	int nsvc;              /* services, numbered by the jobs' svc */
	int ntr;               /* traces (a trace has a job per policy and kernel) */
	int *svc_job;          /* a job of each service (its name, weight, recordings) */
	struct svc_acc *acc;   /* ng x nsvc: svc_at() */
};

/* Service svc's figures in group's policy and kernel. */
static struct svc_acc *svc_at(const struct merged *m, int group, int svc)
{
	return &m->acc[(size_t)group * (size_t)m->nsvc + (size_t)svc];
}

#define SWEEP_MAX_GROUPS (SWEEP_MAX_POLICIES * SWEEP_MAX_KERNELS)
/* jb's group, made when new; -1 when there are too many. */
static int group_of(struct group *g, int *ng, const struct job *jb)
{
	for (int i = 0; i < *ng; i++)
		if (!strcmp(g[i].policy, jb->policy) && !strcmp(g[i].kernel, jb->kernel))
			return i;
	if (*ng >= SWEEP_MAX_GROUPS)
		return -1;
	memset(&g[*ng], 0, sizeof(g[*ng]));
	g[*ng].policy = jb->policy;
	g[*ng].kernel = jb->kernel;
	return (*ng)++;
}

/*
 * The fleet report as a chart: per policy and kernel, a bar of the weighted
 * total of peak AnonPages with a whisker from the sum of the services' lowest
 * to the sum of their highest across layouts, and inside it the part in
 * huge pages (peak AnonHugePages); the baseline's total as a line.  Written
 * to a temporary file and renamed (outfile.h).  0, or 2 after a message.
 */
static int write_svg(const char *path, int force, const char *plan, const struct group *g, int ng)
{
	const int bar = 22, gap = 10, left = 230, width = 560, top = 70;
	const int height = top + ng * (bar + gap) + 50;
	struct outfile of = { 0 };
	char why[8192], title[512];
	double vmax = 1, step;
	FILE *f;

	for (int a = 0; a < ng; a++)
		if (g[a].hi[0] > vmax)
			vmax = g[a].hi[0];
	step = svg_nice_step(vmax / 1024, 5) * 1024; /* round in MiB */
	vmax = step * (double)(long)(vmax / step + 0.999);
	if (outfile_open(&of, path, force, why, sizeof(why))) {
		fprintf(stderr, "thpsim: sweep merge: %s\n", why);
		return 2;
	}
	f = of.f;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n", left + width + 40, height);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
	snprintf(title, sizeof(title), "thpsim sweep merge %s: the fleet's peak AnonPages per "
		 "policy and kernel, weighted by instances", plan);
	fprintf(f, "<text x=\"10\" y=\"22\" font-size=\"14\">");
	svg_escape(f, title, sizeof(title));
	fprintf(f, "</text>\n<text x=\"10\" y=\"42\" fill=\"#555\">bar: the total; dark: "
		   "its part in huge pages; whisker: the sums of each service's lowest and highest "
		   "across layouts; line: the baseline</text>\n");
	for (double v = 0; v <= vmax + step / 2; v += step) {
		int x = left + (int)(v / vmax * width);

		fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>\n"
			   "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%.0f MiB"
			   "</text>\n", x, top - 6, x, height - 40, x, height - 24, v / 1024);
	}
	for (int a = 0; a < ng; a++) {
		const struct group *gr = &g[a], *b = &g[gr->baseline];
		int y = top + a * (bar + gap);
		double w = gr->fig[0] / vmax * width, wh = gr->fig[2] / vmax * width;
		char label[160];

		snprintf(label, sizeof(label), "%s, %s%s", gr->policy, gr->kernel,
			 gr->killed > 0 ? " (OOM kills)" : "");
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 8,
			y + bar / 2 + 4);
		svg_escape(f, label, sizeof(label));
		fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
			   "fill=\"#9ecae1\"/>\n<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
			   "fill=\"#3182bd\"/>\n", left, y, w, bar, left, y + bar / 4, wh, bar / 2);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"black\"/>\n",
			left + gr->lo[0] / vmax * width, y + bar / 2, left + gr->hi[0] / vmax * width,
			y + bar / 2);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d95f02\" "
			   "stroke-width=\"2\"/>\n", left + b->fig[0] / vmax * width, y - 2,
			left + b->fig[0] / vmax * width, y + bar + 2);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"#333\">%+.1f%%</text>\n",
			left + (gr->hi[0] > gr->fig[0] ? gr->hi[0] : gr->fig[0]) / vmax * width + 6,
			y + bar / 2 + 4, b->fig[0] > 0 ? 100.0 * (gr->fig[0] - b->fig[0]) / b->fig[0] : 0.0);
	}
	fprintf(f, "</svg>\n");
	if (outfile_commit(&of, why, sizeof(why))) {
		fprintf(stderr, "thpsim: sweep merge: %s\n", why);
		return 2;
	}
	return 0;
}

/* What "sweep merge" is asked for. */
struct merge_args {
	const char *plan, *dir; /* PLAN, and DIR (NULL: PLAN.results) */
	const char *svg;        /* --svg FILE, or NULL */
	int fmt;                /* --format: 0 text, 1 json, 2 csv */
	int force;              /* --force: an existing chart replaced */
};

/* merge's command line into a: -1 to go on, else 2 after a usage
 * message. */
static int parse_merge_args(int argc, char **argv, struct merge_args *a)
{
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			const char *f = argv[++i];

			if (!strcmp(f, "text"))
				a->fmt = 0;
			else if (!strcmp(f, "json"))
				a->fmt = 1;
			else if (!strcmp(f, "csv"))
				a->fmt = 2;
			else
				return cli_usage("sweep merge: --format takes text, json or csv, not '%s'", f);
		} else if (!strcmp(argv[i], "--svg") && i + 1 < argc) {
			a->svg = argv[++i];
		} else if (!strcmp(argv[i], "--force")) {
			a->force = 1;
		} else if (argv[i][0] == '-') {
			return cli_bad_option("sweep merge", argv[i], usage_text);
		} else if (!a->plan) {
			a->plan = argv[i];
		} else if (!a->dir) {
			a->dir = argv[i];
		} else {
			return cli_usage("sweep merge: PLAN [DIR]\n%s", usage_text);
		}
	}
	return -1;
}

/* Every job's result in DIR into res, checked against the plan; each job
 * planned by another version, missing or failed named: 0, or 1 when one
 * was (then nothing is merged). */
static int load_results(const struct plan *pl, const char *dir, const char *plan,
			struct result *res)
{
	char why[4800];
	int bad = 0;

	for (int i = 0; i < pl->n; i++) {
		const struct job *jb = &pl->v[i];

		if (strcmp(jb->version, THPS_VERSION)) {
			fprintf(stderr, "thpsim: sweep merge: job %d (%s): planned by thpsim %s, this is "
					"%s\n", jb->index, jb->name, jb->version, THPS_VERSION);
			bad++;
			continue;
		}
		if (load_result(dir, jb, &res[i], why, sizeof(why))) {
			fprintf(stderr, "thpsim: sweep merge: job %d (%s): %s\n", jb->index, jb->name, why);
			bad++;
		}
	}
	if (bad) {
		fprintf(stderr, "thpsim: sweep merge: %d of %d jobs missing or failed: nothing merged; "
				"run them again (thpsim sweep run %s --index I)\n", bad, pl->n, plan);
		return 1;
	}
	return 0;
}

/* Number the plan's services (job svc), count its traces, and check that
 * every job of a service gives it the same weight and recordings: 0, or 2
 * after a message naming the plan's line. */
static int number_services(struct plan *pl, struct merged *m)
{
	m->svc_job = malloc((size_t)pl->n * sizeof(*m->svc_job));
	if (!m->svc_job)
		return msg_error(-ENOMEM, "sweep merge"), 2;
	m->nsvc = 0;
	for (int i = 0; i < pl->n; i++) {
		struct job *jb = &pl->v[i];
		int s, t;

		for (s = 0; s < m->nsvc; s++)
			if (!strcmp(pl->v[m->svc_job[s]].service, jb->service))
				break;
		if (s == m->nsvc) {
			m->svc_job[m->nsvc++] = i;
		} else if (pl->v[m->svc_job[s]].weight != jb->weight ||
			   pl->v[m->svc_job[s]].recordings != jb->recordings) {
			fprintf(stderr, "thpsim: %s:%d: the service '%s' has weight %g and %d "
					"recordings here, %g and %d on line %d\n", pl->path, jb->line,
				jb->service, jb->weight, jb->recordings, pl->v[m->svc_job[s]].weight,
				pl->v[m->svc_job[s]].recordings, pl->v[m->svc_job[s]].line);
			return 2;
		}
		jb->svc = s;
		for (t = 0; t < i && strcmp(pl->v[t].trace, jb->trace); t++)
			;
		m->ntr += t == i; /* the trace's first job */
	}
	return 0;
}

/*
 * The totals, weighted: each job's figures added to its (policy, kernel)
 * group, at its share of its service's instances (weight / recordings), so
 * a service counts as its instances times the mean over its recordings.
 * The spread is per service: its instances times the lowest (highest) of
 * any recording's layouts.  0, or 2 after a message.
 */
static int sum_groups(const struct plan *pl, const struct result *res, struct merged *m)
{
	for (int i = 0; i < pl->n; i++) {
		m->gid[i] = group_of(m->g, &m->ng, &pl->v[i]);
		if (m->gid[i] < 0) {
			fprintf(stderr, "thpsim: sweep merge: more than %d policies x kernels\n",
				SWEEP_MAX_GROUPS);
			return 2;
		}
	}
	m->acc = calloc((size_t)m->ng * (size_t)m->nsvc, sizeof(*m->acc));
	if (!m->acc)
		return msg_error(-ENOMEM, "sweep merge"), 2;
	for (int i = 0; i < pl->n; i++) {
		const struct job *jb = &pl->v[i];
		struct group *gr = &m->g[m->gid[i]];
		struct svc_acc *sa = svc_at(m, m->gid[i], jb->svc);
		double share = jb->weight / jb->recordings;

		gr->jobs++;
		for (int f = 0; f < SWEEP_FIGS; f++) {
			double lo = (double)res[i].range[f][0], hi = (double)res[i].range[f][2];

			gr->fig[f] += share * (double)res[i].fig[f];
			sa->mean[f] += (double)res[i].fig[f] / jb->recordings;
			if (!sa->seen || lo < sa->lo[f])
				sa->lo[f] = lo;
			if (!sa->seen || hi > sa->hi[f])
				sa->hi[f] = hi;
		}
		sa->seen = 1;
		gr->killed += res[i].oom_kills ? share : 0;
		gr->killed_some_layout += res[i].kill_layouts_max ? share : 0;
	}
	for (int a = 0; a < m->ng; a++)
		for (int s = 0; s < m->nsvc; s++) {
			const struct svc_acc *sa = svc_at(m, a, s);
			double w = pl->v[m->svc_job[s]].weight;

			for (int f = 0; f < SWEEP_FIGS && sa->seen; f++) {
				m->g[a].lo[f] += w * sa->lo[f];
				m->g[a].hi[f] += w * sa->hi[f];
			}
		}
	return 0;
}

/* Each group's baseline: "never" under the same kernel, else the kernel's
 * first policy. */
static void pick_baselines(struct group *g, int ng)
{
	for (int a = 0; a < ng; a++) {
		g[a].baseline = -1;
		for (int b = 0; b < ng && g[a].baseline < 0; b++)
			if (!strcmp(g[b].kernel, g[a].kernel) && !strcmp(g[b].policy, "never"))
				g[a].baseline = b;
		for (int b = 0; b < ng && g[a].baseline < 0; b++)
			if (!strcmp(g[b].kernel, g[a].kernel))
				g[a].baseline = b;
	}
}

/* The report as JSON: each group's totals, spread and extra, each
 * service's figures per instance, then each job's own figures. */
static void merge_json(const char *plan, const struct plan *pl, const struct result *res,
		       const struct merged *m)
{
	struct json j;

	json_init(&j, stdout, 1);
	json_begin_object(&j, NULL);
	json_string(&j, "plan", plan);
	json_string(&j, "version", THPS_VERSION);
	json_begin_array(&j, "groups");
	for (int a = 0; a < m->ng; a++) {
		const struct group *gr = &m->g[a], *b = &m->g[gr->baseline];

		json_begin_object(&j, NULL);
		json_string(&j, "policy", gr->policy);
		json_string(&j, "kernel", gr->kernel);
		json_string(&j, "baseline", b->policy);
		json_int(&j, "jobs", gr->jobs);
		for (int f = 0; f < SWEEP_FIGS; f++) {
			json_begin_object(&j, fig_names[f]);
			json_total(&j, "total_kB", gr->fig[f]);
			json_total(&j, "lowest_kB", gr->lo[f]);
			json_total(&j, "highest_kB", gr->hi[f]);
			json_total(&j, "extra_kB", gr->fig[f] - b->fig[f]);
			json_end_object(&j);
		}
		json_total(&j, "oom_killed_weight", gr->killed);
		json_total(&j, "oom_killed_in_some_layout_weight", gr->killed_some_layout);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_begin_array(&j, "services");
	for (int s = 0; s < m->nsvc; s++) {
		const struct job *sj = &pl->v[m->svc_job[s]];

		json_begin_object(&j, NULL);
		json_string(&j, "service", sj->service);
		json_int(&j, "recordings", sj->recordings);
		json_total(&j, "weight", sj->weight);
		json_begin_array(&j, "groups");
		for (int a = 0; a < m->ng; a++) {
			const struct svc_acc *sa = svc_at(m, a, s);
			const struct svc_acc *sb = svc_at(m, m->g[a].baseline, s);

			if (!sa->seen)
				continue;
			json_begin_object(&j, NULL);
			json_string(&j, "policy", m->g[a].policy);
			json_string(&j, "kernel", m->g[a].kernel);
			for (int f = 0; f < SWEEP_FIGS; f++) {
				json_begin_object(&j, fig_names[f]);
				json_total(&j, "mean_kB", sa->mean[f]);
				json_total(&j, "lowest_kB", sa->lo[f]);
				json_total(&j, "highest_kB", sa->hi[f]);
				if (sb->seen)
					json_total(&j, "extra_kB", sa->mean[f] - sb->mean[f]);
				json_end_object(&j);
			}
			json_end_object(&j);
		}
		json_end_array(&j);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_begin_array(&j, "jobs");
	for (int i = 0; i < pl->n; i++) {
		json_begin_object(&j, NULL);
		json_int(&j, "index", pl->v[i].index);
		json_string(&j, "job", pl->v[i].name);
		json_string(&j, "trace", pl->v[i].trace);
		json_string(&j, "service", pl->v[i].service);
		json_string(&j, "policy", pl->v[i].policy);
		json_string(&j, "kernel", pl->v[i].kernel);
		json_total(&j, "weight", pl->v[i].weight);
		json_int(&j, "recordings", pl->v[i].recordings);
		for (int f = 0; f < SWEEP_FIGS; f++)
			json_uint(&j, fig_names[f], res[i].fig[f]);
		json_uint(&j, "thp_fault_alloc", res[i].thp_fault_alloc);
		json_uint(&j, "memory_peak_kB", res[i].memory_peak_kb);
		json_int(&j, "oom_kills", res[i].oom_kills);
		json_end_object(&j);
	}
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
}

/* The report as CSV: a line a group. */
static void merge_csv(const struct group *g, int ng)
{
	printf("policy,kernel,jobs");
	for (int f = 0; f < SWEEP_FIGS; f++)
		printf(",%s_kB,%s_lowest_kB,%s_highest_kB,%s_extra_kB", fig_names[f], fig_names[f],
		       fig_names[f], fig_names[f]);
	printf(",oom_killed_weight\n");
	for (int a = 0; a < ng; a++) {
		printf("%s,%s,%d", g[a].policy, g[a].kernel, g[a].jobs);
		for (int f = 0; f < SWEEP_FIGS; f++)
			printf(",%.0f,%.0f,%.0f,%.0f", g[a].fig[f], g[a].lo[f], g[a].hi[f],
			       g[a].fig[f] - g[g[a].baseline].fig[f]);
		printf(",%g\n", g[a].killed);
	}
}

/* The report as text: a group's totals on a line, its spread across
 * layouts and recordings on the next. */
static void merge_text(const char *plan, const struct plan *pl, const struct merged *m)
{
	printf("thpsim sweep merge %s: %d jobs, %d traces of %d services\n\n", plan, pl->n, m->ntr,
	       m->nsvc);
	printf("the fleet, weighted by instances: kB summed over the services, each its mean "
	       "over its recordings\n(lowest..highest: the sums of each service's lowest and "
	       "highest across its recordings'\nlayouts); extra: against the baseline policy\n");
	printf("%-16s %-9s %14s %14s %12s %14s %14s %9s\n", "policy", "kernel", "peak Anon kB",
	       "extra peak", "(%)", "final Anon kB", "final AHP kB", "OOM-kill");
	for (int a = 0; a < m->ng; a++) {
		const struct group *gr = &m->g[a], *b = &m->g[gr->baseline];
		double extra = gr->fig[0] - b->fig[0];

		printf("%-16.16s %-9.9s %14.0f %14.0f %11.1f%% %14.0f %14.0f %9g\n", gr->policy,
		       gr->kernel, gr->fig[0], extra, b->fig[0] > 0 ? 100.0 * extra / b->fig[0] : 0.0,
		       gr->fig[1], gr->fig[3], gr->killed);
		printf("%-16s %-9s %6.0f..%-7.0f %29s %14s %6.0f..%-7.0f\n", "", "", gr->lo[0],
		       gr->hi[0], "", "", gr->lo[3], gr->hi[3]);
	}
}

/* The text report's end: the services that cost the most, each policy's
 * (at most five) largest extra peak AnonPages against its baseline, their
 * instances times the extra of their mean. */
static void print_costliest(const struct plan *pl, const struct merged *m)
{
	printf("\nthe services that cost the most (weighted extra peak AnonPages against the "
	       "baseline):\n");
	for (int a = 0; a < m->ng; a++) {
		int shown = 0, used[5] = { -1, -1, -1, -1, -1 };

		if (m->g[a].baseline == a)
			continue;
		for (int k = 0; k < 5; k++) {
			int best = -1;
			double bx = 0;

			for (int s = 0; s < m->nsvc; s++) {
				const struct svc_acc *sa = svc_at(m, a, s);
				const struct svc_acc *sb = svc_at(m, m->g[a].baseline, s);
				double x = pl->v[m->svc_job[s]].weight * (sa->mean[0] - sb->mean[0]);
				int seen = 0;

				for (int u = 0; u < k; u++)
					seen |= used[u] == s;
				if (!seen && sa->seen && sb->seen && (best < 0 || x > bx)) {
					best = s;
					bx = x;
				}
			}
			if (best < 0 || bx <= 0)
				break;
			used[k] = best;
			{
				const struct job *sj = &pl->v[m->svc_job[best]];
				char label[160];

				snprintf(label, sizeof(label), sj->recordings > 1 ? "%s (%d recordings)" :
					 "%s", sj->service, sj->recordings);
				printf("  %-16.16s %-9.9s %-40.40s %+12.0f kB (x%g)\n",
				       shown ? "" : m->g[a].policy, shown ? "" : m->g[a].kernel, label, bx,
				       sj->weight);
			}
			shown++;
		}
	}
}

/* "sweep merge PLAN [DIR]": every result checked against the plan, then
 * the fleet report (text, JSON or CSV) and the chart; 1 when a job is
 * missing or failed, 2 on a usage or input error. */
static int sweep_merge(int argc, char **argv)
{
	struct merge_args a = { 0 };
	char defdir[4160];
	int rc;
	struct plan pl;
	struct result *res;
	struct merged *m;

	if ((rc = parse_merge_args(argc, argv, &a)) >= 0)
		return rc;
	if ((rc = open_plan("sweep merge", a.plan, &pl, &a.dir, defdir, sizeof(defdir))))
		return rc;
	res = calloc((size_t)pl.n, sizeof(*res));
	m = calloc(1, sizeof(*m));
	if (!res || !m || !(m->gid = calloc((size_t)pl.n, sizeof(*m->gid)))) {
		free(res);
		free(m);
		free(pl.v);
		return msg_error(-ENOMEM, "sweep merge"), 2;
	}
	rc = number_services(&pl, m);
	if (!rc)
		rc = load_results(&pl, a.dir, a.plan, res);
	if (!rc)
		rc = sum_groups(&pl, res, m);
	if (!rc) {
		pick_baselines(m->g, m->ng);
		if (a.svg)
			rc = write_svg(a.svg, a.force, a.plan, m->g, m->ng);
	}
	if (!rc) {
		if (a.fmt == 1) {
			merge_json(a.plan, &pl, res, m);
		} else if (a.fmt == 2) {
			merge_csv(m->g, m->ng);
		} else {
			merge_text(a.plan, &pl, m);
			print_costliest(&pl, m);
		}
	}
	free(res);
	free(m->gid);
	free(m->svc_job);
	free(m->acc);
	free(m);
	free(pl.v);
	return rc;
}

int cmd_sweep(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		puts(usage_text);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "plan"))
		return sweep_plan(argc, argv);
	if (!strcmp(argv[1], "run"))
		return sweep_run(argc, argv);
	if (!strcmp(argv[1], "merge"))
		return sweep_merge(argc, argv);
	return cli_usage("sweep: '%s' is not plan, run or merge\n%s", argv[1], usage_text);
}
