/* msg_group - the wire form of op group (0x2a): the limits of a tube's
 * fair groups, every group's and one group's own, and a group's pause
 * (docs/protocol.md, "group"). Included by msg.h, which it extends (its
 * request and reply are members of msg.h's unions): include msg.h. */
#ifndef SLUICE_PROTO_MSG_GROUP_H
#define SLUICE_PROTO_MSG_GROUP_H

/* What a group request does. */
enum msg_group_verb {
	MSG_GROUP_SHOW = 0,   /* nothing: the reply says where it stands */
	MSG_GROUP_SET = 1,    /* the limits in flow.set take flow's values,
	                         those in lunset go, the others stay */
	MSG_GROUP_PAUSE = 2,  /* the group hands out nothing */
	MSG_GROUP_RESUME = 3, /* it hands out again */
	MSG_GROUP_NEXT = 4,   /* show the first group after `group` (empty:
	                         the first), by its bytes, that has settings
	                         of its own; the reply's group is empty when
	                         there is none (a move copies them so) */
	MSG_GROUP_VERB_END_
};

/* group: `group` empty is every named group of the tube (set only). */
struct msg_group_req {
	struct msg_str tube;
	struct msg_str group; /* 0..MSG_TUBE_MAX bytes of the tube alphabet,
	                         else SLUICE_EGROUP */
	uint8_t verb;         /* enum msg_group_verb */
	uint8_t lunset;       /* MSG_LIM_* */
	struct msg_flow flow;
};

/* A group reply's flags (gflags). */
enum {
	MSG_GROUP_OWN = 0x01,    /* the group has settings of its own */
	MSG_GROUP_PAUSED = 0x02, /* it is paused */
	MSG_GROUP_LIVE = 0x04,   /* it has tasks now */
	MSG_GROUP_ALL = 0x07
};

/* Where a group stands (MSG_FLOW_* holds, and 3: paused). */
enum { MSG_GROUP_HELD_PAUSED = 3 };

struct msg_group_rep {
	struct msg_str tube;
	struct msg_str group;
	struct msg_flow every; /* every named group's limits */
	uint32_t overrides;    /* groups with settings of their own */
	uint32_t paused;       /* of them paused */
	uint32_t held;         /* live groups held back now */
	/* the group asked for (all 0 for the empty one) */
	uint8_t gflags;      /* MSG_GROUP_* */
	struct msg_flow own; /* its own limits */
	struct msg_flow lim; /* in force: its own, else every group's */
	uint32_t ready;      /* its ready tasks */
	uint32_t taken;      /* its taken tasks */
	uint64_t tokens;     /* whole tokens in its bucket */
	uint8_t holding;     /* 0 open, 1 rate, 2 concurrency, 3 paused */
};

#endif
