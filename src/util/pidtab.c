/*
 * pidtab.c - a table keyed by pid (pidtab.h).
 */
#include <stdlib.h>
#include <string.h>

#include "pidtab.h"

static int32_t *key_at(const struct pidtab *t, size_t i)
{
	return (int32_t *)((char *)t->slots + i * t->elem);
}

static int grow(struct pidtab *t)
{
	size_t cap = t->cap ? t->cap * 2 : t->first_cap;
	struct pidtab n = { calloc(cap, t->elem), t->elem, cap, 0, t->first_cap };

	if (!n.slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		int32_t *old = key_at(t, i);

		if (*old > 0)
			memcpy(pidtab_find(&n, *old, &(int){ 0 }), old, t->elem);
	}
	free(t->slots);
	*t = n;
	return 0;
}

void *pidtab_find(struct pidtab *t, int32_t key, int *created)
{
	int32_t *tomb = NULL;

	if (created && (t->used + 1) * 2 > t->cap && grow(t))
		return NULL;
	if (!t->cap)
		return NULL;
	for (size_t i = ((size_t)key * 2654435761u) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		int32_t *k = key_at(t, i);

		if (*k == key)
			return k;
		if (*k == -1 && !tomb)
			tomb = k;
		if (*k == 0) {
			if (!created)
				return NULL;
			if (!tomb) {
				tomb = k;
				t->used++;
			}
			memset(tomb, 0, t->elem);
			*tomb = key;
			*created = 1;
			return tomb;
		}
	}
}

void *pidtab_slot(const struct pidtab *t, size_t i)
{
	int32_t *k = key_at(t, i);

	return *k > 0 ? k : NULL;
}

void pidtab_del(struct pidtab *t, int32_t key)
{
	int32_t *k = pidtab_find(t, key, NULL);

	if (k)
		*k = -1;
}

void pidtab_free(struct pidtab *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->used = 0;
}
