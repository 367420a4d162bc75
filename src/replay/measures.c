/*
 * measures.c - the table of measures (measure.h) and the calls that walk
 * it: one function per point of the replay, calling each measure that
 * has a callback there, in the table's order.
 */
#include <stddef.h>

#include "measure.h"

#define REPLAY_MEASURE_ROW(name) &measure_##name,
static const struct replay_measure *const measures[] = { REPLAY_MEASURES(REPLAY_MEASURE_ROW) };
#undef REPLAY_MEASURE_ROW

#define NR_MEASURES (sizeof(measures) / sizeof(measures[0]))

/* Call member "cb" of every measure that has it, with the arguments after. */
#define EACH(cb, ...)                                            \
	do {                                                     \
		for (size_t i_ = 0; i_ < NR_MEASURES; i_++)      \
			if (measures[i_]->cb)                    \
				measures[i_]->cb(__VA_ARGS__);   \
	} while (0)

/* The same during a replay (r the first argument): with --figures-only
 * (replay_opts.figures_only, for thpsim bench), the figures and the
 * series alone, the measures a replay had before the others. */
#define EACH_R(cb, r, ...)                                                       \
	do {                                                                     \
		size_t n_ = (r)->o->figures_only ? 2 : NR_MEASURES;              \
		for (size_t i_ = 0; i_ < n_; i_++)                               \
			if (measures[i_]->cb)                                    \
				measures[i_]->cb(r, ##__VA_ARGS__);              \
	} while (0)

_Static_assert(sizeof(measures) / sizeof(measures[0]) >= 2, "figures and series come first");

void measures_begin(struct replay *r)
{
	EACH_R(begin, r);
}

void measures_mm_begin(struct replay *r, struct replay_mm *mm)
{
	EACH_R(mm_begin, r, mm);
}

void measures_freeing(struct replay *r, struct replay_mm *mm)
{
	EACH_R(freeing, r, mm);
}

void measures_mapping(struct replay *r, struct replay_mm *mm, const struct replay_map_event *e)
{
	EACH_R(mapping, r, mm, e);
}

void measures_touch(struct replay *r, struct replay_mm *mm, uint64_t start, uint64_t pages, int write)
{
	EACH_R(touch, r, mm, start, pages, write);
}

void measures_fork(struct replay *r, struct replay_mm *parent, struct replay_mm *child)
{
	EACH_R(fork, r, parent, child);
}

void measures_access(struct replay *r, struct replay_mm *mm, const struct trace_event *ev)
{
	EACH_R(access, r, mm, ev);
}

void measures_tick(struct replay *r, uint64_t idx)
{
	EACH_R(tick, r, idx);
}

void measures_mm_end(struct replay *r, struct replay_mm *mm)
{
	EACH_R(mm_end, r, mm);
}

void measures_trace_end(struct replay *r)
{
	EACH_R(trace_end, r);
}

void measures_finish(struct replay *r)
{
	EACH_R(finish, r);
}

void measures_mm_free(struct replay_mm *mm)
{
	EACH(mm_free, mm);
}

void measures_res_free(struct replay_result *res)
{
	EACH(res_free, res);
}

void replay_measures_json_mm(struct json *j, const struct replay_mm *mm)
{
	EACH(json_mm, j, mm);
}

void replay_measures_json(struct json *j, const struct replay_result *res)
{
	EACH(json, j, res);
}

void replay_measures_text(FILE *f, const struct replay_result *res)
{
	EACH(text, f, res);
}
