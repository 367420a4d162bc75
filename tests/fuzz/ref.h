/*
 * ref.h - the deliberately simple reference model the differential tests
 * compare libthpsim with.
 *
 * Per process, a flat map from page to (mapped, protection, madvise flags,
 * bytes) over one window of the address space, REF_BASE..REF_TOP, the top
 * REF_SIZE bytes below the model's mmap_base (docs/model.md: "Addresses are
 * chosen top-down below 0x7f0000000000").  No page tables, no THPs, no huge
 * zero page, no reference counts: what a program can observe only.  Bytes
 * never written read as zero; fork copies the map; exit drops it.
 *
 * The system calls follow Linux 6.18's argument checks and outcomes (see
 * ref.c for each, with the source function or the observation on this
 * machine's kernel that says so), plus the model's documented choices where
 * it differs on purpose (docs/model.md, "Divergences from Linux, by design").
 *
 * Each operation is decided first ("ref_*" with apply = false: what must
 * happen, which other outcomes are acceptable), then applied once the model
 * has answered, in the way the model's answer selects when more than one is
 * acceptable.  Nothing here knows libthpsim's internals.
 */
#ifndef THPSIM_FUZZ_REF_H
#define THPSIM_FUZZ_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REF_PAGE_SHIFT 12
#define REF_PAGE_SIZE ((uint64_t)1 << REF_PAGE_SHIFT)
#define REF_PMD_SIZE ((uint64_t)2 << 20)
#define REF_TASK_SIZE (((uint64_t)1 << 47) - REF_PAGE_SIZE) /* x86-64, 4 levels */
#define REF_MMAP_MIN ((uint64_t)0x10000)                      /* vm.mmap_min_addr */
#define REF_TOP ((uint64_t)0x7f0000000000)                    /* the model's mmap_base */
#define REF_SIZE ((uint64_t)128 << 20)
#define REF_BASE (REF_TOP - REF_SIZE)
#define REF_PAGES (REF_SIZE >> REF_PAGE_SHIFT)
#define REF_MAX_PROCS 8

/* Page flags. */
#define RP_MAPPED 0x1
#define RP_HUGEPAGE 0x2   /* MADV_HUGEPAGE: VM_HUGEPAGE */
#define RP_NOHUGEPAGE 0x4 /* MADV_NOHUGEPAGE: VM_NOHUGEPAGE */

/* Bytes of one page, shared copy-on-write between forked maps. */
struct ref_data {
	uint32_t refs;
	uint8_t b[REF_PAGE_SIZE];
};

struct ref_page {
	struct ref_data *data; /* NULL: reads as zeros */
	uint32_t id;           /* pages with one id are in one VMA (ref.c) */
	uint8_t prot;          /* PROT_READ|WRITE|EXEC bits */
	uint8_t flags;         /* RP_* */
	uint8_t young;         /* accessed since its entry was last made old (ref_mark_young) */
};

struct ref_mm {
	struct ref_page page[REF_PAGES];
	uint64_t nr_mapped;
};

struct ref {
	struct ref_mm *mm[REF_MAX_PROCS]; /* NULL: no process in this slot */
	uint32_t next_id;
	/* the model's profile items mmap depends on (diff_sync_ref_knobs) */
	bool map_stack_nohugepage; /* thpsim/map_stack_nohugepage */
	int anon_thp_align;        /* thpsim/anon_thp_align: 0 none, 1 pmd-or-larger,
				    * 2 pmd-multiple */
};

/* What the model must answer. */
#define REF_NO_ALT 1 /* no other errno is acceptable */
struct ref_expect {
	int err;         /* the expected return: 0 or a negative errno */
	int alt;         /* another acceptable return, or REF_NO_ALT */
	bool enomem_ok;  /* the call allocates: -ENOMEM is acceptable too */
	bool skip;       /* outside what the reference represents: do not run */
	bool collapse;   /* MADV_COLLAPSE: 0 or any of its errors, bytes unchanged */
	uint64_t addr;   /* mmap/mremap: the address it must return */
};

/* How to apply an operation the model answered. */
enum ref_path {
	REF_DECIDE, /* compute the expectation only */
	REF_OK,     /* the model succeeded */
	REF_ALT,    /* the model gave the alternative answer */
	REF_ENOMEM, /* the model ran out of memory */
};

void ref_init(struct ref *r);
void ref_free(struct ref *r);
bool ref_live(const struct ref *r, int slot);
int ref_proc_new(struct ref *r, int slot);
int ref_fork(struct ref *r, int parent, int child);
void ref_exit(struct ref *r, int slot);

static inline bool ref_in_window(uint64_t addr, uint64_t len)
{
	return addr >= REF_BASE && addr <= REF_TOP && len <= REF_TOP - addr;
}
const struct ref_page *ref_page_at(const struct ref *r, int slot, uint64_t addr);

/* The system calls: decide (path == REF_DECIDE) or apply. */
struct ref_expect ref_mmap(struct ref *r, int slot, uint64_t addr, uint64_t len, int prot,
			   int flags, enum ref_path path, uint64_t model_addr);
struct ref_expect ref_munmap(struct ref *r, int slot, uint64_t addr, uint64_t len,
			     enum ref_path path);
struct ref_expect ref_mprotect(struct ref *r, int slot, uint64_t addr, uint64_t len, int prot,
			       enum ref_path path);
struct ref_expect ref_madvise(struct ref *r, int slot, uint64_t addr, uint64_t len, int advice,
			      enum ref_path path);
struct ref_expect ref_mremap(struct ref *r, int slot, uint64_t addr, uint64_t old_len,
			     uint64_t new_len, int flags, uint64_t new_addr, enum ref_path path);

/*
 * Accesses.  ref_access_ok: the first page of [addr, addr+len) the access
 * may not touch (PROT_NONE, read-only for a write, not mapped), as an
 * offset from addr, or len when every byte may be accessed.
 */
uint64_t ref_access_ok(const struct ref *r, int slot, uint64_t addr, uint64_t len, bool write);
void ref_read(const struct ref *r, int slot, uint64_t addr, void *buf, size_t len);
void ref_write(struct ref *r, int slot, uint64_t addr, const void *buf, size_t len);
uint8_t ref_byte(const struct ref *r, int slot, uint64_t addr);

/*
 * The accessed bit, as far as the reference can be sure of it (a page
 * accessed by this process since its entry was last made old: fork makes
 * the child's entries old, copy_present_pte and copy_huge_pmd; MADV_FREE,
 * madvise_free_pte_range; a collapse maps a new PMD that is not young,
 * collapse_huge_page).  An entry may be young without this (a huge PMD is
 * young for all 512 pages once one is accessed, and a split passes that
 * on), never the other way.  khugepaged wants one young entry in a range.
 */
void ref_mark_young(struct ref *r, int slot, uint64_t addr, uint64_t len);
void ref_make_old(struct ref *r, int slot, uint64_t addr, uint64_t len);

/* Following the model after -ENOMEM (diff.c checks that what it follows is
 * an outcome Linux allows): move one page, unmap one page, a fresh id. */
void ref_move_page(struct ref *r, int slot, uint64_t from, uint64_t to, uint32_t id);
void ref_unmap_page(struct ref *r, int slot, uint64_t addr);
uint32_t ref_new_id(struct ref *r);

/* The highest free gap placement of mmap/mremap without a fixed address
 * (0 when the window has no room). */
uint64_t ref_unmapped_area(const struct ref *r, int slot, uint64_t len, bool thp_align);

#endif
