/*
 * settings.c - the knobs a replay runs with: the recording machine's
 * settings from the trace header (unless --no-trace-knobs), then the
 * options' --set, and the khugepaged settings that result; with a note
 * for what the model does not have and for a trace recorded without the
 * zero page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "util/kprofile.h"

int replay_apply_knobs(struct replay *r, const struct trace_header *h, char *err, size_t errlen)
{
	struct replay_result *res = r->res;
	size_t un = 0;

	if (!r->o->no_trace_knobs) {
		const char *release = trace_header_get(h, "kernel");
		struct kprofile kp;

		/* a trace from before kernel profiles: its kernel's version */
		if (!trace_header_get(h, "thpsim/kernel") && !kprofile_from_release(&kp, release)) {
			kprofile_apply(&kp, r->m);
			replay_note(r, "the trace names no kernel profile: Linux %s's, from its kernel %s",
			     kp.version, release);
		}
		for (int i = 0; i < h->n; i++) {
			const char *k = h->key[i];
			int e;

			if (!strchr(k, '/'))
				continue; /* not a setting */
			e = thps_knob_set(r->m, k, h->value[i]);
			/* settings without effect on anonymous memory, or at the
			 * value the model has anyway, are not worth a word */
			if (e == -ENOENT && (strstr(k, "shmem_enabled") || strstr(k, "anon_beside_full") ||
					     (strstr(k, "hugepages-") && !strcmp(h->value[i], "never")) ||
					     strstr(k, "khugepaged/")))
				continue;
			if (e == -ENOENT && un + strlen(k) + 3 < sizeof(res->unmodelled_knobs))
				un += (size_t)snprintf(res->unmodelled_knobs + un,
						       sizeof(res->unmodelled_knobs) - un, "%s%s",
						       un ? ", " : "", k);
			else if (e && e != -ENOENT)
				replay_note(r, "the recording machine's %s=%s: %s", k, h->value[i],
				     thps_last_error(r->m));
		}
	}
	{
		int bad;

		/* the options' (thpsim/kernel=auto: the running kernel's profile) */
		if (knob_sets_apply(r->m, &r->o->knobs, &bad)) {
			snprintf(err, errlen, "%s=%s: %s", r->o->knobs.name[bad],
				 r->o->knobs.value[bad], thps_last_error(r->m));
			return -EINVAL;
		}
	}
	/* A kernel without the zero page maps a page at the first read, so a
	 * later write takes no fault and the recorder never sees it. */
	{
		const char *rec = trace_header_get(h, "thpsim/zero_page");
		char now[8];

		thps_knob_get(r->m, "thpsim/zero_page", now, sizeof(now));
		if (rec && !strcmp(rec, "0") && !strcmp(now, "1"))
			replay_note(r, "recorded on a kernel without the zero page: a write to a page "
				"first read took no fault there and is not in the trace, so under "
				"thpsim/zero_page=1 such pages stay zero pages and their memory is "
				"missing from this prediction");
	}
	/* record every knob's value in force */
	for (int i = 0; thps_knob_name(i) && res->nknobs < REPLAY_MAX_KNOBS; i++) {
		snprintf(res->knob_name[res->nknobs], sizeof(res->knob_name[0]), "%s",
			 thps_knob_name(i));
		thps_knob_get(r->m, thps_knob_name(i), res->knob_value[res->nknobs],
			      sizeof(res->knob_value[0]));
		res->nknobs++;
	}
	return 0;
}

/* The khugepaged settings in force (the recording machine's unless --set
 * changed them), for the result; a trace without them says so. */
void replay_khugepaged_settings(struct replay *r, const struct trace_header *h)
{
	char v[32];

	r->res->khugepaged_on = !r->o->no_khugepaged;
	thps_knob_get(r->m, "transparent_hugepage/khugepaged/scan_sleep_millisecs", v, sizeof(v));
	r->res->khugepaged_scan_sleep_ms = strtoull(v, NULL, 10);
	thps_knob_get(r->m, "transparent_hugepage/khugepaged/pages_to_scan", v, sizeof(v));
	r->res->khugepaged_pages_to_scan = strtoull(v, NULL, 10);
	if (!r->o->no_khugepaged && !r->o->no_trace_knobs &&
	    !trace_header_get(h, "transparent_hugepage/khugepaged/scan_sleep_millisecs"))
		replay_note(r, "the trace has no khugepaged settings: khugepaged runs with Linux's defaults "
			"(scan_sleep_millisecs=10000, pages_to_scan=4096) unless --set says otherwise");
}

/* A header limit: bytes, UINT64_MAX for "max"; -1 when absent or bad. */
static int header_limit(const struct trace_header *h, const char *key, uint64_t *out)
{
	const char *v = trace_header_get(h, key);
	char *end;

	if (!v)
		return -1;
	if (!strcmp(v, "max")) {
		*out = THPS_MEMCG_NOLIMIT;
		return 0;
	}
	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno || *end || end == v ? -1 : 0;
}

/*
 * The memory cgroup's limits: --memory-max and --memory-high when given,
 * else those of the cgroup the program was recorded in (the trace header's
 * "cgroup/" keys), unless --no-limit.  The recording's swap allowance is
 * noted: swapping is not modelled.
 */
void replay_apply_limits(struct replay *r, const struct trace_header *h)
{
	const struct replay_opts *o = r->o;
	struct replay_result *res = r->res;
	uint64_t max = THPS_MEMCG_NOLIMIT, high = THPS_MEMCG_NOLIMIT, swap;

	if (o->no_limit)
		return;
	if (o->limit_set) {
		max = o->memory_max;
		high = o->memory_high;
		res->limit_from = "--memory-max/--memory-high";
	} else {
		if (header_limit(h, "cgroup/memory.max", &max))
			max = THPS_MEMCG_NOLIMIT;
		if (header_limit(h, "cgroup/memory.high", &high))
			high = THPS_MEMCG_NOLIMIT;
		res->limit_from = "the cgroup the program was recorded in (--no-limit: none)";
	}
	res->limited = max != THPS_MEMCG_NOLIMIT || high != THPS_MEMCG_NOLIMIT;
	if (!res->limited)
		return;
	thps_memcg_set_limits(r->m, max, high);
	if (!header_limit(h, "cgroup/memory.swap.max", &swap) && swap && !o->limit_set)
		replay_note(r, "the recording's cgroup allowed swap (memory.swap.max %s): swapping is "
			    "not modelled, so where the kernel would swap anonymous pages out, the "
			    "replay reclaims only what the THP shrinkers free and may OOM-kill",
			    trace_header_get(h, "cgroup/memory.swap.max"));
}
