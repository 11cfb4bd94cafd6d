/* Tests of src/server/face/conn_ring.c: the sends of a turn in one
 * io_uring_enter. Each send's result is what a plain non-blocking send
 * would give (the bytes, in order, on the right socket; -EAGAIN on a full
 * socket; an error on a closed one, with no SIGPIPE), and every send is
 * over when the call returns: nothing is left in flight, so the caller's
 * buffers are free and the next call finds the ring empty. Receives
 * likewise: each socket's bytes in its own buffer, -EAGAIN at once when
 * nothing is there, 0 when the peer is gone. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "t_lib.h"

#include "server/face/conn_ring.h"

enum { PAIRS = 8 };

static void
pair(int sv[2])
{
	assert_int_equal(
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
}

static struct conn_ring *
ring(void)
{
	struct conn_ring *r = NULL;
	int rc = conn_ring_open(&r);

	if (rc != 0)
		skip(); /* no io_uring on this kernel: conn.c sends plainly */
	return r;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
test_conn_ring_sends_each_payload_to_its_socket(void **state)
{
	struct conn_ring *r = ring();
	struct conn_ring_io io[PAIRS];
	char msg[PAIRS][64], got[128];
	int sv[PAIRS][2];

	(void)state;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < PAIRS; i++) {
			pair(sv[i]);
			snprintf(msg[i], sizeof(msg[i]), "reply %d of round %d",
			    i, round);
			io[i] = (struct conn_ring_io) { .fd = sv[i][0],
				.p = msg[i],
				.len = strlen(msg[i]),
				.res = 12345 };
		}
		assert_int_equal(conn_ring_send(r, io, PAIRS), 0);
		for (int i = 0; i < PAIRS; i++) {
			assert_int_equal(io[i].res, (ssize_t)strlen(msg[i]));
			assert_int_equal(
			    read(sv[i][1], got, sizeof(got)), io[i].res);
			assert_memory_equal(got, msg[i], (size_t)io[i].res);
			close(sv[i][0]);
			close(sv[i][1]);
		}
	}
	conn_ring_close(r);
}

/* A socket whose buffer is full answers -EAGAIN (or takes part) at once,
 * beside one that takes all; the call does not wait for room, and the
 * full one takes a send again once its peer read. */
static void
test_conn_ring_a_full_socket_does_not_wait(void **state)
{
	struct conn_ring *r = ring();
	struct conn_ring_io io[2];
	static char big[1 << 20], sink[1 << 16];
	int full[2], ok[2], sz = 4096;
	double t0;

	(void)state;
	pair(full);
	pair(ok);
	setsockopt(full[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	while (write(full[0], big, sizeof(sink)) > 0)
		;
	assert_int_equal(errno, EAGAIN);
	io[0] = (struct conn_ring_io) {
		.fd = full[0], .p = big, .len = sizeof(big)
	};
	io[1] = (struct conn_ring_io) { .fd = ok[0], .p = "ok", .len = 2 };
	t0 = now_s();
	assert_int_equal(conn_ring_send(r, io, 2), 0);
	assert_true(now_s() - t0 < 5.0);
	assert_true(io[0].res == -EAGAIN ||
	    (io[0].res >= 0 && io[0].res < (ssize_t)sizeof(big)));
	assert_int_equal(io[1].res, 2);
	/* room again: the same socket takes a send through the ring */
	while (read(full[1], sink, sizeof(sink)) > 0)
		;
	io[0].len = 100;
	io[1].res = 0;
	assert_int_equal(conn_ring_send(r, io, 2), 0);
	assert_int_equal(io[0].res, 100);
	assert_int_equal(io[1].res, 2);
	for (int i = 0; i < 2; i++) {
		close(full[i]);
		close(ok[i]);
	}
	conn_ring_close(r);
}

/* A peer gone: an error for that send alone, and no SIGPIPE. */
static void
test_conn_ring_a_closed_peer_fails_alone(void **state)
{
	struct conn_ring *r = ring();
	struct conn_ring_io io[2];
	int gone[2], ok[2];

	(void)state;
	signal(SIGPIPE, SIG_DFL); /* a SIGPIPE would end the test */
	pair(gone);
	pair(ok);
	close(gone[1]);
	io[0] = (struct conn_ring_io) { .fd = gone[0], .p = "x", .len = 1 };
	io[1] = (struct conn_ring_io) { .fd = ok[0], .p = "y", .len = 1 };
	assert_int_equal(conn_ring_send(r, io, 2), 0);
	assert_true(io[0].res == -EPIPE || io[0].res == -ECONNRESET);
	assert_int_equal(io[1].res, 1);
	close(gone[0]);
	close(ok[0]);
	close(ok[1]);
	conn_ring_close(r);
}

/* Receives: each socket's bytes into its own buffer; nothing there is
 * -EAGAIN at once, a peer gone is 0 (the end of the stream). */
static void
test_conn_ring_receives_each_socket_into_its_buffer(void **state)
{
	struct conn_ring *r = ring();
	struct conn_ring_io io[PAIRS + 2];
	char got[PAIRS + 2][64], msg[64];
	int sv[PAIRS + 2][2];
	double t0;

	(void)state;
	for (int i = 0; i < PAIRS + 2; i++) {
		pair(sv[i]);
		io[i] = (struct conn_ring_io) {
			.fd = sv[i][0], .p = got[i], .len = sizeof(got[i])
		};
		if (i < PAIRS) {
			snprintf(msg, sizeof(msg), "request %d", i);
			assert_int_equal(write(sv[i][1], msg, strlen(msg)),
			    (ssize_t)strlen(msg));
		}
	}
	close(sv[PAIRS + 1][1]); /* the last: its peer is gone */
	t0 = now_s();
	assert_int_equal(conn_ring_recv(r, io, PAIRS + 2), 0);
	assert_true(now_s() - t0 < 5.0);
	for (int i = 0; i < PAIRS; i++) {
		snprintf(msg, sizeof(msg), "request %d", i);
		assert_int_equal(io[i].res, (ssize_t)strlen(msg));
		assert_memory_equal(got[i], msg, strlen(msg));
	}
	assert_int_equal(io[PAIRS].res, -EAGAIN);
	assert_int_equal(io[PAIRS + 1].res, 0);
	for (int i = 0; i < PAIRS + 2; i++) {
		close(sv[i][0]);
		if (i != PAIRS + 1)
			close(sv[i][1]);
	}
	conn_ring_close(r);
}

static void
test_conn_ring_refuses_more_than_it_holds(void **state)
{
	struct conn_ring *r = ring();
	static struct conn_ring_io io[CONN_RING_MAX + 1];

	(void)state;
	assert_int_equal(conn_ring_send(r, io, CONN_RING_MAX + 1), -EINVAL);
	assert_int_equal(conn_ring_send(r, io, 0), 0);
	conn_ring_close(r);
	conn_ring_close(NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
		    test_conn_ring_sends_each_payload_to_its_socket),
		cmocka_unit_test(test_conn_ring_a_full_socket_does_not_wait),
		cmocka_unit_test(test_conn_ring_a_closed_peer_fails_alone),
		cmocka_unit_test(
		    test_conn_ring_receives_each_socket_into_its_buffer),
		cmocka_unit_test(test_conn_ring_refuses_more_than_it_holds),
	};
	return cmocka_run_group_tests_name("conn_ring", tests, NULL, NULL);
}
