/*
 * outfile.c - output files that are replaced whole or not at all (outfile.h).
 *
 * Why a temporary file and a rename: a recording that fails (the program
 * cannot be run, the disk fills, the recorder is killed) must not have
 * destroyed the file the user named, and a reader must never see half a
 * file under the final name.  rename(2) within one directory is atomic, so
 * the target is either what it was or the complete new file.  The
 * temporary file is created with O_EXCL|O_NOFOLLOW, so a link planted
 * under its name is never followed (thpsim record runs as root), and a
 * target that is a symlink is refused outright rather than written through.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "outfile.h"

/* dir/.base.XXXXXX for the target dir/base. */
static int tmp_name(struct outfile *o, unsigned long long salt)
{
	const char *slash = strrchr(o->target, '/');
	int n;

	if (slash)
		n = snprintf(o->tmp, sizeof(o->tmp), "%.*s/.%s.%06llx", (int)(slash - o->target),
			     o->target, slash + 1, salt & 0xffffff);
	else
		n = snprintf(o->tmp, sizeof(o->tmp), ".%s.%06llx", o->target, salt & 0xffffff);
	return n > 0 && (size_t)n < sizeof(o->tmp) ? 0 : -ENAMETOOLONG;
}

int outfile_open(struct outfile *o, const char *target, int force, char *why, size_t whylen)
{
	struct timespec ts;
	unsigned long long salt;
	struct stat st;
	int fd = -1, err;

	memset(o, 0, sizeof(*o));
	o->force = force;
	if (!*target || strlen(target) >= sizeof(o->target)) {
		snprintf(why, whylen, "'%s': not a usable file name", target);
		return -EINVAL;
	}
	snprintf(o->target, sizeof(o->target), "%s", target);
	if (target[strlen(target) - 1] == '/') {
		snprintf(why, whylen, "%s: is a directory", target);
		return -EISDIR;
	}
	if (lstat(target, &st) == 0) {
		o->existed = 1;
		if (S_ISLNK(st.st_mode)) {
			snprintf(why, whylen, "%s is a symbolic link: refusing to write through it "
					      "(name the file it points to)", target);
			return -ELOOP;
		}
		if (S_ISDIR(st.st_mode)) {
			snprintf(why, whylen, "%s: is a directory", target);
			return -EISDIR;
		}
		if (!S_ISREG(st.st_mode)) {
			/* a device or a FIFO: written directly, nothing to replace */
			fd = open(target, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				goto fail_errno;
			goto opened;
		}
		if (!force) {
			snprintf(why, whylen, "%s exists: not overwriting it (use --force to replace "
					      "it)", target);
			return -EEXIST;
		}
	} else if (errno != ENOENT) {
		goto fail_errno;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	salt = (unsigned long long)ts.tv_nsec ^ (unsigned long long)getpid() << 16;
	for (int tries = 0; tries < 100; tries++, salt = salt * 6364136223846793005ULL + 1442695040888963407ULL) {
		err = tmp_name(o, salt >> 20);
		if (err) {
			snprintf(why, whylen, "%s: file name too long", target);
			return err;
		}
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = -errno;
		snprintf(why, whylen, "cannot create a temporary file beside %s (%s): %s", target,
			 o->tmp, strerror(errno));
		o->tmp[0] = 0;
		return err;
	}
opened:
	o->f = fdopen(fd, "wb");
	if (!o->f) {
		err = -errno;
		close(fd);
		outfile_abort(o);
		snprintf(why, whylen, "%s: %s", target, strerror(-err));
		return err;
	}
	return 0;
fail_errno:
	err = -errno;
	snprintf(why, whylen, "cannot write %s: %s", target, strerror(errno));
	o->tmp[0] = 0;
	return err;
}

void outfile_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = 0;
}

/* Move the complete temporary file to the target: over it with force,
 * never over a file that appeared since outfile_open without. */
static int put_in_place(struct outfile *o)
{
	if (o->force)
		return rename(o->tmp, o->target) ? -errno : 0;
	if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->target, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* a file system without RENAME_NOREPLACE: link(2) never replaces */
	if (link(o->tmp, o->target))
		return -errno;
	unlink(o->tmp);
	return 0;
}

int outfile_commit(struct outfile *o, char *why, size_t whylen)
{
	int err = 0;

	if (!o->f)
		return -EBADF;
	if (fflush(o->f) || ferror(o->f))
		err = errno ? -errno : -EIO;
	if (!err && o->tmp[0] && fsync(fileno(o->f)))
		err = -errno;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (err) {
		snprintf(why, whylen, "writing %s failed: %s%s", o->target, strerror(-err),
			 o->tmp[0] ? (o->existed ? " (the existing file is untouched)"
						 : " (nothing was written)")
				   : "");
		outfile_abort(o);
		return err;
	}
	if (!o->tmp[0])
		return 0;
	err = put_in_place(o);
	if (err) {
		snprintf(why, whylen, "cannot move %s to %s: %s%s", o->tmp, o->target,
			 strerror(-err), err == -EEXIST ? " (it appeared while writing; "
							 "use --force to replace it)" : "");
		outfile_abort(o);
		return err;
	}
	o->tmp[0] = 0;
	return 0;
}

int outfile_keep(struct outfile *o, char *why, size_t whylen)
{
	int err;

	if (!o->f)
		return -EBADF;
	fflush(o->f); /* as much as still fits */
	fclose(o->f);
	o->f = NULL;
	if (!o->tmp[0])
		return 0;
	o->force = 0;
	err = put_in_place(o);
	if (err) {
		snprintf(why, whylen, "cannot move %s to %s: %s", o->tmp, o->target,
			 strerror(-err));
		outfile_abort(o);
		return err;
	}
	o->tmp[0] = 0;
	return 0;
}
