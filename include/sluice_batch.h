/* sluice_batch.h - the calls of libsluice for batches: tasks put with the
 * same batch name (sluice_put_opts.batch) form a batch; closed, it ends
 * when none of its tasks is live, and its callbacks are put into their
 * tubes then, once: on_success when every task was acked, on_complete
 * in any case, each with the batch's counts in its payload, a JSON
 * object (docs/queue.md, "Batches").
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_BATCH_H
#define SLUICE_BATCH_H

/* A batch as the server holds it. */
struct sluice_batch {
	char name[201];
	uint64_t total;                          /* tasks put into it */
	uint64_t waiting, ready, delayed, taken; /* live ones, by state */
	uint64_t buried; /* failed: buried (counted so, even if kicked) */
	uint64_t acked;
	uint64_t failed;     /* deleted, cancelled, moved to a dead letter */
	uint64_t started_at; /* unix ms of its first put; 0: none yet */
	uint64_t ended_at;   /* unix ms; 0: not ended */
	int closed;          /* takes no more tasks */
	int ended;
	char success_tube[201]; /* "": no on_success */
	uint64_t success_id;    /* the callback task put; 0: none (yet) */
	char complete_tube[201];
	uint64_t complete_id;
};

/* A callback: the tube ("": remove it) and a payload of `len` bytes,
 * which the task gets inside its JSON payload ("payload": a string). */
struct sluice_batch_callback {
	const char *tube;
	const void *payload;
	size_t len;
};

/* The batch `name`: SLUICE_ENOTFOUND when the server has none (never
 * made, or forgotten the dedup window after it ended). */
SLUICE_API int sluice_batch_show(
    struct sluice_client *c, const char *name, struct sluice_batch *out);

/* The batches the server holds, at most `limit` (1..1000): the open ones
 * first (the latest started first), then the ended ones it keeps for the
 * dedup window (the latest ended first). `*out` is a new array of `*n`
 * (free() it; NULL when none), `*total` (optional) how many the server
 * holds. Under --auth, a token of every tube (`*`) only. SLUICE_EINVAL
 * (limit). */
SLUICE_API int sluice_batch_list(struct sluice_client *c, uint32_t limit,
    struct sluice_batch **out, size_t *n, uint64_t *total);

/* Sets a batch's callbacks (NULL: that one stays as it was) and, with
 * `close` 1, closes it (after setting them): it takes no more tasks and
 * ends when none of its tasks is live. Makes the batch if it has none.
 * `out` (optional) gets it as it is then. Errors: SLUICE_EINVAL (name),
 * SLUICE_ETUBE (a callback's tube), SLUICE_ETOOBIG (a payload over
 * 65,536 bytes), SLUICE_EBATCH (it ended: nothing changes),
 * SLUICE_ENOTFOUND (close alone of an unknown batch). */
SLUICE_API int sluice_batch_set(struct sluice_client *c, const char *name,
    const struct sluice_batch_callback *on_success,
    const struct sluice_batch_callback *on_complete, int close,
    struct sluice_batch *out);

/* Cancels a batch: closes it and cancels each of its live tasks as
 * sluice_cancel does (a waiting, ready or delayed one goes at once, its
 * children following their rule; a taken one goes when its lease ends,
 * its holder's touch getting SLUICE_ECANCELED). The batch then ends as
 * its last task goes, and its on_complete callback (not on_success) is
 * put. An ended batch is no error (nothing is left to cancel). `out`
 * (optional) gets it as it is then. An admin's write. Errors:
 * SLUICE_EINVAL (name), SLUICE_ENOTFOUND (no such batch). */
SLUICE_API int sluice_batch_cancel(
    struct sluice_client *c, const char *name, struct sluice_batch *out);

#endif
