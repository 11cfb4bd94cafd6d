/* limits - the queue's interface to a tube's flow limits (a rate with
 * its burst, a concurrency cap): the decision of a TUBE_LIMIT, the rule of
 * valid limits as a text, and the view that stats shows. Beside queue.h,
 * which it extends; the design is in flow.h, the rules in docs/queue.md
 * ("Flow limits"). */
#ifndef SLUICE_QUEUE_LIMITS_H
#define SLUICE_QUEUE_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "queue/qrec.h"
#include "queue/queue.h"

/* A tube's flow limits (queue.md, "Flow limits"; flow.h). */
struct queue_tube_limit_req {
	const char *tube;
	size_t tube_len;
	uint8_t set;            /* QREC_LIM_* limits to take from `lim` */
	uint8_t unset;          /* QREC_LIM_* limits to lift */
	struct qrec_limits lim; /* the values of the limits in `set` (lim.set
	                           is not read) */
};

/* Changes the limits named in set and unset, and no other; the record
 * carries the whole result (QREC_NONE when nothing changes). The tube
 * must exist. Errors: SLUICE_ETUBE, SLUICE_ENOTFOUND (no such tube),
 * SLUICE_EINVAL (a limit both set and unset, an unknown one, a value out
 * of range: queue_limits_broken says which). */
int queue_decide_tube_limit(struct queue *q, int64_t now,
    const struct queue_tube_limit_req *req, struct qrec *out);

/* Why limits `l` are not valid, as a text for an error reply; NULL when
 * they are. */
const char *queue_limits_broken(const struct qrec_limits *l);

/* `l` as a change leaves it: the limits named in `set` take their values
 * from `lim`, those in `unset` go (0), the rest stay. */
void queue_limits_change(struct qrec_limits *l, const struct qrec_limits *lim,
    uint8_t set, uint8_t unset);

/* The burst a rate gets when none is given: the tokens of 100 ms, at
 * least 1. A smaller bucket spreads tasks more evenly but loses the
 * tokens that come while the server is late by more than a token's
 * interval (a busy machine's scheduling): 100 ms of them absorb that and
 * keep the rate exact over time. */
uint32_t queue_limits_default_burst(uint32_t rate, uint32_t per_ms);

/* What holds a tube's ready tasks back. */
enum queue_flow_hold {
	QUEUE_FLOW_OPEN = 0,
	QUEUE_FLOW_RATE = 1,        /* no token */
	QUEUE_FLOW_CONCURRENCY = 2, /* every slot taken */
};

/* A tube's limits and where they stand. */
struct queue_flow_view {
	struct qrec_limits lim; /* set 0: none */
	uint64_t tokens;        /* whole tokens in the bucket now */
	uint64_t taken;         /* its taken tasks: slots in use */
	uint8_t holding;        /* enum queue_flow_hold, now */
	uint64_t held_tasks;    /* its ready tasks so held back now */
	uint64_t held_rate;     /* takes that found it held back by the rate */
	uint64_t held_conc;     /* ... by the cap (since the limit was set) */
};

/* The view of tube `name` at `now`. SLUICE_ETUBE, SLUICE_ENOTFOUND. */
int queue_tube_flow(struct queue *q, const char *name, size_t len, int64_t now,
    struct queue_flow_view *out);

/* ---- Group limits (glimit.h; queue.md, "Group limits") ---------------- */

/* What a GROUP_SET request does to the settings of one name. */
enum queue_group_pause {
	QUEUE_GROUP_KEEP = 0,   /* its pause as it is */
	QUEUE_GROUP_PAUSE = 1,  /* it hands out nothing until resumed */
	QUEUE_GROUP_RESUME = 2, /* it hands out again */
};

struct queue_group_set_req {
	const char *tube;
	size_t tube_len;
	const char *group; /* empty: the limits of every named group */
	size_t group_len;
	uint8_t set;            /* QREC_LIM_* limits to take from `lim` */
	uint8_t unset;          /* QREC_LIM_* limits to lift */
	struct qrec_limits lim; /* the values of those in `set` */
	uint8_t pause;          /* enum queue_group_pause (not for "") */
};

/* Changes the settings of one name of a tube (the record carries the
 * whole result; QREC_NONE when nothing changes). The tube must exist.
 * Errors: SLUICE_ETUBE, SLUICE_EGROUP (a bad group name), SLUICE_ENOTFOUND
 * (no such tube), SLUICE_EINVAL (a limit both set and unset, a value out
 * of range: queue_limits_broken says which; a pause of every group),
 * SLUICE_ELIMIT (GLIMIT_OVERRIDES_MAX names set in the tube). */
int queue_decide_group_set(struct queue *q, int64_t now,
    const struct queue_group_set_req *req, struct qrec *out);

/* A tube's group settings, and one group's where it stands. */
struct queue_group_view {
	struct qrec_limits def; /* every named group's (set 0: none) */
	uint32_t noverrides;    /* names with settings of their own */
	uint32_t npaused;       /* of them paused */
	uint32_t nheld;         /* live groups held back now */
	/* the group asked for (none: all 0) */
	struct qrec_limits own; /* its own limits (set 0: none) */
	bool has_own;           /* it has settings of its own */
	bool paused;
	struct qrec_limits lim; /* in force */
	bool live;              /* it has tasks */
	uint32_t ready, taken;  /* its tasks ready, taken */
	uint64_t tokens;        /* whole tokens in its bucket now */
	uint8_t holding;        /* enum queue_flow_hold, or 3: paused */
};

/* The group settings of tube `tube` and, when group_len > 0, of that
 * group. SLUICE_ETUBE, SLUICE_EGROUP, SLUICE_ENOTFOUND (no such tube). */
int queue_group_limits(struct queue *q, const char *tube, size_t tube_len,
    const char *group, size_t group_len, int64_t now,
    struct queue_group_view *out);

#endif
