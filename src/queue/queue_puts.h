/* queue_puts - part of queue.h: applying a PUTS record (qrec.h) item by
 * item, as the core writes one (apply_puts.c). */
#ifndef SLUICE_QUEUE_QUEUE_PUTS_H
#define SLUICE_QUEUE_QUEUE_PUTS_H

#include <stdint.h>

struct queue;
struct qrec;

/* Applies `rec`, a PUT that qrec_puts_fits, as the next item of the PUTS
 * record at `lsn`: the first with lsn past the queue's (as queue_apply
 * would), each later one with the same lsn, which queue_apply refuses.
 * The state is then that of the PUTS of those items applied at `lsn`.
 * `rec` is decide's, not checked again (the core checks what the PUTS
 * needs of it, core_puts.c). Returns what queue_apply would; SLUICE_EINVAL for
 * a record that is no such PUT or an lsn that is neither. */
int queue_apply_puts_item(
    struct queue *q, uint64_t lsn, int64_t time, const struct qrec *rec);

#endif
