/* The SP-over-TCP face (server/face/sp.c) through plain sockets, byte by
 * byte as docs/protocol.md describes it: the header exchange, framing cut
 * anywhere, several requests in flight with replies naming their ids, a
 * backtrace of several hops echoed, malformed and oversized messages
 * (each closes its connection), a
 * peer that is not a requester, and a disconnect that releases the
 * session's leases. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it.h"
#include "it_sp.h"
#include "proto/msg.h"
#include "proto/sp.h"
#include "util/buf.h"

static void
put_req(struct buf *b, const char *tube, const char *payload)
{
	struct msg_req q = { .op = MSG_OP_PUT };

	q.put.tube = (struct msg_str) { tube, strlen(tube) };
	q.put.payload = (struct msg_str) { payload, strlen(payload) };
	q.put.priority = 1024;
	q.put.ttr = 60000;
	buf_reset(b);
	assert_int_equal(msg_encode_req(b, &q), 0);
}

/* Reads one reply frame: its backtrace (nbt words) and decoded reply. */
static void
read_reply(
    int fd, uint32_t *bt, size_t nbt, struct buf *body, struct msg_rep *rep)
{
	assert_true(it_sp_recv(fd, bt, nbt, body));
	assert_int_equal(msg_decode_rep(body->data, body->len, NULL, rep), 0);
}

/* Three puts pipelined in one write, cut into 1-byte sends for the last:
 * three replies, each echoing its own id, every task stored. */
static void
test_pipelined_requests_are_answered_with_their_ids(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct buf req, out, body;
	struct msg_rep rep;
	bool seen[3] = { false, false, false };
	uint32_t ids[3] = { 0x80000011u, 0x80000012u, 0x80000013u };
	int fd;

	it_start(s);
	fd = it_sp_open(s->port);
	buf_init(&req);
	buf_init(&out);
	buf_init(&body);
	for (int i = 0; i < 3; i++) {
		put_req(&req, "sp", "hello");
		it_sp_frame(&out, &ids[i], 1, req.data, req.len);
	}
	it_sp_send_all(fd, out.data, out.len - 5);
	for (size_t i = out.len - 5; i < out.len; i++) {
		it_sp_send_all(fd, out.data + i, 1);
		it_sleep_ms(2);
	}
	for (int i = 0; i < 3; i++) {
		uint32_t bt;

		read_reply(fd, &bt, 1, &body, &rep);
		assert_true(bt >= ids[0] && bt <= ids[2]);
		assert_false(seen[bt - ids[0]]);
		seen[bt - ids[0]] = true;
		assert_int_equal(rep.op, MSG_OP_PUT);
		assert_int_equal(rep.status, 0);
	}
	close(fd);
	{
		struct sluice_client *c = it_client(s);

		assert_int_equal(it_counts(c, "sp").ready, 3);
		sluice_close(c);
	}
	buf_fini(&req);
	buf_fini(&out);
	buf_fini(&body);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A request that came through two devices carries three backtrace words;
 * the reply carries the same three. A backtrace with no id word (no top
 * bit) is dropped without a reply, and the connection goes on. */
static void
test_backtraces_are_echoed_and_malformed_ones_closed(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	uint32_t hops[3] = { 7, 9, 0x80000042u }, bad[2] = { 1, 2 }, got[3];
	uint32_t one = 0x80000043u;
	struct buf req, out, body;
	struct msg_rep rep;
	int fd;

	it_start(s);
	fd = it_sp_open(s->port);
	buf_init(&req);
	buf_init(&out);
	buf_init(&body);
	put_req(&req, "sp", "x");
	it_sp_frame(&out, hops, 3, req.data, req.len);
	it_sp_send_all(fd, out.data, out.len);
	read_reply(fd, got, 3, &body, &rep);
	assert_memory_equal(got, hops, sizeof(hops));
	assert_int_equal(rep.status, 0);
	buf_reset(&out);
	it_sp_frame(&out, &one, 1, req.data, req.len);
	it_sp_send_all(fd, out.data, out.len);
	read_reply(fd, got, 1, &body, &rep);
	assert_true(got[0] == one);
	/* no word with the top bit (no request id): the connection closes,
	 * as nng's transports do, rather than leave the client waiting */
	buf_reset(&out);
	it_sp_frame(&out, bad, 2, req.data, req.len);
	it_sp_send_all(fd, out.data, out.len);
	assert_true(it_sp_closed_by_peer(fd));
	close(fd);
	buf_fini(&req);
	buf_fini(&out);
	buf_fini(&body);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A peer that is not an SP requester, and a length over the limit, are
 * closed; the server goes on serving. */
static void
test_wrong_peers_and_oversized_messages_are_closed(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	uint8_t hs[SP_HANDSHAKE], w[SP_LEN];
	struct sluice_client *c;
	int fd;

	it_start(s);
	fd = it_sp_dial(s->port);
	it_sp_send_all(fd, "GET / HTTP/1.1\r\n\r\n", 18);
	assert_true(it_sp_closed_by_peer(fd));
	close(fd);

	fd = it_sp_dial(s->port);
	sp_handshake(hs, SP_PROTO_REP0); /* a replier talking to a replier */
	it_sp_send_all(fd, hs, sizeof(hs));
	assert_true(it_sp_closed_by_peer(fd));
	close(fd);

	fd = it_sp_open(s->port);
	sp_store_len(w, (uint64_t)MSG_RECV_MAX + SP_BACKTRACE_MAX + 1);
	it_sp_send_all(fd, w, sizeof(w));
	assert_true(it_sp_closed_by_peer(fd));
	close(fd);

	c = it_client(s);
	it_put(c, "after", "still serving");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A connection is a session: a task taken under its (session) lease is
 * ready again the moment the connection closes. */
static void
test_a_closed_connection_releases_its_leases(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct msg_req q = { .op = MSG_OP_TAKE };
	struct msg_str tube = { "sp", 2 };
	struct buf req, out, body;
	struct sluice_client *c;
	struct msg_rep rep;
	uint32_t id = 0x80000001u, bt;
	uint64_t task;
	int fd;

	it_start(s);
	c = it_client(s);
	task = it_put(c, "sp", "held");
	fd = it_sp_open(s->port);
	buf_init(&req);
	buf_init(&out);
	buf_init(&body);
	q.take.tubes = &tube;
	q.take.ntubes = 1;
	q.take.max = 1;
	assert_int_equal(msg_encode_req(&req, &q), 0);
	it_sp_frame(&out, &id, 1, req.data, req.len);
	it_sp_send_all(fd, out.data, out.len);
	read_reply(fd, &bt, 1, &body, &rep);
	assert_int_equal(rep.status, 0);
	assert_int_equal(rep.tasks.n, 1);
	assert_int_equal(it_state(c, task), SLUICE_TAKEN);
	close(fd);
	assert_true(it_wait_state(c, task, SLUICE_READY, IT_SP_MS) >= 0);
	sluice_close(c);
	buf_fini(&req);
	buf_fini(&out);
	buf_fini(&body);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_pipelined_requests_are_answered_with_their_ids),
		T(test_backtraces_are_echoed_and_malformed_ones_closed),
		T(test_wrong_peers_and_oversized_messages_are_closed),
		T(test_a_closed_connection_releases_its_leases),
	};
#undef T
	return cmocka_run_group_tests_name("sp", tests, NULL, NULL);
}
