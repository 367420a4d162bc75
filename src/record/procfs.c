/*
 * procfs.c - what the recorder reads from /proc and /sys.
 *
 *  - The THP settings of the machine (/sys/kernel/mm/transparent_hugepage),
 *    kept in the trace header so that a replay predicts what the program
 *    would have seen on the machine it was recorded on.
 *  - The address space an exec leaves (/proc/PID/maps), with the pages
 *    already present in its anonymous mappings (/proc/PID/pagemap): the
 *    stack pages holding argv, envp and auxv, written by the kernel without
 *    page faults.  The break (/proc/PID/stat start_brk) and the stack limit
 *    (/proc/PID/limits) complete it.
 *  - What the kernel reports for a process (/proc/PID/smaps_rollup and
 *    status), read when it exits: the reference a replay is checked against.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

/* "always [madvise] never" -> "madvise"; "511\n" -> "511". */
static void setting_value(char *s)
{
	char *open = strchr(s, '['), *close;

	if (open && (close = strchr(open, ']'))) {
		*close = 0;
		memmove(s, open + 1, (size_t)(close - open));
		return;
	}
	s[strcspn(s, "\n")] = 0;
}

static void read_settings_dir(struct trace_header *h, const char *dir, const char *prefix,
			      int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *names[256];
	int n = 0;

	if (!d)
		return;
	while ((de = readdir(d)) && n < 256)
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	/* a stable order: sorted by name */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && names[j] && names[j - 1] && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		char path[512], key[256], val[256];
		struct stat st;
		FILE *f;

		if (!names[i])
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(key, sizeof(key), "%s/%s", prefix, names[i]);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (depth < 1)
				read_settings_dir(h, path, key, depth + 1);
		} else if (stat(path, &st) == 0 && (st.st_mode & S_IWUSR) && (f = fopen(path, "r"))) {
			/* writable files are settings; read-only ones are counters */
			if (fgets(val, sizeof(val), f)) {
				setting_value(val);
				trace_header_add(h, key, val);
			}
			fclose(f);
		}
		free(names[i]);
	}
}

void rec_read_thp_settings(struct trace_header *h)
{
	read_settings_dir(h, THP_DIR, "transparent_hugepage", 0);
}

/*
 * The memory cgroup's limits.  cgroup v2: the "0::PATH" line of
 * /proc/self/cgroup, files memory.max, memory.high and memory.swap.max
 * under /sys/fs/cgroup/PATH.  cgroup v1: the "N:memory:PATH" line, files
 * memory.limit_in_bytes and memory.memsw.limit_in_bytes (memory and swap
 * together: its excess over the first is the swap allowed) under
 * /sys/fs/cgroup/memory/PATH; v1 has no memory.high.  A limit applies from
 * every ancestor, so each is the lowest along the path; v1 writes "no
 * limit" as a number near 2^63.
 */
#define CG_NOLIMIT UINT64_MAX

static uint64_t cg_read(const char *dir, const char *file)
{
	char path[1024], buf[64];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return CG_NOLIMIT;
	if (!fgets(buf, sizeof(buf), f) || !strncmp(buf, "max", 3) ||
	    sscanf(buf, "%llu", &v) != 1 || v >= (1ULL << 62))
		v = CG_NOLIMIT;
	fclose(f);
	return v;
}

/* The lowest value of file along root/path and its ancestors. */
static uint64_t cg_lowest(const char *root, const char *path, const char *file)
{
	char dir[1024];
	uint64_t low = CG_NOLIMIT;

	snprintf(dir, sizeof(dir), "%s%s", root, path);
	for (;;) {
		uint64_t v = cg_read(dir, file);
		char *slash;

		if (v < low)
			low = v;
		slash = strrchr(dir + strlen(root), '/');
		if (!slash)
			break;
		*slash = 0;
	}
	return low;
}

static void cg_add(struct trace_header *h, const char *key, uint64_t v)
{
	char buf[32];

	if (v == CG_NOLIMIT)
		snprintf(buf, sizeof(buf), "max");
	else
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	trace_header_add(h, key, buf);
}

void rec_read_cgroup_limits(struct trace_header *h)
{
	char line[1024], v2[1024] = "", v1[1024] = "";
	FILE *f = fopen("/proc/self/cgroup", "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = 0;
		if (!strncmp(line, "0::", 3))
			snprintf(v2, sizeof(v2), "%s", line + 3);
		else if (strstr(line, ":memory:"))
			snprintf(v1, sizeof(v1), "%s", strstr(line, ":memory:") + 8);
	}
	if (f)
		fclose(f);
	if (v2[0] && access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
		const char *root = "/sys/fs/cgroup";
		const char *p = strcmp(v2, "/") ? v2 : ""; /* the root has no limit files */

		trace_header_add(h, "cgroup", v2);
		cg_add(h, "cgroup/memory.max", cg_lowest(root, p, "memory.max"));
		cg_add(h, "cgroup/memory.high", cg_lowest(root, p, "memory.high"));
		cg_add(h, "cgroup/memory.swap.max", cg_lowest(root, p, "memory.swap.max"));
	} else if (v1[0]) {
		const char *root = "/sys/fs/cgroup/memory";
		const char *p = strcmp(v1, "/") ? v1 : "";
		uint64_t max = cg_lowest(root, p, "memory.limit_in_bytes");
		uint64_t memsw = cg_lowest(root, p, "memory.memsw.limit_in_bytes");

		trace_header_add(h, "cgroup", v1);
		cg_add(h, "cgroup/memory.max", max);
		cg_add(h, "cgroup/memory.high", CG_NOLIMIT);
		cg_add(h, "cgroup/memory.swap.max",
		       memsw == CG_NOLIMIT ? CG_NOLIMIT : memsw > max ? memsw - max : 0);
	}
}

/* Field n (1-based) of /proc/PID/stat, after the command name. */
static int stat_field(pid_t pid, int n, uint64_t *out)
{
	char path[64], buf[2048], *p;
	FILE *f;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	/* field 3 starts after ") " */
	p += 2;
	for (int i = 3; i < n; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -EINVAL;
		p++;
	}
	*out = strtoull(p, NULL, 10);
	return 0;
}

static uint64_t stack_limit(pid_t pid)
{
	char path[64], line[256];
	uint64_t v = 8ULL << 20;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/limits", pid);
	f = fopen(path, "r");
	if (!f)
		return v;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Max stack size", 14)) {
			char *p = line + 14;

			while (*p == ' ')
				p++;
			v = !strncmp(p, "unlimited", 9) ? UINT64_MAX : strtoull(p, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* Write TOUCH (write) records for the present pages of [start, end); in a
 * file mapping, for its anonymous copies only (present, bit 61 clear: the
 * kernel wrote them during exec, as the loader zeroes the end of .data). */
static void write_present(struct trace_writer *w, int pagemap, uint64_t start, uint64_t end,
			  int file)
{
	uint64_t buf[512], run = 0, run_start = 0;

	for (uint64_t a = start; a < end;) {
		uint64_t n = (end - a) >> 12;
		ssize_t got;

		if (n > 512)
			n = 512;
		got = pread(pagemap, buf, n * 8, (off_t)((a >> 12) * 8));
		if (got <= 0)
			break;
		n = (uint64_t)got / 8;
		for (uint64_t i = 0; i < n; i++, a += 4096) {
			if ((buf[i] >> 63) && !(file && ((buf[i] >> 61) & 1))) {
				if (!run)
					run_start = a;
				run++;
			} else if (run) {
				trace_write_touch(w, run_start, run << 12, TRACE_TOUCH_WRITE);
				run = 0;
			}
		}
	}
	if (run)
		trace_write_touch(w, run_start, run << 12, TRACE_TOUCH_WRITE);
}

int rec_write_exec_snapshot(struct trace_writer *w, pid_t pid)
{
	char path[64], exe[1024] = "", line[4096 + 256];
	uint64_t start_brk = 0, brk;
	FILE *maps;
	int pagemap;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	stat_field(pid, 47, &start_brk);
	brk = start_brk;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	maps = fopen(path, "r");
	if (!maps)
		return -errno;
	/* the break: the end of [heap] when the kernel made one */
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long s, e;

		if (strstr(line, "[heap]") && sscanf(line, "%llx-%llx", &s, &e) == 2)
			brk = e;
	}
	trace_write_exec(w, exe, start_brk, brk, stack_limit(pid));
	rewind(maps);
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	pagemap = open(path, O_RDONLY | O_CLOEXEC);
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long s, e, off, ino;
		char perms[8], dev[32], name[4096 + 64] = "";
		int prot = 0, kind;

		if (sscanf(line, "%llx-%llx %7s %llx %31s %llu %4159[^\n]", &s, &e, perms, &off, dev,
			   &ino, name) < 6)
			continue;
		{
			char *p = name;

			while (*p == ' ')
				p++;
			memmove(name, p, strlen(p) + 1);
		}
		prot = (perms[0] == 'r' ? 1 : 0) | (perms[1] == 'w' ? 2 : 0) |
		       (perms[2] == 'x' ? 4 : 0) | (perms[3] == 's' ? TRACE_VMA_SHARED : 0);
		if (!strcmp(name, "[stack]"))
			kind = TRACE_VMA_STACK;
		else if (!strcmp(name, "[heap]"))
			kind = TRACE_VMA_HEAP;
		else if (name[0] == '[')
			kind = TRACE_VMA_SPECIAL;
		else if (!name[0] && ino == 0)
			kind = TRACE_VMA_ANON;
		else
			kind = TRACE_VMA_FILE;
		trace_write_vma(w, s, e - s, prot, kind,
				kind == TRACE_VMA_FILE || kind == TRACE_VMA_SPECIAL ? name : "");
		if (pagemap >= 0 && (kind <= TRACE_VMA_HEAP || kind == TRACE_VMA_FILE) &&
		    !(prot & TRACE_VMA_SHARED))
			write_present(w, pagemap, s, e, kind == TRACE_VMA_FILE);
	}
	if (pagemap >= 0)
		close(pagemap);
	fclose(maps);
	return 0;
}

static int read_kb_fields(const char *path, const char *const *names, int nnames,
			  struct trace_kfig *k, int n, int max)
{
	char line[256];
	FILE *f = fopen(path, "r");

	if (!f)
		return n;
	while (fgets(line, sizeof(line), f) && n < max) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		*colon = 0;
		for (int i = 0; i < nnames; i++) {
			if (!strcmp(line, names[i])) {
				snprintf(k[n].name, sizeof(k[n].name), "%s", names[i]);
				k[n].kb = strtoull(colon + 1, NULL, 10);
				n++;
				break;
			}
		}
	}
	fclose(f);
	return n;
}

int rec_read_smaps_rollup(pid_t pid, struct trace_kfig *k, int max)
{
	static const char *const rollup[] = { "Rss", "Pss", "Pss_Anon", "Shared_Clean",
					      "Shared_Dirty", "Private_Clean", "Private_Dirty",
					      "Anonymous", "AnonHugePages" };
	static const char *const status[] = { "VmSize", "VmRSS", "RssAnon", "RssFile",
					      "VmHWM", "VmPTE" };
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	n = read_kb_fields(path, rollup, 9, k, 0, max);
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return read_kb_fields(path, status, 6, k, n, max);
}

/* A VMA's header line of smaps: "start-end perms offset dev inode name". */
static int smaps_header(const char *line, struct rec_vma *v)
{
	unsigned long long s, e;
	int name = 0;

	if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &s, &e, &name) < 2 || !name)
		return 0;
	*v = (struct rec_vma){ .start = s, .end = e };
	snprintf(v->name, sizeof(v->name), "%s", line + name);
	v->name[strcspn(v->name, "\n")] = 0;
	return 1;
}

static int keep_vma(const struct rec_vma *v)
{
	return v->anon_kb || v->anon_huge_kb ||
	       ((!v->name[0] || v->name[0] == '[') && v->end - v->start >= (1ULL << 20));
}

int rec_read_smaps_vmas(pid_t pid, struct rec_vma **out)
{
	struct rec_vma cur, *v = NULL;
	char path[64], line[512];
	int n = 0, cap = 0, have = 0;
	FILE *f;

	*out = NULL;
	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	for (int more = 1; more;) {
		more = fgets(line, sizeof(line), f) != NULL;
		if (more && !smaps_header(line, &(struct rec_vma){ 0 })) {
			unsigned long long kb;

			if (have && sscanf(line, "Anonymous: %llu kB", &kb) == 1)
				cur.anon_kb = kb;
			else if (have && sscanf(line, "AnonHugePages: %llu kB", &kb) == 1)
				cur.anon_huge_kb = kb;
			continue;
		}
		if (have && keep_vma(&cur)) {
			if (n == cap) {
				struct rec_vma *nv = realloc(v, (size_t)(cap = cap ? cap * 2 : 32) * sizeof(*v));

				if (!nv) {
					free(v);
					fclose(f);
					return -ENOMEM;
				}
				v = nv;
			}
			v[n++] = cur;
		}
		have = more && smaps_header(line, &cur);
	}
	fclose(f);
	*out = v;
	return n;
}
