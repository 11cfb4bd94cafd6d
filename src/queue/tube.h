/* tube - a named queue: its ready, delayed and buried tasks in heaps, the
 * count of its taken tasks (which sit in the queue's lease heap), its
 * pause, and its counters. A tube is created on first use and lives as
 * long as the queue, so its counters and position never go away. */
#ifndef SLUICE_QUEUE_TUBE_H
#define SLUICE_QUEUE_TUBE_H

#include <stdint.h>

#include "queue/heap.h"
#include "queue/queue.h"

struct tube {
	struct heap ready;   /* ready tasks by (pri, id) */
	struct heap age;     /* the same tasks by (run_at, id) */
	struct heap delayed; /* delayed tasks by (run_at, id) */
	struct heap buried;  /* buried tasks by (updated_at, id) */
	struct heap done;    /* done tasks by (updated_at = finished, id) */
	uint64_t ntaken;
	struct queue_counters ctr;
	struct hourly *hourly; /* statistics per hour (hourly.h); NULL: none */
	int64_t paused_until;  /* 0: not paused */
	uint64_t hash;         /* of the name */
	uint32_t index;        /* creation order */
	uint32_t wpos;         /* in the queue's wake heap, by next run_at */
	uint32_t ppos;         /* in the queue's pause heap */
	uint16_t name_len;
	char name[]; /* NUL-terminated */
};

/* An empty tube, or NULL when out of memory. */
struct tube *tube_new(const char *name, size_t len, uint64_t hash);

/* Frees the tube and its heap arrays (not the tasks). Accepts NULL. */
void tube_free(struct tube *tb);

/* Task orders of the tube heaps and of the queue's lease heap. */
bool tube_ready_less(const void *a, const void *b);
bool tube_run_at_less(const void *a, const void *b);
bool tube_buried_less(const void *a, const void *b);
bool tube_deadline_less(const void *a, const void *b);

/* Tube orders of the queue's wake and pause heaps. */
bool tube_wake_less(const void *a, const void *b);
bool tube_pause_less(const void *a, const void *b);

/* Adds counters b into a. */
void tube_counters_add(
    struct queue_counters *a, const struct queue_counters *b);

#endif
