/* check_int - what the checker's files share (check.c, check_cap.c,
 * check_after.c, check_slot.c): a violation recorded in the report, and the
 * rules kept in files of their own. Internal to tests/history. */
#ifndef SLUICE_HISTORY_CHECK_INT_H
#define SLUICE_HISTORY_CHECK_INT_H

#include <stdarg.h>

#include "history.h"

/* Counts a violation of `rule` in `r` and keeps it in detail while there
 * is room: task `id` or payload `key`, operations `a` and `b` (NULL:
 * none) of `ops` (the sorted history), and the reason. */
void hist_violation_v(struct hist_report *r, const struct hist_op *ops,
    enum hist_rule rule, uint64_t id, uint64_t key, const struct hist_op *a,
    const struct hist_op *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 8, 0)));
void hist_violation(struct hist_report *r, const struct hist_op *ops,
    enum hist_rule rule, uint64_t id, uint64_t key, const struct hist_op *a,
    const struct hist_op *b, const char *fmt, ...)
    __attribute__((format(printf, 8, 9)));

/* The rule "cap" (history.h) over the `n` operations `ops`, sorted by
 * invocation, for the tube and each capped group; r->cap, r->cap_peak,
 * r->gcap and r->gcap_peak say what it saw. 0, or -1 out of
 * memory. */
int hist_check_cap(const struct hist_op *ops, size_t n, struct hist_report *r);

/* The rule "after" (history.h) over the `n` operations `ops`, sorted by
 * invocation; r->children counts the takes it judged. 0, or -1 out of
 * memory. */
int hist_check_after(
    const struct hist_op *ops, size_t n, struct hist_report *r);

/* The rule "slot" (history.h) over the `n` operations `ops`; r->slots
 * counts the slots it judged. 0, or -1 out of memory. */
int hist_check_slot(const struct hist_op *ops, size_t n, struct hist_report *r);

/* The rule "double" (history.h), its part about takes: no answered take
 * of a task while an earlier take surely held it; r->retakes counts the
 * pairs of takes it judged. 0, or -1 out of memory. */
int hist_check_double(
    const struct hist_op *ops, size_t n, struct hist_report *r);

#endif
