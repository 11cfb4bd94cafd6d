/* queue_stats.h - what the queue counts over time: per tube and UTC hour
 * (acks, fails, buries, expiries and the distributions of work and wait),
 * and the rolling history of events per second for the dashboard.
 *
 * Part of queue.h, which includes it where its types are known: include
 * "queue/queue.h", never this file alone. */
#ifndef SLUICE_QUEUE_STATS_H
#define SLUICE_QUEUE_STATS_H

/* ---- Hourly statistics ------------------------------------------------ */

/* Per tube and UTC hour of the records' time (unix ms / QUEUE_HOUR_MS), for
 * the last QUEUE_HOURS hours of the queue's clock: acks, fails, buries and
 * ttr expiries, and two distributions - the work of an ack (its time - the
 * take's time) and the wait of a take (its time - when the task became
 * ready: its run_at). Derived from the records applied, so the same on
 * every node and after a restart; kept in snapshots. A duration is in whole
 * ms and falls in one of QUEUE_HIST_BUCKETS buckets: bucket 0 holds 0, bucket
 * b holds (queue_hist_bound(b-1), queue_hist_bound(b)], bounds 1, 2, 3, 4,
 * 6, 8, 12, 16, 24, ... (2^k and 3 * 2^(k-1)) up to 2^24 ms (4.66 h); the
 * last bucket holds everything longer. A percentile is the geometric middle
 * of its bucket (at most the hour's maximum): within 22.5% of the true value
 * (sqrt(1.5) - 1) up to 4.66 h, the maximum beyond. Totals, averages and
 * maxima are exact. */
enum {
	QUEUE_HOURS = 48,
	QUEUE_HOUR_MS = 3600 * 1000,
	QUEUE_HIST_BUCKETS = 50,
	/* The tube totals (queue_tube_totals) keep every fourth bound:
	 * 1, 4, 16, 64, ... 4^12 ms, and the rest. */
	QUEUE_TOTAL_BUCKETS = 14
};

/* The upper bound (ms, inclusive) of bucket b < QUEUE_HIST_BUCKETS - 1. */
int64_t queue_hist_bound(int b);

/* The bucket a duration of `ms` falls in. */
int queue_hist_bucket(int64_t ms);

/* One distribution of an hour, summed up. */
struct queue_dist {
	uint64_t count;
	uint64_t total_ms;
	uint64_t max_ms;
	uint64_t p50_ms; /* estimates, as said above; 0 when count is 0 */
	uint64_t p99_ms;
};

struct queue_hour {
	int64_t start; /* unix ms: hour * QUEUE_HOUR_MS */
	uint64_t acks; /* = work.count */
	uint64_t fails;
	uint64_t buries; /* buried, or moved to the dead letter instead */
	uint64_t ttr_expired;
	struct queue_dist work; /* acks: take -> ack */
	struct queue_dist wait; /* takes: ready -> take */
};

/* The hours of one tube (tube_len 0: of every tube, merged) that saw any of
 * these events, newest first, as of the clock after catching up with `now`:
 * at most QUEUE_HOURS into out[], *n says how many. Errors: SLUICE_ETUBE,
 * SLUICE_ENOTFOUND (no such tube), SLUICE_EINVAL (now), SLUICE_ENOMEM. */
int queue_hourly(struct queue *q, int64_t now, const char *tube,
    size_t tube_len, struct queue_hour out[QUEUE_HOURS], size_t *n);

/* A tube's distributions since its first event (not windowed), in the
 * coarse buckets: bucket c holds (queue_total_bound(c-1),
 * queue_total_bound(c)], the last everything longer. */
struct queue_total {
	uint64_t count;
	uint64_t total_ms;
	uint64_t bucket[QUEUE_TOTAL_BUCKETS];
};

/* The upper bound (ms, inclusive) of total bucket c < QUEUE_TOTAL_BUCKETS - 1:
 * 4^c. */
int64_t queue_total_bound(int c);

/* The totals of tube i (creation order): the work of its acks, the wait of
 * its takes. O(1). SLUICE_ENOTFOUND past the last tube. */
int queue_tube_totals(const struct queue *q, uint32_t i,
    struct queue_total *work, struct queue_total *wait);

/* ---- Rates ------------------------------------------------------------ */

/* The rolling history of events per second (rates.h), for the dashboard
 * and `sluice rates`: puts, takes, acks, fails, buries and ttr expiries,
 * counted as queue_apply applies them at the queue's clock (the records'
 * time), for the whole queue per second over QUEUE_RATE_SECS seconds (an
 * hour: 3,600 slots of 10 u32, 144 KB) and per tube per
 * QUEUE_RATE_TUBE_STEP seconds over QUEUE_RATE_TUBE_SECS (15 min); beside
 * them the depth by state at the end of each slot (ready, delayed, taken,
 * buried: what a tube's table row shows and its sparkline sums; done is
 * not waiting work), written by every placing and unplacing of a task,
 * and carried forward through slots without one.
 *
 * Why that layout: the total is the chart of the overview, read at 1 s;
 * a tube's history is a sparkline and a small chart, where 5 s is as
 * good, and 180 slots of 10 u32 are 7.2 KB per tube instead of 36 KB
 * (a node with 1,000 tubes busy all through the window spends 7.2 MB).
 * A tube's ring is allocated with its first counted event or change of
 * depth, with 12 slots (about 0.5 KB), and doubles only when a slot it
 * would push out still shows something; one whose newest slot left the
 * window is freed (rates.h): a tube idle for 15 minutes costs nothing
 * here, and one busy in a single burst about 0.5 KB.
 *
 * Observation, not state: off until queue_rates_enable (the server turns it
 * on once recovery is over, so a restarted node starts empty instead of
 * counting its log's replay; the depth before that is read as the depth
 * it had then), never logged, snapshotted or dumped. A follower counts
 * the records it applies, at their (the leader's) time. Out of memory, an
 * event is simply not counted. */
enum queue_rate {
	QUEUE_RATE_PUT = 0,
	QUEUE_RATE_TAKE = 1,
	QUEUE_RATE_ACK = 2,
	QUEUE_RATE_FAIL = 3,
	QUEUE_RATE_BURY = 4, /* buried, or moved to the dead letter instead */
	QUEUE_RATE_TTR = 5,  /* leases ended by their deadline */
	QUEUE_RATE_EVENTS =
	    6, /* the kinds above are counts, those below depths */
	QUEUE_RATE_READY = 6, /* tasks in each state at the end of the slot */
	QUEUE_RATE_DELAYED = 7,
	QUEUE_RATE_TAKEN = 8,
	QUEUE_RATE_BURIED = 9,
	QUEUE_RATES = 10
};

enum {
	QUEUE_RATE_SECS = 3600,     /* the whole queue's window: an hour */
	QUEUE_RATE_TUBE_SECS = 900, /* a tube's: 15 minutes */
	QUEUE_RATE_TUBE_STEP = 5,
	QUEUE_RATE_DEPTHS = QUEUE_RATES - QUEUE_RATE_EVENTS,
};

/* Turns counting on (allocating the total's ring: SLUICE_ENOMEM) or off
 * (freeing every ring). Returns 0 or SLUICE_ENOMEM. */
int queue_rates_enable(struct queue *q, bool on);

/* The history of one tube (tube_len 0: of the whole queue) over the last
 * `secs` seconds (1..QUEUE_RATE_SECS; a tube's at most its window,
 * QUEUE_RATE_TUBE_SECS) up to `now`: *step_s seconds per
 * slot (1 for the whole queue, QUEUE_RATE_TUBE_STEP for a tube), *start the
 * unix ms the first slot starts at, its counts and depths kind-major in
 * out[k * n + i] (out holds QUEUE_RATES * QUEUE_RATE_SECS values); returns
 * n, the slots. A tube with nothing counted yet has zero counts and its
 * depth of now; with counting off everything is zero. Errors (negative):
 * -SLUICE_ETUBE, -SLUICE_ENOTFOUND (no such tube), -SLUICE_EINVAL (secs). */
int queue_rates(const struct queue *q, int64_t now, const char *tube,
    size_t tube_len, uint32_t secs, uint32_t *step_s, int64_t *start,
    uint32_t *out);

/* The tasks ready, delayed, taken and buried now, as queue_stats counts
 * them, without its catch-up with a clock: O(1). For the log's
 * reservation after each record applied (the apply caught up). */
void queue_live_counts(const struct queue *q, uint64_t out[4]);

#endif
