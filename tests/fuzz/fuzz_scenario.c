/*
 * fuzz_scenario.c - fuzz target: the scenario parser, and the model run of
 * what parses.  Any input must be refused with a "file:line:column" message
 * or parse; a parsed scenario then runs in the model (when its reads and
 * writes are small enough to finish quickly) and must end in a result, an
 * expectation failure or a step error, never a crash or a failed check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "scenario/scenario.h"

/* Reads and writes touch len/step bytes: keep a run to a few thousand. */
static int small_enough(const struct scenario *s)
{
	uint64_t touches = 0;

	for (int i = 0; i < s->nsteps; i++) {
		const struct scn_step *st = &s->steps[i];

		if ((st->op == SCN_READ || st->op == SCN_WRITE) && st->step)
			touches += st->len / st->step + 1;
		if (st->op == SCN_MMAP && st->len > (1ULL << 32))
			return 0;
	}
	return touches <= 65536 && s->nsteps <= 200;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	FILE *err = fopen("/dev/null", "w");
	struct scenario s;

	if (!text || !err)
		abort();
	memcpy(text, data, size);
	text[size] = 0;
	if (scenario_parse_string("fuzz.scn", text, &s, err) == 0) {
		if (small_enough(&s)) {
			struct scn_result r;

			scenario_run_model(&s, NULL, NULL, &r);
			scn_result_free(&r);
		}
		scenario_free(&s);
	}
	fclose(err);
	free(text);
	return 0;
}
