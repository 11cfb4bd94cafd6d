/* msg_sched - the wire form of the schedule ops, sched_set (0x2f),
 * sched_list (0x30) and sched_ctl (0x31): their requests and the
 * schedules of their replies (docs/protocol.md).
 *
 * Part of proto/msg.h, which includes it after struct msg_str and struct
 * msg_iter: include "proto/msg.h", never this file alone. */
#ifndef SLUICE_PROTO_MSG_SCHED_H
#define SLUICE_PROTO_MSG_SCHED_H

/* MSG_OP_SCHED_SET: a schedule (docs/queue.md, Schedules). The strings
 * are checked by the server, which names what it refuses. */
struct msg_sched_set {
	struct msg_str name; /* 1..MSG_SCHED_STR_MAX bytes */
	struct msg_str tube;
	struct msg_str cron; /* 1..MSG_SCHED_STR_MAX bytes */
	struct msg_str tz;   /* 0..MSG_SCHED_STR_MAX bytes; empty: UTC */
	uint8_t catch_up;    /* MSG_CATCH_NONE, _ONE, _ALL */
	bool paused;         /* flag 0x01: set paused */
	uint32_t priority;
	uint64_t ttr; /* ms; 0: the server's default */
	uint32_t max_attempts;
	struct msg_str payload;
};

enum {
	MSG_SCHED_STR_MAX = 255,
	MSG_SCHEDS_MAX = 10000, /* schedules in one reply */
	MSG_CATCH_NONE = 0,
	MSG_CATCH_ONE = 1,
	MSG_CATCH_ALL = 2,
	MSG_SCHED_PAUSE = 1, /* sched_ctl's actions */
	MSG_SCHED_RESUME = 2,
	MSG_SCHED_DELETE = 3,
};

/* MSG_OP_SCHED_LIST (name empty: all) and MSG_OP_SCHED_CTL. */
struct msg_sched_ctl {
	struct msg_str name;
	uint8_t action; /* ctl: MSG_SCHED_PAUSE, _RESUME, _DELETE */
	bool payloads;  /* list, flag 0x02: the payloads too */
};

/* One schedule, as the schedule ops return it. */
struct msg_sched {
	struct msg_str name;
	struct msg_str tube;
	struct msg_str cron;
	struct msg_str tz;
	uint8_t catch_up;
	bool paused;
	uint32_t priority;
	uint64_t ttr;
	uint32_t max_attempts;
	uint64_t created_at;
	uint64_t updated_at;
	uint64_t next_at;   /* unix ms of its next slot; 0: none (paused) */
	uint64_t last_slot; /* the last slot that put a task; 0: none */
	uint64_t last_id;   /* that task */
	uint64_t fired;     /* slots that put a task */
	uint64_t skipped;   /* slots decided without one */
	uint32_t size;      /* the payload's, even when it is left out */
	struct msg_str payload;
};

struct msg_scheds {
	uint32_t n;
	const struct msg_sched *v; /* encode */
	struct msg_iter it;        /* decode: msg_next_sched() */
};

bool msg_next_sched(struct msg_iter *it, struct msg_sched *out);

#endif
