/* The messages of a tube's move (proto/msg_move.c): move_out's hold,
 * drop, keys, live and keep, move_in's copies, placeholders, pend and
 * ready, move_end and their replies survive a round trip; bad
 * kinds, counts and an empty source are refused; every move op may be sent
 * again after a lost connection. */
#include <string.h>

#include "t_lib.h"
#include "proto/msg.h"
#include "sluice.h"
#include "util/buf.h"

static int
round_trip(const struct msg_req *in, struct msg_req *out, struct buf *b)
{
	int rc;

	buf_reset(b);
	if ((rc = msg_encode_req(b, in)) != 0)
		return rc;
	return msg_decode_req(b->data, b->len, NULL, out);
}

static void
test_requests(void **state)
{
	uint64_t ids[2] = { 7, 9 }, leases[2] = { 70, 90 }, id, lease;
	struct msg_task tasks[2], t;
	struct msg_req q, d;
	struct buf b;

	(void)state;
	buf_init(&b);
	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_MOVE_OUT;
	q.move.kind = MSG_MOVE_HOLD;
	q.move.tube = msg_cstr("mv");
	q.move.max = 500;
	assert_int_equal(round_trip(&q, &d, &b), 0);
	assert_int_equal(d.move.kind, MSG_MOVE_HOLD);
	assert_int_equal(d.move.max, 500);
	assert_int_equal(d.move.tube.len, 2);
	q.move.max = MSG_MOVE_MAX + 1;
	assert_int_equal(round_trip(&q, &d, &b), SLUICE_ELIMIT);
	q.move.kind = MSG_MOVE_DROP;
	q.move.n = 2;
	q.move.ids = ids;
	q.move.leases = leases;
	assert_int_equal(round_trip(&q, &d, &b), 0);
	assert_int_equal(d.move.n, 2);
	assert_true(msg_next_move_drop(&d.move.it, &id, &lease));
	assert_int_equal(id, 7);
	assert_int_equal(lease, 70);
	assert_true(msg_next_move_drop(&d.move.it, &id, &lease));
	assert_int_equal(id, 9);
	assert_false(msg_next_move_drop(&d.move.it, &id, &lease));
	q.move.kind = MSG_MOVE_KEYS;
	q.move.max = 300;
	q.move.after = 41;
	assert_int_equal(round_trip(&q, &d, &b), 0);
	assert_int_equal(d.move.kind, MSG_MOVE_KEYS);
	assert_int_equal(d.move.max, 300);
	assert_int_equal(d.move.after, 41);
	q.move.max = 0;
	assert_int_not_equal(round_trip(&q, &d, &b), 0);
	q.move.kind = MSG_MOVE_LIVE; /* the keys of live tasks: as keys */
	q.move.max = 200;
	assert_int_equal(round_trip(&q, &d, &b), 0);
	assert_int_equal(d.move.kind, MSG_MOVE_LIVE);
	assert_int_equal(d.move.max, 200);
	assert_int_equal(d.move.after, 41);
	q.move.kind = MSG_MOVE_KEEP; /* the tube alone */
	assert_int_equal(round_trip(&q, &d, &b), 0);
	assert_int_equal(d.move.kind, MSG_MOVE_KEEP);
	assert_int_equal(d.move.tube.len, 2);
	q.move.kind = 6;
	assert_int_equal(round_trip(&q, &d, &b), SLUICE_EINVAL);

	memset(tasks, 0, sizeof(tasks));
	for (int i = 0; i < 2; i++) {
		tasks[i].id = 100 + (uint64_t)i;
		tasks[i].state = i == 0 ? MSG_ST_READY : MSG_ST_BURIED;
		tasks[i].attempts = 3;
		tasks[i].ttr = 1000;
		tasks[i].tube = msg_cstr("mv");
		tasks[i].key = msg_cstr(i == 0 ? "k" : "");
		tasks[i].last_error = msg_cstr("boom");
		tasks[i].payload = msg_cstr("hello");
		tasks[i].size = 5;
		tasks[i].group = msg_cstr("g");
	}
	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_MOVE_IN;
	q.move.tube = msg_cstr("mv");
	q.move.source = msg_cstr("c1");
	q.move.n = 2;
	q.move.tasks = tasks;
	assert_int_equal(round_trip(&q, &d, &b), 0);
	assert_int_equal(d.move.n, 2);
	assert_int_equal(d.move.source.len, 2);
	assert_true(msg_next_task(&d.move.tasks_it, &t));
	assert_int_equal(t.id, 100);
	assert_int_equal(t.attempts, 3);
	assert_int_equal(t.key.len, 1);
	assert_int_equal(t.group.len, 1);
	assert_true(msg_next_task(&d.move.tasks_it, &t));
	assert_int_equal(t.state, MSG_ST_BURIED);
	/* placeholders: the kind in the header's flags, tasks as copies */
	q.move.kind = MSG_MOVE_IN_PLACE;
	assert_int_equal(round_trip(&q, &d, &b), 0);
	assert_int_equal(d.move.kind, MSG_MOVE_IN_PLACE);
	assert_int_equal(d.move.n, 2);
	/* pend and ready carry no task; two kinds at once are refused */
	q.move.kind = MSG_MOVE_IN_PEND;
	assert_int_equal(round_trip(&q, &d, &b), SLUICE_EINVAL);
	q.move.n = 0;
	assert_int_equal(round_trip(&q, &d, &b), 0);
	assert_int_equal(d.move.kind, MSG_MOVE_IN_PEND);
	assert_int_equal(d.move.n, 0);
	q.move.kind = MSG_MOVE_IN_READY;
	assert_int_equal(round_trip(&q, &d, &b), 0);
	assert_int_equal(d.move.kind, MSG_MOVE_IN_READY);
	q.move.kind = MSG_MOVE_IN_PEND | MSG_MOVE_IN_READY;
	assert_int_equal(round_trip(&q, &d, &b), SLUICE_EINVAL);
	q.move.kind = 0; /* copies: at least one */
	assert_int_equal(round_trip(&q, &d, &b), SLUICE_EINVAL);
	q.move.n = 2;
	/* a source is named (its alphabet is the queue's to check) */
	q.move.source = msg_cstr("");
	assert_int_equal(round_trip(&q, &d, &b), SLUICE_EINVAL);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_MOVE_END;
	q.move.tube = msg_cstr("mv");
	assert_int_equal(round_trip(&q, &d, &b), 0);
	q.move.tube = msg_cstr("");
	assert_int_not_equal(round_trip(&q, &d, &b), 0);
	for (uint8_t op = MSG_OP_MOVE_OUT; op <= MSG_OP_MOVE_END; op++)
		assert_true(msg_req_idempotent(&(struct msg_req) { .op = op }));
	assert_string_equal(msg_op_name(MSG_OP_MOVE_IN), "move_in");
	buf_fini(&b);
}

static void
test_replies(void **state)
{
	struct msg_move_res res[2] = { { 0, 11 }, { SLUICE_ETOOBIG, 0 } }, x;
	struct msg_task task, t;
	struct msg_rep r, d;
	struct buf b;

	(void)state;
	buf_init(&b);
	memset(&task, 0, sizeof(task));
	task.id = 5;
	task.lease = 77;
	task.state = MSG_ST_DELAYED;
	task.ttr = 1;
	task.tube = msg_cstr("mv");
	task.payload = msg_cstr("p");
	task.size = 1;
	memset(&r, 0, sizeof(r));
	r.op = MSG_OP_MOVE_OUT;
	r.move.ntasks = 1;
	r.move.tasks = &task;
	assert_int_equal(msg_encode_rep(&b, &r), 0);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &d), 0);
	assert_int_equal(d.move.ntasks, 1);
	assert_true(msg_next_task(&d.move.tasks_it, &t));
	assert_int_equal(t.lease, 77);
	assert_int_equal(t.state, MSG_ST_DELAYED);
	/* a hold that found nothing: a count of 0 */
	memset(&r, 0, sizeof(r));
	r.op = MSG_OP_MOVE_OUT;
	buf_reset(&b);
	assert_int_equal(msg_encode_rep(&b, &r), 0);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &d), 0);
	assert_int_equal(d.move.ntasks, 0);
	assert_int_equal(d.move.n, 0);
	memset(&r, 0, sizeof(r));
	r.op = MSG_OP_MOVE_IN;
	r.move.n = 2;
	r.move.res = res;
	buf_reset(&b);
	assert_int_equal(msg_encode_rep(&b, &r), 0);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &d), 0);
	assert_int_equal(d.move.n, 2);
	assert_true(msg_next_move_res(&d.move.it, &x));
	assert_int_equal(x.id, 11);
	assert_true(msg_next_move_res(&d.move.it, &x));
	assert_int_equal(x.status, SLUICE_ETOOBIG);
	assert_false(msg_next_move_res(&d.move.it, &x));
	memset(&r, 0, sizeof(r));
	r.op = MSG_OP_MOVE_END;
	r.move.n = 42;
	buf_reset(&b);
	assert_int_equal(msg_encode_rep(&b, &r), 0);
	assert_int_equal(msg_decode_rep(b.data, b.len, NULL, &d), 0);
	assert_int_equal(d.move.n, 42);
	buf_fini(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_replies),
	};

	return cmocka_run_group_tests_name("msg_move", tests, NULL, NULL);
}
