/*
 * sysfile.c - /proc and /sys files, and error lines (sysfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/sysfile.h"

ssize_t sysfile_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, r;

	if (fd < 0)
		return -errno;
	while ((size_t)n < len - 1 && (r = read(fd, buf + n, len - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	buf[n] = 0;
	return n;
}

int sysfile_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

int sysfile_choice(const char *path, char *out, size_t len)
{
	char buf[256], *a, *b, *nl;

	if (sysfile_read(path, buf, sizeof(buf)) <= 0)
		return -1;
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b) {
		*b = 0;
		snprintf(out, len, "%s", a + 1);
		return 0;
	}
	nl = strchr(buf, '\n');
	if (nl)
		*nl = 0;
	snprintf(out, len, "%s", buf);
	return 0;
}

int msg_verror(int err, const char *fmt, va_list ap)
{
	fputs("thpsim: ", stderr);
	vfprintf(stderr, fmt, ap);
	if (err)
		fprintf(stderr, " (%s)", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	return err;
}

int msg_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	msg_verror(err, fmt, ap);
	va_end(ap);
	return err;
}
