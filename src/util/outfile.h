/*
 * outfile.h - writing a user's output file without ever losing what was
 * there: a temporary file beside the target, renamed over it only when the
 * writing is complete.
 *
 *   outfile_open    refuses a symlink and, without force, an existing file;
 *                   creates ".NAME.XXXXXX" beside it (O_EXCL|O_NOFOLLOW)
 *   outfile_commit  flushes, fsyncs and renames it into place (without
 *                   force, never over a file that appeared meanwhile)
 *   outfile_abort   removes the temporary file; the target is untouched
 *   outfile_keep    after a failed write, puts the part written in place
 *                   where no file stood
 *
 * A target that exists and is not a regular file (a character device such
 * as /dev/null or /dev/full, a FIFO) is written directly: there is nothing
 * to replace, and renaming over a device node would be wrong.
 */
#ifndef THPSIM_OUTFILE_H
#define THPSIM_OUTFILE_H

#include <stdio.h>

struct outfile {
	FILE *f;            /* where to write */
	char target[4096];  /* the path the user gave */
	char tmp[4096];     /* the temporary file; empty when writing directly */
	int force;          /* replace an existing file */
	int existed;        /* the target existed when opened */
};

/* 0, or a negative errno with why (one sentence naming the path) set:
 * -EEXIST without force, -ELOOP for a symlink, -EISDIR for a directory. */
int outfile_open(struct outfile *o, const char *target, int force, char *why, size_t whylen);
/* 0, or a negative errno with why set (the temporary file is removed). */
int outfile_commit(struct outfile *o, char *why, size_t whylen);
void outfile_abort(struct outfile *o);
/* After a failed write: put what was written in place all the same (the
 * caller knows a part is useful), never over an existing file.  0, or a
 * negative errno with why set (the temporary file is removed). */
int outfile_keep(struct outfile *o, char *why, size_t whylen);

#endif
