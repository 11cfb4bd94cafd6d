/* Bad input at a live server: at least 100,000 malformed messages sent
 * from raw nng REQ sockets (several, each in its own thread with a
 * receive timeout), while a normal client keeps putting, taking and
 * acking. The mix: pure random bytes, valid requests with one byte
 * changed, valid requests cut at a random length, a wrong version byte,
 * unknown ops, huge values in length and count fields, oversized
 * payloads (the server runs with --max-payload 4096), and bytes left
 * over after a valid request; plus messages at the size limits: 64 MiB
 * is read, a byte more is EMSGSIZE, and past what the server's transport
 * lets in (MSG_RECV_MAX) the connection is dropped. The size limits go
 * through plain sockets (it_sp.h): a connection the server drops mid-send
 * is what made nng 1.5.2's close hang on the client side.
 *
 * Each message is decoded here too, with the server's limits, so its
 * expected status is known: a message that does not decode must get an
 * error reply with exactly that SLUICE_E* code (decoded with
 * msg_decode_rep, echoing the op byte); one that does decode (a changed
 * byte can give a valid request) must get a reply that is a success or
 * an error of the operation, never a decoding error. No message may go
 * unanswered. The normal client's every call must succeed throughout,
 * the tasks put before must all be there afterwards, and the server must
 * still be alive and stop cleanly.
 *
 * Requests built here name only tubes "fz0".."fz3", the key "fzk" and
 * ids whose every byte is 0x01, so no single changed byte can touch the
 * normal client's tube or tasks. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "it.h"
#include "it_sp.h"
#include "proto/msg.h"
#include "proto/sp.h"
#include "util/nngclose.h"

enum {
	MESSAGES = 100000, /* the acceptance's count, in the plain run */
	SENDERS = 16,
	MAX_PAYLOAD = 4096,
	RECV_MS = 5000,
	BEFORE = 500,
	BASES_MAX = 64,
};

#define FZ_ID  UINT64_C(0x0101010101010101)
#define S(lit) ((struct msg_str) { lit, sizeof(lit) - 1 })

static const struct msg_limits srv_limits = { MSG_SIZE_MAX, MAX_PAYLOAD };

/* ---- valid requests to start from -------------------------------------- */

struct bases {
	struct buf b[BASES_MAX];
	int n;
};

static void
add_base(struct bases *bs, const struct msg_req *q)
{
	struct buf *b = &bs->b[bs->n];

	assert_true(bs->n < BASES_MAX);
	buf_init(b);
	assert_int_equal(msg_encode_req(b, q), 0);
	bs->n++;
}

static void
make_bases(struct bases *bs)
{
	static const struct msg_str tubes[] = { S("fz0"), S("fz1") };
	struct msg_put items[3];
	struct msg_req q;

	memset(bs, 0, sizeof(*bs));
	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_PUT;
	q.put.tube = S("fz0");
	q.put.priority = 1024;
	q.put.payload = S("payload");
	add_base(bs, &q);
	q.put.key = S("fzk");
	q.put.when = 60000;
	q.put.ttr = 1000;
	q.put.max_attempts = 3;
	q.put.period = 5000;
	add_base(bs, &q);
	q.put.replace = true;
	q.put.at = true;
	q.put.when = 1;
	add_base(bs, &q);

	memset(items, 0, sizeof(items));
	for (int i = 0; i < 3; i++) {
		items[i].tube = S("fz1");
		items[i].payload = S("batch");
	}
	items[2].key = S("fzk");
	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_PUT_BATCH;
	q.put_batch.n = 3;
	q.put_batch.items = items;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_TAKE;
	q.take.max = 2;
	q.take.ntubes = 2;
	q.take.tubes = tubes;
	add_base(bs, &q);
	q.take.detach = true;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_ACK;
	q.ack.id = FZ_ID;
	q.ack.lease = FZ_ID;
	add_base(bs, &q);
	q.ack.to = S("fz2");
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_RELEASE;
	q.release.id = FZ_ID;
	q.release.lease = FZ_ID;
	q.release.delay = 10;
	q.release.set_priority = true;
	q.release.priority = 7;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_FAIL;
	q.fail.id = FZ_ID;
	q.fail.lease = FZ_ID;
	q.fail.error = S("it broke");
	add_base(bs, &q);
	q.fail.set_delay = true;
	q.fail.delay = 100;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_TOUCH;
	q.lease.id = FZ_ID;
	q.lease.lease = FZ_ID;
	add_base(bs, &q);
	q.op = MSG_OP_BURY;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_KICK;
	q.kick.tube = S("fz0");
	q.kick.n = 2;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.id = FZ_ID;
	q.op = MSG_OP_KICK_ID;
	add_base(bs, &q);
	q.op = MSG_OP_DELETE;
	add_base(bs, &q);
	q.op = MSG_OP_PEEK;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.key = S("fzk");
	q.op = MSG_OP_DELETE_KEY;
	add_base(bs, &q);
	q.op = MSG_OP_PEEK_KEY;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.tube = S("fz2");
	q.op = MSG_OP_FLUSH;
	add_base(bs, &q);
	q.op = MSG_OP_ERRORS;
	add_base(bs, &q);
	q.op = MSG_OP_STATS;
	add_base(bs, &q);
	q.tube = S("");
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_PEEK_NEXT;
	q.peek_next.tube = S("fz0");
	q.peek_next.state = MSG_ST_READY;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_LIST;
	q.list.tube = S("fz0");
	q.list.order = MSG_ORDER_AGE;
	q.list.limit = 5;
	q.list.payloads = true;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_PAUSE;
	q.pause.tube = S("fz3");
	q.pause.duration = 1;
	add_base(bs, &q);

	memset(&q, 0, sizeof(q));
	q.op = MSG_OP_PROMOTE;
	add_base(bs, &q);
	q.op = MSG_OP_FOLLOW;
	q.url = S("tcp://127.0.0.1:1");
	add_base(bs, &q);
}

static void
free_bases(struct bases *bs)
{
	for (int i = 0; i < bs->n; i++)
		buf_fini(&bs->b[i]);
}

/* nng_close, waiting for it at most 3 s (util/nngclose.h): the test must
 * not hang where sluiced and libsluice would not. */
static void
close_bounded(nng_socket s)
{
	nngclose_within(s, 3000, NULL, NULL);
}

/* ---- bad messages -------------------------------------------------------- */

enum kind {
	K_RANDOM,
	K_FLIP,
	K_TRUNCATE,
	K_VERSION,
	K_UNKNOWN_OP,
	K_HUGE_LENGTH,
	K_OVERSIZED,
	K_TRAILING,
	K_END_
};

static const char *const kind_names[K_END_] = { "random", "one byte changed",
	"truncated", "wrong version", "unknown op", "huge length",
	"oversized payload", "trailing bytes" };

static void
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A request with a huge value in one of its length or count fields. */
static size_t
huge_length(uint64_t *rng, uint8_t *m, size_t cap)
{
	static const uint64_t u16s[] = { 201, 1025, 0xffff };
	static const uint64_t u32s[] = { 1001, 5 << 20, 0x7fffffff,
		0xffffffff };
	size_t len = 0;

	(void)cap;
	m[len++] = MSG_MAGIC;
	m[len++] = MSG_VERSION;
	switch (t_below(rng, 7)) {
	case 0: /* put: tube length */
		m[len++] = MSG_OP_PUT;
		m[len++] = 0;
		put_le(m + len, u16s[t_below(rng, 3)], 2);
		len += 2 + 3;
		break;
	case 1: /* put: payload length (tube "fz0", every field 0) */
		m[len++] = MSG_OP_PUT;
		m[len++] = 0;
		put_le(m + len, 3, 2);
		memcpy(m + len + 2, "fz0", 3);
		len += 5 + 4 + 8 + 8 + 4 + 8 + 2;
		put_le(m + len, u32s[t_below(rng, 4)], 4);
		len += 4 + 10;
		break;
	case 2: /* put_batch: count */
		m[len++] = MSG_OP_PUT_BATCH;
		m[len++] = 0;
		put_le(m + len, u32s[t_below(rng, 4)], 4);
		len += 4 + 16;
		break;
	case 3: /* take: max, then ntubes */
		m[len++] = MSG_OP_TAKE;
		m[len++] = 0;
		len += 8;
		put_le(m + len, t_below(rng, 2) ? 1 : u32s[t_below(rng, 4)], 4);
		len += 4;
		put_le(m + len, t_below(rng, 2) ? 65 : 0xffff, 2);
		len += 2 + 8;
		break;
	case 4: /* fail: error text length */
		m[len++] = MSG_OP_FAIL;
		m[len++] = 0;
		len += 24;
		put_le(m + len, u16s[1 + t_below(rng, 2)], 2);
		len += 2 + 5;
		break;
	case 5: /* list: limit */
		m[len++] = MSG_OP_LIST;
		m[len++] = 0;
		put_le(m + len, 3, 2);
		memcpy(m + len + 2, "fz0", 3);
		len += 5;
		m[len++] = 0;
		m[len++] = MSG_ORDER_AGE;
		put_le(m + len, u32s[t_below(rng, 4)], 4);
		len += 4;
		break;
	default: /* follow: url length */
		m[len++] = MSG_OP_FOLLOW;
		m[len++] = 0;
		put_le(m + len, t_below(rng, 2) ? 513 : 0xffff, 2);
		len += 2 + 20;
		break;
	}
	return len;
}

/* A put (or batch) whose payload is over the server's limit. */
static size_t
oversized(uint64_t *rng, uint8_t *m, size_t cap)
{
	struct msg_req q;
	struct msg_put item;
	struct buf b;
	size_t size = MAX_PAYLOAD + 1 + (size_t)t_below(rng, 3 * MAX_PAYLOAD);
	char *payload = malloc(size);
	size_t len;

	assert_non_null(payload);
	memset(payload, 'o', size);
	memset(&q, 0, sizeof(q));
	memset(&item, 0, sizeof(item));
	item.tube = S("fz0");
	item.payload = (struct msg_str) { payload, size };
	if (t_below(rng, 2)) {
		q.op = MSG_OP_PUT;
		q.put = item;
	} else {
		q.op = MSG_OP_PUT_BATCH;
		q.put_batch.n = 1;
		q.put_batch.items = &item;
	}
	buf_init(&b);
	assert_int_equal(msg_encode_req(&b, &q), 0);
	len = b.len < cap ? b.len : cap;
	memcpy(m, b.data, len);
	buf_fini(&b);
	free(payload);
	return len;
}

/* Fills m with one bad message of the given kind; returns its length. */
static size_t
make_bad(
    const struct bases *bs, uint64_t *rng, enum kind k, uint8_t *m, size_t cap)
{
	const struct buf *base = &bs->b[t_below(rng, (uint64_t)bs->n)];
	size_t len;

	switch (k) {
	case K_RANDOM:
		len = (size_t)t_below(rng, 65);
		for (size_t i = 0; i < len; i++)
			m[i] = (uint8_t)t_rand(rng);
		if (len >= 2 && t_below(rng, 2)) {
			m[0] = MSG_MAGIC;
			m[1] = MSG_VERSION;
		}
		return len;
	case K_HUGE_LENGTH:
		return huge_length(rng, memset(m, 0, 256), cap);
	case K_OVERSIZED:
		return oversized(rng, m, cap);
	default:
		break;
	}
	memcpy(m, base->data, base->len);
	len = base->len;
	switch (k) {
	case K_FLIP: {
		size_t at = (size_t)t_below(rng, len);

		m[at] ^= (uint8_t)(1 + t_below(rng, 255));
		break;
	}
	case K_TRUNCATE:
		len = (size_t)t_below(rng, len);
		break;
	case K_VERSION:
		m[1] = (uint8_t)(MSG_VERSION + 1 + t_below(rng, 255));
		break;
	case K_UNKNOWN_OP:
		m[2] = t_below(rng, 4) == 0
		    ? 0
		    : (uint8_t)(MSG_OP_END_ + t_below(rng, 256 - MSG_OP_END_));
		break;
	case K_TRAILING: {
		size_t extra = 1 + (size_t)t_below(rng, 8);

		for (size_t i = 0; i < extra; i++)
			m[len++] = (uint8_t)t_rand(rng);
		break;
	}
	default:
		break;
	}
	return len;
}

/* Whether the reply status is one a decoder gives for the message
 * itself (which a message that decodes must never get). */
static bool
decode_error(int status)
{
	return status == SLUICE_EMSGSIZE || status == SLUICE_EPROTO ||
	    status == SLUICE_ETRUNC || status == SLUICE_EVERSION ||
	    status == SLUICE_EUNKNOWNOP;
}

/* ---- the senders ------------------------------------------------------------
 */

struct shared {
	const char *url;
	const struct bases *bs;
	atomic_long next;     /* messages handed out */
	atomic_long answered; /* replies checked */
	atomic_long valid;    /* messages that decoded */
	atomic_long by_kind[K_END_];
	atomic_long by_status[SLUICE_ERRMAX_];
	int64_t deadline; /* monotonic ms */
	long messages;    /* how many to send */
	struct it_errs errs;
};

struct sender {
	pthread_t th;
	struct shared *sh;
	uint64_t rng;
};

static int
raw_open(const char *url, int recv_ms, nng_socket *s)
{
	int rv;

	if ((rv = nng_req0_open(s)) != 0)
		return rv;
	if ((rv = nng_socket_set_ms(
	         *s, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE)) != 0 ||
	    (rv = nng_socket_set_ms(*s, NNG_OPT_RECVTIMEO, recv_ms)) != 0 ||
	    (rv = nng_socket_set_ms(*s, NNG_OPT_SENDTIMEO, recv_ms)) != 0 ||
	    (rv = nng_socket_set_size(*s, NNG_OPT_RECVMAXSZ, 1 << 20)) != 0 ||
	    (rv = nng_dial(*s, url, NULL, 0)) != 0) {
		nng_close(*s);
		return rv;
	}
	return 0;
}

/* Sends one message and checks its reply. */
static void
one(struct shared *sh, nng_socket s, const uint8_t *m, size_t len, enum kind k)
{
	struct msg_req q;
	struct msg_rep rep;
	int want = msg_decode_req(m, len, &srv_limits, &q);
	void *reply = NULL;
	size_t rlen = 0;
	int rv;

	if ((rv = nng_send(s, (void *)m, len, 0)) != 0) {
		it_errs_add(&sh->errs, "send (%s, %zu bytes): %s",
		    kind_names[k], len, nng_strerror(rv));
		return;
	}
	if ((rv = nng_recv(s, &reply, &rlen, NNG_FLAG_ALLOC)) != 0) {
		it_errs_add(&sh->errs,
		    "no reply to a %s message of %zu bytes "
		    "(op %u, expected %s): %s",
		    kind_names[k], len, msg_req_op(m, len),
		    sluice_strerror(want), nng_strerror(rv));
		return;
	}
	rv = msg_decode_rep(reply, rlen, NULL, &rep);
	if (rv != 0) {
		it_errs_add(&sh->errs, "a reply that does not decode: %s",
		    sluice_strerror(rv));
	} else if (rep.op != msg_req_op(m, len)) {
		it_errs_add(&sh->errs, "reply op %u to a request op %u", rep.op,
		    msg_req_op(m, len));
	} else if (want != 0 && rep.status != want) {
		it_errs_add(&sh->errs,
		    "%s message (%zu bytes, op %u): status %u (%s), want %d "
		    "(%s)",
		    kind_names[k], len, msg_req_op(m, len), rep.status,
		    sluice_strerror(rep.status), want, sluice_strerror(want));
	} else if (want == 0 &&
	    (decode_error(rep.status) || rep.status >= SLUICE_ERRMAX_)) {
		it_errs_add(&sh->errs,
		    "a valid request (op %u, from a %s message) got %s", q.op,
		    kind_names[k], sluice_strerror(rep.status));
	} else {
		atomic_fetch_add(&sh->answered, 1);
		atomic_fetch_add(&sh->by_kind[k], 1);
		if (rep.status < SLUICE_ERRMAX_)
			atomic_fetch_add(&sh->by_status[rep.status], 1);
		if (want == 0)
			atomic_fetch_add(&sh->valid, 1);
	}
	nng_free(reply, rlen);
}

static void *
sender_run(void *arg)
{
	struct sender *sd = arg;
	struct shared *sh = sd->sh;
	size_t cap = 4 * MAX_PAYLOAD + 4096;
	uint8_t *m = malloc(cap);
	nng_socket s;
	int rv;

	if (m == NULL)
		return NULL;
	if ((rv = raw_open(sh->url, RECV_MS, &s)) != 0) {
		it_errs_add(&sh->errs, "dial: %s", nng_strerror(rv));
		free(m);
		return NULL;
	}
	while (atomic_fetch_add(&sh->next, 1) < sh->messages) {
		enum kind k = (enum kind)t_below(&sd->rng, K_END_);
		struct msg_req q;
		size_t len;

		if (it_mono_ms() > sh->deadline) {
			it_errs_add(&sh->errs, "out of time after %ld messages",
			    atomic_load(&sh->answered));
			break;
		}
		/* A changed byte may make a take that waits: it would only
		 * cost time, so draw another. */
		do {
			len = make_bad(sh->bs, &sd->rng, k, m, cap);
		} while (msg_decode_req(m, len, &srv_limits, &q) == 0 &&
		    q.op == MSG_OP_TAKE && q.take.wait > 0);
		one(sh, s, m, len, k);
	}
	close_bounded(s);
	free(m);
	return NULL;
}

/* ---- the normal client ------------------------------------------------ */

struct normal {
	pthread_t th;
	const char *url;
	atomic_bool stop;
	long rounds;
	struct it_errs errs;
};

static void *
normal_run(void *arg)
{
	struct normal *nm = arg;
	struct sluice_client *c = it_client_url(nm->url);

	if (c == NULL) {
		it_errs_add(&nm->errs, "cannot open a client");
		return NULL;
	}
	while (!atomic_load(&nm->stop) && nm->rounds < 1000000) {
		struct sluice_task *t = NULL;
		const char *tubes[] = { "keep" };
		struct sluice_take_opts o = { tubes, 1, 0, 1, 0 };
		struct sluice_put_opts po;
		uint64_t id;
		size_t n;
		int rc;

		sluice_put_opts_init(&po);
		po.tube = "keep";
		if ((rc = sluice_put(c, &po, "work", 4, &id, NULL)) != 0 ||
		    (rc = sluice_take(c, &o, &t, &n)) != 0) {
			it_errs_add(&nm->errs, "normal client: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
			break;
		}
		if (t[0].id != id || t[0].payload_len != 4 ||
		    memcmp(t[0].payload, "work", 4) != 0)
			it_errs_add(&nm->errs,
			    "normal client: took %llu, "
			    "put %llu",
			    (unsigned long long)t[0].id,
			    (unsigned long long)id);
		rc = sluice_ack(c, t[0].id, t[0].lease, NULL, NULL);
		sluice_task_free(t);
		if (rc != 0) {
			it_errs_add(&nm->errs, "normal client ack: %s (%s)",
			    sluice_strerror(rc), sluice_errmsg(c));
			break;
		}
		nm->rounds++;
		it_sleep_ms(2);
	}
	sluice_close(c);
	return NULL;
}

/* One put of `len` bytes (`m`, its header set here) on a connection of
 * its own, through plain sockets (it_sp.h): the reply's status, or -1
 * when the server dropped the connection. */
static int
sized(struct t_srv *s, uint8_t *m, size_t len)
{
	uint32_t id = SP_ID_BIT | 1;
	struct msg_rep rep;
	struct buf body;
	int fd = it_sp_open(s->port), status = -1;

	m[0] = MSG_MAGIC;
	m[1] = MSG_VERSION;
	m[2] = MSG_OP_PUT;
	buf_init(&body);
	if (len > MSG_RECV_MAX) {
		/* the length alone is enough for the server to refuse it */
		uint8_t w[SP_LEN + 4];

		sp_store_len(w, 4 + len);
		sp_store_u32(w + SP_LEN, id);
		it_sp_send_all(fd, w, sizeof(w));
		assert_true(it_sp_closed_by_peer(fd));
	} else {
		it_sp_send(fd, id, m, len);
		assert_true(it_sp_recv(fd, &id, 1, &body));
		assert_int_equal(
		    msg_decode_rep(body.data, body.len, NULL, &rep), 0);
		assert_int_equal(rep.op, MSG_OP_PUT);
		status = rep.status;
	}
	buf_fini(&body);
	close(fd);
	assert_true(t_srv_alive(s));
	return status;
}

/* At the size limits: a request of exactly 64 MiB is read (its put has
 * an empty tube name: ETUBE), one byte more is EMSGSIZE, and a message
 * over what the server lets in at all makes it drop the connection and
 * go on serving. */
static void
over_the_limit(struct t_srv *s)
{
	size_t len = (size_t)MSG_RECV_MAX + 4096;
	uint8_t *m = calloc(1, MSG_SIZE_MAX + 1);
	struct msg_rep rep;
	struct buf body;
	uint32_t id = SP_ID_BIT | 2;
	int fd;

	assert_non_null(m);
	assert_int_equal(sized(s, m, MSG_SIZE_MAX), SLUICE_ETUBE);
	assert_int_equal(
	    sized(s, m, (size_t)MSG_SIZE_MAX + 1), SLUICE_EMSGSIZE);
	assert_int_equal(sized(s, m, len), -1);
	m[2] = MSG_OP_PROMOTE;
	fd = it_sp_open(s->port);
	buf_init(&body);
	it_sp_send(fd, id, m, MSG_REQ_HDR);
	assert_true(it_sp_recv(fd, &id, 1, &body));
	assert_int_equal(msg_decode_rep(body.data, body.len, NULL, &rep), 0);
	assert_int_equal(rep.status, SLUICE_ESTATE);
	buf_fini(&body);
	close(fd);
	free(m);
}

static void
test_bad_input_gets_errors_and_loses_nothing(void **state)
{
	static const char *const args[] = { "--max-payload", "4096", NULL };
	struct t_srv *s = it_srv(*state, "node");
	struct sender sd[SENDERS];
	struct bases bs;
	struct shared sh;
	struct normal nm;
	struct sluice_client *c;
	uint64_t before[BEFORE], seed = t_seed(0xbad1);
	int64_t t0;
	int status;

	for (int i = 0; args[i] != NULL; i++)
		s->args[i] = args[i];
	it_start(s);
	c = it_client(s);
	for (int i = 0; i < BEFORE; i++) {
		char p[32];

		snprintf(p, sizeof(p), "before-%d", i);
		before[i] = it_put(c, "before", p);
	}
	make_bases(&bs);
	memset(&sh, 0, sizeof(sh));
	sh.url = s->url;
	sh.bs = &bs;
	it_errs_init(&sh.errs);
	memset(&nm, 0, sizeof(nm));
	nm.url = s->url;
	it_errs_init(&nm.errs);

	/* The plain run sends the full count; under the sanitizers (about
	 * three times slower, and its pipes dropped for bad input reconnect
	 * with nng's backoff) a third of it, so that the sanitizer pass stays
	 * well inside its time. */
	sh.messages = it_sanitized() ? MESSAGES / 3 : MESSAGES;
	t0 = it_mono_ms();
	sh.deadline = t0 + (it_sanitized() ? 200000 : 100000);
	assert_int_equal(pthread_create(&nm.th, NULL, normal_run, &nm), 0);
	for (int i = 0; i < SENDERS; i++) {
		sd[i].sh = &sh;
		sd[i].rng = t_rand(&seed);
		assert_int_equal(
		    pthread_create(&sd[i].th, NULL, sender_run, &sd[i]), 0);
	}
	over_the_limit(s);
	for (int i = 0; i < SENDERS; i++)
		assert_int_equal(pthread_join(sd[i].th, NULL), 0);
	atomic_store(&nm.stop, true);
	assert_int_equal(pthread_join(nm.th, NULL), 0);

	print_message("%ld messages answered in %lld ms (%ld decoded as "
	              "valid requests); the normal client did %ld rounds\n",
	    atomic_load(&sh.answered), (long long)(it_mono_ms() - t0),
	    atomic_load(&sh.valid), nm.rounds);
	for (int k = 0; k < K_END_; k++)
		print_message("  %-18s %ld\n", kind_names[k],
		    atomic_load(&sh.by_kind[k]));
	for (int st = 0; st < SLUICE_ERRMAX_; st++)
		if (atomic_load(&sh.by_status[st]) > 0)
			print_message("  status %-12s %ld\n",
			    st ? sluice_strerror(st) : "ok",
			    atomic_load(&sh.by_status[st]));
	it_errs_check(&sh.errs);
	it_errs_check(&nm.errs);
	assert_true(atomic_load(&sh.answered) >= sh.messages);
	assert_true(nm.rounds > 0);
	for (int k = 0; k < K_END_; k++)
		assert_true(atomic_load(&sh.by_kind[k]) > 0);

	/* nothing lost, and the server still serves */
	assert_true(t_srv_alive(s));
	for (int i = 0; i < BEFORE; i++) {
		struct sluice_task *t = it_peek(c, before[i]);
		char p[32];

		snprintf(p, sizeof(p), "before-%d", i);
		assert_non_null(t);
		assert_int_equal(t->state, SLUICE_READY);
		assert_int_equal(t->payload_len, strlen(p));
		assert_memory_equal(t->payload, p, strlen(p));
		sluice_task_free(t);
	}
	assert_int_equal(it_counts(c, "before").ready, BEFORE);
	assert_int_equal(it_counts(c, "keep").ready, 0);
	assert_int_equal(it_counts(c, "keep").taken, 0);
	sluice_close(c);
	free_bases(&bs);
	status = t_srv_stop(s, SIGTERM);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_bad_input_gets_errors_and_loses_nothing, it_setup,
		    it_teardown),
	};
	return cmocka_run_group_tests_name("badinput", tests, NULL, NULL);
}
