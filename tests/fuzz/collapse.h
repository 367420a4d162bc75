/*
 * collapse.h - MADV_COLLAPSE and khugepaged in the differential executor:
 * the reference's answers, decided from the entries the model shows before
 * the operation by Linux's rules (collapse.c), and the model's checked.
 */
#ifndef THPSIM_FUZZ_COLLAPSE_H
#define THPSIM_FUZZ_COLLAPSE_H

#include "diff.h"

/* Run MADV_COLLAPSE (op: madvise, advice 25, arguments already valid) on
 * the model and judge it: 0, or -1 with why filled. */
int collapse_madvise(struct diff *d, const struct op *op, int slot, char *why, size_t whylen);
/* Run "khugepaged scans=N" on the model and judge every process's ranges. */
int collapse_khugepaged(struct diff *d, const struct op *op, char *why, size_t whylen);
/* After a madvise the model answered: MADV_HUGEPAGE registers the mm with
 * khugepaged (khugepaged_enter_vma) when the reference can be sure it does. */
void collapse_note_madvise(struct diff *d, const struct op *op, int slot, int got);

#endif
