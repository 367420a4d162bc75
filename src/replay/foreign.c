/*
 * foreign.c - what the model does not hold, remembered beside it.
 *
 * File-backed and shared mappings are "foreign" ranges of an address
 * space, kept sorted as [start, end, private file?], so that a fault in
 * one is skipped and counted by kind, never lost and never an error.
 * Pages a program writes in a private file mapping are anonymous copies
 * in the kernel (in its Anonymous); the model holds no file mappings, so
 * they are counted here, page by page, in an open-addressing set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

/* ---- foreign ranges ---- */
static int foreign_find(const struct replay_mm *mm, uint64_t addr)
{
	int lo = 0, hi = mm->nforeign;

	/* the first range ending above addr */
	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (mm->foreign[mid][1] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* 0: not foreign; 1: shared or special; 2: a private file mapping. */
int foreign_is(const struct replay_mm *mm, uint64_t addr)
{
	int i = foreign_find(mm, addr);

	if (i < mm->nforeign && mm->foreign[i][0] <= addr)
		return mm->foreign[i][2] ? 2 : 1;
	return 0;
}

/* ---- pages copied from private file mappings (an open-addressing set) ---- */
#define COW_EMPTY 0
#define COW_GONE 1 /* page numbers are >= 16: no clash with these */

/* Where the probe for page starts. */
static size_t cow_slot(const struct replay_mm *mm, uint64_t page)
{
	return (size_t)(page * 0x9e3779b97f4a7c15ULL >> 20) & (mm->cow_cap - 1);
}

void foreign_cow_insert(struct replay_mm *mm, uint64_t page)
{
	size_t i, tomb = SIZE_MAX;

	if ((mm->cow_used + 1) * 2 > mm->cow_cap) {
		size_t cap = mm->cow_cap ? mm->cow_cap * 2 : 256, oldcap = mm->cow_cap;
		uint64_t *old = mm->cow, *n = calloc(cap, sizeof(*n));

		if (!n)
			return;
		mm->cow = n;
		mm->cow_cap = cap;
		mm->cow_used = mm->cow_n = 0;
		for (size_t k = 0; k < oldcap; k++)
			if (old[k] > COW_GONE)
				foreign_cow_insert(mm, old[k]);
		free(old);
	}
	for (i = cow_slot(mm, page);; i = (i + 1) & (mm->cow_cap - 1)) {
		if (mm->cow[i] == page)
			return;
		if (mm->cow[i] == COW_GONE && tomb == SIZE_MAX)
			tomb = i;
		if (mm->cow[i] == COW_EMPTY)
			break;
	}
	if (tomb == SIZE_MAX) {
		tomb = i;
		mm->cow_used++;
	}
	mm->cow[tomb] = page;
	mm->cow_n++;
}

static void cow_remove_slot(struct replay_mm *mm, size_t k)
{
	mm->cow[k] = COW_GONE;
	mm->cow_n--;
}

/* Forget the copies in [start, end): unmapped, or mapped over.  A range of
 * fewer pages than the set has slots is looked up page by page (a program
 * that maps and unmaps often pays for its calls, not for the set's size);
 * a larger one is a sweep of the set. */
static void cow_remove_range(struct replay_mm *mm, uint64_t start, uint64_t end)
{
	const uint64_t first = start >> 12, last = (end + 4095) >> 12;

	if (last - first < mm->cow_cap) {
		for (uint64_t page = first; mm->cow_n && page < last; page++)
			for (size_t i = cow_slot(mm, page); mm->cow[i] != COW_EMPTY;
			     i = (i + 1) & (mm->cow_cap - 1))
				if (mm->cow[i] == page) {
					cow_remove_slot(mm, i);
					break;
				}
		return;
	}
	for (size_t k = 0; mm->cow_n && k < mm->cow_cap; k++)
		if (mm->cow[k] > COW_GONE && mm->cow[k] >= first && mm->cow[k] < last)
			cow_remove_slot(mm, k);
}

/* Forget the foreign ranges in [start, end), and the copies in them.
 * Copies lie only in private file mappings (foreign_cow_insert's callers
 * check foreign_is, and a range loses pages only here), so only the parts of
 * those that the span covers are looked up. */
void foreign_remove(struct replay_mm *mm, uint64_t start, uint64_t end)
{
	int i = foreign_find(mm, start);

	while (i < mm->nforeign && mm->foreign[i][0] < end) {
		uint64_t s = mm->foreign[i][0], e = mm->foreign[i][1];

		if (mm->foreign[i][2] && mm->cow_n)
			cow_remove_range(mm, s > start ? s : start, e < end ? e : end);

		if (s < start && e > end) { /* a hole in the middle: split */
			if (mm->nforeign == mm->capforeign) {
				int cap = mm->capforeign * 2;
				void *v = realloc(mm->foreign, (size_t)cap * sizeof(*mm->foreign));

				if (!v)
					return;
				mm->foreign = v;
				mm->capforeign = cap;
			}
			memmove(mm->foreign + i + 1, mm->foreign + i,
				(size_t)(mm->nforeign - i) * sizeof(*mm->foreign));
			mm->nforeign++;
			mm->foreign[i][1] = start;
			mm->foreign[i + 1][0] = end;
			mm->foreign[i + 1][2] = mm->foreign[i][2];
			return;
		}
		if (s < start) {
			mm->foreign[i][1] = start;
			i++;
		} else if (e > end) {
			mm->foreign[i][0] = end;
			return;
		} else {
			memmove(mm->foreign + i, mm->foreign + i + 1,
				(size_t)(mm->nforeign - i - 1) * sizeof(*mm->foreign));
			mm->nforeign--;
		}
	}
}

void foreign_add(struct replay_mm *mm, uint64_t start, uint64_t end, int private_file)
{
	int i;

	if (start >= end)
		return;
	foreign_remove(mm, start, end);
	if (mm->nforeign == mm->capforeign) {
		int cap = mm->capforeign ? mm->capforeign * 2 : 32;
		void *v = realloc(mm->foreign, (size_t)cap * sizeof(*mm->foreign));

		if (!v)
			return;
		mm->foreign = v;
		mm->capforeign = cap;
	}
	i = foreign_find(mm, start);
	memmove(mm->foreign + i + 1, mm->foreign + i, (size_t)(mm->nforeign - i) * sizeof(*mm->foreign));
	mm->foreign[i][0] = start;
	mm->foreign[i][1] = end;
	mm->foreign[i][2] = (uint64_t)private_file;
	mm->nforeign++;
}

int foreign_copy(struct replay_mm *to, const struct replay_mm *from)
{
	for (size_t k = 0; k < from->cow_cap; k++)
		if (from->cow[k] > COW_GONE)
			foreign_cow_insert(to, from->cow[k]);
	if (!from->nforeign)
		return 0;
	to->foreign = malloc((size_t)from->nforeign * sizeof(*to->foreign));
	if (!to->foreign)
		return -ENOMEM;
	memcpy(to->foreign, from->foreign, (size_t)from->nforeign * sizeof(*to->foreign));
	to->nforeign = to->capforeign = from->nforeign;
	return 0;
}

int foreign_cow_by_range(struct replay_mm *mm)
{
	uint64_t (*v)[3];
	int n = 0;

	free(mm->final_file_cow);
	mm->final_file_cow = NULL;
	mm->nfinal_file_cow = 0;
	if (!mm->cow_n)
		return 0;
	v = calloc((size_t)mm->nforeign, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int i = 0; i < mm->nforeign; i++) {
		v[i][0] = mm->foreign[i][0];
		v[i][1] = mm->foreign[i][1];
	}
	for (size_t k = 0; k < mm->cow_cap; k++) {
		int i;

		if (mm->cow[k] <= COW_GONE)
			continue;
		i = foreign_find(mm, mm->cow[k] << 12);
		if (i < mm->nforeign && mm->foreign[i][0] <= mm->cow[k] << 12)
			v[i][2] += 4;
	}
	for (int i = 0; i < mm->nforeign; i++) /* only the ranges with copies */
		if (v[i][2])
			memcpy(v[n++], v[i], sizeof(*v));
	mm->final_file_cow = v;
	mm->nfinal_file_cow = n;
	return 0;
}
