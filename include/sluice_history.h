/* sluice_history.h - a tube's statistics over time: per UTC hour for the
 * last 48 hours (acks, fails, buries, expired leases, and the
 * distributions of work and wait times), and the rolling history of
 * events and depths per second over the last 15 minutes, as the
 * dashboard's charts draw them.
 *
 * Part of sluice.h, which includes it: include <sluice.h>, never this
 * file alone (it uses sluice.h's types and SLUICE_API). */
#ifndef SLUICE_HISTORY_API_H
#define SLUICE_HISTORY_API_H

/* A distribution of durations in ms. total and max are exact; p50 and
 * p99 come from a log-scale histogram (bounds 1, 2, 3, 4, 6, 8, 12, ...
 * 2^24 ms): within 22.5% of the true value up to 4.66 hours, the hour's
 * maximum beyond. */
struct sluice_dist {
	uint64_t count;
	uint64_t total_ms;
	uint64_t max_ms;
	uint64_t p50_ms;
	uint64_t p99_ms;
};

/* One UTC hour of a tube's work, counted by the time of the server's
 * records (so every node of a cluster, and a restarted one, agree). */
struct sluice_hour {
	uint64_t start; /* unix ms of the hour's start */
	uint64_t acks;
	uint64_t fails;
	uint64_t buries; /* buried, or moved to the dead letter instead */
	uint64_t ttr_expired;
	struct sluice_dist work; /* of its acks: take -> ack */
	struct sluice_dist wait; /* of its takes: ready -> take */
};

/* The statistics of `tube` (NULL: every tube, merged) per hour for the last
 * 48 hours of the server's clock: the hours with any event, newest first.
 * Returns 0, `*hours` and `*n` (free with sluice_stats_hourly_free());
 * SLUICE_ETUBE, SLUICE_ENOTFOUND (no such tube). Retried after a lost
 * connection. */
SLUICE_API int sluice_stats_hourly(struct sluice_client *c, const char *tube,
    struct sluice_hour **hours, size_t *n);
SLUICE_API void sluice_stats_hourly_free(struct sluice_hour *hours);

/* The kinds of events a history counts, then the depths it keeps. */
enum sluice_history_kind {
	SLUICE_H_PUT = 0,
	SLUICE_H_TAKE = 1,
	SLUICE_H_ACK = 2,
	SLUICE_H_FAIL = 3,
	SLUICE_H_BURY = 4,  /* buried, or moved to the dead letter instead */
	SLUICE_H_TTR = 5,   /* leases ended by their ttr */
	SLUICE_H_READY = 6, /* tasks in each state at the end of the slot */
	SLUICE_H_DELAYED = 7,
	SLUICE_H_TAKEN = 8,
	SLUICE_H_BURIED = 9,
	SLUICE_H_KINDS = 10
};

/* The rolling history of events the server keeps in memory (per second
 * for every tube, per 5 s for one, over the last 15 minutes; empty after
 * a restart; a follower's counts what it applied): `n` slots of `step_ms`
 * ms, the first starting at unix ms `start`, the last holding the
 * server's now; count[k][i] the events of kind k in slot i, or for
 * SLUICE_H_READY on the tasks in that state at the end of slot i (before
 * the server began counting: as it began). A server older than the depths
 * sends none: `depth` 0, and those counts 0. */
struct sluice_history {
	uint64_t start;
	uint32_t step_ms;
	size_t n;
	uint32_t *count[SLUICE_H_KINDS];
	int depth; /* 1: the server sent the depths */
};

/* The history of `tube` (NULL: of every tube) over the last `secs`
 * seconds (1..3600; a tube's history holds its last 900 seconds, an
 * hour of the whole node's). Returns 0 and `*out` (free with
 * sluice_history_free()); SLUICE_EINVAL (secs), SLUICE_ETUBE,
 * SLUICE_ENOTFOUND (no such tube). Retried after a lost connection. */
SLUICE_API int sluice_history(struct sluice_client *c, const char *tube,
    uint32_t secs, struct sluice_history **out);
SLUICE_API void sluice_history_free(struct sluice_history *h);

#endif
