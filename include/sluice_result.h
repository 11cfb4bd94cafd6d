/* sluice_result.h - waiting for a task's result, and cancelling: the
 * calls of libsluice for the end of a task rather than its work.
 *
 * A task's outcome - done (its result), failed for good (buried, or
 * moved to its tube's dead-letter tube: its last error), deleted or
 * cancelled - is kept by the server for its dedup window (sluiced
 * --dedup-window, 10 minutes by default) after the task is gone, so a
 * wait that arrives late still learns it.
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_RESULT_H
#define SLUICE_RESULT_H

/* How a task that is gone ended (sluice_outcome.state, final): with
 * SLUICE_DONE and SLUICE_BURIED, the ends a task has. sluice_state_name
 * names them ("deleted", "cancelled", "dead_lettered"). */
enum sluice_end {
	SLUICE_DELETED = 16,       /* deleted by an operator */
	SLUICE_CANCELLED = 17,     /* cancelled (sluice_cancel) */
	SLUICE_DEAD_LETTERED = 18, /* moved to its tube's dead-letter tube */
};

enum {
	SLUICE_WAIT_MAX_MS = 3600 * 1000, /* the longest wait of one call */
	SLUICE_TEXT_MAX = 65535, /* a result (an ack's is at most 65,535
	                            bytes) or an error text, whole: the
	                            outcome below is about 64 KiB */
};

/* How a task stands (sluice_wait). */
struct sluice_outcome {
	uint64_t id;
	int final;      /* 1: it ended (done, or failed for good) */
	int state;      /* final: SLUICE_DONE, SLUICE_BURIED or a sluice_end;
	                   else the task's state (SLUICE_READY ...) */
	int cancelled;  /* taken and cancelled: it goes when its lease ends */
	uint64_t time;  /* final: unix ms it ended; else 0 */
	char tube[201]; /* its tube, NUL-terminated ("" when
	                   the server no longer knows it) */
	char text[SLUICE_TEXT_MAX + 1]; /* SLUICE_DONE: its result; else its
	                                   last error; NUL-terminated */
	size_t text_len;                /* the text may hold NUL bytes */
};

/* Waits up to `timeout_ms` (0: does not wait; at most SLUICE_WAIT_MAX_MS)
 * for task `id` to end, and fills `*out`: final with how it ended, or,
 * when the time passed first, not final with its state. The server parks
 * the request (no polling); the call's own timeout is extended by the
 * wait. Returns 0; SLUICE_ENOTFOUND (no such task: never put, or it
 * ended longer ago than the server keeps outcomes), SLUICE_EINVAL (id 0,
 * a timeout over the limit, out NULL), SLUICE_EUNKNOWNOP (a server older
 * than wait). Retried after a lost connection (a read). */
SLUICE_API int sluice_wait(struct sluice_client *c, uint64_t id,
    uint64_t timeout_ms, struct sluice_outcome *out);

/* Cancels task `id`: a ready, delayed or buried task is deleted at once;
 * a taken one is marked: its holder's next touch, release, fail or bury
 * gets SLUICE_ECANCELED (the worker stops), and the task is removed when
 * its lease ends, whatever the ending (an ack succeeds and removes it).
 * Either way sluice_wait then says SLUICE_CANCELLED. A task cancelled
 * already is no error. Returns 0; SLUICE_ENOTFOUND (unknown, or ended
 * already), SLUICE_EUNKNOWNOP (a server older than cancel). */
SLUICE_API int sluice_cancel(struct sluice_client *c, uint64_t id);

/* Cancels `n` tasks (1..SLUICE_BATCH_MAX) in one request, each on its
 * own. Returns as sluice_delete_batch. */
SLUICE_API int sluice_cancel_batch(struct sluice_client *c, const uint64_t *ids,
    size_t n, struct sluice_result *results);

#endif
