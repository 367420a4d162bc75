/*
 * main.c - the thpsim command: thpsim_main (commands.c) does the work;
 * a program killed by a signal under "record" kills thpsim the same way.
 */
#include <signal.h>
#include <sys/prctl.h>

#include "cli.h"

int main(int argc, char **argv)
{
	int rc = thpsim_main(argc, argv);

	if (cli_exit_signal) {
		sigset_t s;

		signal(cli_exit_signal, SIG_DFL);
		sigemptyset(&s);
		sigaddset(&s, cli_exit_signal);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		prctl(PR_SET_DUMPABLE, 0); /* no core of thpsim itself */
		raise(cli_exit_signal);
	}
	return rc;
}
