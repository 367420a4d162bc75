/*
 * callers.c - `record --callers`: who made each mapping call.
 *
 * perf.c has sys_enter sample the user call chain (walked by the kernel
 * through frame pointers) and the word at the user stack pointer.  Here a
 * sample is taken apart (rec_parse_sample) and, when its call made a
 * mapping (mmap, brk, mremap), the chain becomes one line of text for a
 * CALLER record (rec_symbols_chain): "mmap64 <- make_big_map <- main".
 *
 * Frame pointers.  The innermost frame is the system call's own address,
 * in libc's wrapper; the chain then follows the frame pointer, which a
 * leaf wrapper leaves untouched, so its caller's frame is skipped (the
 * first return address found is the caller's caller's).  A leaf wrapper
 * pushes nothing either, so the word at the stack pointer is the return
 * address into that caller: it is put back as the second frame when it
 * falls in a function of a mapped file.  Code built without frame
 * pointers (most of libc, most distributions' programs) can stop the
 * chain early or add a wrong frame; DWARF unwinding of a copy of the
 * stack (PERF_SAMPLE_STACK_USER with libdwfl's unwinder) would not, and
 * is not done.
 *
 * Symbols.  With elfutils' libdwfl (HAVE_LIBDW: the Makefile finds
 * <elfutils/libdwfl.h>), each process's mapped files are reported from
 * /proc/PID/maps (again when an address falls in none) and an address
 * is named by the symbol that covers it (.symtab, else .dynsym): a
 * stripped program's own functions have none.  Without a name, or
 * without libdw, a frame is "file+0xoffset" (the offset in the file, as
 * /proc/PID/maps gives the mapping's), or "0xaddress" when no mapping
 * holds it (the process is gone: the symbols are read while the recorder
 * writes the call, usually while the program still runs).
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

#ifdef HAVE_LIBDW
#include <elfutils/libdwfl.h>
#include <gelf.h>
#endif

int rec_parse_sample(const struct rec_perf *pp, const uint8_t *p, size_t len,
		     struct rec_sample *s)
{
	const uint8_t *end = p + len;
	int enter = 0;

	memset(s, 0, sizeof(*s));
	if (pp->callers) {
		uint64_t id;

		if (len < 8)
			return -1;
		id = rec_rd64(p);
		p += 8;
		for (int c = 0; c < pp->ncpus && !enter; c++)
			enter = pp->enter_id[c] == id;
	}
	if (end - p < 16)
		return -1;
	s->pid = (int32_t)rec_rd32(p);
	s->tid = (int32_t)rec_rd32(p + 4);
	s->t = rec_rd64(p + 8);
	p += 16;
	if (enter) {
		uint64_t nr;

		if (end - p < 8)
			return -1;
		nr = rec_rd64(p);
		p += 8;
		if (nr > (uint64_t)(end - p) / 8)
			return -1;
		s->nchain = 1; /* [0]: the word at the stack pointer, below */
		for (uint64_t i = 0; i < nr && s->nchain <= REC_CHAIN_MAX; i++)
			if (rec_rd64(p + 8 * i) < PERF_CONTEXT_MAX && rec_rd64(p + 8 * i))
				s->chain[s->nchain++] = rec_rd64(p + 8 * i);
		p += 8 * nr;
	}
	if (end - p < 4)
		return -1;
	s->raw_size = rec_rd32(p);
	s->raw = p + 4;
	if (s->raw_size < 8 || s->raw_size > (uint64_t)(end - s->raw))
		return -1;
	p = s->raw + s->raw_size;
	/* the stack dump: size, that many bytes, the size dumped */
	if (enter && end - p >= 16 && rec_rd64(p) >= 8 && rec_rd64(p + 8 + rec_rd64(p)) >= 8)
		s->chain[0] = rec_rd64(p + 8);
	return 0;
}

/* ---- naming a frame from /proc/PID/maps alone ---- */

/* "file+0xoffset" for addr in pid's maps: 0, or -1 when none holds it. */
static int name_by_maps(pid_t pid, uint64_t addr, int exec_only, char *out, size_t len)
{
	char path[64], line[4096];
	FILE *f;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int at = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &lo, &hi, perms, &off, &at) < 4 ||
		    addr < lo || addr >= hi)
			continue;
		if (exec_only && perms[2] != 'x')
			break;
		char *name = line + at, *slash;

		name += strspn(name, " ");
		name[strcspn(name, "\n")] = 0;
		if (!*name)
			break; /* anonymous memory: JIT code, or not code */
		slash = strrchr(name, '/');
		snprintf(out, len, "%s+0x%llx", slash ? slash + 1 : name, addr - lo + off);
		found = 0;
	}
	fclose(f);
	return found;
}

#ifdef HAVE_LIBDW
/* A process's files as libdwfl knows them; a few processes at a time. */
#define SYM_CACHE 16
struct rec_symbols {
	struct {
		pid_t pid;
		Dwfl *dwfl;
		uint64_t used;
	} c[SYM_CACHE];
	uint64_t clock;
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

struct rec_symbols *rec_symbols_new(void)
{
	return calloc(1, sizeof(struct rec_symbols));
}

static void drop(struct rec_symbols *sy, int i)
{
	if (sy->c[i].dwfl)
		dwfl_end(sy->c[i].dwfl);
	memset(&sy->c[i], 0, sizeof(sy->c[i]));
}

void rec_symbols_forget(struct rec_symbols *sy, pid_t pid)
{
	for (int i = 0; sy && i < SYM_CACHE; i++)
		if (sy->c[i].dwfl && sy->c[i].pid == pid)
			drop(sy, i);
}

void rec_symbols_free(struct rec_symbols *sy)
{
	for (int i = 0; sy && i < SYM_CACHE; i++)
		drop(sy, i);
	free(sy);
}

/* Report pid's mapped files (again): 0, or -1 when its maps are gone. */
static int report(Dwfl *d, pid_t pid)
{
	dwfl_report_begin(d);
	if (dwfl_linux_proc_report(d, pid) != 0) {
		dwfl_report_end(d, NULL, NULL);
		return -1;
	}
	return dwfl_report_end(d, NULL, NULL) == 0 ? 0 : -1;
}

static Dwfl *dwfl_of(struct rec_symbols *sy, pid_t pid)
{
	int victim = 0;

	for (int i = 0; i < SYM_CACHE; i++) {
		if (sy->c[i].dwfl && sy->c[i].pid == pid) {
			sy->c[i].used = ++sy->clock;
			return sy->c[i].dwfl;
		}
		if (sy->c[i].used < sy->c[victim].used)
			victim = i;
	}
	drop(sy, victim);
	sy->c[victim].dwfl = dwfl_begin(&proc_callbacks);
	if (!sy->c[victim].dwfl)
		return NULL;
	if (report(sy->c[victim].dwfl, pid)) {
		drop(sy, victim);
		return NULL;
	}
	sy->c[victim].pid = pid;
	sy->c[victim].used = ++sy->clock;
	return sy->c[victim].dwfl;
}

/* The function that holds addr, or NULL. */
static const char *function_at(Dwfl *d, pid_t pid, uint64_t addr, int *refreshed)
{
	Dwfl_Module *m = d ? dwfl_addrmodule(d, addr) : NULL;
	GElf_Sym sym;
	GElf_Off off;
	const char *name;

	if (!m && d && !*refreshed) {
		*refreshed = 1; /* mapped since: dlopen, or a new exec */
		if (report(d, pid) == 0)
			m = dwfl_addrmodule(d, addr);
	}
	if (!m)
		return NULL;
	name = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
	return name && GELF_ST_TYPE(sym.st_info) == STT_FUNC ? name : NULL;
}
#else
struct rec_symbols {
	int unused;
};

struct rec_symbols *rec_symbols_new(void)
{
	return calloc(1, sizeof(struct rec_symbols));
}

void rec_symbols_forget(struct rec_symbols *sy, pid_t pid)
{
}

void rec_symbols_free(struct rec_symbols *sy)
{
	free(sy);
}
#endif

/* One frame's name into out: a function, file+0xoffset, or 0xaddress. */
static void frame_name(struct rec_symbols *sy, pid_t pid, uint64_t addr, int ret,
		       int *refreshed, char *out, size_t len)
{
	/* a return address is past its call: name the call's byte */
	uint64_t at = ret && addr ? addr - 1 : addr;
#ifdef HAVE_LIBDW
	const char *fn = function_at(dwfl_of(sy, pid), pid, at, refreshed);

	if (fn) {
		/* without its version: "pthread_create", not "...@GLIBC_2.2.5" */
		snprintf(out, len, "%.*s", (int)strcspn(fn, "@"), fn);
		return;
	}
#endif
	if (name_by_maps(pid, at, 0, out, len) != 0)
		snprintf(out, len, "0x%" PRIx64, addr);
}

/* Whether the word at the stack pointer is a return address to keep. */
static int stack_word_is_return(struct rec_symbols *sy, pid_t pid, const struct rec_sample *s,
				int *refreshed)
{
	uint64_t w = s->chain[0];

	if (!w || s->nchain < 2 || (s->nchain > 2 && s->chain[2] == w))
		return 0;
#ifdef HAVE_LIBDW
	return function_at(dwfl_of(sy, pid), pid, w - 1, refreshed) != NULL;
#else
	char name[256];

	(void)refreshed;
	return name_by_maps(pid, w - 1, 1, name, sizeof(name)) == 0;
#endif
}

int rec_symbols_named(void)
{
#ifdef HAVE_LIBDW
	return 1;
#else
	return 0;
#endif
}

size_t rec_symbols_chain(struct rec_symbols *sy, pid_t pid, const struct rec_sample *s, char *out,
			 size_t len)
{
	uint64_t frames[REC_CHAIN_MAX + 1];
	int n = 0, refreshed = 0;
	size_t used = 0;

	if (s->nchain < 2 || len == 0)
		return 0;
	frames[n++] = s->chain[1];
	if (stack_word_is_return(sy, pid, s, &refreshed))
		frames[n++] = s->chain[0];
	for (int i = 2; i < s->nchain; i++)
		frames[n++] = s->chain[i];
	char last[256] = "";

	out[0] = 0;
	for (int i = 0; i < n; i++) {
		char name[256];
		int w;

		frame_name(sy, pid, frames[i], i > 0, &refreshed, name, sizeof(name));
		/* the same function twice in a row (a recursion, or the
		 * stack word that was the chain's next frame after all) */
		if (i > 0 && !strcmp(name, last))
			continue;
		snprintf(last, sizeof(last), "%s", name);
		w = snprintf(out + used, len - used, "%s%s", i ? " <- " : "", name);
		if (w < 0 || (size_t)w >= len - used) {
			out[used] = 0;
			break;
		}
		used += (size_t)w;
	}
	return used;
}
