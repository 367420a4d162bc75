/*
 * rollup.h - what the test programs print before they exit: their own
 * smaps_rollup Rss, Anonymous and AnonHugePages, to hold against what
 * thpsim predicts for them.
 */
#ifndef THPSIM_PROGS_ROLLUP_H
#define THPSIM_PROGS_ROLLUP_H

#include <stdio.h>
#include <string.h>

static void print_rollup(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Rss:", 4) || !strncmp(line, "Anonymous:", 10) ||
		    !strncmp(line, "AnonHugePages:", 14))
			fputs(line, stdout);
	if (f)
		fclose(f);
}

#endif
