/*
 * kernel_profile.c - "thpsim kernel-profile": what the running kernel is
 * and does, as the model's thpsim/ knobs, each with where it came from
 * (src/util/kprofile.c detects it).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "util/kprofile.h"

int cmd_kernel_profile(int argc, char **argv)
{
	int json = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (cli_parse_format(argv[++i], &json))
				return 2;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: thpsim kernel-profile [--format text|json]\n"
			       "  The running kernel's profile: its version, configuration and probed\n"
			       "  behaviour as the model's thpsim/ knobs.  kernel, validate, record and\n"
			       "  bench use it; --set thpsim/kernel=auto applies it to a model run.\n");
			return 0;
		} else {
			return cli_usage("kernel-profile: unknown argument '%s'\n"
					 "usage: thpsim kernel-profile [--format text|json]",
					 argv[i]);
		}
	}
	kprofile_print(kprofile_host(), stdout, json);
	return 0;
}
