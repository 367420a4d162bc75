/*
 * child.c - how the recorded program's first process is set up before it
 * execs the command: its personality.
 *
 *  - --no-aslr: personality(ADDR_NO_RANDOMIZE), added to the personality
 *    the process already has, as setarch -R does; the flag survives exec,
 *    so the command and everything it starts lay out their address spaces
 *    the same way on every run, and a recording and a measured run of the
 *    same program can be compared mapping by mapping.
 *
 * The child only makes system calls here (rec_child_prepare), right
 * before it execs.
 */
#include <errno.h>
#include <sys/personality.h>
#include <unistd.h>

#include "record.h"
#include "util/sysfile.h"

static const char *const step_names[REC_NR_STEPS] = {
#define REC_STEP_NAME(name, text) text,
	REC_CHILD_STEPS(REC_STEP_NAME)
#undef REC_STEP_NAME
};

const char *rec_child_step_name(int step)
{
	return step >= 0 && step < REC_NR_STEPS ? step_names[step] : "?";
}

int rec_child_prepare(int no_aslr, int *step)
{
	if (no_aslr) {
		int cur = personality(0xffffffff);

		*step = REC_STEP_PERSONALITY;
		if (cur == -1 || personality((unsigned long)cur | ADDR_NO_RANDOMIZE) == -1)
			return -errno;
	}
	return 0;
}

const char *rec_aslr_state(int no_aslr)
{
	char v[16];
	int cur = personality(0xffffffff);

	if (no_aslr || (cur != -1 && (cur & ADDR_NO_RANDOMIZE)))
		return "off";
	if (sysfile_read("/proc/sys/kernel/randomize_va_space", v, sizeof(v)) > 0 && v[0] == '0')
		return "off";
	return "on";
}
