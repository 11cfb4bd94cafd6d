/* apply_puts - the PUTS record's apply: its items in order, each as a
 * PUT's (qs_apply_put), under the record's one LSN; and the core's way of
 * applying them one by one while it writes the record (queue_puts.h).
 *
 * Design: a PUTS is N plain PUTs of one tube, so its apply is theirs and
 * nothing else: the hooks around an apply (outcome, deps, batches) look
 * only at records that end or wait on tasks, and a PUTS places tasks only
 * (qs_place notes the LSN for its tube, as N PUTs would note theirs). The
 * id of the first item must be the queue's next or past it, checked
 * before anything is applied; a later item a corrupt log makes fail (a
 * key that is live) leaves the items before it applied: every caller
 * treats a failed apply as the end of that state (recovery stops, the
 * core aborts, a follower starts over from its leader's snapshot). */
#include "queue/qstate.h"
#include "queue/queue_puts.h"
#include "sluice.h"

int
qs_apply_puts(struct queue *q, int64_t time, const struct qrec_puts *p)
{
	struct qrec_puts_it it;
	struct qrec_put put;
	int rc;

	if (p->first_id < q->next_id)
		return SLUICE_ECORRUPT;
	qrec_puts_begin(p, &it);
	while (qrec_puts_next(&it, &put))
		if ((rc = qs_apply_put(q, time, &put)) != 0)
			return rc;
	return it.bad || it.i != p->n ? SLUICE_ECORRUPT : 0;
}

int
queue_apply_puts_item(
    struct queue *q, uint64_t lsn, int64_t time, const struct qrec *rec)
{
	uint64_t was = q->lsn;
	int rc;

	if (!qrec_puts_fits(rec) || lsn < q->lsn || lsn == 0)
		return SLUICE_EINVAL;
	/* A later item: the record's LSN is the queue's already. */
	if (lsn == q->lsn)
		q->lsn = lsn - 1;
	rc = qs_apply(q, lsn, time, rec, true); /* decide made it */
	if (rc != 0)
		q->lsn = was;
	return rc;
}
