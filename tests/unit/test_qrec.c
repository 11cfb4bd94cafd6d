/* Tests of src/queue/qrec: every record type round-trips through its byte
 * encoding; truncated, padded, out-of-range and random bodies are refused
 * with SLUICE_ECORRUPT and never read out of bounds.
 *
 * `test_qrec --write-corpus DIR` writes the fuzz corpus of fuzz_qrec (see
 * tests/fuzz/fuzz_qrec.c for its format) instead of running the tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_lib.h"
#include "t_queue.h"

#define T0 1700000000000LL

/* Room for the samples (samples() checks that they fit). */
#define NSAMPLES 80

/* parents 3, 9, then 1: u64 little-endian */
static const uint8_t after[24] = { 3, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0,
	0, 1 };
static const char err[] = "connection refused";

/* Fields of the move records: tube "mail" in from cluster "c1", a key. */
#define FROM_C1 .source = "c1", .source_len = 2
#define MAIL    .tube = "mail", .tube_len = 4
#define KEY(k)  .key = (k), .key_len = sizeof(k) - 1

/* One sample of every type and outcome, in an order the tests below
 * name some of by index. */
static const struct qrec sample_tab[] = {
	{ .type = QREC_PUT,
	    .u.put = { 7, "emails", 6, "hello", 5, "k-1", 3, 1024, 60000, 5, T0,
	        0 } },
	/* no key, recurring, empty payload */
	{ .type = QREC_PUT,
	    .u.put = { 8, "a:b/c.d-e_f", 11, "", 0, NULL, 0, 0, 1, 0, T0 + 5,
	        3600000 } },
	{ .type = QREC_TAKE, .u.take = { 7, 42, true, 0 } },
	{ .type = QREC_ACK,
	    .u.end = { 7, 9, 0, QREC_DELETED, 0, 0, 600000, NULL, 0 } },
	{ .type = QREC_ACK,
	    .u.end = { 7, 9, 0, QREC_WAIT, 0, T0 + 1000, 0, NULL, 0 } },
	{ .type = QREC_ACK,
	    .u.end = { 7, 9, 0, QREC_MOVED, 0, 0, 0, "next", 4 } },
	{ .type = QREC_ACK,
	    .u.end = { 7, 9, 0, QREC_REPLACED, 0, 0, 0, NULL, 0 } },
	{ .type = QREC_RELEASE,
	    .u.end = { 7, 9, QREC_BY_TTR, QREC_WAIT, 3, T0 + 7, 0, NULL, 0 } },
	{ .type = QREC_RELEASE,
	    .u.end = { 7, 9, QREC_BY_SESSION, QREC_REPLACED, 0, 0, 0, NULL,
	        0 } },
	{ .type = QREC_FAIL,
	    .u.end = { 7, 9, 0, QREC_WAIT, 0, T0 + 2000, 0, err,
	        sizeof(err) - 1 } },
	{ .type = QREC_FAIL,
	    .u.end = { 7, 9, 0, QREC_BURIED, 0, 0, 0, err, 4 } },
	{ .type = QREC_BURY,
	    .u.end = { 7, 9, QREC_BY_RESTART, QREC_BURIED, 0, 0, 0, NULL, 0 } },
	/* an operator buries a waiting task */
	{ .type = QREC_BURY,
	    .u.end = { 7, 0, QREC_BY_CLIENT, QREC_BURIED, 0, 0, 0, NULL, 0 } },
	{ .type = QREC_TOUCH, .u.touch = { 7, 9 } },
	{ .type = QREC_KICK, .u.kick = { 7 } },
	{ .type = QREC_DELETE, .u.del = { 7, 600000 } },
	{ .type = QREC_FLUSH, .u.flush = { "emails", 6, 0 } },
	{ .type = QREC_REPLACE,
	    .u.replace = { 7, "v2", 2, 1, 500, 3, T0 + 9, 0, true } },
	{ .type = QREC_PAUSE, .u.pause = { "emails", 6, T0 + 60000 } },
	{ .type = QREC_TAKE_LEASE,
	    .u.take = { 7, 42, false, (3ull << 32) + 9 } },
	/* 20 */
	{ .type = QREC_UNTAKE,
	    .u.end = { 7, 9, QREC_BY_CLIENT, QREC_WAIT, 0, 0, 0, NULL, 0 } },
	{ .type = QREC_UNTAKE,
	    .u.end = { 7, 9, QREC_BY_CLIENT, QREC_REPLACED, 0, 0, 0, NULL,
	        0 } },
	/* 22: a lost lease, backed off */
	{ .type = QREC_SETBACK,
	    .u.end = { 7, 9, QREC_BY_TTR, QREC_WAIT, 3, T0 + 1000, 0,
	        "ttr expired after 60s", 21 } },
	/* an operator buries with a text */
	{ .type = QREC_SETBACK,
	    .u.end = { 7, 0, QREC_BY_CLIENT, QREC_BURIED, 0, 0, 0, err,
	        sizeof(err) - 1 } },
	/* a disconnect at max_attempts */
	{ .type = QREC_SETBACK,
	    .u.end = { 7, 9, QREC_BY_SESSION, QREC_BURIED, 0, 0, 0,
	        "worker disconnected (127.0.0.1:5432)", 36 } },
	{ .type = QREC_UPDATE,
	    .u.update = { 7, 5, 30000, 2, T0 + 50, false, NULL, 0 } },
	{ .type = QREC_UPDATE, .u.update = { 7, 0, 1, 0, T0, true, "new", 3 } },
	/* kept as done, with a result */
	{ .type = QREC_ACK,
	    .u.end = { 7, 9, 0, QREC_DONE, 0, 0, 600000, "sent", 4, 86400000,
	        1000000 } },
	/* done, no key, no result, no limit */
	{ .type = QREC_ACK,
	    .u.end = { 7, 9, 0, QREC_DONE, 0, 0, 0, NULL, 0, 1, 0 } },
	{ .type = QREC_DELETE_WHERE, .u.where = { "emails", 6, 5, T0 } },
	/* taken and buried, by updated_at */
	{ .type = QREC_DELETE_AGED,
	    .u.where = { "emails", 6, 0, T0,
	        QREC_STATE_BIT(3) | QREC_STATE_BIT(4), QREC_BY_UPDATED } },
	{ .type = QREC_PUT_V,
	    .u.put = { 9, "rows", 4, "r", 1, "row-7", 5, 1024, 60000, 0, T0, 0,
	        1700000000123ull } },
	{ .type = QREC_REPLACE_V,
	    .u.replace = { 9, "r2", 2, 1024, 60000, 0, T0 + 1, 0, true,
	        UINT64_MAX } },
	/* to the dead letter tube */
	{ .type = QREC_FAIL,
	    .u.end = { 7, 9, 0, QREC_MOVED, 0, 0, 0, err, 4, 0, 0, "dead",
	        4 } },
	/* a lost lease, to the dead letter tube */
	{ .type = QREC_BURY,
	    .u.end = { 7, 9, QREC_BY_TTR, QREC_MOVED, 0, 0, 0, NULL, 0, 0, 0,
	        "dead", 4 } },
	{ .type = QREC_TUBE_SET,
	    .u.tube_set = { "emails", 6,
	        { QREC_TS_ALL, 30000, 5, 100, 60000, 86400000, true, "dead",
	            4 } } },
	/* back to every default */
	{ .type = QREC_TUBE_SET, .u.tube_set = { "emails", 6, { 0 } } },
	{ .type = QREC_TUBE_DELETE, .u.tube_delete = { "emails", 6, true } },
	/* a lost lease at max_attempts, to the dead letter tube */
	{ .type = QREC_SETBACK,
	    .u.end = { 7, 9, QREC_BY_TTR, QREC_MOVED, 0, 0, 0,
	        "ttr expired after 60s", 21, 0, 0, "dead", 4 } },
	/* a worker's bury with a text, moved */
	{ .type = QREC_SETBACK,
	    .u.end = { 7, 9, QREC_BY_CLIENT, QREC_MOVED, 0, 0, 0, err, 4, 0, 0,
	        "dead", 4 } },
	/* 100/m, burst 5, 3 at once */
	{ .type = QREC_TUBE_LIMIT,
	    .u.tube_limit = { "api", 3, { QREC_LIM_ALL, 100, 60000, 5, 3 } } },
	/* no limit any more */
	{ .type = QREC_TUBE_LIMIT, .u.tube_limit = { "api", 3, { 0 } } },
	/* every group: 10/s, burst 2, 2 */
	{ .type = QREC_GROUP_SET,
	    .u.group_set = { "api", 3, "", 0, { QREC_LIM_ALL, 10, 1000, 2, 2 },
	        false } },
	/* one group paused, its own cap */
	{ .type = QREC_GROUP_SET,
	    .u.group_set = { "api", 3, "tenant-7", 8,
	        { QREC_LIM_CONCURRENCY, 0, 0, 0, 5 }, true } },
	/* a waiting task, gone at once */
	{ .type = QREC_CANCEL, .u.cancel = { 7, 0 } },
	/* a taken one, marked */
	{ .type = QREC_CANCEL, .u.cancel = { 7, 9 } },
	/* opens its key's throttle window */
	{ .type = QREC_PUT_T,
	    .u.put = { 10, "hooks", 5, "h", 1, "acct-3", 6, 1024, 60000, 0, T0,
	        0, 0, T0 + 60000, NULL, 0 } },
	/* a throttled put into a group */
	{ .type = QREC_PUT_T,
	    .u.put = { 12, "hooks", 5, "h", 1, "acct-4", 6, 1024, 60000, 0, T0,
	        0, 0, T0 + 60000, "tenant-7", 8 } },
	/* into a group, no version */
	{ .type = QREC_PUT_G,
	    .u.put = { 10, "mail", 4, "m", 1, NULL, 0, 1024, 60000, 0, T0, 0, 0,
	        0, "tenant-42", 9 } },
	/* into a group, with a key's version */
	{ .type = QREC_PUT_G,
	    .u.put = { 11, "rows", 4, "r", 1, "row-8", 5, 1024, 60000, 0, T0, 0,
	        5, 0, "eu/acme", 7 } },
	/* 02:30 in Paris, catch-up one */
	{ .type = QREC_SCHED_SET,
	    .u.sched = { .name = "nightly",
	        .name_len = 7,
	        .tube = "reports",
	        .tube_len = 7,
	        .cron = "30 2 * * mon-fri",
	        .cron_len = 16,
	        .tz = "Europe/Paris",
	        .tz_len = 12,
	        .catch_up = QREC_CATCH_ONE,
	        .pri = 5,
	        .ttr = 60000,
	        .max_attempts = 3,
	        .from = T0,
	        .payload = "{}",
	        .payload_len = 2 } },
	{ .type = QREC_SCHED_DELETE,
	    .u.sched = { .name = "nightly", .name_len = 7 } },
	{ .type = QREC_SCHED_PAUSE,
	    .u.sched = { .name = "nightly",
	        .name_len = 7,
	        .paused = true,
	        .from = T0 } },
	/* skipped slots */
	{ .type = QREC_SCHED_FIRE,
	    .u.sched = { .name = "nightly",
	        .name_len = 7,
	        .slot = T0 + 60000 } },
	/* a slot's task */
	{ .type = QREC_SCHED_FIRE,
	    .u.sched = { .name = "nightly",
	        .name_len = 7,
	        .slot = T0 + 120000,
	        .has_put = true,
	        .put = { 13, "reports", 7, "{}", 2, "nightly@2026-01-01T02:30Z",
	            24, 5, 60000, 3, T0, 0, 0, 0, NULL, 0 } } },
	/* after tasks 3 and 9, cancel */
	{ .type = QREC_PUT_X,
	    .u.put = { 13, "mail", 4, "m", 1, NULL, 0, 1024, 60000, 0, T0, 0, 0,
	        0, NULL, 0, after, 2, 2 } },
	/* keyed, in a group, after task 1 */
	{ .type = QREC_PUT_X,
	    .u.put = { 14, "mail", 4, "m", 1, "k", 1, 1024, 60000, 0, T0, 0, 0,
	        0, "g", 1, after + 8, 1, 0 } },
	/* in batch "b1", after task 3 */
	{ .type = QREC_PUT_X,
	    .u.put = { 15, "mail", 4, "m", 1, NULL, 0, 1024, 60000, 0, T0, 0, 0,
	        0, NULL, 0, after, 1, 1, "b1", 2 } },
	/* in batch "b1", no parents */
	{ .type = QREC_PUT_X,
	    .u.put = { 16, "mail", 4, "m", 1, NULL, 0, 1024, 60000, 0, T0, 0, 0,
	        0, NULL, 0, NULL, 0, 0, "b1", 2 } },
	{ .type = QREC_BATCH_SET,
	    .u.batch = { .name = "b1",
	        .name_len = 2,
	        .success_tube = "ok",
	        .success_tube_len = 2,
	        .success_payload = "hi",
	        .success_payload_len = 2 } },
	{ .type = QREC_BATCH_CLOSE,
	    .u.batch = { .name = "b1", .name_len = 2 } },
	{ .type = QREC_BATCH_FIRE,
	    .u.batch = { .name = "b1",
	        .name_len = 2,
	        .which = 3,
	        .puts = { { 17, "ok", 2, "{}", 2, NULL, 0, 1024, 60000, 0, T0,
	                      0, 0, 0, NULL, 0, NULL, 0, 0, NULL, 0 },
	            { 18, "done", 4, "{}", 2, NULL, 0, 1024, 60000, 0, T0, 0, 0,
	                0, NULL, 0, NULL, 0, 0, NULL, 0 } } } },
	/* deleted, its result kept */
	{ .type = QREC_ACK_R,
	    .u.end = { .id = 3,
	        .lease = 9,
	        .outcome = QREC_DELETED,
	        .dedup_ms = 600000,
	        .result = "ok",
	        .result_len = 2 } },
	/* moved on, its result kept */
	{ .type = QREC_ACK_R,
	    .u.end = { .id = 3,
	        .lease = 9,
	        .outcome = QREC_MOVED,
	        .text = "next",
	        .text_len = 4,
	        .result = "{}",
	        .result_len = 2 } },
	{ .type = QREC_MOVE_HOLD, .u.move = { .id = 3, .lease = 77 } },
	{ .type = QREC_MOVE_DROP, .u.move = { .id = 3, .lease = 77 } },
	/* buried, with its error and group */
	{ .type = QREC_MOVE_IN,
	    .u.move = { .src_id = 41,
	        FROM_C1,
	        .state = 4,
	        .attempts = 3,
	        .created_at = T0 - 9,
	        .error = "e",
	        .error_len = 1,
	        .put = { 19, "mail", 4, "m", 1, "k", 1, 1024, 60000, 0, T0, 0,
	            0, 0, "g", 1 } } },
	/* folded into task 2 */
	{ .type = QREC_MOVE_IN,
	    .u.move = { .src_id = 42, FROM_C1, .fold = 1, .id = 2, MAIL } },
	{ .type = QREC_MOVE_MARK, .u.move = { MAIL } },
	{ .type = QREC_MOVE_END, .u.move = { MAIL } },
	/* a new reservation, with a version */
	{ .type = QREC_MOVE_KEY,
	    .u.move = { .src_id = 43,
	        FROM_C1,
	        MAIL,
	        KEY("k9"),
	        .id = 30,
	        .expires = T0 + 600000,
	        .version = 5 } },
	/* folded into task 2 */
	{ .type = QREC_MOVE_KEY,
	    .u.move = { .src_id = 44,
	        FROM_C1,
	        MAIL,
	        KEY("k"),
	        .fold = 1,
	        .id = 2,
	        .expires = T0 + 600000 } },
	/* its placeholder 31 becomes it */
	{ .type = QREC_MOVE_KEY,
	    .u.move = { .src_id = 45,
	        FROM_C1,
	        MAIL,
	        KEY("k8"),
	        .fold = 2,
	        .id = 31,
	        .expires = T0 + 600000 } },
	/* the copy takes placeholder 19's id */
	{ .type = QREC_MOVE_IN,
	    .u.move = { .src_id = 46,
	        FROM_C1,
	        .fold = 2,
	        .state = 1,
	        .created_at = T0 - 9,
	        .put = { 19, "mail", 4, "m", 1, "k", 1, 1024, 60000, 0, T0, 0,
	            0, 0, NULL, 0 } } },
	/* a live key held under 32 */
	{ .type = QREC_MOVE_PLACE,
	    .u.move = { .src_id = 47, FROM_C1, MAIL, KEY("k7"), .id = 32 } },
	/* the key is live here: task 2 */
	{ .type = QREC_MOVE_PLACE,
	    .u.move = { .src_id = 48,
	        FROM_C1,
	        MAIL,
	        KEY("k"),
	        .fold = 1,
	        .id = 2 } },
	/* keys pending */
	{ .type = QREC_MOVE_PEND, .u.move = { MAIL, FROM_C1, .state = 1 } },
	/* keys here */
	{ .type = QREC_MOVE_PEND, .u.move = { MAIL, FROM_C1 } },
	{ .type = QREC_MOVE_KEEP, .u.move = { MAIL } },
};
#undef FROM_C1
#undef MAIL
#undef KEY

/* A PUTS of three items: keyed, then a gap of 1 and a run_at before the
 * first's, then a gap of 9 with every field at its largest but the
 * payload's. Its items live in a static buffer. */
static struct qrec_puts
puts_sample(void)
{
	static struct buf items;
	const struct qrec_put p[3] = {
		{ .id = 20,
		    .tube = "emails",
		    .tube_len = 6,
		    .payload = "one",
		    .payload_len = 3,
		    .key = "k-a",
		    .key_len = 3,
		    .pri = 5,
		    .ttr = 60000,
		    .max_attempts = 3,
		    .run_at = T0 },
		{ .id = 21,
		    .tube = "emails",
		    .tube_len = 6,
		    .ttr = 1,
		    .run_at = T0 - 5 },
		{ .id = 30,
		    .tube = "emails",
		    .tube_len = 6,
		    .payload = "three",
		    .payload_len = 5,
		    .pri = UINT32_MAX,
		    .ttr = UINT32_MAX,
		    .max_attempts = UINT32_MAX,
		    .run_at = QREC_TIME_MAX,
		    .period = QREC_TIME_MAX },
	};

	if (items.len == 0)
		for (int i = 0; i < 3; i++)
			assert_true(qrec_puts_add(
			    &items, &p[i], i ? p[i - 1].id : 0, T0));
	return (struct qrec_puts) { .tube = "emails",
		.tube_len = 6,
		.first_id = 20,
		.run_at = T0,
		.n = 3,
		.items = items.data,
		.items_len = items.len };
}

/* The samples into out[0..NSAMPLES), the rest zero: how many. The table's,
 * then a PUTS, whose items are built at run time. */
static size_t
samples(struct qrec *out)
{
	size_t n = sizeof(sample_tab) / sizeof(sample_tab[0]);

	assert_true(n + 1 <= NSAMPLES);
	memset(out, 0, NSAMPLES * sizeof(*out));
	memcpy(out, sample_tab, sizeof(sample_tab));
	out[n].type = QREC_PUTS;
	out[n].u.puts = puts_sample();
	return n + 1;
}

static void
same_bytes(const void *a, size_t alen, const void *b, size_t blen)
{
	assert_int_equal(alen, blen);
	if (alen > 0)
		assert_memory_equal(a, b, alen);
}

/* Field by field: decode(encode(r)) == r. */
static void
assert_same_rec(const struct qrec *a, const struct qrec *b)
{
	assert_int_equal(a->type, b->type);
	switch (a->type) {
	case QREC_PUT:
	case QREC_PUT_V:
	case QREC_PUT_T:
	case QREC_PUT_G:
	case QREC_PUT_X: {
		const struct qrec_put *x = &a->u.put, *y = &b->u.put;

		assert_true(x->nafter == y->nafter);
		assert_true(x->on_parent == y->on_parent);
		same_bytes(x->batch, x->batch_len, y->batch, y->batch_len);
		same_bytes(x->after, 8 * (size_t)x->nafter, y->after,
		    8 * (size_t)y->nafter);

		assert_true(x->version == y->version);
		assert_true(x->throttle_until == y->throttle_until);
		same_bytes(x->group, x->group_len, y->group, y->group_len);
		assert_true(x->id == y->id && x->pri == y->pri);
		assert_true(
		    x->ttr == y->ttr && x->max_attempts == y->max_attempts);
		assert_true(x->run_at == y->run_at && x->period == y->period);
		same_bytes(x->tube, x->tube_len, y->tube, y->tube_len);
		same_bytes(x->key, x->key_len, y->key, y->key_len);
		same_bytes(
		    x->payload, x->payload_len, y->payload, y->payload_len);
		break;
	}
	case QREC_TAKE:
	case QREC_TAKE_LEASE:
		assert_true(a->u.take.lease == b->u.take.lease);
		assert_true(a->u.take.id == b->u.take.id);
		assert_true(a->u.take.session == b->u.take.session);
		assert_true(a->u.take.detached == b->u.take.detached);
		break;
	case QREC_ACK:
	case QREC_RELEASE:
	case QREC_FAIL:
	case QREC_BURY:
	case QREC_UNTAKE:
	case QREC_SETBACK:
	case QREC_ACK_R: {
		const struct qrec_end *x = &a->u.end, *y = &b->u.end;

		same_bytes(x->result, x->result_len, y->result, y->result_len);

		assert_true(x->id == y->id && x->lease == y->lease);
		assert_true(x->reason == y->reason && x->outcome == y->outcome);
		assert_true(x->pri == y->pri && x->run_at == y->run_at);
		assert_true(x->dedup_ms == y->dedup_ms);
		assert_true(
		    x->keep_ms == y->keep_ms && x->max_done == y->max_done);
		same_bytes(x->text, x->text_len, y->text, y->text_len);
		same_bytes(x->to, x->to_len, y->to, y->to_len);
		break;
	}
	case QREC_TUBE_SET: {
		const struct qrec_tube_conf *x = &a->u.tube_set.conf,
		                            *y = &b->u.tube_set.conf;

		same_bytes(a->u.tube_set.tube, a->u.tube_set.tube_len,
		    b->u.tube_set.tube, b->u.tube_set.tube_len);
		assert_true(x->set == y->set && x->ttr == y->ttr);
		assert_true(x->max_attempts == y->max_attempts);
		assert_true(x->backoff_base == y->backoff_base &&
		    x->backoff_cap == y->backoff_cap);
		assert_true(x->keep_done == y->keep_done &&
		    x->lost_lease_immediate == y->lost_lease_immediate);
		same_bytes(x->dead_letter, x->dead_letter_len, y->dead_letter,
		    y->dead_letter_len);
		break;
	}
	case QREC_TUBE_LIMIT:
		same_bytes(a->u.tube_limit.tube, a->u.tube_limit.tube_len,
		    b->u.tube_limit.tube, b->u.tube_limit.tube_len);
		assert_true(qrec_limits_equal(
		    &a->u.tube_limit.lim, &b->u.tube_limit.lim));
		break;
	case QREC_GROUP_SET:
		same_bytes(a->u.group_set.tube, a->u.group_set.tube_len,
		    b->u.group_set.tube, b->u.group_set.tube_len);
		same_bytes(a->u.group_set.group, a->u.group_set.group_len,
		    b->u.group_set.group, b->u.group_set.group_len);
		assert_true(qrec_limits_equal(
		    &a->u.group_set.lim, &b->u.group_set.lim));
		assert_true(a->u.group_set.paused == b->u.group_set.paused);
		break;
	case QREC_TUBE_DELETE:
		same_bytes(a->u.tube_delete.tube, a->u.tube_delete.tube_len,
		    b->u.tube_delete.tube, b->u.tube_delete.tube_len);
		assert_true(a->u.tube_delete.force == b->u.tube_delete.force);
		break;
	case QREC_TOUCH:
		assert_true(a->u.touch.id == b->u.touch.id);
		assert_true(a->u.touch.lease == b->u.touch.lease);
		break;
	case QREC_KICK:
		assert_true(a->u.kick.id == b->u.kick.id);
		break;
	case QREC_DELETE_WHERE:
	case QREC_DELETE_AGED:
		same_bytes(a->u.where.tube, a->u.where.tube_len,
		    b->u.where.tube, b->u.where.tube_len);
		assert_true(a->u.where.state == b->u.where.state);
		assert_true(a->u.where.before == b->u.where.before);
		assert_true(a->u.where.states == b->u.where.states);
		assert_true(a->u.where.by == b->u.where.by);
		break;
	case QREC_CANCEL:
		assert_true(a->u.cancel.id == b->u.cancel.id);
		assert_true(a->u.cancel.lease == b->u.cancel.lease);
		break;
	case QREC_DELETE:
		assert_true(a->u.del.id == b->u.del.id);
		assert_true(a->u.del.dedup_ms == b->u.del.dedup_ms);
		break;
	case QREC_FLUSH:
		same_bytes(a->u.flush.tube, a->u.flush.tube_len,
		    b->u.flush.tube, b->u.flush.tube_len);
		assert_true(a->u.flush.dedup_ms == b->u.flush.dedup_ms);
		break;
	case QREC_REPLACE:
	case QREC_REPLACE_V: {
		const struct qrec_replace *x = &a->u.replace,
		                          *y = &b->u.replace;

		assert_true(x->version == y->version);
		assert_true(x->id == y->id && x->pri == y->pri);
		assert_true(
		    x->ttr == y->ttr && x->max_attempts == y->max_attempts);
		assert_true(x->run_at == y->run_at && x->period == y->period);
		assert_true(x->pending == y->pending);
		same_bytes(
		    x->payload, x->payload_len, y->payload, y->payload_len);
		break;
	}
	case QREC_PAUSE:
		same_bytes(a->u.pause.tube, a->u.pause.tube_len,
		    b->u.pause.tube, b->u.pause.tube_len);
		assert_true(a->u.pause.until == b->u.pause.until);
		break;
	case QREC_UPDATE: {
		const struct qrec_update *x = &a->u.update, *y = &b->u.update;

		assert_true(x->id == y->id && x->pri == y->pri);
		assert_true(
		    x->ttr == y->ttr && x->max_attempts == y->max_attempts);
		assert_true(x->run_at == y->run_at);
		assert_true(x->has_payload == y->has_payload);
		same_bytes(
		    x->payload, x->payload_len, y->payload, y->payload_len);
		break;
	}
	case QREC_BATCH_SET:
	case QREC_BATCH_CLOSE:
	case QREC_BATCH_FIRE: {
		const struct qrec_batch *x = &a->u.batch, *y = &b->u.batch;

		same_bytes(x->name, x->name_len, y->name, y->name_len);
		same_bytes(x->success_tube, x->success_tube_len,
		    y->success_tube, y->success_tube_len);
		same_bytes(x->success_payload, x->success_payload_len,
		    y->success_payload, y->success_payload_len);
		same_bytes(x->complete_tube, x->complete_tube_len,
		    y->complete_tube, y->complete_tube_len);
		assert_true(x->which == y->which);
		for (int i = 0; i < 2; i++) {
			assert_true(x->puts[i].id == y->puts[i].id);
			same_bytes(x->puts[i].tube, x->puts[i].tube_len,
			    y->puts[i].tube, y->puts[i].tube_len);
			same_bytes(x->puts[i].payload, x->puts[i].payload_len,
			    y->puts[i].payload, y->puts[i].payload_len);
		}
		break;
	}
	case QREC_SCHED_SET:
	case QREC_SCHED_DELETE:
	case QREC_SCHED_PAUSE:
	case QREC_SCHED_FIRE: {
		const struct qrec_sched *x = &a->u.sched, *y = &b->u.sched;

		same_bytes(x->name, x->name_len, y->name, y->name_len);
		same_bytes(x->tube, x->tube_len, y->tube, y->tube_len);
		same_bytes(x->cron, x->cron_len, y->cron, y->cron_len);
		same_bytes(x->tz, x->tz_len, y->tz, y->tz_len);
		same_bytes(
		    x->payload, x->payload_len, y->payload, y->payload_len);
		assert_true(x->catch_up == y->catch_up &&
		    x->paused == y->paused && x->pri == y->pri &&
		    x->ttr == y->ttr && x->max_attempts == y->max_attempts &&
		    x->from == y->from && x->slot == y->slot &&
		    x->has_put == y->has_put);
		assert_true(x->put.id == y->put.id &&
		    x->put.ttr == y->put.ttr && x->put.run_at == y->put.run_at);
		same_bytes(
		    x->put.key, x->put.key_len, y->put.key, y->put.key_len);
		same_bytes(x->put.payload, x->put.payload_len, y->put.payload,
		    y->put.payload_len);
		break;
	}
	case QREC_MOVE_HOLD ... QREC_MOVE_KEEP: {
		const struct qrec_move *x = &a->u.move, *y = &b->u.move;

		same_bytes(x->key, x->key_len, y->key, y->key_len);
		assert_true(
		    x->expires == y->expires && x->version == y->version);
		assert_true(x->id == y->id && x->lease == y->lease &&
		    x->src_id == y->src_id && x->fold == y->fold &&
		    x->state == y->state && x->attempts == y->attempts &&
		    x->created_at == y->created_at);
		same_bytes(x->source, x->source_len, y->source, y->source_len);
		same_bytes(x->tube, x->tube_len, y->tube, y->tube_len);
		same_bytes(x->error, x->error_len, y->error, y->error_len);
		assert_true(
		    x->put.id == y->put.id && x->put.run_at == y->put.run_at);
		same_bytes(x->put.group, x->put.group_len, y->put.group,
		    y->put.group_len);
		same_bytes(
		    x->put.key, x->put.key_len, y->put.key, y->put.key_len);
		same_bytes(x->put.payload, x->put.payload_len, y->put.payload,
		    y->put.payload_len);
		break;
	}
	case QREC_PUTS: {
		const struct qrec_puts *x = &a->u.puts, *y = &b->u.puts;

		same_bytes(x->tube, x->tube_len, y->tube, y->tube_len);
		assert_true(x->first_id == y->first_id &&
		    x->run_at == y->run_at && x->n == y->n);
		same_bytes(x->items, x->items_len, y->items, y->items_len);
		break;
	}
	default:
		fail_msg("unexpected type %d", a->type);
	}
}

/* Every type, every outcome: decode(encode(r)) == r and the bytes of a
 * second encoding are the same. */
static void
test_every_record_round_trips(void **state)
{
	struct qrec recs[NSAMPLES], dec;
	struct buf b, c;
	size_t n = samples(recs);
	bool seen[QREC_TYPE_END_] = { false };

	(void)state;
	buf_init(&b);
	buf_init(&c);
	for (size_t i = 0; i < n; i++) {
		buf_reset(&b);
		buf_reset(&c);
		assert_true(qrec_valid(&recs[i]));
		assert_int_equal(qrec_encode(&recs[i], &b), 0);
		assert_int_equal(
		    qrec_decode(recs[i].type, b.data, b.len, &dec), 0);
		assert_same_rec(&recs[i], &dec);
		assert_int_equal(qrec_encode(&dec, &c), 0);
		same_bytes(b.data, b.len, c.data, c.len);
		seen[recs[i].type] = true;
	}
	/* Every type this file names (the numbers between belong to no
	 * record yet). */
	for (int t = QREC_PUT; t < QREC_TYPE_END_; t++)
		assert_true(
		    seen[t] || strcmp(qrec_type_name((uint16_t)t), "?") == 0);
	buf_fini(&b);
	buf_fini(&c);
}

/* Every proper prefix of a body, and a body with a byte more, is corrupt;
 * the output is untouched. */
static void
test_truncated_and_padded_bodies_are_corrupt(void **state)
{
	struct qrec recs[NSAMPLES], dec;
	struct buf b;
	size_t n = samples(recs);

	(void)state;
	buf_init(&b);
	for (size_t i = 0; i < n; i++) {
		buf_reset(&b);
		assert_int_equal(qrec_encode(&recs[i], &b), 0);
		for (size_t len = 0; len < b.len; len++) {
			/* a PUT_X cut at the end of a tagged field is a valid
			 * body with fewer fields (the log's checksums catch a
			 * torn record) */
			if (recs[i].type == QREC_PUT_X &&
			    recs[i].u.put.nafter > 0 &&
			    recs[i].u.put.batch_len > 0 &&
			    len == b.len - 5 - recs[i].u.put.batch_len)
				continue;
			memset(&dec, 0xa5, sizeof(dec));
			assert_int_equal(
			    qrec_decode(recs[i].type, b.data, len, &dec),
			    SLUICE_ECORRUPT);
			assert_int_equal(dec.type, 0xa5a5);
		}
		buf_put_u8(&b, 0);
		assert_int_equal(qrec_decode(recs[i].type, b.data, b.len, &dec),
		    SLUICE_ECORRUPT);
	}
	buf_fini(&b);
}

/* Types the queue does not know are corrupt, whatever the body. */
static void
test_unknown_types_are_corrupt(void **state)
{
	const uint16_t types[] = { QREC_NONE, QREC_TYPE_END_, 50, 99, 100, 101,
		65535 };
	uint8_t body[16] = { 0 };
	struct qrec dec;

	(void)state;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		for (size_t len = 0; len <= sizeof(body); len++)
			assert_int_equal(qrec_decode(types[i], body, len, &dec),
			    SLUICE_ECORRUPT);
	assert_string_equal(qrec_type_name(QREC_PUT), "PUT");
	assert_string_equal(qrec_type_name(200), "?");
}

/* The TUBE_SET sample that goes back to every default (set 0). */
static struct qrec
tube_set_default(const struct qrec *recs)
{
	for (size_t i = 0; i < NSAMPLES; i++)
		if (recs[i].type == QREC_TUBE_SET &&
		    recs[i].u.tube_set.conf.set == 0)
			return recs[i];
	fail_msg("no TUBE_SET sample without settings");
	return recs[0];
}

/* The first lease's end of `type` with `outcome`. */
static const struct qrec *
sample_end(const struct qrec *recs, uint16_t type, uint8_t outcome)
{
	for (size_t i = 0; i < NSAMPLES; i++)
		if (recs[i].type == type && recs[i].u.end.outcome == outcome)
			return &recs[i];
	fail_msg("no sample of type %u outcome %u", type, outcome);
	return NULL;
}

/* The first sample of `type`. */
static const struct qrec *
sample_of(const struct qrec *recs, uint16_t type)
{
	for (size_t i = 0; i < NSAMPLES; i++)
		if (recs[i].type == type)
			return &recs[i];
	fail_msg("no sample of type %u", type);
	return NULL;
}

/* Well-formed bodies with values out of range are corrupt, and encode
 * refuses the same records. */
static void
test_out_of_range_values_are_refused(void **state)
{
	struct qrec recs[NSAMPLES], bad;
	struct buf b;
	char longer[QREC_ERROR_MAX + 1];

	(void)state;
	samples(recs);
	buf_init(&b);
	memset(longer, 'x', sizeof(longer));
#define REFUSED(mutation)                                                      \
	do {                                                                   \
		struct qrec dec;                                               \
		mutation;                                                      \
		assert_false(qrec_valid(&bad));                                \
		buf_reset(&b);                                                 \
		assert_int_equal(qrec_encode(&bad, &b), SLUICE_EINVAL);        \
		assert_int_equal(b.len, 0);                                    \
		(void)dec;                                                     \
	} while (0)
	bad = recs[0];
	REFUSED(bad.u.put.id = 0);
	bad = recs[0];
	REFUSED(bad.u.put.id = UINT64_MAX);
	bad = recs[0];
	REFUSED(bad.u.put.ttr = 0);
	bad = recs[0];
	REFUSED(bad.u.put.tube = "a b");
	bad = recs[0];
	REFUSED(bad.u.put.tube_len = 0);
	bad = recs[0];
	REFUSED((bad.u.put.tube = longer, bad.u.put.tube_len = 201));
	bad = recs[0];
	REFUSED((bad.u.put.key = longer, bad.u.put.key_len = 201));
	bad = recs[0];
	REFUSED(bad.u.put.run_at = -1);
	bad = recs[0];
	REFUSED(bad.u.put.period = QREC_TIME_MAX + 1);
	bad = recs[3];
	REFUSED(bad.u.end.lease = 0);
	bad = recs[3];
	REFUSED(bad.u.end.outcome = QREC_BURIED);
	bad = recs[3];
	REFUSED(bad.u.end.outcome = 9);
	bad = recs[7];
	REFUSED(bad.u.end.reason = 4);
	bad = recs[7];
	REFUSED(bad.u.end.outcome = QREC_DELETED);
	bad = recs[9];
	REFUSED((bad.u.end.text = longer, bad.u.end.text_len = sizeof(longer)));
	bad = recs[12];
	REFUSED(bad.u.end.reason = QREC_BY_TTR);
	bad = recs[13];
	REFUSED(bad.u.touch.lease = 0);
	bad = recs[14];
	REFUSED(bad.u.kick.id = 0);
	bad = recs[18];
	REFUSED(bad.u.pause.until = -5);
	bad = recs[20];
	REFUSED((bad.u.end.text = "x", bad.u.end.text_len = 1));
	bad = recs[20];
	REFUSED(bad.u.end.run_at = T0);
	bad = recs[20];
	REFUSED(bad.u.end.outcome = QREC_BURIED);
	bad = recs[22];
	REFUSED(bad.u.end.reason = QREC_BY_CLIENT);
	bad = recs[22];
	REFUSED(bad.u.end.reason = QREC_BY_RESTART);
	bad = recs[22];
	REFUSED(bad.u.end.lease = 0);
	bad = recs[23];
	REFUSED(bad.u.end.reason = QREC_BY_TTR);
	bad = recs[0]; /* a version is PUT_V's, a key too */
	REFUSED(bad.u.put.version = 5);
	bad = *sample_of(recs, QREC_PUT_V);
	REFUSED(bad.u.put.version = 0);
	bad = *sample_of(recs, QREC_PUT_V);
	REFUSED(bad.u.put.key_len = 0);
	bad = *sample_of(recs, QREC_PUT_T); /* a window's end, a key */
	REFUSED(bad.u.put.throttle_until = 0);
	bad = *sample_of(recs, QREC_PUT_T);
	REFUSED(bad.u.put.key_len = 0);
	bad = *sample_of(recs, QREC_PUT_T);
	REFUSED(bad.u.put.version = 2);
	bad = recs[0];
	REFUSED(bad.u.put.throttle_until = T0);
	bad = *sample_of(recs, QREC_REPLACE_V);
	REFUSED(bad.u.replace.version = 0);
	bad = *sample_of(recs, QREC_REPLACE_V);
	REFUSED(bad.type = QREC_REPLACE);
	/* A dead letter move names a good tube; an ACK's goes in text. */
	bad = *sample_end(recs, QREC_FAIL, QREC_MOVED);
	REFUSED(bad.u.end.to_len = 0);
	bad = *sample_end(recs, QREC_BURY, QREC_MOVED);
	REFUSED(bad.u.end.to = "a b");
	bad = recs[9];
	REFUSED((bad.u.end.to = "dead", bad.u.end.to_len = 4));
	/* Settings: known fields only, zero when not set, ttr >= 1, cap >=
	 * base, never the tube itself as its dead letter. */
	bad = *sample_of(recs, QREC_TUBE_SET);
	REFUSED(bad.u.tube_set.conf.set = 0x40 | QREC_TS_ALL);
	bad = *sample_of(recs, QREC_TUBE_SET);
	REFUSED(bad.u.tube_set.conf.ttr = 0);
	bad = *sample_of(recs, QREC_TUBE_SET);
	REFUSED(bad.u.tube_set.conf.backoff_cap = 99);
	bad = *sample_of(recs, QREC_TUBE_SET);
	REFUSED(bad.u.tube_set.conf.keep_done = -1);
	bad = *sample_of(recs, QREC_TUBE_SET);
	REFUSED((bad.u.tube_set.conf.dead_letter = "emails",
	    bad.u.tube_set.conf.dead_letter_len = 6));
	bad = tube_set_default(recs);
	REFUSED(bad.u.tube_set.conf.max_attempts = 3);
	bad = tube_set_default(recs);
	REFUSED(bad.u.tube_set.conf.lost_lease_immediate = true);
	bad = tube_set_default(recs);
	REFUSED((bad.u.tube_set.conf.dead_letter = "dead",
	    bad.u.tube_set.conf.dead_letter_len = 4));
	bad = *sample_of(recs, QREC_TUBE_DELETE);
	REFUSED(bad.u.tube_delete.tube_len = 0);
	/* A SETBACK into a dead letter names it too, and only a taken
	 * task's goes there (an operator's bury of a waiting one stays) */
	bad = *sample_end(recs, QREC_SETBACK, QREC_MOVED);
	REFUSED(bad.u.end.to_len = 0);
	bad = *sample_end(recs, QREC_SETBACK, QREC_MOVED);
	REFUSED(bad.u.end.lease = 0);
	bad = *sample_end(recs, QREC_SETBACK, QREC_MOVED);
	REFUSED(bad.u.end.pri = 3);
#undef REFUSED

	/* The same through bytes: a TAKE whose detached flag is 2, a PUT
	 * with a bad tube name. */
	{
		struct qrec dec;

		buf_reset(&b);
		buf_put_u64(&b, 1);
		buf_put_u64(&b, 1);
		buf_put_u8(&b, 2);
		assert_int_equal(qrec_decode(QREC_TAKE, b.data, b.len, &dec),
		    SLUICE_ECORRUPT);
		buf_reset(&b);
		assert_int_equal(qrec_encode(&recs[0], &b), 0);
		b.data[8 + 2] = ' '; /* first byte of the tube name */
		assert_int_equal(qrec_decode(QREC_PUT, b.data, b.len, &dec),
		    SLUICE_ECORRUPT);
		buf_reset(&b);
		assert_int_equal(qrec_encode(&recs[0], &b), 0);
		b.data[b.len - 5 - 1] = 0xff; /* payload length: too long */
		assert_int_equal(qrec_decode(QREC_PUT, b.data, b.len, &dec),
		    SLUICE_ECORRUPT);
	}
	buf_fini(&b);
}

/* Random bodies of every type decode to an error or to a record that
 * encodes back to the same bytes; never a crash. */
static void
test_random_bodies_decode_canonically_or_not_at_all(void **state)
{
	uint64_t seed = t_seed(11);
	uint8_t body[96];
	struct qrec dec;
	struct buf b;
	int decoded = 0;

	(void)state;
	buf_init(&b);
	for (int i = 0; i < 200000; i++) {
		uint16_t type = (uint16_t)(1 + t_below(&seed, QREC_TYPE_END_));
		size_t len = (size_t)t_below(&seed, sizeof(body) + 1);

		for (size_t j = 0; j < len; j++) {
			/* Mostly small bytes so lengths and flags fit. */
			uint64_t r = t_rand(&seed);

			body[j] = (uint8_t)(r & 1 ? r >> 8 : (r >> 8) % 3);
		}
		if (qrec_decode(type, body, len, &dec) != 0)
			continue;
		decoded++;
		buf_reset(&b);
		assert_int_equal(qrec_encode(&dec, &b), 0);
		same_bytes(b.data, b.len, body, len);
	}
	fprintf(stderr, "random bodies that decoded: %d\n", decoded);
	assert_true(decoded > 0);
	buf_fini(&b);
}

/* The text form names the type and the fields a log reader needs. */
static void
test_format_reads_clearly(void **state)
{
	struct qrec recs[NSAMPLES];
	struct buf b;

	(void)state;
	samples(recs);
	buf_init(&b);
	assert_int_equal(qrec_format(&recs[0], &b), 0);
	buf_put_u8(&b, 0);
	assert_string_equal((char *)b.data,
	    "PUT id=7 tube=emails pri=1024 run_at=1700000000000 ttr=60000 "
	    "max_attempts=5 period=0 key=\"k-1\" payload=5B");
	buf_reset(&b);
	assert_int_equal(qrec_format(&recs[9], &b), 0);
	buf_put_u8(&b, 0);
	assert_string_equal((char *)b.data,
	    "FAIL id=7 lease=9 by=client -> wait run_at=1700000002000 "
	    "error=\"connection refused\"");
	buf_reset(&b);
	assert_int_equal(qrec_format(&recs[7], &b), 0);
	buf_put_u8(&b, 0);
	assert_string_equal((char *)b.data,
	    "RELEASE id=7 lease=9 by=ttr -> wait run_at=1700000000007 pri=3");
	buf_fini(&b);
}

/* Tube names: 1-200 bytes of [A-Za-z0-9_.:/-]. */
static void
test_tube_names(void **state)
{
	char name[QREC_NAME_MAX + 1];

	(void)state;
	memset(name, 'a', sizeof(name));
	assert_true(qrec_tube_valid("Az09_.:/-", 9));
	assert_true(qrec_tube_valid(name, QREC_NAME_MAX));
	assert_false(qrec_tube_valid(name, QREC_NAME_MAX + 1));
	assert_false(qrec_tube_valid("", 0));
	assert_false(qrec_tube_valid(NULL, 3));
	assert_false(qrec_tube_valid("a b", 3));
	assert_false(qrec_tube_valid("a\0b", 3));
	assert_false(qrec_tube_valid("é", 2));
}

/* ---- The fuzz corpus --------------------------------------------------- */

static int
write_file(const char *dir, const char *name, const struct buf *b)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(b->data, 1, b->len, f) != b->len) {
		fprintf(stderr, "cannot write %s\n", path);
		if (f != NULL)
			fclose(f);
		return 1;
	}
	return fclose(f) != 0;
}

/* A short life of a queue, through the harness, to produce records. */
static void
scenario(struct tq *h)
{
	struct queue_put_req req;
	struct queue_put_res res;
	struct queue_str s = { "t", 1 };
	struct queue_take_req tr = { &s, 1, 1, false };
	struct queue_ack_req ar;
	struct queue_fail_req fr;
	struct queue_pause_req pr = { "u", 1, T0 + 500, true };
	struct queue_tube_set_req sr;
	struct queue_tube_delete_req dr = { "done", 4, true };
	struct queue_task_view v;
	struct qrec rec;
	uint64_t held = 0;

	for (int i = 0; i < 4; i++) {
		queue_put_req_init(&req);
		req.tube = i % 2 ? "t" : "u";
		req.tube_len = 1;
		req.payload = "job";
		req.payload_len = 3;
		req.key = i == 1 ? "key" : NULL;
		req.key_len = i == 1 ? 3 : 0;
		req.delay_ms = i == 3 ? 100 : 0;
		req.max_attempts = 2;
		/* fair groups: PUT_G records, GROUP snapshot entries */
		req.group = i >= 2 ? (i == 2 ? "g1" : "g2") : NULL;
		req.group_len = i >= 2 ? 2 : 0;
		if (queue_decide_put(h->q, h->now, &req, &rec, &res) == 0)
			tq_commit(h, &rec);
	}
	/* dependencies: a PUT_X after tasks 1 and 2, waiting (DEP and
	 * DEPC snapshot entries) */
	{
		static const uint64_t parents[2] = { 1, 2 };

		queue_put_req_init(&req);
		req.tube = "t";
		req.tube_len = 1;
		req.payload = "child";
		req.payload_len = 5;
		req.after = parents;
		req.nafter = 2;
		req.on_parent_failure = QUEUE_PARENT_IGNORE;
		if (queue_decide_put(h->q, h->now, &req, &rec, &res) == 0)
			tq_commit(h, &rec);
	}
	if (queue_decide_take(h->q, h->now, &tr, &rec) == 0 &&
	    tq_commit(h, &rec) == 0 &&
	    queue_peek(h->q, h->now, rec.u.take.id, &v) == 0) {
		memset(&fr, 0, sizeof(fr));
		fr.id = v.id;
		fr.lease = v.lease;
		fr.error = "boom";
		fr.error_len = 4;
		if (queue_decide_fail(h->q, h->now, &fr, &rec) == 0)
			tq_commit(h, &rec);
	}
	h->now += 1000;
	if (queue_decide_take(h->q, h->now, &tr, &rec) == 0 &&
	    tq_commit(h, &rec) == 0 &&
	    queue_peek(h->q, h->now, rec.u.take.id, &v) == 0) {
		queue_put_req_init(&req);
		req.tube = "t";
		req.tube_len = 1;
		req.payload = "v2";
		req.payload_len = 2;
		req.key = "key";
		req.key_len = 3;
		req.replace = true;
		if (queue_decide_put(h->q, h->now, &req, &rec, &res) == 0)
			tq_commit(h, &rec);
		memset(&ar, 0, sizeof(ar));
		ar.id = v.id;
		ar.lease = v.lease;
		ar.to_tube = "done";
		ar.to_tube_len = 4;
		if (queue_decide_ack(h->q, h->now, &ar, &rec) == 0)
			tq_commit(h, &rec);
	}
	if (queue_decide_pause(h->q, h->now, &pr, &rec) == 0)
		tq_commit(h, &rec);
	tr.detached = true;
	if (queue_decide_take(h->q, h->now, &tr, &rec) == 0 &&
	    tq_commit(h, &rec) == 0)
		held = rec.u.take.id;
	/* Settings: "t" buries into "dead"; then a tube goes away. */
	memset(&sr, 0, sizeof(sr));
	sr.tube = "t";
	sr.tube_len = 1;
	sr.set = QREC_TS_TTR | QREC_TS_DEAD_LETTER;
	sr.conf.ttr = 5000;
	sr.conf.dead_letter = "dead";
	sr.conf.dead_letter_len = 4;
	if (queue_decide_tube_set(h->q, h->now, &sr, &rec) == 0)
		tq_commit(h, &rec);
	if (queue_peek(h->q, h->now, held, &v) == 0 && v.state == QUEUE_TAKEN) {
		struct queue_bury_req br = { v.id, v.lease, false };

		if (queue_decide_bury(h->q, h->now, &br, &rec) == 0)
			tq_commit(h, &rec);
	}
	if (queue_decide_tube_delete(h->q, h->now, &dr, &rec) == 0)
		tq_commit(h, &rec);
}

static int
write_corpus(const char *dir)
{
	struct qrec recs[NSAMPLES];
	size_t n = samples(recs);
	struct buf b, body;
	struct tq h;
	int bad = 0;
	char name[64];
	uint64_t seed = 5;

	buf_init(&b);
	buf_init(&body);
	/* Mode 0: one valid body of each sample, and two broken ones. */
	for (size_t i = 0; i < n; i++) {
		buf_reset(&b);
		buf_put_u8(&b, 0);
		buf_put_u16(&b, recs[i].type);
		qrec_encode(&recs[i], &b);
		snprintf(name, sizeof(name), "rec-%02zu-%s", i,
		    qrec_type_name(recs[i].type));
		bad |= write_file(dir, name, &b);
	}
	buf_reset(&b);
	buf_put_u8(&b, 0);
	buf_put_u16(&b, QREC_PUT);
	qrec_encode(&recs[0], &b);
	b.len -= 3;
	bad |= write_file(dir, "rec-truncated-PUT", &b);
	/* Mode 1: the records of a scenario. */
	tq_init(&h, NULL, T0);
	scenario(&h);
	buf_reset(&b);
	buf_put_u8(&b, 1);
	for (size_t i = 0; i < h.nlog; i++) {
		buf_put_u8(&b, (uint8_t)h.log[i].type);
		buf_put_u16(&b, (uint16_t)h.log[i].len);
		buf_put_u8(&b,
		    (uint8_t)(i ? (h.log[i].time - h.log[i - 1].time) / 97
		                : 0));
		buf_put(&b, h.bodies.data + h.log[i].off, h.log[i].len);
	}
	bad |= write_file(dir, "apply-scenario", &b);
	/* Mode 2: its snapshot, whole and cut. */
	buf_reset(&body);
	queue_snapshot_write(h.q, tq_snap_emit, &body);
	buf_reset(&b);
	buf_put_u8(&b, 2);
	{
		struct rd r;

		rd_init(&r, body.data, body.len);
		while (rd_left(&r) > 0) {
			uint16_t type = rd_u16(&r);
			uint32_t len = rd_u32(&r);

			buf_put_u8(&b, (uint8_t)type);
			buf_put_u16(&b, (uint16_t)len);
			buf_put(&b, rd_bytes(&r, len), len);
		}
	}
	bad |= write_file(dir, "snapshot-scenario", &b);
	b.len -= 7;
	bad |= write_file(dir, "snapshot-cut", &b);
	tq_fini(&h);
	/* Mode 3: operation strings. */
	for (int k = 0; k < 3; k++) {
		buf_reset(&b);
		buf_put_u8(&b, 3);
		for (int i = 0; i < 64 << k; i++)
			buf_put_u8(&b, (uint8_t)t_rand(&seed));
		snprintf(name, sizeof(name), "ops-%d", k);
		bad |= write_file(dir, name, &b);
	}
	buf_fini(&b);
	buf_fini(&body);
	return bad;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_record_round_trips),
		cmocka_unit_test(test_truncated_and_padded_bodies_are_corrupt),
		cmocka_unit_test(test_unknown_types_are_corrupt),
		cmocka_unit_test(test_out_of_range_values_are_refused),
		cmocka_unit_test(
		    test_random_bodies_decode_canonically_or_not_at_all),
		cmocka_unit_test(test_format_reads_clearly),
		cmocka_unit_test(test_tube_names),
	};

	if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
		return write_corpus(argv[2]);
	return cmocka_run_group_tests_name("qrec", tests, NULL, NULL);
}
