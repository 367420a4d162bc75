/*
 * sysfs.c - the knobs: /sys/kernel/mm/transparent_hugepage/... and the
 * model's own under thpsim/ (mirrors the sysfs half of mm/huge_memory.c).
 *
 * Each knob is one row of the table below: its sysfs name, its values, and
 * where it lives in struct knobs.  Defaults are those of Linux 6.18 built as
 * this machine's kernel (CONFIG_TRANSPARENT_HUGEPAGE_MADVISE).  The
 * model-only knobs choose behaviour that changed across kernel versions;
 * "thpsim/kernel" sets all of them to one version's at once.
 */
#include "internal.h"

struct knob_def {
	const char *name;
	const char *const *values; /* NULL: an integer in [min, max] */
	int min, max;
	size_t offset;             /* into struct knobs */
	const char *help;
};

static const char *const enabled_values[] = { "always", "madvise", "never", NULL };
static const char *const pmd_enabled_values[] = { "always", "madvise", "never", "inherit", NULL };
static const char *const defrag_values[] = { "always", "defer", "defer+madvise", "madvise", "never",
					     NULL };
static const char *const lifetime_values[] = { "refcount", "per-mm", "persistent", NULL };
static const char *const hzp_wp_values[] = { "alloc-or-pte", "split", "alloc-or-split", NULL };
static const char *const thp_cow_values[] = { "copy", "split", NULL };

#define K(field) offsetof(struct knobs, field)
static const struct knob_def knob_defs[] = {
	{ "transparent_hugepage/enabled", enabled_values, 0, 0, K(enabled),
	  "always|madvise|never: when a fault may map a THP" },
	{ "transparent_hugepage/hugepages-2048kB/enabled", pmd_enabled_values, 0, 0, K(pmd_enabled),
	  "always|madvise|never|inherit: the PMD size's own setting (Linux 6.8+)" },
	{ "transparent_hugepage/defrag", defrag_values, 0, 0, K(defrag),
	  "always|defer|defer+madvise|madvise|never: may a fault's THP allocation reclaim" },
	{ "transparent_hugepage/use_zero_page", NULL, 0, 1, K(use_zero_page),
	  "0|1: map the huge zero page on read faults (Linux 3.8+)" },
	{ "transparent_hugepage/shrink_underused", NULL, 0, 1, K(shrink_underused),
	  "0|1: the deferred-split shrinker also splits underused THPs (Linux 6.12+)" },
	{ "transparent_hugepage/khugepaged/max_ptes_none", NULL, 0, HPAGE_PMD_NR - 1,
	  K(max_ptes_none), "0..511: zero-filled subpages a THP may hold before it is underused" },
	{ "thpsim/huge_zero_page_lifetime", lifetime_values, 0, 0, K(hzp_lifetime),
	  "refcount (Linux 3.8-4.8: a global reference per mapping) | per-mm (Linux 4.9+: one "
	  "per address space) | persistent (never freed: the series at patch 9, "
	  "CONFIG_PERSISTENT_HUGE_ZERO_FOLIO)" },
	{ "thpsim/huge_zero_wp", hzp_wp_values, 0, 0, K(hzp_wp),
	  "write fault on the huge zero page: alloc-or-pte (Linux 3.8-5.7: new THP, else a PTE "
	  "table with one page) | split (Linux 5.8-6.12: split, copy 4 KiB) | alloc-or-split "
	  "(Linux 6.13+: new THP, else split)" },
	{ "thpsim/thp_cow", thp_cow_values, 0, 0, K(thp_cow),
	  "write fault on a THP shared after fork: copy (Linux 3.8-5.7: copy 2 MiB) | split "
	  "(Linux 5.8+: split the PMD, copy 4 KiB)" },
};
#undef K

/* thpsim/kernel: the model knobs of one kernel version at once. */
static const struct {
	const char *version;
	int lifetime, wp, cow;
} presets[] = {
	{ "3.8", HZP_REFCOUNT, HZP_WP_ALLOC_OR_PTE, THP_COW_COPY },
	{ "4.9", HZP_PER_MM, HZP_WP_ALLOC_OR_PTE, THP_COW_COPY },
	{ "5.8", HZP_PER_MM, HZP_WP_SPLIT, THP_COW_SPLIT },
	{ "6.13", HZP_PER_MM, HZP_WP_ALLOC_OR_SPLIT, THP_COW_SPLIT },
	{ "6.18", HZP_PER_MM, HZP_WP_ALLOC_OR_SPLIT, THP_COW_SPLIT },
};
#define KERNEL_KNOB "thpsim/kernel"
#define NR_KNOBS ((int)ARRAY_SIZE(knob_defs) + 1)

void knobs_init(struct knobs *k)
{
	k->enabled = THP_MADVISE;
	k->pmd_enabled = THP_INHERIT;
	k->defrag = DEFRAG_MADVISE;
	k->use_zero_page = 1;
	k->shrink_underused = 1;
	k->max_ptes_none = HPAGE_PMD_NR - 1;
	k->hzp_lifetime = HZP_PER_MM;
	k->hzp_wp = HZP_WP_ALLOC_OR_SPLIT;
	k->thp_cow = THP_COW_SPLIT;
}

const char *thps_knob_name(int i)
{
	if (i < 0 || i >= NR_KNOBS)
		return NULL;
	return i < (int)ARRAY_SIZE(knob_defs) ? knob_defs[i].name : KERNEL_KNOB;
}

const char *thps_knob_help(int i)
{
	if (i < 0 || i >= NR_KNOBS)
		return NULL;
	if (i < (int)ARRAY_SIZE(knob_defs))
		return knob_defs[i].help;
	return "3.8|4.9|5.8|6.13|6.18: set the thpsim/ knobs to that kernel's behaviour";
}

static const struct knob_def *find_knob(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(knob_defs); i++)
		if (!strcmp(knob_defs[i].name, name))
			return &knob_defs[i];
	return NULL;
}

static int parse_value(const struct knob_def *d, const char *value, int *out)
{
	if (d->values) {
		for (int i = 0; d->values[i]; i++)
			if (!strcmp(d->values[i], value)) {
				*out = i;
				return 0;
			}
		return -EINVAL;
	}
	{
		char *end;
		long v = strtol(value, &end, 10);

		if (!*value || *end || v < d->min || v > d->max)
			return -EINVAL;
		*out = (int)v;
	}
	return 0;
}

static int *knob_field(struct knobs *k, const struct knob_def *d)
{
	return (int *)((char *)k + d->offset);
}

static int set_lifetime_locked(thps_machine *m, int v)
{
	if (v != m->knobs.hzp_lifetime && READ_ONCE(m->huge_zero_pfn) != NO_PFN)
		return machine_error(m, -EBUSY,
				     "thpsim/huge_zero_page_lifetime: cannot change while the huge "
				     "zero page exists (set it before the first read fault, or "
				     "drop caches after the processes using it exit)");
	WRITE_ONCE(m->knobs.hzp_lifetime, v);
	return 0;
}

int thps_knob_set(thps_machine *m, const char *name, const char *value)
{
	const struct knob_def *d;
	int v, err = 0;

	if (!strcmp(name, KERNEL_KNOB)) {
		for (size_t i = 0; i < ARRAY_SIZE(presets); i++) {
			if (strcmp(presets[i].version, value))
				continue;
			spin_lock(&m->knob_lock);
			err = set_lifetime_locked(m, presets[i].lifetime);
			if (!err) {
				WRITE_ONCE(m->knobs.hzp_wp, presets[i].wp);
				WRITE_ONCE(m->knobs.thp_cow, presets[i].cow);
			}
			spin_unlock(&m->knob_lock);
			return err;
		}
		return machine_error(m, -EINVAL, "%s: unknown version '%s' (%s)", name, value,
				     thps_knob_help(NR_KNOBS - 1));
	}
	d = find_knob(name);
	if (!d)
		return machine_error(m, -ENOENT, "unknown knob '%s'", name);
	if (parse_value(d, value, &v))
		return machine_error(m, -EINVAL, "%s: bad value '%s' (%s)", name, value, d->help);
	spin_lock(&m->knob_lock);
	if (d->offset == offsetof(struct knobs, hzp_lifetime))
		err = set_lifetime_locked(m, v);
	else
		WRITE_ONCE(*knob_field(&m->knobs, d), v);
	spin_unlock(&m->knob_lock);
	return err;
}

int thps_knob_get(thps_machine *m, const char *name, char *buf, size_t len)
{
	const struct knob_def *d;
	struct knobs k = knobs_read(m);

	if (!strcmp(name, KERNEL_KNOB)) {
		const char *ver = "custom";

		for (size_t i = ARRAY_SIZE(presets); i-- > 0;)
			if (presets[i].lifetime == k.hzp_lifetime && presets[i].wp == k.hzp_wp &&
			    presets[i].cow == k.thp_cow) {
				ver = presets[i].version;
				break;
			}
		snprintf(buf, len, "%s", ver);
		return 0;
	}
	d = find_knob(name);
	if (!d)
		return -ENOENT;
	if (d->values)
		snprintf(buf, len, "%s", d->values[*knob_field(&k, d)]);
	else
		snprintf(buf, len, "%d", *knob_field(&k, d));
	return 0;
}
