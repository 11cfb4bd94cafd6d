/* tube - a named queue: its ready, delayed and buried tasks in heaps, the
 * count of its taken tasks (which sit in the queue's lease heap), its
 * pause, its counters and its settings. A tube is created on first use
 * and lives until a TUBE_DELETE removes it (its counters leave the
 * queue's totals with it); a tube never set carries no settings at all
 * (conf NULL), so it costs what a tube always did. */
#ifndef SLUICE_QUEUE_TUBE_H
#define SLUICE_QUEUE_TUBE_H

#include <stdint.h>

#include "queue/heap.h"
#include "queue/queue.h"

/* A tube's own settings; the dead letter's name is copied here. */
struct groups;
struct gconf;

struct tube_conf {
	struct qrec_tube_conf v; /* v.dead_letter points at dead_letter[] */
	char dead_letter[QREC_NAME_MAX];
};

struct tube {
	struct heap ready;   /* ready tasks by (pri, run_at, id); with
	                        groups, those of the "" group */
	struct heap age;     /* every ready task by (run_at, id) */
	struct heap delayed; /* delayed tasks by (run_at, id) */
	struct heap buried;  /* buried tasks by (updated_at, id) */
	struct heap done;    /* done tasks by (updated_at = finished, id) */
	struct heap waiting; /* tasks waiting for their parents, by id */
	uint64_t ntaken;
	uint64_t dep_lsn; /* the last record that placed one of its tasks or
	                   * changed the tube, a take under a session lease
	                   * aside: what a take from it depends on */
	uint64_t live;    /* tasks in every state but done (acct.c) */
	uint64_t bytes;   /* their payloads */
	uint32_t aset;    /* the namespaces that cover it (acct.c); 0: none */
	struct queue_counters ctr;
	struct tube_conf *conf; /* NULL: every setting is the server's */
	struct flow *flow;      /* its flow limits (flow.h); NULL: none */
	struct groups *groups;  /* its fair groups (group.h); NULL: none */
	struct gconf *gconf;    /* its group settings (glimit.h); NULL: none */
	struct hourly *hourly;  /* statistics per hour (hourly.h); NULL: none */
	struct rates *rates;    /* events per 5 s (rates.h); NULL: none yet */
	int64_t paused_until;   /* 0: not paused */
	uint64_t hash;          /* of the name */
	uint32_t index;         /* creation order */
	uint32_t slot;          /* in the queue's tslots, which tasks name */
	uint32_t wpos;          /* in the queue's wake heap, by next run_at */
	uint32_t ppos;          /* in the queue's pause heap */
	uint16_t name_len;
	uint8_t moving_out; /* moving to another cluster (move.h): a take
	                       finds none of its tasks */
	char name[];        /* NUL-terminated */
};

/* An empty tube, or NULL when out of memory. */
struct tube *tube_new(const char *name, size_t len, uint64_t hash);

/* A copy of `c` (NULL when it sets nothing: *out NULL), or
 * SLUICE_ENOMEM. */
int tube_conf_new(const struct qrec_tube_conf *c, struct tube_conf **out);

/* The tube's settings, or all-default ones (set 0) when it has none. */
struct qrec_tube_conf tube_conf_get(const struct tube *tb);

/* Frees the tube, its settings and its heap arrays (not the tasks).
 * Accepts NULL. */
void tube_free(struct tube *tb);

/* Its ready tasks (in every group). */
static inline uint32_t
tube_nready(const struct tube *tb)
{
	return tb->age.len;
}

/* Its tasks, in every state (done ones too). */
static inline size_t
tube_tasks(const struct tube *tb)
{
	return (size_t)tb->age.len + tb->delayed.len + tb->buried.len +
	    tb->done.len + tb->ntaken + tb->waiting.len;
}

/* Task orders of the tube heaps and of the queue's lease heap. */
bool tube_ready_less(const void *a, const void *b);
bool tube_run_at_less(const void *a, const void *b);
bool tube_buried_less(const void *a, const void *b);
bool tube_deadline_less(const void *a, const void *b);
bool tube_id_less(const void *a, const void *b);

/* Tube orders of the queue's wake and pause heaps. */
bool tube_wake_less(const void *a, const void *b);
bool tube_pause_less(const void *a, const void *b);

/* Adds counters b into a; takes them out of a. */
void tube_counters_add(
    struct queue_counters *a, const struct queue_counters *b);
void tube_counters_sub(
    struct queue_counters *a, const struct queue_counters *b);

#endif
