/*
 * faultloop - a fixed amount of the model's fault work, for profilers.
 *
 * thpsim bench runs for a set time, which is what a rate needs but not what
 * callgrind wants (it runs 50 times slower, and the instruction count per
 * fault is the figure).  This runs N process lifetimes of the bench's read
 * loops on one machine and prints the faults taken:
 *
 *   faultloop 4k N    N processes each read 64 MiB every 4 KiB (zero page)
 *   faultloop hzp N   N processes each read 1 GiB every 2 MiB of a
 *                     MADV_HUGEPAGE mapping (huge zero page)
 *
 * Build and profile (docs/performance.md):
 *   cc -O2 -g -Iinclude tools/faultloop/faultloop.c build/libthpsim.a -pthread -o build/faultloop
 *   valgrind --tool=callgrind build/faultloop hzp 40
 *   perf record -g build/faultloop 4k 2000
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thpsim.h"

int main(int argc, char **argv)
{
	int hzp, n;
	uint64_t bytes, faults = 0, v[THPS_NR_VM_ITEMS];
	thps_machine *m;

	if (argc != 3 || (strcmp(argv[1], "4k") && strcmp(argv[1], "hzp")) ||
	    (n = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: faultloop 4k|hzp PROCESSES\n");
		return 2;
	}
	hzp = !strcmp(argv[1], "hzp");
	bytes = hzp ? 1ULL << 30 : 64ULL << 20;
	if (thps_machine_new(&(struct thps_config){ .ram_bytes = 4ULL << 30 }, &m)) {
		fprintf(stderr, "faultloop: cannot create a machine\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct thps_touch t = { .len = bytes,
					.step = hzp ? THPS_HPAGE_PMD_SIZE : THPS_PAGE_SIZE,
					.op = THPS_TOUCH_READ };
		thps_proc *p;
		int err;

		if ((err = thps_proc_new(m, &p)) ||
		    (err = thps_mmap(p, 0, bytes, THPS_PROT_READ | THPS_PROT_WRITE,
				     THPS_MAP_PRIVATE | THPS_MAP_ANONYMOUS, &t.addr)) ||
		    (hzp && (err = thps_madvise(p, t.addr, bytes, THPS_MADV_HUGEPAGE))) ||
		    (err = thps_touch(p, &t))) {
			fprintf(stderr, "faultloop: process %d: %s (%s)\n", i + 1,
				thps_last_error(m), strerror(-err));
			return 1;
		}
		thps_exit(p);
	}
	thps_vmstat(m, v);
	faults = v[THPS_VM_pgfault];
	printf("%llu faults\n", (unsigned long long)faults);
	thps_machine_free(m);
	return 0;
}
