/*
 * pidtab.h - a table of per-process (or per-thread) state keyed by pid:
 * the recorder's calls in progress and processes, and the replay's tasks.
 *
 * Open addressing with linear probing, kept at most half full, doubling
 * when it is not.  An element is any struct whose first member is its
 * int32_t key: 0 marks an empty slot and -1 a deleted one, so pids are
 * positive.  Elements move when the table grows: a pointer returned by a
 * creating lookup invalidates earlier ones.
 */
#ifndef THPSIM_PIDTAB_H
#define THPSIM_PIDTAB_H

#include <stddef.h>
#include <stdint.h>

struct pidtab {
	void *slots;      /* cap elements of elem bytes */
	size_t elem;      /* the size of an element, its key first */
	size_t cap, used; /* used counts deleted slots too */
	size_t first_cap; /* the capacity of the first allocation: a power of two */
};

#define PIDTAB_INIT(type, first) { NULL, sizeof(type), 0, 0, (first) }

/* The element of key: NULL when there is none, unless created is given;
 * then a missing one is made, zeroed but for its key, with *created set
 * to 1 (NULL only when out of memory). */
void *pidtab_find(struct pidtab *t, int32_t key, int *created);
/* The element in slot i (i < t->cap), or NULL when the slot holds none:
 * for a walk over every element. */
void *pidtab_slot(const struct pidtab *t, size_t i);
/* Delete key's element, if there is one. */
void pidtab_del(struct pidtab *t, int32_t key);
void pidtab_free(struct pidtab *t);

#endif
