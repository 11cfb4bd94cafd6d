/* Tests of src/etcd/etcd: the client of etcd's JSON gateway, against
 * a real etcd started by the test (exits 77 when `etcd` is not installed; make
 * test installs it), and against a fake that answers badly. */
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "etcd/etcd.h"
#include "t_etcd.h"
#include "t_lib.h"
#include "t_srv.h"
#include "util/clock.h"

enum {
	TIMEOUT_MS = 5000, /* for a real etcd, on a loaded machine */
	RACE_ROUNDS = 20,
	HELD_MAX = 16,     /* connections filling a listener's queue */
	DIAL_ROUNDS = 500, /* calls whose connection times out */
	DIAL_SECS = 2,     /* and at most this long */
};

/* The etcd most tests share; each test uses keys of its own. */
static struct t_etcd shared;

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static struct etcd *
client_of(const char *endpoints, int timeout_ms)
{
	char err[256];
	struct etcd *e = etcd_new(endpoints, timeout_ms, err, sizeof(err));

	if (e == NULL)
		fail_msg("etcd_new(%s): %s", endpoints, err);
	return e;
}

/* Asserts `rc` is 0, printing the client's message when it is not. */
#define assert_ok(e, rc)                                                       \
	do {                                                                   \
		int rc_ = (rc);                                                \
		if (rc_ != 0)                                                  \
			fail_msg(                                              \
			    "%s: %s", etcd_strerror(rc_), etcd_errmsg(e));     \
	} while (0)

/* ---- Against a real etcd ------------------------------------------------ */

/* A lease is granted, renewed, revoked; once revoked it is gone. */
static void
test_lease_grant_keepalive_revoke(void **state)
{
	struct etcd *e = client_of(shared.url, TIMEOUT_MS);
	int64_t id = 0, ttl = 0, left = 0;

	(void)state;
	assert_ok(e, etcd_lease_grant(e, 30, &id, &ttl));
	assert_true(id != 0);
	assert_true(ttl >= 30);
	assert_ok(e, etcd_lease_keepalive(e, id, &left));
	assert_true(left > 0 && left <= ttl);
	assert_ok(e, etcd_lease_revoke(e, id));
	assert_int_equal(etcd_lease_keepalive(e, id, &left), ETCD_ENOLEASE);
	assert_non_null(strstr(etcd_errmsg(e), "/v3/lease/keepalive"));
	assert_int_equal(etcd_lease_revoke(e, id), ETCD_ENOLEASE);
	assert_non_null(strstr(etcd_errmsg(e), "lease not found"));
	assert_int_equal(etcd_lease_grant(e, 0, &id, &ttl), ETCD_EINVAL);
	etcd_delete(e);
}

/* Bytes put come back as they were, with revisions that move; an empty
 * value (which the gateway leaves out) reads back empty. */
static void
test_put_get_delete(void **state)
{
	static const uint8_t bin[] = { 0, 1, 0xff, 'x', 0x80, 0 };
	struct etcd *e = client_of(shared.url, TIMEOUT_MS);
	struct etcd_kv kv;
	bool found = true, deleted = false;
	int64_t first;

	(void)state;
	assert_ok(e, etcd_put(e, "/t/put/a", bin, sizeof(bin), 0));
	assert_ok(e, etcd_get(e, "/t/put/a", &found, &kv));
	assert_true(found);
	assert_string_equal(kv.key, "/t/put/a");
	assert_int_equal(kv.len, sizeof(bin));
	assert_memory_equal(kv.value, bin, sizeof(bin));
	assert_true(kv.mod_rev > 0);
	assert_int_equal(kv.create_rev, kv.mod_rev);
	assert_int_equal(kv.version, 1);
	assert_int_equal(kv.lease, 0);
	first = kv.mod_rev;
	etcd_kv_free(&kv);

	assert_ok(e, etcd_put(e, "/t/put/a", "", 0, 0));
	assert_ok(e, etcd_get(e, "/t/put/a", &found, &kv));
	assert_true(found);
	assert_int_equal(kv.len, 0);
	assert_string_equal((char *)kv.value, "");
	assert_true(kv.mod_rev > first);
	assert_int_equal(kv.create_rev, first);
	assert_int_equal(kv.version, 2);
	etcd_kv_free(&kv);

	assert_ok(e, etcd_del(e, "/t/put/a", &deleted));
	assert_true(deleted);
	assert_ok(e, etcd_get(e, "/t/put/a", &found, &kv));
	assert_false(found);
	assert_ok(e, etcd_del(e, "/t/put/a", &deleted));
	assert_false(deleted);
	etcd_delete(e);
}

/* A key put under a lease names it and goes when the lease is revoked; a
 * put under a lease that is gone is refused as such. */
static void
test_put_under_a_lease(void **state)
{
	struct etcd *e = client_of(shared.url, TIMEOUT_MS);
	int64_t id, ttl;
	struct etcd_kv kv;
	bool found;

	(void)state;
	assert_ok(e, etcd_lease_grant(e, 30, &id, &ttl));
	assert_ok(e, etcd_put(e, "/t/lease/k", "v", 1, id));
	assert_ok(e, etcd_get(e, "/t/lease/k", &found, &kv));
	assert_true(found);
	assert_int_equal(kv.lease, id);
	etcd_kv_free(&kv);
	assert_ok(e, etcd_lease_revoke(e, id));
	assert_ok(e, etcd_get(e, "/t/lease/k", &found, &kv));
	assert_false(found);
	assert_int_equal(etcd_put(e, "/t/lease/k", "v", 1, id), ETCD_ENOLEASE);
	etcd_delete(e);
}

/* A prefix reads its keys, sorted, and nothing beside them. */
static void
test_get_prefix(void **state)
{
	static const char *const keys[] = { "/t/pfx/b", "/t/pfx/a", "/t/pfy",
		"/t/pf", "/t/pfx/c" };
	struct etcd *e = client_of(shared.url, TIMEOUT_MS);
	struct etcd_kvs kvs;

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_ok(e, etcd_put(e, keys[i], keys[i], strlen(keys[i]), 0));
	assert_ok(e, etcd_get_prefix(e, "/t/pfx/", &kvs));
	assert_int_equal(kvs.n, 3);
	assert_string_equal(kvs.kv[0].key, "/t/pfx/a");
	assert_string_equal(kvs.kv[1].key, "/t/pfx/b");
	assert_string_equal(kvs.kv[2].key, "/t/pfx/c");
	assert_string_equal((char *)kvs.kv[2].value, "/t/pfx/c");
	for (size_t i = 0; i < kvs.n; i++)
		assert_true(kvs.revision >= kvs.kv[i].mod_rev);
	etcd_kvs_free(&kvs);
	assert_ok(e, etcd_get_prefix(e, "/t/nothing/", &kvs));
	assert_int_equal(kvs.n, 0);
	assert_true(kvs.revision > 0);
	etcd_kvs_free(&kvs);
	assert_int_equal(etcd_get_prefix(e, "", &kvs), ETCD_EINVAL);
	etcd_delete(e);
}

/* The first create wins; the second finds the first's key and lease. */
static void
test_create_only_if_absent(void **state)
{
	struct etcd *e = client_of(shared.url, TIMEOUT_MS);
	struct etcd_kv cur;
	bool created = false;
	int64_t id, ttl;

	(void)state;
	assert_ok(e, etcd_lease_grant(e, 30, &id, &ttl));
	assert_ok(e, etcd_create(e, "/t/create", "one", 3, id, &created, &cur));
	assert_true(created);
	assert_ok(e, etcd_create(e, "/t/create", "two", 3, 0, &created, &cur));
	assert_false(created);
	assert_string_equal((char *)cur.value, "one");
	assert_int_equal(cur.lease, id);
	etcd_kv_free(&cur);
	/* Gone with its lease, the key can be created again. */
	assert_ok(e, etcd_lease_revoke(e, id));
	assert_ok(e, etcd_create(e, "/t/create", "two", 3, 0, &created, NULL));
	assert_true(created);
	/* Under a lease that is gone, nothing is created. */
	assert_int_equal(
	    etcd_create(e, "/t/create2", "x", 1, id, &created, NULL),
	    ETCD_ENOLEASE);
	etcd_delete(e);
}

/* A marked put made only over the value it expects: done (the marker
 * moves) when the key holds it, nothing when it holds something else or
 * is absent. */
static void
test_put_marked_only_over_what_was_read(void **state)
{
	struct etcd *e = client_of(shared.url, TIMEOUT_MS);
	struct etcd_kv kv;
	int64_t rev = 0, rev2 = 0;
	bool done = false, found = false;

	(void)state;
	assert_ok(e, etcd_put(e, "/t/if", "old", 3, 0));
	assert_ok(e,
	    etcd_put_marked_if(e, "/t/if", "new", 3, "old", 3, "/t/if-mark",
	        "m", 1, &done, &rev));
	assert_true(done);
	assert_ok(e, etcd_get(e, "/t/if", &found, &kv));
	assert_true(found);
	assert_memory_equal(kv.value, "new", 3);
	etcd_kv_free(&kv);
	assert_ok(e, etcd_get(e, "/t/if-mark", &found, &kv));
	assert_true(found);
	assert_int_equal(kv.mod_rev, rev);
	etcd_kv_free(&kv);
	/* the key changed since: nothing is written, the marker stays */
	assert_ok(e,
	    etcd_put_marked_if(e, "/t/if", "newer", 5, "old", 3, "/t/if-mark",
	        "m", 1, &done, &rev2));
	assert_false(done);
	assert_ok(e, etcd_get(e, "/t/if", &found, &kv));
	assert_memory_equal(kv.value, "new", 3);
	etcd_kv_free(&kv);
	assert_ok(e, etcd_get(e, "/t/if-mark", &found, &kv));
	assert_int_equal(kv.mod_rev, rev);
	etcd_kv_free(&kv);
	/* absent: nothing */
	assert_ok(e,
	    etcd_put_marked_if(e, "/t/if-none", "x", 1, "old", 3, "/t/if-mark",
	        "m", 1, &done, &rev2));
	assert_false(done);
	assert_ok(e, etcd_get(e, "/t/if-none", &found, NULL));
	assert_false(found);
	etcd_delete(e);
}

/* A lease that is not renewed expires and takes its key with it. */
static void
test_lease_expires(void **state)
{
	struct etcd *e = client_of(shared.url, TIMEOUT_MS);
	int64_t id, ttl, left;
	struct etcd_kv kv;
	bool found = true;

	(void)state;
	assert_ok(e, etcd_lease_grant(e, 1, &id, &ttl));
	assert_ok(e, etcd_put(e, "/t/expire", "v", 1, id));
	/* etcd may raise a short TTL to its minimum; wait well past it. */
	for (int i = 0; i < 300 && found; i++) {
		sleep_ms(100);
		assert_ok(e, etcd_get(e, "/t/expire", &found, &kv));
		if (found)
			etcd_kv_free(&kv);
	}
	assert_false(found);
	assert_int_equal(etcd_lease_keepalive(e, id, &left), ETCD_ENOLEASE);
	etcd_delete(e);
}

struct racer {
	pthread_barrier_t *start;
	char name[16];
	int wins;
	char seen[RACE_ROUNDS][16]; /* the value each round ended with */
	char err[400];              /* the first failure; "" if none */
};

/* One round's create. Failures are recorded, not asserted: cmocka's
 * asserts belong to the main thread. */
static void
race_once(struct racer *r, struct etcd *e, int round)
{
	struct etcd_kv cur;
	char key[32];
	bool created;
	int rc;

	snprintf(key, sizeof(key), "/t/race/%d", round);
	rc = etcd_create(e, key, r->name, strlen(r->name), 0, &created, &cur);
	if (rc != 0) {
		snprintf(r->err, sizeof(r->err), "%s: %s", etcd_strerror(rc),
		    etcd_errmsg(e));
	} else if (created) {
		r->wins++;
		snprintf(r->seen[round], 16, "%s", r->name);
	} else {
		snprintf(r->seen[round], 16, "%s", (char *)cur.value);
		etcd_kv_free(&cur);
	}
}

static void *
race(void *arg)
{
	struct racer *r = arg;
	struct etcd *e =
	    etcd_new(shared.url, TIMEOUT_MS, r->err, sizeof(r->err));

	/* Every round waits at the barrier, even after a failure, so that
	 * the other racer never waits for this one in vain. */
	for (int round = 0; round < RACE_ROUNDS; round++) {
		pthread_barrier_wait(r->start);
		if (e != NULL && r->err[0] == '\0')
			race_once(r, e, round);
	}
	etcd_delete(e);
	return NULL;
}

/* Two clients create the same key at once, round after round: exactly
 * one wins each time, and the loser sees the winner's value. */
static void
test_two_clients_race_for_create(void **state)
{
	struct racer r[2] = { { .name = "left" }, { .name = "right" } };
	pthread_barrier_t start;
	pthread_t t[2];

	(void)state;
	pthread_barrier_init(&start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		r[i].start = &start;
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	for (int i = 0; i < 2; i++) {
		if (r[i].err[0] != '\0')
			fail_msg("%s: %s", r[i].name, r[i].err);
	}
	assert_int_equal(r[0].wins + r[1].wins, RACE_ROUNDS);
	for (int round = 0; round < RACE_ROUNDS; round++)
		assert_string_equal(r[0].seen[round], r[1].seen[round]);
}

/* With a dead endpoint listed first, calls go to the live one; with only
 * dead ones, the call says it could not connect, naming the endpoint. */
static void
test_a_dead_endpoint_is_skipped(void **state)
{
	char list[256], dead[64];
	struct etcd *e;
	struct etcd_kv kv;
	bool found;

	(void)state;
	snprintf(dead, sizeof(dead), "http://127.0.0.1:%d", t_free_port());
	snprintf(list, sizeof(list), "%s, %s", dead, shared.url);
	e = client_of(list, TIMEOUT_MS);
	assert_ok(e, etcd_put(e, "/t/skip", "v", 1, 0));
	assert_ok(e, etcd_get(e, "/t/skip", &found, &kv));
	assert_true(found);
	etcd_kv_free(&kv);
	etcd_delete(e);

	e = client_of(dead, TIMEOUT_MS);
	assert_int_equal(etcd_get(e, "/t/skip", &found, &kv), ETCD_ECONNECT);
	assert_non_null(strstr(etcd_errmsg(e), dead));
	etcd_delete(e);
}

/* etcd frozen: calls time out, within their timeout and not the
 * etcd's; etcd killed: calls fail to connect; restarted on its data, it
 * still has what it acknowledged. */
static void
test_etcd_frozen_then_killed(void **state)
{
	struct t_etcd own;
	struct etcd *e;
	struct etcd_kv kv;
	bool found;
	int64_t t0;

	t_etcd_init(&own, ((struct t_dir *)*state)->path, "etcd");
	assert_int_equal(t_etcd_start(&own), 0);
	e = client_of(own.url, 500);
	assert_ok(e, etcd_put(e, "/t/kept", "v", 1, 0));

	t_etcd_signal(&own, SIGSTOP);
	t0 = clock_mono_ms();
	assert_int_equal(etcd_get(e, "/t/kept", &found, &kv), ETCD_ETIMEDOUT);
	/* Bounded by the call's timeout: far less than the 30 s a hang
	 * would cost (the test's own limit is what catches a hang). */
	assert_true(clock_mono_ms() - t0 < 30000);
	assert_non_null(strstr(etcd_errmsg(e), "within 500 ms"));
	t_etcd_signal(&own, SIGCONT);

	assert_int_equal(t_etcd_signal(&own, SIGKILL), 0);
	assert_int_equal(etcd_put(e, "/t/kept", "w", 1, 0), ETCD_ECONNECT);
	assert_int_equal(etcd_lease_keepalive(e, 1, &t0), ETCD_ECONNECT);

	assert_int_equal(t_etcd_start(&own), 0);
	etcd_delete(e);
	e = client_of(own.url, TIMEOUT_MS);
	assert_ok(e, etcd_get(e, "/t/kept", &found, &kv));
	assert_true(found);
	assert_string_equal((char *)kv.value, "v");
	etcd_kv_free(&kv);
	etcd_delete(e);
	t_etcd_signal(&own, SIGTERM);
}

/* A listener on 127.0.0.1 that never accepts, its queue filled by
 * connections held in `held`: the kernel drops a new connection's SYN,
 * so a dial to its port gets no answer until it gives up. Returns the
 * listener's descriptor and its port in *port. */
static int
silent_listener(int *port, int held[HELD_MAX], int *nheld)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 0), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	for (*nheld = 0; *nheld < HELD_MAX; (*nheld)++) {
		int c = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		struct pollfd p = { .fd = c, .events = POLLOUT };

		assert_true(c >= 0);
		held[*nheld] = c;
		if (connect(c, (struct sockaddr *)&a, sizeof(a)) != 0 &&
		    poll(&p, 1, 200) == 0) {
			(*nheld)++;
			return fd; /* this one hangs: the queue is full */
		}
	}
	fail_msg("the listener's queue took %d connections", HELD_MAX);
	return -1;
}

/* Calls whose connection times out, one right after another: each
 * gives up its own dial, and the next dials afresh. nng's HTTP client
 * aborts the dial of a call that gave up and finishes it later on a
 * thread of its own; a call that dialled again through the same client
 * before that came had the old ending taken for its own and the node
 * died of nng's assertion (seen in make chaos: a leader's keepalive
 * that found no connection within its 666 ms, then the next call). */
static void
test_calls_timing_out_on_connect_one_after_another(void **state)
{
	int held[HELD_MAX], nheld, port,
	    fd = silent_listener(&port, held, &nheld);
	int64_t end = clock_mono_ms() + DIAL_SECS * 1000;
	char url[64];
	struct etcd *e;
	int rounds = 0, dials = 0;

	(void)state;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	e = client_of(url, 1);
	for (; rounds < DIAL_ROUNDS && clock_mono_ms() < end; rounds++) {
		struct etcd_kv kv;
		bool found;
		int rc = etcd_get(e, "/t/silent", &found, &kv);

		if (rc != ETCD_ETIMEDOUT)
			fail_msg("round %d: %s: %s", rounds, etcd_strerror(rc),
			    etcd_errmsg(e));
		/* a dial that gave up; on a loaded machine also none (the
		 * clock's millisecond turned before the dial began), or one
		 * that got through (the kernel let one more connection into
		 * the full queue) and had no answer */
		if (strstr(etcd_errmsg(e), "no connection within 1 ms") != NULL)
			dials++;
		else if (strstr(etcd_errmsg(e),
		             "no endpoint connected within 1 ms") == NULL &&
		    strstr(etcd_errmsg(e), "no answer within 1 ms") == NULL)
			fail_msg("round %d: %s", rounds, etcd_errmsg(e));
	}
	assert_true(rounds > 0 && dials > 0);
	etcd_delete(e);
	for (int i = 0; i < nheld; i++)
		close(held[i]);
	close(fd);
}

/* ---- Against the fake --------------------------------------------------- */

struct bad {
	int status;
	const char *body;
	int delay_ms;
	bool close;
	int want;
	const char *says; /* in the message */
};

/* Each bad answer gives its own error, whatever the operation. */
static void
test_bad_answers_are_clear_errors(void **state)
{
	static const struct bad bads[] = {
		{ 500,
		    "{\"error\":\"boom\",\"message\":\"etcdserver: boom\","
		    "\"code\":2}",
		    0, false, ETCD_EHTTP, "HTTP 500 Fake: etcdserver: boom" },
		{ 503, "not json", 0, false, ETCD_EHTTP, "HTTP 503" },
		{ 404,
		    "{\"message\":\"etcdserver: requested lease not "
		    "found\",\"code\":5}",
		    0, false, ETCD_ENOLEASE, "requested lease not found" },
		{ 200, "{\"header\":", 0, false, ETCD_EJSON, "malformed JSON" },
		{ 200, "", 0, false, ETCD_EJSON, "malformed JSON" },
		{ 200, "[1,2]", 0, false, ETCD_EJSON, "not an object" },
		{ 200, "{}", 0, false, ETCD_EJSON, "\"header\" missing" },
		{ 200, "{\"error\":{\"grpc_code\":14,\"message\":\"gone\"}}", 0,
		    false, ETCD_EHTTP, "error: gone" },
		{ 200, "", 0, true, ETCD_EIO, "/v3/" },
		/* Last: the fake answers one connection at a time. */
		{ 200, "{}", 10000, false, ETCD_ETIMEDOUT, "within 300 ms" },
	};
	struct t_etcd_fake *f = t_etcd_fake_start();
	struct etcd *e = client_of(f->url, 300);

	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];
		struct etcd_kvs kvs;
		int64_t id, ttl;
		bool created;

		t_etcd_fake_set(f, b->status, b->body, b->delay_ms, b->close);
		assert_int_equal(etcd_get_prefix(e, "/x/", &kvs), b->want);
		if (strstr(etcd_errmsg(e), b->says) == NULL)
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i,
			    etcd_errmsg(e), b->says);
		assert_non_null(strstr(etcd_errmsg(e), f->url));
		if (b->delay_ms != 0)
			continue; /* each costs a timeout */
		assert_int_equal(etcd_lease_grant(e, 5, &id, &ttl), b->want);
		assert_int_equal(
		    etcd_create(e, "/x", "v", 1, 0, &created, NULL), b->want);
	}
	t_etcd_fake_stop(f);
	etcd_delete(e);
}

/* Answers that parse but lack or garble what the call needs. */
static void
test_answers_missing_fields(void **state)
{
	static const char hdr[] = "\"header\":{\"revision\":\"7\"}";
	struct t_etcd_fake *f = t_etcd_fake_start();
	struct etcd *e = client_of(f->url, 2000);
	char body[512];
	struct etcd_kv kv;
	int64_t id, ttl;
	bool found, created;

	(void)state;
	snprintf(body, sizeof(body), "{%s,\"TTL\":\"5\"}", hdr);
	t_etcd_fake_set(f, 200, body, 0, false);
	assert_int_equal(etcd_lease_grant(e, 5, &id, &ttl), ETCD_EJSON);
	assert_non_null(strstr(etcd_errmsg(e), "\"ID\" missing"));

	snprintf(body, sizeof(body), "{%s,\"ID\":\"x1\",\"TTL\":\"5\"}", hdr);
	t_etcd_fake_set(f, 200, body, 0, false);
	assert_int_equal(etcd_lease_grant(e, 5, &id, &ttl), ETCD_EJSON);
	assert_non_null(strstr(etcd_errmsg(e), "\"ID\" is not an integer"));

	snprintf(body, sizeof(body), "{%s}", hdr);
	t_etcd_fake_set(f, 200, body, 0, false);
	assert_int_equal(etcd_lease_keepalive(e, 1, &ttl), ETCD_EJSON);
	assert_non_null(strstr(etcd_errmsg(e), "\"result\" missing"));

	snprintf(body, sizeof(body),
	    "{%s,\"kvs\":[{\"key\":\"eA==\",\"create_revision\":\"1\","
	    "\"version\":\"1\"}]}",
	    hdr);
	t_etcd_fake_set(f, 200, body, 0, false);
	assert_int_equal(etcd_get(e, "x", &found, &kv), ETCD_EJSON);
	assert_non_null(strstr(etcd_errmsg(e), "\"mod_revision\" missing"));

	snprintf(body, sizeof(body),
	    "{%s,\"kvs\":[{\"key\":\"e!==\",\"create_revision\":\"1\","
	    "\"mod_revision\":\"1\",\"version\":\"1\"}]}",
	    hdr);
	t_etcd_fake_set(f, 200, body, 0, false);
	assert_int_equal(etcd_get(e, "x", &found, &kv), ETCD_EJSON);
	assert_non_null(strstr(etcd_errmsg(e), "\"key\" is not base64"));

	snprintf(body, sizeof(body), "{%s,\"kvs\":{}}", hdr);
	t_etcd_fake_set(f, 200, body, 0, false);
	assert_int_equal(etcd_get(e, "x", &found, &kv), ETCD_EJSON);

	/* A failed transaction must carry the key that made it fail. */
	snprintf(body, sizeof(body), "{%s,\"responses\":[]}", hdr);
	t_etcd_fake_set(f, 200, body, 0, false);
	assert_int_equal(
	    etcd_create(e, "x", "v", 1, 0, &created, NULL), ETCD_EJSON);
	snprintf(body, sizeof(body),
	    "{%s,\"responses\":[{\"response_range\":{%s}}]}", hdr, hdr);
	t_etcd_fake_set(f, 200, body, 0, false);
	assert_int_equal(
	    etcd_create(e, "x", "v", 1, 0, &created, NULL), ETCD_EJSON);
	assert_non_null(strstr(etcd_errmsg(e), "absent"));
	assert_true(atomic_load(&f->nreq) >= 8);
	t_etcd_fake_stop(f);
	etcd_delete(e);
}

/* Endpoint lists that are not http:// URLs are refused up front. */
static void
test_bad_endpoints_are_refused(void **state)
{
	static const char *const bad[] = { "", " , ", "127.0.0.1:2379",
		"https://127.0.0.1:2379", "tcp://127.0.0.1:2379", "http://" };
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_null(etcd_new(bad[i], 1000, err, sizeof(err)));
		assert_true(strlen(err) > 0);
	}
	assert_null(etcd_new("http://127.0.0.1:1", 0, err, sizeof(err)));
	assert_non_null(strstr(err, "timeout"));
	assert_int_equal(
	    strcmp(etcd_strerror(ETCD_ENOLEASE), "no such lease"), 0);
}

static int
start_shared(void **state)
{
	(void)state;
	if (t_tmpdir_setup(state) != 0)
		return -1;
	t_etcd_init(&shared, ((struct t_dir *)*state)->path, "shared");
	return t_etcd_start(&shared);
}

static int
stop_shared(void **state)
{
	t_etcd_signal(&shared, SIGTERM);
	return t_tmpdir_teardown(state);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lease_grant_keepalive_revoke),
		cmocka_unit_test(test_put_get_delete),
		cmocka_unit_test(test_put_under_a_lease),
		cmocka_unit_test(test_get_prefix),
		cmocka_unit_test(test_create_only_if_absent),
		cmocka_unit_test(test_put_marked_only_over_what_was_read),
		cmocka_unit_test(test_lease_expires),
		cmocka_unit_test(test_two_clients_race_for_create),
		cmocka_unit_test(test_a_dead_endpoint_is_skipped),
		cmocka_unit_test_setup_teardown(test_etcd_frozen_then_killed,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test(
		    test_calls_timing_out_on_connect_one_after_another),
		cmocka_unit_test(test_bad_answers_are_clear_errors),
		cmocka_unit_test(test_answers_missing_fields),
		cmocka_unit_test(test_bad_endpoints_are_refused),
	};

	if (!t_etcd_available()) {
		fprintf(stderr,
		    "etcd is not installed: skipped "
		    "(make test-deps installs etcd-server)\n");
		return 77;
	}
	return cmocka_run_group_tests_name(
	    "etcd", tests, start_shared, stop_shared);
}
