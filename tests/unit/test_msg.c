/* Tests of src/proto/msg: every request and reply round-trips, every kind
 * of bad input gets its own error, and the examples of docs/protocol.md
 * are what the encoder produces.
 *
 * Run with `--corpus DIR` it writes the fuzz seed corpus instead (the
 * encodings of every sample, plus broken ones): see tests/fuzz/msg.cmake. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h> /* its MSG_* names must not clash with ours */

#include "proto/msg.h"
#include "sluice.h"
#include "t_lib.h"
#include "t_msg.h"

#define S(lit) ((struct msg_str) { lit, sizeof(lit) - 1 })
#define N(a)   ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* ---- samples: one or more of every request and reply --------------------- */

static const struct msg_put batch_items[] = {
	{ .tube = S("mail"), .priority = 1, .payload = S("a") },
	{ .tube = S("mail"),
	    .priority = 2,
	    .when = 1700000000000ULL,
	    .at = true,
	    .key = S("k-2"),
	    .replace = true,
	    .payload = S("bb") },
	{ .tube = S("sms"), .ttr = 5000, .max_attempts = 3, .payload = S("") },
	{ .tube = S("rows"),
	    .key = S("row-7"),
	    .replace = true,
	    .if_newer = 1700000000123ULL,
	    .payload = S("v") },
};
static const struct msg_ack_item ack_items[] = { { 7, 1001 }, { 8, 1002 },
	{ 9, 0 } };
static const uint64_t delete_ids[] = { 7, UINT64_MAX };
static const struct msg_str take_tubes[] = { S("a"), S("b.c"), S("x:y/z-1") };
/* a batch whose items break their limits: each is refused alone */
static const struct msg_put bad_items[] = {
	{ .tube = S("ok"), .payload = S("fine") },
	{ .tube = S("no spaces"), .payload = S("x") },
	{ .tube = S("ok"), .key = S("nul\0key"), .payload = S("x") },
	{ .tube = S("ok"), .replace = true, .payload = S("x") },
	{ .tube = S(""), .payload = S("x") },
	{ .tube = S("ok"), .payload = S("also fine") },
};

/* Every setting a tube may carry. */
#define A_CONF                                                                 \
	{                                                                      \
		.set = MSG_TS_ALL, .ttr = 1000, .max_attempts = 3,             \
		.backoff_base = 10, .backoff_cap = 100, .keep_done = 86400000, \
		.dead_letter = S("dead")                                       \
	}

static const struct msg_req reqs[] = {
	{ .op = MSG_OP_PUT,
	    .put = { .tube = S("emails"),
	        .priority = 10,
	        .when = 5000,
	        .ttr = 30000,
	        .max_attempts = 5,
	        .payload = S("hello") } },
	{ .op = MSG_OP_PUT,
	    .put = { .tube = S("cron"),
	        .priority = 1024,
	        .when = 1700000000000ULL,
	        .at = true,
	        .replace = true,
	        .period = 3600000,
	        .key = S("nightly"),
	        .payload = S("\x00\xff\x01 binary") } },
	{ .op = MSG_OP_PUT_BATCH,
	    .put_batch = { .n = N(batch_items), .items = batch_items } },
	{ .op = MSG_OP_TAKE,
	    .take = { .wait = 1000,
	        .max = 1,
	        .ntubes = 1,
	        .tubes = take_tubes } },
	{ .op = MSG_OP_TAKE,
	    .take = { .wait = 0,
	        .max = 10,
	        .detach = true,
	        .ntubes = N(take_tubes),
	        .tubes = take_tubes } },
	{ .op = MSG_OP_ACK, .ack = { .id = 42, .lease = 7 } },
	{ .op = MSG_OP_ACK,
	    .ack = { .id = 42, .lease = 7, .to = S("stage2") } },
	{ .op = MSG_OP_RELEASE,
	    .release = { .id = 1, .lease = 2, .delay = 3 } },
	{ .op = MSG_OP_RELEASE,
	    .release = { .id = 1,
	        .lease = 2,
	        .set_priority = true,
	        .priority = 9 } },
	{ .op = MSG_OP_RELEASE,
	    .release = { .id = 1,
	        .lease = 2,
	        .report = true,
	        .untake = true } },
	{ .op = MSG_OP_RELEASE,
	    .release = { .id = 1, .lease = 2, .front = true } },
	{ .op = MSG_OP_FAIL,
	    .fail = { .id = 5, .lease = 6, .error = S("boom") } },
	{ .op = MSG_OP_FAIL,
	    .fail = { .id = 5,
	        .lease = 6,
	        .set_delay = true,
	        .delay = 250,
	        .error = S("") } },
	{ .op = MSG_OP_FAIL,
	    .fail = { .id = 5, .lease = 6, .fatal = true, .error = S("bad") } },
	{ .op = MSG_OP_TOUCH, .lease = { .id = 8, .lease = 9 } },
	{ .op = MSG_OP_BURY, .lease = { .id = 8, .lease = 10 } },
	{ .op = MSG_OP_BURY,
	    .lease = { .id = 8, .lease = 10, .error = S("poison") } },
	{ .op = MSG_OP_RELEASE_ALL, .tube = S("emails") },
	{ .op = MSG_OP_KICK, .kick = { .tube = S("default"), .n = 5 } },
	{ .op = MSG_OP_KICK,
	    .kick = { .tube = S("default"), .n = 2, .delayed = true } },
	{ .op = MSG_OP_KICK,
	    .kick = { .tube = S("mail"), .n = 9, .error = S("smtp 550") } },
	{ .op = MSG_OP_KICK,
	    .kick = { .tube = S("mail"),
	        .n = 9,
	        .error = S("smtp 550"),
	        .dry = true } },
	{ .op = MSG_OP_KICK,
	    .kick = { .tube = S("mail"), .n = 1, .dry = true } },
	{ .op = MSG_OP_KICK_ID, .id = 77 },
	{ .op = MSG_OP_DELETE, .id = 78 },
	{ .op = MSG_OP_DELETE_KEY, .key = S("order-17") },
	{ .op = MSG_OP_DELETE_KEY, .by_key = { S("order-17"), S("emails") } },
	{ .op = MSG_OP_FLUSH, .tube = S("old") },
	{ .op = MSG_OP_PEEK, .id = UINT64_MAX },
	{ .op = MSG_OP_PEEK_KEY, .key = S("order-17") },
	{ .op = MSG_OP_PEEK_KEY, .by_key = { S("order-17"), S("emails") } },
	{ .op = MSG_OP_PEEK_NEXT,
	    .peek_next = { .tube = S("default"), .state = MSG_ST_READY } },
	{ .op = MSG_OP_PEEK_NEXT,
	    .peek_next = { .tube = S("default"), .state = MSG_ST_DELAYED } },
	{ .op = MSG_OP_PEEK_NEXT,
	    .peek_next = { .tube = S("default"), .state = MSG_ST_BURIED } },
	{ .op = MSG_OP_STATS },
	{ .op = MSG_OP_STATS, .tube = S("emails") },
	{ .op = MSG_OP_LIST,
	    .list = { .tube = S("t"),
	        .state = MSG_ST_NONE,
	        .order = MSG_ORDER_AGE,
	        .limit = 100 } },
	{ .op = MSG_OP_LIST,
	    .list = { .tube = S("t"),
	        .state = MSG_ST_BURIED,
	        .order = MSG_ORDER_ATTEMPTS,
	        .limit = 1000,
	        .payloads = true } },
	{ .op = MSG_OP_LIST,
	    .list = { .tube = S("t"),
	        .state = MSG_ST_READY,
	        .order = MSG_ORDER_ID,
	        .limit = 10,
	        .payloads = true,
	        .after = 1ULL << 40 } },
	{ .op = MSG_OP_ERRORS, .tube = S("t") },
	{ .op = MSG_OP_ERRORS, .errors = { S("t"), true } },
	{ .op = MSG_OP_STATS_HOURLY, .tube = S("t") },
	{ .op = MSG_OP_STATS_HOURLY },
	{ .op = MSG_OP_PAUSE, .pause = { .tube = S("t"), .duration = 60000 } },
	{ .op = MSG_OP_SNAPSHOT },
	{ .op = MSG_OP_PROMOTE },
	{ .op = MSG_OP_FOLLOW, .url = S("tcp://10.0.0.1:7712") },
	{ .op = MSG_OP_JOB,
	    .job = { .verb = MSG_JOB_RELEASE,
	        .id = 7,
	        .priority = 3,
	        .delay = 5000 } },
	{ .op = MSG_OP_JOB, .job = { .verb = MSG_JOB_TAKE, .id = 9 } },
	/* an operator's override: force, no lease */
	{ .op = MSG_OP_ACK, .ack = { .id = 42, .force = true } },
	{ .op = MSG_OP_RELEASE,
	    .release = { .id = 1,
	        .force = true,
	        .set_priority = true,
	        .priority = 4 } },
	{ .op = MSG_OP_FAIL,
	    .fail = { .id = 5, .force = true, .error = S("stuck") } },
	{ .op = MSG_OP_TOUCH, .lease = { .id = 8, .force = true } },
	{ .op = MSG_OP_BURY, .lease = { .id = 8, .lease = 3, .force = true } },
	{ .op = MSG_OP_PAUSE,
	    .pause = { .tube = S("w"), .duration = 1000, .create = true } },
	{ .op = MSG_OP_TUBE_SET,
	    .tube_set = { .tube = S("emails"), .conf = A_CONF } },
	{ .op = MSG_OP_TUBE_SET,
	    .tube_set = { .tube = S("emails"),
	        .unset = MSG_TS_TTR | MSG_TS_DEAD_LETTER } },
	{ .op = MSG_OP_TUBE_SHOW, .tube = S("emails") },
	{ .op = MSG_OP_TUBE_SET, /* flow limits: set one, lift the other */
	    .tube_set = { .tube = S("api"),
	        .limits = true,
	        .lunset = MSG_LIM_CONCURRENCY,
	        .flow = { MSG_LIM_RATE, 100, 1000, 20, 0 } } },
	{ .op = MSG_OP_TUBE_SHOW,
	    .tube_set = { .tube = S("api"), .limits = true } },
	{ .op = MSG_OP_TUBE_DELETE, .tube_delete = { S("emails"), false } },
	{ .op = MSG_OP_TUBE_DELETE, .tube_delete = { S("old"), true } },
	{ .op = MSG_OP_STATS, .stats = { .settings = true } },
	{ .op = MSG_OP_STATS,
	    .stats = { .tube = S("emails"), .durations = true } },
	{ .op = MSG_OP_STATS,
	    .stats = { .settings = true, .durations = true } },
	{ .op = MSG_OP_STATS,
	    .stats = { .page = true, .limit = 500, .after = 1234 } },
	{ .op = MSG_OP_STATS,
	    .stats = { .settings = true, .page = true, .limit = 10000 } },
	{ .op = MSG_OP_STATS, .stats = { .durations = true, .top = true } },
	{ .op = MSG_OP_STATS, .stats = { .top = true, .limit = 100 } },
	{ .op = MSG_OP_TAKE,
	    .take = { .max = 2,
	        .strict = true,
	        .ntubes = N(take_tubes),
	        .tubes = take_tubes } },
	{ .op = MSG_OP_PUT_BATCH,
	    .put_batch = { .n = N(bad_items),
	        .messages = true,
	        .items = bad_items } },
	{ .op = MSG_OP_ACK, .ack = { .id = 3, .lease = 102, .report = true } },
	{ .op = MSG_OP_RELEASE,
	    .release = { .id = 3, .lease = 102, .report = true } },
	{ .op = MSG_OP_FAIL,
	    .fail = { .id = 3, .lease = 102, .report = true, .force = true } },
	{ .op = MSG_OP_BURY,
	    .lease = { .id = 3, .lease = 102, .report = true } },
	{ .op = MSG_OP_ACK_BATCH,
	    .ack_batch = { .n = N(ack_items), .items = ack_items } },
	{ .op = MSG_OP_ACK_BATCH,
	    .ack_batch = { .n = 1, .messages = true, .items = ack_items } },
	{ .op = MSG_OP_DELETE_BATCH,
	    .delete_batch = { .n = N(delete_ids),
	        .messages = true,
	        .ids = delete_ids } },
	{ .op = MSG_OP_UPDATE,
	    .update = { .id = 7, .set_priority = true, .priority = 0 } },
	{ .op = MSG_OP_UPDATE,
	    .update = { .id = 8,
	        .set_at = true,
	        .when = 1700000000000ULL,
	        .set_ttr = true,
	        .ttr = 5000,
	        .set_max_attempts = true,
	        .max_attempts = 3,
	        .set_payload = true,
	        .payload = S("v2") } },
	{ .op = MSG_OP_UPDATE,
	    .update = { .id = 9,
	        .set_delay = true,
	        .when = 250,
	        .set_payload = true } },
	{ .op = MSG_OP_PUT,
	    .put = { .tube = S("rows"),
	        .replace = true,
	        .key = S("row-7"),
	        .if_newer = UINT64_MAX,
	        .payload = S("{}") } },
	{ .op = MSG_OP_CLUSTER },
	{ .op = MSG_OP_SWITCHOVER, .switchover = { .node = S("node-b") } },
	{ .op = MSG_OP_SWITCHOVER,
	    .switchover = { .node = S("a-name-of-the-longest-length-allowed-"
	                              "which-is-64-bytes-long.xyz!"),
	        .timeout_ms = UINT32_MAX } },
	{ .op = MSG_OP_AUTH, .token = S("3q2-7wAA_token") },
	{ .op = MSG_OP_GROUPS, .groups = { .tube = S("emails"), .limit = 20 } },
	{ .op = MSG_OP_GROUPS,
	    .groups = { .tube = S(""), .limit = MSG_GROUPS_MAX } },
	{ .op = MSG_OP_GROUP,
	    .group = { .tube = S("api"),
	        .group = S("tenant-7"),
	        .verb = MSG_GROUP_SET,
	        .lunset = MSG_LIM_RATE,
	        .flow = { MSG_LIM_CONCURRENCY, 0, 0, 0, 3 } } },
	{ .op = MSG_OP_GROUP,
	    .group = { .tube = S("api"), .verb = MSG_GROUP_SHOW } },
};

/* The sample tasks are macros too, for the replies' table, which a
 * compiler other than gcc cannot initialize from another object. */
#define TASK_TAKEN                                                             \
	{                                                                      \
		.id = 1, .lease = 100, .state = MSG_ST_TAKEN,                  \
		.priority = 1024, .attempts = 1, .ttr = 60000,                 \
		.run_at = 1700000000000ULL, .created_at = 1699999999000ULL,    \
		.updated_at = 1700000000001ULL, .taken_at = 1700000000001ULL,  \
		.deadline = 1700000060001ULL, .size = 5, .tube = S("emails"),  \
		.payload = S("hello")                                          \
	}
#define TASK_DETACHED                                                          \
	{                                                                      \
		.id = 2, .lease = 101, .state = MSG_ST_TAKEN,                  \
		.detached = true, .priority = 0, .attempts = 3,                \
		.max_attempts = 5, .ttr = 1000, .period = 86400000, .size = 4, \
		.tube = S("x"), .key = S("nightly"),                           \
		.last_error = S("exit 1: disk full"),                          \
		.payload = S("\xff\xfe\x00\x01")                               \
	}
static const struct msg_task tasks[] = { TASK_TAKEN, TASK_DETACHED };
/* taken under a session lease, with a replacement waiting for its lease
 * to end */
#define TASK_PENDING                                                           \
	{                                                                      \
		.id = 3, .lease = 102, .state = MSG_ST_TAKEN,                  \
		.priority = 1024, .attempts = 1, .ttr = 60000, .size = 3,      \
		.tube = S("t"), .key = S("k"), .payload = S("old"),            \
		.replace_pending = true,                                       \
		.pending = { .priority = 9,                                    \
			.max_attempts = 2,                                     \
			.ttr = 30000,                                          \
			.run_at = 1700000000000ULL,                            \
			.period = 0,                                           \
			.size = 4,                                             \
			.payload = S("new!"),                                  \
			.version = 8 },                                        \
		.version = 7, .holder = {                                      \
			17,                                                    \
			S("127.0.0.1:40312")                                   \
		}                                                              \
	}
/* a version without a pending replacement */
#define TASK_VERSIONED                                                         \
	{                                                                      \
		.id = 4, .state = MSG_ST_READY, .priority = 1, .ttr = 1000,    \
		.size = 1, .tube = S("rows"), .key = S("row-7"),               \
		.payload = S("v"), .version = 1700000000123ULL                 \
	}
/* list without payloads: size says how big they are */
#define TASK_LISTED                                                            \
	{                                                                      \
		.id = 9, .state = MSG_ST_BURIED, .size = 300, .tube = S("t")   \
	}
static const struct msg_task listed[] = {
	TASK_LISTED,
	{ .id = 10,
	    .state = MSG_ST_DELAYED,
	    .run_at = 5,
	    .size = 0,
	    .tube = S("t") },
};
static const struct msg_put_res batch_res[] = {
	{ .status = 0, .created = true, .id = 11 },
	{ .status = 0, .created = false, .id = 3 },
	{ .status = SLUICE_EEXIST, .created = false, .id = 0 },
	{ .status = 0, .stale = true, .id = 4 },
};
static const struct msg_put_res batch_res_texts[] = {
	{ .status = 0, .created = true, .id = 12 },
	{ .status = SLUICE_ETOOBIG,
	    .message = S("payload of 2000 bytes: over the limit of 1024") },
};
static const struct msg_item_res item_res[] = {
	{ .status = 0 },
	{ .status = SLUICE_ESTALE,
	    .message = S("ack 8: lease 1002 is stale: the task was released, "
	                 "expired or taken again") },
	{ .status = SLUICE_ENOTFOUND, .message = S("ack 9: no such task") },
};
static const struct msg_item_res item_res_bare[] = { { .status = 0 },
	{ .status = SLUICE_ENOTFOUND } };
static const struct msg_kv node_kvs[] = {
	{ S("uptime_ms"), 12345 },
	{ S("log_segments"), 3 },
	{ S("followers"), 1 },
};
static const struct msg_kv tube_kvs[] = { { S("puts"), 10 }, { S("acks"), 7 } };
static const struct msg_tube_stats tube_stats[] = {
	{ .name = S("emails"),
	    .ready = 1,
	    .delayed = 2,
	    .taken = 3,
	    .buried = 4,
	    .oldest_ready_age = 1500,
	    .more = { .n = N(tube_kvs), .kvs = tube_kvs } },
	{ .name = S("sms"), .paused_until = 1700000000000ULL },
};
static const struct msg_tube_stats tube_stats_conf[] = {
	{ .name = S("emails"),
	    .ready = 1,
	    .conf = { .set = MSG_TS_TTR | MSG_TS_DEAD_LETTER,
	        .ttr = 30000,
	        .backoff_base = 1000,
	        .backoff_cap = 3600000,
	        .lost_lease_immediate = true,
	        .dead_letter = S("emails.dead") } },
	{ .name = S("sms"), .conf = { .ttr = 60000, .keep_done = 5 } },
};

static const struct msg_error_count error_counts[] = {
	{ S("timeout"), 12, 0, { 0 } },
	{ S(""), 1, 0, { 0 } },
};

/* With example ids (the reply's flag 0x01). */
static const struct msg_error_count error_ids[] = {
	{ S("timeout"), 12, 3, { 4, 9, 70 } },
	{ S("oom"), 1, 1, { 5 } },
	{ S(""), 1, 0, { 0 } },
};

static const struct msg_hour hours[] = {
	{ 1700002800000, 10, 2, 1, 1, { 10, 2500, 900, 210, 900 },
	    { 12, 120, 40, 7, 40 } },
	{ 1699999200000, 0, 0, 3, 0, { 0 }, { 0 } },
};

/* every role and flag, times at their extremes */
static const struct msg_member members[] = {
	{ .name = S("node-a"),
	    .client = S("tcp://10.0.0.1:7711"),
	    .repl = S("tcp://10.0.0.1:7712"),
	    .role = MSG_NODE_LEADER,
	    .flags = MSG_MEMBER_LEASE,
	    .epoch = 3,
	    .durable_lsn = 1234,
	    .lease_until = 1700000010000LL,
	    .age_ms = 300 },
	{ .name = S("node-b"),
	    .client = S("tcp://10.0.0.2:7711"),
	    .repl = S("tcp://10.0.0.2:7712"),
	    .role = MSG_NODE_FOLLOWER,
	    .flags = MSG_MEMBER_SYNC,
	    .epoch = 3,
	    .durable_lsn = 1230,
	    .lag_records = 4,
	    .age_ms = 1100 },
	{ .name = S("node-c"),
	    .role = MSG_NODE_FENCED,
	    .flags = MSG_MEMBER_SYNC | MSG_MEMBER_LEASE,
	    .epoch = UINT64_MAX,
	    .lease_until = INT64_MIN,
	    .age_ms = UINT64_MAX },
	{ .name = S("d"), .role = MSG_NODE_CANDIDATE, .lease_until = -1 },
};

/* A groups reply: the largest backlog first, the "" group among them. */
static const struct msg_group_row group_rows[] = {
	{ S("emails"), S("tenant-7"), 1000, 2, 10000 },
	{ S("emails"), S(""), 5, 0, 500 },
	{ S("a/b.c:d-e_f"), S("x"), 0, UINT64_MAX, 0 },
};

static const struct msg_rep reps[] = {
	{ .op = MSG_OP_PUT, .put = { .created = true, .id = 42 } },
	{ .op = MSG_OP_PUT, .put = { .created = false, .id = 7 } },
	{ .op = MSG_OP_PUT, .put = { .stale = true, .id = 7 } },
	{ .op = MSG_OP_PUT_BATCH,
	    .put_batch = { .n = N(batch_res), .items = batch_res } },
	{ .op = MSG_OP_TAKE, .tasks = { .n = 0 } },
	{ .op = MSG_OP_TAKE, .tasks = { .n = N(tasks), .tasks = tasks } },
	{ .op = MSG_OP_LIST, .tasks = { .n = N(listed), .tasks = listed } },
	{ .op = MSG_OP_ACK, .after = { .id = 1 } },
	{ .op = MSG_OP_ACK,
	    .after = { .id = 1, .state = MSG_ST_DELAYED, .run_at = 99 } },
	{ .op = MSG_OP_RELEASE, .after = { .id = 1, .state = MSG_ST_READY } },
	{ .op = MSG_OP_FAIL,
	    .after = { .id = 1, .state = MSG_ST_DELAYED, .run_at = 2000 } },
	{ .op = MSG_OP_FAIL, .after = { .id = 1, .state = MSG_ST_BURIED } },
	{ .op = MSG_OP_TOUCH,
	    .after = { .id = 1, .state = MSG_ST_TAKEN, .deadline = 123 } },
	{ .op = MSG_OP_BURY, .after = { .id = 1, .state = MSG_ST_BURIED } },
	{ .op = MSG_OP_KICK_ID, .after = { .id = 1, .state = MSG_ST_READY } },
	{ .op = MSG_OP_KICK, .count = 5 },
	{ .op = MSG_OP_JOB, .tasks = { .n = 1, .tasks = tasks } },
	{ .op = MSG_OP_JOB },
	{ .op = MSG_OP_FLUSH, .count = 0 },
	{ .op = MSG_OP_RELEASE_ALL, .count = 3 },
	{ .op = MSG_OP_DELETE_KEY, .id = 17 },
	{ .op = MSG_OP_PAUSE, .until = 1700000060000ULL },
	{ .op = MSG_OP_SNAPSHOT, .lsn = 1000 },
	{ .op = MSG_OP_PROMOTE, .epoch = 2 },
	{ .op = MSG_OP_DELETE },
	{ .op = MSG_OP_FOLLOW },
	{ .op = MSG_OP_PEEK, .task = TASK_TAKEN },
	{ .op = MSG_OP_PEEK_KEY, .task = TASK_DETACHED },
	{ .op = MSG_OP_PEEK_NEXT, .task = TASK_LISTED },
	{ .op = MSG_OP_STATS,
	    .stats = { .role = MSG_ROLE_LEADER,
	        .epoch = 1,
	        .lsn = 500,
	        .durable_lsn = 499,
	        .now = 1700000000000ULL,
	        .totals = { .ready = 1,
	            .delayed = 2,
	            .taken = 3,
	            .buried = 4,
	            .more = { .n = N(tube_kvs), .kvs = tube_kvs } },
	        .more = { .n = N(node_kvs), .kvs = node_kvs },
	        .ntubes = N(tube_stats),
	        .tubes = tube_stats } },
	{ .op = MSG_OP_STATS,
	    .stats = { .role = MSG_ROLE_FOLLOWER,
	        .epoch = 3,
	        .leader = S("tcp://10.0.0.1:7711") } },
	{ .op = MSG_OP_ERRORS,
	    .errors = { .n = N(error_counts), .errors = error_counts } },
	{ .op = MSG_OP_ERRORS,
	    .errors = { .ids = true, .n = N(error_ids), .errors = error_ids } },
	{ .op = MSG_OP_STATS_HOURLY,
	    .hours = { .n = N(hours), .hours = hours } },
	{ .op = MSG_OP_STATS_HOURLY },
	{ .op = MSG_OP_PUT,
	    .status = SLUICE_ENOTLEADER,
	    .err = { S("not leader"), S("tcp://10.0.0.2:7711") } },
	{ .op = MSG_OP_ACK,
	    .status = SLUICE_ESTALE,
	    .err = { S("stale lease") } },
	{ .op = 0xee, .status = SLUICE_EUNKNOWNOP },
	{ .op = MSG_OP_PUT_BATCH,
	    .put_batch = { .n = N(batch_res_texts),
	        .messages = true,
	        .items = batch_res_texts } },
	{ .op = MSG_OP_PEEK_KEY, .task = TASK_PENDING },
	{ .op = MSG_OP_PEEK, .task = TASK_VERSIONED },
	{ .op = MSG_OP_ACK,
	    .after = { .id = 3, .state = MSG_ST_READY, .replaced = true } },
	{ .op = MSG_OP_BURY,
	    .after = { .id = 3,
	        .state = MSG_ST_DELAYED,
	        .run_at = 5,
	        .replaced = true } },
	{ .op = MSG_OP_ACK_BATCH,
	    .batch = { .n = N(item_res),
	        .messages = true,
	        .items = item_res } },
	{ .op = MSG_OP_DELETE_BATCH,
	    .batch = { .n = N(item_res_bare), .items = item_res_bare } },
	{ .op = MSG_OP_UPDATE,
	    .after = { .id = 8, .state = MSG_ST_DELAYED, .run_at = 77 } },
	{ .op = MSG_OP_TUBE_SET,
	    .tube_conf = { .tube = S("emails"), .conf = A_CONF } },
	{ .op = MSG_OP_TUBE_SHOW,
	    .tube_conf = { .tube = S("new"), .conf = { .ttr = 60000 } } },
	{ .op = MSG_OP_TUBE_SHOW,
	    .tube_conf = { .tube = S("api"),
	        .conf = { .ttr = 60000 },
	        .limits = true,
	        .flow = { MSG_LIM_ALL, 6, 60000, 2, 4 },
	        .state = { 1, 4, 120 } } },
	{ .op = MSG_OP_TUBE_DELETE, .count = 12 },
	{ .op = MSG_OP_STATS,
	    .stats = { .role = MSG_ROLE_LEADER,
	        .settings = true,
	        .ntubes = N(tube_stats_conf),
	        .tubes = tube_stats_conf } },
	{ .op = MSG_OP_CLUSTER,
	    .cluster = { .cluster = S("prod"),
	        .node = S("node-b"),
	        .leader = S("node-a"),
	        .ttl_ms = 10000,
	        .etcd_error = S("etcd http://127.0.0.1:2379: connection "
	                        "refused"),
	        .n = N(members),
	        .members = members } },
	{ .op = MSG_OP_CLUSTER,
	    .cluster = { .cluster = S("c"), .node = S("n"), .ttl_ms = 1 } },
	{ .op = MSG_OP_SWITCHOVER,
	    .switchover = { .leader = S("tcp://10.0.0.2:7711"), .epoch = 4 } },
	{ .op = MSG_OP_SWITCHOVER,
	    .status = SLUICE_ETIMEDOUT,
	    .err = { S("node-b did not catch up within 10s") } },
	{ .op = MSG_OP_AUTH },
	{ .op = MSG_OP_AUTH,
	    .status = SLUICE_EAUTH,
	    .err = { S("unauthenticated: not a known token") } },
	{ .op = MSG_OP_GROUPS,
	    .groups = { .total = 7, .n = 3, .rows = group_rows } },
	{ .op = MSG_OP_GROUPS },
	{ .op = MSG_OP_GROUPS,
	    .status = SLUICE_ENOTFOUND,
	    .err = { S("groups of tube 'nope': no such tube") } },
	{ .op = MSG_OP_GROUP,
	    .group = { .tube = S("api"),
	        .group = S("tenant-7"),
	        .every = { MSG_LIM_ALL, 10, 1000, 1, 2 },
	        .overrides = 3,
	        .paused = 1,
	        .held = 2,
	        .gflags = MSG_GROUP_ALL,
	        .own = { MSG_LIM_CONCURRENCY, 0, 0, 0, 3 },
	        .lim = { MSG_LIM_ALL, 10, 1000, 1, 3 },
	        .ready = 40,
	        .taken = 3,
	        .tokens = 0,
	        .holding = MSG_GROUP_HELD_PAUSED } },
};

static void
encode_req(struct buf *b, const struct msg_req *q)
{
	buf_reset(b);
	assert_int_equal(msg_encode_req(b, q), 0);
}

static void
encode_rep(struct buf *b, const struct msg_rep *m)
{
	buf_reset(b);
	assert_int_equal(msg_encode_rep(b, m), 0);
}

/* ---- round trips ------------------------------------------------------- */

static void
assert_str_equal(struct msg_str a, struct msg_str b)
{
	assert_int_equal(a.len, b.len);
	if (a.len)
		assert_memory_equal(a.p, b.p, a.len);
}

static void
assert_put_equal(const struct msg_put *a, const struct msg_put *b)
{
	assert_str_equal(a->tube, b->tube);
	assert_int_equal(a->priority, b->priority);
	assert_true(a->when == b->when);
	assert_int_equal(a->at, b->at);
	assert_int_equal(a->replace, b->replace);
	assert_true(a->ttr == b->ttr);
	assert_int_equal(a->max_attempts, b->max_attempts);
	assert_true(a->period == b->period);
	assert_str_equal(a->key, b->key);
	assert_str_equal(a->payload, b->payload);
	assert_true(a->if_newer == b->if_newer);
	assert_true(a->debounce == b->debounce);
	assert_true(a->throttle == b->throttle);
	assert_str_equal(a->group, b->group);
}

static void
assert_task_equal(const struct msg_task *a, const struct msg_task *b)
{
	assert_true(a->id == b->id && a->lease == b->lease);
	assert_int_equal(a->state, b->state);
	assert_int_equal(a->detached, b->detached);
	assert_int_equal(a->priority, b->priority);
	assert_int_equal(a->attempts, b->attempts);
	assert_int_equal(a->max_attempts, b->max_attempts);
	assert_true(a->ttr == b->ttr && a->run_at == b->run_at);
	assert_true(a->period == b->period);
	assert_true(a->created_at == b->created_at);
	assert_true(a->updated_at == b->updated_at);
	assert_true(a->taken_at == b->taken_at);
	assert_true(a->deadline == b->deadline);
	assert_int_equal(a->size, b->size);
	assert_str_equal(a->tube, b->tube);
	assert_str_equal(a->key, b->key);
	assert_str_equal(a->last_error, b->last_error);
	assert_str_equal(a->payload, b->payload);
	assert_int_equal(a->replace_pending, b->replace_pending);
	assert_int_equal(a->pending.priority, b->pending.priority);
	assert_int_equal(a->pending.max_attempts, b->pending.max_attempts);
	assert_true(a->pending.ttr == b->pending.ttr);
	assert_true(a->pending.run_at == b->pending.run_at);
	assert_true(a->pending.period == b->pending.period);
	assert_int_equal(a->pending.size, b->pending.size);
	assert_str_equal(a->pending.payload, b->pending.payload);
	assert_true(a->version == b->version);
	assert_true(a->pending.version == b->pending.version);
	assert_int_equal(a->holder.session, b->holder.session);
	assert_str_equal(a->holder.peer, b->holder.peer);
	assert_str_equal(a->group, b->group);
}

/* Flow limits, field by field (the struct has padding). */
static void
assert_flow_equal(const struct msg_flow *a, const struct msg_flow *b)
{
	assert_int_equal(a->set, b->set);
	assert_int_equal(a->rate, b->rate);
	assert_int_equal(a->per_ms, b->per_ms);
	assert_int_equal(a->burst, b->burst);
	assert_int_equal(a->concurrency, b->concurrency);
}

static void
assert_conf_equal(const struct msg_tube_conf *a, const struct msg_tube_conf *b)
{
	assert_int_equal(a->set, b->set);
	assert_true(a->ttr == b->ttr && a->max_attempts == b->max_attempts);
	assert_true(a->backoff_base == b->backoff_base &&
	    a->backoff_cap == b->backoff_cap);
	assert_true(a->keep_done == b->keep_done);
	assert_int_equal(a->lost_lease_immediate, b->lost_lease_immediate);
	assert_str_equal(a->dead_letter, b->dead_letter);
}

/* Field by field: what the encoder was given is what the decoder gives. */
static void
test_every_request_round_trips(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b);
	for (uint32_t i = 0; i < N(reqs); i++) {
		const struct msg_req *q = &reqs[i];
		struct msg_req d;
		struct msg_put p;
		struct msg_str s;
		uint32_t k = 0;

		encode_req(&b, q);
		assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
		assert_int_equal(d.op, q->op);
		assert_int_equal(msg_req_op(b.data, b.len), q->op);
		switch (q->op) {
		case MSG_OP_PUT:
			assert_put_equal(&d.put, &q->put);
			break;
		case MSG_OP_PUT_BATCH:
			assert_int_equal(d.put_batch.n, q->put_batch.n);
			assert_int_equal(
			    d.put_batch.messages, q->put_batch.messages);
			assert_null(d.put_batch.items);
			while (msg_next_put(&d.put_batch.it, &p))
				assert_put_equal(&p, &q->put_batch.items[k++]);
			assert_int_equal(k, q->put_batch.n);
			break;
		case MSG_OP_ACK_BATCH: {
			struct msg_ack_item a;

			assert_int_equal(d.ack_batch.n, q->ack_batch.n);
			assert_int_equal(
			    d.ack_batch.messages, q->ack_batch.messages);
			while (msg_next_ack_item(&d.ack_batch.it, &a)) {
				assert_true(a.id == q->ack_batch.items[k].id);
				assert_true(
				    a.lease == q->ack_batch.items[k].lease);
				k++;
			}
			assert_int_equal(k, q->ack_batch.n);
			break;
		}
		case MSG_OP_DELETE_BATCH: {
			uint64_t id;

			assert_int_equal(d.delete_batch.n, q->delete_batch.n);
			assert_int_equal(
			    d.delete_batch.messages, q->delete_batch.messages);
			while (msg_next_id(&d.delete_batch.it, &id))
				assert_true(id == q->delete_batch.ids[k++]);
			assert_int_equal(k, q->delete_batch.n);
			break;
		}
		case MSG_OP_UPDATE:
			assert_true(d.update.id == q->update.id);
			assert_int_equal(
			    d.update.set_priority, q->update.set_priority);
			assert_int_equal(
			    d.update.set_delay, q->update.set_delay);
			assert_int_equal(d.update.set_at, q->update.set_at);
			assert_int_equal(d.update.set_ttr, q->update.set_ttr);
			assert_int_equal(d.update.set_max_attempts,
			    q->update.set_max_attempts);
			assert_int_equal(
			    d.update.set_payload, q->update.set_payload);
			assert_int_equal(d.update.priority, q->update.priority);
			assert_true(d.update.when == q->update.when);
			assert_true(d.update.ttr == q->update.ttr);
			assert_int_equal(
			    d.update.max_attempts, q->update.max_attempts);
			assert_str_equal(d.update.payload, q->update.payload);
			break;
		case MSG_OP_TAKE:
			assert_true(d.take.wait == q->take.wait);
			assert_int_equal(d.take.max, q->take.max);
			assert_int_equal(d.take.detach, q->take.detach);
			assert_int_equal(d.take.strict, q->take.strict);
			assert_int_equal(d.take.ntubes, q->take.ntubes);
			while (msg_next_str(&d.take.it, &s))
				assert_str_equal(s, q->take.tubes[k++]);
			assert_int_equal(k, q->take.ntubes);
			break;
		case MSG_OP_ACK:
			assert_true(d.ack.id == q->ack.id);
			assert_true(d.ack.lease == q->ack.lease);
			assert_int_equal(d.ack.force, q->ack.force);
			assert_int_equal(d.ack.report, q->ack.report);
			assert_str_equal(d.ack.to, q->ack.to);
			break;
		case MSG_OP_RELEASE:
			assert_true(d.release.lease == q->release.lease);
			assert_int_equal(d.release.force, q->release.force);
			assert_int_equal(d.release.report, q->release.report);
			assert_true(d.release.delay == q->release.delay);
			assert_int_equal(
			    d.release.set_priority, q->release.set_priority);
			assert_int_equal(
			    d.release.priority, q->release.priority);
			assert_int_equal(d.release.front, q->release.front);
			assert_int_equal(d.release.untake, q->release.untake);
			break;
		case MSG_OP_FAIL:
			assert_true(d.fail.lease == q->fail.lease);
			assert_int_equal(d.fail.force, q->fail.force);
			assert_int_equal(d.fail.report, q->fail.report);
			assert_int_equal(d.fail.set_delay, q->fail.set_delay);
			assert_true(d.fail.delay == q->fail.delay);
			assert_int_equal(d.fail.fatal, q->fail.fatal);
			assert_str_equal(d.fail.error, q->fail.error);
			break;
		case MSG_OP_TOUCH:
		case MSG_OP_BURY:
			assert_true(d.lease.id == q->lease.id);
			assert_true(d.lease.lease == q->lease.lease);
			assert_int_equal(d.lease.force, q->lease.force);
			assert_int_equal(d.lease.report, q->lease.report);
			assert_str_equal(d.lease.error, q->lease.error);
			break;
		case MSG_OP_KICK:
			assert_str_equal(d.kick.tube, q->kick.tube);
			assert_int_equal(d.kick.n, q->kick.n);
			assert_int_equal(d.kick.delayed, q->kick.delayed);
			assert_str_equal(d.kick.error, q->kick.error);
			assert_int_equal(d.kick.dry, q->kick.dry);
			break;
		case MSG_OP_JOB:
			assert_int_equal(d.job.verb, q->job.verb);
			assert_true(d.job.id == q->job.id);
			assert_int_equal(d.job.priority, q->job.priority);
			assert_true(d.job.delay == q->job.delay);
			break;
		case MSG_OP_KICK_ID:
		case MSG_OP_DELETE:
		case MSG_OP_PEEK:
			assert_true(d.id == q->id);
			break;
		case MSG_OP_DELETE_KEY:
		case MSG_OP_PEEK_KEY:
			assert_str_equal(d.key, q->key);
			assert_str_equal(d.by_key.tube, q->by_key.tube);
			break;
		case MSG_OP_ERRORS:
			assert_int_equal(d.errors.ids, q->errors.ids);
			assert_str_equal(d.tube, q->tube);
			break;
		case MSG_OP_GROUPS:
			assert_str_equal(d.groups.tube, q->groups.tube);
			assert_str_equal(d.tube, q->groups.tube);
			assert_int_equal(d.groups.limit, q->groups.limit);
			break;
		case MSG_OP_FLUSH:
		case MSG_OP_RELEASE_ALL:
		case MSG_OP_STATS_HOURLY:
			assert_str_equal(d.tube, q->tube);
			break;
		case MSG_OP_STATS:
			assert_str_equal(d.stats.tube, q->stats.tube);
			assert_int_equal(d.stats.settings, q->stats.settings);
			assert_int_equal(d.stats.durations, q->stats.durations);
			assert_int_equal(d.stats.page, q->stats.page);
			assert_int_equal(d.stats.top, q->stats.top);
			assert_int_equal(d.stats.limit, q->stats.limit);
			assert_int_equal(d.stats.after, q->stats.after);
			break;
		case MSG_OP_TUBE_SET:
			assert_str_equal(d.tube_set.tube, q->tube_set.tube);
			assert_int_equal(d.tube_set.unset, q->tube_set.unset);
			assert_conf_equal(&d.tube_set.conf, &q->tube_set.conf);
			assert_int_equal(d.tube_set.limits, q->tube_set.limits);
			assert_int_equal(d.tube_set.lunset, q->tube_set.lunset);
			assert_flow_equal(&d.tube_set.flow, &q->tube_set.flow);
			break;
		case MSG_OP_TUBE_SHOW:
			assert_str_equal(d.tube_set.tube, q->tube_set.tube);
			assert_int_equal(d.tube_set.limits, q->tube_set.limits);
			break;
		case MSG_OP_TUBE_DELETE:
			assert_str_equal(
			    d.tube_delete.tube, q->tube_delete.tube);
			assert_int_equal(
			    d.tube_delete.force, q->tube_delete.force);
			break;
		case MSG_OP_PEEK_NEXT:
			assert_str_equal(d.peek_next.tube, q->peek_next.tube);
			assert_int_equal(d.peek_next.state, q->peek_next.state);
			break;
		case MSG_OP_LIST:
			assert_str_equal(d.list.tube, q->list.tube);
			assert_int_equal(d.list.state, q->list.state);
			assert_int_equal(d.list.order, q->list.order);
			assert_int_equal(d.list.limit, q->list.limit);
			assert_int_equal(d.list.payloads, q->list.payloads);
			assert_true(d.list.after == q->list.after);
			break;
		case MSG_OP_PAUSE:
			assert_str_equal(d.pause.tube, q->pause.tube);
			assert_true(d.pause.duration == q->pause.duration);
			assert_int_equal(d.pause.create, q->pause.create);
			break;
		case MSG_OP_FOLLOW:
			assert_str_equal(d.url, q->url);
			break;
		case MSG_OP_AUTH:
			assert_str_equal(d.token, q->token);
			break;
		case MSG_OP_SWITCHOVER:
			assert_str_equal(d.switchover.node, q->switchover.node);
			assert_int_equal(
			    d.switchover.timeout_ms, q->switchover.timeout_ms);
			break;
		}
	}
	buf_fini(&b);
}

static void
assert_kvs_equal(struct msg_kvs d, const struct msg_kvs *want)
{
	struct msg_kv kv;
	uint32_t k = 0;

	assert_int_equal(d.n, want->n);
	while (msg_next_kv(&d.it, &kv)) {
		assert_str_equal(kv.name, want->kvs[k].name);
		assert_true(kv.value == want->kvs[k].value);
		k++;
	}
	assert_int_equal(k, want->n);
}

static void
assert_counts_equal(
    const struct msg_tube_stats *d, const struct msg_tube_stats *want)
{
	assert_str_equal(d->name, want->name);
	assert_true(d->ready == want->ready && d->delayed == want->delayed);
	assert_true(d->taken == want->taken && d->buried == want->buried);
	assert_true(d->paused_until == want->paused_until);
	assert_true(d->oldest_ready_age == want->oldest_ready_age);
	assert_kvs_equal(d->more, &want->more);
}

static void
assert_cluster_equal(struct msg_cluster d, const struct msg_cluster *want)
{
	struct msg_member mb;
	uint32_t k = 0;

	assert_str_equal(d.cluster, want->cluster);
	assert_str_equal(d.node, want->node);
	assert_str_equal(d.leader, want->leader);
	assert_int_equal(d.ttl_ms, want->ttl_ms);
	assert_str_equal(d.etcd_error, want->etcd_error);
	assert_int_equal(d.n, want->n);
	assert_null(d.members);
	while (msg_next_member(&d.it, &mb)) {
		const struct msg_member *w = &want->members[k++];

		assert_str_equal(mb.name, w->name);
		assert_str_equal(mb.client, w->client);
		assert_str_equal(mb.repl, w->repl);
		assert_int_equal(mb.role, w->role);
		assert_int_equal(mb.flags, w->flags);
		assert_true(mb.epoch == w->epoch);
		assert_true(mb.durable_lsn == w->durable_lsn);
		assert_true(mb.lag_records == w->lag_records);
		assert_true(mb.lease_until == w->lease_until);
		assert_true(mb.age_ms == w->age_ms);
	}
	assert_int_equal(k, want->n);
}

static void
test_every_reply_round_trips(void **state)
{
	struct buf b;

	(void)state;
	buf_init(&b);
	for (uint32_t i = 0; i < N(reps); i++) {
		const struct msg_rep *m = &reps[i];
		struct msg_rep d;
		struct msg_task t;
		struct msg_put_res pr;
		struct msg_tube_stats ts;
		struct msg_error_count ec;
		struct msg_hour hr;
		uint32_t k = 0;

		encode_rep(&b, m);
		assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &d), 0);
		assert_int_equal(d.op, m->op);
		assert_int_equal(d.status, m->status);
		if (m->status != 0) {
			assert_str_equal(d.err.message, m->err.message);
			assert_str_equal(d.err.leader, m->err.leader);
			continue;
		}
		switch (m->op) {
		case MSG_OP_PUT:
			assert_int_equal(d.put.created, m->put.created);
			assert_int_equal(d.put.stale, m->put.stale);
			assert_int_equal(d.put.throttled, m->put.throttled);
			assert_true(d.put.id == m->put.id);
			break;
		case MSG_OP_PUT_BATCH:
			assert_int_equal(
			    d.put_batch.messages, m->put_batch.messages);
			while (msg_next_put_res(&d.put_batch.it, &pr)) {
				assert_str_equal(
				    pr.message, m->put_batch.items[k].message);
				assert_int_equal(
				    pr.status, m->put_batch.items[k].status);
				assert_int_equal(
				    pr.created, m->put_batch.items[k].created);
				assert_int_equal(
				    pr.stale, m->put_batch.items[k].stale);
				assert_true(pr.id == m->put_batch.items[k].id);
				k++;
			}
			assert_int_equal(k, m->put_batch.n);
			break;
		case MSG_OP_ACK_BATCH:
		case MSG_OP_DELETE_BATCH: {
			struct msg_item_res ir;

			assert_int_equal(d.batch.messages, m->batch.messages);
			while (msg_next_item_res(&d.batch.it, &ir)) {
				assert_int_equal(
				    ir.status, m->batch.items[k].status);
				assert_str_equal(
				    ir.message, m->batch.items[k].message);
				k++;
			}
			assert_int_equal(k, m->batch.n);
			break;
		}
		case MSG_OP_TAKE:
		case MSG_OP_LIST:
		case MSG_OP_JOB:
			while (msg_next_task(&d.tasks.it, &t))
				assert_task_equal(&t, &m->tasks.tasks[k++]);
			assert_int_equal(k, m->tasks.n);
			break;
		case MSG_OP_PEEK:
		case MSG_OP_PEEK_KEY:
		case MSG_OP_PEEK_NEXT:
			assert_task_equal(&d.task, &m->task);
			break;
		case MSG_OP_STATS:
			assert_int_equal(d.stats.role, m->stats.role);
			assert_true(d.stats.epoch == m->stats.epoch);
			assert_true(d.stats.lsn == m->stats.lsn);
			assert_true(
			    d.stats.durable_lsn == m->stats.durable_lsn);
			assert_true(d.stats.now == m->stats.now);
			assert_str_equal(d.stats.leader, m->stats.leader);
			assert_counts_equal(&d.stats.totals, &m->stats.totals);
			assert_kvs_equal(d.stats.more, &m->stats.more);
			assert_int_equal(d.stats.settings, m->stats.settings);
			while (msg_next_tube_stats(&d.stats.it, &ts)) {
				if (m->stats.settings)
					assert_conf_equal(
					    &ts.conf, &m->stats.tubes[k].conf);
				assert_counts_equal(&ts, &m->stats.tubes[k++]);
			}
			assert_int_equal(k, m->stats.ntubes);
			break;
		case MSG_OP_TUBE_SET:
		case MSG_OP_TUBE_SHOW:
			assert_str_equal(d.tube_conf.tube, m->tube_conf.tube);
			assert_conf_equal(
			    &d.tube_conf.conf, &m->tube_conf.conf);
			assert_int_equal(
			    d.tube_conf.limits, m->tube_conf.limits);
			assert_flow_equal(
			    &d.tube_conf.flow, &m->tube_conf.flow);
			assert_memory_equal(&d.tube_conf.state,
			    &m->tube_conf.state, sizeof(struct msg_flow_state));
			break;
		case MSG_OP_GROUPS: {
			struct msg_group_row gr;

			assert_true(d.groups.total == m->groups.total);
			assert_int_equal(d.groups.n, m->groups.n);
			while (msg_next_group_row(&d.groups.it, &gr)) {
				const struct msg_group_row *w =
				    &m->groups.rows[k++];

				assert_str_equal(gr.tube, w->tube);
				assert_str_equal(gr.group, w->group);
				assert_true(gr.ready == w->ready);
				assert_true(gr.taken == w->taken);
				assert_true(
				    gr.oldest_ready_age == w->oldest_ready_age);
			}
			assert_int_equal(k, m->groups.n);
			break;
		}
		case MSG_OP_ERRORS:
			while (msg_next_error_count(&d.errors.it, &ec)) {
				assert_str_equal(
				    ec.text, m->errors.errors[k].text);
				assert_true(
				    ec.count == m->errors.errors[k].count);
				assert_int_equal(ec.nids,
				    m->errors.ids ? m->errors.errors[k].nids
				                  : 0);
				for (uint8_t i = 0; i < ec.nids; i++)
					assert_true(ec.ids[i] ==
					    m->errors.errors[k].ids[i]);
				k++;
			}
			assert_int_equal(k, m->errors.n);
			break;
		case MSG_OP_STATS_HOURLY:
			while (msg_next_hour(&d.hours.it, &hr))
				assert_memory_equal(
				    &hr, &m->hours.hours[k++], sizeof(hr));
			assert_int_equal(k, m->hours.n);
			break;
		case MSG_OP_CLUSTER:
			assert_cluster_equal(d.cluster, &m->cluster);
			break;
		case MSG_OP_SWITCHOVER:
			assert_str_equal(
			    d.switchover.leader, m->switchover.leader);
			assert_true(d.switchover.epoch == m->switchover.epoch);
			break;
		case MSG_OP_DELETE:
		case MSG_OP_FOLLOW:
			break;
		case MSG_OP_GROUP:
			assert_str_equal(d.group.tube, m->group.tube);
			assert_str_equal(d.group.group, m->group.group);
			assert_int_equal(d.group.lim.set, m->group.lim.set);
			assert_int_equal(d.group.lim.rate, m->group.lim.rate);
			assert_int_equal(
			    d.group.lim.concurrency, m->group.lim.concurrency);
			assert_int_equal(d.group.gflags, m->group.gflags);
			assert_int_equal(d.group.ready, m->group.ready);
			assert_int_equal(d.group.holding, m->group.holding);
			assert_true(d.group.overrides == m->group.overrides);
			break;
		case MSG_OP_KICK:
		case MSG_OP_FLUSH:
		case MSG_OP_RELEASE_ALL:
		case MSG_OP_DELETE_KEY:
		case MSG_OP_PAUSE:
		case MSG_OP_SNAPSHOT:
		case MSG_OP_PROMOTE:
		case MSG_OP_TUBE_DELETE:
			assert_true(d.count == m->count);
			break;
		default:
			assert_true(d.after.id == m->after.id);
			assert_int_equal(d.after.state, m->after.state);
			assert_true(d.after.run_at == m->after.run_at);
			assert_true(d.after.deadline == m->after.deadline);
			assert_int_equal(d.after.replaced, m->after.replaced);
		}
	}
	buf_fini(&b);
}

/* Decoding then encoding again gives the same bytes, for every sample. */
static void
test_decode_then_encode_gives_the_same_bytes(void **state)
{
	struct buf a, b;
	struct t_mat mat = { 0 };

	(void)state;
	buf_init(&a);
	buf_init(&b);
	for (uint32_t i = 0; i < N(reqs); i++) {
		struct msg_req d;

		encode_req(&a, &reqs[i]);
		assert_int_equal(msg_decode_req(a.data, a.len, NULL, &d), 0);
		assert_true(t_mat_req(&d, &mat));
		encode_req(&b, &d);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		t_mat_free(&mat);
	}
	for (uint32_t i = 0; i < N(reps); i++) {
		struct msg_rep d;

		encode_rep(&a, &reps[i]);
		assert_int_equal(msg_decode_rep(a.data, a.len, NULL, &d), 0);
		assert_true(t_mat_rep(&d, &mat));
		encode_rep(&b, &d);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.data, b.data, a.len);
		t_mat_free(&mat);
	}
	buf_fini(&a);
	buf_fini(&b);
}

/* ---- errors ------------------------------------------------------------- */

/* Every proper prefix of every message is ETRUNC: never a crash, never a
 * success, never another error. */
static void
test_truncated_at_every_length_is_etrunc(void **state)
{
	struct buf b;
	struct msg_req q;
	struct msg_rep m;

	(void)state;
	buf_init(&b);
	for (uint32_t i = 0; i < N(reqs); i++) {
		encode_req(&b, &reqs[i]);
		for (size_t len = 0; len < b.len; len++) {
			/* a copy of exactly len bytes, so ASan sees overreads
			 */
			uint8_t *p = malloc(len ? len : 1);

			memcpy(p, b.data, len);
			assert_int_equal(
			    msg_decode_req(p, len, NULL, &q), SLUICE_ETRUNC);
			free(p);
		}
	}
	for (uint32_t i = 0; i < N(reps); i++) {
		encode_rep(&b, &reps[i]);
		for (size_t len = 0; len < b.len; len++) {
			uint8_t *p = malloc(len ? len : 1);

			memcpy(p, b.data, len);
			assert_int_equal(
			    msg_decode_rep(p, len, NULL, &m), SLUICE_ETRUNC);
			free(p);
		}
	}
	buf_fini(&b);
}

/* Bytes after the last field are EPROTO, in requests and replies. */
static void
test_trailing_bytes_are_eproto(void **state)
{
	struct buf b;
	struct msg_req q;
	struct msg_rep m;

	(void)state;
	buf_init(&b);
	for (uint32_t i = 0; i < N(reqs); i++) {
		encode_req(&b, &reqs[i]);
		buf_put_u8(&b, 0);
		assert_int_equal(
		    msg_decode_req(b.data, b.len, NULL, &q), SLUICE_EPROTO);
	}
	for (uint32_t i = 0; i < N(reps); i++) {
		encode_rep(&b, &reps[i]);
		buf_put_u8(&b, 0);
		assert_int_equal(
		    msg_decode_rep(b.data, b.len, NULL, &m), SLUICE_EPROTO);
	}
	buf_fini(&b);
}

static int
decode_req_bytes(const void *p, size_t len)
{
	struct msg_req q;

	return msg_decode_req(p, len, NULL, &q);
}

/* A put's group (flag 0x08) and the task record's (flag 0x20): round
 * trips, in a batch item too; a bad name is EGROUP (alone in a batch);
 * a record's flag with an empty group is EPROTO. */
static void
test_groups(void **state)
{
	struct msg_put item = { .tube = S("t"), .group = S("tenant-1/eu") };
	struct msg_task t = { .id = 1,
		.state = MSG_ST_READY,
		.tube = S("t"),
		.group = S("g:1") };
	struct msg_req q;
	struct msg_rep m;
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT,
	        .put = { .tube = S("t"), .group = S("tenant-1/eu") } });
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &q), 0);
	assert_put_equal(&q.put, &item);
	/* a bad group: the encoder refuses it, the decoder too */
	buf_reset(&b);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_PUT,
	            .put = { .tube = S("t"), .group = S("a b") } }),
	    SLUICE_EGROUP);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT,
	        .put = { .tube = S("t"), .group = S("a_b") } });
	b.data[b.len - 2] = ' ';
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EGROUP);
	/* in a batch, the bad item alone */
	{
		struct msg_put items[2] = { item, item };

		items[1].group = S("a b");
		encode_req(&b,
		    &(struct msg_req) { .op = MSG_OP_PUT_BATCH,
		        .put_batch = { .n = 2, .items = items } });
		struct msg_put got;

		assert_int_equal(msg_decode_req(b.data, b.len, NULL, &q), 0);
		assert_int_equal(q.put_batch.n, 2);
		assert_true(msg_next_put(&q.put_batch.it, &got));
		assert_int_equal(got.error, 0);
		assert_put_equal(&got, &item);
		assert_true(msg_next_put(&q.put_batch.it, &got));
		assert_int_equal(got.error, SLUICE_EGROUP);
	}
	encode_rep(&b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = t });
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_task_equal(&m.task, &t);
	/* flag 0x20 with an empty group */
	t.group = S("");
	encode_rep(&b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = t });
	b.data[10 + 8 + 8 + 1] |= 0x20;
	buf_put_u16(&b, 0);
	le_store_u32(b.data + 6, le_load_u32(b.data + 6) + 2);
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &m), SLUICE_EPROTO);
	buf_fini(&b);
}

static void
test_bad_header_errors(void **state)
{
	struct buf b;
	struct msg_rep m;

	(void)state;
	buf_init(&b);
	encode_req(&b, &reqs[0]);
	b.data[0] = 'X';
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EPROTO);
	assert_int_equal(decode_req_bytes(b.data, 1), SLUICE_EPROTO);
	b.data[0] = MSG_MAGIC;
	b.data[1] = 2;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EVERSION);
	assert_int_equal(decode_req_bytes(b.data, 2), SLUICE_EVERSION);
	b.data[1] = 0;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EVERSION);
	b.data[1] = MSG_VERSION;
	for (int op = 0; op < 256; op++) {
		if (msg_op_name((uint8_t)op) != NULL)
			continue;
		b.data[2] = (uint8_t)op;
		assert_int_equal(
		    decode_req_bytes(b.data, b.len), SLUICE_EUNKNOWNOP);
	}
	b.data[2] = MSG_OP_PUT;
	b.data[3] = 0x20; /* not a put flag */
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EPROTO);
	/* tagged fields (0x10): their u32 length must follow */
	b.data[3] = 0x10;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ETRUNC);
	/* group (0x08): a str16 group must follow the payload */
	b.data[3] = 0x08;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ETRUNC);
	/* if_newer (0x04): a version must follow the payload */
	b.data[3] = 0x04;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ETRUNC);
	/* debounce (0x80): a window must follow the payload */
	b.data[3] = 0x80;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ETRUNC);
	b.data[3] = 0x20; /* not a put flag */
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EPROTO);

	/* flags on an op that has none */
	encode_req(&b, &(struct msg_req) { .op = MSG_OP_SNAPSHOT });
	b.data[3] = 1;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EPROTO);

	/* replies: version, reserved flags, unknown op with status 0 */
	encode_rep(&b, &reps[0]);
	b.data[1] = 9;
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &m), SLUICE_EVERSION);
	b.data[1] = MSG_VERSION;
	b.data[3] = 1;
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &m), SLUICE_EPROTO);
	b.data[3] = 0;
	b.data[2] = 0x99;
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &m), SLUICE_EUNKNOWNOP);
	assert_int_equal(msg_encode_rep(&b, &(struct msg_rep) { .op = 0x99 }),
	    SLUICE_EUNKNOWNOP);
	assert_int_equal(msg_encode_req(&b, &(struct msg_req) { .op = 0 }),
	    SLUICE_EUNKNOWNOP);
	buf_fini(&b);
}

static int
encode_put_rc(struct msg_put p)
{
	struct buf b;
	int rc;

	buf_init(&b);
	rc = msg_encode_req(
	    &b, &(struct msg_req) { .op = MSG_OP_PUT, .put = p });
	if (rc != 0)
		assert_int_equal(b.len, 0); /* nothing left behind */
	buf_fini(&b);
	return rc;
}

/* The encoder refuses what the decoder would, with the same code. */
static void
test_encoder_checks_limits(void **state)
{
	char big[MSG_TEXT_MAX + 2];
	struct msg_put p = { .tube = S("t"), .payload = S("x") };
	struct msg_put q;
	struct buf b;

	(void)state;
	memset(big, 'a', sizeof(big));
	q = p;
	q.tube = S("");
	assert_int_equal(encode_put_rc(q), SLUICE_ETUBE);
	q.tube = S("a b");
	assert_int_equal(encode_put_rc(q), SLUICE_ETUBE);
	q.tube = (struct msg_str) { big, MSG_TUBE_MAX + 1 };
	assert_int_equal(encode_put_rc(q), SLUICE_ETUBE);
	q.tube = (struct msg_str) { big, MSG_TUBE_MAX };
	assert_int_equal(encode_put_rc(q), 0);
	q = p;
	q.key = (struct msg_str) { big, MSG_KEY_MAX + 1 };
	assert_int_equal(encode_put_rc(q), SLUICE_EKEY);
	q.key = S("a\0b");
	assert_int_equal(encode_put_rc(q), SLUICE_EKEY);
	q = p;
	q.replace = true;
	assert_int_equal(encode_put_rc(q), SLUICE_EINVAL);

	buf_init(&b);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_FAIL,
	            .fail = { .error = { big, MSG_TEXT_MAX + 1 } } }),
	    SLUICE_ELIMIT);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_TAKE,
	            .take = { .max = 0, .ntubes = 1, .tubes = take_tubes } }),
	    SLUICE_EINVAL);
	assert_int_equal(msg_encode_req(&b,
	                     &(struct msg_req) { .op = MSG_OP_TAKE,
	                         .take = { .max = MSG_TAKE_MAX + 1,
	                             .ntubes = 1,
	                             .tubes = take_tubes } }),
	    SLUICE_ELIMIT);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_PEEK_NEXT,
	            .peek_next = { .tube = S("t"), .state = MSG_ST_TAKEN } }),
	    SLUICE_EINVAL);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_LIST,
	            .list = { .tube = S("t"), .order = 7, .limit = 1 } }),
	    SLUICE_EINVAL);
	/* a cursor pages in id order only */
	assert_int_equal(msg_encode_req(&b,
	                     &(struct msg_req) { .op = MSG_OP_LIST,
	                         .list = { .tube = S("t"),
	                             .order = MSG_ORDER_AGE,
	                             .limit = 1,
	                             .after = 5 } }),
	    SLUICE_EINVAL);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_DELETE_KEY, .key = S("") }),
	    SLUICE_EKEY);
	assert_int_equal(
	    msg_encode_req(&b, &(struct msg_req) { .op = MSG_OP_FOLLOW }),
	    SLUICE_EINVAL);
	assert_int_equal(b.len, 0);
	buf_fini(&b);
}

/* A request whose tube, key, count or payload breaks a limit, built by
 * hand since the encoder would refuse it. */
static void
test_decoder_names_each_limit(void **state)
{
	struct msg_limits lim = { .msg_max = 64, .payload_max = 4 };
	struct msg_req q;
	struct buf b;
	char big[300];

	(void)state;
	memset(big, 'k', sizeof(big));
	buf_init(&b);

	/* message and payload size */
	encode_req(&b, &reqs[0]); /* payload "hello": 5 bytes */
	assert_int_equal(
	    msg_decode_req(b.data, b.len, &lim, &q), SLUICE_ETOOBIG);
	lim.msg_max = b.len - 1;
	lim.payload_max = 5;
	assert_int_equal(
	    msg_decode_req(b.data, b.len, &lim, &q), SLUICE_EMSGSIZE);
	lim.msg_max = b.len;
	assert_int_equal(msg_decode_req(b.data, b.len, &lim, &q), 0);
	/* a declared payload length over the limit beats missing bytes */
	b.len -= 5;
	b.data[b.len - 4] = 0xff;
	b.data[b.len - 3] = 0xff;
	b.data[b.len - 2] = 0xff;
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &q), SLUICE_ETOOBIG);

	/* peek_next: any state but ready, delayed, buried, done, waiting is
	 * EINVAL, the undefined values (0, 7, 255) as taken (3) */
	for (int st = 0; st < 256; st++) {
		buf_reset(&b);
		buf_put(&b, "\x53\x01\x10\x00", 4);
		buf_put_str16(&b, "t", 1);
		buf_put_u8(&b, (uint8_t)st);
		assert_int_equal(decode_req_bytes(b.data, b.len),
		    st == 1 || st == 2 || st == 4 || st == 5 || st == 6
		        ? 0
		        : SLUICE_EINVAL);
	}

	/* stats: a page of 1..10000 tubes of every tube, the deepest
	 * 0..10000, not both, not of one tube, and no cursor but a page's */
	{
		static const struct {
			uint8_t flags;
			const char *tube;
			uint32_t limit, after;
			int rc;
		} cases[] = {
			{ 0x04, "", 1, 0, 0 },
			{ 0x04, "", 10000, 99, 0 },
			{ 0x04, "", 0, 0, SLUICE_EINVAL },
			{ 0x04, "", 10001, 0, SLUICE_ELIMIT },
			{ 0x04, "t", 5, 0, SLUICE_EINVAL },
			{ 0x08, "", 0, 0, 0 },
			{ 0x08, "", 10000, 0, 0 },
			{ 0x08, "", 10001, 0, SLUICE_ELIMIT },
			{ 0x0c, "", 5, 0, SLUICE_EINVAL },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			buf_reset(&b);
			buf_put(&b, "\x53\x01\x11", 3);
			buf_put_u8(&b, cases[i].flags);
			buf_put_str16(&b, cases[i].tube, strlen(cases[i].tube));
			buf_put_u32(&b, cases[i].limit);
			if (cases[i].flags & 0x04)
				buf_put_u32(&b, cases[i].after);
			assert_int_equal(
			    decode_req_bytes(b.data, b.len), cases[i].rc);
		}
		/* a page without its cursor is cut short */
		buf_reset(&b);
		buf_put(&b, "\x53\x01\x11\x04", 4);
		buf_put_str16(&b, "", 0);
		buf_put_u32(&b, 5);
		assert_int_equal(
		    decode_req_bytes(b.data, b.len), SLUICE_ETRUNC);
	}

	/* delete_where: the same states */
	for (int st = 0; st < 256; st++) {
		buf_reset(&b);
		buf_put(&b, "\x53\x01\x1d\x00", 4);
		buf_put_str16(&b, "t", 1);
		buf_put_u8(&b, (uint8_t)st);
		buf_put_u64(&b, 1000);
		assert_int_equal(decode_req_bytes(b.data, b.len),
		    st == 1 || st == 2 || st == 4 || st == 5 ? 0
		                                             : SLUICE_EINVAL);
	}

	/* ack: the result flag wants a text of 1-65535 bytes */
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x04\x01", 4);
	buf_put_u64(&b, 1);
	buf_put_u64(&b, 2);
	buf_put_str16(&b, "", 0);
	buf_put_str16(&b, "", 0);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);

	/* tube: empty, too long (declared), bad byte */
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x0d\x00", 4); /* flush */
	buf_put_str16(&b, "", 0);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ETUBE);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x0d\x00", 4);
	buf_put_u16(&b, 201);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ETUBE);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x0d\x00", 4);
	buf_put_str16(&b, "a*b", 3);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ETUBE);

	/* key: too long, NUL inside, empty where required */
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x0c\x00", 4); /* delete_key */
	buf_put_str16(&b, big, 201);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EKEY);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x0c\x00", 4);
	buf_put_str16(&b, "a\0", 2);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EKEY);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x0c\x00", 4);
	buf_put_str16(&b, "", 0);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EKEY);

	/* counts: take max 0 and over, batch over, list 0, kick 0 */
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x03\x00", 4);
	buf_put_u64(&b, 0);
	buf_put_u32(&b, 0);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x03\x00", 4);
	buf_put_u64(&b, 0);
	buf_put_u32(&b, MSG_TAKE_MAX + 1);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ELIMIT);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x03\x00", 4);
	buf_put_u64(&b, 0);
	buf_put_u32(&b, 1);
	buf_put_u16(&b, MSG_TAKE_TUBES_MAX + 1);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ELIMIT);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x02\x00", 4);
	buf_put_u32(&b, MSG_BATCH_MAX + 1);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ELIMIT);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x09\x00", 4);
	buf_put_str16(&b, "t", 1);
	buf_put_u32(&b, 0);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);

	/* enum values: list state 9 and order 0, peek_next state 3 */
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x12\x00", 4);
	buf_put_str16(&b, "t", 1);
	buf_put(&b, "\x09\x01\x01\x00\x00\x00", 6);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EPROTO);
	b.data[b.len - 6] = 0;
	b.data[b.len - 5] = 0;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EPROTO);
	b.data[b.len - 5] = 3;
	assert_int_equal(decode_req_bytes(b.data, b.len), 0);
	/* a cursor (flag 0x02) in run_at order, then in id order; a cursor
	 * flag without its u64 is short */
	b.data[3] = 0x02;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ETRUNC);
	buf_put_u64(&b, 42);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	b.data[b.len - 13] = MSG_ORDER_ID;
	assert_int_equal(decode_req_bytes(b.data, b.len), 0);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x10\x00", 4);
	buf_put_str16(&b, "t", 1);
	buf_put_u8(&b, MSG_ST_TAKEN);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);

	/* replace without a key, built by hand */
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x01\x01", 4);
	buf_put_str16(&b, "t", 1);
	buf_put_u32(&b, 0);
	buf_put_u64(&b, 0);
	buf_put_u64(&b, 0);
	buf_put_u32(&b, 0);
	buf_put_u64(&b, 0);
	buf_put_str16(&b, "", 0);
	buf_put_blob(&b, "", 0);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	b.data[3] = 0;
	assert_int_equal(decode_req_bytes(b.data, b.len), 0);

	/* fail text over its limit */
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x06\x00", 4);
	buf_put_u64(&b, 1);
	buf_put_u64(&b, 1);
	buf_put_u64(&b, 0);
	buf_put_u16(&b, MSG_TEXT_MAX + 1);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_ELIMIT);
	buf_fini(&b);
}

/* The task record is extensible: bytes after the fields of version 1 are
 * skipped; a record too short for its fields is malformed. */
static void
test_task_record_skips_unknown_tail(void **state)
{
	struct msg_rep m;
	struct buf b;
	uint32_t len;

	(void)state;
	buf_init(&b);
	encode_rep(
	    &b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = tasks[1] });
	len = le_load_u32(b.data + MSG_REP_HDR);
	le_store_u32(b.data + MSG_REP_HDR, len + 3);
	buf_put(&b, "new", 3);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_task_equal(&m.task, &tasks[1]);

	encode_rep(
	    &b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = tasks[1] });
	le_store_u32(b.data + MSG_REP_HDR, 50);
	b.len = MSG_REP_HDR + 4 + 50;
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &m), SLUICE_EPROTO);

	/* payload present but not `size` bytes */
	encode_rep(
	    &b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = tasks[0] });
	b.data[MSG_REP_HDR + 4 + 86] = 4; /* size: 5 -> 4 */
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &m), SLUICE_EPROTO);

	/* an undefined state */
	encode_rep(
	    &b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = tasks[0] });
	b.data[MSG_REP_HDR + 4 + 16] = 9;
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &m), SLUICE_EPROTO);
	buf_fini(&b);
}

/* The holder of a session lease (record flag 0x10) is the record's last
 * field: a reader that predates it skips it as an unknown tail and reads
 * the rest unchanged; a record without it (an older server's) has no
 * holder; a peer longer than its limit is refused both ways. */
static void
test_task_record_holder_is_optional(void **state)
{
	struct msg_task held = tasks[0], plain = tasks[0];
	char longpeer[MSG_PEER_MAX + 1];
	struct msg_rep m;
	struct buf b;

	(void)state;
	held.holder.session = 17;
	held.holder.peer = S("[::1]:40312");
	buf_init(&b);
	encode_rep(&b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = held });
	assert_int_equal(b.data[MSG_REP_HDR + 4 + 17], 0x10);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_task_equal(&m.task, &held);

	/* an old reader: the flag unknown, the fields an unknown tail */
	b.data[MSG_REP_HDR + 4 + 17] = 0;
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_task_equal(&m.task, &plain);

	/* an old server: no flag, no fields, no holder */
	encode_rep(&b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = plain });
	assert_int_equal(b.data[MSG_REP_HDR + 4 + 17], 0);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_int_equal(m.task.holder.session, 0);
	assert_int_equal(m.task.holder.peer.len, 0);

	/* the flag without its fields: the record lies about its size */
	encode_rep(&b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = plain });
	b.data[MSG_REP_HDR + 4 + 17] = 0x10;
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &m), SLUICE_EPROTO);

	memset(longpeer, 'a', sizeof(longpeer));
	held.holder.peer = (struct msg_str) { longpeer, sizeof(longpeer) };
	buf_reset(&b);
	assert_int_equal(
	    msg_encode_rep(
	        &b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = held }),
	    SLUICE_ELIMIT);
	buf_fini(&b);
}

/* Error replies: any op byte, the leader URL, texts cut at a character. */
static void
test_error_replies(void **state)
{
	char text[MSG_TEXT_MAX + 10];
	struct msg_rep m;
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(
	    msg_encode_err(&b, 0xfe, SLUICE_EUNKNOWNOP, "unknown op 254", NULL),
	    0);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_int_equal(m.op, 0xfe);
	assert_int_equal(m.status, SLUICE_EUNKNOWNOP);
	assert_str_equal(m.err.message, S("unknown op 254"));
	assert_int_equal(m.err.leader.len, 0);

	/* "é" is 2 bytes; the cut falls between them and steps back */
	memset(text, 'a', sizeof(text));
	memcpy(text + MSG_TEXT_MAX - 1, "\xc3\xa9", 2);
	text[sizeof(text) - 1] = '\0';
	buf_reset(&b);
	assert_int_equal(
	    msg_encode_err(&b, MSG_OP_PUT, SLUICE_ELOG, text, "tcp://leader:1"),
	    0);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_int_equal(m.err.message.len, MSG_TEXT_MAX - 1);
	assert_str_equal(m.err.leader, S("tcp://leader:1"));

	buf_reset(&b);
	assert_int_equal(
	    msg_encode_err(&b, MSG_OP_PUT, 0, "x", NULL), SLUICE_EINVAL);
	assert_int_equal(
	    msg_encode_err(&b, MSG_OP_PUT, -5, "x", NULL), SLUICE_EINVAL);
	assert_int_equal(b.len, 0);
	buf_fini(&b);
}

/* Random corruption of valid messages never crashes the decoders, and
 * whatever still decodes encodes again. */
static void
test_mutations_never_crash(void **state)
{
	uint64_t seed = t_seed(20240601);
	struct t_mat mat = { 0 };
	struct buf b, out;

	(void)state;
	buf_init(&b);
	buf_init(&out);
	for (int round = 0; round < 20000; round++) {
		bool is_req = t_below(&seed, 2);
		int flips = 1 + (int)t_below(&seed, 4);
		struct msg_req q;
		struct msg_rep m;

		if (is_req)
			encode_req(&b, &reqs[t_below(&seed, N(reqs))]);
		else
			encode_rep(&b, &reps[t_below(&seed, N(reps))]);
		for (int f = 0; f < flips; f++)
			b.data[t_below(&seed, b.len)] = (uint8_t)t_rand(&seed);
		buf_reset(&out);
		if (is_req && msg_decode_req(b.data, b.len, NULL, &q) == 0) {
			assert_true(t_mat_req(&q, &mat));
			assert_int_equal(msg_encode_req(&out, &q), 0);
		} else if (!is_req &&
		    msg_decode_rep(b.data, b.len, NULL, &m) == 0) {
			assert_true(t_mat_rep(&m, &mat));
			assert_int_equal(msg_encode_rep(&out, &m), 0);
		}
		t_mat_free(&mat);
	}
	buf_fini(&b);
	buf_fini(&out);
}

/* A batch put is checked whole before its items are read one by one
 * (plain items only walked, check_put_item): mutations of batch requests
 * that still decode give every item to msg_next_put (whose assertion, in
 * a debug build, says the walk accepted nothing the item's decoder
 * refuses), and as many items as the request counts. */
static void
test_a_batch_walked_whole_reads_item_by_item(void **state)
{
	static const struct msg_put items[] = {
		{ .tube = S("t"), .payload = S("plain") },
		{ .tube = S("t"),
		    .key = S("k"),
		    .replace = true,
		    .payload = S("replace") },
		{ .tube = S("t"), .at = true, .when = 5, .payload = S("at") },
		{ .tube = S("bad tube"), .payload = S("x") },
		{ .tube = S("t"), .group = S("g"), .payload = S("grouped") },
	};
	const struct msg_req q = { .op = MSG_OP_PUT_BATCH,
		.put_batch = { .n = N(items), .items = items } };
	uint64_t seed = t_seed(20261129);
	int decoded = 0;
	struct buf b;

	(void)state;
	buf_init(&b);
	for (int round = 0; round < 20000; round++) {
		int flips = 1 + (int)t_below(&seed, 3);
		struct msg_req d;
		struct msg_put p;
		uint32_t k = 0;

		encode_req(&b, &q);
		for (int f = 0; f < flips; f++)
			b.data[t_below(&seed, b.len)] = (uint8_t)t_rand(&seed);
		if (msg_decode_req(b.data, b.len, NULL, &d) != 0 ||
		    d.op != MSG_OP_PUT_BATCH)
			continue;
		decoded++;
		while (msg_next_put(&d.put_batch.it, &p))
			k++;
		assert_int_equal(k, d.put_batch.n);
	}
	assert_true(decoded > 100);
	buf_fini(&b);
}

static void
test_idempotent_requests(void **state)
{
	static const struct msg_put keyed[] = {
		{ .tube = S("t"), .key = S("a") },
		{ .tube = S("t"), .key = S("b") },
	};
	struct msg_req q = { .op = MSG_OP_PUT_BATCH,
		.put_batch = { .n = 2, .items = keyed } };
	struct msg_req d;
	struct buf b;

	(void)state;
	assert_true(msg_req_idempotent(&q));
	buf_init(&b);
	encode_req(&b, &q);
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
	assert_true(msg_req_idempotent(&d));
	buf_fini(&b);
	assert_false(msg_req_idempotent(&reqs[2])); /* batch, some unkeyed */
	assert_false(msg_req_idempotent(&reqs[0])); /* put without key */
	assert_true(msg_req_idempotent(&reqs[1]));  /* keyed put */
	assert_false(
	    msg_req_idempotent(&(struct msg_req) { .op = MSG_OP_TAKE }));
	assert_false(
	    msg_req_idempotent(&(struct msg_req) { .op = MSG_OP_ACK }));
	assert_true(
	    msg_req_idempotent(&(struct msg_req) { .op = MSG_OP_STATS }));
	assert_true(
	    msg_req_idempotent(&(struct msg_req) { .op = MSG_OP_PEEK }));
	/* the cluster is a read; a switchover hands the leadership over */
	assert_true(
	    msg_req_idempotent(&(struct msg_req) { .op = MSG_OP_CLUSTER }));
	assert_false(
	    msg_req_idempotent(&(struct msg_req) { .op = MSG_OP_SWITCHOVER }));
	/* auth binds the same token again */
	assert_true(
	    msg_req_idempotent(&(struct msg_req) { .op = MSG_OP_AUTH }));
}

static void
test_names(void **state)
{
	(void)state;
	/* every op from 0x01 to the last names something, but for those
	 * kept for the beanstalk face, and 0x2b-0x2e (not in this tree) */
	for (int op = 1; op < MSG_OP_END_; op++)
		if ((op < 0x25 || op > 0x27) && (op < 0x2b || op > 0x2c))
			assert_non_null(msg_op_name((uint8_t)op));
	/* (0x2b..0x2c: kept for the dependencies' ops) */
	assert_string_equal(msg_op_name(MSG_OP_SCHED_SET), "sched_set");
	assert_string_equal(msg_op_name(MSG_OP_SCHED_CTL), "sched_ctl");
	assert_string_equal(msg_op_name(MSG_OP_CANCEL), "cancel");
	assert_string_equal(msg_op_name(MSG_OP_WAIT), "wait");
	assert_string_equal(
	    msg_result_state_name(MSG_END_DEAD), "dead_lettered");
	assert_string_equal(msg_result_state_name(MSG_ST_DONE), "done");
	assert_null(msg_result_state_name(0));
	assert_null(msg_op_name(0));
	assert_null(msg_op_name(MSG_OP_END_));
	assert_string_equal(msg_state_name(MSG_ST_BURIED), "buried");
	assert_string_equal(msg_state_name(MSG_ST_DONE), "done");
	assert_null(msg_state_name(6));
	assert_string_equal(msg_order_name(MSG_ORDER_RUN_AT), "run_at");
	assert_string_equal(msg_op_name(MSG_OP_CLUSTER), "cluster");
	assert_string_equal(msg_op_name(MSG_OP_SWITCHOVER), "switchover");
	assert_string_equal(msg_op_name(MSG_OP_AUTH), "auth");
	assert_string_equal(msg_node_role_name(MSG_NODE_FOLLOWER), "follower");
	assert_string_equal(msg_node_role_name(MSG_NODE_LEADER), "leader");
	assert_string_equal(
	    msg_node_role_name(MSG_NODE_CANDIDATE), "candidate");
	assert_string_equal(msg_node_role_name(MSG_NODE_FENCED), "fenced");
	assert_null(msg_node_role_name(MSG_NODE_ROLE_END_));
	assert_true(msg_tube_valid("A-Za-z0-9_.:/", 13));
	assert_false(msg_tube_valid("t\xc3\xa9", 3));
	assert_int_equal(msg_cstr(NULL).len, 0);
}

/* ---- docs/protocol.md, section 9 ------------------------------------------
 */

/* Compares the buffer with bytes written as hex pairs ("53 01 ..."). */
static void
assert_hex(const struct buf *b, const char *hex)
{
	size_t n = 0;

	for (const char *h = hex; *h; h++) {
		unsigned v;

		if (*h == ' ' || *h == '\n')
			continue;
		assert_int_equal(sscanf(h, "%2x", &v), 1);
		assert_true(n < b->len);
		assert_int_equal(b->data[n], v);
		n++;
		h++;
	}
	assert_int_equal(n, b->len);
}

/* Dependencies: a put after tasks 2 and 3 (ignore), and the record of a
 * task that waited for task 2 (acked, result "ok") and has child 9. */
static void
doc_deps_examples(struct buf *b)
{
	static const uint64_t after[2] = { 2, 3 };
	static const struct msg_parent parent = { 2, 1, { "ok", 2 } };
	static const uint64_t child = 9;
	struct msg_task t = { .id = 4,
		.state = MSG_ST_READY,
		.priority = 1024,
		.ttr = 60000,
		.size = 1,
		.tube = S("t"),
		.payload = S("D"),
		.has_deps = true };

	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_PUT,
	        .put = { .tube = S("t"),
	            .priority = 1024,
	            .payload = S("D"),
	            .ext = true,
	            .on_parent_failure = MSG_PARENT_IGNORE,
	            .nafter = 2,
	            .after = after } });
	assert_hex(b,
	    "53 01 01 10 01 00 74 00 04 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 01 00 00 00 44 16 00"
	    "00 00 01 11 00 00 00 01 02 00 00 00 00 00 00 00"
	    "03 00 00 00 00 00 00 00");
	t.deps.nparents = 1;
	t.deps.parents = &parent;
	t.deps.results = true;
	t.deps.nchildren = 1;
	t.deps.nshown = 1;
	t.deps.children = &child;
	encode_rep(b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = t });
	assert_hex(b,
	    "53 01 0e 00 00 00 8a 00 00 00 04 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 01 40 00 04 00 00"
	    "00 00 00 00 00 00 00 00 60 ea 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "01 00 00 00 01 00 74 00 00 00 00 01 00 00 00 44"
	    "00 00 00 00 00 01 00 02 00 00 00 00 00 00 00 01"
	    "02 00 00 00 6f 6b 01 00 00 00 01 00 09 00 00 00"
	    "00 00 00 00");
	/* and back: the parent, its result, the child */
	{
		struct msg_rep m;
		struct msg_parent p;
		uint64_t id;

		assert_int_equal(msg_decode_rep(b->data, b->len, NULL, &m), 0);
		assert_true(m.task.has_deps);
		assert_true(msg_next_parent(&m.task.deps.parents_it, &p));
		assert_int_equal(p.id, 2);
		assert_int_equal(p.outcome, 1);
		assert_int_equal(p.result.len, 2);
		assert_true(msg_next_id(&m.task.deps.children_it, &id));
		assert_int_equal(id, 9);
	}
}

/* The tube_* examples, and stats with settings. */
static void
doc_tube_examples(struct buf *b)
{
	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_TUBE_SET,
	        .tube_set = { .tube = S("emails"),
	            .unset = MSG_TS_BACKOFF,
	            .conf = { .set = MSG_TS_TTR | MSG_TS_MAX_ATTEMPTS |
	                    MSG_TS_DEAD_LETTER,
	                .ttr = 30000,
	                .max_attempts = 5,
	                .dead_letter = S("dead") } } });
	assert_hex(b,
	    "53 01 1e 00 06 00 65 6d 61 69 6c 73 04 23 30 75"
	    "00 00 00 00 00 00 05 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 04 00 64 65 61 64");
	encode_rep(b,
	    &(struct msg_rep) { .op = MSG_OP_TUBE_SET,
	        .tube_conf = { .tube = S("emails"),
	            .conf = { .set = 0x23,
	                .ttr = 30000,
	                .max_attempts = 5,
	                .backoff_base = 1000,
	                .backoff_cap = 3600000,
	                .dead_letter = S("dead") } } });
	assert_hex(b,
	    "53 01 1e 00 00 00 06 00 65 6d 61 69 6c 73 23 30"
	    "75 00 00 00 00 00 00 05 00 00 00 e8 03 00 00 00"
	    "00 00 00 80 ee 36 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 04 00 64 65 61 64");
	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_TUBE_SHOW, .tube = S("emails") });
	assert_hex(b, "53 01 1f 00 06 00 65 6d 61 69 6c 73");
	/* flow limits: 100/s with a burst of 20, and 10 at once */
	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_TUBE_SET,
	        .tube_set = { .tube = S("api"),
	            .limits = true,
	            .flow = { MSG_LIM_RATE | MSG_LIM_CONCURRENCY, 100, 1000, 20,
	                10 } } });
	assert_hex(b,
	    "53 01 1e 01 03 00 61 70 69 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 03 64 00 00 00 e8 03 00 00 14 00 00 00"
	    "0a 00 00 00");
	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_TUBE_SHOW,
	        .tube_set = { .tube = S("api"), .limits = true } });
	assert_hex(b, "53 01 1f 01 03 00 61 70 69");
	encode_rep(b,
	    &(struct msg_rep) { .op = MSG_OP_TUBE_SHOW,
	        .tube_conf = { .tube = S("api"),
	            .conf = { .ttr = 60000,
	                .backoff_base = 1000,
	                .backoff_cap = 3600000 },
	            .limits = true,
	            .flow = { MSG_LIM_RATE | MSG_LIM_CONCURRENCY, 100, 1000, 20,
	                10 },
	            .state = { 7, 10, 250 } } });
	assert_hex(b,
	    "53 01 1f 01 00 00 03 00 61 70 69 00 60 ea 00 00"
	    "00 00 00 00 00 00 00 00 e8 03 00 00 00 00 00 00"
	    "80 ee 36 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 03 64 00 00 00 e8 03 00 00 14 00 00 00"
	    "0a 00 00 00 07 00 00 00 00 00 00 00 0a 00 00 00"
	    "00 00 00 00 fa 00 00 00 00 00 00 00");
	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_TUBE_DELETE,
	        .tube_delete = { S("emails"), true } });
	assert_hex(b, "53 01 21 01 06 00 65 6d 61 69 6c 73");
	encode_rep(
	    b, &(struct msg_rep) { .op = MSG_OP_TUBE_DELETE, .count = 3 });
	assert_hex(b, "53 01 21 00 00 00 03 00 00 00 00 00 00 00");
	encode_req(b,
	    &(struct msg_req) {
	        .op = MSG_OP_STATS, .stats = { .settings = true } });
	assert_hex(b, "53 01 11 01 00 00");
	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_STATS,
	        .stats = { .settings = true, .durations = true } });
	assert_hex(b, "53 01 11 03 00 00");
}

/* cluster and switchover. */
static void
doc_cluster_examples(struct buf *b)
{
	static const struct msg_member doc_members[] = {
		{ .name = S("a"),
		    .client = S("tcp://a:7711"),
		    .repl = S("tcp://a:7712"),
		    .role = MSG_NODE_LEADER,
		    .flags = MSG_MEMBER_LEASE,
		    .epoch = 3,
		    .durable_lsn = 1234,
		    .lease_until = 1700000010000LL,
		    .age_ms = 300 },
		{ .name = S("b"),
		    .client = S("tcp://b:7711"),
		    .repl = S("tcp://b:7712"),
		    .role = MSG_NODE_FOLLOWER,
		    .flags = MSG_MEMBER_SYNC,
		    .epoch = 3,
		    .durable_lsn = 1230,
		    .lag_records = 4,
		    .age_ms = 1100 },
	};

	encode_req(b, &(struct msg_req) { .op = MSG_OP_CLUSTER });
	assert_hex(b, "53 01 22 00");
	encode_rep(b,
	    &(struct msg_rep) { .op = MSG_OP_CLUSTER,
	        .cluster = { .cluster = S("prod"),
	            .node = S("b"),
	            .leader = S("a"),
	            .ttl_ms = 10000,
	            .n = 2,
	            .members = doc_members } });
	assert_hex(b,
	    "53 01 22 00 00 00 04 00 70 72 6f 64 01 00 62 01"
	    "00 61 10 27 00 00 00 00 02 00 00 00"
	    "01 00 61 0c 00 74 63 70 3a 2f 2f 61 3a 37 37 31"
	    "31 0c 00 74 63 70 3a 2f 2f 61 3a 37 37 31 32 01"
	    "02 03 00 00 00 00 00 00 00 d2 04 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 10 8f e5 cf 8b 01 00"
	    "00 2c 01 00 00 00 00 00 00"
	    "01 00 62 0c 00 74 63 70 3a 2f 2f 62 3a 37 37 31"
	    "31 0c 00 74 63 70 3a 2f 2f 62 3a 37 37 31 32 00"
	    "01 03 00 00 00 00 00 00 00 ce 04 00 00 00 00 00"
	    "00 04 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 4c 04 00 00 00 00 00 00");
	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_SWITCHOVER,
	        .switchover = { .node = S("b"), .timeout_ms = 10000 } });
	assert_hex(b, "53 01 23 00 01 00 62 10 27 00 00");
	encode_rep(b,
	    &(struct msg_rep) { .op = MSG_OP_SWITCHOVER,
	        .switchover = { .leader = S("tcp://b:7711"), .epoch = 4 } });
	assert_hex(b,
	    "53 01 23 00 00 00 0c 00 74 63 70 3a 2f 2f 62 3a"
	    "37 37 31 31 04 00 00 00 00 00 00 00");
	buf_reset(b);
	assert_int_equal(msg_encode_err(b, MSG_OP_CLUSTER, SLUICE_ESTATE,
	                     "automatic failover is off: this node runs "
	                     "without --etcd",
	                     NULL),
	    0);
	assert_hex(b,
	    "53 01 22 00 03 00 38 00 61 75 74 6f 6d 61 74 69"
	    "63 20 66 61 69 6c 6f 76 65 72 20 69 73 20 6f 66"
	    "66 3a 20 74 68 69 73 20 6e 6f 64 65 20 72 75 6e"
	    "73 20 77 69 74 68 6f 75 74 20 2d 2d 65 74 63 64"
	    "00 00");
}

/* The cluster map: map, map_set, map_delete, and a moved error. */
static void
doc_map_examples(struct buf *b)
{
	static const struct msg_str a_urls[] = { S("tcp://a:7711") };
	static const struct msg_str b_urls[] = { S("tcp://b:7711") };
	static const struct msg_map_entry entries[] = {
		{ .prefix = S(""), .cluster = S("c1") },
		{ .prefix = S("b."), .cluster = S("c2") },
	};
	static const struct msg_map_cluster clusters[] = {
		{ .name = S("c1"),
		    .leader = S("tcp://a:7711"),
		    .n = 1,
		    .members = a_urls },
		{ .name = S("c2"),
		    .leader = S("tcp://b:7711"),
		    .n = 1,
		    .members = b_urls },
	};

	encode_req(b, &(struct msg_req) { .op = MSG_OP_MAP });
	assert_hex(b, "53 01 32 00");
	encode_rep(b,
	    &(struct msg_rep) { .op = MSG_OP_MAP,
	        .map = { .revision = 7,
	            .cluster = S("c1"),
	            .n = 2,
	            .entries = entries,
	            .nclusters = 2,
	            .clusters = clusters } });
	assert_hex(b,
	    "53 01 32 00 00 00 07 00 00 00 00 00 00 00 02 00"
	    "63 31 02 00 00 00 00 00 02 00 63 31 00 02 00 62"
	    "2e 02 00 63 32 00 02 00 00 00 02 00 63 31 0c 00"
	    "74 63 70 3a 2f 2f 61 3a 37 37 31 31 01 00 00 00"
	    "0c 00 74 63 70 3a 2f 2f 61 3a 37 37 31 31 02 00"
	    "63 32 0c 00 74 63 70 3a 2f 2f 62 3a 37 37 31 31"
	    "01 00 00 00 0c 00 74 63 70 3a 2f 2f 62 3a 37 37"
	    "31 31");
	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_MAP_SET,
	        .map_set = { .prefix = S("billing."),
	            .cluster = S("c2"),
	            .ndraining = 1,
	            .draining = { S("c1") } } });
	assert_hex(b,
	    "53 01 33 00 08 00 62 69 6c 6c 69 6e 67 2e 02 00"
	    "63 32 01 02 00 63 31");
	encode_rep(
	    b, &(struct msg_rep) { .op = MSG_OP_MAP_SET, .revision = 8 });
	assert_hex(b, "53 01 33 00 00 00 08 00 00 00 00 00 00 00");
	encode_req(b,
	    &(struct msg_req) {
	        .op = MSG_OP_MAP_DELETE, .map_prefix = S("billing.") });
	assert_hex(b, "53 01 34 00 08 00 62 69 6c 6c 69 6e 67 2e");
	buf_reset(b);
	assert_int_equal(msg_encode_err(b, MSG_OP_PUT, SLUICE_EMOVED, "moved",
	                     "c2 7 tcp://b:7711"),
	    0);
	assert_hex(b,
	    "53 01 01 00 21 00 05 00 6d 6f 76 65 64 11 00 63"
	    "32 20 37 20 74 63 70 3a 2f 2f 62 3a 37 37 31 31");
}

/* auth. */
static void
doc_auth_examples(struct buf *b)
{
	encode_req(
	    b, &(struct msg_req) { .op = MSG_OP_AUTH, .token = S("s3cret") });
	assert_hex(b, "53 01 28 00 06 00 73 33 63 72 65 74");
	encode_rep(b, &(struct msg_rep) { .op = MSG_OP_AUTH });
	assert_hex(b, "53 01 28 00 00 00");
	buf_reset(b);
	assert_int_equal(msg_encode_err(b, MSG_OP_AUTH, SLUICE_EAUTH,
	                     "unauthenticated: not a known token", NULL),
	    0);
	assert_hex(b,
	    "53 01 28 00 1a 00 22 00 75 6e 61 75 74 68 65 6e"
	    "74 69 63 61 74 65 64 3a 20 6e 6f 74 20 61 20 6b"
	    "6e 6f 77 6e 20 74 6f 6b 65 6e 00 00");
	buf_reset(b);
	assert_int_equal(
	    msg_encode_err(b, MSG_OP_PUT, SLUICE_EPERM, "not allowed", NULL),
	    0);
	assert_hex(b,
	    "53 01 01 00 1b 00 0b 00 6e 6f 74 20 61 6c 6c 6f"
	    "77 65 64 00 00");
}

static int decode_rep_bytes(const void *p, size_t len);

/* errors with example ids, and its reply. */
static void
doc_errors_examples(struct buf *b)
{
	static const struct msg_error_count g = { S("timeout"), 2, 2,
		{ 4, 9 } };

	encode_req(b,
	    &(struct msg_req) {
	        .op = MSG_OP_ERRORS, .errors = { S("emails"), true } });
	assert_hex(b, "53 01 13 01 06 00 65 6d 61 69 6c 73");
	encode_rep(b,
	    &(struct msg_rep) { .op = MSG_OP_ERRORS,
	        .errors = { .ids = true, .n = 1, .errors = &g } });
	assert_hex(b,
	    "53 01 13 01 00 00 01 00 00 00 07 00 74 69 6d 65 6f 75 74"
	    "02 00 00 00 00 00 00 00 02 04 00 00 00 00 00 00 00"
	    "09 00 00 00 00 00 00 00");
	/* more than 3 ids: refused both ways */
	b->data[27] = 4;
	assert_int_equal(decode_rep_bytes(b->data, b->len), SLUICE_ELIMIT);
}

/* The groups examples: a tube's groups, the first 20 by backlog, and a
 * reply of two of its three groups. */
static void
doc_groups_examples(struct buf *b)
{
	static const struct msg_group_row rows[] = {
		{ S("emails"), S("acme"), 1000, 2, 10000 },
		{ S("emails"), S(""), 5, 0, 500 },
	};
	struct msg_group_row r;
	struct msg_rep m;

	encode_req(b,
	    &(struct msg_req) { .op = MSG_OP_GROUPS,
	        .groups = { .tube = S("emails"), .limit = 20 } });
	assert_hex(b, "53 01 29 00 06 00 65 6d 61 69 6c 73 14 00 00 00");
	encode_rep(b,
	    &(struct msg_rep) { .op = MSG_OP_GROUPS,
	        .groups = { .total = 3, .n = 2, .rows = rows } });
	assert_hex(b,
	    "53 01 29 00 00 00"
	    "03 00 00 00 00 00 00 00 02 00 00 00"
	    "06 00 65 6d 61 69 6c 73 04 00 61 63 6d 65"
	    "e8 03 00 00 00 00 00 00 02 00 00 00 00 00 00 00"
	    "10 27 00 00 00 00 00 00"
	    "06 00 65 6d 61 69 6c 73 00 00"
	    "05 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "f4 01 00 00 00 00 00 00");
	assert_int_equal(msg_decode_rep(b->data, b->len, NULL, &m), 0);
	assert_int_equal(m.groups.total, 3);
	assert_int_equal(m.groups.n, 2);
	assert_true(msg_next_group_row(&m.groups.it, &r));
	assert_str_equal(r.group, S("acme"));
	assert_int_equal(r.ready, 1000);
	assert_int_equal(r.taken, 2);
	assert_int_equal(r.oldest_ready_age, 10000);
	assert_true(msg_next_group_row(&m.groups.it, &r));
	assert_int_equal(r.group.len, 0);
	assert_int_equal(r.oldest_ready_age, 500);
	assert_false(msg_next_group_row(&m.groups.it, &r));
}

/* groups' limits: limit 1..1000 both ways, every tube (empty), a row's
 * bad group, a total below n, a short reply. */
static void
test_groups_listing_limits(void **state)
{
	struct msg_group_row row = { S("t"), S("a b"), 1, 0, 0 };
	struct msg_req q = { .op = MSG_OP_GROUPS,
		.groups = { .tube = S(""), .limit = 1000 } };
	struct msg_rep m = { .op = MSG_OP_GROUPS,
		.groups = { .total = 1, .n = 1, .rows = &row } };
	struct msg_req d;
	struct msg_rep dm;
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_req(&b, &q);
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
	assert_int_equal(d.groups.limit, 1000);
	assert_int_equal(d.tube.len, 0);
	assert_true(msg_req_idempotent(&d));
	buf_reset(&b);
	q.groups.limit = 0;
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	q.groups.limit = MSG_GROUPS_MAX + 1;
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_ELIMIT);
	/* the decoder alike: a limit of 0 patched into a good request */
	q.groups.limit = 1;
	encode_req(&b, &q);
	b.data[b.len - 4] = 0;
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &d), SLUICE_EINVAL);
	b.data[b.len - 4] = 0xe9; /* 1001 */
	b.data[b.len - 3] = 0x03;
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &d), SLUICE_ELIMIT);
	assert_int_equal(
	    msg_decode_req(b.data, b.len - 1, NULL, &d), SLUICE_ETRUNC);
	/* a reply: its group as a put's, its total at least n */
	buf_reset(&b);
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_EGROUP);
	row.group = S("ab");
	encode_rep(&b, &m);
	b.data[b.len - 24 - 1] = ' '; /* "a " */
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &dm), SLUICE_EGROUP);
	m.groups.total = 0;
	buf_reset(&b);
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_EINVAL);
	m.groups.total = 1;
	encode_rep(&b, &m);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &dm), 0);
	assert_int_equal(
	    msg_decode_rep(b.data, b.len - 1, NULL, &dm), SLUICE_ETRUNC);
	b.data[6] = 0; /* total 0 below n 1 */
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &dm), SLUICE_EPROTO);
	buf_fini(&b);
}

/* history, of every tube, and its reply; decoded back, a count read
 * with msg_history_at. The reply of a server without the depths (6 kinds)
 * still decodes, its depths read as 0; a reader of 6 kinds reads the
 * first 6 of a reply of 10 as they were. */
static void
doc_history_examples(struct buf *b)
{
	static const uint32_t v[] = { 5, 3, 4, 4, 3, 4, 1, 0, 0, 0, 0, 1, 7, 5,
		1, 1, 2, 2, 0, 1 };
	struct msg_rep m;

	encode_req(b,
	    &(struct msg_req) {
	        .op = MSG_OP_HISTORY, .history = { .secs = 2 } });
	assert_hex(b, "53 01 24 00 00 00 02 00 00 00");
	encode_rep(b,
	    &(struct msg_rep) { .op = MSG_OP_HISTORY,
	        .history = { .start = 1700000000000ULL,
	            .step = 1000,
	            .kinds = 10,
	            .n = 2,
	            .values = v } });
	assert_hex(b,
	    "53 01 24 00 00 00 00 68 e5 cf 8b 01 00 00 e8 03 00 00 0a"
	    "02 00 00 00"
	    "05 00 00 00 03 00 00 00 04 00 00 00 04 00 00 00"
	    "03 00 00 00 04 00 00 00 01 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 01 00 00 00"
	    "07 00 00 00 05 00 00 00 01 00 00 00 01 00 00 00"
	    "02 00 00 00 02 00 00 00 00 00 00 00 01 00 00 00");
	assert_int_equal(msg_decode_rep(b->data, b->len, NULL, &m), 0);
	assert_int_equal(m.history.start, 1700000000000ULL);
	assert_int_equal(m.history.step, 1000);
	assert_int_equal(m.history.n, 2);
	assert_int_equal(m.history.kinds, 10);
	assert_int_equal(msg_history_at(&m.history, MSG_HK_PUT, 0), 5);
	assert_int_equal(msg_history_at(&m.history, MSG_HK_ACK, 1), 4);
	assert_int_equal(msg_history_at(&m.history, MSG_HK_TTR, 1), 1);
	assert_int_equal(msg_history_at(&m.history, MSG_HK_READY, 1), 5);
	assert_int_equal(msg_history_at(&m.history, MSG_HK_BURIED, 1), 1);
	assert_int_equal(msg_history_at(&m.history, 11, 1), 0);
	assert_int_equal(msg_history_at(&m.history, MSG_HK_PUT, 2), 0);

	/* The first 6 kinds alone, as a server without depths sends them:
	 * the same counts, no depth. */
	encode_rep(b,
	    &(struct msg_rep) { .op = MSG_OP_HISTORY,
	        .history = { .start = 1700000000000ULL,
	            .step = 1000,
	            .kinds = 6,
	            .n = 2,
	            .values = v } });
	assert_int_equal(b->len, 71);
	assert_int_equal(msg_decode_rep(b->data, b->len, NULL, &m), 0);
	assert_int_equal(m.history.kinds, 6);
	assert_int_equal(msg_history_at(&m.history, MSG_HK_TTR, 1), 1);
	assert_int_equal(msg_history_at(&m.history, MSG_HK_READY, 1), 0);
}

/* history's limits: secs 1..900 both ways; a reply's shape; a tube
 * round trip; a short reply is ETRUNC. */
static void
test_history_limits(void **state)
{
	static const uint32_t v[MSG_HISTORY_KINDS_MAX * 2];
	struct msg_req q = { .op = MSG_OP_HISTORY,
		.history = { .tube = S("emails"), .secs = 900 } };
	struct msg_rep m = { .op = MSG_OP_HISTORY,
		.history = { .start = 1,
		    .step = 5000,
		    .kinds = 6,
		    .n = 2,
		    .values = v } };
	struct msg_req d;
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_req(&b, &q);
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
	assert_int_equal(d.history.secs, 900);
	assert_str_equal(d.history.tube, S("emails"));
	assert_true(msg_req_idempotent(&d));
	q.history.secs = 0;
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	q.history.secs = MSG_HISTORY_SECS + 1;
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	/* the decoder alike: secs 0 patched into a good request */
	q.history.secs = 1;
	encode_req(&b, &q);
	b.data[b.len - 4] = 0;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	q.history.tube = S("bad tube");
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_ETUBE);

	encode_rep(&b, &m);
	assert_int_equal(decode_rep_bytes(b.data, b.len), 0);
	assert_int_equal(decode_rep_bytes(b.data, b.len - 1), SLUICE_ETRUNC);
	m.history.kinds = MSG_HISTORY_KINDS_MAX + 1;
	buf_reset(&b);
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_ELIMIT);
	m.history.kinds = 0;
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_EINVAL);
	m.history.kinds = 6;
	m.history.step = 0;
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_EINVAL);
	m.history.step = 1000;
	m.history.n = MSG_HISTORY_SECS + 1;
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_ELIMIT);
	assert_int_equal(b.len, 0);
	buf_fini(&b);
}

/* The lease of the examples: epoch 2, LSN 1001 (epoch x 2^32 + LSN). */
#define DOC_LEASE UINT64_C(8589935593)

/* op group (0x2a): the examples of docs/protocol.md, a round trip, and
 * each misuse refused by the encoder and the decoder. */
static void
test_group_op(void **state)
{
	struct msg_req q;
	struct msg_rep m;
	struct buf b;
	const struct msg_rep rep = { .op = MSG_OP_GROUP,
		.group = { .tube = S("api"),
		    .group = S("acme"),
		    .every = { MSG_LIM_CONCURRENCY, 0, 0, 0, 2 },
		    .overrides = 1,
		    .paused = 0,
		    .held = 1,
		    .gflags = MSG_GROUP_OWN | MSG_GROUP_LIVE,
		    .own = { MSG_LIM_RATE, 10, 1000, 1, 0 },
		    .lim = { MSG_LIM_ALL, 10, 1000, 1, 2 },
		    .ready = 5,
		    .taken = 2,
		    .tokens = 1,
		    .holding = 2 } };

	(void)state;
	buf_init(&b);
	/* group set of tube api, group acme: at most 2 taken at once */
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_GROUP,
	        .group = { .tube = S("api"),
	            .group = S("acme"),
	            .verb = MSG_GROUP_SET,
	            .flow = { MSG_LIM_CONCURRENCY, 0, 0, 0, 2 } } });
	assert_hex(&b,
	    "53 01 2a 00 03 00 61 70 69 04 00 61 63 6d 65 01"
	    "00 02 00 00 00 00 00 00 00 00 00 00 00 00 02 00"
	    "00 00");
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &q), 0);
	assert_int_equal(q.group.verb, MSG_GROUP_SET);
	assert_int_equal(q.group.flow.concurrency, 2);
	assert_str_equal(q.group.group, S("acme"));
	/* its reply: acme's own rate, every group's cap, held by the cap */
	encode_rep(&b, &rep);
	assert_hex(&b,
	    "53 01 2a 00 00 00 03 00 61 70 69 04 00 61 63 6d"
	    "65 02 00 00 00 00 00 00 00 00 00 00 00 00 02 00"
	    "00 00 01 00 00 00 00 00 00 00 01 00 00 00 05 01"
	    "0a 00 00 00 e8 03 00 00 01 00 00 00 00 00 00 00"
	    "03 0a 00 00 00 e8 03 00 00 01 00 00 00 02 00 00"
	    "00 05 00 00 00 02 00 00 00 01 00 00 00 00 00 00"
	    "00 02");
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_int_equal(m.group.gflags, MSG_GROUP_OWN | MSG_GROUP_LIVE);
	assert_int_equal(m.group.lim.concurrency, 2);
	assert_int_equal(m.group.holding, 2);
	assert_true(m.group.tokens == 1);
	/* pause acme */
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_GROUP,
	        .group = { .tube = S("api"),
	            .group = S("acme"),
	            .verb = MSG_GROUP_PAUSE } });
	assert_hex(&b,
	    "53 01 2a 00 03 00 61 70 69 04 00 61 63 6d 65 02"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00");
	/* misuse: a bad group, a pause of every group, limits with a
	 * pause, a limit both set and lifted, an unknown verb */
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b,
	                     &(struct msg_req) { .op = MSG_OP_GROUP,
	                         .group = { .tube = S("api"),
	                             .group = S("a b"),
	                             .verb = MSG_GROUP_SHOW } }),
	    SLUICE_EGROUP);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_GROUP,
	            .group = { .tube = S("api"), .verb = MSG_GROUP_PAUSE } }),
	    SLUICE_EINVAL);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_GROUP,
	            .group = { .tube = S("api"),
	                .group = S("g"),
	                .verb = MSG_GROUP_PAUSE,
	                .flow = { MSG_LIM_CONCURRENCY, 0, 0, 0, 1 } } }),
	    SLUICE_EINVAL);
	assert_int_equal(
	    msg_encode_req(&b,
	        &(struct msg_req) { .op = MSG_OP_GROUP,
	            .group = { .tube = S("api"),
	                .group = S("g"),
	                .verb = MSG_GROUP_SET,
	                .lunset = MSG_LIM_CONCURRENCY,
	                .flow = { MSG_LIM_CONCURRENCY, 0, 0, 0, 1 } } }),
	    SLUICE_EINVAL);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_GROUP,
	        .group = { .tube = S("api"),
	            .group = S("a_b"),
	            .verb = MSG_GROUP_SHOW } });
	b.data[12] = ' ';
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EGROUP);
	b.data[12] = '_';
	b.data[14] = 9; /* verb */
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	buf_fini(&b);
}

static void
test_doc_examples(void **state)
{
	static const struct msg_str emails[] = { S("emails") };
	static const struct msg_ack_item doc_acks[] = { { 42, DOC_LEASE },
		{ 43, DOC_LEASE + 1 } };
	static const uint64_t doc_ids[] = { 42, 43 };
	static const struct msg_hour doc_hour = { 1699999200000ULL, 2, 1, 0, 1,
		{ 2, 500, 300, 222, 300 }, { 3, 30, 20, 10, 20 } };
	static const struct msg_item_res doc_ack_res[] = { { 0 },
		{ SLUICE_ESTALE } };
	static const struct msg_item_res doc_del_res[] = { { 0 },
		{ SLUICE_ENOTFOUND } };
	const struct msg_task task = { .id = 42,
		.lease = DOC_LEASE,
		.state = MSG_ST_TAKEN,
		.detached = true,
		.priority = 1024,
		.attempts = 1,
		.ttr = 60000,
		.run_at = 1700000000000ULL,
		.created_at = 1700000000000ULL,
		.updated_at = 1700000000500ULL,
		.taken_at = 1700000000500ULL,
		.deadline = 1700000060500ULL,
		.size = 2,
		.tube = S("emails"),
		.payload = S("hi") };
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT,
	        .put = { .tube = S("emails"),
	            .priority = 1024,
	            .payload = S("hi") } });
	assert_hex(&b,
	    "53 01 01 00 06 00 65 6d 61 69 6c 73 00 04 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 00"
	    "00 00 68 69");
	encode_rep(&b,
	    &(struct msg_rep) {
	        .op = MSG_OP_PUT, .put = { .created = true, .id = 42 } });
	assert_hex(&b, "53 01 01 00 00 00 00 00 01 2a 00 00 00 00 00 00 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT,
	        .put = { .tube = S("rows"),
	            .priority = 1024,
	            .replace = true,
	            .key = S("r7"),
	            .if_newer = 1700000000123ULL,
	            .payload = S("{}") } });
	assert_hex(&b,
	    "53 01 01 05 04 00 72 6f 77 73 00 04 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 02 00 72 37 02 00"
	    "00 00 7b 7d 7b 68 e5 cf 8b 01 00 00");
	encode_rep(&b,
	    &(struct msg_rep) {
	        .op = MSG_OP_PUT, .put = { .stale = true, .id = 42 } });
	assert_hex(&b, "53 01 01 00 00 00 00 00 02 2a 00 00 00 00 00 00 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT,
	        .put = { .tube = S("hooks"),
	            .priority = 1024,
	            .key = S("k"),
	            .debounce = 500,
	            .payload = S("{}") } });
	assert_hex(&b,
	    "53 01 01 80 05 00 68 6f 6f 6b 73 00 04 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 01 00 6b 02 00"
	    "00 00 7b 7d f4 01 00 00 00 00 00 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT,
	        .put = { .tube = S("hooks"),
	            .priority = 1024,
	            .key = S("k"),
	            .throttle = 60000,
	            .payload = S("{}") } });
	assert_hex(&b,
	    "53 01 01 40 05 00 68 6f 6f 6b 73 00 04 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 01 00 6b 02 00"
	    "00 00 7b 7d 60 ea 00 00 00 00 00 00");
	encode_rep(&b,
	    &(struct msg_rep) {
	        .op = MSG_OP_PUT, .put = { .throttled = true, .id = 42 } });
	assert_hex(&b, "53 01 01 00 00 00 00 00 03 2a 00 00 00 00 00 00 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT,
	        .put = { .tube = S("emails"),
	            .priority = 1024,
	            .group = S("acme"),
	            .payload = S("hi") } });
	assert_hex(&b,
	    "53 01 01 08 06 00 65 6d 61 69 6c 73 00 04 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 02 00"
	    "00 00 68 69 04 00 61 63 6d 65");
	{
		struct msg_task grouped = task;

		grouped.group = S("acme");
		encode_rep(&b,
		    &(struct msg_rep) { .op = MSG_OP_PEEK, .task = grouped });
		assert_hex(&b,
		    "53 01 0e 00 00 00 72 00 00 00 2a 00 00 00 00 00"
		    "00 00 e9 03 00 00 02 00 00 00 03 21 00 04 00 00"
		    "01 00 00 00 00 00 00 00 60 ea 00 00 00 00 00 00"
		    "00 68 e5 cf 8b 01 00 00 00 00 00 00 00 00 00 00"
		    "00 68 e5 cf 8b 01 00 00 f4 69 e5 cf 8b 01 00 00"
		    "f4 69 e5 cf 8b 01 00 00 54 54 e6 cf 8b 01 00 00"
		    "02 00 00 00 06 00 65 6d 61 69 6c 73 00 00 00 00"
		    "02 00 00 00 68 69 04 00 61 63 6d 65");
	}
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_TAKE,
	        .take = { .wait = 5000,
	            .max = 1,
	            .detach = true,
	            .ntubes = 1,
	            .tubes = emails } });
	assert_hex(&b,
	    "53 01 03 01 88 13 00 00 00 00 00 00 01 00 00 00"
	    "01 00 06 00 65 6d 61 69 6c 73");
	encode_rep(&b,
	    &(struct msg_rep) {
	        .op = MSG_OP_TAKE, .tasks = { .n = 1, .tasks = &task } });
	assert_hex(&b,
	    "53 01 03 00 00 00 01 00 00 00 6c 00 00 00 2a 00"
	    "00 00 00 00 00 00 e9 03 00 00 02 00 00 00 03 01"
	    "00 04 00 00 01 00 00 00 00 00 00 00 60 ea 00 00"
	    "00 00 00 00 00 68 e5 cf 8b 01 00 00 00 00 00 00"
	    "00 00 00 00 00 68 e5 cf 8b 01 00 00 f4 69 e5 cf"
	    "8b 01 00 00 f4 69 e5 cf 8b 01 00 00 54 54 e6 cf"
	    "8b 01 00 00 02 00 00 00 06 00 65 6d 61 69 6c 73"
	    "00 00 00 00 02 00 00 00 68 69");
	{
		struct msg_task held = task;

		held.detached = false;
		held.holder.session = 17;
		held.holder.peer = S("127.0.0.1:40312");
		encode_rep(
		    &b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = held });
		assert_hex(&b,
		    "53 01 0e 00 00 00 81 00 00 00 2a 00 00 00 00 00"
		    "00 00 e9 03 00 00 02 00 00 00 03 10 00 04 00 00"
		    "01 00 00 00 00 00 00 00 60 ea 00 00 00 00 00 00"
		    "00 68 e5 cf 8b 01 00 00 00 00 00 00 00 00 00 00"
		    "00 68 e5 cf 8b 01 00 00 f4 69 e5 cf 8b 01 00 00"
		    "f4 69 e5 cf 8b 01 00 00 54 54 e6 cf 8b 01 00 00"
		    "02 00 00 00 06 00 65 6d 61 69 6c 73 00 00 00 00"
		    "02 00 00 00 68 69 11 00 00 00 0f 00 31 32 37 2e"
		    "30 2e 30 2e 31 3a 34 30 33 31 32");
	}
	encode_req(&b,
	    &(struct msg_req) {
	        .op = MSG_OP_ACK, .ack = { .id = 42, .lease = DOC_LEASE } });
	assert_hex(&b,
	    "53 01 04 00 2a 00 00 00 00 00 00 00 e9 03 00 00"
	    "02 00 00 00 00 00");
	encode_req(&b,
	    &(struct msg_req) {
	        .op = MSG_OP_ACK, .ack = { .id = 42, .force = true } });
	assert_hex(&b,
	    "53 01 04 80 2a 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_ACK,
	        .ack = { .id = 42, .lease = DOC_LEASE, .result = S("sent") } });
	assert_hex(&b,
	    "53 01 04 01 2a 00 00 00 00 00 00 00 e9 03 00 00"
	    "02 00 00 00 00 00 04 00 73 65 6e 74");
	{
		struct msg_task done = task;

		done.lease = 0;
		done.state = MSG_ST_DONE;
		done.detached = false;
		done.run_at = 1700086400800ULL;
		done.updated_at = 1700000000800ULL;
		done.deadline = 0;
		done.done.finished_at = 1700000000800ULL;
		done.done.kept_until = 1700086400800ULL;
		done.done.duration = 300;
		done.done.result = S("sent");
		encode_rep(
		    &b, &(struct msg_rep) { .op = MSG_OP_PEEK, .task = done });
		assert_hex(&b,
		    "53 01 0e 00 00 00 8a 00 00 00 2a 00 00 00 00 00"
		    "00 00 00 00 00 00 00 00 00 00 05 04 00 04 00 00"
		    "01 00 00 00 00 00 00 00 60 ea 00 00 00 00 00 00"
		    "20 c7 0b d5 8b 01 00 00 00 00 00 00 00 00 00 00"
		    "00 68 e5 cf 8b 01 00 00 20 6b e5 cf 8b 01 00 00"
		    "f4 69 e5 cf 8b 01 00 00 00 00 00 00 00 00 00 00"
		    "02 00 00 00 06 00 65 6d 61 69 6c 73 00 00 00 00"
		    "02 00 00 00 68 69 20 6b e5 cf 8b 01 00 00 20 c7"
		    "0b d5 8b 01 00 00 2c 01 00 00 00 00 00 00 04 00"
		    "73 65 6e 74");
	}
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_DELETE_WHERE,
	        .where = { .tube = S("emails"),
	            .state = MSG_ST_DONE,
	            .older = 2592000000ULL } });
	assert_hex(&b,
	    "53 01 1d 00 06 00 65 6d 61 69 6c 73 05 00 c8 7e"
	    "9a 00 00 00 00");
	encode_rep(
	    &b, &(struct msg_rep) { .op = MSG_OP_DELETE_WHERE, .count = 3 });
	assert_hex(&b, "53 01 1d 00 00 00 03 00 00 00 00 00 00 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_LIST,
	        .list = { .tube = S("emails"),
	            .state = MSG_ST_BURIED,
	            .order = MSG_ORDER_ID,
	            .limit = 100,
	            .after = 42 } });
	assert_hex(&b,
	    "53 01 12 02 06 00 65 6d 61 69 6c 73 04 04 64 00"
	    "00 00 2a 00 00 00 00 00 00 00");
	encode_rep(&b, &(struct msg_rep) { .op = MSG_OP_LIST });
	assert_hex(&b, "53 01 12 00 00 00 00 00 00 00");
	encode_rep(
	    &b, &(struct msg_rep) { .op = MSG_OP_ACK, .after = { .id = 42 } });
	assert_hex(&b,
	    "53 01 04 00 00 00 2a 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	buf_reset(&b);
	assert_int_equal(msg_encode_err(&b, MSG_OP_PUT, SLUICE_ENOTLEADER,
	                     "not leader", "tcp://10.0.0.2:7711"),
	    0);
	assert_hex(&b,
	    "53 01 01 00 11 00 0a 00 6e 6f 74 20 6c 65 61 64"
	    "65 72 13 00 74 63 70 3a 2f 2f 31 30 2e 30 2e 30"
	    "2e 32 3a 37 37 31 31");
	encode_req(&b, &(struct msg_req) { .op = MSG_OP_STATS });
	assert_hex(&b, "53 01 11 00 00 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_ACK_BATCH,
	        .ack_batch = { .n = 2, .items = doc_acks } });
	assert_hex(&b,
	    "53 01 19 00 02 00 00 00 2a 00 00 00 00 00 00 00"
	    "e9 03 00 00 02 00 00 00 2b 00 00 00 00 00 00 00"
	    "ea 03 00 00 02 00 00 00");
	encode_rep(&b,
	    &(struct msg_rep) { .op = MSG_OP_ACK_BATCH,
	        .batch = { .n = 2, .items = doc_ack_res } });
	assert_hex(&b, "53 01 19 00 00 00 02 00 00 00 00 00 02 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_DELETE_BATCH,
	        .delete_batch = { .n = 2, .ids = doc_ids } });
	assert_hex(&b,
	    "53 01 1a 00 02 00 00 00 2a 00 00 00 00 00 00 00"
	    "2b 00 00 00 00 00 00 00");
	encode_rep(&b,
	    &(struct msg_rep) { .op = MSG_OP_DELETE_BATCH,
	        .batch = { .n = 2, .items = doc_del_res } });
	assert_hex(&b, "53 01 1a 00 00 00 02 00 00 00 00 00 01 00");
	/* cancel: delete_batch's layout */
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_CANCEL,
	        .delete_batch = { .n = 2, .ids = doc_ids } });
	assert_hex(&b,
	    "53 01 2d 00 02 00 00 00 2a 00 00 00 00 00 00 00"
	    "2b 00 00 00 00 00 00 00");
	encode_rep(&b,
	    &(struct msg_rep) { .op = MSG_OP_CANCEL,
	        .batch = { .n = 2, .items = doc_del_res } });
	assert_hex(&b, "53 01 2d 00 00 00 02 00 00 00 00 00 01 00");
	/* wait for 42 up to 30 s; it was done, with its result */
	encode_req(&b,
	    &(struct msg_req) {
	        .op = MSG_OP_WAIT, .wait = { .id = 42, .wait = 30000 } });
	assert_hex(&b,
	    "53 01 2e 00 2a 00 00 00 00 00 00 00 30 75 00 00"
	    "00 00 00 00");
	encode_rep(&b,
	    &(struct msg_rep) { .op = MSG_OP_WAIT,
	        .result = { .id = 42,
	            .state = MSG_ST_DONE,
	            .final = true,
	            .time = 1700000001000ULL,
	            .tube = S("emails"),
	            .text = S("ok") } });
	assert_hex(&b,
	    "53 01 2e 00 00 00 2a 00 00 00 00 00 00 00 05 01"
	    "e8 6b e5 cf 8b 01 00 00 06 00 65 6d 61 69 6c 73"
	    "02 00 6f 6b");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_UPDATE,
	        .update = { .id = 42, .set_priority = true, .priority = 5 } });
	assert_hex(&b,
	    "53 01 1b 01 2a 00 00 00 00 00 00 00 05 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00");
	encode_rep(&b,
	    &(struct msg_rep) { .op = MSG_OP_UPDATE,
	        .after = { .id = 42, .state = MSG_ST_READY } });
	assert_hex(&b,
	    "53 01 1b 00 00 00 2a 00 00 00 00 00 00 00 01 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_FAIL,
	        .fail = { .id = 42,
	            .lease = DOC_LEASE,
	            .fatal = true,
	            .error = S("bad input") } });
	assert_hex(&b,
	    "53 01 06 02 2a 00 00 00 00 00 00 00 e9 03 00 00"
	    "02 00 00 00 00 00 00 00 00 00 00 00 09 00 62 61"
	    "64 20 69 6e 70 75 74");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_BURY,
	        .lease = {
	            .id = 42, .lease = DOC_LEASE, .error = S("poison") } });
	assert_hex(&b,
	    "53 01 08 01 2a 00 00 00 00 00 00 00 e9 03 00 00"
	    "02 00 00 00 06 00 70 6f 69 73 6f 6e");
	encode_req(&b,
	    &(struct msg_req) {
	        .op = MSG_OP_RELEASE_ALL, .tube = S("emails") });
	assert_hex(&b, "53 01 18 00 06 00 65 6d 61 69 6c 73");
	encode_rep(
	    &b, &(struct msg_rep) { .op = MSG_OP_RELEASE_ALL, .count = 2 });
	assert_hex(&b, "53 01 18 00 00 00 02 00 00 00 00 00 00 00");
	doc_tube_examples(&b);
	doc_cluster_examples(&b);
	doc_map_examples(&b);
	doc_auth_examples(&b);
	doc_history_examples(&b);
	doc_groups_examples(&b);
	doc_errors_examples(&b);
	doc_deps_examples(&b);
	encode_req(&b,
	    &(struct msg_req) {
	        .op = MSG_OP_STATS_HOURLY, .tube = S("emails") });
	assert_hex(&b, "53 01 1c 00 06 00 65 6d 61 69 6c 73");
	encode_rep(&b,
	    &(struct msg_rep) { .op = MSG_OP_STATS_HOURLY,
	        .hours = { .n = 1, .hours = &doc_hour } });
	assert_hex(&b,
	    "53 01 1c 00 00 00 01 00 00 00"
	    "00 33 d9 cf 8b 01 00 00 02 00 00 00 00 00 00 00"
	    "01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "01 00 00 00 00 00 00 00 02 00 00 00 00 00 00 00"
	    "f4 01 00 00 00 00 00 00 2c 01 00 00 00 00 00 00"
	    "de 00 00 00 00 00 00 00 2c 01 00 00 00 00 00 00"
	    "03 00 00 00 00 00 00 00 1e 00 00 00 00 00 00 00"
	    "14 00 00 00 00 00 00 00 0a 00 00 00 00 00 00 00"
	    "14 00 00 00 00 00 00 00");
	buf_fini(&b);
}

/* docs/protocol.md, section 9: the batch examples, byte for byte: a put
 * into batch "b1" (tag 3), batch_set with a callback and close,
 * batch_show; decoded back. */
static void
test_doc_examples_batches(void **state)
{
	struct msg_req q;
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT,
	        .put = { .tube = S("t"),
	            .priority = 1024,
	            .payload = S("D"),
	            .ext = true,
	            .batch = S("b1") } });
	assert_hex(&b,
	    "53 01 01 10 01 00 74 00 04 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 01 00 00 00 44 07 00"
	    "00 00 03 02 00 00 00 62 31");
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &q), 0);
	assert_int_equal(q.put.batch.len, 2);
	assert_memory_equal(q.put.batch.p, "b1", 2);
	assert_int_equal(q.put.nafter + q.put.nafter_keys, 0);
	buf_reset(&b);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_BATCH_SET,
	        .batch = { .name = S("b1"),
	            .what = MSG_BATCH_SUCCESS | MSG_BATCH_CLOSE,
	            .success_tube = S("ok"),
	            .success_payload = S("hi") } });
	assert_hex(&b,
	    "53 01 2c 00 02 00 62 31 05 02 00 6f 6b 02 00 00"
	    "00 68 69 00 00 00 00 00 00");
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &q), 0);
	assert_int_equal(q.batch.what, 5);
	assert_int_equal(q.batch.success_payload.len, 2);
	buf_reset(&b);
	encode_req(&b,
	    &(struct msg_req) {
	        .op = MSG_OP_BATCH_SHOW, .batch = { .name = S("b1") } });
	assert_hex(&b, "53 01 2b 00 02 00 62 31");
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &q), 0);
	/* its reply once the batch ended, both tasks acked, on_success put
	 * as task 9 */
	encode_rep(&b,
	    &(struct msg_rep) { .op = MSG_OP_BATCH_SHOW,
	        .batch_info = { .one = { .name = S("b1"),
	                            .total = 2,
	                            .acked = 2,
	                            .started_at = 1700000000000ULL,
	                            .ended_at = 1700000001000ULL,
	                            .closed = true,
	                            .ended = true,
	                            .fired = MSG_BATCH_SUCCESS,
	                            .success_tube = S("ok"),
	                            .success_id = 9 } } });
	assert_hex(&b,
	    "53 01 2b 00 00 00 02 00 62 31 02 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 02 00 00 00 00 00"
	    "00 00 00 00 00 00 00 00 00 00 00 68 e5 cf 8b 01"
	    "00 00 e8 6b e5 cf 8b 01 00 00 03 00 01 02 00 6f"
	    "6b 09 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 00 00");
	/* a batch_set that asks nothing, or a name of 0 bytes: EINVAL */
	buf_reset(&b);
	buf_put(&b,
	    "\x53\x01\x2c\x00\x02\x00"
	    "b1\x00",
	    9);
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &q), SLUICE_EINVAL);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x2b\x00\x00\x00", 6);
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &q), SLUICE_EINVAL);
	buf_fini(&b);
}

/* batch_show's list (flag 0x01): the request of the docs' example; its
 * limit 1..1000; the reply's batches and total decoded back; a reply
 * of more batches than the total it gives is refused. A peek that asks
 * for the task's batch (flag 0x01) gets it after the task; one that
 * does not gets the reply it always got. */
static void
test_batch_list_and_peek_batch(void **state)
{
	const struct msg_batch v[2] = {
		{ .name = S("b2"),
		    .total = 3,
		    .ready = 2,
		    .taken = 1,
		    .started_at = 7 },
		{ .name = S("b1"),
		    .total = 2,
		    .acked = 2,
		    .closed = true,
		    .ended = true,
		    .ended_at = 9,
		    .success_tube = S("ok"),
		    .success_id = 5 },
	};
	struct msg_rep m = { .op = MSG_OP_BATCH_SHOW }, out;
	struct msg_batch got;
	struct msg_req q;
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_BATCH_SHOW,
	        .batch = { .list = true, .limit = 50 } });
	assert_hex(&b, "53 01 2b 01 32 00 00 00");
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &q), 0);
	assert_true(q.batch.list);
	assert_int_equal(q.batch.limit, 50);
	/* limit 0 and 1001: EINVAL both ways */
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b,
	                     &(struct msg_req) { .op = MSG_OP_BATCH_SHOW,
	                         .batch = { .list = true, .limit = 1001 } }),
	    SLUICE_EINVAL);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x2b\x01\x00\x00\x00\x00", 8);
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &q), SLUICE_EINVAL);
	/* a list of 2 of 3 */
	m.batch_info.list = true;
	m.batch_info.total = 3;
	m.batch_info.n = 2;
	m.batch_info.v = v;
	encode_rep(&b, &m);
	assert_int_equal(((const uint8_t *)b.data)[3], 0x01);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &out), 0);
	assert_true(out.batch_info.list);
	assert_int_equal(out.batch_info.total, 3);
	assert_int_equal(out.batch_info.n, 2);
	assert_true(msg_next_batch(&out.batch_info.it, &got));
	assert_str_equal(got.name, S("b2"));
	assert_int_equal(got.ready, 2);
	assert_int_equal(got.taken, 1);
	assert_false(got.ended);
	assert_true(msg_next_batch(&out.batch_info.it, &got));
	assert_str_equal(got.name, S("b1"));
	assert_true(got.closed && got.ended);
	assert_int_equal(got.ended_at, 9);
	assert_str_equal(got.success_tube, S("ok"));
	assert_int_equal(got.success_id, 5);
	assert_false(msg_next_batch(&out.batch_info.it, &got));
	/* more batches than the total: refused both ways */
	m.batch_info.total = 1;
	buf_reset(&b);
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_EINVAL);
	m.batch_info.total = 3;
	encode_rep(&b, &m);
	((uint8_t *)b.data)[6] = 1; /* the total, now 1 */
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &out), SLUICE_EPROTO);

	/* peek with flag 0x01 */
	encode_req(&b,
	    &(struct msg_req) {
	        .op = MSG_OP_PEEK, .with_batch = true, .id = 4 });
	assert_hex(&b, "53 01 0e 01 04 00 00 00 00 00 00 00");
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &q), 0);
	assert_true(q.with_batch);
	{
		struct msg_rep pr = { .op = MSG_OP_PEEK };

		pr.task = (struct msg_task) { .id = 4,
			.state = MSG_ST_READY,
			.size = 1,
			.tube = S("t"),
			.payload = S("D"),
			.with_batch = true,
			.batch = S("b2") };
		encode_rep(&b, &pr);
		assert_int_equal(((const uint8_t *)b.data)[3], 0x01);
		assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &out), 0);
		assert_true(out.task.with_batch);
		assert_str_equal(out.task.batch, S("b2"));
		assert_int_equal(out.task.id, 4);
		/* not asked: no flag, no name, the reply as before */
		pr.task.with_batch = false;
		encode_rep(&b, &pr);
		assert_int_equal(((const uint8_t *)b.data)[3], 0x00);
		assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &out), 0);
		assert_false(out.task.with_batch);
		assert_int_equal(out.task.batch.len, 0);
	}
	buf_fini(&b);
}

/* docs/protocol.md, section 9: the schedule ops' examples, byte for
 * byte, and their replies decoded back. */
static void
test_doc_examples_schedules(void **state)
{
	const struct msg_sched s = { .name = S("nightly"),
		.tube = S("reports"),
		.cron = S("30 2 * * *"),
		.tz = S("Europe/Paris"),
		.catch_up = MSG_CATCH_ONE,
		.paused = true,
		.priority = 1024,
		.ttr = 60000,
		.created_at = 1700000000000ULL,
		.updated_at = 1700000100000ULL,
		.last_slot = 1699925400000ULL,
		.last_id = 42,
		.fired = 3,
		.size = 2,
		.payload = S("{}") };
	struct msg_rep m;
	struct msg_req q;
	struct msg_sched d;
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_SCHED_SET,
	        .sched_set = { .name = S("nightly"),
	            .tube = S("reports"),
	            .cron = S("30 2 * * *"),
	            .tz = S("Europe/Paris"),
	            .catch_up = MSG_CATCH_ONE,
	            .priority = 1024,
	            .payload = S("{}") } });
	assert_hex(&b,
	    "53 01 2f 00 07 00 6e 69 67 68 74 6c 79 07 00 72"
	    "65 70 6f 72 74 73 0a 00 33 30 20 32 20 2a 20 2a"
	    "20 2a 0c 00 45 75 72 6f 70 65 2f 50 61 72 69 73"
	    "01 00 04 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "00 02 00 00 00 7b 7d");
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &q), 0);
	assert_int_equal(q.sched_set.catch_up, MSG_CATCH_ONE);
	assert_int_equal(q.sched_set.tz.len, 12);
	buf_reset(&b);
	assert_int_equal(msg_encode_err(&b, MSG_OP_SCHED_SET, SLUICE_ESCHED,
	                     "schedule set 'nightly': hour field: 25 is out "
	                     "of 0-23; nothing was changed",
	                     NULL),
	    0);
	assert_hex(&b,
	    "53 01 2f 00 20 00 4a 00 73 63 68 65 64 75 6c 65"
	    "20 73 65 74 20 27 6e 69 67 68 74 6c 79 27 3a 20"
	    "68 6f 75 72 20 66 69 65 6c 64 3a 20 32 35 20 69"
	    "73 20 6f 75 74 20 6f 66 20 30 2d 32 33 3b 20 6e"
	    "6f 74 68 69 6e 67 20 77 61 73 20 63 68 61 6e 67"
	    "65 64 00 00");
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_SCHED_CTL,
	        .sched = { .name = S("nightly"), .action = MSG_SCHED_PAUSE } });
	assert_hex(&b, "53 01 31 00 07 00 6e 69 67 68 74 6c 79 01");
	encode_rep(&b,
	    &(struct msg_rep) {
	        .op = MSG_OP_SCHED_CTL, .scheds = { .n = 1, .v = &s } });
	assert_hex(&b,
	    "53 01 31 00 00 00 01 00 00 00 07 00 6e 69 67 68"
	    "74 6c 79 07 00 72 65 70 6f 72 74 73 0a 00 33 30"
	    "20 32 20 2a 20 2a 20 2a 0c 00 45 75 72 6f 70 65"
	    "2f 50 61 72 69 73 01 01 00 04 00 00 60 ea 00 00"
	    "00 00 00 00 00 00 00 00 00 68 e5 cf 8b 01 00 00"
	    "a0 ee e6 cf 8b 01 00 00 00 00 00 00 00 00 00 00"
	    "c0 19 73 cb 8b 01 00 00 2a 00 00 00 00 00 00 00"
	    "03 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    "02 00 00 00 02 00 00 00 7b 7d");
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_int_equal(m.scheds.n, 1);
	assert_true(msg_next_sched(&m.scheds.it, &d));
	assert_str_equal(d.cron, s.cron);
	assert_true(d.paused && d.fired == 3 && d.last_id == 42);
	assert_false(msg_next_sched(&m.scheds.it, &d));
	/* limits: an action, a catch-up out of range; an empty name */
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b,
	                     &(struct msg_req) { .op = MSG_OP_SCHED_CTL,
	                         .sched = { .name = S("n"), .action = 4 } }),
	    SLUICE_EINVAL);
	assert_int_equal(msg_encode_req(&b,
	                     &(struct msg_req) { .op = MSG_OP_SCHED_SET,
	                         .sched_set = { .name = S("n"),
	                             .tube = S("t"),
	                             .cron = S("@daily"),
	                             .catch_up = 3 } }),
	    SLUICE_EINVAL);
	assert_int_equal(msg_encode_req(&b,
	                     &(struct msg_req) { .op = MSG_OP_SCHED_CTL,
	                         .sched = { .name = S(""), .action = 1 } }),
	    SLUICE_EINVAL);
	buf_fini(&b);
}

/* if_newer (flag 0x04) is a version of at least 1 after the payload, and
 * only with replace: else EINVAL, for a put the request, for a batch item
 * that item alone. */
static void
test_if_newer_needs_replace_and_a_version(void **state)
{
	struct msg_put item = { .tube = S("rows"),
		.key = S("k"),
		.replace = true,
		.if_newer = 5,
		.payload = S("v") };
	struct msg_put p;
	struct msg_req d;
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_req(&b, &(struct msg_req) { .op = MSG_OP_PUT, .put = item });
	assert_int_equal(decode_req_bytes(b.data, b.len), 0);
	b.data[3] = 0x04; /* no replace */
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	b.data[3] = 0x05;
	memset(b.data + b.len - 8, 0, 8); /* version 0 */
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	assert_int_equal(decode_req_bytes(b.data, b.len - 8), SLUICE_ETRUNC);

	/* nor does the encoder write them */
	buf_reset(&b);
	item.replace = false;
	assert_int_equal(
	    msg_encode_req(
	        &b, &(struct msg_req) { .op = MSG_OP_PUT, .put = item }),
	    SLUICE_EINVAL);

	buf_reset(&b);
	item.replace = true;
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT_BATCH,
	        .put_batch = { .n = 1, .items = &item } });
	memset(b.data + b.len - 8, 0, 8);
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
	assert_true(msg_next_put(&d.put_batch.it, &p));
	assert_int_equal(p.error, SLUICE_EINVAL);
	buf_fini(&b);
}

/* The deduplication modes (flags 0x80 debounce, 0x40 throttle): a u64
 * window each after the version, in that order, at least 1: else EINVAL,
 * for a put the request, for a batch item that item alone; a put result's
 * created byte 3 is throttled, 4 is EPROTO. The rest (a key, one mode at
 * a time) is the server's to check, so both decode. */
static void
test_put_modes(void **state)
{
	struct msg_put item = { .tube = S("hooks"),
		.key = S("k"),
		.debounce = 500,
		.throttle = 60000,
		.payload = S("v") };
	struct msg_put p;
	struct msg_req d;
	struct msg_rep r;
	struct buf b;

	(void)state;
	buf_init(&b);
	encode_req(&b, &(struct msg_req) { .op = MSG_OP_PUT, .put = item });
	assert_int_equal(b.data[3], 0xc0);
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
	assert_true(d.put.debounce == 500 && d.put.throttle == 60000);
	assert_int_equal(decode_req_bytes(b.data, b.len - 8), SLUICE_ETRUNC);
	memset(b.data + b.len - 8, 0, 8); /* throttle 0 */
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	b.data[3] = 0x80; /* the 8 bytes are left over */
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EPROTO);

	buf_reset(&b);
	item.throttle = 0;
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT_BATCH,
	        .put_batch = { .n = 1, .items = &item } });
	memset(b.data + b.len - 8, 0, 8); /* debounce 0 */
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
	assert_true(msg_next_put(&d.put_batch.it, &p));
	assert_int_equal(p.error, SLUICE_EINVAL);

	encode_rep(&b,
	    &(struct msg_rep) {
	        .op = MSG_OP_PUT, .put = { .throttled = true, .id = 7 } });
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &r), 0);
	assert_true(r.put.throttled && !r.put.created && !r.put.stale);
	b.data[8] = 4;
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &r), SLUICE_EPROTO);
	buf_fini(&b);
}

/* tube_set: unknown bits and a lost_lease byte over 1 are EPROTO; a bit
 * both set and unset, or a dead letter present without its bit (or the
 * reverse), EINVAL; a bad dead-letter name ETUBE. */
static void
test_tube_set_errors(void **state)
{
	struct msg_req q = { .op = MSG_OP_TUBE_SET,
		.tube_set = { .tube = S("t"), .conf = A_CONF } };
	struct msg_req d;
	struct buf b;
	size_t at;

	(void)state;
	buf_init(&b);
	encode_req(&b, &q);
	at = MSG_REQ_HDR + 2 + 1; /* tube "t": the unset byte */
	b.data[at] = 0x40;
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &d), SLUICE_EPROTO);
	b.data[at] = MSG_TS_TTR; /* also in set */
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &d), SLUICE_EINVAL);
	b.data[at] = 0;
	b.data[at + 1] = MSG_TS_ALL & ~MSG_TS_DEAD_LETTER; /* "dead" left */
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &d), SLUICE_EINVAL);
	b.data[at + 1] = MSG_TS_ALL;
	b.data[at + 2 + 8 + 4 + 8 * 3] = 2; /* lost_lease */
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &d), SLUICE_EPROTO);
	b.data[at + 2 + 8 + 4 + 8 * 3] = 0;
	b.data[b.len - 1] = ' '; /* "dea " */
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), SLUICE_ETUBE);
	/* the encoder refuses what the decoder would */
	q.tube_set.unset = MSG_TS_TTR;
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	q.tube_set.unset = 0;
	q.tube_set.conf.dead_letter = S("");
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	buf_fini(&b);
}

/* A batch item that breaks a limit of its own (tube, key, replace without
 * a key, payload) is read whole and marked, so the server refuses it
 * alone; what breaks the message refuses the request. */
static void
test_batch_items_are_refused_alone(void **state)
{
	static const int want[] = { 0, SLUICE_ETUBE, SLUICE_EKEY, SLUICE_EINVAL,
		SLUICE_ETUBE, 0 };
	const struct msg_limits lim = { 0, 8 }; /* payloads up to 8 bytes */
	struct msg_put items[3], p;
	char tube[300];
	struct msg_req d;
	struct buf b;
	uint32_t k = 0;

	(void)state;
	buf_init(&b);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT_BATCH,
	        .put_batch = { .n = N(bad_items), .items = bad_items } });
	assert_int_equal(msg_decode_req(b.data, b.len, &lim, &d), 0);
	while (msg_next_put(&d.put_batch.it, &p)) {
		/* "also fine" is 9 bytes: over this limit of 8 */
		int w = k == 5 ? SLUICE_ETOOBIG : want[k];

		assert_int_equal(p.error, w);
		k++;
	}
	assert_int_equal(k, N(bad_items));

	/* a tube of 300 bytes, all there: that item alone */
	memset(tube, 't', sizeof(tube));
	memset(items, 0, sizeof(items));
	items[0] = (struct msg_put) { .tube = S("a"), .payload = S("1") };
	items[1] = (struct msg_put) { .tube = { tube, sizeof(tube) },
		.payload = S("2") };
	items[2] = (struct msg_put) { .tube = S("a"), .payload = S("3") };
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_PUT_BATCH,
	        .put_batch = { .n = 3, .items = items } });
	assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
	k = 0;
	while (msg_next_put(&d.put_batch.it, &p))
		assert_int_equal(p.error, k++ == 1 ? SLUICE_ETUBE : 0);
	/* cut inside the long tube: its length is over the limit and its
	 * bytes are missing, so the request is refused for the limit */
	assert_int_equal(msg_decode_req(b.data, 60, NULL, &d), SLUICE_ETUBE);
	/* bad flag bits in an item break the message */
	b.data[MSG_REQ_HDR + 4] = 0x40;
	assert_int_equal(
	    msg_decode_req(b.data, b.len, NULL, &d), SLUICE_EPROTO);

	/* a payload over the limit with its bytes missing: the request */
	buf_reset(&b);
	buf_put_u8(&b, MSG_MAGIC);
	buf_put_u8(&b, MSG_VERSION);
	buf_put_u8(&b, MSG_OP_PUT_BATCH);
	buf_put_u8(&b, 0);
	buf_put_u32(&b, 1);
	buf_put_u8(&b, 0);
	buf_put_str16(&b, "a", 1);
	buf_put_u32(&b, 0);
	buf_put_u64(&b, 0);
	buf_put_u64(&b, 0);
	buf_put_u32(&b, 0);
	buf_put_u64(&b, 0);
	buf_put_str16(&b, "", 0);
	buf_put_u32(&b, 100);
	buf_put(&b, "0123456789", 10);
	assert_int_equal(
	    msg_decode_req(b.data, b.len, &lim, &d), SLUICE_ETOOBIG);

	/* reply flags: only those the op defines */
	encode_rep(&b, &reps[0]); /* a put */
	b.data[3] = 0x01;
	assert_int_equal(
	    msg_decode_rep(b.data, b.len, NULL, &(struct msg_rep) { 0 }),
	    SLUICE_EPROTO);
	buf_fini(&b);
}

/* switchover names a member: 1-64 bytes without a NUL, else EINVAL (a
 * length over 64 even with its bytes missing); its flags byte is 0. */
static void
test_switchover_node_limits(void **state)
{
	char big[MSG_NODE_MAX + 1];
	struct msg_req q = { .op = MSG_OP_SWITCHOVER };
	struct buf b;

	(void)state;
	memset(big, 'n', sizeof(big));
	buf_init(&b);
	q.switchover.node = (struct msg_str) { big, MSG_NODE_MAX };
	encode_req(&b, &q);
	assert_int_equal(decode_req_bytes(b.data, b.len), 0);
	b.data[3] = 0x01;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EPROTO);
	/* the encoder refuses what the decoder does, leaving nothing */
	buf_reset(&b);
	q.switchover.node = (struct msg_str) { big, MSG_NODE_MAX + 1 };
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	q.switchover.node = S("");
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	q.switchover.node = S("a\0b");
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	assert_int_equal(b.len, 0);
	/* by hand: too long, too long and cut, empty, a NUL */
	buf_put(&b, "\x53\x01\x23\x00", 4);
	buf_put_str16(&b, big, MSG_NODE_MAX + 1);
	buf_put_u32(&b, 0);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	assert_int_equal(decode_req_bytes(b.data, 8), SLUICE_EINVAL);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x23\x00", 4);
	buf_put_str16(&b, "", 0);
	buf_put_u32(&b, 0);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	buf_reset(&b);
	buf_put(&b, "\x53\x01\x23\x00", 4);
	buf_put_str16(&b, "a\0", 2);
	buf_put_u32(&b, 0);
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	/* cluster takes no flags and no body */
	encode_req(&b, &(struct msg_req) { .op = MSG_OP_CLUSTER });
	assert_int_equal(b.len, MSG_REQ_HDR);
	b.data[3] = 0x01;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EPROTO);
	buf_fini(&b);
}

static int
encode_cluster_rc(struct msg_cluster c)
{
	struct buf b;
	int rc;

	buf_init(&b);
	rc = msg_encode_rep(
	    &b, &(struct msg_rep) { .op = MSG_OP_CLUSTER, .cluster = c });
	if (rc != 0)
		assert_int_equal(b.len, 0);
	buf_fini(&b);
	return rc;
}

static int
decode_rep_bytes(const void *p, size_t len)
{
	struct msg_rep m;

	return msg_decode_rep(p, len, NULL, &m);
}

/* wait's limits: id 0 and a wait over an hour are EINVAL both ways; a
 * reply round-trips (the cancelled flag too), a state that does not fit
 * `final` is refused (encoder EINVAL, decoder EPROTO); cancel has
 * delete_batch's count limits. */
static void
test_wait_and_cancel_limits(void **state)
{
	uint8_t bytes[64];
	struct buf b;
	struct msg_rep m;
	struct msg_req q;
	uint64_t ids[1] = { 7 };

	(void)state;
	buf_init(&b);
	q = (struct msg_req) { .op = MSG_OP_WAIT, .wait = { .id = 0 } };
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	q.wait.id = 1;
	q.wait.wait = MSG_WAIT_MAX + 1;
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	q.wait.wait = MSG_WAIT_MAX;
	encode_req(&b, &q);
	assert_int_equal(decode_req_bytes(b.data, b.len), 0);
	memcpy(bytes, b.data, b.len);
	memset(bytes + 4, 0, 8); /* id 0 */
	assert_int_equal(decode_req_bytes(bytes, b.len), SLUICE_EINVAL);
	assert_int_equal(decode_req_bytes(b.data, b.len - 1), SLUICE_ETRUNC);
	m = (struct msg_rep) { .op = MSG_OP_WAIT,
		.result = { .id = 9,
		    .state = MSG_ST_TAKEN,
		    .cancelled = true,
		    .tube = S("t") } };
	encode_rep(&b, &m);
	memset(&m, 0, sizeof(m));
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &m), 0);
	assert_true(m.result.cancelled && !m.result.final);
	assert_int_equal(m.result.state, MSG_ST_TAKEN);
	m.result.final = true; /* taken is not an end */
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_EINVAL);
	m.result.state = MSG_END_CANCELLED;
	m.result.final = false; /* cancelled is one */
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_EINVAL);
	m.result.final = true;
	encode_rep(&b, &m);
	b.data[14] = MSG_ST_TAKEN; /* the state byte */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EPROTO);
	q = (struct msg_req) { .op = MSG_OP_CANCEL,
		.delete_batch = { .n = 0, .ids = ids } };
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	q.delete_batch.n = MSG_BATCH_MAX + 1;
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_ELIMIT);
	buf_fini(&b);
}

/* The cluster reply's limits, each refused by the encoder and the decoder
 * alike: names (EINVAL), URLs and the etcd text (ELIMIT), the count
 * (ELIMIT), a role or flag bit not defined (encoder EINVAL, decoder
 * EPROTO). */
static void
test_cluster_reply_limits(void **state)
{
	static struct msg_member many[MSG_CLUSTER_MEMBERS_MAX + 1];
	const struct msg_cluster ok = { .cluster = S("prod"),
		.node = S("node-b"),
		.n = 1,
		.members = members };
	char big[MSG_TEXT_MAX + 1];
	struct msg_member mb = members[1];
	struct msg_cluster c;
	struct buf b;
	size_t at;

	(void)state;
	memset(big, 'x', sizeof(big));
	for (size_t i = 0; i < N(many); i++)
		many[i] = members[3];
	assert_int_equal(encode_cluster_rc(ok), 0);
	c = ok;
	c.cluster = S("");
	assert_int_equal(encode_cluster_rc(c), SLUICE_EINVAL);
	c = ok;
	c.node = (struct msg_str) { big, MSG_NODE_MAX + 1 };
	assert_int_equal(encode_cluster_rc(c), SLUICE_EINVAL);
	c = ok;
	c.leader = (struct msg_str) { big, MSG_NODE_MAX + 1 };
	assert_int_equal(encode_cluster_rc(c), SLUICE_EINVAL);
	c.leader = (struct msg_str) { big, MSG_NODE_MAX };
	assert_int_equal(encode_cluster_rc(c), 0);
	c = ok;
	c.etcd_error = (struct msg_str) { big, MSG_TEXT_MAX + 1 };
	assert_int_equal(encode_cluster_rc(c), SLUICE_ELIMIT);
	c.etcd_error = (struct msg_str) { big, MSG_TEXT_MAX };
	assert_int_equal(encode_cluster_rc(c), 0);
	c = ok;
	c.n = N(many);
	c.members = many;
	assert_int_equal(encode_cluster_rc(c), SLUICE_ELIMIT);
	c.n = MSG_CLUSTER_MEMBERS_MAX;
	assert_int_equal(encode_cluster_rc(c), 0);
	c = ok;
	c.members = &mb;
	mb.client = (struct msg_str) { big, MSG_URL_MAX + 1 };
	assert_int_equal(encode_cluster_rc(c), SLUICE_ELIMIT);
	mb = members[1];
	mb.repl = (struct msg_str) { big, MSG_URL_MAX + 1 };
	assert_int_equal(encode_cluster_rc(c), SLUICE_ELIMIT);
	mb = members[1];
	mb.name = S("");
	assert_int_equal(encode_cluster_rc(c), SLUICE_EINVAL);
	mb = members[1];
	mb.role = MSG_NODE_ROLE_END_;
	assert_int_equal(encode_cluster_rc(c), SLUICE_EINVAL);
	mb = members[1];
	mb.flags = 0x04;
	assert_int_equal(encode_cluster_rc(c), SLUICE_EINVAL);
	mb = members[1];

	/* the decoder: a one-member reply changed byte by byte */
	buf_init(&b);
	encode_rep(
	    &b, &(struct msg_rep) { .op = MSG_OP_CLUSTER, .cluster = c });
	assert_int_equal(decode_rep_bytes(b.data, b.len), 0);
	/* cluster "prod", node "node-b", leader "", ttl, etcd_error "" */
	at = MSG_REP_HDR + 6 + 8 + 2 + 4 + 2;
	assert_int_equal(le_load_u32(b.data + at), 1);
	le_store_u32(b.data + at, MSG_CLUSTER_MEMBERS_MAX + 1);
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_ELIMIT);
	le_store_u32(b.data + at, 1);
	at += 4; /* the member: name "node-b", client, repl (19 bytes each) */
	b.data[at + 8 + 21 + 21] = MSG_NODE_ROLE_END_;
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EPROTO);
	b.data[at + 8 + 21 + 21] = 0xff;
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EPROTO);
	b.data[at + 8 + 21 + 21] = MSG_NODE_FENCED;
	b.data[at + 8 + 21 + 21 + 1] = 0x80;
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EPROTO);
	b.data[at + 8 + 21 + 21 + 1] = MSG_MEMBER_ALL;
	assert_int_equal(decode_rep_bytes(b.data, b.len), 0);
	b.data[at + 2] = '\0'; /* a NUL in the name */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EINVAL);
	b.data[at + 2] = 'n';
	le_store_u16(b.data + at, 0); /* an empty name */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EINVAL);
	le_store_u16(b.data + at, MSG_NODE_MAX + 1); /* over the limit */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EINVAL);
	le_store_u16(b.data + at, 6);
	le_store_u16(b.data + at + 8, MSG_URL_MAX + 1); /* client URL */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_ELIMIT);
	le_store_u16(b.data + at + 8, 19);
	le_store_u16(b.data + at + 8 + 21, MSG_URL_MAX + 1); /* repl URL */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_ELIMIT);
	le_store_u16(b.data + at + 8 + 21, 19);
	assert_int_equal(decode_rep_bytes(b.data, b.len), 0);
	/* the head's names and text */
	le_store_u16(b.data + MSG_REP_HDR, 0); /* cluster "" */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EINVAL);
	le_store_u16(b.data + MSG_REP_HDR, 4);
	le_store_u16(b.data + MSG_REP_HDR + 6, 0); /* node "" */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EINVAL);
	le_store_u16(b.data + MSG_REP_HDR + 6, 6);
	le_store_u16(b.data + MSG_REP_HDR + 14, MSG_NODE_MAX + 1); /* leader */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EINVAL);
	le_store_u16(b.data + MSG_REP_HDR + 14, 0);
	le_store_u16(b.data + MSG_REP_HDR + 20, MSG_TEXT_MAX + 1); /* etcd */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_ELIMIT);
	le_store_u16(b.data + MSG_REP_HDR + 20, 0);
	assert_int_equal(decode_rep_bytes(b.data, b.len), 0);
	b.data[3] = 0x01; /* no reply flags */
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_EPROTO);

	/* switchover's reply: the leader URL up to 512 bytes */
	buf_reset(&b);
	assert_int_equal(
	    msg_encode_rep(&b,
	        &(struct msg_rep) { .op = MSG_OP_SWITCHOVER,
	            .switchover = { .leader = { big, MSG_URL_MAX + 1 } } }),
	    SLUICE_ELIMIT);
	assert_int_equal(b.len, 0);
	buf_put(&b, "\x53\x01\x23\x00\x00\x00", 6);
	buf_put_str16(&b, big, MSG_URL_MAX + 1);
	buf_put_u64(&b, 4);
	assert_int_equal(decode_rep_bytes(b.data, b.len), SLUICE_ELIMIT);
	buf_fini(&b);
}

/* ---- the fuzz seed corpus --------------------------------------------------
 */

static int
write_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "wb")) == NULL)
		return -1;
	fwrite(p, 1, len, f);
	return fclose(f);
}

/* Seeds: every sample request (q*) and reply (r*), and broken ones (x*):
 * cut short, bad version, unknown op, trailing byte, huge lengths. The
 * fuzz target tells requests from replies by the first byte of the file
 * (see fuzz_msg.c), which these files carry. */
static int
write_corpus(const char *dir)
{
	struct buf b;
	char name[64];
	int rc = 0;

	buf_init(&b);
	for (uint32_t i = 0; i < N(reqs) && rc == 0; i++) {
		buf_reset(&b);
		buf_put_u8(&b, 'q');
		msg_encode_req(&b, &reqs[i]);
		snprintf(
		    name, sizeof(name), "q%02u-%s", i, msg_op_name(reqs[i].op));
		rc = write_file(dir, name, b.data, b.len);
		if (i % 4 == 0) { /* cut in the middle */
			snprintf(name, sizeof(name), "x%02u-cut", i);
			rc |= write_file(dir, name, b.data, b.len / 2 + 1);
		}
	}
	for (uint32_t i = 0; i < N(reps) && rc == 0; i++) {
		buf_reset(&b);
		buf_put_u8(&b, 'r');
		msg_encode_rep(&b, &reps[i]);
		snprintf(name, sizeof(name), "r%02u-%s", i,
		    msg_op_name(reps[i].op) ? msg_op_name(reps[i].op) : "err");
		rc = write_file(dir, name, b.data, b.len);
	}
	rc |= write_file(dir, "x-version", "q\x53\x02\x11\x00\x00\x00", 7);
	rc |= write_file(dir, "x-unknown-op", "q\x53\x01\x7f\x00", 5);
	rc |= write_file(dir, "x-magic", "rHTTP/1.1 200", 13);
	rc |= write_file(dir, "x-trailing", "q\x53\x01\x15\x00\x00", 6);
	rc |= write_file(dir, "x-huge-payload",
	    "q\x53\x01\x01\x00\x01\x00t\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"
	    "\0\0\0\0\0\0\0\0\0\0\xff\xff\xff\x7f",
	    46);
	rc |= write_file(dir, "x-many-tasks",
	    "r\x53\x01\x03\x00\x00\x00"
	    "\xe8\x03\x00\x00\xff\xff\x00\x00",
	    15);
	rc |= write_file(dir, "x-empty", "", 0);
	buf_fini(&b);
	return rc ? 1 : 0;
}

/* A kick of an error group: flag 0x02 and the text after n; a dry run
 * (0x80 for a kick, 0x40 for a delete_where); a text with delayed, or the
 * flag with an empty text, refused both ways. */
static void
test_kick_error_and_dry_runs(void **state)
{
	struct buf b;
	struct msg_req q = { .op = MSG_OP_KICK,
		.kick = {
		    .tube = S("m"), .n = 3, .error = S("x"), .dry = true } };

	(void)state;
	buf_init(&b);
	encode_req(&b, &q);
	assert_hex(&b, "53 01 09 82 01 00 6d 03 00 00 00 01 00 78");
	/* the flag says a text follows: an empty one is refused */
	b.data[b.len - 3] = 0;
	b.len -= 1;
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	/* an error group's tasks are buried: not with delayed */
	q.kick.delayed = true;
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_KICK,
	        .kick = { .tube = S("m"), .n = 3, .error = S("x") } });
	b.data[3] |= 0x01; /* KICK_F_DELAYED */
	assert_int_equal(decode_req_bytes(b.data, b.len), SLUICE_EINVAL);
	encode_req(&b,
	    &(struct msg_req) { .op = MSG_OP_DELETE_WHERE,
	        .where = { .tube = S("m"),
	            .state = MSG_ST_BURIED,
	            .older = 1,
	            .dry = true } });
	assert_hex(&b, "53 01 1d 40 01 00 6d 04 01 00 00 00 00 00 00 00");
	{
		struct msg_req d;

		assert_int_equal(msg_decode_req(b.data, b.len, NULL, &d), 0);
		assert_true(d.where.dry);
	}
	buf_fini(&b);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_request_round_trips),
		cmocka_unit_test(test_kick_error_and_dry_runs),
		cmocka_unit_test(test_every_reply_round_trips),
		cmocka_unit_test(test_decode_then_encode_gives_the_same_bytes),
		cmocka_unit_test(test_truncated_at_every_length_is_etrunc),
		cmocka_unit_test(test_a_batch_walked_whole_reads_item_by_item),
		cmocka_unit_test(test_trailing_bytes_are_eproto),
		cmocka_unit_test(test_bad_header_errors),
		cmocka_unit_test(test_encoder_checks_limits),
		cmocka_unit_test(test_decoder_names_each_limit),
		cmocka_unit_test(test_task_record_skips_unknown_tail),
		cmocka_unit_test(test_task_record_holder_is_optional),
		cmocka_unit_test(test_error_replies),
		cmocka_unit_test(test_mutations_never_crash),
		cmocka_unit_test(test_idempotent_requests),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_doc_examples),
		cmocka_unit_test(test_doc_examples_schedules),
		cmocka_unit_test(test_doc_examples_batches),
		cmocka_unit_test(test_batch_list_and_peek_batch),
		cmocka_unit_test(test_tube_set_errors),
		cmocka_unit_test(test_batch_items_are_refused_alone),
		cmocka_unit_test(test_if_newer_needs_replace_and_a_version),
		cmocka_unit_test(test_put_modes),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_group_op),
		cmocka_unit_test(test_switchover_node_limits),
		cmocka_unit_test(test_cluster_reply_limits),
		cmocka_unit_test(test_history_limits),
		cmocka_unit_test(test_groups_listing_limits),
		cmocka_unit_test(test_wait_and_cancel_limits),
	};

	if (argc == 3 && strcmp(argv[1], "--corpus") == 0)
		return write_corpus(argv[2]);
	return cmocka_run_group_tests_name("msg", tests, NULL, NULL);
}
