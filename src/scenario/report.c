/*
 * report.c - taking and printing reports (report.h).
 */
#include "report.h"

#include <stdio.h>
#include <string.h>

void report_base(thps_machine *m, uint64_t base[THPS_NR_VM_ITEMS])
{
	thps_vmstat(m, base);
}

void report_take(struct report *r, thps_machine *m, const uint64_t base[THPS_NR_VM_ITEMS],
		 thps_proc *const *procs, const char *const *names, int n)
{
	uint64_t now[THPS_NR_VM_ITEMS];

	memset(r, 0, sizeof(*r));
	thps_vmstat(m, now);
	for (int i = 0; i < THPS_NR_VM_ITEMS; i++)
		r->vm[i] = (int64_t)(now[i] - base[i]);
	thps_meminfo(m, r->meminfo);
	if (n > REPORT_MAX_PROCS)
		n = REPORT_MAX_PROCS;
	r->nprocs = n;
	for (int i = 0; i < n; i++) {
		struct report_proc *p = &r->procs[i];

		p->pid = thps_pid(procs[i]);
		snprintf(p->name, sizeof(p->name), "%s", names && names[i] ? names[i] : "");
		thps_proc_figures(procs[i], p->fig);
	}
}

void report_json(struct json *j, const char *key, const struct report *r)
{
	json_begin_object(j, key);
	json_begin_object(j, "vmstat");
	for (int i = 0; i < THPS_NR_VM_ITEMS; i++)
		if (thps_vm_item_name(i))
			json_int(j, thps_vm_item_name(i), r->vm[i]);
	json_end_object(j);
	json_begin_array(j, "processes");
	for (int p = 0; p < r->nprocs; p++) {
		json_begin_object(j, NULL);
		json_int(j, "pid", r->procs[p].pid);
		if (r->procs[p].name[0])
			json_string(j, "name", r->procs[p].name);
		for (int i = 0; i < THPS_NR_PROC_ITEMS; i++)
			json_uint(j, thps_proc_item_name(i), r->procs[p].fig[i]);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_object(j, "meminfo");
	for (int i = 0; i < THPS_NR_MEMINFO_ITEMS; i++)
		json_uint(j, thps_meminfo_item_name(i), r->meminfo[i]);
	json_end_object(j);
	json_end_object(j);
}
