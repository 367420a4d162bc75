/*
 * trace_cmd.c - "thpsim trace dump TRACE": a trace as text, one record a
 * line, after its header.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "trace/trace.h"

static void prot_str(int prot, char out[5])
{
	out[0] = (prot & 1) ? 'r' : '-';
	out[1] = (prot & 2) ? 'w' : '-';
	out[2] = (prot & 4) ? 'x' : '-';
	out[3] = (prot & TRACE_VMA_SHARED) ? 's' : 'p';
	out[4] = 0;
}

static void print_event(const struct trace_event *ev)
{
	static const char *const touch[] = { "read", "write", "populate" };
	char prot[5];

	printf("%12.6f %7d  ", (double)ev->time_ns * 1e-9, ev->pid);
	switch (ev->type) {
	case TR_FAULT:
		printf("FAULT   %s %#" PRIx64 "%s\n", ev->write ? "W" : "R", ev->addr,
		       ev->kernel ? " (kernel)" : "");
		break;
	case TR_PROC:
		printf("PROC\n");
		break;
	case TR_TIME:
		printf("TIME\n");
		break;
	case TR_SYSCALL: {
		const char *name = trace_syscall_name(ev->nr);

		if (name)
			printf("SYSCALL %s(", name);
		else
			printf("SYSCALL #%d(", ev->nr);
		for (int i = 0; i < ev->nargs; i++)
			printf("%s%#" PRIx64, i ? ", " : "", ev->args[i]);
		if (ev->ret < 0 && ev->ret > -4096)
			printf(") = -%s\n", strerror((int)-ev->ret));
		else
			printf(") = %#" PRIx64 "\n", (uint64_t)ev->ret);
		break;
	}
	case TR_FORK:
		printf("FORK    child %d, clone flags %#" PRIx64 "%s\n", ev->child, ev->clone_flags,
		       (ev->clone_flags & 0x10000) ? " (thread)"
		       : (ev->clone_flags & 0x100) ? " (shares the address space)" : "");
		break;
	case TR_EXEC:
		printf("EXEC    %s start_brk=%#" PRIx64 " brk=%#" PRIx64 " stack_limit=%" PRIu64 "\n",
		       ev->name, ev->start_brk, ev->brk, ev->stack_limit);
		break;
	case TR_VMA:
		prot_str(ev->prot, prot);
		printf("VMA     %#" PRIx64 "-%#" PRIx64 " %s %s %s\n", ev->addr, ev->addr + ev->len,
		       prot, trace_vma_kind_name(ev->kind), ev->name);
		break;
	case TR_TOUCH:
		printf("TOUCH   %s %#" PRIx64 "-%#" PRIx64 "\n", touch[ev->kind], ev->addr,
		       ev->addr + ev->len);
		break;
	case TR_EXIT:
		printf("EXIT    status %" PRId64 "\n", ev->status);
		break;
	case TR_LOST:
		printf("LOST    %" PRIu64 " events\n", ev->count);
		break;
	case TR_KFIG:
		printf("KFIG   ");
		for (int i = 0; i < ev->nkfig; i++)
			printf(" %s=%" PRIu64, ev->kfig[i].name, ev->kfig[i].kb);
		printf(" (kB)\n");
		break;
	case TR_NOTE:
		printf("NOTE    %s\n", ev->name);
		break;
	case TR_CALLER:
		printf("CALLER  %s\n", ev->name);
		break;
	case TR_ACCESS:
		if (ev->kind == TRACE_ACCESS_REGION) {
			printf("ACCESS  0x%" PRIx64 " +%" PRIu64 " kB nr_accesses %" PRIu64 "\n",
			       ev->addr, ev->len >> 10, ev->count);
			break;
		}
		printf("ACCESS  end: %" PRIu64 " us, %" PRIu64 " checks", ev->acc.interval_us,
		       ev->acc.checks);
		if (ev->acc.truth)
			printf("; kernel: %" PRIu64 " kB present, %" PRIu64 " kB PMD THP, %" PRIu64
			       " kB smaller THP",
			       ev->acc.present_kb, ev->acc.pmd_kb, ev->acc.mthp_kb);
		printf("\n");
		break;
	case TR_END:
		printf("END     %" PRIu64 " records, %" PRIu64 " faults\n", ev->count, ev->faults);
		break;
	}
}

static int dump(const char *path, uint64_t limit, int header_only)
{
	static struct trace_reader r;
	static struct trace_event ev;
	uint64_t n = 0;
	int err;

	err = trace_reader_open(&r, path);
	if (err) {
		fprintf(stderr, "thpsim: trace dump: %s\n", r.err);
		return 2; /* an input error */
	}
	for (int i = 0; i < r.header.n; i++)
		printf("%s=%s\n", r.header.key[i], r.header.value[i]);
	if (header_only) {
		trace_reader_close(&r);
		return 0;
	}
	printf("\n%12s %7s  record\n", "time s", "pid");
	while ((err = trace_next(&r, &ev)) > 0) {
		if (ev.type == TR_PROC || ev.type == TR_TIME)
			continue;
		if (limit && n >= limit) {
			printf("... (--limit %" PRIu64 ")\n", limit);
			trace_reader_close(&r);
			return 0;
		}
		print_event(&ev);
		n++;
	}
	trace_reader_close(&r);
	if (err < 0) {
		fflush(stdout);
		fprintf(stderr, "thpsim: trace dump: %s\n", r.err);
		return 2; /* an input error */
	}
	return 0;
}

int cmd_trace(int argc, char **argv)
{
	const char *path = NULL;
	uint64_t limit = 0;
	int header_only = 0;

	if (argc < 2 || strcmp(argv[1], "dump"))
		return cli_usage("usage: thpsim trace dump TRACE [--limit N] [--header]");
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
			if (cli_parse_u64(argv[++i], &limit))
				return cli_usage("trace dump: --limit takes a number");
		} else if (!strcmp(argv[i], "--header")) {
			header_only = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_bad_option("trace dump", argv[i], "usage: thpsim trace dump TRACE "
					      "[--limit N] [--header]");
		} else if (!path) {
			path = argv[i];
		} else {
			return cli_usage("trace dump: one TRACE at a time");
		}
	}
	if (!path)
		return cli_usage("usage: thpsim trace dump TRACE [--limit N] [--header]");
	return dump(path, limit, header_only);
}
