/*
 * fuzz_ops.c - fuzz target: operation sequences.  The input decodes into
 * at most 256 operations (ops.c, ops_decode: every byte string is some
 * sequence) that run on the model and the reference model side by side
 * (diff.c) with the whole-state checker after each; any divergence, failed
 * check or leak aborts, after printing the sequence in the .ops format
 * (save it and run "thpsim-soak --replay FILE" or "--print-test FILE").
 */
#include <stdio.h>
#include <stdlib.h>

#include "diff.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diff_cfg cfg = { .check_every = 1, .layout_every = 8, .isolation = true,
				.leak_check = true };
	struct op_list l;
	struct diff d;

	ops_decode(data, size, &l, 256);
	if (diff_run(&l, &cfg, &d)) {
		fprintf(stderr, "fuzz_ops: divergence at operation %zu: %s\n", d.failed_at + 1, d.why);
		ops_write(stderr, &l, "the input as operations");
		abort();
	}
	op_list_free(&l);
	return 0;
}
