/* msg_history - the messages of a tube's statistics over time: history
 * (events and depths per second, msg_history_at reads a count) and
 * stats_hourly (per UTC hour, with duration distributions). Part of
 * msg.h, which includes it where its types are needed: include msg.h.
 * Encoded and decoded by msg_stats.c. */
#ifndef SLUICE_PROTO_MSG_HISTORY_H
#define SLUICE_PROTO_MSG_HISTORY_H

/* history: the rolling history of events of one tube, or of all. */
struct msg_history_req {
	struct msg_str tube; /* len 0 = every tube */
	uint32_t secs;       /* 1..MSG_HISTORY_SECS, else SLUICE_EINVAL */
};

enum {
	MSG_HISTORY_SECS = 3600, /* the window the server keeps */
	MSG_HISTORY_KINDS = 10,  /* kinds this version names (below) */
	MSG_HISTORY_KINDS_MAX = 16,
};

/* The kinds of a history, in their order on the wire: counts of events,
 * then depths by state. A newer server may send more kinds after these; a
 * reader ignores them. An older one sends only the first 6 (no depths). */
enum msg_history_kind {
	MSG_HK_PUT = 0,
	MSG_HK_TAKE = 1,
	MSG_HK_ACK = 2,
	MSG_HK_FAIL = 3,
	MSG_HK_BURY = 4,
	MSG_HK_TTR = 5,   /* leases ended by their deadline */
	MSG_HK_READY = 6, /* tasks in each state at the end of the slot */
	MSG_HK_DELAYED = 7,
	MSG_HK_TAKEN = 8,
	MSG_HK_BURIED = 9,
};

/* One hour of stats_hourly: durations in ms, p50/p99 estimates. */
struct msg_dist {
	uint64_t count, total, max, p50, p99;
};

struct msg_hour {
	uint64_t start; /* unix ms, a UTC hour */
	uint64_t acks, fails, buries, ttr_expired;
	struct msg_dist work; /* take -> ack, of its acks */
	struct msg_dist wait; /* ready -> take, of its takes */
};

enum { MSG_HOURS_MAX = 48 };

struct msg_hours {
	uint32_t n;                   /* 0..MSG_HOURS_MAX, newest first */
	const struct msg_hour *hours; /* encode */
	struct msg_iter it;           /* decode: msg_next_hour() */
};

/* history's reply: `n` slots of `step` ms, the first starting at unix ms
 * `start`, the last holding the server's now; for each of `kinds` kinds
 * (enum msg_history_kind, in order) `n` u32 counts, oldest first. Read a
 * count with msg_history_at(). */
struct msg_history {
	uint64_t start;
	uint32_t step;          /* ms per slot, >= 1 */
	uint8_t kinds;          /* 1..MSG_HISTORY_KINDS_MAX */
	uint32_t n;             /* 1..MSG_HISTORY_SECS */
	const uint32_t *values; /* encode: kinds * n, values[k * n + i] */
	const uint8_t *raw;     /* decode: the same, as sent */
};

/* Count i (0..n-1) of kind k of a history, encoded or decoded; 0 for a
 * kind it does not carry. */
uint32_t msg_history_at(const struct msg_history *h, unsigned k, uint32_t i);

#endif
