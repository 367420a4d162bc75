/*
 * perf.c - the kernel's tracepoints through perf_event_open(2).
 *
 * The recorder opens one perf event per tracepoint on the program it starts
 * (pid, any CPU), disabled until the program execs (enable_on_exec) and
 * inherited by every task it creates (inherit): the kernel then writes the
 * samples of the program and all its descendants, threads included, into
 * the ring buffer of the first event, which every other event shares
 * (PERF_EVENT_IOC_SET_OUTPUT).  Each sample carries the task's pid and tid,
 * a CLOCK_MONOTONIC time and the tracepoint's raw record, whose first field
 * (common_type) tells which tracepoint it is.
 *
 * Field offsets are read from tracefs (events/SYSTEM/NAME/format) rather
 * than assumed, so a kernel that moves a field is read correctly, and one
 * that lacks a field is refused by name.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

static const struct {
	const char *system, *name;
} tracepoints[NR_REC_EVENTS] = {
	[EV_FAULT_USER] = { "exceptions", "page_fault_user" },
	[EV_FAULT_KERNEL] = { "exceptions", "page_fault_kernel" },
	[EV_SYS_ENTER] = { "raw_syscalls", "sys_enter" },
	[EV_SYS_EXIT] = { "raw_syscalls", "sys_exit" },
	[EV_NEWTASK] = { "task", "task_newtask" },
	[EV_EXEC] = { "sched", "sched_process_exec" },
	[EV_EXIT] = { "sched", "sched_process_exit" },
};

static int dir_has_events(const char *dir)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/events", dir);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Read a tracepoint's format file into buf. */
static int read_format(const struct rec_perf *pp, int ev, char *buf, size_t len)
{
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/events/%s/%s/format", pp->tracefs, tracepoints[ev].system,
		 tracepoints[ev].name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
	return 0;
}

/* Offset of field "name" in a format text, or -1. */
static int field_offset(const char *fmt, const char *name)
{
	char want[64];
	const char *p = fmt;

	snprintf(want, sizeof(want), " %s;", name);
	while ((p = strstr(p, "field:"))) {
		const char *end = strchr(p, '\n'), *hit = strstr(p, want), *off;

		if (!end)
			break;
		if (hit && hit < end && (off = strstr(hit, "offset:")) && off < end)
			return atoi(off + 7);
		/* arrays: "unsigned long args[6];" */
		snprintf(want, sizeof(want), " %s[", name);
		hit = strstr(p, want);
		if (hit && hit < end && (off = strstr(hit, "offset:")) && off < end)
			return atoi(off + 7);
		snprintf(want, sizeof(want), " %s;", name);
		p = end;
	}
	return -1;
}

int rec_tracing_setup(struct rec_perf *pp, char *why, size_t whylen)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char fmt[4096];

	memset(pp, 0, sizeof(*pp));
	if (geteuid() != 0) {
		snprintf(why, whylen,
			 "recording needs root: it opens kernel tracepoints with perf_event_open "
			 "and follows the program with ptrace (run it with sudo)");
		return -EPERM;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !pp->tracefs[0]; i++)
		if (dir_has_events(dirs[i]))
			snprintf(pp->tracefs, sizeof(pp->tracefs), "%s", dirs[i]);
	if (!pp->tracefs[0]) {
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0) {
			snprintf(why, whylen,
				 "tracefs is not mounted and mounting it on /sys/kernel/tracing "
				 "failed (%s); mount it with 'mount -t tracefs nodev "
				 "/sys/kernel/tracing' (the kernel needs CONFIG_TRACING)",
				 strerror(errno));
			return -ENOENT;
		}
		pp->mounted = 1;
		snprintf(pp->tracefs, sizeof(pp->tracefs), "/sys/kernel/tracing");
		if (!dir_has_events(pp->tracefs)) {
			snprintf(why, whylen, "tracefs mounted on /sys/kernel/tracing has no events/ "
					      "directory: the kernel has no tracepoints "
					      "(CONFIG_TRACEPOINTS)");
			return -ENOENT;
		}
	}
	for (int ev = 0; ev < NR_REC_EVENTS; ev++) {
		char path[256];
		FILE *f;

		snprintf(path, sizeof(path), "%s/events/%s/%s/id", pp->tracefs,
			 tracepoints[ev].system, tracepoints[ev].name);
		f = fopen(path, "r");
		if (!f || fscanf(f, "%d", &pp->f.id[ev]) != 1) {
			snprintf(why, whylen, "the kernel has no tracepoint %s:%s (%s: %s)%s",
				 tracepoints[ev].system, tracepoints[ev].name, path,
				 f ? "unreadable" : strerror(errno),
				 ev <= EV_FAULT_KERNEL ? "; page-fault tracepoints need x86 and "
							 "CONFIG_TRACING" : "");
			if (f)
				fclose(f);
			return -ENOENT;
		}
		fclose(f);
		if (read_format(pp, ev, fmt, sizeof(fmt))) {
			snprintf(why, whylen, "cannot read the format of %s:%s",
				 tracepoints[ev].system, tracepoints[ev].name);
			return -ENOENT;
		}
		switch (ev) {
		case EV_FAULT_USER:
		case EV_FAULT_KERNEL:
			pp->f.fault_address = field_offset(fmt, "address");
			pp->f.fault_error_code = field_offset(fmt, "error_code");
			if (pp->f.fault_address < 0 || pp->f.fault_error_code < 0)
				goto nofield;
			break;
		case EV_SYS_ENTER:
			pp->f.enter_id = field_offset(fmt, "id");
			pp->f.enter_args = field_offset(fmt, "args");
			if (pp->f.enter_id < 0 || pp->f.enter_args < 0)
				goto nofield;
			break;
		case EV_SYS_EXIT:
			pp->f.exit_id = field_offset(fmt, "id");
			pp->f.exit_ret = field_offset(fmt, "ret");
			if (pp->f.exit_id < 0 || pp->f.exit_ret < 0)
				goto nofield;
			break;
		case EV_NEWTASK:
			pp->f.newtask_pid = field_offset(fmt, "pid");
			pp->f.newtask_flags = field_offset(fmt, "clone_flags");
			if (pp->f.newtask_pid < 0 || pp->f.newtask_flags < 0)
				goto nofield;
			break;
		case EV_EXIT:
			pp->f.exit_group_dead = field_offset(fmt, "group_dead");
			break;
		default:
			break;
		}
		continue;
nofield:
		snprintf(why, whylen, "tracepoint %s:%s lacks a field the recorder reads",
			 tracepoints[ev].system, tracepoints[ev].name);
		return -ENOENT;
	}
	return 0;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			   unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

/*
 * --callers: sys_enter also samples the user call chain (frame pointers:
 * a function built without them, as most of libc, hides its caller) and
 * the 8 bytes at the user stack pointer, which at a system call made from
 * a leaf wrapper (mmap, brk) are its return address: the frame the chain
 * misses.  Every event then carries its id first, because the samples of
 * all events share one ring and only sys_enter's have the extra fields.
 */
static void attr_callers(struct perf_event_attr *attr, int ev)
{
	attr->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (ev != EV_SYS_ENTER)
		return;
	attr->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER;
	attr->exclude_callchain_kernel = 1;
	attr->sample_max_stack = REC_CHAIN_MAX;
	attr->sample_stack_user = 8;
}

int rec_perf_open(struct rec_perf *pp, pid_t pid, const int *syscalls, int nsyscalls,
		  size_t ring_mib, int callers, char *why, size_t whylen)
{
	long page = sysconf(_SC_PAGESIZE);
	long ncpus = sysconf(_SC_NPROCESSORS_CONF);
	size_t ring = (size_t)1 << 20;
	char filter[1024];
	size_t n = 0;

	if (ncpus < 1 || ncpus > REC_MAX_CPUS) {
		snprintf(why, whylen, "%ld CPUs: the recorder handles 1 to %d", ncpus, REC_MAX_CPUS);
		return -EINVAL;
	}
	while (ring < ring_mib << 20)
		ring <<= 1;
	pp->fd = malloc((size_t)ncpus * sizeof(*pp->fd));
	pp->ring = calloc((size_t)ncpus, sizeof(*pp->ring));
	pp->tmp_size = 1 << 16;
	pp->tmp = malloc(pp->tmp_size);
	pp->callers = callers;
	pp->enter_id = calloc((size_t)ncpus, sizeof(*pp->enter_id));
	if (!pp->fd || !pp->ring || !pp->tmp || !pp->enter_id) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	for (long c = 0; c < ncpus; c++)
		for (int ev = 0; ev < NR_REC_EVENTS; ev++)
			pp->fd[c][ev] = -1;
	pp->ncpus = (int)ncpus;
	pp->ring_size = ring;
	for (int i = 0; i < nsyscalls && n < sizeof(filter) - 32; i++)
		n += (size_t)snprintf(filter + n, sizeof(filter) - n, "%sid == %d", i ? " || " : "",
				      syscalls[i]);
	for (int c = 0; c < pp->ncpus; c++) {
		for (int ev = 0; ev < NR_REC_EVENTS; ev++) {
			struct perf_event_attr attr;
			int fd;

			memset(&attr, 0, sizeof(attr));
			attr.size = sizeof(attr);
			attr.type = PERF_TYPE_TRACEPOINT;
			attr.config = (uint64_t)pp->f.id[ev];
			attr.sample_period = 1;
			attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
			attr.disabled = 1;
			attr.enable_on_exec = 1;
			attr.inherit = 1;
			attr.sample_id_all = 1;
			attr.use_clockid = 1;
			attr.clockid = CLOCK_MONOTONIC;
			attr.watermark = 1;
			attr.wakeup_watermark = (uint32_t)(ring / 4);
			if (callers)
				attr_callers(&attr, ev);
			fd = perf_event_open(&attr, pid, c, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0 && ev == 0 && errno == ENODEV)
				break; /* an offline CPU */
			if (fd < 0) {
				int err = errno;

				snprintf(why, whylen, "perf_event_open of %s:%s on CPU %d failed: %s%s",
					 tracepoints[ev].system, tracepoints[ev].name, c,
					 strerror(err),
					 err == EACCES || err == EPERM
						 ? " (needs root or CAP_PERFMON; see "
						   "/proc/sys/kernel/perf_event_paranoid)"
						 : "");
				return -err;
			}
			pp->fd[c][ev] = fd;
			if (callers && ev == EV_SYS_ENTER &&
			    ioctl(fd, PERF_EVENT_IOC_ID, &pp->enter_id[c]) != 0) {
				snprintf(why, whylen, "reading a perf event's id failed: %s",
					 strerror(errno));
				return -errno;
			}
			if ((ev == EV_SYS_ENTER || ev == EV_SYS_EXIT) &&
			    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) != 0) {
				snprintf(why, whylen, "setting the system-call filter failed: %s",
					 strerror(errno));
				return -errno;
			}
			if (ev == 0) {
				void *r = mmap(NULL, ring + (size_t)page, PROT_READ | PROT_WRITE,
					       MAP_SHARED, fd, 0);

				if (r == MAP_FAILED) {
					snprintf(why, whylen,
						 "mapping a %zu MiB perf ring buffer for CPU %d failed: "
						 "%s (try a smaller --buffer)",
						 ring >> 20, c, strerror(errno));
					return -ENOMEM;
				}
				pp->ring[c] = r;
			} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, pp->fd[c][0]) != 0) {
				snprintf(why, whylen, "sharing the perf ring buffer failed: %s",
					 strerror(errno));
				return -errno;
			}
		}
	}
	return 0;
}

void rec_perf_close(struct rec_perf *pp)
{
	long page = sysconf(_SC_PAGESIZE);

	for (int c = 0; c < pp->ncpus; c++) {
		if (pp->ring && pp->ring[c])
			munmap(pp->ring[c], pp->ring_size + (size_t)page);
		for (int ev = 0; pp->fd && ev < NR_REC_EVENTS; ev++)
			if (pp->fd[c][ev] >= 0)
				close(pp->fd[c][ev]);
	}
	free(pp->ring);
	free(pp->fd);
	free(pp->tmp);
	free(pp->enter_id);
	pp->enter_id = NULL;
	pp->ring = NULL;
	pp->fd = NULL;
	pp->tmp = NULL;
	pp->ncpus = 0;
}

int rec_perf_pollfds(struct rec_perf *pp, struct pollfd *pfd, int max)
{
	int n = 0;

	for (int c = 0; c < pp->ncpus && n < max; c++)
		if (pp->ring[c]) {
			pfd[n].fd = pp->fd[c][0];
			pfd[n].events = POLLIN;
			pfd[n].revents = 0;
			n++;
		}
	return n;
}

size_t rec_perf_pending(struct rec_perf *pp)
{
	size_t n = 0;

	for (int c = 0; c < pp->ncpus; c++) {
		struct perf_event_mmap_page *meta = pp->ring[c];

		if (meta)
			n += (size_t)(__atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE) -
				      meta->data_tail);
	}
	return n;
}

static uint64_t drain_one(struct rec_perf *pp, int cpu, rec_record_fn fn, void *arg)
{
	struct perf_event_mmap_page *meta = pp->ring[cpu];
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *data = (uint8_t *)meta + page;
	uint64_t head, tail, n = 0;
	const uint64_t mask = pp->ring_size - 1;

	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail < head) {
		struct perf_event_header *h = (void *)(data + (tail & mask));
		uint16_t size = h->size;
		const uint8_t *rec;

		if (size < sizeof(*h))
			break; /* cannot happen; do not spin */
		if ((tail & mask) + size > pp->ring_size) {
			size_t first = pp->ring_size - (tail & mask);

			/* the record wraps: copy it whole */
			memcpy(pp->tmp, data + (tail & mask), first);
			memcpy(pp->tmp + first, data, size - first);
			rec = pp->tmp;
		} else {
			rec = (const uint8_t *)h;
		}
		fn(arg, cpu, rec, size);
		tail += size;
		n++;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

uint64_t rec_perf_drain(struct rec_perf *pp, rec_record_fn fn, void *arg)
{
	uint64_t n = 0;

	for (int c = 0; c < pp->ncpus; c++)
		if (pp->ring[c])
			n += drain_one(pp, c, fn, arg);
	return n;
}
