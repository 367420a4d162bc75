/*
 * gen.h - the random operation generator: knob choices and RAM per run,
 * then operations biased towards what the model finds hard (2 MiB-aligned
 * ranges, ranges that cut THPs and VMAs, the huge zero page, fork and
 * copy-on-write, memory pressure) and towards addresses that are mapped.
 * Deterministic: a seed gives one sequence.
 */
#ifndef THPSIM_FUZZ_GEN_H
#define THPSIM_FUZZ_GEN_H

#include "diff.h"

struct rng {
	uint64_t s;
};
uint64_t rng_next(struct rng *r);
uint64_t rng_below(struct rng *r, uint64_t n);
/* A seed for run i of a soak from seed s. */
uint64_t rng_mix(uint64_t s, uint64_t i);

#define GEN_RECENT 32
struct gen {
	struct rng rng;
	bool no_knobs; /* the run's knobs are fixed (the metamorphic check): no knob
			* operations, and none whose answer depends on VMA merging */
	struct {
		uint64_t addr, len;
	} recent[GEN_RECENT];
	unsigned nrecent;
};

/* Start a run: the RAM and the knob operations that open it go into l. */
void gen_start(struct gen *g, uint64_t seed, bool no_knobs, struct op_list *l);
/* How many operations the run should have. */
size_t gen_length(struct gen *g);
/* The next operation, given the state of the reference (d->ref). */
struct op gen_op(struct gen *g, const struct diff *d);

#endif
