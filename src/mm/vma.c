/*
 * vma.c - virtual memory areas: the ordered set of VMAs of an address space,
 * lookup, split, merge and flag changes (mirrors mm/vma.c and the lookup
 * parts of mm/mmap.c).
 *
 * Linux keeps VMAs in a maple tree; the model keeps them in an AVL tree
 * ordered by vm_start (O(log n) lookup, insert and erase) threaded with a
 * sorted list for neighbours, plus a one-entry cache of the last VMA found,
 * which is what a run of faults in one region hits.
 *
 * Two neighbouring anonymous VMAs merge, as in Linux, when their flags are
 * equal, their linear page indices (vm_pgoff) continue each other, and their
 * anon_vmas are compatible: the same one, or only one has one and it was not
 * inherited through fork.  Merging matters here: whether an aligned 2 MiB
 * lies inside one VMA decides whether a fault may map a huge page.
 */
#include "internal.h"

/* ---- AVL tree keyed by vm_start ---- */
static int height(const struct vm_area_struct *v)
{
	return v ? v->height : 0;
}

static void fix_height(struct vm_area_struct *v)
{
	int l = height(v->left), r = height(v->right);

	v->height = (l > r ? l : r) + 1;
}

static struct vm_area_struct *rotate_right(struct vm_area_struct *v)
{
	struct vm_area_struct *l = v->left;

	v->left = l->right;
	l->right = v;
	fix_height(v);
	fix_height(l);
	return l;
}

static struct vm_area_struct *rotate_left(struct vm_area_struct *v)
{
	struct vm_area_struct *r = v->right;

	v->right = r->left;
	r->left = v;
	fix_height(v);
	fix_height(r);
	return r;
}

static struct vm_area_struct *rebalance(struct vm_area_struct *v)
{
	int bal;

	fix_height(v);
	bal = height(v->left) - height(v->right);
	if (bal > 1) {
		if (height(v->left->left) < height(v->left->right))
			v->left = rotate_left(v->left);
		return rotate_right(v);
	}
	if (bal < -1) {
		if (height(v->right->right) < height(v->right->left))
			v->right = rotate_right(v->right);
		return rotate_left(v);
	}
	return v;
}

static struct vm_area_struct *avl_insert(struct vm_area_struct *root, struct vm_area_struct *n)
{
	if (!root)
		return n;
	if (n->vm_start < root->vm_start)
		root->left = avl_insert(root->left, n);
	else
		root->right = avl_insert(root->right, n);
	return rebalance(root);
}

static struct vm_area_struct *avl_remove_min(struct vm_area_struct *v, struct vm_area_struct **min)
{
	if (!v->left) {
		*min = v;
		return v->right;
	}
	v->left = avl_remove_min(v->left, min);
	return rebalance(v);
}

static struct vm_area_struct *avl_erase(struct vm_area_struct *root, struct vm_area_struct *n)
{
	if (!root)
		return NULL;
	if (n->vm_start < root->vm_start) {
		root->left = avl_erase(root->left, n);
	} else if (n->vm_start > root->vm_start) {
		root->right = avl_erase(root->right, n);
	} else {
		struct vm_area_struct *l = root->left, *r = root->right, *min;

		VM_BUG_ON(root != n);
		if (!r)
			return l;
		r = avl_remove_min(r, &min);
		min->left = l;
		min->right = r;
		return rebalance(min);
	}
	return rebalance(root);
}

/* The VMA with the largest vm_start <= addr, or NULL. */
static struct vm_area_struct *vma_floor(const struct mm_struct *mm, uint64_t addr)
{
	struct vm_area_struct *v = mm->mm_rb, *best = NULL;

	while (v) {
		if (v->vm_start <= addr) {
			best = v;
			v = v->right;
		} else {
			v = v->left;
		}
	}
	return best;
}

struct vm_area_struct *find_vma(struct mm_struct *mm, uint64_t addr)
{
	struct vm_area_struct *v = mm->mmap_cache;

	if (v && v->vm_start <= addr && addr < v->vm_end)
		return v;
	v = vma_floor(mm, addr);
	if (!v)
		v = mm->mmap;
	else if (v->vm_end <= addr)
		v = v->vm_next;
	if (v)
		mm->mmap_cache = v;
	return v;
}

const struct vm_area_struct *vma_find_const(const struct mm_struct *mm, uint64_t addr)
{
	const struct vm_area_struct *v = vma_floor(mm, addr);

	return v && addr < v->vm_end ? v : NULL;
}

struct vm_area_struct *vma_lookup(struct mm_struct *mm, uint64_t addr)
{
	struct vm_area_struct *v = find_vma(mm, addr);

	return v && v->vm_start <= addr ? v : NULL;
}

void vma_link(struct mm_struct *mm, struct vm_area_struct *vma)
{
	struct vm_area_struct *prev = vma_floor(mm, vma->vm_start);

	VM_BUG_ON_VMA(prev && prev->vm_end > vma->vm_start, vma);
	vma->left = vma->right = NULL;
	vma->height = 1;
	mm->mm_rb = avl_insert(mm->mm_rb, vma);
	vma->vm_prev = prev;
	vma->vm_next = prev ? prev->vm_next : mm->mmap;
	if (prev)
		prev->vm_next = vma;
	else
		mm->mmap = vma;
	if (vma->vm_next)
		vma->vm_next->vm_prev = vma;
	VM_BUG_ON_VMA(vma->vm_next && vma->vm_next->vm_start < vma->vm_end, vma);
	mm->map_count++;
	mm->total_vm += (int64_t)((vma->vm_end - vma->vm_start) >> PAGE_SHIFT);
}

void vma_unlink(struct mm_struct *mm, struct vm_area_struct *vma)
{
	mm->mm_rb = avl_erase(mm->mm_rb, vma);
	if (vma->vm_prev)
		vma->vm_prev->vm_next = vma->vm_next;
	else
		mm->mmap = vma->vm_next;
	if (vma->vm_next)
		vma->vm_next->vm_prev = vma->vm_prev;
	vma->vm_prev = vma->vm_next = NULL;
	if (mm->mmap_cache == vma)
		mm->mmap_cache = NULL;
	mm->map_count--;
	mm->total_vm -= (int64_t)((vma->vm_end - vma->vm_start) >> PAGE_SHIFT);
}

struct vm_area_struct *vm_area_alloc(struct mm_struct *mm)
{
	struct vm_area_struct *vma = calloc(1, sizeof(*vma));

	if (vma)
		vma->vm_mm = mm;
	return vma;
}

struct vm_area_struct *vm_area_dup(struct vm_area_struct *orig)
{
	struct vm_area_struct *vma = malloc(sizeof(*vma));

	if (!vma)
		return NULL;
	*vma = *orig;
	vma->left = vma->right = vma->vm_prev = vma->vm_next = NULL;
	vma->height = 1;
	return vma;
}

void vm_area_free(struct vm_area_struct *vma)
{
	free(vma);
}

/* Move vma's bounds; its key in the tree may change, so re-link it. */
static void vma_set_range(struct vm_area_struct *vma, uint64_t start, uint64_t end, uint64_t pgoff)
{
	struct mm_struct *mm = vma->vm_mm;

	vma_unlink(mm, vma);
	vma->vm_start = start;
	vma->vm_end = end;
	vma->vm_pgoff = pgoff;
	vma_link(mm, vma);
}

/* expand_downwards' VMA half: vma now starts at start (below its old start),
 * its linear page index moved with it. */
void vma_expand_down(struct vm_area_struct *vma, uint64_t start)
{
	uint64_t grow = (vma->vm_start - start) >> PAGE_SHIFT;

	vma_set_range(vma, start, vma->vm_end, vma->vm_pgoff - grow);
}

/* __split_vma: [vm_start, addr) and [addr, vm_end) become two VMAs. */
int split_vma(struct vm_area_struct *vma, uint64_t addr, int new_below)
{
	struct mm_struct *mm = vma->vm_mm;
	struct vm_area_struct *new;
	uint64_t off = (addr - vma->vm_start) >> PAGE_SHIFT;

	VM_BUG_ON_VMA(addr <= vma->vm_start || addr >= vma->vm_end || !IS_ALIGNED(addr, PAGE_SIZE),
		      vma);
	new = vm_area_dup(vma);
	if (!new)
		return -ENOMEM;
	/* a huge PMD straddling the new boundary must become PTEs first */
	vma_adjust_trans_huge(vma, addr, addr);
	if (new_below) {
		new->vm_end = addr;
		vma_set_range(vma, addr, vma->vm_end, vma->vm_pgoff + off);
	} else {
		new->vm_start = addr;
		new->vm_pgoff = vma->vm_pgoff + off;
		vma_set_range(vma, vma->vm_start, addr, vma->vm_pgoff);
	}
	vma_link(mm, new);
	return 0;
}

static bool anon_vma_compatible(const struct vm_area_struct *a, const struct vm_area_struct *b)
{
	if (a->anon_vma == b->anon_vma)
		return true;
	if (a->anon_vma && b->anon_vma)
		return false;
	return a->anon_vma ? !a->anon_vma_chained : !b->anon_vma_chained;
}

/* Can "a" and "b" (a just below b) become one VMA? */
static bool can_merge(const struct vm_area_struct *a, const struct vm_area_struct *b)
{
	return a && b && a->vm_end == b->vm_start && a->vm_flags == b->vm_flags &&
	       a->vm_pgoff + ((a->vm_end - a->vm_start) >> PAGE_SHIFT) == b->vm_pgoff &&
	       anon_vma_compatible(a, b);
}

/* "a" absorbs "b", its upper neighbour. */
static void merge_into(struct vm_area_struct *a, struct vm_area_struct *b)
{
	struct mm_struct *mm = a->vm_mm;

	if (!a->anon_vma) {
		a->anon_vma = b->anon_vma;
		a->anon_vma_chained = b->anon_vma_chained;
	}
	vma_unlink(mm, b);
	/* growing a's end keeps its key: no re-link needed */
	mm->total_vm += (int64_t)((b->vm_end - b->vm_start) >> PAGE_SHIFT);
	a->vm_end = b->vm_end;
	vm_area_free(b);
}

struct vm_area_struct *vma_merge_neighbours(struct vm_area_struct *vma)
{
	struct vm_area_struct *prev = vma->vm_prev, *next = vma->vm_next;

	if (can_merge(prev, vma)) {
		merge_into(prev, vma);
		vma = prev;
	}
	if (can_merge(vma, next))
		merge_into(vma, next);
	return vma;
}

struct vm_area_struct *vma_modify_flags(struct vm_area_struct *vma, uint64_t start, uint64_t end,
					uint64_t new_flags, int *err)
{
	*err = 0;
	if (vma->vm_flags == new_flags)
		return vma;
	if (start > vma->vm_start) {
		*err = split_vma(vma, start, 1);
		if (*err)
			return vma;
	}
	if (end < vma->vm_end) {
		*err = split_vma(vma, end, 0);
		if (*err)
			return vma;
	}
	vma->vm_flags = new_flags;
	vma_set_page_prot(vma);
	return vma_merge_neighbours(vma);
}

/* Give the VMA an anon_vma before its first anonymous page, reusing a
 * neighbour's when the two could merge (find_mergeable_anon_vma). */
int anon_vma_prepare(struct vm_area_struct *vma)
{
	struct vm_area_struct *n[2] = { vma->vm_prev, vma->vm_next };

	if (vma->anon_vma)
		return 0;
	for (int i = 0; i < 2; i++) {
		struct vm_area_struct *o = n[i];

		if (o && o->anon_vma && !o->anon_vma_chained &&
		    (i ? can_merge(vma, o) : can_merge(o, vma))) {
			vma->anon_vma = o->anon_vma;
			return 0;
		}
	}
	vma->anon_vma = ++vma->vm_mm->next_anon_vma;
	vma->anon_vma_chained = false;
	return 0;
}

/* ---- checker ---- */
static int check_subtree(const struct vm_area_struct *v, const struct vm_area_struct **prev,
			 int *count, char *err, size_t errlen)
{
	int hl, hr;

	if (!v)
		return 0;
	hl = check_subtree(v->left, prev, count, err, errlen);
	if (hl < 0)
		return -1;
	if (*prev ? (*prev)->vm_next != v : false) {
		snprintf(err, errlen, "VMA list out of order at %#llx",
			 (unsigned long long)v->vm_start);
		return -1;
	}
	if (*prev && (*prev)->vm_end > v->vm_start) {
		snprintf(err, errlen, "VMAs overlap at %#llx", (unsigned long long)v->vm_start);
		return -1;
	}
	if (v->vm_start >= v->vm_end || !IS_ALIGNED(v->vm_start | v->vm_end, PAGE_SIZE)) {
		snprintf(err, errlen, "bad VMA bounds %#llx-%#llx",
			 (unsigned long long)v->vm_start, (unsigned long long)v->vm_end);
		return -1;
	}
	*prev = v;
	(*count)++;
	hr = check_subtree(v->right, prev, count, err, errlen);
	if (hr < 0)
		return -1;
	if (v->height != (hl > hr ? hl : hr) + 1 || hl - hr > 1 || hr - hl > 1) {
		snprintf(err, errlen, "VMA tree unbalanced at %#llx", (unsigned long long)v->vm_start);
		return -1;
	}
	return v->height;
}

bool vma_tree_check(struct mm_struct *mm, char *err, size_t errlen)
{
	const struct vm_area_struct *prev = NULL;
	int count = 0;
	int64_t total = 0;

	if (check_subtree(mm->mm_rb, &prev, &count, err, errlen) < 0)
		return false;
	if (mm->mmap && mm->mmap->vm_prev) {
		snprintf(err, errlen, "first VMA has a predecessor");
		return false;
	}
	if (count != mm->map_count) {
		snprintf(err, errlen, "map_count %d but %d VMAs in the tree", mm->map_count, count);
		return false;
	}
	for (const struct vm_area_struct *v = mm->mmap; v; v = v->vm_next)
		total += (int64_t)((v->vm_end - v->vm_start) >> PAGE_SHIFT);
	if (total != mm->total_vm) {
		snprintf(err, errlen, "total_vm %lld but VMAs span %lld pages",
			 (long long)mm->total_vm, (long long)total);
		return false;
	}
	return true;
}
