/*
 * atomic.h - the kernel's atomic_t, READ_ONCE/WRITE_ONCE and spinlock_t, on
 * top of the compiler's __atomic builtins and pthread mutexes.
 *
 * The model keeps the kernel's names so that code reads the same: a frame's
 * _refcount is an atomic_t and get_huge_zero_folio() uses
 * atomic_inc_not_zero() exactly where the kernel does.  Relaxed ordering is
 * used for statistics; acquire/release where the kernel relies on it.
 * ThreadSanitizer understands both the builtins and the mutexes.
 */
#ifndef THPSIM_ATOMIC_H
#define THPSIM_ATOMIC_H

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
	int32_t counter;
} atomic_t;

typedef struct {
	int64_t counter;
} atomic64_t;

#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}
static inline void atomic_set(atomic_t *v, int i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}
static inline void atomic_set_release(atomic_t *v, int i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELEASE);
}
static inline int atomic_add_return(int i, atomic_t *v)
{
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_ACQ_REL);
}
/* For a counter no other thread can change at the time (others may read
 * it): a relaxed load and store, without a locked read-modify-write. */
static inline int atomic_add_return_unshared(int i, atomic_t *v)
{
	int n = __atomic_load_n(&v->counter, __ATOMIC_RELAXED) + i;

	__atomic_store_n(&v->counter, n, __ATOMIC_RELAXED);
	return n;
}
static inline void atomic_add(int i, atomic_t *v)
{
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}
static inline void atomic_inc(atomic_t *v)
{
	atomic_add(1, v);
}
static inline void atomic_dec(atomic_t *v)
{
	atomic_add(-1, v);
}
static inline bool atomic_dec_and_test(atomic_t *v)
{
	return atomic_add_return(-1, v) == 0;
}
static inline int atomic_cmpxchg(atomic_t *v, int old, int new_)
{
	__atomic_compare_exchange_n(&v->counter, &old, new_, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	return old;
}
/* Increment unless zero; true when it incremented. */
static inline bool atomic_inc_not_zero(atomic_t *v)
{
	int c = __atomic_load_n(&v->counter, __ATOMIC_RELAXED);

	while (c != 0) {
		if (__atomic_compare_exchange_n(&v->counter, &c, c + 1, true, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
	}
	return false;
}

static inline int64_t atomic64_read(const atomic64_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}
static inline void atomic64_add(int64_t i, atomic64_t *v)
{
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}
static inline void atomic64_set(atomic64_t *v, int64_t i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

/*
 * A counter written only by the thread that owns it (under a lock) and read
 * by anyone: a relaxed load and store, no locked instruction.
 */
static inline void local_add(int64_t *c, int64_t i)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + i, __ATOMIC_RELAXED);
}

typedef struct {
	pthread_mutex_t m;
} spinlock_t;

static inline void spin_lock_init(spinlock_t *l)
{
	pthread_mutex_init(&l->m, NULL);
}
static inline void spin_lock_destroy(spinlock_t *l)
{
	pthread_mutex_destroy(&l->m);
}
static inline void spin_lock(spinlock_t *l)
{
	pthread_mutex_lock(&l->m);
}
static inline bool spin_trylock(spinlock_t *l)
{
	return pthread_mutex_trylock(&l->m) == 0;
}
static inline void spin_unlock(spinlock_t *l)
{
	pthread_mutex_unlock(&l->m);
}

/*
 * raw_spinlock_t: a lock for sections of a few dozen instructions that
 * another thread almost never wants at the same time (a process's frame
 * cache, which only reclaim drains from outside).  Taking it is one atomic
 * exchange and dropping it one release store, a fraction of what a pthread
 * mutex costs even uncontended.  A waiter spins, then yields the CPU, so a
 * holder the host has preempted still gets to run.
 */
typedef struct {
	int locked;
} raw_spinlock_t;

static inline void raw_spin_lock_init(raw_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELAXED);
}
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}
static inline void raw_spin_lock(raw_spinlock_t *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		for (int spins = 0; __atomic_load_n(&l->locked, __ATOMIC_RELAXED); spins++) {
			if (spins < 100)
				cpu_relax();
			else
				sched_yield();
		}
}
static inline void raw_spin_unlock(raw_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif /* THPSIM_ATOMIC_H */
