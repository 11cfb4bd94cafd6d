/* ws:// under attack, against a real sluiced (docs/security.md, "ws://"):
 * the client port and the replication port over WebSocket are read by
 * face_stream, with the bounds of every other face.
 *
 *  - ten WebSocket connections without a token, each announcing a 60 MiB
 *    frame and sending 8 MiB of it: closed at the frame's header (over
 *    the largest frame read), RSS flat, a healthy ws client served;
 *  - a connection that upgrades and says nothing, and one that sends an
 *    unfinished message of small frames without a token: closed by
 *    --handshake-timeout;
 *  - a complete message over the limit before authentication: closed
 *    (conns_closed_refused);
 *  - the replication port over ws:// under --auth: a follower with a
 *    replica token follows, a silent stranger is closed by
 *    --handshake-timeout.
 *
 * The attackers are raw sockets speaking HTTP's upgrade and RFC 6455's
 * frames by hand. RSS bounds are checked in plain builds only: under
 * ASan the figures mean nothing. */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "it.h"
#include "it_hostile.h"
#include "it_node.h"
#include "it_probe.h"
#include "it_sp.h"
#include "util/tokens.h"

enum {
	BIG_ANNOUNCED = 60 << 20, /* what the frames say they carry */
	BIG_SENT = 8 << 20,       /* what each attacker sends of it */
	ATTACKERS = 10,
	RSS_BOUND_KB = 40 * 1024, /* growth allowed under the attack */
	SMALL_FRAME = 1024,       /* the fragments of an unfinished message */
};

static const char token[] = "ops-secret";

/* ---- helpers ------------------------------------------------------------ */

/* A TCP connection to 127.0.0.1:port upgraded to WebSocket with SP's
 * REP subprotocol, as nng's REQ dialer asks (asserted: 101 back). */
static int
ws_open(int port)
{
	char req[512], res[2048];
	size_t got = 0;
	int fd = it_sp_dial(port);
	int64_t end = it_mono_ms() + IT_SP_MS;

	snprintf(req, sizeof(req),
	    "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
	    "Connection: Upgrade\r\n"
	    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	    "Sec-WebSocket-Version: 13\r\n"
	    "Sec-WebSocket-Protocol: rep.sp.nanomsg.org\r\n\r\n",
	    port);
	it_sp_send_all(fd, req, strlen(req));
	while (got < sizeof(res) - 1 && it_mono_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		r = recv(fd, res + got, 1, 0); /* not a byte past the head */
		assert_true(r == 1);
		got++;
		res[got] = '\0';
		if (got >= 4 && strcmp(res + got - 4, "\r\n\r\n") == 0)
			break;
	}
	assert_non_null(strstr(res, " 101 "));
	return fd;
}

/* A client frame's header (masked, as RFC 6455 requires of clients,
 * with a zero mask so the payload goes as it is): `fin`, opcode `op`,
 * payload length `len`. Returns its size. */
static size_t
ws_head(uint8_t *h, bool fin, int op, uint64_t len)
{
	size_t n = 2;

	h[0] = (uint8_t)((fin ? 0x80 : 0) | op);
	if (len < 126) {
		h[1] = (uint8_t)(0x80 | len);
	} else if (len < 65536) {
		h[1] = 0x80 | 126;
		h[2] = (uint8_t)(len >> 8);
		h[3] = (uint8_t)len;
		n = 4;
	} else {
		h[1] = 0x80 | 127;
		for (int i = 0; i < 8; i++)
			h[2 + i] = (uint8_t)(len >> (56 - 8 * i));
		n = 10;
	}
	memset(h + n, 0, 4);
	return n + 4;
}

/* Sends up to `n` bytes of 'x' to `fd`, stopping quietly when the server
 * closed it; returns what went. */
static size_t
send_junk(int fd, size_t n)
{
	static char x[65536];
	size_t sent = 0;
	int64_t end = it_mono_ms() + 10000;

	memset(x, 'x', sizeof(x));
	while (sent < n && it_mono_ms() < end) {
		size_t k = n - sent < sizeof(x) ? n - sent : sizeof(x);
		ssize_t r = send(fd, x, k, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (r > 0) {
			sent += (size_t)r;
		} else if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			(void)poll(&pfd, 1, 50);
		} else {
			break;
		}
	}
	return sent;
}

static void
ws_url(struct t_srv *s)
{
	snprintf(s->url, sizeof(s->url), "ws://127.0.0.1:%d", s->port);
}

/* ---- the client port ---------------------------------------------------- */

/* Ten connections without a token announce a 60 MiB frame and send
 * 8 MiB of it: nng's ws listener refuses the frame from its header (over
 * the largest frame read), nothing of it is kept. With nng's rep socket
 * each frame was allocated whole at its header (600 MB). A healthy ws
 * client beside them is served. */
static void
test_ws_frames_before_auth_are_small(void **state)
{
	struct t_srv *s = it_srv(*state, "ws");
	struct sluice_client *c;
	struct it_look look;
	uint8_t head[14];
	size_t hl = ws_head(head, true, 2, BIG_ANNOUNCED);
	int fds[ATTACKERS];
	long rss0, peak = 0;

	ws_url(s);
	s->args[0] = "--auth";
	s->args[1] = it_hostile_tokens(state, token);
	it_start(s);
	c = it_client_url(s->url);
	assert_int_equal(sluice_set_token(c, token), 0);
	it_put(c, "ws", "authenticated");
	it_look_start(&look, state, s, "probe", token, NULL);
	it_sleep_ms(300); /* the probe runs before, during and after */
	rss0 = it_rss_kb(s->pid);
	for (int i = 0; i < ATTACKERS; i++) {
		fds[i] = ws_open(s->port);
		it_sp_send_all(fds[i], head, hl);
		(void)send_junk(fds[i], BIG_SENT);
		long rss = it_rss_kb(s->pid);

		if (rss > peak)
			peak = rss;
	}
	for (int i = 0; i < ATTACKERS; i++) {
		long rss = it_rss_kb(s->pid);

		if (rss > peak)
			peak = rss;
		assert_true(it_hostile_closed_within(fds[i], 3000));
		close(fds[i]);
	}
	fprintf(stderr,
	    "ws frames before auth: RSS %ld KiB before, %ld at most\n", rss0,
	    peak);
	if (!it_sanitized())
		assert_true(peak - rss0 < RSS_BOUND_KB);
	it_look_ok(&look, "ws frames before auth");
	it_put(c, "ws", "still served");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* Under --auth: a connection that upgrades and says nothing, and one
 * that sends an unfinished message of small frames, are closed by
 * --handshake-timeout; a whole message over the limit before
 * authentication is closed at once. A client with the token is served
 * throughout. */
static void
test_ws_strangers_are_closed(void **state)
{
	struct t_srv *s = it_srv(*state, "ws");
	struct sluice_client *c;
	uint8_t head[14];
	size_t hl;
	int silent, slow, big;
	int64_t t0;

	ws_url(s);
	s->args[0] = "--auth";
	s->args[1] = it_hostile_tokens(state, token);
	s->args[2] = "--handshake-timeout";
	s->args[3] = "1s";
	it_start(s);
	c = it_client_url(s->url);
	assert_int_equal(sluice_set_token(c, token), 0);
	it_put(c, "ws", "authenticated");

	t0 = it_mono_ms();
	silent = ws_open(s->port);
	slow = ws_open(s->port);
	hl = ws_head(head, false, 2, SMALL_FRAME); /* a message begun */
	it_sp_send_all(slow, head, hl);
	(void)send_junk(slow, SMALL_FRAME);
	for (int i = 0; i < 8; i++) { /* continuations, never the last */
		hl = ws_head(head, false, 0, SMALL_FRAME);
		it_sp_send_all(slow, head, hl);
		(void)send_junk(slow, SMALL_FRAME);
	}
	big = ws_open(s->port);
	hl = ws_head(head, true, 2, 8192); /* whole, over 4096 unauthed */
	it_sp_send_all(big, head, hl);
	(void)send_junk(big, 8192);
	assert_true(it_hostile_closed_within(big, 3000));
	assert_true(it_hostile_closed_within(silent, 5000));
	assert_true(it_hostile_closed_within(slow, 5000));
	assert_true(it_mono_ms() - t0 >= 900); /* not before the timeout */
	close(silent);
	close(slow);
	close(big);
	assert_true(
	    it_hostile_wait_kv(c, "conns_closed_refused", 1, 3000) >= 1);
	assert_true(
	    it_hostile_wait_kv(c, "conns_closed_handshake", 2, 3000) >= 2);
	assert_true(it_log_count(s, "not authenticated yet") >= 1);
	it_put(c, "ws", "still served");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* Without --auth a ws:// client is served as any: puts, takes, and a
 * payload of several frames (nng's senders cut at 64 KiB) both ways. */
static void
test_ws_client_is_served(void **state)
{
	struct t_srv *s = it_srv(*state, "ws");
	struct sluice_client *c;
	struct sluice_task *t;
	size_t big = 1 << 20;
	char *p = malloc(big + 1);

	assert_non_null(p);
	memset(p, 'p', big);
	p[big] = '\0';
	ws_url(s);
	it_start(s);
	c = it_client_url(s->url);
	it_put(c, "ws", "small");
	it_put(c, "ws", p);
	t = it_take(c, "ws", 0, 0);
	assert_non_null(t);
	assert_int_equal(t->payload_len, 5);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	t = it_take(c, "ws", 0, 0);
	assert_non_null(t);
	assert_int_equal(t->payload_len, big);
	assert_memory_equal(t->payload, p, big);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	free(p);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- the replication port ---------------------------------------------- */

/* The replication port over ws:// under --auth: a follower with a
 * replica token follows; a stranger that upgrades and says nothing is
 * closed by --handshake-timeout. */
static void
test_ws_repl_port(void **state)
{
	struct it_node l, f;
	static char tfile[600];
	int port, silent;
	FILE *tf;

	it_node_init(state, &l, "leader");
	assert_int_equal(sscanf(l.repl, "tcp://127.0.0.1:%d", &port), 1);
	snprintf(l.repl, sizeof(l.repl), "ws://127.0.0.1:%d", port);
	it_node_arg(&l, "--auth", it_hostile_tokens(state, token));
	it_node_arg(&l, "--handshake-timeout", "1s");
	it_node_start(&l);
	assert_int_equal(sluice_set_token(l.c, token), 0);
	it_put(l.c, "mail", "one");
	it_node_init(state, &f, "follower");
	it_node_follows(&f, &l);
	snprintf(tfile, sizeof(tfile), "%s.token", f.s->data);
	assert_non_null(tf = fopen(tfile, "w"));
	fprintf(tf, "%s\n", token);
	assert_int_equal(fclose(tf), 0);
	it_node_arg(&f, "--repl-token-file", tfile);
	it_node_start(&f);
	it_node_caught_up(&l, &f);
	silent = ws_open(port);
	assert_true(it_hostile_closed_within(silent, 5000));
	close(silent);
	assert_true(it_hostile_wait_kv(
	                l.c, "repl_conns_closed_handshake", 1, 3000) >= 1);
	it_put(l.c, "mail", "two");
	it_node_caught_up(&l, &f);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
#define T(f) cmocka_unit_test_setup_teardown(f, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_ws_frames_before_auth_are_small),
		T(test_ws_strangers_are_closed),
		T(test_ws_client_is_served),
		cmocka_unit_test_setup_teardown(
		    test_ws_repl_port, it_setup, it_node_teardown),
	};
#undef T
	return cmocka_run_group_tests_name("hostile_ws", tests, NULL, NULL);
}
