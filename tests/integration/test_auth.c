/* --auth: a real sluiced with a token file. A session must send auth
 * first; each role may send its operations on its tubes and nothing else
 * (a refusal is SLUICE_EPERM and changes nothing); wrong tokens are
 * refused and logged while others are served; SIGHUP revokes a token on
 * a live connection; the beanstalk face stays on loopback; the
 * replication port serves only followers with a replica token. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "it.h"
#include "it_hostile.h"
#include "it_probe.h"
#include "it_http.h"
#include "it_node.h"
#include "it_ops.h"
#include "proto/msg.h"
#include "proto/sp.h"
#include "util/tokens.h"
#include "util/buf.h"

/* token, line without its hash */
static const char *const tokens[][2] = {
	{ "adm-secret", "ops admin *" },
	{ "prod-secret", "mailer producer emails*" },
	{ "work-secret", "mailworker worker emails*" },
	{ "mon-secret", "prom monitor *" },
	{ "rep-secret", "follower replica *" },
	{ "not-in-the-file", "" }, /* never written */
};
enum { ADMIN, PRODUCER, WORKER, MONITOR, REPLICA, NROLES, GHOST = NROLES };

/* Writes the token file with the tokens whose bit is in `mask`. */
static void
write_tokens(const char *path, unsigned mask)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "# written by test_auth\n\n");
	for (int i = 0; i < NROLES; i++) {
		if (!(mask & 1u << i))
			continue;
		fprintf(f, "%s ", tokens[i][1]);
		it_hostile_hash(f, tokens[i][0]);
		fprintf(f, "\n");
	}
	assert_int_equal(fclose(f), 0);
}

struct fix {
	struct t_srv *s;
	char file[600];
};

static void
start(void **state, struct fix *f)
{
	f->s = it_srv(*state, "a");
	snprintf(f->file, sizeof(f->file), "%s", t_path(*state, "tokens"));
	write_tokens(f->file, (1u << NROLES) - 1);
	f->s->args[0] = "--auth";
	f->s->args[1] = f->file;
	it_start(f->s);
}

static struct sluice_client *
as(const struct fix *f, int role)
{
	struct sluice_client *c = it_client(f->s);

	if (role >= 0)
		assert_int_equal(sluice_set_token(c, tokens[role][0]), 0);
	return c;
}

static int
put(struct sluice_client *c, const char *tube, uint64_t *id)
{
	struct sluice_put_opts o = { .tube = tube };

	return sluice_put(c, &o, "x", 1, id, NULL);
}

static void
test_no_token_and_wrong_token_are_eauth(void **state)
{
	struct fix f;
	struct sluice_client *none, *wrong, *admin;
	uint64_t id = 0;

	start(state, &f);
	none = as(&f, -1);
	it_rc(none, put(none, "emails", &id), SLUICE_EAUTH);
	assert_non_null(strstr(sluice_errmsg(none), "send auth first"));
	wrong = as(&f, -1);
	assert_int_equal(sluice_set_token(wrong, "adm-secreT"), 0);
	it_rc(wrong, put(wrong, "emails", &id), SLUICE_EAUTH);
	assert_string_equal(
	    sluice_errmsg(wrong), "unauthenticated: not a known token");
	/* others are served meanwhile; nothing was put */
	admin = as(&f, ADMIN);
	assert_int_equal(it_counts(admin, "emails").ready, 0);
	assert_true(it_log_count(f.s,
	                "refused a token that is not in the "
	                "file peer=") >= 1);
	sluice_close(none);
	sluice_close(wrong);
	sluice_close(admin);
}

/* Whether `role` may send the wire op `op`: docs/security.md's table
 * (producer: put and peek; worker: take, the lease operations and put;
 * monitor: stats, stats_hourly, history, cluster; admin: everything;
 * replica: nothing on the client port). */
static bool
may(int role, uint8_t op)
{
	switch (op) {
	case MSG_OP_PUT:
	case MSG_OP_PUT_BATCH:
		return role == ADMIN || role == PRODUCER || role == WORKER;
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
		return role == ADMIN || role == PRODUCER;
	case MSG_OP_TAKE:
	case MSG_OP_ACK:
	case MSG_OP_ACK_BATCH:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		return role == ADMIN || role == WORKER;
	case MSG_OP_STATS:
	case MSG_OP_STATS_HOURLY:
	case MSG_OP_HISTORY:
	case MSG_OP_CLUSTER:
	case MSG_OP_GROUPS:
		return role == ADMIN || role == MONITOR;
	default:
		return role == ADMIN;
	}
}

/* Operation `op` of the walk (it_ops.h) as `role` (-1: no token) on its
 * own tube emails.N: allowed, it does its work; refused, the answer is
 * EPERM ("not allowed"; EAUTH without a token) and the server is as it
 * was. */
static void
role_step(struct sluice_client *c, struct sluice_client *admin, int role,
    const struct it_op *op, int n)
{
	struct it_op_state before, after;
	struct it_opx x;
	int rc, want = role < 0 ? SLUICE_EAUTH : SLUICE_EPERM;

	if (role >= 0 && may(role, op->op)) {
		it_op_ok(op, c, admin, "emails", n);
		return;
	}
	it_opx_init(&x, admin, op, "emails", n);
	it_op_state(admin, &x, &before);
	rc = op->run(c, &x);
	if (rc != want)
		fail_msg("%s as role %d: %s (%s), wanted %s", op->name, role,
		    sluice_strerror(rc), sluice_errmsg(c),
		    sluice_strerror(want));
	assert_string_equal(sluice_errmsg(c),
	    role < 0 ? "unauthenticated: send auth first" : "not allowed");
	it_op_state(admin, &x, &after);
	if (memcmp(&before, &after, sizeof(before)) != 0)
		fail_msg("%s as role %d, refused, changed the server", op->name,
		    role);
	it_opx_free(&x);
}

/* Every operation a client may send, as each role and without a token. */
static void
test_every_op_by_every_role(void **state)
{
	struct fix f;
	struct sluice_client *admin;

	start(state, &f);
	admin = as(&f, ADMIN);
	for (int role = -1; role < NROLES; role++) {
		struct sluice_client *c = as(&f, role);

		for (size_t i = 0; i < it_nops; i++)
			role_step(c, admin, role, &it_ops[i],
			    (role + 1) * 100 + (int)i);
		sluice_close(c);
	}
	assert_true(
	    it_log_count(f.s, "not allowed token=prom role=monitor") >= 1);
	assert_true(
	    it_log_count(f.s, "not allowed token=follower role=replica") >=
	    (int)it_nops);
	sluice_close(admin);
}

static void
test_tube_patterns_hold(void **state)
{
	struct fix f;
	struct sluice_client *prod, *work, *admin;
	const char *billing[] = { "billing" };
	struct sluice_take_opts to = { .tubes = billing, .ntubes = 1 };
	struct sluice_task *t = NULL;
	size_t n = 0;
	uint64_t id, bid;

	start(state, &f);
	prod = as(&f, PRODUCER);
	work = as(&f, WORKER);
	admin = as(&f, ADMIN);
	it_rc(prod, put(prod, "emails.eu", &id), 0);
	it_rc(prod, put(prod, "billing", &id), SLUICE_EPERM);
	it_rc(prod, put(prod, "email", &id), SLUICE_EPERM);
	assert_int_equal(it_counts(admin, "billing").ready, 0);
	/* a task of another tube, named by id: as if it did not exist */
	bid = it_put(admin, "billing", "b");
	it_rc(prod, sluice_peek(prod, bid, &t), SLUICE_ENOTFOUND);
	it_rc(work, sluice_take(work, &to, &t, &n), SLUICE_EPERM);
	/* a worker's ack may not move a task out of its tubes */
	t = it_take(work, "emails.eu", 0, 0);
	it_rc(work, sluice_ack(work, t->id, t->lease, "billing", NULL),
	    SLUICE_EPERM);
	it_rc(work, sluice_ack(work, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	assert_int_equal(it_counts(admin, "billing").ready, 1);
	sluice_close(prod);
	sluice_close(work);
	sluice_close(admin);
}

static void
test_sighup_revokes_a_token_on_a_live_connection(void **state)
{
	struct fix f;
	struct sluice_client *prod, *admin;
	int64_t end;
	uint64_t id;
	int rc = 0;

	start(state, &f);
	prod = as(&f, PRODUCER);
	admin = as(&f, ADMIN);
	it_rc(prod, put(prod, "emails", &id), 0);
	write_tokens(f.file, 1u << ADMIN); /* the producer is gone */
	assert_int_equal(kill(f.s->pid, SIGHUP), 0);
	end = it_mono_ms() + 10000;
	while (it_mono_ms() < end && (rc = put(prod, "emails", &id)) == 0)
		it_sleep_ms(20);
	it_rc(prod, rc, SLUICE_EAUTH);
	/* the admin's session goes on; a bad file keeps the tokens */
	assert_true(it_counts(admin, "emails").ready >= 1);
	FILE *bad = fopen(f.file, "w");
	assert_non_null(bad);
	fputs("ops admin *\n", bad);
	fclose(bad);
	assert_int_equal(kill(f.s->pid, SIGHUP), 0);
	end = it_mono_ms() + 10000;
	while (it_mono_ms() < end &&
	    it_log_count(f.s, "cannot read the token file again") < 1)
		it_sleep_ms(20);
	assert_int_equal(
	    it_log_count(f.s, "cannot read the token file again"), 1);
	assert_true(it_counts(admin, "emails").ready >= 1);
	sluice_close(prod);
	sluice_close(admin);
}

/* ---- wrong tokens from many addresses --------------------------------

 * libsluice sends one request at a time from 127.0.0.1; a guesser need
 * not. These connections are the client protocol by hand (proto/sp.h):
 * bound to any address of 127.0.0.0/8 (all of it is loopback), they send
 * many auth requests at once and read the replies as they come. */

static bool
io_all(int fd, void *p, size_t n, bool out)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = out ? write(fd, (char *)p + done, n - done)
		                : read(fd, (char *)p + done, n - done);

		if (k <= 0)
			return false;
		done += (size_t)k;
	}
	return true;
}

/* A connection from `src` to the server's client port, its SP header
 * exchanged; reads give up after IT_CALL_MS. -1 on failure. */
static int
raw_open(const struct t_srv *s, const char *src)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = IT_CALL_MS / 1000 * 3 };
	uint8_t hs[SP_HANDSHAKE];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, src, &a.sin_addr);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		goto fail;
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	a.sin_port = htons((uint16_t)s->port);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		goto fail;
	sp_handshake(hs, SP_PROTO_REQ0);
	if (!io_all(fd, hs, sizeof(hs), true) ||
	    !io_all(fd, hs, sizeof(hs), false) ||
	    !sp_handshake_ok(hs, SP_PROTO_REP0))
		goto fail;
	return fd;
fail:
	close(fd);
	return -1;
}

/* Sends `n` auth requests with `token`, at once. */
static bool
raw_auths(int fd, int n, const char *token)
{
	struct msg_req q = { .op = MSG_OP_AUTH, .token = msg_cstr(token) };
	struct buf b, body;
	bool ok;

	buf_init(&b);
	buf_init(&body);
	assert_int_equal(msg_encode_req(&body, &q), 0);
	for (int i = 0; i < n; i++) {
		sp_store_len(buf_extend(&b, SP_LEN), 4 + body.len);
		sp_store_u32(buf_extend(&b, 4), SP_ID_BIT | (uint32_t)i);
		buf_put(&b, body.data, body.len);
	}
	ok = !buf_failed(&b) && io_all(fd, b.data, b.len, true);
	buf_fini(&b);
	buf_fini(&body);
	return ok;
}

/* Reads `n` replies; returns how many had status `want` (-1: the
 * connection failed first). */
static int
raw_replies(int fd, int n, int want)
{
	uint8_t len[SP_LEN], m[512];
	int got = 0;

	for (int i = 0; i < n; i++) {
		struct msg_rep rep;
		uint64_t k;

		if (!io_all(fd, len, sizeof(len), false) ||
		    (k = sp_load_len(len)) < 4 || k > sizeof(m) ||
		    !io_all(fd, m, (size_t)k, false))
			return -1;
		if (msg_decode_rep(m + 4, (size_t)k - 4, NULL, &rep) == 0 &&
		    rep.op == MSG_OP_AUTH && rep.status == want)
			got++;
	}
	return got;
}

/* The address of guesser `i`: 127.1.0.1, 127.1.0.2, ... */
static void
guesser_addr(int i, char out[32])
{
	snprintf(out, 32, "127.1.%d.%d", i / 250, i % 250 + 1);
}

/* ADDRS addresses, each sending its allowance of wrong tokens (none of
 * them is slowed past it): 500 x 20 = 10,000, WAVE connections at a
 * time. */
enum { ADDRS = 500, WAVE = 100 };

struct storm {
	const struct t_srv *s;
	int per_addr;
	atomic_int done;
	int refused, broken;
};

static void *
storm_run(void *arg)
{
	struct storm *st = arg;
	int fds[WAVE];
	char src[32];

	for (int w = 0; w < ADDRS; w += WAVE) {
		for (int i = 0; i < WAVE; i++) {
			guesser_addr(w + i, src);
			fds[i] = raw_open(st->s, src);
			if (fds[i] < 0 ||
			    !raw_auths(fds[i], st->per_addr, "guess"))
				st->broken++;
		}
		for (int i = 0; i < WAVE; i++) {
			int got = fds[i] < 0
			    ? -1
			    : raw_replies(fds[i], st->per_addr, SLUICE_EAUTH);

			if (got < 0)
				st->broken++;
			else
				st->refused += got;
			if (fds[i] >= 0)
				close(fds[i]);
		}
	}
	atomic_store(&st->done, 1);
	return NULL;
}

/* Puts of a good client until `done`: every one served. Returns how many
 * (bounded by count and by IT_NODE_WAIT_MS). */
static int
good_puts_until(struct sluice_client *adm, atomic_int *done)
{
	int64_t end = it_mono_ms() + 4 * IT_NODE_WAIT_MS;
	int good = 0;
	uint64_t id;

	while (good < 1000000 && it_mono_ms() < end && !atomic_load(done)) {
		it_rc(adm, put(adm, "emails", &id), 0);
		good++;
	}
	return good;
}

/* 10,000 wrong tokens against a live server, from 500 addresses: every
 * one refused EAUTH, counted, and logged (a line per address and second
 * at the most), while a good client's puts go on being served. */
static void
test_ten_thousand_wrong_tokens(void **state)
{
	struct storm st = { .per_addr = TOKENS_FREE_FAILS };
	struct sluice_client *adm;
	struct fix f;
	pthread_t th;
	int good, lines;

	start(state, &f);
	st.s = f.s;
	adm = as(&f, ADMIN);
	assert_int_equal(pthread_create(&th, NULL, storm_run, &st), 0);
	good = good_puts_until(adm, &st.done);
	assert_int_equal(pthread_join(th, NULL), 0);
	lines = it_log_count(f.s, "refused a token that is not in the file");
	print_message("wrong tokens: %d refused; good puts meanwhile: %d; "
	              "log lines: %d\n",
	    st.refused, good, lines);
	assert_int_equal(st.broken, 0);
	assert_int_equal(st.refused, ADDRS * TOKENS_FREE_FAILS);
	assert_int_equal(it_node_kv(adm, "auth_failures"), st.refused);
	assert_int_equal(it_node_kv(adm, "auth_delayed"), 0);
	/* served during the guessing, not only after it */
	assert_true(good >= 10);
	assert_int_equal(it_counts(adm, "emails").ready, good);
	/* each address named in the log */
	assert_true(lines >= ADDRS && lines <= st.refused);
	assert_int_equal(it_log_count(f.s, "peer=127.1.0.1:"), 1);
	sluice_close(adm);
}

struct slow {
	const struct t_srv *s;
	int n;
	atomic_int done;
	int refused;
};

static void *
slow_run(void *arg)
{
	struct slow *sl = arg;
	int fd = raw_open(sl->s, "127.2.0.1");

	if (fd >= 0 && raw_auths(fd, sl->n, "guess"))
		sl->refused = raw_replies(fd, sl->n, SLUICE_EAUTH);
	if (fd >= 0)
		close(fd);
	atomic_store(&sl->done, 1);
	return NULL;
}

/* Past its allowance an address's wrong tokens are answered one after
 * the other, each after a longer pause: counted apart, logged at most
 * once a second with the count of those not logged, and no one else
 * waits for them (a good client's puts go on; a good token from the same
 * address is accepted). */
static void
test_an_address_past_its_allowance_is_slowed(void **state)
{
	struct slow sl = { .n = TOKENS_FREE_FAILS + 4 };
	struct sluice_client *adm;
	struct fix f;
	pthread_t th;
	char line[96];
	int good, fd;

	start(state, &f);
	sl.s = f.s;
	adm = as(&f, ADMIN);
	assert_int_equal(pthread_create(&th, NULL, slow_run, &sl), 0);
	good = good_puts_until(adm, &sl.done);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(sl.refused, sl.n);
	assert_true(good >= 1);
	assert_int_equal(it_counts(adm, "emails").ready, good);
	assert_int_equal(it_node_kv(adm, "auth_failures"), sl.n);
	assert_int_equal(it_node_kv(adm, "auth_delayed"), 4);
	/* they came at once: one line for them all */
	assert_int_equal(it_log_count(f.s, "peer=127.2.0.1:"), 1);

	/* the next one, a second later at least, is logged with the count
	 * of those that were not; a good token is not held back */
	assert_true((fd = raw_open(f.s, "127.2.0.1")) >= 0);
	assert_true(raw_auths(fd, 1, "guess"));
	assert_int_equal(raw_replies(fd, 1, SLUICE_EAUTH), 1);
	snprintf(line, sizeof(line), "failures=%d unlogged=%d slowed", sl.n + 1,
	    sl.n - 1);
	assert_int_equal(it_log_count(f.s, line), 1);
	assert_int_equal(it_node_kv(adm, "auth_delayed"), 5);
	assert_true(raw_auths(fd, 1, tokens[WORKER][0]));
	assert_int_equal(raw_replies(fd, 1, 0), 1);
	close(fd);
	assert_int_equal(it_node_kv(adm, "auth_failures"), sl.n + 1);
	sluice_close(adm);
}

/* ---- an address past the bound on waiting answers ------------------ */

/* Reads EAUTH replies until the server closes the connection: how many
 * came first; -1 when it was not closed within the read timeout. */
static int
raw_until_closed(int fd, int max)
{
	for (int got = 0; got <= max; got++) {
		errno = 0;
		if (raw_replies(fd, 1, SLUICE_EAUTH) == 1)
			continue;
		return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : got;
	}
	return -1;
}

/* The sum of `key`=N over the log lines that name `what`. */
static long
log_sum(const struct t_srv *s, const char *what, const char *key)
{
	char line[1024];
	size_t klen = strlen(key);
	long sum = 0;
	FILE *f = fopen(s->log, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		const char *k = strstr(line, key);

		if (strstr(line, what) != NULL && k != NULL)
			sum += strtol(k + klen, NULL, 10);
	}
	fclose(f);
	return sum;
}

/* FLOOD_CONNS connections from one address, each sending FLOOD_EACH
 * wrong tokens at once: far more than may wait (TOKENS_WAIT_ADDR_MAX). */
enum { FLOOD_CONNS = 32, FLOOD_EACH = 1000 };

struct flood {
	const struct t_srv *s;
	atomic_int done;
	int closed, answered, broken;
};

static void *
flood_run(void *arg)
{
	struct flood *fl = arg;
	int fds[FLOOD_CONNS];

	for (int i = 0; i < FLOOD_CONNS; i++) {
		fds[i] = raw_open(fl->s, "127.3.0.1");
		/* the server may close it before all is written */
		if (fds[i] >= 0)
			(void)raw_auths(fds[i], FLOOD_EACH, "guess");
		else
			fl->broken++;
	}
	for (int i = 0; i < FLOOD_CONNS; i++) {
		int got =
		    fds[i] < 0 ? -1 : raw_until_closed(fds[i], FLOOD_EACH);

		if (got < 0) {
			fl->broken++;
		} else {
			fl->closed++;
			fl->answered += got;
		}
		if (fds[i] >= 0)
			close(fds[i]);
	}
	atomic_store(&fl->done, 1);
	return NULL;
}

/* One address sends 32,000 wrong tokens at once: no more than 32 of its
 * answers wait, the rest close their connection unanswered (every one of
 * its connections is closed by the server, and what they had waiting
 * leaves with them); the server keeps serving a good client, and a good
 * token from the same address; the dropped are counted, and the log's
 * lines (one a second at the most) count them all; the memory stays
 * bounded, and the server stops cleanly (no leak in the sanitized
 * build). */
static void
test_an_address_past_the_bound_is_closed(void **state)
{
	struct flood fl = { 0 };
	struct sluice_client *adm;
	struct fix f;
	pthread_t th;
	long before, after, dropped;
	int good, fd;

	start(state, &f);
	fl.s = f.s;
	adm = as(&f, ADMIN);
	before = it_rss_kb(f.s->pid);
	assert_true(before > 0);
	assert_int_equal(pthread_create(&th, NULL, flood_run, &fl), 0);
	good = good_puts_until(adm, &fl.done);
	assert_int_equal(pthread_join(th, NULL), 0);
	print_message("flood: %d connections closed, %d answers before; "
	              "good puts meanwhile: %d\n",
	    fl.closed, fl.answered, good);
	assert_int_equal(fl.broken, 0);
	assert_int_equal(fl.closed, FLOOD_CONNS);
	assert_int_equal(it_counts(adm, "emails").ready, good);
	dropped = (long)it_node_kv(adm, "auth_dropped");
	assert_true(dropped > 0);
	assert_true(it_node_kv(adm, "auth_failures") >=
	    (uint64_t)(dropped + fl.answered));

	/* a second on, the next wrong token is logged with every drop not
	 * yet logged; then a good token on the same connection */
	it_sleep_ms(TOKENS_LOG_EVERY_MS + 100);
	assert_true((fd = raw_open(f.s, "127.3.0.1")) >= 0);
	assert_true(raw_auths(fd, 1, "guess"));
	assert_int_equal(raw_replies(fd, 1, SLUICE_EAUTH), 1);
	assert_true(raw_auths(fd, 1, tokens[WORKER][0]));
	assert_int_equal(raw_replies(fd, 1, 0), 1);
	close(fd);
	assert_int_equal(log_sum(f.s, "peer=127.3.0.1:", " dropped="), dropped);
	assert_true(it_log_count(f.s, "peer=127.3.0.1:") <
	    FLOOD_CONNS * FLOOD_EACH / 100);

	/* generous: the waits of 32,000 answers held would be more (the
	 * sanitized build keeps freed memory a while) */
	after = it_rss_kb(f.s->pid);
	print_message("VmRSS: %ld kB before, %ld kB after\n", before, after);
	assert_true(after > 0);
	assert_true(after - before < (it_sanitized() ? 512 : 64) * 1024);
	sluice_close(adm);
	assert_int_equal(t_srv_stop(f.s, SIGTERM), 0);
	assert_int_equal(it_log_count(f.s, "LeakSanitizer"), 0);
}

/* sluice_peek's result for `id` (the task freed). */
static int
peek_rc(struct sluice_client *c, uint64_t id)
{
	struct sluice_task *t = NULL;
	int rc = sluice_peek(c, id, &t);

	if (rc == 0)
		sluice_task_free(t);
	return rc;
}

/* One HTTP request with `token`'s bearer (role < 0: none), asserted to
 * answer `want`; its body (to free). */
static char *
http_as(int port, const char *method, const char *path, int role, int want)
{
	char hdr[400], *body = NULL;
	int st;

	hdr[0] = '\0';
	if (role >= 0)
		snprintf(hdr, sizeof(hdr),
		    "Authorization: Bearer %s\r\nX-Sluice-Admin: 1\r\n",
		    tokens[role][0]);
	else
		snprintf(hdr, sizeof(hdr), "X-Sluice-Admin: 1\r\n");
	st = it_http(
	    port, method, path, hdr, method[0] == 'P' ? "" : NULL, &body);
	if (st != want)
		fail_msg("%s %s as %d: status %d, wanted %d: %s", method, path,
		    role, st, want, body != NULL ? body : "(none)");
	return body;
}

/* The HTTP face asks for a bearer token: /health stays open, /metrics
 * and /stats need monitor or admin (401 without a known token, 403 for
 * another role), the admin page and its actions the admin; a refusal says
 * no more than that, and the log says who. */
static void
test_http_bearer_tokens(void **state)
{
	struct fix f;
	struct sluice_client *adm;
	char addr[64], path[96];
	int port = it_free_port();
	uint64_t id;
	char *body;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	f.s = it_srv(*state, "a");
	snprintf(f.file, sizeof(f.file), "%s", t_path(*state, "tokens"));
	write_tokens(f.file, (1u << NROLES) - 1);
	f.s->args[0] = "--auth";
	f.s->args[1] = f.file;
	f.s->args[2] = "--http";
	f.s->args[3] = addr;
	f.s->args[4] = "--http-admin";
	it_start(f.s);
	adm = as(&f, ADMIN);
	assert_int_equal(put(adm, "emails", &id), 0);

	free(http_as(port, "GET", "/health", -1, 200));
	body = http_as(port, "GET", "/metrics", -1, 401);
	assert_string_equal(body, "unauthenticated\n");
	assert_non_null(strcasestr(it_http_head(), "WWW-Authenticate: Bearer"));
	free(body);
	free(http_as(port, "GET", "/stats", -1, 401));
	body = http_as(port, "GET", "/metrics", WORKER, 403);
	assert_string_equal(body, "not allowed\n");
	free(body);
	body = http_as(port, "GET", "/metrics", MONITOR, 200);
	assert_non_null(strstr(body, "sluice_"));
	free(body);
	free(http_as(port, "GET", "/stats", ADMIN, 200));
	/* the dashboard's history: a monitor's too */
	free(http_as(port, "GET", "/v1/history?secs=10", -1, 401));
	free(http_as(port, "GET", "/v1/history?secs=10", WORKER, 403));
	body = http_as(port, "GET", "/v1/history?secs=10", MONITOR, 200);
	assert_non_null(strstr(body, "\"step_ms\":1000"));
	free(body);

	/* a wrong token: 401 after the pause, logged */
	snprintf(path, sizeof(path), "%s", "/metrics");
	{
		char *b = NULL;
		int st = it_http(port, "GET", path,
		    "Authorization: Bearer not-a-token\r\n", NULL, &b);

		assert_int_equal(st, 401);
		assert_string_equal(b, "unauthenticated\n");
		free(b);
	}

	/* the dashboard and its actions: the admin's */
	free(http_as(port, "GET", "/", MONITOR, 403));
	body = http_as(port, "GET", "/", ADMIN, 200);
	assert_non_null(strstr(body, "<html"));
	free(body);
	snprintf(
	    path, sizeof(path), "/api/delete?id=%llu", (unsigned long long)id);
	free(http_as(port, "POST", path, -1, 401));
	free(http_as(port, "POST", path, MONITOR, 403));
	assert_int_equal(peek_rc(adm, id), 0); /* still there */
	body = http_as(port, "POST", path, ADMIN, 200);
	assert_non_null(strstr(body, "\"deleted\":1"));
	free(body);
	assert_int_equal(peek_rc(adm, id), SLUICE_ENOTFOUND);

	assert_true(it_log_count(f.s,
	                "refused an HTTP request without a bearer token") >= 3);
	assert_int_equal(
	    it_log_count(f.s, "refused a token that is not in the file"), 1);
	assert_true(it_log_count(f.s, "not allowed token=mailworker") >= 1);
	assert_true(it_log_count(f.s, "not allowed token=prom") >= 2);
	assert_int_equal(it_log_count(f.s, "does not check tokens"), 0);
	sluice_close(adm);
}

/* `sluice token new` makes a token and its line; the CLI sends it from
 * $SLUICE_TOKEN or --token-file. */
static void
test_cli_token_new_env_and_file(void **state)
{
	struct fix f;
	char out[1024], err[1024], token[128], line[512], tfile[600];
	struct sluice_client *admin;
	FILE *tf;
	int64_t end;

	start(state, &f);
	assert_int_equal(
	    it_cli(f.s->url, NULL, out, sizeof(out), err, sizeof(err), "token",
	        "new", "cli", "worker", "emails*", NULL),
	    0);
	assert_int_equal(
	    sscanf(out, "token: %127s\nline: %511[^\n]", token, line), 2);
	assert_int_equal(strlen(token), 64);
	assert_int_equal(it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err),
	                     "token", "new", "x", "boss", "*", NULL),
	    2);
	assert_non_null(strstr(err, "unknown role \"boss\""));

	assert_non_null(tf = fopen(f.file, "a"));
	fprintf(tf, "%s\n", line);
	fclose(tf);
	assert_int_equal(kill(f.s->pid, SIGHUP), 0);
	end = it_mono_ms() + 10000;
	while (it_mono_ms() < end &&
	    it_log_count(f.s, "token file read again") < 1)
		it_sleep_ms(20);

	assert_int_equal(it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err),
	                     "put", "-t", "emails", "a", NULL),
	    1);
	assert_non_null(strstr(err, "send auth first"));
	setenv("SLUICE_TOKEN", token, 1);
	assert_int_equal(it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err),
	                     "put", "-t", "emails", "b", NULL),
	    0);
	assert_int_equal(it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err),
	                     "put", "-t", "billing", "c", NULL),
	    1);
	assert_non_null(strstr(err, "not allowed"));
	unsetenv("SLUICE_TOKEN");
	snprintf(tfile, sizeof(tfile), "%s", t_path(*state, "mytoken"));
	assert_non_null(tf = fopen(tfile, "w"));
	fprintf(tf, "%s\n", token);
	fclose(tf);
	assert_int_equal(
	    it_cli(f.s->url, NULL, NULL, 0, err, sizeof(err), "--token-file",
	        tfile, "put", "-t", "emails", "d", NULL),
	    0);
	admin = as(&f, ADMIN);
	assert_int_equal(it_counts(admin, "emails").ready, 2);
	assert_int_equal(it_counts(admin, "billing").ready, 0);
	sluice_close(admin);
}

/* sluiced refuses to start on a bad token file, and a beanstalk face
 * off loopback beside --auth. */
static void
test_bad_file_and_beanstalk_refused_at_start(void **state)
{
	struct t_srv *s = it_srv(*state, "b");
	char file[600];
	FILE *f;

	snprintf(file, sizeof(file), "%s", t_path(*state, "bad"));
	assert_non_null(f = fopen(file, "w"));
	fputs("# one good line would be NAME ROLE TUBES HASH\nops boss *\n", f);
	fclose(f);
	s->args[0] = "--auth";
	s->args[1] = file;
	assert_int_not_equal(t_srv_start(s), 0);
	assert_int_equal(it_log_count(s, "bad:2: 3 fields"), 1);

	s = it_srv(*state, "c");
	write_tokens(file, 1);
	s->args[0] = "--auth";
	s->args[1] = file;
	s->args[2] = "--beanstalk";
	s->args[3] = "0.0.0.0:1";
	assert_int_not_equal(t_srv_start(s), 0);
	assert_int_equal(it_log_count(s, "listens on loopback only"), 1);
}

/* Waits (bounded) until `s`'s log has `needle`; returns its count. */
static int
log_wait(const struct t_srv *s, const char *needle)
{
	int64_t end = it_mono_ms() + IT_NODE_WAIT_MS;
	int n;

	while ((n = it_log_count(s, needle)) < 1 && it_mono_ms() < end)
		it_sleep_ms(20);
	return n;
}

/* A follower of `l` that shows token `role` (-1: none) from a file
 * (`from_file`) or $SLUICE_REPL_TOKEN. */
static void
follower(void **state, struct it_node *f, const char *name,
    const struct it_node *l, int role, bool from_file)
{
	static char files[4][600];
	static int next;
	char *file = files[next++ % 4];
	FILE *tf;

	it_node_init(state, f, name);
	it_node_follows(f, l);
	if (role >= 0 && from_file) {
		snprintf(file, sizeof(files[0]), "%s.token", f->s->data);
		assert_non_null(tf = fopen(file, "w"));
		fprintf(tf, "%s\n", tokens[role][0]);
		assert_int_equal(fclose(tf), 0);
		it_node_arg(f, "--repl-token-file", file);
	} else if (role >= 0) {
		setenv("SLUICE_REPL_TOKEN", tokens[role][0], 1);
	}
	it_node_start(f);
	unsetenv("SLUICE_REPL_TOKEN");
}

/* With --auth the replication port serves a follower with a replica
 * token (from a file) and refuses one with a worker token (from the
 * environment) or none: it stays empty, says why, and the leader's log names
 * it. A token removed by SIGHUP stops the stream of a live follower. */
static void
test_replication_port_refuses_a_non_replica(void **state)
{
	struct it_node l, rep, work, none;
	char file[600];
	uint64_t lsn;

	snprintf(file, sizeof(file), "%s", t_path(*state, "tokens"));
	write_tokens(file, (1u << NROLES) - 1);
	it_node_init(state, &l, "leader");
	it_node_arg(&l, "--auth", file);
	it_node_start(&l);
	it_rc(l.c, sluice_set_token(l.c, tokens[ADMIN][0]), 0);
	for (int i = 0; i < 20; i++)
		it_put(l.c, "emails", "x");

	follower(state, &rep, "rep", &l, REPLICA, true);
	follower(state, &work, "work", &l, WORKER, false);
	follower(state, &none, "none", &l, -1, false);
	it_node_caught_up(&l, &rep);
	assert_int_equal(it_counts(rep.c, "emails").ready, 20);
	assert_int_equal(
	    log_wait(l.s, "follower authenticated token=follower"), 1);

	/* the refused stay empty and say why, once */
	assert_int_equal(log_wait(work.s,
	                     "the leader refuses this node's replication "
	                     "token"),
	    1);
	assert_int_equal(log_wait(none.s,
	                     "the leader refuses this node's replication "
	                     "token"),
	    1);
	assert_int_equal(it_log_count(work.s, "not allowed"), 1);
	assert_int_equal(it_log_count(none.s, "send a replication token"), 1);
	assert_int_equal(it_node_lsn(&work, NULL), 0);
	assert_int_equal(it_node_lsn(&none, NULL), 0);
	assert_true(log_wait(l.s,
	                "its token may not replicate (role replica or "
	                "admin, tubes *) token=mailworker role=worker "
	                "peer=127.0.0.1:") >= 1);
	assert_true(log_wait(l.s,
	                "refused a follower: it sent no token token=- "
	                "role=- peer=127.0.0.1:") >= 1);

	/* the replica token removed: the live follower's stream stops */
	write_tokens(file, 1u << ADMIN);
	assert_int_equal(kill(l.s->pid, SIGHUP), 0);
	assert_int_equal(log_wait(l.s,
	                     "a follower's token was removed or may no "
	                     "longer replicate token=follower"),
	    1);
	assert_true(log_wait(rep.s,
	                "the leader refuses this node's replication "
	                "token") >= 1);
	lsn = it_node_lsn(&rep, NULL);
	it_put(l.c, "emails", "after");
	it_sleep_ms(300);
	assert_int_equal(it_node_lsn(&rep, NULL), lsn);
	assert_int_equal(it_node_lsn(&work, NULL), 0);
}

/* A follower whose token is not in the file goes through the limit on
 * failed attempts: refused EAUTH after a pause, counted, logged with its
 * address; it stays empty while the leader serves its good follower. */
static void
test_a_wrong_replication_token_is_slowed(void **state)
{
	struct it_node l, rep, ghost;
	char file[600];

	snprintf(file, sizeof(file), "%s", t_path(*state, "tokens"));
	write_tokens(file, (1u << NROLES) - 1);
	it_node_init(state, &l, "leader");
	it_node_arg(&l, "--auth", file);
	it_node_start(&l);
	it_rc(l.c, sluice_set_token(l.c, tokens[ADMIN][0]), 0);
	it_put(l.c, "emails", "before");
	follower(state, &ghost, "ghost", &l, GHOST, true);
	follower(state, &rep, "rep", &l, REPLICA, true);
	assert_true(log_wait(ghost.s,
	                "the leader refuses this node's replication "
	                "token") >= 1);
	assert_true(log_wait(l.s,
	                "refused a follower's token that is not in the file "
	                "peer=127.0.0.1:") >= 1);
	assert_true(it_node_kv(l.c, "auth_failures") >= 1);
	it_put(l.c, "emails", "while refused");
	it_node_caught_up(&l, &rep);
	assert_int_equal(it_counts(rep.c, "emails").ready, 2);
	assert_int_equal(it_node_lsn(&ghost, NULL), 0);
	assert_true(it_node_kv(l.c, "auth_failures") >= 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_no_token_and_wrong_token_are_eauth, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_every_op_by_every_role, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_tube_patterns_hold, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sighup_revokes_a_token_on_a_live_connection, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cli_token_new_env_and_file, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_ten_thousand_wrong_tokens, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_an_address_past_its_allowance_is_slowed, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_an_address_past_the_bound_is_closed, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_http_bearer_tokens, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_file_and_beanstalk_refused_at_start, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_replication_port_refuses_a_non_replica, it_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_wrong_replication_token_is_slowed, it_setup,
		    it_node_teardown),
	};
	return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
