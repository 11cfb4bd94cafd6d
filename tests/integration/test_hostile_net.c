/* The connection layer of the native (tcp://) and beanstalk faces under
 * attack, against a real sluiced (docs/security.md, "Connections of the
 * native and beanstalk faces"): each test mounts the attack first, then
 * checks what bounds it, and that a healthy client beside it is served
 * (it_look: its p99 under IT_HOSTILE_P99_MS, or three times its twin's)
 * and that the server recovers.
 *
 *  - descriptors exhausted (the server's limit lowered with prlimit):
 *    accept pauses instead of spinning (the server's CPU time), one log
 *    line per interval, the counters in stats, new connections served
 *    once the attack's close;
 *  - a client that never reads its replies (pipelined peeks of a 1 MiB
 *    task), on both faces: RSS bounded, the connection closed by
 *    --stall-timeout;
 *  - frames announcing 60 MiB before authentication under --auth:
 *    closed at the length, RSS flat; the full limit after auth;
 *  - slowloris on both faces (a silent connection, a frame or a command
 *    trickled): closed by --handshake-timeout and --frame-timeout; an
 *    idle connection stays (no --idle-timeout by default), and a large
 *    frame sent slowly but steadily arrives;
 *  - --idle-timeout spares a parked take, a held lease, a waiting
 *    reserve and a reserved job;
 *  - 5,000 idle connections: their memory, and its return after close;
 *  - --max-conns and --max-unauth-conns (and /metrics' count);
 *  - tls+tcp://: --max-conns, --max-unauth-conns and the handshake
 *    timeout under --auth, and a TLS client that never reads (openssl
 *    s_client writing into a pipe nobody reads) closed for its unread
 *    replies (test_hostile_tls mounts the other attacks over TLS);
 *  - a frame whose request id lacks the top bit: the connection closes;
 *  - beanstalk: kick-job 0 and delete 0 answer NOT_FOUND, watching past
 *    1,024 tubes OUT_OF_MEMORY (as docs/beanstalk.md says).
 *
 * RSS bounds are checked in plain builds only: under ASan every free is
 * quarantined and the figures mean nothing. */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "it.h"
#include "it_hostile.h"
#include "it_http.h"
#include "it_probe.h"
#include "it_sp.h"
#include "bsc.h"
#include "proto/msg.h"
#include "proto/sp.h"
#include "util/tokens.h"
#include "util/buf.h"

/* LeakSanitizer's suppressions for this test program alone (the servers
 * it starts keep the full check): its TLS clients are refused and closed
 * by the server's caps while nng is still dialing or shaking hands, and
 * nng 1.5.2 (Debian 12) then leaks that pipe's TLS state in its own
 * threads (mbedtls_ssl_setup and nng's pipe buffers, no frame of ours),
 * as it does for a socket closed while it reconnects (it.h,
 * it_crash_restart). A sanitized build calls this; a plain one never. */
const char *__lsan_default_suppressions(void);

const char *
__lsan_default_suppressions(void)
{
	return "leak:mbedtls_ssl_setup\nleak:libnng.so\n";
}

enum {
	SERVER_FDS = 128,  /* the descriptor limit of the fd test */
	PAYLOAD = 1 << 20, /* the unread replies' task: 1 MiB */
	PEEKS = 300,
};

static const char token[] = "ops-secret";

/* ---- helpers ------------------------------------------------------------ */

/* A TCP connection to 127.0.0.1:port within 1 s, nothing sent; -1 when
 * none could be made (the test's own limits). */
static int
dial(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct pollfd pfd;

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	pfd = (struct pollfd) { .fd = fd, .events = POLLOUT };
	if (poll(&pfd, 1, 3000) != 1) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, 0); /* blocking again */
	return fd;
}

/* True while nothing closes `fd` for `ms` (nothing is read). */
static bool
open_for(int fd, int ms)
{
	char b;
	int64_t end = it_mono_ms() + ms;

	while (it_mono_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		if (poll(&pfd, 1, 50) > 0 &&
		    recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
			return false;
		if (pfd.revents & (POLLHUP | POLLERR))
			return false;
	}
	return true;
}

/* Sends what it can of `p` (the peer may close meanwhile). */
static void
send_some(int fd, const void *p, size_t n)
{
	size_t done = 0;
	int64_t end = it_mono_ms() + 3000;

	while (done < n && it_mono_ms() < end) {
		ssize_t w = send(fd, (const char *)p + done, n - done,
		    MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w > 0) {
			done += (size_t)w;
			continue;
		}
		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return;
		it_sleep_ms(5);
	}
}

/* The SP header a requester sends. */
static void
send_header(int fd)
{
	uint8_t hs[SP_HANDSHAKE];

	sp_handshake(hs, SP_PROTO_REQ0);
	send_some(fd, hs, sizeof(hs));
}

static void
raise_own_nofile(void)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static char *
beanstalk_arg(int *port)
{
	static char addr[8][32];
	static int next;
	char *a = addr[next++ % 8];

	*port = t_free_port();
	snprintf(a, 32, "127.0.0.1:%d", *port);
	return a;
}

static struct sluice_client *
authed_client(const struct t_srv *s)
{
	struct sluice_client *c = it_client(s);

	assert_int_equal(sluice_set_token(c, token), 0);
	return c;
}

/* ---- descriptors -------------------------------------------------------- */

/* Past the descriptor limit accept() fails with EMFILE: the server must
 * neither spin nor flood its log, must count it, keep serving those
 * connected, and serve new connections once descriptors are free. */
static void
test_descriptor_exhaustion_pauses_accept(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct rlimit rl = { SERVER_FDS, SERVER_FDS };
	struct sluice_client *c, *late;
	struct it_look look;
	int bport, fds[400], nfds = 0;
	struct bsc b;
	long t0, used;
	char *r;

	s->args[0] = "--beanstalk";
	s->args[1] = beanstalk_arg(&bport);
	it_start(s);
	c = it_client(s);
	it_put(c, "warm", "x");
	it_look_start(&look, state, s, "probe", NULL, NULL);
	it_sleep_ms(300);
	assert_int_equal(prlimit(s->pid, RLIMIT_NOFILE, &rl, NULL), 0);

	/* the attack: more connections than the server has descriptors,
	 * on both faces, held open */
	for (int i = 0; i < 400; i++) {
		int fd = dial(i % 4 == 3 ? bport : s->port);

		if (fd >= 0)
			fds[nfds++] = fd;
	}
	assert_true(nfds > SERVER_FDS);
	it_sleep_ms(500);
	t0 = it_cpu_ms(s->pid);
	assert_true(t0 >= 0);
	it_sleep_ms(1500);
	used = it_cpu_ms(s->pid);
	assert_true(used >= 0);
	used -= t0;
	fprintf(
	    stderr, "descriptors exhausted: %ld ms of CPU in 1.5 s\n", used);
	/* spinning on accept cost 0.66 s per second (1 s of these 1.5) */
	assert_true(used < (it_sanitized() ? 750 : 300));
	assert_true(it_node_kv(c, "conns_accept_exhausted") >= 1);
	assert_true(it_node_kv(c, "conns_refused_fds") >= 1);
	/* one line per 10 s, whatever the number of refusals */
	assert_true(it_log_count(s, "out of descriptors") >= 1);
	assert_true(it_log_count(s, "out of descriptors") <= 2);
	assert_true(it_log_count(s, "") < 100); /* 100,000 a second before */
	/* the soft limit was raised to the hard one at start */
	assert_int_equal(it_log_count(s, "descriptor limit"), 1);

	/* the attack stops: new connections are served on both faces */
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	it_look_ok(&look, "descriptors exhausted");
	it_sleep_ms(500);
	late = it_client(s);
	it_put(late, "late", "after the attack");
	sluice_close(late);
	assert_int_equal(bsc_open(&b, bport), 0);
	r = bsc_cmd(&b, "use after\r\n");
	assert_string_equal(r, "USING after\r\n");
	free(r);
	bsc_close(&b);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* Samples the server's RSS every 100 ms into *peak while the stalled
 * connection is held, until the stall timeout closes it (stats'
 * conns_closed_stalled reaches 1; at most 10 s): the peak while it
 * held its replies, whenever the timeout came. */
static void
sample_until_stalled(struct t_srv *s, struct sluice_client *c, long *peak)
{
	int64_t end = it_mono_ms() + 10000;
	bool closed = false;

	while (!closed && it_mono_ms() < end) {
		long rss;

		it_sleep_ms(100);
		closed = it_node_kv(c, "conns_closed_stalled") >= 1;
		rss = it_rss_kb(s->pid);
		if (rss > *peak)
			*peak = rss;
	}
}

/* ---- unread replies ----------------------------------------------------- */

/* 300 pipelined peeks of a 1 MiB task, never read: the server holds at
 * most its output mark and a few replies in progress, and closes the
 * connection after --stall-timeout. */
static void
test_unread_replies_are_bounded(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct it_look look;
	struct buf req, out;
	char *payload = malloc(PAYLOAD);
	long rss0, rss, peak = 0;
	int fd, small = 16384;
	uint64_t id;

	s->args[0] = "--stall-timeout"; /* RSS is sampled until it closes */
	s->args[1] = "1s";
	it_start(s);
	c = it_client(s);
	assert_non_null(payload);
	memset(payload, 'p', PAYLOAD);
	sluice_put_opts_init(&o);
	o.tube = "big";
	it_rc(c, sluice_put(c, &o, payload, PAYLOAD, &id, NULL), 0);
	free(payload);
	it_look_start(&look, state, s, "probe", NULL, NULL);
	it_sleep_ms(300);
	rss0 = it_rss_kb(s->pid);

	fd = it_sp_open(s->port);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	buf_init(&req);
	buf_init(&out);
	for (int i = 0; i < PEEKS; i++) {
		struct msg_req q = { .op = MSG_OP_PEEK, .id = id };
		uint32_t bt = SP_ID_BIT | (uint32_t)(i + 1);

		buf_reset(&req);
		assert_int_equal(msg_encode_req(&req, &q), 0);
		it_sp_frame(&out, &bt, 1, req.data, req.len);
	}
	it_sp_send_all(fd, out.data, out.len);
	sample_until_stalled(s, c, &peak);
	fprintf(stderr, "unread replies: RSS %ld KiB before, %ld at most\n",
	    rss0, peak);
	/* the mark (4 MiB) and 4 large replies in progress, each copied
	 * once; 300 MiB without the bound */
	if (!it_sanitized())
		assert_true(peak - rss0 < 48 * 1024);
	assert_int_equal(
	    it_hostile_wait_kv(c, "conns_closed_stalled", 1, 10000), 1);
	assert_true(it_hostile_closed_within(fd, 5000));
	close(fd);
	it_look_ok(&look, "unread replies");
	if (!it_sanitized()) {
		it_sleep_ms(500);
		rss = it_rss_kb(s->pid);
		fprintf(
		    stderr, "unread replies: RSS %ld KiB after close\n", rss);
		assert_true(rss - rss0 < 16 * 1024);
	}
	buf_fini(&req);
	buf_fini(&out);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* The same on the beanstalk face: 300 pipelined peeks of a 1 MiB job,
 * never read. */
static void
test_beanstalk_unread_replies_are_bounded(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct bsc b, lazy;
	struct buf cmds;
	char *payload = malloc(PAYLOAD + 64), line[64], *r;
	long rss0, peak = 0;
	int bport, small = 16384, n;
	unsigned long long id;

	s->args[0] = "--beanstalk";
	s->args[1] = beanstalk_arg(&bport);
	s->args[2] = "--stall-timeout"; /* RSS is sampled until it closes */
	s->args[3] = "1s";
	it_start(s);
	c = it_client(s);
	assert_non_null(payload);
	assert_int_equal(bsc_open(&b, bport), 0);
	n = snprintf(payload, 64, "put 0 0 60 %d\r\n", PAYLOAD);
	memset(payload + n, 'j', PAYLOAD);
	memcpy(payload + n + PAYLOAD, "\r\n", 2);
	assert_int_equal(bsc_send(&b, payload, (size_t)n + PAYLOAD + 2), 0);
	free(payload);
	r = bsc_reply(&b);
	assert_int_equal(sscanf(r, "INSERTED %llu", &id), 1);
	free(r);
	bsc_close(&b);

	rss0 = it_rss_kb(s->pid);
	assert_int_equal(bsc_open(&lazy, bport), 0);
	setsockopt(lazy.fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	buf_init(&cmds);
	snprintf(line, sizeof(line), "peek %llu\r\n", id);
	for (int i = 0; i < PEEKS; i++)
		buf_put(&cmds, line, strlen(line));
	assert_int_equal(bsc_send(&lazy, cmds.data, cmds.len), 0);
	sample_until_stalled(s, c, &peak);
	fprintf(stderr,
	    "beanstalk unread replies: RSS %ld KiB before, %ld at most\n", rss0,
	    peak);
	if (!it_sanitized())
		assert_true(peak - rss0 < 48 * 1024);
	assert_int_equal(
	    it_hostile_wait_kv(c, "conns_closed_stalled", 1, 10000), 1);
	assert_true(bsc_closed(&lazy, 5000));
	bsc_close(&lazy);
	buf_fini(&cmds);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- before authentication ---------------------------------------------- */

/* Under --auth, 10 connections announce 60 MiB frames and send their
 * bytes: each is closed at the length (an auth request is tiny), RSS
 * stays flat; once authenticated, a client may send large messages. */
static void
test_frames_before_auth_are_small(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	static uint8_t junk[1 << 20];
	struct sluice_put_opts o;
	struct sluice_client *c;
	char *payload;
	long rss0, peak = 0;
	struct it_look look;
	int fds[10];
	uint64_t id;

	s->args[0] = "--auth";
	s->args[1] = it_hostile_tokens(state, token);
	it_start(s);
	c = authed_client(s);
	it_put(c, "warm", "x");
	rss0 = it_rss_kb(s->pid);
	it_look_start(&look, state, s, "healthy", token, NULL);
	for (int i = 0; i < 10; i++) {
		uint8_t len[SP_LEN];

		fds[i] = it_sp_open(s->port);
		sp_store_len(len, 60u << 20);
		send_some(fds[i], len, sizeof(len));
		send_some(fds[i], junk, sizeof(junk));
		it_sleep_ms(100); /* the healthy client between the sends */
	}
	it_look_ok(&look, "frames before auth");
	for (int i = 0; i < 10; i++) {
		long rss = it_rss_kb(s->pid);

		if (rss > peak)
			peak = rss;
		assert_true(it_hostile_closed_within(fds[i], 5000));
		close(fds[i]);
	}
	fprintf(stderr, "frames before auth: RSS %ld KiB before, %ld at most\n",
	    rss0, peak);
	if (!it_sanitized())
		assert_true(peak - rss0 < 16 * 1024); /* 423 MB unbounded */
	assert_true(it_node_kv(c, "conns_closed_refused") >= 10);
	assert_true(it_log_count(s, "(not authenticated yet)") >= 1);

	/* authenticated, the limit is the protocol's */
	payload = malloc(PAYLOAD);
	assert_non_null(payload);
	memset(payload, 'a', PAYLOAD);
	sluice_put_opts_init(&o);
	o.tube = "big";
	it_rc(c, sluice_put(c, &o, payload, PAYLOAD, &id, NULL), 0);
	free(payload);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- slowloris ---------------------------------------------------------- */

/* A 256 KiB put sent 32 KiB each quarter of a second, 1.75 s in all over
 * a 1 s frame timeout: a slow link, not a slowloris (each 16 KiB restarts
 * it). */
static void
slow_but_steady(int port)
{
	static char payload[256 << 10];
	struct msg_req q = { .op = MSG_OP_PUT };
	struct buf req, out, body;
	struct msg_rep rep;
	uint32_t bt = SP_ID_BIT | 9, got;
	int fd = it_sp_open(port);

	memset(payload, 's', sizeof(payload));
	q.put.tube = (struct msg_str) { "slow", 4 };
	q.put.payload = (struct msg_str) { payload, sizeof(payload) };
	q.put.priority = 1024;
	q.put.ttr = 60000;
	buf_init(&req);
	buf_init(&out);
	buf_init(&body);
	assert_int_equal(msg_encode_req(&req, &q), 0);
	it_sp_frame(&out, &bt, 1, req.data, req.len);
	for (size_t off = 0; off < out.len; off += 32 << 10) {
		size_t n =
		    out.len - off < (32u << 10) ? out.len - off : (32u << 10);

		it_sp_send_all(fd, out.data + off, n);
		if (off + n < out.len)
			it_sleep_ms(250);
	}
	assert_true(it_sp_recv(fd, &got, 1, &body));
	assert_int_equal(msg_decode_rep(body.data, body.len, NULL, &rep), 0);
	assert_int_equal(rep.status, 0);
	close(fd);
	buf_fini(&req);
	buf_fini(&out);
	buf_fini(&body);
}

/* The idle connections of the test below, watched on a thread of its
 * own while a large frame comes slowly but steadily: whether each
 * stayed (nothing closed it). */
struct idle_watch {
	pthread_t th;
	int sp;
	struct bsc *bs;
	bool sp_open, bs_quiet;
};

static void *
idle_watch_run(void *arg)
{
	struct idle_watch *w = arg;

	w->sp_open = open_for(w->sp, 1000);
	w->bs_quiet = bsc_quiet(w->bs, 500);
	return NULL;
}

/* Connections that send nothing, or trickle a frame or a command, are
 * closed by the handshake and frame timeouts on both faces; one idle
 * after its handshake stays (no --idle-timeout by default). */
static void
test_slowloris_is_closed_on_both_faces(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct it_look look;
	struct bsc put, line, idle;
	struct idle_watch w;
	int bport, silent, trickle, quiet;
	uint8_t frame[SP_LEN + 4] = { 0 };
	bool closed_sp = false, closed_put = false, closed_line = false;
	const char *cmd = "stats-tube default";

	s->args[0] = "--beanstalk";
	s->args[1] = beanstalk_arg(&bport);
	s->args[2] = "--handshake-timeout";
	s->args[3] = "1s";
	s->args[4] = "--frame-timeout";
	s->args[5] = "1s";
	it_start(s);
	c = it_client(s);
	it_look_start(&look, state, s, "probe", NULL, NULL);

	silent = it_sp_dial(s->port);
	quiet = it_sp_open(s->port);
	trickle = it_sp_open(s->port);
	sp_store_len(frame, 4);
	assert_int_equal(bsc_open(&put, bport), 0);
	assert_int_equal(bsc_open(&line, bport), 0);
	assert_int_equal(bsc_open(&idle, bport), 0);
	assert_int_equal(bsc_sends(&put, "put 0 0 60 10\r\n"), 0);
	/* a byte every 300 ms of each: each unit stays incomplete */
	for (int i = 0; i < 30 && !(closed_sp && closed_put && closed_line);
	     i++) {
		if (!closed_sp)
			send_some(trickle, frame + i % sizeof(frame), 1);
		if (!closed_put)
			bsc_send(&put, "x", 1);
		if (!closed_line)
			bsc_send(&line, cmd + i % strlen(cmd), 1);
		it_sleep_ms(300);
		closed_sp = closed_sp || it_hostile_closed_within(trickle, 1);
		closed_put = closed_put || bsc_closed(&put, 1);
		closed_line = closed_line || bsc_closed(&line, 1);
	}
	assert_true(closed_sp);
	assert_true(closed_put);
	assert_true(closed_line);
	assert_true(it_hostile_closed_within(silent, 3000));
	assert_true(it_node_kv(c, "conns_closed_handshake") >= 1);
	assert_true(it_node_kv(c, "conns_closed_frame") >= 3);
	/* idle is not slow: both stay (watched beside the slow but steady
	 * frame) */
	w = (struct idle_watch) { .sp = quiet, .bs = &idle };
	assert_int_equal(pthread_create(&w.th, NULL, idle_watch_run, &w), 0);
	close(silent);
	close(trickle);
	bsc_close(&put);
	bsc_close(&line);
	it_look_ok(&look, "slowloris");
	slow_but_steady(s->port);
	pthread_join(w.th, NULL);
	assert_true(w.sp_open);
	assert_true(w.bs_quiet);
	close(quiet);
	bsc_close(&idle);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* --idle-timeout closes a connection that does nothing, and spares one
 * whose take is parked, one whose session holds a lease, a beanstalk
 * reserve waiting and a beanstalk connection holding a job. */
static void
test_idle_timeout_spares_waiting_and_holding(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c, *worker;
	struct sluice_task *t;
	struct buf req, out, body;
	struct msg_str tube = { "parked", 6 };
	struct msg_req q = { .op = MSG_OP_TAKE };
	struct bsc idle, waiting, holding;
	struct msg_rep rep;
	uint32_t bt = SP_ID_BIT | 7, got;
	int bport, bare, parked;
	char *r;

	s->args[0] = "--beanstalk";
	s->args[1] = beanstalk_arg(&bport);
	s->args[2] = "--idle-timeout";
	s->args[3] = "500ms";
	it_start(s);
	c = it_client(s);
	it_put(c, "held", "a task");
	worker = it_client(s);
	t = it_take(worker, "held", 0, 0);
	assert_non_null(t);

	bare = it_sp_open(s->port);
	parked = it_sp_open(s->port);
	q.take.wait = 1000; /* two idle timeouts */
	q.take.max = 1;
	q.take.ntubes = 1;
	q.take.tubes = &tube;
	buf_init(&req);
	buf_init(&out);
	buf_init(&body);
	assert_int_equal(msg_encode_req(&req, &q), 0);
	it_sp_frame(&out, &bt, 1, req.data, req.len);
	it_sp_send_all(parked, out.data, out.len);

	assert_int_equal(bsc_open(&idle, bport), 0);
	assert_int_equal(bsc_open(&holding, bport), 0);
	r = bsc_cmd(&holding, "put 0 0 60 1\r\nj\r\n");
	free(r);
	r = bsc_cmd(&holding, "reserve-with-timeout 0\r\n");
	assert_true(strncmp(r, "RESERVED", 8) == 0);
	free(r);
	/* two idle timeouts (the command takes whole seconds), sent as
	 * soon as it connects (the put above syncs the log: on a loaded
	 * machine that may take longer than an idle timeout) */
	assert_int_equal(bsc_open(&waiting, bport), 0);
	assert_int_equal(bsc_sends(&waiting, "reserve-with-timeout 1\r\n"), 0);

	/* the idle ones go; the others stay */
	assert_true(it_hostile_closed_within(bare, 6000));
	assert_true(bsc_closed(&idle, 3000));
	assert_true(it_hostile_wait_kv(c, "conns_closed_idle", 2, 3000) >= 2);
	/* the parked take ends by its wait, not by a close */
	assert_true(it_sp_recv(parked, &got, 1, &body));
	assert_int_equal(got, bt);
	assert_int_equal(msg_decode_rep(body.data, body.len, NULL, &rep), 0);
	/* nothing came: an empty take, or ETIMEDOUT */
	assert_true(rep.status == 0 || rep.status == SLUICE_ETIMEDOUT);
	r = bsc_reply(&waiting);
	assert_string_equal(r, "TIMED_OUT\r\n");
	free(r);
	/* the lease held through the quiet seconds */
	it_rc(worker, sluice_ack(worker, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	r = bsc_cmd(&holding, "stats\r\n");
	assert_true(strncmp(r, "OK", 2) == 0);
	free(r);

	close(bare);
	close(parked);
	bsc_close(&idle);
	bsc_close(&waiting);
	bsc_close(&holding);
	buf_fini(&req);
	buf_fini(&out);
	buf_fini(&body);
	sluice_close(worker);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- idle connections' memory ------------------------------------------- */

/* 5,000 idle connections (past their handshake): a few KiB each, not
 * 64 KiB, and most of it back once they close. */
static void
test_idle_connections_cost_little(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	long n = it_scale(5000, 5, 500), rss0, rss1, rss2;
	struct sluice_client *c;
	int *fds = calloc((size_t)n, sizeof(int));
	long opened = 0;

	raise_own_nofile();
	assert_non_null(fds);
	it_start(s);
	c = it_client(s);
	it_put(c, "warm", "x");
	rss0 = it_rss_kb(s->pid);
	{
		struct rlimit srl;

		assert_int_equal(prlimit(s->pid, RLIMIT_NOFILE, NULL, &srl), 0);
		fprintf(stderr, "server fd limit %llu\n",
		    (unsigned long long)srl.rlim_cur);
	}
	for (long i = 0; i < n; i++) {
		fds[i] = dial(s->port);
		if (fds[i] < 0) {
			fprintf(
			    stderr, "connection %ld: %s\n", i, strerror(errno));
			break;
		}
		send_header(fds[i]);
		opened++;
	}
	assert_int_equal(opened, n);
	assert_true(it_hostile_wait_kv(c, "conns_open", (uint64_t)n + 1,
	                30000) >= (uint64_t)n + 1);
	it_sleep_ms(200);
	rss1 = it_rss_kb(s->pid);
	for (long i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	{
		int64_t end = it_mono_ms() + 20000;

		while (it_node_kv(c, "conns_open") > 1 && it_mono_ms() < end)
			it_sleep_ms(100);
	}
	assert_int_equal(it_node_kv(c, "conns_open"), 1);
	/* the memory comes back within a few seconds: polled (up to 5 s),
	 * in plain builds, where the figures mean something */
	rss2 = it_rss_kb(s->pid);
	for (int i = 0; i < 50 && !it_sanitized() &&
	     rss2 - rss0 >= (rss1 - rss0) / 2 + 2048;
	     i++) {
		it_sleep_ms(100);
		rss2 = it_rss_kb(s->pid);
	}
	fprintf(stderr,
	    "%ld idle connections: RSS %ld KiB before, %ld open (%.1f KiB "
	    "each), %ld after close\n",
	    n, rss0, rss1, (double)(rss1 - rss0) / (double)n, rss2);
	if (!it_sanitized()) {
		assert_true((rss1 - rss0) / n < 8); /* was 64 KiB */
		assert_true(rss2 - rss0 < (rss1 - rss0) / 2 + 2048);
	}
	it_put(c, "after", "x");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- caps --------------------------------------------------------------- */

/* --max-conns refuses connections past the cap; --max-unauth-conns
 * closes the oldest not yet authenticated for a new one, so that an
 * authenticating client always gets in; /metrics counts both. */
static void
test_connection_caps(void **state)
{
	struct t_srv *s = it_srv(*state, "capped"), *a;
	struct sluice_client *c;
	int fds[30], hport = t_free_port(), refused = 0;
	static char http[32];
	char *text;

	snprintf(http, sizeof(http), "127.0.0.1:%d", hport);
	s->args[0] = "--max-conns";
	s->args[1] = "20";
	s->args[2] = "--http";
	s->args[3] = http;
	it_start(s);
	c = it_client(s);
	it_put(c, "warm", "x");
	for (int i = 0; i < 25; i++) {
		fds[i] = dial(s->port);
		assert_true(fds[i] >= 0);
		send_header(fds[i]);
		it_sleep_ms(10);
	}
	/* each watched for a second, all at once */
	refused = it_hostile_closed_count(fds, 25, 1000, NULL);
	assert_int_equal(refused, 25 - 19); /* the client holds one */
	assert_int_equal(it_node_kv(c, "conns_refused_full"), 6);
	text = it_http_get(hport, "/metrics", 200);
	assert_true(
	    it_metric(text,
	        "sluice_connections_closed_total{reason=\"max_conns\"}") == 6);
	free(text);
	for (int i = 0; i < 25; i++)
		close(fds[i]);
	it_sleep_ms(300);
	it_put(c, "after", "x");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);

	a = it_srv(*state, "auth");
	a->args[0] = "--auth";
	a->args[1] = it_hostile_tokens(state, token);
	a->args[2] = "--max-unauth-conns";
	a->args[3] = "10";
	it_start(a);
	for (int i = 0; i < 15; i++) {
		fds[i] = it_sp_open(a->port);
		it_sleep_ms(10);
	}
	for (int i = 0; i < 5; i++)
		assert_true(
		    it_hostile_closed_within(fds[i], 3000)); /* the oldest */
	for (int i = 5; i < 15; i++)
		assert_true(open_for(fds[i], 50));
	c = authed_client(a);
	it_put(c, "in", "an authenticated client gets in");
	assert_true(it_node_kv(c, "conns_evicted_unauth") >= 5);
	for (int i = 0; i < 15; i++)
		close(fds[i]);
	sluice_close(c);
	assert_int_equal(t_srv_stop(a, SIGTERM), 0);
}

/* ---- tls+tcp:// ------------------------------------------------------- */

/* tls+tcp:// (server/face/stream*.c): --max-conns caps its connections,
 * and under --auth one that has not authenticated within
 * --handshake-timeout is closed. (test_hostile_tls mounts the rest.) */
static void
test_tls_connections_are_bounded(void **state)
{
	struct t_srv *s = it_srv(*state, "tls");
	const char *ca = it_hostile_tls_setup(s);
	struct sluice_client *c, *anon[4];
	struct sluice_stats *st = NULL;
	int refused = 0;

	s->args[4] = "--auth";
	s->args[5] = it_hostile_tokens(state, token);
	s->args[6] = "--handshake-timeout";
	s->args[7] = "2s";
	s->args[8] = "--max-conns";
	s->args[9] = "3";
	it_start(s);
	c = it_client_url(s->url);
	it_rc(c, sluice_set_tls(c, ca, NULL, NULL), 0);
	assert_int_equal(sluice_set_token(c, token), 0);
	it_put(c, "tls", "authenticated");

	/* four more without a token: the cap lets two in */
	for (int i = 0; i < 4; i++) {
		anon[i] = it_client_url(s->url);
		it_rc(anon[i], sluice_set_tls(anon[i], ca, NULL, NULL), 0);
		sluice_set_connect_timeout(anon[i], 1000);
		if (sluice_stats(anon[i], NULL, &st) == SLUICE_ECONN)
			refused++;
		else
			assert_int_equal(
			    sluice_stats(anon[i], NULL, &st), SLUICE_EAUTH);
	}
	assert_true(refused >= 1);
	assert_true(it_node_kv(c, "conns_refused_full") >= 1);
	/* those let in are closed by the handshake timeout */
	assert_true(
	    it_hostile_wait_kv(c, "conns_closed_handshake", 1, 8000) >= 1);
	for (int i = 0; i < 4; i++)
		sluice_close(anon[i]);
	it_put(c, "tls", "still served");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* --max-unauth-conns on tls+tcp://: a new connection past the cap
 * closes the oldest not authenticated (as on tcp://); an authenticated
 * client is never one of them. The clients without a token are nng
 * dialers, which dial again when closed and so close each other in
 * turn: each of their requests is refused for its token, loses its
 * connection or runs out of time, and none is served. */
static void
test_tls_unauthenticated_are_capped(void **state)
{
	struct t_srv *s = it_srv(*state, "tls");
	const char *ca = it_hostile_tls_setup(s);
	struct sluice_client *c, *anon[4];
	struct sluice_stats *st = NULL;

	s->args[4] = "--auth";
	s->args[5] = it_hostile_tokens(state, token);
	s->args[6] = "--max-unauth-conns";
	s->args[7] = "2";
	it_start(s);
	c = it_client_url(s->url);
	it_rc(c, sluice_set_tls(c, ca, NULL, NULL), 0);
	assert_int_equal(sluice_set_token(c, token), 0);
	it_put(c, "tls", "authenticated");
	for (int i = 0; i < 4; i++) {
		int rc;

		anon[i] = it_client_url(s->url);
		it_rc(anon[i], sluice_set_tls(anon[i], ca, NULL, NULL), 0);
		sluice_set_connect_timeout(anon[i], 1000);
		rc = sluice_stats(anon[i], NULL, &st);
		/* refused for its token, or its connection lost; on a loaded
		 * machine the dialers knocking each other out may also use
		 * up the call's time: never served */
		if (rc != SLUICE_EAUTH && rc != SLUICE_ECONN &&
		    rc != SLUICE_ETIMEDOUT)
			fail_msg("a client without a token got %s",
			    sluice_strerror(rc));
	}
	assert_true(
	    it_hostile_wait_kv(c, "conns_evicted_unauth", 2, 5000) >= 2);
	it_put(c, "tls", "still served");
	for (int i = 0; i < 4; i++)
		sluice_close(anon[i]);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* A TLS client that never reads (openssl s_client writing to a pipe
 * nobody reads): 300 pipelined peeks of a 1 MiB task. Its requests are
 * not read while its replies are over the marks, and it is closed by
 * --stall-timeout. */
static void
test_tls_unread_replies_close_the_pipe(void **state)
{
	struct t_srv *s = it_srv(*state, "tls");
	const char *ca = it_hostile_tls_setup(s);
	struct sluice_put_opts o;
	struct sluice_client *c;
	struct it_look look;
	struct buf req, out;
	char *payload = malloc(PAYLOAD), in[700], addr[64];
	int pfd[2], ffd;
	long rss0, peak = 0;
	uint64_t id;
	pid_t pid;
	FILE *f;

	s->args[4] = "--stall-timeout";
	s->args[5] = "2s";
	it_start(s);
	c = it_client_url(s->url);
	it_rc(c, sluice_set_tls(c, ca, NULL, NULL), 0);
	assert_non_null(payload);
	memset(payload, 'p', PAYLOAD);
	sluice_put_opts_init(&o);
	o.tube = "big";
	it_rc(c, sluice_put(c, &o, payload, PAYLOAD, &id, NULL), 0);
	free(payload);

	/* the requests, as s_client will send them */
	buf_init(&req);
	buf_init(&out);
	{
		uint8_t hs[SP_HANDSHAKE];

		sp_handshake(hs, SP_PROTO_REQ0);
		buf_put(&out, hs, sizeof(hs));
	}
	for (int i = 0; i < PEEKS; i++) {
		struct msg_req q = { .op = MSG_OP_PEEK, .id = id };
		uint32_t bt = SP_ID_BIT | (uint32_t)(i + 1);

		buf_reset(&req);
		assert_int_equal(msg_encode_req(&req, &q), 0);
		it_sp_frame(&out, &bt, 1, req.data, req.len);
	}
	snprintf(in, sizeof(in), "%s", t_path(*state, "peeks"));
	f = fopen(in, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(out.data, 1, out.len, f), out.len);
	assert_int_equal(fclose(f), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", s->port);

	it_look_start(&look, state, s, "probe", NULL, ca);
	rss0 = it_rss_kb(s->pid);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ffd = open(in, O_RDONLY);
		dup2(ffd, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		execlp("openssl", "openssl", "s_client", "-connect", addr,
		    "-CAfile", ca, "-quiet", (char *)NULL);
		_exit(127);
	}
	it_track_pid(pid);
	close(pfd[1]);
	/* pfd[0] is never read: s_client blocks, and stops reading */
	for (int i = 0; i < 40 && it_node_kv(c, "conns_closed_stalled") == 0;
	     i++) {
		long rss = it_rss_kb(s->pid);

		if (rss > peak)
			peak = rss;
		it_sleep_ms(200);
	}
	fprintf(stderr, "tls unread replies: RSS %ld KiB before, %ld at most\n",
	    rss0, peak);
	assert_true(it_node_kv(c, "conns_closed_stalled") >= 1);
	kill(pid, SIGKILL);
	close(pfd[0]);
	it_look_ok(&look, "tls unread replies");
	it_put(c, "tls", "still served");
	buf_fini(&req);
	buf_fini(&out);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- framing ------------------------------------------------------------ */

/* A frame whose only backtrace word lacks the top bit carries no request
 * id: the connection closes at once instead of leaving its client
 * waiting forever; the server goes on. */
static void
test_frame_without_request_id_closes(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct msg_req q = { .op = MSG_OP_STATS };
	struct buf req;
	struct sluice_client *c;
	int fd;

	it_start(s);
	buf_init(&req);
	assert_int_equal(msg_encode_req(&req, &q), 0);
	fd = it_sp_open(s->port);
	it_sp_send(fd, 0x00000005u, req.data, req.len);
	assert_true(it_hostile_closed_within(fd, 3000));
	close(fd);
	c = it_client(s);
	it_put(c, "still", "serving");
	assert_int_equal(it_node_kv(c, "conns_closed_refused"), 1);
	assert_true(it_log_count(s, "without a request id") >= 1);
	sluice_close(c);
	buf_fini(&req);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- beanstalk's answers ------------------------------------------------ */

static void
test_beanstalk_answers_as_beanstalkd(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct bsc b;
	int bport, watching = 0;
	char *r, cmd[64];

	s->args[0] = "--beanstalk";
	s->args[1] = beanstalk_arg(&bport);
	it_start(s);
	assert_int_equal(bsc_open(&b, bport), 0);
	r = bsc_cmd(&b, "kick-job 0\r\n");
	assert_string_equal(r, "NOT_FOUND\r\n"); /* was INTERNAL_ERROR */
	free(r);
	r = bsc_cmd(&b, "delete 0\r\n");
	assert_string_equal(r, "NOT_FOUND\r\n");
	free(r);
	r = bsc_cmd(&b, "kick-job 12345\r\n");
	assert_string_equal(r, "NOT_FOUND\r\n");
	free(r);
	/* 1024 tubes watched at most; then OUT_OF_MEMORY, as documented */
	for (int i = 0; i < 1100; i++) {
		snprintf(cmd, sizeof(cmd), "watch t%d\r\n", i);
		r = bsc_cmd(&b, cmd);
		if (strncmp(r, "WATCHING ", 9) != 0) {
			assert_string_equal(r, "OUT_OF_MEMORY\r\n");
			free(r);
			break;
		}
		watching = atoi(r + 9);
		free(r);
	}
	assert_int_equal(watching, 1024);
	bsc_close(&b);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
#define T(f) cmocka_unit_test_setup_teardown(f, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_descriptor_exhaustion_pauses_accept),
		T(test_unread_replies_are_bounded),
		T(test_beanstalk_unread_replies_are_bounded),
		T(test_frames_before_auth_are_small),
		T(test_slowloris_is_closed_on_both_faces),
		T(test_idle_timeout_spares_waiting_and_holding),
		T(test_idle_connections_cost_little),
		T(test_connection_caps),
		T(test_tls_connections_are_bounded),
		T(test_tls_unauthenticated_are_capped),
		T(test_tls_unread_replies_close_the_pipe),
		T(test_frame_without_request_id_closes),
		T(test_beanstalk_answers_as_beanstalkd),
	};
#undef T
	return cmocka_run_group_tests_name("hostile_net", tests, NULL, NULL);
}
