/* waiters - the takes that wait for a task, indexed so that a turn of the
 * core touches only those that can be served now.
 *
 * Three indexes over one set of waiters:
 *   - by tube: each tube's waiters in arrival order. A take that names
 *     several tubes is on the list of each (once, however often it names
 *     one). When a task becomes ready in a tube, or its pause ends, the
 *     queue says so (queue_on_ready) and the tube is marked; the core's
 *     turn then serves the marked tubes only, each from the head of its
 *     list, and stops at the first waiter that finds nothing (the tube has
 *     nothing more to take for anyone).
 *   - by session: its waiters, to drop them all when it goes and to count
 *     them for the cap per connection.
 *   - by deadline: a heap, whose top is the next wait to time out.
 * Every operation is O(1) or O(log n) in the waiters, or O(the tubes one
 * take names); nothing walks them all but waiters_pop (shutdown).
 * A tube entry lives while waiters are on it or it is marked.
 * No I/O, no logging: ops/take.c and ops/wait.c decide what a
 * waiter gets. */
#ifndef SLUICE_SERVER_CORE_WAITERS_H
#define SLUICE_SERVER_CORE_WAITERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "queue/heap.h"
#include "queue/idx.h"
#include "queue/queue.h"

struct face_ctx;
struct wait_tube;
struct wait_sess;

/* One waiter on one tube's list. */
struct waiter_link {
	struct waiter_link *next, *prev;
	struct waiter *w;
	struct wait_tube *tube;
};

/* A take waiting for a task. */
struct waiter {
	uint64_t seq;                 /* arrival order */
	struct waiter *snext, *sprev; /* its session's waiters */
	struct wait_sess *sess;
	uint32_t hpos; /* in the deadline heap */
	struct face_ctx *ctx;
	uint32_t session;
	uint32_t max;
	bool detached;
	bool strict;      /* tubes in the order given */
	bool durable;     /* its reply waits for its takes' records */
	int64_t deadline; /* monotonic ms */
	/* --auth: counted against its token's parked quota (quota.c) */
	bool quota_tok;
	size_t quota_line;
	uint8_t quota_hash[32]; /* the token's hash (TOKENS_HASH_LEN) */
	size_t ntubes;
	struct queue_str *tubes;   /* ntubes names, in names[] */
	struct waiter_link *links; /* nlinks, one per distinct tube */
	size_t nlinks;
	uint64_t mem[]; /* tubes[], links[], then the names */
};

struct waiters {
	struct idx tubes;         /* wait_tube by hash of the name */
	struct idx sessions;      /* wait_sess by session */
	struct heap due;          /* waiters by (deadline, seq) */
	struct wait_tube *marked; /* tubes to serve, last marked first */
	struct wait_tube *retry;  /* tubes to serve next turn */
	uint64_t seed;            /* of the name hash */
	uint64_t seq;
	uint64_t n; /* waiters */
};

void waiters_init(struct waiters *ws);
/* Frees the indexes; the waiters must be gone (waiters_pop). */
void waiters_fini(struct waiters *ws);

/* A new waiter for `tubes` (copied), unlinked: fill its fields, then
 * waiters_add. Returns NULL when out of memory. */
struct waiter *waiters_new(const struct queue_str *tubes, size_t ntubes);

/* Links `w` (from waiters_new, fields set) last on each of its tubes,
 * into its session and the deadline heap. Returns 0 or SLUICE_ENOMEM (w
 * is then still the caller's, linked nowhere). */
int waiters_add(struct waiters *ws, struct waiter *w);

/* Unlinks `w` from every index; the caller frees it. */
void waiters_remove(struct waiters *ws, struct waiter *w);

/* The waiters of `session`, or 0. */
uint32_t waiters_of_session(const struct waiters *ws, uint32_t session);

/* The first waiter of `session` (then w->snext), or NULL. */
struct waiter *waiters_session_head(const struct waiters *ws, uint32_t session);

/* Whether a take waits on tube `name`. */
bool waiters_on(const struct waiters *ws, const char *name, size_t len);

/* How many takes wait on tube `name`. */
uint32_t waiters_count_on(
    const struct waiters *ws, const char *name, size_t len);

/* Marks tube `name` to be served this turn, when a take waits on it. */
void waiters_mark(struct waiters *ws, const char *name, size_t len);

/* Marks the tubes on which `w` is the first waiter: the only ones where
 * a task may wait for it now (on the others the waiters before it found
 * nothing, or the tube is marked already). */
void waiters_mark_heads(struct waiters *ws, const struct waiter *w);

/* A turn begins: the tubes put off by waiters_retry are marked. */
void waiters_turn(struct waiters *ws);

/* The next marked tube, unmarked and held (NULL: none): it stays valid
 * while its waiters come and go, until waiters_release or
 * waiters_retry. Its first waiter is waiters_head(t). */
struct wait_tube *waiters_next_marked(struct waiters *ws);
struct waiter *waiters_head(const struct wait_tube *t);
/* Lets go of a held tube (freed once no waiter is on it). */
void waiters_release(struct waiters *ws, struct wait_tube *t);
/* Lets go of a held tube, to be marked at the next turn (its first
 * waiter met a full log: room may come back). */
void waiters_retry(struct waiters *ws, struct wait_tube *t);

/* The waiter whose deadline comes first, or NULL. */
struct waiter *waiters_first_due(const struct waiters *ws);

/* Any waiter (for ending them all), or NULL. */
struct waiter *waiters_any(const struct waiters *ws);

/* The waiter at `i` in no particular order, 0 <= i < ws->n, for a walk
 * of them all that changes none (NULL past the end). */
struct waiter *waiters_at(const struct waiters *ws, uint64_t i);

#endif
