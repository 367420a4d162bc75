/*
 * child.c - how the recorded program's first process is set up before it
 * execs the command: its personality and the user it runs as.
 *
 *  - --no-aslr: personality(ADDR_NO_RANDOMIZE), added to the personality
 *    the process already has, as setarch -R does; the flag survives exec,
 *    so the command and everything it starts lay out their address spaces
 *    the same way on every run, and a recording and a measured run of the
 *    same program can be compared mapping by mapping.
 *  - Under sudo (SUDO_UID and SUDO_GID set, and we are root), the command
 *    runs as the user who asked, not as root: a program that writes files
 *    or checks who it is behaves as it would for them.  The recorder
 *    itself stays root in the parent: its perf events and ptrace follow
 *    the child regardless of the child's uid, and root reads the /proc
 *    files of any process.  --as-root keeps the command root.
 *
 * Who the user is (the passwd entry, its groups) is looked up in the
 * parent, before fork, where a lookup may allocate and a failure can be
 * said plainly; the child only makes system calls (rec_child_prepare),
 * after anything it does as root and right before it execs.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A uid or gid from the environment: decimal digits only, and not -1
 * (which setuid and setgid take as "leave it").  0, or -EINVAL. */
static int parse_id(const char *s, unsigned int *id)
{
	unsigned long long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned int)(*s - '0');
		if (v >= (unsigned int)-1)
			return -EINVAL;
	}
	*id = (unsigned int)v;
	return 0;
}

/* The supplementary groups of user (its primary group gid among them), as
 * the system's group database gives them. */
static int user_groups(const char *user, gid_t gid, struct rec_user *u)
{
	int n = 16;

	for (;;) {
		gid_t *g = realloc(u->groups, (size_t)n * sizeof(*g));
		int got = n;

		if (!g)
			return -ENOMEM;
		u->groups = g;
		if (getgrouplist(user, gid, g, &got) >= 0) {
			u->ngroups = got;
			return 0;
		}
		/* too small: got is how many there are (glibc), or ask for more */
		n = got > n ? got : n * 2;
		if (n > 1 << 16)
			return -E2BIG;
	}
}

int rec_user_from_sudo(struct rec_user *u, char *why, size_t len)
{
	const char *suid = getenv("SUDO_UID"), *sgid = getenv("SUDO_GID");
	unsigned int uid, gid;
	struct passwd *pw;
	int err;

	memset(u, 0, sizeof(*u));
	if (geteuid() != 0 || !suid)
		return 0; /* not under sudo: the command runs as we do */
	if (parse_id(suid, &uid)) {
		snprintf(why, len, "SUDO_UID is '%s', not a user id (a number): cannot tell whom "
			 "to run the command as (--as-root keeps root)", suid);
		return -EINVAL;
	}
	if (!sgid) {
		snprintf(why, len, "SUDO_UID is set but SUDO_GID is not: cannot tell which group "
			 "to run the command in (--as-root keeps root)");
		return -EINVAL;
	}
	if (parse_id(sgid, &gid)) {
		snprintf(why, len, "SUDO_GID is '%s', not a group id (a number) (--as-root keeps "
			 "root)", sgid);
		return -EINVAL;
	}
	u->uid = uid;
	u->gid = gid;
	pw = getpwuid(uid);
	if (pw) {
		snprintf(u->name, sizeof(u->name), "%s", pw->pw_name);
		err = user_groups(pw->pw_name, gid, u);
		if (err) {
			snprintf(why, len, "reading the groups of user %s (uid %u): %s", pw->pw_name,
				 uid, strerror(-err));
			rec_user_free(u);
			return err;
		}
	} else {
		/* a uid with no passwd entry: its own group alone */
		snprintf(u->name, sizeof(u->name), "uid %u", uid);
		u->groups = malloc(sizeof(*u->groups));
		if (!u->groups) {
			snprintf(why, len, "out of memory");
			return -ENOMEM;
		}
		u->groups[0] = gid;
		u->ngroups = 1;
	}
	u->set = 1;
	return 0;
}

void rec_user_free(struct rec_user *u)
{
	free(u->groups);
	u->groups = NULL;
	u->ngroups = 0;
	u->set = 0;
}

int rec_child_prepare(const struct rec_user *u, int no_aslr, int *step)
{
	if (no_aslr) {
		int cur = personality(0xffffffff);

		*step = REC_STEP_PERSONALITY;
		if (cur == -1 || personality((unsigned long)cur | ADDR_NO_RANDOMIZE) == -1)
			return -errno;
	}
	if (!u || !u->set)
		return 0;
	/* groups first, then the group, then the user: each needs root */
	*step = REC_STEP_SETGROUPS;
	if (setgroups((size_t)u->ngroups, u->groups))
		return -errno;
	*step = REC_STEP_SETGID;
	if (setgid(u->gid))
		return -errno;
	*step = REC_STEP_SETUID;
	if (setuid(u->uid))
		return -errno;
	/* root is gone for good: setuid(0) must now fail */
	*step = REC_STEP_STILL_ROOT;
	if (u->uid != 0 && setuid(0) == 0)
		return -EPERM;
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
