/* tubeconf - the settings in force for a tube: its own where it sets
 * them (struct tube_conf, made by TUBE_SET), else the server's defaults
 * (struct queue_config, and the QUEUE_DEFAULT_* of what it does not
 * configure). A tube that was never set has conf NULL, and each of these
 * costs it one test of that pointer.
 *
 * Decide reads them when it fills a record (a put's ttr and max_attempts,
 * a fail's backoff, where a buried task goes); apply never does, so a
 * TUBE_SET changes no task already queued, and replay does not depend on
 * the settings a node had when it wrote a record. */
#include <stdlib.h>
#include <string.h>

#include "queue/qstate.h"
#include "sluice.h"

/* The tube's own settings when it sets `field`, else NULL. */
static const struct qrec_tube_conf *
own(const struct tube *tb, uint8_t field)
{
	if (tb == NULL || tb->conf == NULL || !(tb->conf->v.set & field))
		return NULL;
	return &tb->conf->v;
}

uint32_t
queue_tube_ttr_ms(const struct queue *q, const struct tube *tb)
{
	const struct qrec_tube_conf *c = own(tb, QREC_TS_TTR);

	return c != NULL ? c->ttr : q->cfg.default_ttr_ms;
}

uint32_t
queue_tube_max_attempts(const struct queue *q, const struct tube *tb)
{
	const struct qrec_tube_conf *c = own(tb, QREC_TS_MAX_ATTEMPTS);

	(void)q;
	return c != NULL ? c->max_attempts : 0; /* unlimited */
}

void
queue_tube_backoff(const struct queue *q, const struct tube *tb,
    uint32_t *base_ms, uint32_t *cap_ms)
{
	const struct qrec_tube_conf *c = own(tb, QREC_TS_BACKOFF);

	*base_ms = c != NULL ? c->backoff_base : q->cfg.backoff_base_ms;
	*cap_ms = c != NULL ? c->backoff_cap : q->cfg.backoff_cap_ms;
}

int64_t
queue_tube_keep_done_ms(const struct queue *q, const struct tube *tb)
{
	const struct qrec_tube_conf *c = own(tb, QREC_TS_KEEP_DONE);

	return c != NULL ? c->keep_done : q->cfg.keep_done_ms;
}

bool
queue_tube_lost_lease_immediate(const struct queue *q, const struct tube *tb)
{
	const struct qrec_tube_conf *c = own(tb, QREC_TS_LOST_LEASE);

	if (c != NULL)
		return c->lost_lease_immediate;
	return q->cfg.lost_lease_retry == QUEUE_RETRY_IMMEDIATE;
}

bool
queue_tube_lost_lease_own(const struct tube *tb)
{
	return own(tb, QREC_TS_LOST_LEASE) != NULL;
}

bool
queue_tube_dead_letter(const struct queue *q, const struct tube *tb,
    const char **name, size_t *len)
{
	const struct qrec_tube_conf *c = own(tb, QREC_TS_DEAD_LETTER);

	(void)q;
	if (c == NULL)
		return false;
	*name = c->dead_letter;
	*len = c->dead_letter_len;
	return true;
}

int
queue_tube_settings(
    struct queue *q, const char *name, size_t len, struct qrec_tube_conf *out)
{
	const struct tube *tb;
	struct qrec_tube_conf c;

	if (!qrec_tube_valid(name, len))
		return SLUICE_ETUBE;
	tb = qs_tube(q, name, len);
	c = tube_conf_get(tb);
	c.ttr = queue_tube_ttr_ms(q, tb);
	c.max_attempts = queue_tube_max_attempts(q, tb);
	queue_tube_backoff(q, tb, &c.backoff_base, &c.backoff_cap);
	c.keep_done = queue_tube_keep_done_ms(q, tb);
	c.lost_lease_immediate = queue_tube_lost_lease_immediate(q, tb);
	*out = c;
	return 0;
}

int
qs_apply_tube_set(struct queue *q, const struct qrec_tube_set *r)
{
	struct tube_conf *tc;
	struct tube *tb;
	bool created;
	int rc;

	if ((rc = tube_conf_new(&r->conf, &tc)) != 0)
		return rc;
	if ((rc = qs_tube_get(q, r->tube, r->tube_len, &tb, &created)) != 0) {
		free(tc);
		return rc;
	}
	free(tb->conf);
	tb->conf = tc;
	return 0;
}
