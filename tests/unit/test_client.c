/* Tests of libsluice without a server: the URL list, and the library
 * against t_fake (tests/lib/t_fake.h), a tiny REP responder that decodes
 * requests with the real codec and answers canned replies. It can also
 * play a follower ("not leader"), drop the connection mid-request, stay
 * silent or answer garbage, which is how redirection, connection loss,
 * timeouts and "never re-sent" are checked. t_fake is nng, so the tcp://
 * tests also check that the library's own SP over TCP matches nng's.
 *
 * What nng cannot play is played by `struct raw`, a server written with
 * plain sockets: a peer that is not a sluice server, replies cut, split
 * into many writes, oversized, or preceded by a stale reply. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>

#include <nng/protocol/reqrep0/req.h>

#include "client/client.h"
#include "client/urls.h"
#include "proto/msg.h"
#include "proto/sp.h"
#include "sluice.h"
#include "t_fake.h"
#include "t_lib.h"

static struct sluice_client *
open_client(const char *urls)
{
	struct sluice_client *c;

	assert_int_equal(sluice_open(urls, &c), 0);
	sluice_set_connect_timeout(c, 1000);
	sluice_set_timeout(c, 5000);
	return c;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- URL lists ----------------------------------------------------------- */

static void
test_urls_parse_lists_and_trims(void **state)
{
	struct urls u;
	size_t idx;

	(void)state;
	assert_int_equal(urls_parse(" tcp://a:1 ,tcp://b:2", &u), 0);
	assert_int_equal(u.n, 2);
	assert_string_equal(u.v[0], "tcp://a:1");
	assert_string_equal(u.v[1], "tcp://b:2");
	assert_int_equal(u.cur, 0);
	assert_int_equal(urls_find_or_add(&u, "tcp://b:2", 9, &idx), 0);
	assert_int_equal(idx, 1);
	assert_int_equal(urls_find_or_add(&u, "tcp://c:3xyz", 9, &idx), 0);
	assert_int_equal(idx, 2);
	assert_string_equal(u.v[2], "tcp://c:3");
	urls_fini(&u);

	assert_int_equal(urls_parse(NULL, &u), 0);
	assert_int_equal(u.n, 1);
	assert_string_equal(u.v[0], SLUICE_DEFAULT_URL);
	urls_fini(&u);
	assert_int_equal(urls_parse("", &u), 0);
	urls_fini(&u);
}

static void
test_urls_parse_refuses_empty_and_schemeless(void **state)
{
	struct urls u = { 0 };

	(void)state;
	assert_int_equal(urls_parse("tcp://a:1,,tcp://b:2", &u), SLUICE_EINVAL);
	assert_int_equal(urls_parse("tcp://a:1,", &u), SLUICE_EINVAL);
	assert_int_equal(urls_parse("localhost:7711", &u), SLUICE_EINVAL);
	assert_int_equal(urls_parse(" , ", &u), SLUICE_EINVAL);
	assert_int_equal(
	    urls_find_or_add(&u, "", 0, &(size_t) { 0 }), SLUICE_EINVAL);
}

/* ---- every call against canned replies ----------------------------------- */

static void
test_put_carries_every_option(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->url);
	struct sluice_put_opts o;
	uint64_t id = 0;
	int created = -1;

	(void)state;
	sluice_put_opts_init(&o);
	assert_int_equal(o.priority, SLUICE_PRI_DEFAULT);
	assert_int_equal(sluice_put(c, NULL, "hi", 2, &id, &created), 0);
	assert_true(id == 42);
	assert_int_equal(created, 1);
	assert_string_equal(f->last_put_tube, "default");
	assert_string_equal(f->last_payload, "hi");
	assert_int_equal(f->last_put.priority, SLUICE_PRI_DEFAULT);

	o.tube = "emails";
	o.priority = 3;
	o.run_at = 1700000000000ULL;
	o.delay_ms = 5; /* run_at wins */
	o.ttr_ms = 9000;
	o.max_attempts = 4;
	o.period_ms = 60000;
	o.key = "nightly";
	o.replace = 1;
	assert_int_equal(sluice_put(c, &o, "", 0, NULL, &created), 0);
	assert_int_equal(created, 0);
	assert_string_equal(f->last_put_tube, "emails");
	assert_string_equal(f->last_put_key, "nightly");
	assert_true(f->last_put.at && f->last_put.replace);
	assert_true(f->last_put.when == 1700000000000ULL);
	assert_true(f->last_put.ttr == 9000 && f->last_put.period == 60000);
	assert_int_equal(f->last_put.max_attempts, 4);
	assert_int_equal(f->last_put.priority, 3);

	/* refused locally, before anything is sent */
	o.tube = "bad tube";
	assert_int_equal(sluice_put(c, &o, "x", 1, NULL, NULL), SLUICE_ETUBE);
	assert_string_not_equal(sluice_errmsg(c), "");
	o.tube = NULL;
	o.key = NULL;
	assert_int_equal(sluice_put(c, &o, "x", 1, NULL, NULL), SLUICE_EINVAL);
	assert_int_equal(
	    sluice_put(c, NULL, NULL, 3, NULL, NULL), SLUICE_EINVAL);
	assert_int_equal(atomic_load(&f->nreq), 2);
	sluice_close(c);
	t_fake_stop(f);
}

static void
test_put_batch_reports_each_item(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->url);
	struct sluice_batch_item items[3];

	(void)state;
	for (int i = 0; i < 3; i++) {
		sluice_put_opts_init(&items[i].opts);
		items[i].payload = "p";
		items[i].len = 1;
	}
	items[1].opts.key = "xdup";
	assert_int_equal(sluice_put_batch(c, items, 3), 0);
	assert_int_equal(f->last_batch_n, 3);
	assert_int_equal(items[0].rc, 0);
	assert_true(items[0].id == 100 && items[0].created);
	assert_int_equal(items[1].rc, SLUICE_EEXIST);
	assert_true(items[2].id == 102);
	assert_int_equal(sluice_put_batch(c, items, 0), SLUICE_EINVAL);
	assert_int_equal(
	    sluice_put_batch(c, items, SLUICE_BATCH_MAX + 1), SLUICE_ELIMIT);
	sluice_close(c);
	t_fake_stop(f);
}

static void
test_take_returns_tasks_and_ack_release_fail(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->url);
	const char *tubes[] = { "a", "b" };
	struct sluice_take_opts o = {
		.tubes = tubes, .ntubes = 2, .max = 2, .detach = 1
	};
	struct sluice_task *t;
	struct sluice_after after;
	size_t n;

	(void)state;
	assert_int_equal(sluice_take(c, &o, &t, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(f->last_tubes, "a,b");
	assert_true(f->last_take_detach);
	assert_int_equal(f->last_take_max, 2);
	assert_true(t[0].id == 1 && t[0].lease == 1001);
	assert_int_equal(t[0].state, SLUICE_TAKEN);
	assert_string_equal(t[0].tube, "emails");
	assert_int_equal(t[0].payload_len, 5);
	assert_memory_equal(t[0].payload, "hello", 6); /* NUL after it */
	assert_null(t[0].key);
	assert_null(t[0].last_error);
	assert_string_equal(t[1].key, "k2");
	assert_string_equal(t[1].last_error, "boom");
	assert_true(t[1].deadline == 1700000060000ULL);

	assert_int_equal(sluice_ack(c, t[0].id, t[0].lease, NULL, &after), 0);
	assert_int_equal(after.state, 0);
	assert_true(after.id == 1);
	assert_int_equal(sluice_release(c, 2, 1002, 0, 5, &after), 0);
	assert_int_equal(after.state, SLUICE_READY);
	assert_int_equal(sluice_fail(c, 2, 1002, "boom", -1, &after), 0);
	assert_int_equal(after.state, SLUICE_DELAYED);
	assert_true(after.run_at == 5000);
	assert_int_equal(sluice_touch(c, 2, 1002, &after), 0);
	assert_true(after.deadline == 7000);
	assert_int_equal(sluice_bury(c, 2, 1002, NULL), 0);
	assert_int_equal(
	    sluice_release(c, 2, 1002, 0, (int64_t)UINT32_MAX + 1, NULL),
	    SLUICE_EINVAL);
	sluice_task_free(t);

	/* defaults: one task from "default" */
	assert_int_equal(sluice_take(c, NULL, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_string_equal(f->last_tubes, "default");
	assert_false(f->last_take_detach);
	sluice_task_free(t);
	sluice_close(c);
	t_fake_stop(f);
}

/* An empty take is status 0 with no task on the wire, ETIMEDOUT here. */
static void
test_take_with_nothing_is_etimedout(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->url);
	const char *tubes[] = { "empty" };
	struct sluice_take_opts o = { .tubes = tubes, .ntubes = 1 };
	struct sluice_task *t = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(sluice_take(c, &o, &t, &n), SLUICE_ETIMEDOUT);
	assert_null(t);
	assert_string_not_equal(sluice_errmsg(c), "");
	sluice_close(c);
	t_fake_stop(f);
}

static void
test_admin_calls(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->url);
	struct sluice_task *t;
	struct sluice_stats *st;
	struct sluice_error_count *ec;
	struct sluice_after after;
	uint64_t v = 0;
	size_t n;

	(void)state;
	assert_int_equal(sluice_kick(c, "emails", 3, &v), 0);
	assert_true(v == 3);
	assert_int_equal(sluice_kick_id(c, 9, &after), 0);
	assert_int_equal(after.state, SLUICE_READY);
	assert_int_equal(sluice_delete(c, 9), 0);
	assert_int_equal(sluice_delete_key(c, "emails", "k", &v), 0);
	assert_true(v == 17);
	assert_int_equal(sluice_flush(c, "emails", &v), 0);
	assert_true(v == 7);
	assert_int_equal(sluice_pause(c, "emails", 1000, &v), 0);
	assert_true(v == 1700000000000ULL);
	assert_int_equal(sluice_snapshot(c, &v), 0);
	assert_true(v == 555);
	assert_int_equal(sluice_promote(c, &v), 0);
	assert_true(v == 4);
	assert_int_equal(sluice_follow(c, "tcp://x:1"), 0);

	assert_int_equal(sluice_peek(c, 2, &t), 0);
	assert_string_equal(t->key, "k2");
	sluice_task_free(t);
	assert_int_equal(sluice_peek_key(c, "emails", "k2", &t), 0);
	sluice_task_free(t);
	assert_int_equal(sluice_peek_next(c, "emails", SLUICE_BURIED, &t), 0);
	sluice_task_free(t);
	assert_int_equal(
	    sluice_peek_next(c, "emails", SLUICE_TAKEN, &t), SLUICE_EINVAL);

	assert_int_equal(sluice_list(c, "emails", SLUICE_BURIED,
	                     SLUICE_ORDER_ATTEMPTS, 10, 0, &t, &n),
	    0);
	assert_int_equal(n, 2);
	assert_int_equal(t[0].payload_len, 0);
	assert_int_equal(t[0].size, 5);
	assert_string_equal((const char *)t[0].payload, "");
	sluice_task_free(t);

	assert_int_equal(sluice_stats(c, NULL, &st), 0);
	assert_int_equal(st->role, SLUICE_LEADER);
	assert_true(st->lsn == 10 && st->durable_lsn == 9);
	assert_string_equal(st->leader, "");
	assert_true(st->totals.ready == 5);
	assert_int_equal(st->ntubes, 1);
	assert_string_equal(st->tubes[0].name, "emails");
	assert_true(st->tubes[0].buried == 1);
	assert_int_equal(st->tubes[0].nkv, 2);
	assert_int_equal(
	    sluice_kv_get(st->tubes[0].kv, st->tubes[0].nkv, "acks", &v), 0);
	assert_true(v == 2);
	assert_int_equal(sluice_kv_get(st->kv, st->nkv, "uptime_ms", &v), 0);
	assert_true(v == 99);
	assert_int_equal(
	    sluice_kv_get(st->kv, st->nkv, "nope", &v), SLUICE_ENOTFOUND);
	sluice_stats_free(st);

	assert_int_equal(sluice_errors(c, "emails", &ec, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(ec[0].text, "timeout");
	assert_true(ec[0].count == 4);
	assert_string_equal(ec[1].text, "");
	sluice_errors_free(ec);
	sluice_close(c);
	t_fake_stop(f);
}

/* ---- errors, redirection, connection loss -------------------------------- */

static void
test_server_error_and_its_message(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ERROR);
	struct sluice_client *c = open_client(f->url);

	(void)state;
	atomic_store(&f->status, SLUICE_ESTALE);
	assert_int_equal(sluice_ack(c, 42, 1, NULL, NULL), SLUICE_ESTALE);
	assert_string_equal(sluice_errmsg(c), "lease 7 is not the current one");
	atomic_store(&f->mode, T_FAKE_ECHO);
	assert_int_equal(sluice_ack(c, 42, 1, NULL, NULL), 0);
	assert_string_equal(sluice_errmsg(c), "");
	sluice_close(c);
	t_fake_stop(f);
}

/* A follower names the leader: the request goes there, once. */
static void
test_not_leader_redirects_to_the_named_leader(void **state)
{
	struct t_fake *leader = t_fake_start(T_FAKE_ECHO);
	struct t_fake *follower = t_fake_start(T_FAKE_NOTLEADER);
	struct sluice_client *c;
	uint64_t id = 0;

	(void)state;
	snprintf(follower->leader, sizeof(follower->leader), "%s", leader->url);
	c = open_client(follower->url);
	assert_int_equal(sluice_put(c, NULL, "x", 1, &id, NULL), 0);
	assert_true(id == 42);
	assert_int_equal(atomic_load(&follower->nreq), 1);
	assert_int_equal(atomic_load(&leader->nreq), 1);
	assert_string_equal(sluice_url(c), leader->url);
	/* later calls stay with the leader */
	assert_int_equal(sluice_put(c, NULL, "y", 1, &id, NULL), 0);
	assert_int_equal(atomic_load(&follower->nreq), 1);
	sluice_close(c);
	t_fake_stop(follower);
	t_fake_stop(leader);
}

/* Without a leader URL the next URL of the list is tried. */
static void
test_not_leader_without_url_tries_the_next(void **state)
{
	struct t_fake *a = t_fake_start(T_FAKE_NOTLEADER);
	struct t_fake *b = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c;
	char urls[160];

	(void)state;
	snprintf(urls, sizeof(urls), "%s,%s", a->url, b->url);
	c = open_client(urls);
	assert_int_equal(sluice_delete(c, 5), 0);
	assert_int_equal(atomic_load(&a->nreq), 1);
	assert_int_equal(atomic_load(&b->nreq), 1);
	sluice_close(c);
	t_fake_stop(a);
	t_fake_stop(b);
}

/* Two nodes that each name the other (a cluster with no leader yet): the
 * call keeps looking, pausing between rounds, and ends with ENOTLEADER
 * at its timeout, having asked a bounded number of times. */
static void
test_not_leader_is_sought_until_the_timeout(void **state)
{
	struct t_fake *a = t_fake_start(T_FAKE_NOTLEADER);
	struct t_fake *b = t_fake_start(T_FAKE_NOTLEADER);
	struct sluice_client *c;
	int asked;

	(void)state;
	snprintf(a->leader, sizeof(a->leader), "%s", b->url);
	snprintf(b->leader, sizeof(b->leader), "%s", a->url);
	c = open_client(a->url);
	sluice_set_timeout(c, 300);
	assert_int_equal(
	    sluice_put(c, NULL, "x", 1, NULL, NULL), SLUICE_ENOTLEADER);
	asked = atomic_load(&a->nreq) + atomic_load(&b->nreq);
	assert_true(asked > 2 && asked < 200);
	assert_non_null(strstr(sluice_errmsg(c), "the leader is"));
	sluice_close(c);
	t_fake_stop(a);
	t_fake_stop(b);
}

/* A connection lost during a put without a key: ECONN, and the request is
 * never sent again, neither by nng nor by the library. */
static void
test_lost_connection_is_econn_and_never_resent(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_DROP);
	struct sluice_client *c = open_client(f->url);
	uint64_t id;

	(void)state;
	assert_int_equal(sluice_put(c, NULL, "x", 1, &id, NULL), SLUICE_ECONN);
	assert_non_null(strstr(sluice_errmsg(c), "lost"));
	usleep(600 * 1000); /* time for any reconnect and resend to happen */
	assert_int_equal(atomic_load(&f->nreq), 1);
	/* a take is not repeated either */
	assert_int_equal(sluice_take(c, NULL, &(struct sluice_task *) { NULL },
	                     &(size_t) { 0 }),
	    SLUICE_ECONN);
	usleep(300 * 1000);
	assert_int_equal(atomic_load(&f->nreq), 2);
	/* the handle reconnects for the next call */
	atomic_store(&f->mode, T_FAKE_ECHO);
	assert_int_equal(sluice_put(c, NULL, "x", 1, &id, NULL), 0);
	assert_int_equal(atomic_load(&f->nreq), 3);
	sluice_close(c);
	t_fake_stop(f);
}

/* Through nng (an ipc:// URL), REQ resend is off on the socket and on
 * the context the requests go through, so a long take is never sent
 * twice behind our back. */
static void
test_resend_is_disabled(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->ipc_url);
	nng_duration d = 0;
	nng_socket sock;
	nng_ctx ctx;

	(void)state;
	assert_int_equal(sluice_delete(c, 1), 0);
	assert_non_null(c->conn);
	assert_ptr_equal(c->conn->ops, &conn_nng_ops);
	conn_nng_sock(c->conn, &sock, &ctx);
	assert_int_equal(
	    nng_socket_get_ms(sock, NNG_OPT_REQ_RESENDTIME, &d), 0);
	assert_int_equal(d, NNG_DURATION_INFINITE);
	d = 0;
	assert_int_equal(nng_ctx_get_ms(ctx, NNG_OPT_REQ_RESENDTIME, &d), 0);
	assert_int_equal(d, NNG_DURATION_INFINITE);
	sluice_close(c);
	t_fake_stop(f);
}

/* Reads and keyed puts are sent once more after a lost connection. */
static void
test_lost_connection_retries_idempotent_requests(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_DROP_ONCE);
	struct sluice_client *c = open_client(f->url);
	struct sluice_put_opts o;
	struct sluice_stats *st;

	(void)state;
	assert_int_equal(sluice_stats(c, NULL, &st), 0);
	sluice_stats_free(st);
	assert_int_equal(atomic_load(&f->nop[MSG_OP_STATS]), 2);

	atomic_store(&f->mode, T_FAKE_DROP_ONCE);
	sluice_put_opts_init(&o);
	o.key = "order-1";
	assert_int_equal(sluice_put(c, &o, "x", 1, NULL, NULL), 0);
	assert_int_equal(atomic_load(&f->nop[MSG_OP_PUT]), 2);
	sluice_close(c);
	t_fake_stop(f);
}

/* A keyed put sent once more after a lost connection, and refused the
 * second time: the first may have been done (the leader that died may
 * have committed it), so the outcome is unknown (ECONN), not the
 * refusal, which says only that the second did nothing. Before, a put
 * whose leader died with it committed returned ENOTLEADER once no leader
 * was found within the timeout (the chaos run with moves caught such a
 * put's task afterwards). A read refused the second time is refused. */
static void
test_a_resend_refused_leaves_a_change_unknown(void **state)
{
	static const int refusals[] = { SLUICE_ENOTLEADER, SLUICE_ENOSPC };
	struct sluice_put_opts o;
	struct sluice_stats *st = NULL;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct t_fake *f = t_fake_start(T_FAKE_DROP_ONCE);
		struct sluice_client *c = open_client(f->url);

		atomic_store(&f->status, refusals[i]);
		atomic_store(&f->after_drop,
		    refusals[i] == SLUICE_ENOTLEADER ? T_FAKE_NOTLEADER
		                                     : T_FAKE_ERROR);
		sluice_set_timeout(c, 300);
		sluice_put_opts_init(&o);
		o.key = "order-1";
		assert_int_equal(
		    sluice_put(c, &o, "x", 1, NULL, NULL), SLUICE_ECONN);
		assert_true(atomic_load(&f->nop[MSG_OP_PUT]) >= 2);
		assert_non_null(strstr(sluice_errmsg(c), "may or may not"));
		assert_non_null(strstr(sluice_errmsg(c),
		    refusals[i] == SLUICE_ENOTLEADER ? "leader" : "lease 7"));
		/* a read: its refusal stands */
		atomic_store(&f->mode, T_FAKE_DROP_ONCE);
		assert_int_equal(sluice_stats(c, NULL, &st), refusals[i]);
		sluice_close(c);
		t_fake_stop(f);
	}
}

/* cluster: every field of every member, in one block; a read, so it is
 * sent once more after a lost connection. */
static void
test_cluster_returns_every_member(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_DROP_ONCE);
	struct sluice_client *c = open_client(f->url);
	const struct sluice_member *m;
	struct sluice_cluster *cl;

	(void)state;
	assert_int_equal(sluice_cluster(c, &cl), 0);
	assert_int_equal(atomic_load(&f->nop[MSG_OP_CLUSTER]), 2);
	assert_string_equal(cl->cluster, "prod");
	assert_string_equal(cl->node, "b");
	assert_string_equal(cl->leader, "a");
	assert_string_equal(
	    cl->etcd_error, "etcd 127.0.0.1:2379: connection refused");
	assert_int_equal(cl->ttl_ms, 10000);
	assert_int_equal(cl->n, 3);
	m = &cl->members[0];
	assert_string_equal(m->name, "a");
	assert_string_equal(m->client_url, "tcp://10.0.0.1:7711");
	assert_string_equal(m->repl_url, "tcp://10.0.0.1:7712");
	assert_int_equal(m->role, SLUICE_NODE_LEADER);
	assert_true(m->lease && !m->sync);
	assert_true(m->epoch == 3 && m->durable_lsn == 1234);
	assert_true(m->lag_records == 0 && m->age_ms == 300);
	assert_true(m->lease_until == T_FAKE_LEASE_UNTIL);
	m = &cl->members[1];
	assert_string_equal(m->name, "b");
	assert_int_equal(m->role, SLUICE_NODE_FOLLOWER);
	assert_true(m->sync && !m->lease);
	assert_true(m->lag_records == 4 && m->lease_until == 0);
	m = &cl->members[2];
	assert_string_equal(m->client_url, "");
	assert_string_equal(sluice_node_role_name(m->role), "candidate");
	sluice_cluster_free(cl);
	assert_string_equal(
	    sluice_node_role_name(SLUICE_NODE_FENCED), "fenced");
	assert_string_equal(sluice_node_role_name(4), "?");
	assert_string_equal(sluice_node_role_name(-1), "?");
	assert_int_equal(sluice_cluster(c, NULL), SLUICE_EINVAL);
	sluice_close(c);
	t_fake_stop(f);
}

/* switchover: a follower sends it on to the leader it names (once); a
 * lost connection is ECONN and the request is never sent again; a bad
 * name never leaves the library. */
static void
test_switchover_goes_to_the_leader_and_is_never_resent(void **state)
{
	struct t_fake *leader = t_fake_start(T_FAKE_ECHO);
	struct t_fake *follower = t_fake_start(T_FAKE_NOTLEADER);
	struct sluice_switchover_result res;
	char big[SLUICE_NODE_MAX + 2];
	struct sluice_client *c;

	(void)state;
	snprintf(follower->leader, sizeof(follower->leader), "%s", leader->url);
	c = open_client(follower->url);
	assert_int_equal(sluice_switchover(c, "b", 2500, &res), 0);
	assert_true(res.epoch == 4);
	assert_string_equal(res.leader, T_FAKE_NEW_LEADER);
	assert_int_equal(atomic_load(&follower->nop[MSG_OP_SWITCHOVER]), 1);
	assert_int_equal(atomic_load(&leader->nop[MSG_OP_SWITCHOVER]), 1);
	assert_string_equal(leader->last_node, "b");
	assert_int_equal(leader->last_switchover_timeout, 2500);
	assert_int_equal(sluice_switchover(c, "b", 0, NULL), 0);

	memset(big, 'n', sizeof(big));
	big[SLUICE_NODE_MAX + 1] = '\0';
	assert_int_equal(sluice_switchover(c, "", 0, NULL), SLUICE_EINVAL);
	assert_int_equal(sluice_switchover(c, NULL, 0, NULL), SLUICE_EINVAL);
	assert_int_equal(sluice_switchover(c, big, 0, NULL), SLUICE_EINVAL);
	assert_non_null(strstr(sluice_errmsg(c), "1-64 bytes"));
	big[SLUICE_NODE_MAX] = '\0';
	assert_int_equal(sluice_switchover(c, big, 0, NULL), 0);
	assert_int_equal(atomic_load(&leader->nop[MSG_OP_SWITCHOVER]), 3);

	atomic_store(&leader->mode, T_FAKE_DROP);
	assert_int_equal(sluice_switchover(c, "b", 0, &res), SLUICE_ECONN);
	usleep(300 * 1000); /* time for any resend to happen */
	assert_int_equal(atomic_load(&leader->nreq), 4);
	sluice_close(c);
	t_fake_stop(follower);
	t_fake_stop(leader);
}

/* The leader may wait timeout_ms for the node to catch up: the call waits
 * that long on top of its own timeout. */
static void
test_switchover_timeout_extends_the_call(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->url);

	(void)state;
	sluice_set_timeout(c, 100);
	atomic_store(&f->delay_ms, 400);
	assert_int_equal(sluice_switchover(c, "b", 600, NULL), 0);
	assert_int_equal(sluice_switchover(c, "b", 0, NULL), SLUICE_ETIMEDOUT);
	sluice_close(c);
	t_fake_stop(f);
}

static void
test_no_reply_is_etimedout(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_SILENT);
	struct sluice_client *c = open_client(f->url);
	int64_t t0 = now_ms();

	(void)state;
	sluice_set_timeout(c, 200);
	assert_int_equal(sluice_delete(c, 1), SLUICE_ETIMEDOUT);
	assert_true(now_ms() - t0 < 3000);
	assert_int_equal(atomic_load(&f->nreq), 1);
	sluice_close(c);
	t_fake_stop(f);
}

/* Over tcp:// a reply is waited for in a recv() bounded by the socket's
 * receive timeout, set again only when a call's timeout changes: a call
 * after one with a longer timeout still gives up at its own. */
static void
test_tcp_each_call_keeps_its_own_timeout(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->url);
	int64_t t0, took;

	(void)state;
	sluice_set_timeout(c, 5000);
	assert_int_equal(sluice_delete(c, 1), 0);
	atomic_store(&f->delay_ms, 1500);
	sluice_set_timeout(c, 200);
	t0 = now_ms();
	assert_int_equal(sluice_delete(c, 1), SLUICE_ETIMEDOUT);
	took = now_ms() - t0;
	assert_true(took >= 190);
	assert_true(took < 1400);
	/* and a longer one again waits for the slow reply */
	sluice_set_timeout(c, 5000);
	assert_int_equal(sluice_delete(c, 1), 0);
	sluice_close(c);
	t_fake_stop(f);
}

/* A take may wait its own wait on top of the call's timeout. */
static void
test_take_timeout_includes_its_wait(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->url);
	struct sluice_take_opts o = { .wait_ms = 600 };
	struct sluice_task *t;
	size_t n;

	(void)state;
	sluice_set_timeout(c, 100);
	atomic_store(&f->delay_ms, 400);
	assert_int_equal(sluice_take(c, &o, &t, &n), 0);
	sluice_task_free(t);
	assert_int_equal(sluice_delete(c, 1), SLUICE_ETIMEDOUT);
	sluice_close(c);
	t_fake_stop(f);
}

static void
test_garbage_reply_is_eproto(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_GARBAGE);
	struct sluice_client *c = open_client(f->url);

	(void)state;
	assert_int_equal(sluice_delete(c, 1), SLUICE_EPROTO);
	assert_non_null(strstr(sluice_errmsg(c), "bad reply"));
	sluice_close(c);
	t_fake_stop(f);
}

/* Nothing listening: ECONN within the connect timeout, naming the URL;
 * with a second URL that answers, the call goes there. */
static void
test_unreachable_server(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct t_fake *gone = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c;
	char dead[64], urls[160];
	int64_t t0;

	(void)state;
	snprintf(dead, sizeof(dead), "%s", gone->url);
	t_fake_stop(gone); /* its port is now closed */
	c = open_client(dead);
	sluice_set_connect_timeout(c, 300);
	t0 = now_ms();
	assert_int_equal(sluice_delete(c, 1), SLUICE_ECONN);
	assert_true(now_ms() - t0 < 2000);
	assert_non_null(strstr(sluice_errmsg(c), dead));
	sluice_close(c);

	snprintf(urls, sizeof(urls), "%s,%s", dead, f->url);
	c = open_client(urls);
	sluice_set_connect_timeout(c, 300);
	assert_int_equal(sluice_delete(c, 1), 0);
	assert_string_equal(sluice_url(c), f->url);
	sluice_close(c);
	t_fake_stop(f);
}

/* ---- SP over TCP against a raw server ------------------------------------ */

enum raw_mode {
	RAW_HTTP,      /* answers our greeting in HTTP */
	RAW_BEANSTALK, /* answers it as beanstalkd does a bad command */
	RAW_SILENT,    /* accepts, reads, says nothing */
	RAW_PROBED,    /* closes on our greeting, answers a GET in HTTP (as
	                  nng's HTTP server does) */
	RAW_STALE,     /* a reply to an older id before each reply, and one
	                  after it in the same write */
	RAW_CUT,       /* half a reply, then closes */
	RAW_SPLIT,     /* each reply a few bytes per write */
	RAW_HUGE,      /* a frame longer than any reply may be */
	RAW_ONCE,      /* answers one request per connection, then closes */
};

enum {
	RAW_IO_MS = 3000,    /* the longest the server waits for the client */
	RAW_IDS = 16,        /* request ids kept */
	RAW_BIG = 300 << 10, /* the payload of a take in RAW_SPLIT */
};

struct raw {
	int lfd;
	char url[64];
	enum raw_mode mode;
	pthread_t thread;
	atomic_bool stop;
	atomic_int naccept;
	atomic_int nreq;
	uint32_t ids[RAW_IDS]; /* of the first requests, in order */
	char *big;             /* RAW_BIG bytes */
};

/* Reads exactly `n` bytes, waiting at most RAW_IO_MS for each piece. */
static bool
raw_read(int fd, void *p, size_t n)
{
	for (size_t got = 0; got < n;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pf, 1, RAW_IO_MS) != 1)
			return false;
		if ((r = read(fd, (char *)p + got, n - got)) <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

static bool
raw_write(int fd, const void *p, size_t n)
{
	return send(fd, p, n, MSG_NOSIGNAL) == (ssize_t)n;
}

/* Waits (bounded) until the client closes its side. */
static void
raw_drain(struct raw *r, int fd)
{
	char b[256];

	for (int i = 0; i < 100 && !atomic_load(&r->stop); i++) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };

		if (poll(&pf, 1, 50) == 1 && read(fd, b, sizeof(b)) <= 0)
			return;
	}
}

/* The reply to `q`: a put gets `put_id`; a take one task of RAW_BIG
 * bytes; everything else an error. Framed with `id`, appended to `b`. */
static void
raw_frame(struct raw *r, struct buf *b, uint32_t id, const struct msg_req *q,
    uint64_t put_id)
{
	struct msg_rep rep = { .op = q->op };
	struct msg_task t;
	size_t at = b->len;

	buf_extend(b, SP_LEN);
	buf_put_u32(b, 0);
	sp_store_u32(b->data + at + SP_LEN, id);
	if (q->op == MSG_OP_PUT) {
		rep.put.id = put_id;
		rep.put.created = true;
		assert_int_equal(msg_encode_rep(b, &rep), 0);
	} else if (q->op == MSG_OP_TAKE) {
		memset(&t, 0, sizeof(t));
		t.id = 9;
		t.lease = 10;
		t.state = MSG_ST_TAKEN;
		t.tube = msg_cstr("big");
		t.payload.p = r->big;
		t.payload.len = RAW_BIG;
		t.size = RAW_BIG;
		rep.tasks.n = 1;
		rep.tasks.tasks = &t;
		assert_int_equal(msg_encode_rep(b, &rep), 0);
	} else {
		msg_encode_err(b, q->op, SLUICE_EINVAL, "raw", NULL);
	}
	sp_store_len(b->data + at, b->len - at - SP_LEN);
}

/* Serves requests on `fd` as the mode says, until the client goes. */
static void
raw_serve(struct raw *r, int fd)
{
	uint8_t hdr[SP_HANDSHAKE], fh[SP_LEN + 4];
	struct buf body, out;
	struct msg_req q;

	buf_init(&body);
	buf_init(&out);
	sp_handshake(hdr, SP_PROTO_REP0);
	if (!raw_write(fd, hdr, sizeof(hdr)))
		goto done;
	while (raw_read(fd, fh, sizeof(fh))) {
		uint64_t len = sp_load_len(fh);
		uint32_t id = sp_load_u32(fh + SP_LEN);
		int n = atomic_fetch_add(&r->nreq, 1);

		if (n < RAW_IDS)
			r->ids[n] = id;
		if (len < 4 || len > (1 << 20))
			break;
		buf_reset(&body);
		if (!raw_read(fd, buf_extend(&body, len - 4), len - 4))
			break;
		assert_int_equal(
		    msg_decode_req(body.data, body.len, NULL, &q), 0);
		buf_reset(&out);
		switch (r->mode) {
		case RAW_STALE:
			raw_frame(r, &out, id - 1, &q, 7);
			raw_write(fd, out.data, out.len);
			usleep(5 * 1000);
			buf_reset(&out);
			raw_frame(r, &out, id, &q, 42);
			raw_frame(r, &out, id - 2, &q, 8);
			raw_write(fd, out.data, out.len);
			break;
		case RAW_CUT:
			raw_frame(r, &out, id, &q, 42);
			raw_write(fd, out.data, out.len / 2);
			goto done;
		case RAW_SPLIT:
			raw_frame(r, &out, id, &q, 42);
			for (size_t at = 0, k = 1; at < out.len; at += k) {
				/* a byte at a time at first, then larger */
				k = at < 40 ? 1 : 4093;
				if (k > out.len - at)
					k = out.len - at;
				if (!raw_write(fd, out.data + at, k))
					goto done;
				if (at < 40)
					usleep(500);
			}
			break;
		case RAW_HUGE:
			sp_store_len(fh, (uint64_t)MSG_SIZE_MAX + 2048);
			raw_write(fd, fh, sizeof(fh));
			break;
		default:
			raw_frame(r, &out, id, &q, 42);
			raw_write(fd, out.data, out.len);
			if (r->mode == RAW_ONCE)
				goto done;
		}
	}
done:
	buf_fini(&body);
	buf_fini(&out);
}

static void
raw_conn(struct raw *r, int fd)
{
	static const char http[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
	static const char bs[] = "UNKNOWN_COMMAND\r\n";
	static const char notfound[] = "HTTP/1.0 404 Not Found\r\n\r\n";
	uint8_t in[SP_HANDSHAKE];
	char line[64];
	size_t n = 0;

	if (r->mode == RAW_PROBED) {
		/* our greeting: close at once; an HTTP request: answer it */
		if (!raw_read(fd, in, 4) || memcmp(in, "GET ", 4) != 0)
			return;
		while (n < sizeof(line) - 1 && raw_read(fd, line + n, 1) &&
		    !(n >= 3 && memcmp(line + n - 3, "\r\n\r", 3) == 0 &&
		        line[n] == '\n'))
			n++;
		raw_write(fd, notfound, sizeof(notfound) - 1);
		return;
	}
	if (!raw_read(fd, in, sizeof(in)))
		return;
	switch (r->mode) {
	case RAW_HTTP:
		raw_write(fd, http, sizeof(http) - 1);
		raw_drain(r, fd);
		return;
	case RAW_BEANSTALK:
		raw_write(fd, bs, sizeof(bs) - 1);
		raw_drain(r, fd);
		return;
	case RAW_SILENT:
		raw_drain(r, fd);
		return;
	default:
		raw_serve(r, fd);
	}
}

static void *
raw_run(void *arg)
{
	struct raw *r = arg;

	while (!atomic_load(&r->stop)) {
		struct pollfd pf = { .fd = r->lfd, .events = POLLIN };
		int fd, one = 1;

		if (poll(&pf, 1, 20) != 1)
			continue;
		if ((fd = accept4(r->lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		atomic_fetch_add(&r->naccept, 1);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		raw_conn(r, fd);
		close(fd);
	}
	return NULL;
}

static struct raw *
raw_start(enum raw_mode mode)
{
	struct raw *r = calloc(1, sizeof(*r));
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);

	assert_non_null(r);
	r->mode = mode;
	assert_non_null(r->big = malloc(RAW_BIG));
	for (size_t i = 0; i < RAW_BIG; i++)
		r->big[i] = (char)('a' + i % 26);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(
	    (r->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0);
	assert_int_equal(bind(r->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(r->lfd, 8), 0);
	assert_int_equal(getsockname(r->lfd, (struct sockaddr *)&a, &alen), 0);
	snprintf(r->url, sizeof(r->url), "tcp://127.0.0.1:%u",
	    (unsigned)ntohs(a.sin_port));
	assert_int_equal(pthread_create(&r->thread, NULL, raw_run, r), 0);
	return r;
}

static void
raw_stop(struct raw *r)
{
	atomic_store(&r->stop, true);
	pthread_join(r->thread, NULL);
	close(r->lfd);
	free(r->big);
	free(r);
}

/* A server that answers in HTTP is named, and the handle goes on to the
 * next URL. */
static void
test_tcp_peer_speaking_http_is_named(void **state)
{
	struct raw *r = raw_start(RAW_HTTP);
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(r->url);
	char want[160], urls[160];

	(void)state;
	assert_int_equal(sluice_delete(c, 1), SLUICE_ECONN);
	snprintf(want, sizeof(want),
	    "%s speaks HTTP, not the sluice protocol; is this the --http "
	    "port?",
	    r->url);
	assert_string_equal(sluice_errmsg(c), want);
	sluice_close(c);

	snprintf(urls, sizeof(urls), "%s,%s", r->url, f->url);
	c = open_client(urls);
	assert_int_equal(sluice_delete(c, 1), 0);
	assert_string_equal(sluice_url(c), f->url);
	sluice_close(c);
	t_fake_stop(f);
	raw_stop(r);
}

/* beanstalkd's answer to a line it does not know names it too. */
static void
test_tcp_peer_speaking_beanstalk_is_named(void **state)
{
	struct raw *r = raw_start(RAW_BEANSTALK);
	struct sluice_client *c = open_client(r->url);

	(void)state;
	assert_int_equal(sluice_delete(c, 1), SLUICE_ECONN);
	assert_non_null(strstr(sluice_errmsg(c), "speaks the beanstalk"));
	assert_non_null(strstr(sluice_errmsg(c), "--beanstalk port"));
	sluice_close(c);
	raw_stop(r);
}

/* nng's HTTP server closes the connection on our greeting without a word:
 * asked again in HTTP, it is named. */
static void
test_tcp_peer_that_closes_is_probed(void **state)
{
	struct raw *r = raw_start(RAW_PROBED);
	struct sluice_client *c = open_client(r->url);

	(void)state;
	assert_int_equal(sluice_delete(c, 1), SLUICE_ECONN);
	assert_non_null(strstr(sluice_errmsg(c), "speaks HTTP"));
	assert_int_equal(atomic_load(&r->naccept), 2);
	sluice_close(c);
	raw_stop(r);
}

/* A peer that accepts and stays silent costs connect_ms, not more: the
 * call's timeout does not extend the connect. */
static void
test_tcp_silent_peer_costs_the_connect_timeout(void **state)
{
	struct raw *r = raw_start(RAW_SILENT);
	struct sluice_client *c = open_client(r->url);
	int64_t t0, took;

	(void)state;
	sluice_set_connect_timeout(c, 300);
	sluice_set_timeout(c, 10000);
	t0 = now_ms();
	assert_int_equal(sluice_delete(c, 1), SLUICE_ECONN);
	took = now_ms() - t0;
	assert_true(took >= 290);
	assert_true(took < 2000);
	assert_non_null(strstr(sluice_errmsg(c), "sent nothing within 300 ms"));
	assert_int_equal(atomic_load(&r->nreq), 0);
	sluice_close(c);
	raw_stop(r);
}

/* Replies to other ids (left over from calls that gave up) are skipped,
 * before the wanted one and after it in the same read; ids go up by one
 * per request with the top bit set. */
static void
test_tcp_stale_replies_are_skipped(void **state)
{
	struct raw *r = raw_start(RAW_STALE);
	struct sluice_client *c = open_client(r->url);
	uint64_t id;

	(void)state;
	for (int i = 0; i < 3; i++) {
		id = 0;
		assert_int_equal(sluice_put(c, NULL, "x", 1, &id, NULL), 0);
		assert_true(id == 42);
	}
	assert_int_equal(atomic_load(&r->nreq), 3);
	assert_int_equal(atomic_load(&r->naccept), 1);
	for (int i = 0; i < 3; i++)
		assert_true(r->ids[i] & SP_ID_BIT);
	assert_true(r->ids[1] == (r->ids[0] + 1) ||
	    (r->ids[0] == 0xffffffffu && r->ids[1] == SP_ID_BIT));
	sluice_close(c);
	raw_stop(r);
}

/* A connection closed halfway through a reply: ECONN, the put is not
 * sent again, and the next call connects anew. */
static void
test_tcp_reply_cut_short_is_econn(void **state)
{
	struct raw *r = raw_start(RAW_CUT);
	struct sluice_client *c = open_client(r->url);

	(void)state;
	assert_int_equal(sluice_put(c, NULL, "x", 1, NULL, NULL), SLUICE_ECONN);
	assert_non_null(strstr(sluice_errmsg(c), "lost before the reply"));
	assert_int_equal(atomic_load(&r->nreq), 1);
	assert_int_equal(sluice_put(c, NULL, "x", 1, NULL, NULL), SLUICE_ECONN);
	assert_int_equal(atomic_load(&r->nreq), 2);
	assert_int_equal(atomic_load(&r->naccept), 2);
	sluice_close(c);
	raw_stop(r);
}

/* Replies that arrive a byte at a time, and one of 300 KiB in many
 * pieces, are put back together. */
static void
test_tcp_replies_split_into_many_writes(void **state)
{
	struct raw *r = raw_start(RAW_SPLIT);
	struct sluice_client *c = open_client(r->url);
	struct sluice_task *t;
	uint64_t id = 0;
	size_t n = 0;

	(void)state;
	assert_int_equal(sluice_put(c, NULL, "x", 1, &id, NULL), 0);
	assert_true(id == 42);
	assert_int_equal(sluice_take(c, NULL, &t, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(t[0].payload_len, RAW_BIG);
	assert_memory_equal(t[0].payload, r->big, RAW_BIG);
	sluice_task_free(t);
	assert_int_equal(sluice_put(c, NULL, "x", 1, &id, NULL), 0);
	assert_int_equal(atomic_load(&r->naccept), 1);
	sluice_close(c);
	raw_stop(r);
}

/* A frame longer than the largest reply is a protocol error: the
 * connection is closed, the next call opens another. */
static void
test_tcp_oversized_frame_is_eproto(void **state)
{
	struct raw *r = raw_start(RAW_HUGE);
	struct sluice_client *c = open_client(r->url);

	(void)state;
	assert_int_equal(sluice_delete(c, 1), SLUICE_EPROTO);
	assert_non_null(strstr(sluice_errmsg(c), "bad reply"));
	assert_int_equal(sluice_delete(c, 1), SLUICE_EPROTO);
	assert_int_equal(atomic_load(&r->naccept), 2);
	sluice_close(c);
	raw_stop(r);
}

/* A connection the server closed while the handle was idle is replaced
 * before the next request goes out: a put is not lost to it. */
static void
test_tcp_connection_closed_while_idle_is_replaced(void **state)
{
	struct raw *r = raw_start(RAW_ONCE);
	struct sluice_client *c = open_client(r->url);

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(sluice_put(c, NULL, "x", 1, NULL, NULL), 0);
		/* the server's close reaches the client (bounded) */
		for (int k = 0; k < 100 && c->conn->ops->up(c->conn); k++)
			usleep(10 * 1000);
	}
	assert_int_equal(atomic_load(&r->nreq), 3);
	assert_int_equal(atomic_load(&r->naccept), 3);
	sluice_close(c);
	raw_stop(r);
}

/* A host name is resolved (off the caller's thread, within the connect
 * timeout), and each of its addresses tried: "localhost" may name ::1
 * first, where nothing listens. */
static void
test_tcp_host_by_name(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c;
	char url[64];

	(void)state;
	snprintf(
	    url, sizeof(url), "tcp://localhost:%s", strrchr(f->url, ':') + 1);
	c = open_client(url);
	assert_int_equal(sluice_delete(c, 1), 0);
	sluice_close(c);

	snprintf(url, sizeof(url), "tcp://no-such-host.invalid:1");
	c = open_client(url);
	sluice_set_connect_timeout(c, 500);
	assert_int_equal(sluice_delete(c, 1), SLUICE_ECONN);
	assert_non_null(strstr(sluice_errmsg(c), "no-such-host.invalid"));
	sluice_close(c);
	t_fake_stop(f);
}

/* The other schemes still go through nng: every call works over ipc://. */
static void
test_ipc_goes_through_nng(void **state)
{
	struct t_fake *f = t_fake_start(T_FAKE_ECHO);
	struct sluice_client *c = open_client(f->ipc_url);
	struct sluice_task *t;
	uint64_t id = 0;
	size_t n;

	(void)state;
	assert_int_equal(sluice_put(c, NULL, "hi", 2, &id, NULL), 0);
	assert_true(id == 42);
	assert_ptr_equal(c->conn->ops, &conn_nng_ops);
	assert_int_equal(sluice_take(c, NULL, &t, &n), 0);
	sluice_task_free(t);
	sluice_close(c);

	c = open_client(f->url);
	assert_int_equal(sluice_put(c, NULL, "hi", 2, &id, NULL), 0);
	assert_ptr_equal(c->conn->ops, &conn_tcp_ops);
	sluice_close(c);
	t_fake_stop(f);
}

static void
test_open_refuses_bad_lists(void **state)
{
	struct sluice_client *c = NULL;

	(void)state;
	assert_int_equal(sluice_open("tcp://a:1,", &c), SLUICE_EINVAL);
	assert_null(c);
	assert_int_equal(sluice_open(NULL, NULL), SLUICE_EINVAL);
	assert_int_equal(sluice_open(NULL, &c), 0);
	assert_string_equal(sluice_url(c), SLUICE_DEFAULT_URL);
	assert_string_equal(sluice_errmsg(c), "");
	sluice_close(c);
	sluice_close(NULL);
	assert_string_equal(sluice_state_name(0), "gone");
	assert_string_equal(sluice_state_name(SLUICE_BURIED), "buried");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls_parse_lists_and_trims),
		cmocka_unit_test(test_urls_parse_refuses_empty_and_schemeless),
		cmocka_unit_test(test_open_refuses_bad_lists),
		cmocka_unit_test(test_put_carries_every_option),
		cmocka_unit_test(test_put_batch_reports_each_item),
		cmocka_unit_test(test_take_returns_tasks_and_ack_release_fail),
		cmocka_unit_test(test_take_with_nothing_is_etimedout),
		cmocka_unit_test(test_admin_calls),
		cmocka_unit_test(test_server_error_and_its_message),
		cmocka_unit_test(test_not_leader_redirects_to_the_named_leader),
		cmocka_unit_test(test_not_leader_without_url_tries_the_next),
		cmocka_unit_test(test_not_leader_is_sought_until_the_timeout),
		cmocka_unit_test(
		    test_lost_connection_is_econn_and_never_resent),
		cmocka_unit_test(
		    test_lost_connection_retries_idempotent_requests),
		cmocka_unit_test(test_a_resend_refused_leaves_a_change_unknown),
		cmocka_unit_test(test_resend_is_disabled),
		cmocka_unit_test(test_cluster_returns_every_member),
		cmocka_unit_test(
		    test_switchover_goes_to_the_leader_and_is_never_resent),
		cmocka_unit_test(test_switchover_timeout_extends_the_call),
		cmocka_unit_test(test_no_reply_is_etimedout),
		cmocka_unit_test(test_tcp_each_call_keeps_its_own_timeout),
		cmocka_unit_test(test_take_timeout_includes_its_wait),
		cmocka_unit_test(test_garbage_reply_is_eproto),
		cmocka_unit_test(test_unreachable_server),
		cmocka_unit_test(test_tcp_peer_speaking_http_is_named),
		cmocka_unit_test(test_tcp_peer_speaking_beanstalk_is_named),
		cmocka_unit_test(test_tcp_peer_that_closes_is_probed),
		cmocka_unit_test(
		    test_tcp_silent_peer_costs_the_connect_timeout),
		cmocka_unit_test(test_tcp_stale_replies_are_skipped),
		cmocka_unit_test(test_tcp_reply_cut_short_is_econn),
		cmocka_unit_test(test_tcp_replies_split_into_many_writes),
		cmocka_unit_test(test_tcp_oversized_frame_is_eproto),
		cmocka_unit_test(
		    test_tcp_connection_closed_while_idle_is_replaced),
		cmocka_unit_test(test_tcp_host_by_name),
		cmocka_unit_test(test_ipc_goes_through_nng),
	};

	if (getenv("T"))
		cmocka_set_test_filter(getenv("T"));
	return cmocka_run_group_tests_name("client", tests, NULL, NULL);
}
