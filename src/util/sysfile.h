/*
 * sysfile.h - small reads and writes of /proc and /sys files, and the
 * one-line error message every layer prints.  Nothing here allocates (the
 * kernel runner's workers call it and must not fault).
 */
#ifndef THPSIM_SYSFILE_H
#define THPSIM_SYSFILE_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

/* The file's first len - 1 bytes, NUL-terminated: their count, or -errno. */
ssize_t sysfile_read(const char *path, char *buf, size_t len);
/* Write s (O_TRUNC, as a shell's ">"): 0 or -errno. */
int sysfile_write(const char *path, const char *s);
/* A sysfs setting's value: the bracketed choice of "always [madvise]
 * never", or the first line of a plain one ("511").  0, or -1. */
int sysfile_choice(const char *path, char *out, size_t len);

/* "thpsim: MESSAGE[ (strerror(err))]" on stderr; returns err. */
int msg_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int msg_verror(int err, const char *fmt, va_list ap);

#endif
