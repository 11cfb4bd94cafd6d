/* tls+tcp:// and the replication port under attack, against a real
 * sluiced (docs/security.md, "tls+tcp:// and ipc://" and "The
 * replication port"): each test mounts the attack first, then checks
 * what bounds it, and that a healthy TLS client beside it is served
 * (it_look: p99 under IT_HOSTILE_P99_MS, or three times its twin's on a
 * busy machine) and that the server goes on.
 *
 *  - ten TLS connections without a token announcing 60 MiB frames and
 *    sending 8 MiB of them: each closed at the length, RSS flat (the
 *    twin, meanwhile, shakes hands with ten s_clients that only do
 *    that: the handshakes are the server's share of the attack's cost);
 *  - TLS handshakes that never complete (a silent TCP connection, a
 *    ClientHello cut short): closed by --handshake-timeout;
 *  - slowloris over TLS (a length trickled, a silent session): closed by
 *    --frame-timeout and --idle-timeout;
 *  - ipc:// under --auth: a 60 MiB length closed at once, a silent
 *    session by --handshake-timeout;
 *  - the replication port under --auth: frames announcing 60 MiB closed
 *    at the length, a connection that never shows a replica token
 *    closed by --handshake-timeout, past 64 such the oldest closed, and
 *    the counters in stats; on a TLS replication port, handshakes that
 *    never complete closed by --handshake-timeout.
 *
 * The attackers are openssl s_client processes fed from a file (-quiet
 * keeps them open after it is sent) or raw sockets. RSS bounds are
 * checked in plain builds only: under ASan the figures mean nothing. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"
#include "it_hostile.h"
#include "it_node.h"
#include "it_probe.h"
#include "it_sp.h"
#include "proto/msg.h"
#include "proto/sp.h"
#include "util/tokens.h"
#include "util/buf.h"

enum {
	BIG_ANNOUNCED = 60 << 20, /* what the frames say they carry */
	BIG_SENT = 8 << 20,       /* what each attacker sends of it */
	ATTACKERS = 10,
	RSS_BOUND_KB = 40 * 1024, /* growth allowed under the attack */
	REPL_UNAUTH_MAX = 64,     /* server/repl/lead_int.h */
	REPL_STRANGERS = 70,
};

static const char token[] = "ops-secret";

/* ---- helpers ------------------------------------------------------------ */

static struct sluice_client *
tls_client(const char *url, const char *ca, bool authed)
{
	struct sluice_client *c = it_client_url(url);

	it_rc(c, sluice_set_tls(c, ca, NULL, NULL), 0);
	if (authed)
		assert_int_equal(sluice_set_token(c, token), 0);
	return c;
}

/* Writes `len` bytes of `p` to the file `name` in the test's directory
 * (then `fill` bytes of 'x'); its path is returned. */
static const char *
attack_file(
    void **state, const char *name, const void *p, size_t len, size_t fill)
{
	static char path[8][600];
	static int next;
	char *out = path[next++ % 8], x[65536];
	FILE *f;

	snprintf(out, 600, "%s", t_path(*state, name));
	f = fopen(out, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, len, f), len);
	memset(x, 'x', sizeof(x));
	for (size_t done = 0; done < fill; done += sizeof(x))
		assert_int_equal(fwrite(x, 1, sizeof(x), f), sizeof(x));
	assert_int_equal(fclose(f), 0);
	return out;
}

/* An openssl s_client to 127.0.0.1:port sending the file `in`, and then
 * staying (-quiet ignores the end of its input) until the server
 * closes; or, not `stay`, leaving at the end of its input. */
static pid_t
s_client_as(int port, const char *ca, const char *in, bool stay)
{
	char addr[64];
	pid_t pid;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ffd = open(in, O_RDONLY), nul = open("/dev/null", O_WRONLY);

		dup2(ffd, 0);
		dup2(nul, 1);
		dup2(nul, 2);
		execlp("openssl", "openssl", "s_client", "-connect", addr,
		    "-CAfile", ca, stay ? "-quiet" : "-brief", (char *)NULL);
		_exit(127);
	}
	it_track_pid(pid);
	return pid;
}

static pid_t
s_client(int port, const char *ca, const char *in)
{
	return s_client_as(port, ca, in, true);
}

static bool all_exit(pid_t *pids, int n, int ms);

/* As many s_clients as the attack starts, each making its TLS handshake
 * with the twin and leaving: what the attack costs a server that is not
 * attacked. */
struct harmless {
	int port;
	const char *ca;
	pid_t pids[ATTACKERS];
};

static void
harmless_start(struct harmless *h)
{
	for (int i = 0; i < ATTACKERS; i++)
		h->pids[i] = s_client_as(h->port, h->ca, "/dev/null", false);
}

static void
harmless_stop(struct harmless *h)
{
	assert_true(all_exit(h->pids, ATTACKERS, 10000));
}

/* Waits up to `ms` for every one of `n` processes to end (the server
 * closed their connections); true when they all did. Those left are
 * killed. */
static bool
all_exit(pid_t *pids, int n, int ms)
{
	int64_t end = it_mono_ms() + ms;
	int left = n;

	while (left > 0 && it_mono_ms() < end) {
		for (int i = 0; i < n; i++)
			if (pids[i] > 0 &&
			    waitpid(pids[i], NULL, WNOHANG) == pids[i]) {
				pids[i] = 0;
				left--;
			}
		if (left > 0)
			it_sleep_ms(50);
	}
	for (int i = 0; i < n; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
	return left == 0;
}

/* ---- tls+tcp:// ------------------------------------------------------- */

/* Under --auth, ten TLS clients without a token each announce a 60 MiB
 * frame and send 8 MiB of it: each is closed at the length (it is over
 * FACE_SP_PREAUTH_MAX), none of it is kept. With nng's rep socket each
 * frame was allocated as it arrived (+80 MB). */
static void
test_tls_frames_before_auth_are_small(void **state)
{
	struct t_srv *s = it_srv(*state, "tls");
	const char *ca = it_hostile_tls_setup(s), *in;
	struct sluice_client *c;
	struct it_look look;
	uint8_t head[SP_HANDSHAKE + SP_LEN];
	pid_t pids[ATTACKERS];
	long rss0, peak = 0;
	struct harmless twin_load = { .ca = ca };

	s->args[4] = "--auth";
	s->args[5] = it_hostile_tokens(state, token);
	it_start(s);
	c = tls_client(s->url, ca, true);
	it_put(c, "tls", "authenticated");
	sp_handshake(head, SP_PROTO_REQ0);
	sp_store_len(head + SP_HANDSHAKE, BIG_ANNOUNCED);
	in = attack_file(state, "big", head, sizeof(head), BIG_SENT);
	it_look_start(&look, state, s, "probe", token, ca);
	twin_load.port = look.twin->port;
	it_sleep_ms(300); /* the probe runs before, during and after */
	rss0 = it_rss_kb(s->pid);
	for (int i = 0; i < ATTACKERS; i++)
		pids[i] = s_client(s->port, ca, in);
	harmless_start(&twin_load);
	for (int i = 0; i < 100 &&
	     it_node_kv(c, "conns_closed_refused") < (uint64_t)ATTACKERS;
	     i++) {
		long rss = it_rss_kb(s->pid);

		if (rss > peak)
			peak = rss;
		it_sleep_ms(100);
	}
	fprintf(stderr,
	    "tls frames before auth: RSS %ld KiB before, %ld at "
	    "most\n",
	    rss0, peak);
	assert_true(it_node_kv(c, "conns_closed_refused") >= ATTACKERS);
	assert_true(all_exit(pids, ATTACKERS, 10000));
	harmless_stop(&twin_load);
	it_sleep_ms(500);
	if (!it_sanitized())
		assert_true(peak - rss0 < RSS_BOUND_KB);
	it_look_ok(&look, "tls frames before auth");
	assert_true(it_log_count(s, "not authenticated yet") >= 1);
	it_put(c, "tls", "still served");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A TLS handshake that never completes: a TCP connection that sends
 * nothing, and one that sends the first bytes of a ClientHello and
 * stops. Both are closed by --handshake-timeout (1 s here), without
 * --auth too; nng's transport gave them 10 s. */
static void
test_tls_handshake_never_completes(void **state)
{
	static const uint8_t hello[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01 };
	struct t_srv *s = it_srv(*state, "tls");
	const char *ca = it_hostile_tls_setup(s);
	struct sluice_client *c;
	struct it_look look;
	int fd[2];
	int64_t t0;

	s->args[4] = "--handshake-timeout";
	s->args[5] = "1s";
	it_start(s);
	c = tls_client(s->url, ca, false);
	it_put(c, "tls", "before");
	it_look_start(&look, state, s, "probe", NULL, ca);
	t0 = it_mono_ms();
	fd[0] = it_sp_dial(s->port);
	fd[1] = it_sp_dial(s->port);
	it_sp_send_all(fd[1], hello, sizeof(hello));
	assert_true(it_hostile_closed_within(fd[0], 5000));
	assert_true(it_hostile_closed_within(fd[1], 5000));
	fprintf(stderr, "tls handshake never completes: closed after %lld ms\n",
	    (long long)(it_mono_ms() - t0));
	close(fd[0]);
	close(fd[1]);
	assert_true(
	    it_hostile_wait_kv(c, "conns_closed_handshake", 2, 3000) >= 2);
	it_look_ok(&look, "tls handshake never completes");
	it_put(c, "tls", "after");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* Slowloris over TLS: a session whose first frame's length stops after
 * three bytes is closed by --frame-timeout; a session that sends its SP
 * header and then nothing, by --idle-timeout. */
static void
test_tls_slowloris_is_closed(void **state)
{
	struct t_srv *s = it_srv(*state, "tls");
	const char *ca = it_hostile_tls_setup(s), *part, *silent;
	struct sluice_client *c;
	struct it_look look;
	uint8_t head[SP_HANDSHAKE + 3] = { 0 };
	pid_t pids[2];

	s->args[4] = "--frame-timeout";
	s->args[5] = "1s";
	s->args[6] = "--idle-timeout";
	s->args[7] = "2s";
	it_start(s);
	sp_handshake(head, SP_PROTO_REQ0);
	part = attack_file(state, "part", head, sizeof(head), 0);
	silent = attack_file(state, "silent", head, SP_HANDSHAKE, 0);
	it_look_start(&look, state, s, "probe", NULL, ca);
	pids[0] = s_client(s->port, ca, part);
	pids[1] = s_client(s->port, ca, silent);
	assert_true(all_exit(pids, 2, 10000));
	it_look_ok(&look, "tls slowloris");
	c = tls_client(s->url, ca, false);
	assert_true(it_node_kv(c, "conns_closed_frame") >= 1);
	assert_true(it_node_kv(c, "conns_closed_idle") >= 1);
	it_put(c, "tls", "still served");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- ipc:// ------------------------------------------------------------ */

/* ipc:// under --auth: a stranger on the socket announcing a 60 MiB
 * message (nng's ipc framing: a type byte 1, then the length) is closed
 * at the length; one that stops after its SP header is closed by
 * --handshake-timeout. A client with the token is served. */
static void
test_ipc_is_bounded(void **state)
{
	struct t_srv *s = it_srv(*state, "ipc");
	const char *path = t_path(*state, "sock");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t head[SP_HANDSHAKE + 1 + SP_LEN];
	struct sluice_client *c;
	char tmp[40];
	int fd[2];

	if (strlen(path) + strlen("ipc://") >= sizeof(s->url) ||
	    strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(
		    tmp, sizeof(tmp), "/tmp/sluice-it-%ld.ipc", (long)getpid());
		path = tmp;
	}
	snprintf(s->url, sizeof(s->url), "ipc://%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	s->args[0] = "--auth";
	s->args[1] = it_hostile_tokens(state, token);
	s->args[2] = "--handshake-timeout";
	s->args[3] = "1s";
	it_start(s);
	c = it_client_url(s->url);
	assert_int_equal(sluice_set_token(c, token), 0);
	it_put(c, "ipc", "authenticated");

	sp_handshake(head, SP_PROTO_REQ0);
	head[SP_HANDSHAKE] = 1;
	sp_store_len(head + SP_HANDSHAKE + 1, BIG_ANNOUNCED);
	for (int i = 0; i < 2; i++) {
		fd[i] = socket(AF_UNIX, SOCK_STREAM, 0);
		assert_true(fd[i] >= 0);
		assert_int_equal(
		    connect(fd[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	it_sp_send_all(fd[0], head, sizeof(head));
	it_sp_send_all(fd[1], head, SP_HANDSHAKE);
	assert_true(it_hostile_closed_within(fd[0], 3000));
	assert_true(it_hostile_closed_within(fd[1], 5000));
	close(fd[0]);
	close(fd[1]);
	assert_true(it_node_kv(c, "conns_closed_refused") >= 1);
	assert_true(
	    it_hostile_wait_kv(c, "conns_closed_handshake", 1, 3000) >= 1);
	it_put(c, "ipc", "still served");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	unlink(path);
}

/* ---- the replication port ------------------------------------------ */

/* Under --auth the replication port's strangers: ten connections
 * announcing 60 MiB frames and sending 8 MiB are closed at the length
 * (a follower's requests are small: REPL_REQ_MAX); one that completes
 * the SP handshake and never shows a replica token is closed by
 * --handshake-timeout; past 64 of those the oldest are closed. The
 * client port is served meanwhile. */
static void
test_repl_port_strangers_are_bounded(void **state)
{
	struct t_srv *s = it_srv(*state, "lead");
	struct sluice_client *c;
	struct it_look look;
	static char repl[64];
	uint8_t len[SP_LEN];
	char *junk = malloc(1 << 20);
	int rport = t_free_port(), fds[ATTACKERS], idle, many[REPL_STRANGERS];
	long rss0, peak = 0;
	int64_t t0;

	assert_non_null(junk);
	memset(junk, 'x', 1 << 20);
	snprintf(repl, sizeof(repl), "tcp://127.0.0.1:%d", rport);
	s->args[0] = "--auth";
	s->args[1] = it_hostile_tokens(state, token);
	s->args[2] = "--repl-listen";
	s->args[3] = repl;
	s->args[4] = "--handshake-timeout";
	s->args[5] = "2s";
	it_start(s);
	c = it_client(s);
	assert_int_equal(sluice_set_token(c, token), 0);
	it_put(c, "lead", "authenticated");
	it_look_start(&look, state, s, "probe", token, NULL);

	rss0 = it_rss_kb(s->pid);
	sp_store_len(len, BIG_ANNOUNCED);
	for (int i = 0; i < ATTACKERS; i++) {
		fds[i] = it_sp_open(rport);
		it_sp_send_all(fds[i], len, sizeof(len));
	}
	/* what each sends of it, as far as the server takes it */
	for (int k = 0; k < BIG_SENT >> 20; k++)
		for (int i = 0; i < ATTACKERS; i++)
			if (fds[i] >= 0 &&
			    send(fds[i], junk, 1 << 20,
			        MSG_DONTWAIT | MSG_NOSIGNAL) < 0 &&
			    errno != EAGAIN) {
				close(fds[i]);
				fds[i] = -1;
			}
	for (int i = 0; i < ATTACKERS; i++) {
		long rss = it_rss_kb(s->pid);

		if (rss > peak)
			peak = rss;
		if (fds[i] >= 0) {
			assert_true(it_hostile_closed_within(fds[i], 5000));
			close(fds[i]);
		}
	}
	fprintf(stderr,
	    "repl frames before auth: RSS %ld KiB before, %ld at "
	    "most\n",
	    rss0, peak);
	if (!it_sanitized())
		assert_true(peak - rss0 < RSS_BOUND_KB);

	t0 = it_mono_ms();
	idle = it_sp_open(rport);
	assert_true(it_hostile_closed_within(idle, 6000));
	fprintf(stderr, "repl stranger closed after %lld ms\n",
	    (long long)(it_mono_ms() - t0));
	close(idle);
	assert_true(
	    it_hostile_wait_kv(c, "repl_conns_closed_handshake", 1, 3000) >= 1);

	/* 70 strangers at once: past 64 the oldest are closed */
	for (int i = 0; i < REPL_STRANGERS; i++)
		many[i] = it_sp_open(rport);
	assert_true(it_hostile_wait_kv(c, "repl_conns_evicted_unauth",
	                REPL_STRANGERS - REPL_UNAUTH_MAX,
	                3000) >= REPL_STRANGERS - REPL_UNAUTH_MAX);
	assert_true(it_hostile_closed_within(many[0], 3000));
	for (int i = 0; i < REPL_STRANGERS; i++)
		close(many[i]);
	it_look_ok(&look, "repl strangers");
	it_put(c, "lead", "still served");
	free(junk);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A TLS replication port: a TCP connection that never begins its TLS
 * handshake, and one that stops in its ClientHello, are closed by
 * --handshake-timeout (nng's socket never closed them). */
static void
test_repl_tls_handshake_never_completes(void **state)
{
	static const uint8_t hello[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01 };
	struct t_srv *s = it_srv(*state, "lead");
	struct sluice_client *c;
	static char repl[64];
	int rport = t_free_port(), fd[2];

	it_hostile_tls_setup(s);
	snprintf(repl, sizeof(repl), "tls+tcp://127.0.0.1:%d", rport);
	snprintf(s->url, sizeof(s->url), "tcp://127.0.0.1:%d", s->port);
	s->args[4] = "--repl-listen";
	s->args[5] = repl;
	s->args[6] = "--handshake-timeout";
	s->args[7] = "1s";
	it_start(s);
	c = it_client(s);
	it_put(c, "lead", "before");
	fd[0] = it_sp_dial(rport);
	fd[1] = it_sp_dial(rport);
	it_sp_send_all(fd[1], hello, sizeof(hello));
	assert_true(it_hostile_closed_within(fd[0], 5000));
	assert_true(it_hostile_closed_within(fd[1], 5000));
	close(fd[0]);
	close(fd[1]);
	assert_true(
	    it_hostile_wait_kv(c, "repl_conns_closed_handshake", 2, 3000) >= 2);
	it_put(c, "lead", "after");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A follower is never taken for a stranger: under --auth with a short
 * --handshake-timeout, a follower with a token that may replicate keeps
 * its connection (it is ready once its first fetch's token is accepted,
 * even while that fetch waits for records) and follows. */
static void
test_repl_follower_is_not_a_stranger(void **state)
{
	struct it_node l, f;
	static char tfile[600];
	FILE *tf;

	it_node_init(state, &l, "leader");
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
	it_sleep_ms(3000); /* three handshake timeouts, fetches waiting */
	it_put(l.c, "mail", "two");
	it_node_caught_up(&l, &f);
	assert_int_equal(it_node_kv(l.c, "repl_conns_closed_handshake"), 0);
	assert_int_equal(it_node_kv(l.c, "repl_conns_evicted_unauth"), 0);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
#define T(f) cmocka_unit_test_setup_teardown(f, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_tls_frames_before_auth_are_small),
		T(test_tls_handshake_never_completes),
		T(test_tls_slowloris_is_closed),
		T(test_ipc_is_bounded),
		T(test_repl_port_strangers_are_bounded),
		T(test_repl_tls_handshake_never_completes),
		T(test_repl_follower_is_not_a_stranger),
	};
#undef T
	return cmocka_run_group_tests_name("hostile_tls", tests, NULL, NULL);
}
