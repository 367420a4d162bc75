/*
 * kprofile.c - detecting the running kernel's profile (kprofile.h).
 *
 * Three sources, in this order, each overriding the one before:
 *  1. the version (uname -r): every thpsim/ knob takes its value in that
 *     Linux version, from the model's table of changes (thps_profile_change);
 *  2. the build configuration, where the kernel exposes it
 *     (/proc/config.gz, else /boot/config-RELEASE): CONFIG_PT_RECLAIM and
 *     CONFIG_PERSISTENT_HUGE_ZERO_FOLIO decide two knobs;
 *  3. probes: 256 untouched pages are read; if Rss grows by them, read
 *     faults allocate (mm_forbids_zeropage: s390 KVM guests, a kernel
 *     booted with pvm_no_zero_page=1), so thpsim/zero_page is 0.  And
 *     mappings of 4 MiB and of 3 MiB are made: where they land on 2 MiB
 *     boundaries says thpsim/anon_thp_align.
 * Nothing here writes to the kernel's settings.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util/json.h"
#include "util/kprofile.h"
#include "util/sysfile.h"

#define KERNEL_KNOB "thpsim/kernel"
#define SYS_THP "/sys/kernel/mm/transparent_hugepage/"

int kprofile_version_of(const char *release, char *out, size_t len)
{
	char *end;
	long a, b;

	if (!release || *release < '0' || *release > '9')
		return -1;
	a = strtol(release, &end, 10);
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return -1;
	b = strtol(end + 1, &end, 10);
	snprintf(out, len, "%ld.%ld", a, b);
	return 0;
}

static struct kprofile_item *item(struct kprofile *p, const char *knob)
{
	for (int i = 0; i < p->nitems; i++)
		if (!strcmp(p->item[i].knob, knob))
			return &p->item[i];
	return NULL;
}

const char *kprofile_get(const struct kprofile *p, const char *knob)
{
	struct kprofile_item *it = item((struct kprofile *)p, knob);

	return it ? it->value : NULL;
}

void kprofile_set(struct kprofile *p, const char *knob, const char *value, const char *source)
{
	struct kprofile_item *it = item(p, knob);

	if (!it) {
		if (p->nitems == KPROFILE_MAX_ITEMS)
			return;
		it = &p->item[p->nitems++];
		snprintf(it->knob, sizeof(it->knob), "%s", knob);
	}
	snprintf(it->value, sizeof(it->value), "%s", value);
	snprintf(it->source, sizeof(it->source), "%s", source);
}

/* Every thpsim/ knob at its value in version p->version, read back from a
 * model machine so that this file holds no copy of the table. */
static int version_defaults(struct kprofile *p, const char *why)
{
	struct thps_config cfg = { .ram_bytes = 16ULL << 20 };
	thps_machine *m;
	char src[192];

	p->nitems = 0;
	if (thps_machine_new(&cfg, &m))
		return -ENOMEM;
	if (thps_knob_set(m, KERNEL_KNOB, p->version)) {
		thps_machine_free(m);
		return -EINVAL;
	}
	kprofile_set(p, KERNEL_KNOB, p->version, why);
	for (int i = 0; thps_knob_name(i); i++) {
		const char *name = thps_knob_name(i);
		char value[32];

		if (strncmp(name, "thpsim/", 7) || !strcmp(name, KERNEL_KNOB))
			continue;
		thps_knob_get(m, name, value, sizeof(value));
		snprintf(src, sizeof(src), "%s", strcmp(name, "thpsim/zero_page") ? "" : "not "
			 "a version's: assumed until probed");
		if (!src[0])
			snprintf(src, sizeof(src), "Linux %s", p->version);
		kprofile_set(p, name, value, src);
	}
	thps_machine_free(m);
	return 0;
}

int kprofile_from_release(struct kprofile *p, const char *release)
{
	char why[192];

	memset(p, 0, sizeof(*p));
	snprintf(p->release, sizeof(p->release), "%s", release ? release : "");
	if (kprofile_version_of(release, p->version, sizeof(p->version)))
		return -1;
	snprintf(why, sizeof(why), "the version of %s", p->release);
	return version_defaults(p, why) ? -1 : 0;
}

int kprofile_from_spec(struct kprofile *p, const char *spec)
{
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", spec);
	tok = strtok_r(buf, ",", &save);
	if (!tok || strspn(tok, "0123456789.") != strlen(tok) || kprofile_from_release(p, tok))
		return -1;
	while ((tok = strtok_r(NULL, ",", &save))) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok)
			return -1;
		*eq = 0;
		kprofile_set(p, tok, eq + 1, "given");
	}
	return 0;
}

int kprofile_apply(const struct kprofile *p, thps_machine *m)
{
	for (int i = 0; i < p->nitems; i++) {
		int err = thps_knob_set(m, p->item[i].knob, p->item[i].value);

		if (err)
			return err;
	}
	return 0;
}

/* ---- the build configuration ---- */

/* The configuration text (malloc'd) and where it came from, or NULL. */
static char *read_config(const char *release, char *where, size_t wlen)
{
	char path[256], *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = NULL;
	int piped = 0;

	if (access("/proc/config.gz", R_OK) == 0) {
		f = popen("gzip -dc /proc/config.gz 2>/dev/null", "r");
		piped = 1;
		snprintf(where, wlen, "/proc/config.gz");
	}
	if (!f) {
		snprintf(path, sizeof(path), "/boot/config-%s", release);
		f = fopen(path, "r");
		piped = 0;
		snprintf(where, wlen, "%s", path);
	}
	if (!f)
		return NULL;
	for (;;) {
		size_t n;

		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 1 << 16);

			if (!nb)
				break;
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		if (!n)
			break;
		len += n;
	}
	if (piped)
		pclose(f);
	else
		fclose(f);
	if (!buf || !len) {
		free(buf);
		return NULL;
	}
	buf[len] = 0;
	return buf;
}

/* 1 "=y", 0 "is not set" or absent. */
static int config_yes(const char *cfg, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = cfg; (p = strstr(p, opt)); p += n)
		if ((p == cfg || p[-1] == '\n') && p[n] == '=')
			return p[n + 1] == 'y' || p[n + 1] == 'm';
	return 0;
}

static void from_config(struct kprofile *p)
{
	char *cfg = read_config(p->release, p->config, sizeof(p->config)), src[192];
	int y;

	if (!cfg) {
		p->config[0] = 0;
		return;
	}
	y = config_yes(cfg, "CONFIG_PT_RECLAIM");
	snprintf(src, sizeof(src), "CONFIG_PT_RECLAIM%s in %s", y ? "=y" : " not set", p->config);
	kprofile_set(p, "thpsim/pt_reclaim", y ? "1" : "0", src);
	if (config_yes(cfg, "CONFIG_PERSISTENT_HUGE_ZERO_FOLIO")) {
		snprintf(src, sizeof(src), "CONFIG_PERSISTENT_HUGE_ZERO_FOLIO=y in %s", p->config);
		kprofile_set(p, "thpsim/huge_zero_page_lifetime", "persistent", src);
	}
	free(cfg);
}

/* ---- probes ---- */

static long resident_pages(void)
{
	char buf[128];
	long size = 0, resident = -1;

	if (sysfile_read("/proc/self/statm", buf, sizeof(buf)) <= 0)
		return -1;
	if (sscanf(buf, "%ld %ld", &size, &resident) != 2)
		return -1;
	return resident;
}

/* Is word a whole word of the kernel's command line? */
static int cmdline_has(const char *word)
{
	char buf[4096];
	size_t w = strlen(word);

	if (sysfile_read("/proc/cmdline", buf, sizeof(buf)) <= 0)
		return 0;
	for (char *p = buf; (p = strstr(p, word)); p += w)
		if ((p == buf || p[-1] == ' ') && (p[w] == ' ' || p[w] == '\n' || !p[w]))
			return 1;
	return 0;
}

/* Does a read fault map the zero page?  Reading 256 untouched 4 KiB
 * pages (no THP) leaves Rss alone where it does and adds 256 pages where
 * read faults allocate. */
#define PROBE_PAGES 256
static void probe_zero_page(struct kprofile *p)
{
	long page = sysconf(_SC_PAGESIZE), before, after;
	size_t len = (size_t)page * PROBE_PAGES;
	volatile char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char src[192];

	if (a == MAP_FAILED) {
		kprofile_set(p, "thpsim/zero_page", "1", "probe failed (mmap), assumed");
		return;
	}
	madvise((void *)a, len, MADV_NOHUGEPAGE);
	before = resident_pages();
	for (size_t off = 0; off < len; off += (size_t)page)
		(void)a[off];
	after = resident_pages();
	munmap((void *)a, len);
	if (before < 0 || after < 0) {
		kprofile_set(p, "thpsim/zero_page", "1", "probe failed (/proc/self/statm), assumed");
		return;
	}
	snprintf(src, sizeof(src), "probe: reading %d untouched pages added %ld to Rss%s",
		 PROBE_PAGES, after - before,
		 after - before < PROBE_PAGES / 2 ? " (the zero page)"
		 : cmdline_has("pvm_no_zero_page=1")
			 ? " (read faults allocate: pvm_no_zero_page=1 on the kernel command line)"
			 : " (read faults allocate: no zero page on this kernel)");
	kprofile_set(p, "thpsim/zero_page", after - before >= PROBE_PAGES / 2 ? "0" : "1", src);
}

/* Which anonymous mappings get a 2 MiB-aligned address?  PROBE_MAPS
 * reservations of 4 MiB (a multiple of 2 MiB) and of 3 MiB (larger, not a
 * multiple), held together so each lands elsewhere; a size counts as
 * aligned only when every one of its mappings is (a randomized address is
 * aligned by chance one time in 512). */
#define PROBE_MAPS 3
static void probe_anon_thp_align(struct kprofile *p)
{
	const size_t pmd = 2UL << 20, len[2] = { 2 * pmd, 3 * pmd / 2 };
	void *map[2][PROBE_MAPS];
	int aligned[2] = { 1, 1 }, failed = 0;
	const char *value;
	char src[192];

	for (int s = 0; s < 2; s++)
		for (int i = 0; i < PROBE_MAPS; i++) {
			map[s][i] = mmap(NULL, len[s], PROT_NONE,
					 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (map[s][i] == MAP_FAILED)
				failed = 1;
			else if ((uintptr_t)map[s][i] & (pmd - 1))
				aligned[s] = 0;
		}
	for (int s = 0; s < 2; s++)
		for (int i = 0; i < PROBE_MAPS; i++)
			if (map[s][i] != MAP_FAILED)
				munmap(map[s][i], len[s]);
	if (failed)
		return; /* the version's value stands */
	value = !aligned[0] ? "none" : aligned[1] ? "pmd-or-larger" : "pmd-multiple";
	snprintf(src, sizeof(src), "probe: %d mappings of 4 MiB %s 2 MiB-aligned, of 3 MiB %s",
		 PROBE_MAPS, aligned[0] ? "all" : "not all", aligned[1] ? "all" : "not all");
	kprofile_set(p, "thpsim/anon_thp_align", value, src);
}

static void host_facts(struct kprofile *p)
{
	static char buf[1 << 14];
	char path[160];

	p->nmissing = 0;
	if (sysfile_read("/proc/vmstat", buf, sizeof(buf)) > 0) {
		for (int i = 0; i < THPS_NR_VM_ITEMS; i++) {
			const char *name = thps_vm_item_name(i);
			size_t k;
			const char *q;
			int found = 0;

			if (!name)
				continue;
			k = strlen(name);
			for (q = buf; q && *q; q = strchr(q, '\n') ? strchr(q, '\n') + 1 : NULL)
				if (!strncmp(q, name, k) && q[k] == ' ') {
					found = 1;
					break;
				}
			if (!found && p->nmissing < KPROFILE_MAX_MISSING)
				snprintf(p->missing[p->nmissing++], sizeof(p->missing[0]), "%s", name);
		}
	}
	/* the PMD size's own enabled file (Linux 6.8+), as the knob table names it */
	snprintf(path, sizeof(path), "/sys/kernel/mm/%s",
		 thps_knob_of_kernel(THPS_KNOB_KERNEL_PMD_MODE));
	p->has_pmd_size_dir = access(path, F_OK) == 0;
	p->has_shrink_underused = access(SYS_THP "shrink_underused", F_OK) == 0;
}

void kprofile_detect(struct kprofile *p)
{
	struct utsname u;
	char why[192];

	memset(p, 0, sizeof(*p));
	if (uname(&u) == 0)
		snprintf(p->release, sizeof(p->release), "%s", u.release);
	if (kprofile_version_of(p->release, p->version, sizeof(p->version)) ||
	    (snprintf(why, sizeof(why), "uname -r: %s", p->release), version_defaults(p, why))) {
		snprintf(p->version, sizeof(p->version), "%s", "6.18");
		snprintf(why, sizeof(why), "uname -r '%s' is not a version the model knows; assumed",
			 p->release);
		version_defaults(p, why);
	}
	from_config(p);
	probe_zero_page(p);
	probe_anon_thp_align(p);
	host_facts(p);
}

const struct kprofile *kprofile_host(void)
{
	static struct kprofile host;
	static int done;

	if (!done) {
		kprofile_detect(&host);
		done = 1;
	}
	return &host;
}

void kprofile_print(const struct kprofile *p, FILE *f, int json)
{
	if (json) {
		struct json j;

		json_init(&j, f, 1);
		json_begin_object(&j, NULL);
		json_string(&j, "release", p->release);
		json_string(&j, "version", p->version);
		json_string(&j, "config", p->config);
		json_begin_array(&j, "items");
		for (int i = 0; i < p->nitems; i++) {
			json_begin_object(&j, NULL);
			json_string(&j, "knob", p->item[i].knob);
			json_string(&j, "value", p->item[i].value);
			json_string(&j, "source", p->item[i].source);
			json_end_object(&j);
		}
		json_end_array(&j);
		json_begin_array(&j, "vmstat_missing");
		for (int i = 0; i < p->nmissing; i++)
			json_string(&j, NULL, p->missing[i]);
		json_end_array(&j);
		json_bool(&j, "hugepages-2048kB", p->has_pmd_size_dir);
		json_bool(&j, "shrink_underused", p->has_shrink_underused);
		json_end_object(&j);
		json_finish(&j);
		return;
	}
	fprintf(f, "kernel    %s\n", p->release);
	fprintf(f, "profile   Linux %s%s%s\n", p->version, p->config[0] ? ", configuration from " : "",
		p->config);
	fprintf(f, "\n%-34s %-16s %s\n", "knob", "value", "from");
	for (int i = 0; i < p->nitems; i++)
		fprintf(f, "%-34s %-16s %s\n", p->item[i].knob, p->item[i].value, p->item[i].source);
	fprintf(f, "\nvmstat items this kernel lacks: ");
	if (!p->nmissing)
		fprintf(f, "none");
	for (int i = 0; i < p->nmissing; i++)
		fprintf(f, "%s%s", i ? ", " : "", p->missing[i]);
	fprintf(f, "\nsysfs: transparent_hugepage/hugepages-2048kB/ %s, shrink_underused %s\n",
		p->has_pmd_size_dir ? "present" : "absent",
		p->has_shrink_underused ? "present" : "absent");
}
