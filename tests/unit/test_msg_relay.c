/* A message decoded and sent on (proto/msg*.c, proto/replmsg.c): every
 * message that carries a list (a request's items, ids, tubes, pairs or
 * tasks; a reply's results, tasks, tube counts and their counters, error
 * groups, hours, members, groups, batches, schedules, the map's entries
 * and clusters and their members, a task's parents and children, a put's
 * parents, the history's counts, a move's tasks and results) is encoded,
 * decoded, and its decoded form, whose lists are iterators and not arrays,
 * encoded again: the same bytes, where the encoders used to read the
 * arrays a decoded message does not have. A built message missing its
 * array is refused. Replies whose flags alone say their shape (a hold of
 * no task, move_in of none) keep it.
 *
 * Run with `--corpus DIR` it writes these messages as seeds of the fuzz
 * target fuzz_msg (tests/fuzz/corpus/msg: q-relay-*, r-relay-*). */
#include <stdio.h>
#include <string.h>

#include "t_lib.h"
#include "proto/msg.h"
#include "proto/replmsg.h"
#include "sluice.h"
#include "util/buf.h"

#define S(lit) ((struct msg_str) { lit, sizeof(lit) - 1 })
#define N(a)   ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* ---- samples: a message of every list ----------------------------------- */

static const uint64_t after_ids[] = { 5, 6 };
static const struct msg_str after_keys[] = { S("k-1"), S("k-2") };
/* a put after parents, by id and by key */
#define PUT_AFTER                                                              \
	{                                                                      \
		.tube = S("mail"), .key = S("k-3"), .payload = S("bb"),        \
		.ext = true, .on_parent_failure = MSG_PARENT_CANCEL,           \
		.nafter = N(after_ids), .after = after_ids,                    \
		.nafter_keys = N(after_keys), .after_keys = after_keys         \
	}
static const struct msg_put put_items[] = {
	{ .tube = S("mail"), .priority = 1, .payload = S("a") },
	PUT_AFTER,
};
static const struct msg_str tubes[] = { S("a"), S("b.c"), S("x:y/z-1") };
static const struct msg_ack_item ack_items[] = { { 7, 1001 }, { 8, 1002 } };
static const uint64_t ids[] = { 7, 9, UINT64_MAX };
static const uint64_t leases[] = { 70, 90, 1 };

static const struct msg_parent parents[] = {
	{ 5, 1, S("done: 3 rows") },
	{ 6, 0, S("") },
};
static const uint64_t children[] = { 20, 21 };
/* a task with parents (one acked with a result) and children */
#define TASK_DEPS                                                              \
	{                                                                      \
		.id = 1, .lease = 100, .state = MSG_ST_TAKEN,                  \
		.priority = 1024, .attempts = 1, .ttr = 60000, .size = 5,      \
		.tube = S("emails"), .payload = S("hello"), .has_deps = true,  \
		.deps = {                                                      \
			.on_parent_failure = MSG_PARENT_CANCEL,                \
			.pending = 1,                                          \
			.nparents = N(parents),                                \
			.parents = parents,                                    \
			.results = true,                                       \
			.nchildren = 3,                                        \
			.nshown = N(children),                                 \
			.children = children                                   \
		}                                                              \
	}
static const struct msg_task tasks[] = {
	TASK_DEPS,
	{ .id = 2,
	    .state = MSG_ST_READY,
	    .size = 1,
	    .tube = S("x"),
	    .key = S("nightly"),
	    .payload = S("z") },
};

static const struct msg_put_res put_res[] = {
	{ .status = 0, .created = true, .id = 11 },
	{ .status = SLUICE_ETOOBIG, .message = S("payload too big") },
};
static const struct msg_item_res item_res[] = {
	{ .status = 0 },
	{ .status = SLUICE_ENOTFOUND, .message = S("no such task") },
};
static const struct msg_kv node_kvs[] = { { S("uptime_ms"), 12345 },
	{ S("followers"), 1 } };
static const struct msg_kv tube_kvs[] = { { S("puts"), 10 }, { S("acks"), 7 } };
static const struct msg_tube_stats tube_stats[] = {
	{ .name = S("emails"),
	    .ready = 1,
	    .more = { .n = N(tube_kvs), .kvs = tube_kvs },
	    .conf = { .set = MSG_TS_TTR, .ttr = 30000 } },
	{ .name = S("sms"), .paused_until = 1700000000000ULL },
};
static const struct msg_error_count error_ids[] = {
	{ S("timeout"), 12, 3, { 4, 9, 70 } },
	{ S(""), 1, 0, { 0 } },
};
static const struct msg_hour hours[] = {
	{ 1700002800000, 10, 2, 1, 1, { 10, 2500, 900, 210, 900 },
	    { 12, 120, 40, 7, 40 } },
	{ 1699999200000, 0, 0, 3, 0, { 0 }, { 0 } },
};
static const uint32_t history[] = { 1, 2, 3, 4, 5, 6 }; /* 2 kinds, 3 s */
static const struct msg_member members[] = {
	{ .name = S("node-a"),
	    .client = S("tcp://10.0.0.1:7711"),
	    .role = MSG_NODE_LEADER,
	    .flags = MSG_MEMBER_LEASE,
	    .epoch = 3 },
	{ .name = S("node-b"), .role = MSG_NODE_FOLLOWER, .lag_records = 4 },
};
static const struct msg_group_row group_rows[] = {
	{ S("emails"), S("tenant-7"), 1000, 2, 10000 },
	{ S("emails"), S(""), 5, 0, 500 },
};
static const struct msg_batch batches[] = {
	{ .name = S("nightly"),
	    .total = 3,
	    .ready = 2,
	    .acked = 1,
	    .started_at = 1700000000000ULL,
	    .owed = 1,
	    .success_tube = S("done") },
	{ .name = S("old"),
	    .total = 1,
	    .acked = 1,
	    .closed = true,
	    .ended = true,
	    .fired = 1,
	    .complete_tube = S("after"),
	    .complete_id = 99 },
};
static const struct msg_sched scheds[] = {
	{ .name = S("hourly"),
	    .tube = S("reports"),
	    .cron = S("0 * * * *"),
	    .catch_up = MSG_CATCH_ONE,
	    .size = 2,
	    .payload = S("{}") },
	{ .name = S("nightly"),
	    .tube = S("x"),
	    .cron = S("0 3 * * *"),
	    .tz = S("Europe/Paris"),
	    .paused = true },
};
static const struct msg_str urls_a[] = { S("tcp://10.0.0.1:7711"),
	S("tcp://10.0.0.2:7711") };
static const struct msg_map_entry entries[] = {
	{ .prefix = S(""), .cluster = S("east") },
	{ .prefix = S("mail"),
	    .cluster = S("west"),
	    .ndraining = 1,
	    .draining = { S("east") } },
};
static const struct msg_map_cluster clusters[] = {
	{ .name = S("east"),
	    .leader = S("tcp://10.0.0.1:7711"),
	    .n = N(urls_a),
	    .members = urls_a },
	{ .name = S("west") },
};
static const struct msg_move_res move_res[] = { { 0, 11 },
	{ SLUICE_ETOOBIG, 0 } };
static const struct msg_move_res no_res[1];

static const struct msg_req reqs[] = {
	{ .op = MSG_OP_PUT_BATCH,
	    .put_batch = { .n = N(put_items), .items = put_items } },
	{ .op = MSG_OP_PUT, .put = PUT_AFTER },
	{ .op = MSG_OP_TAKE,
	    .take = { .max = 2, .ntubes = N(tubes), .tubes = tubes } },
	{ .op = MSG_OP_ACK_BATCH,
	    .ack_batch = { .n = N(ack_items), .items = ack_items } },
	{ .op = MSG_OP_DELETE_BATCH,
	    .delete_batch = { .n = N(ids), .ids = ids } },
	{ .op = MSG_OP_CANCEL, .delete_batch = { .n = N(ids), .ids = ids } },
	{ .op = MSG_OP_MOVE_OUT,
	    .move = { .kind = MSG_MOVE_DROP,
	        .tube = S("mv"),
	        .n = N(ids),
	        .ids = ids,
	        .leases = leases } },
	{ .op = MSG_OP_MOVE_IN,
	    .move = { .tube = S("emails"),
	        .source = S("east"),
	        .n = N(tasks),
	        .tasks = tasks } },
};

static const struct msg_rep reps[] = {
	{ .op = MSG_OP_PUT_BATCH,
	    .put_batch = { .n = N(put_res),
	        .messages = true,
	        .items = put_res } },
	{ .op = MSG_OP_ACK_BATCH,
	    .batch = { .n = N(item_res),
	        .messages = true,
	        .items = item_res } },
	{ .op = MSG_OP_CANCEL,
	    .batch = { .n = N(item_res), .items = item_res } },
	{ .op = MSG_OP_TAKE, .tasks = { .n = N(tasks), .tasks = tasks } },
	{ .op = MSG_OP_LIST, .tasks = { .n = N(tasks), .tasks = tasks } },
	{ .op = MSG_OP_PEEK, .task = TASK_DEPS },
	{ .op = MSG_OP_STATS,
	    .stats = { .role = MSG_ROLE_LEADER,
	        .totals = { .more = { .n = N(tube_kvs), .kvs = tube_kvs } },
	        .more = { .n = N(node_kvs), .kvs = node_kvs },
	        .settings = true,
	        .ntubes = N(tube_stats),
	        .tubes = tube_stats } },
	{ .op = MSG_OP_ERRORS,
	    .errors = { .ids = true, .n = N(error_ids), .errors = error_ids } },
	{ .op = MSG_OP_STATS_HOURLY,
	    .hours = { .n = N(hours), .hours = hours } },
	{ .op = MSG_OP_HISTORY,
	    .history = { .start = 1700000000000ULL,
	        .step = 1000,
	        .kinds = 2,
	        .n = 3,
	        .values = history } },
	{ .op = MSG_OP_CLUSTER,
	    .cluster = { .cluster = S("east"),
	        .node = S("node-a"),
	        .leader = S("node-a"),
	        .n = N(members),
	        .members = members } },
	{ .op = MSG_OP_GROUPS,
	    .groups = { .total = 9, .n = N(group_rows), .rows = group_rows } },
	{ .op = MSG_OP_BATCH_SHOW,
	    .batch_info = { .list = true,
	        .total = 5,
	        .n = N(batches),
	        .v = batches } },
	{ .op = MSG_OP_SCHED_LIST, .scheds = { .n = N(scheds), .v = scheds } },
	{ .op = MSG_OP_MAP,
	    .map = { .revision = 7,
	        .cluster = S("east"),
	        .n = N(entries),
	        .entries = entries,
	        .nclusters = N(clusters),
	        .clusters = clusters } },
	{ .op = MSG_OP_MOVE_OUT,
	    .move = { .ntasks = N(tasks), .tasks = tasks } },
	{ .op = MSG_OP_MOVE_IN, .move = { .n = N(move_res), .res = move_res } },
	{ .op = MSG_OP_MOVE_IN, .move = { .n = 0, .res = no_res } },
	{ .op = MSG_OP_MOVE_OUT, .move = { .n = 3 } },
};

/* ---- the checks ---------------------------------------------------------- */

/* `a` decodes, and its decoded form, sent on as it is, encodes to `a`. */
static void
assert_req_relays(const struct buf *a, struct buf *b)
{
	struct msg_req d;

	assert_int_equal(msg_decode_req(a->data, a->len, NULL, &d), 0);
	buf_reset(b);
	assert_int_equal(msg_encode_req(b, &d), 0);
	assert_int_equal(b->len, a->len);
	assert_memory_equal(b->data, a->data, a->len);
}

static void
assert_rep_relays(const struct buf *a, struct buf *b)
{
	struct msg_rep d;

	assert_int_equal(msg_decode_rep(a->data, a->len, NULL, &d), 0);
	buf_reset(b);
	assert_int_equal(msg_encode_rep(b, &d), 0);
	assert_int_equal(b->len, a->len);
	assert_memory_equal(b->data, a->data, a->len);
}

static void
test_decoded_requests_encode_as_sent(void **state)
{
	struct buf a, b;

	(void)state;
	buf_init(&a);
	buf_init(&b);
	for (uint32_t i = 0; i < N(reqs); i++) {
		buf_reset(&a);
		assert_int_equal(msg_encode_req(&a, &reqs[i]), 0);
		assert_req_relays(&a, &b);
	}
	buf_fini(&a);
	buf_fini(&b);
}

static void
test_decoded_replies_encode_as_sent(void **state)
{
	struct buf a, b;

	(void)state;
	buf_init(&a);
	buf_init(&b);
	for (uint32_t i = 0; i < N(reps); i++) {
		buf_reset(&a);
		assert_int_equal(msg_encode_rep(&a, &reps[i]), 0);
		assert_rep_relays(&a, &b);
	}
	buf_fini(&a);
	buf_fini(&b);
}

/* A decoded take's tasks, read one by one and sent on one by one, each
 * with its parents and children, as a server passes tasks on. */
static void
test_decoded_task_with_deps_encodes_as_sent(void **state)
{
	struct msg_rep d, one = { .op = MSG_OP_PEEK };
	struct buf a, b, c;

	(void)state;
	buf_init(&a);
	buf_init(&b);
	buf_init(&c);
	assert_int_equal(msg_encode_rep(&a, &reps[3]), 0);
	assert_int_equal(msg_decode_rep(a.data, a.len, NULL, &d), 0);
	assert_true(msg_next_task(&d.tasks.it, &one.task));
	assert_true(one.task.has_deps);
	assert_null(one.task.deps.parents);
	assert_int_equal(msg_encode_rep(&b, &one), 0);
	assert_int_equal(msg_encode_rep(&c, &reps[5]), 0);
	assert_int_equal(b.len, c.len);
	assert_memory_equal(b.data, c.data, c.len);
	buf_fini(&a);
	buf_fini(&b);
	buf_fini(&c);
}

/* A built message whose count says more than its array holds (none):
 * refused, not read from nowhere. */
static void
test_a_list_without_its_array_is_refused(void **state)
{
	struct msg_rep m = { .op = MSG_OP_BATCH_SHOW,
		.batch_info = { .list = true, .total = 2, .n = 2 } };
	struct msg_req q = { .op = MSG_OP_CANCEL, .delete_batch = { .n = 2 } };
	struct buf b;

	(void)state;
	buf_init(&b);
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_EINVAL);
	buf_reset(&b);
	m = (struct msg_rep) { .op = MSG_OP_TAKE, .tasks = { .n = 1 } };
	assert_int_equal(msg_encode_rep(&b, &m), SLUICE_EINVAL);
	buf_reset(&b);
	assert_int_equal(msg_encode_req(&b, &q), SLUICE_EINVAL);
	buf_fini(&b);
}

/* A hold of no task and a move_in of none say their shape by their
 * flags alone: the decoded reply keeps it. */
static void
test_empty_move_replies_keep_their_shape(void **state)
{
	struct msg_rep hold = { .op = MSG_OP_MOVE_OUT };
	struct msg_rep d;
	struct buf a, b;

	(void)state;
	buf_init(&a);
	buf_init(&b);
	assert_int_equal(msg_encode_rep(&a, &reps[N(reps) - 2]), 0);
	assert_int_equal(msg_decode_rep(a.data, a.len, NULL, &d), 0);
	assert_int_equal(d.move.shape, MSG_MOVE_REP_RES);
	assert_rep_relays(&a, &b);
	/* a hold's reply with tasks, then its decoded form's shape */
	buf_reset(&a);
	assert_int_equal(msg_encode_rep(&a, &reps[N(reps) - 4]), 0);
	assert_int_equal(msg_decode_rep(a.data, a.len, NULL, &d), 0);
	assert_int_equal(d.move.shape, MSG_MOVE_REP_TASKS);
	hold.move.shape = MSG_MOVE_REP_TASKS; /* as a decoded empty hold */
	buf_reset(&a);
	assert_int_equal(msg_encode_rep(&a, &hold), 0);
	assert_rep_relays(&a, &b);
	assert_int_equal(msg_decode_rep(a.data, a.len, NULL, &d), 0);
	assert_int_equal(d.move.shape, MSG_MOVE_REP_TASKS);
	assert_int_equal(d.move.ntasks, 0);
	buf_fini(&a);
	buf_fini(&b);
}

/* The replication's snapshot reply: its epoch history sent on. */
static void
test_decoded_snapshot_history_encodes_as_sent(void **state)
{
	static const struct replmsg_epoch hist[] = { { 1, 77, 0 },
		{ 2, 78, 1000 } };
	struct replmsg_snap_rep m = { .snap_lsn = 1000,
		.size = 3,
		.data = (const uint8_t *)"abc",
		.len = 3,
		.nhist = N(hist),
		.hist = hist },
	                        d;
	struct buf a, b;

	(void)state;
	buf_init(&a);
	buf_init(&b);
	assert_int_equal(replmsg_encode_snap_rep(&a, &m), 0);
	assert_int_equal(replmsg_decode_snap_rep(a.data, a.len, &d), 0);
	assert_null(d.hist);
	assert_int_equal(replmsg_encode_snap_rep(&b, &d), 0);
	assert_int_equal(b.len, a.len);
	assert_memory_equal(b.data, a.data, a.len);
	m.hist = NULL; /* built, without its history */
	buf_reset(&b);
	assert_int_equal(replmsg_encode_snap_rep(&b, &m), SLUICE_EINVAL);
	buf_fini(&a);
	buf_fini(&b);
}

/* ---- the fuzz seed corpus ------------------------------------------------ */

static int
write_seed(
    const char *dir, char kind, uint32_t i, uint8_t op, const struct buf *b)
{
	const char *name = msg_op_name(op);
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%c-relay-%02u-%s", dir, kind, i,
	    name != NULL ? name : "op");
	if ((f = fopen(path, "wb")) == NULL)
		return -1;
	fputc(kind, f); /* fuzz_msg: 'q' (odd) a request, 'r' a reply */
	fwrite(b->data, 1, b->len, f);
	return fclose(f);
}

static int
write_corpus(const char *dir)
{
	struct buf b;
	int rc = 0;

	buf_init(&b);
	for (uint32_t i = 0; i < N(reqs) && rc == 0; i++) {
		buf_reset(&b);
		rc = msg_encode_req(&b, &reqs[i]);
		rc = rc ? rc : write_seed(dir, 'q', i, reqs[i].op, &b);
	}
	for (uint32_t i = 0; i < N(reps) && rc == 0; i++) {
		buf_reset(&b);
		rc = msg_encode_rep(&b, &reps[i]);
		rc = rc ? rc : write_seed(dir, 'r', i, reps[i].op, &b);
	}
	buf_fini(&b);
	return rc ? 1 : 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decoded_requests_encode_as_sent),
		cmocka_unit_test(test_decoded_replies_encode_as_sent),
		cmocka_unit_test(test_decoded_task_with_deps_encodes_as_sent),
		cmocka_unit_test(test_a_list_without_its_array_is_refused),
		cmocka_unit_test(test_empty_move_replies_keep_their_shape),
		cmocka_unit_test(test_decoded_snapshot_history_encodes_as_sent),
	};

	if (argc == 3 && strcmp(argv[1], "--corpus") == 0)
		return write_corpus(argv[2]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
