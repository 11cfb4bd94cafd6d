/* quota - the quotas of --auth's tokens (tubes, live tasks, payload
 * bytes, waiting takes): the model and its counts are described in
 * quota.c. Core thread only. */
#ifndef SLUICE_SERVER_CORE_QUOTA_H
#define SLUICE_SERVER_CORE_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#include "queue/queue.h"

struct core;
struct waiter;
struct tokens_entry;

struct quota {
	size_t *nsof;     /* per line of the token file: its namespace in the
	                     queue's counts (queue_acct_set), or SIZE_MAX */
	uint64_t *parked; /* per line of the token file: its takes waiting */
	size_t n;         /* lines */
	char why[480];    /* the last refusal, in words */
};

/* Counts what each token's namespace holds, after the token file was
 * read (start, SIGHUP) and once the queue is recovered: rebuilt from the
 * state, and the waiting takes counted again from the waiters. Returns 0,
 * or SLUICE_ENOMEM (logged; the quotas that need counts are then not
 * enforced until the next reload). */
int quota_apply(struct core *c);

/* Whether record `r`, decided for a request of token `t` (NULL without
 * --auth: no quota), keeps within the token's quotas: 0, or SLUICE_ELIMIT
 * with c->quota.why naming the quota. Puts, replaces, ack --to, and a
 * tube set or pause that makes a tube are counted; other records pass. */
int quota_admit(
    struct core *c, const struct tokens_entry *t, const struct qrec *r);

/* A take of token `t` (NULL: none) is about to wait: 0 (counted, until
 * quota_unpark), or SLUICE_ELIMIT with c->quota.why. */
int quota_park(struct core *c, const struct tokens_entry *t, struct waiter *w);

/* A waiting take is no longer waiting (served, timed out, gone). */
void quota_unpark(struct core *c, struct waiter *w);

void quota_fini(struct quota *q);

#endif
