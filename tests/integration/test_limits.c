/* Flow limits against real servers: a tube's rate holds greedy workers
 * to its figure second by second (a generous band: the exact figure is
 * the benchmark's); a concurrency cap is never exceeded by the workers
 * holding leases, through a kill -9 and restart in the middle; a take the
 * rate holds back waits and wakes when a token comes, one the cap holds
 * back when a slot is freed; bad limits are
 * refused with their reason and change nothing; the limits survive a
 * restart and reach a follower; and the beanstalk face's reserve honours
 * a cap. */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"
#include "it_http.h"
#include "it_node.h"

enum {
	WORKERS = 8,
	RATE = 200,    /* per second */
	RUN_MS = 3000, /* the rate test's run */
	STAMPS_MAX = 4096,
	CAP = 4,
	BURST = 20,
};

static void
put_n(struct sluice_client *c, const char *tube, int n)
{
	struct sluice_batch_item items[100];

	for (int done = 0; done < n;) {
		int k = n - done < 100 ? n - done : 100;

		memset(items, 0, sizeof(items));
		for (int i = 0; i < k; i++) {
			sluice_put_opts_init(&items[i].opts);
			items[i].opts.tube = tube;
			items[i].payload = "w";
			items[i].len = 1;
		}
		it_rc(c, sluice_put_batch(c, items, (size_t)k), 0);
		done += k;
	}
}

static void
set_limits(struct sluice_client *c, const char *tube, unsigned set,
    uint32_t rate, uint32_t per_ms, uint32_t burst, uint32_t conc)
{
	struct sluice_limits l = { set, rate, per_ms, burst, conc, 0, 0, 0 };
	struct sluice_limits now;

	it_rc(c, sluice_tube_limit(c, tube, &l, 0, &now), 0);
	assert_int_equal(now.set, set);
}

/* ---- the rate --------------------------------------------------------- */

struct rate_run {
	const char *url;
	int64_t start, end; /* monotonic ms */
	atomic_uint n;
	int64_t stamps[STAMPS_MAX];
	struct it_errs errs;
};

/* Takes and acks as fast as it gets tasks until the run ends. */
static void *
greedy(void *arg)
{
	struct rate_run *r = arg;
	struct sluice_client *c = it_client_url(r->url);
	const char *tubes[] = { "rl" };
	struct sluice_take_opts o = { tubes, 1, 100, 1, 0, 0, 0 };

	if (c == NULL) {
		it_errs_add(&r->errs, "no client");
		return NULL;
	}
	while (it_mono_ms() < r->end) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int rc = sluice_take(c, &o, &t, &n);

		if (rc == SLUICE_ETIMEDOUT)
			continue; /* no token yet */
		if (rc != 0) {
			it_errs_add(&r->errs, "take: %s", sluice_strerror(rc));
			break;
		}
		if (n == 1) {
			unsigned i = atomic_fetch_add(&r->n, 1);

			if (i < STAMPS_MAX)
				r->stamps[i] = it_mono_ms();
			if (sluice_ack(c, t[0].id, t[0].lease, NULL, NULL))
				it_errs_add(&r->errs, "ack failed");
		}
		sluice_task_free(t);
	}
	sluice_close(c);
	return NULL;
}

/* 8 greedy workers on a tube limited to 200/s (burst 20) for 3 s: each
 * whole second hands out 200 within a generous band, and the whole run
 * no more than the rate allows. Unlimited, the same workers take far
 * more (the limit is what holds them). */
static void
test_rate_holds_greedy_workers(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct rate_run *r = calloc(1, sizeof(*r));
	pthread_t th[WORKERS];
	struct sluice_client *c;
	unsigned per[3] = { 0 }, total;

	assert_non_null(r);
	it_start(s);
	c = it_client(s);
	put_n(c, "rl", 1500);
	set_limits(c, "rl", SLUICE_LIM_RATE, RATE, 1000, BURST, 0);
	it_errs_init(&r->errs);
	r->url = s->url;
	r->start = it_mono_ms();
	r->end = r->start + RUN_MS;
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, greedy, r), 0);
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	it_errs_check(&r->errs);
	total = atomic_load(&r->n);
	for (unsigned i = 0; i < total && i < STAMPS_MAX; i++) {
		int64_t sec = (r->stamps[i] - r->start) / 1000;

		if (sec >= 0 && sec < 3)
			per[sec]++;
	}
	print_message("handed out per second: %u %u %u (total %u)\n", per[0],
	    per[1], per[2], total);
	/* the limit's own bound, whatever the timing: burst + rate * time,
	 * with 100 ms for the last takes' answers */
	assert_true(total <= BURST + RATE * (RUN_MS + 100) / 1000);
	for (int i = 0; i < 3; i++)
		assert_true(
		    per[i] >= RATE * 6 / 10 && per[i] <= RATE * 12 / 10);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	free(r);
}

/* take -w 0 on a tube out of tokens returns nothing at once; a take
 * that may wait is answered when the next token comes (a timer: well
 * before its wait ends), and the CLI's stats -t shows the limits. */
static void
test_rate_wait_wakes_on_token(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	const char *tubes[] = { "slow" };
	struct sluice_take_opts now = { tubes, 1, 0, 1, 1, 0, 0 };
	struct sluice_take_opts wait = { tubes, 1, 5000, 1, 1, 0, 0 };
	struct sluice_client *c;
	struct sluice_task *t = NULL;
	char out[8192];
	size_t n = 0;
	int64_t t0, took;

	it_start(s);
	c = it_client(s);
	put_n(c, "slow", 5);
	/* 2 a second, burst 1: one now, the next 500 ms later */
	set_limits(c, "slow", SLUICE_LIM_RATE, 2, 1000, 1, 0);
	it_rc(c, sluice_take(c, &now, &t, &n), 0);
	assert_int_equal(n, 1);
	sluice_task_free(t);
	/* -w 0: nothing */
	it_rc(c, sluice_take(c, &now, &t, &n), SLUICE_ETIMEDOUT);
	t0 = it_mono_ms();
	it_rc(c, sluice_take(c, &wait, &t, &n), 0);
	took = it_mono_ms() - t0;
	assert_int_equal(n, 1);
	sluice_task_free(t);
	print_message("a take waited %lld ms for its token\n", (long long)took);
	assert_true(took >= 300 && took < 2500);
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0,
	                     "stats", "-t", "slow", NULL),
	    0);
	assert_non_null(strstr(out, "limit_rate "));
	assert_non_null(strstr(out, "limit_tokens"));
	assert_non_null(strstr(out, "limit_waiting_takes"));
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), NULL, 0, "tube",
	                     "show", "slow", NULL),
	    0);
	assert_non_null(strstr(out, "2/s, burst 1"));
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- the cap ------------------------------------------------------------ */

struct cap_run {
	const char *url;
	_Atomic int64_t end; /* moved closer once enough is done */
	atomic_int holding;  /* leases the workers hold now */
	atomic_int most;     /* the most they held at once */
	atomic_uint done;
	struct it_errs errs;
};

/* Takes (detached: the lease outlives a server's restart), holds the
 * task a few ms, lets go of it in its count, then acks it until the
 * server has it (an ack lost to the restart is sent again; one the
 * server already applied answers that the task is gone). */
static void *
holder(void *arg)
{
	struct cap_run *r = arg;
	struct sluice_client *c = it_client_url(r->url);
	const char *tubes[] = { "cap" };
	struct sluice_take_opts o = { tubes, 1, 100, 1, 1, 0, 0 };

	if (c == NULL) {
		it_errs_add(&r->errs, "no client");
		return NULL;
	}
	while (it_mono_ms() < atomic_load(&r->end)) {
		struct sluice_task *t = NULL;
		size_t n = 0;
		int h, m, rc;

		if (sluice_take(c, &o, &t, &n) != 0 || n == 0) {
			sluice_task_free(t);
			it_sleep_ms(5); /* down, or nothing to take */
			continue;
		}
		h = atomic_fetch_add(&r->holding, 1) + 1;
		m = atomic_load(&r->most);
		while (h > m && !atomic_compare_exchange_weak(&r->most, &m, h))
			;
		it_sleep_ms(3 + rand() % 5);
		atomic_fetch_sub(&r->holding, 1);
		for (int i = 0; i < 400; i++) {
			rc = sluice_ack(c, t[0].id, t[0].lease, NULL, NULL);
			if (rc == 0 || rc == SLUICE_ENOTFOUND ||
			    rc == SLUICE_ESTATE || rc == SLUICE_ESTALE)
				break;
			it_sleep_ms(25);
		}
		if (rc != 0 && rc != SLUICE_ENOTFOUND)
			it_errs_add(&r->errs, "ack: %s", sluice_strerror(rc));
		atomic_fetch_add(&r->done, 1);
		sluice_task_free(t);
	}
	sluice_close(c);
	return NULL;
}

/* A cap of 4 with 8 workers: never more than 4 leases held at once, by
 * the workers' count and by the server's, through a kill -9 and a
 * restart in the middle of the run; the cap is reached (it is what held
 * them), and work goes on after the restart: the run ends once the
 * workers have done as many tasks after the kill as in the second
 * before it (or at 4 s). */
static void
test_cap_never_exceeded_across_kill(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct cap_run *r = calloc(1, sizeof(*r));
	pthread_t th[WORKERS];
	struct sluice_client *c;
	struct sluice_limits l;
	unsigned before;
	uint64_t most_server = 0;

	assert_non_null(r);
	it_start(s);
	c = it_client(s);
	put_n(c, "cap", 3000);
	set_limits(c, "cap", SLUICE_LIM_CONCURRENCY, 0, 0, 0, CAP);
	it_errs_init(&r->errs);
	r->url = s->url;
	atomic_init(&r->end, it_mono_ms() + it_scale(4000, 1, 4000));
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, holder, r), 0);
	for (int i = 0; i < 40; i++) { /* the server's count, 1 s */
		struct it_counts k = it_counts(c, "cap");

		if (k.taken > most_server)
			most_server = k.taken;
		it_sleep_ms(25);
	}
	before = atomic_load(&r->done);
	it_crash_restart(s, &c);
	/* the limit came back with the log */
	it_rc(c, sluice_tube_limits(c, "cap", &l), 0);
	assert_int_equal(l.set, SLUICE_LIM_CONCURRENCY);
	assert_int_equal(l.concurrency, CAP);
	assert_true(l.taken <= CAP);
	while (it_mono_ms() < atomic_load(&r->end) &&
	    atomic_load(&r->done) < 2 * before) {
		struct it_counts k = it_counts(c, "cap");

		if (k.taken > most_server)
			most_server = k.taken;
		it_sleep_ms(25);
	}
	atomic_store(&r->end, it_mono_ms());
	for (int i = 0; i < WORKERS; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	it_errs_check(&r->errs);
	print_message("most held: %d by the workers, %llu by the server; "
	              "%u done, %u before the kill\n",
	    atomic_load(&r->most), (unsigned long long)most_server,
	    atomic_load(&r->done), before);
	assert_true(atomic_load(&r->most) <= CAP);
	assert_true(most_server <= CAP);
	assert_int_equal(atomic_load(&r->most), CAP); /* the cap held them */
	assert_true(before > 0 && atomic_load(&r->done) > before + 10);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	free(r);
}

/* A take waiting on a tube at its cap. */
struct cap_waiter {
	pthread_t th;
	const char *url;
	int rc;
	size_t n;
	int64_t done_ms;
};

static void *
cap_wait(void *arg)
{
	struct cap_waiter *w = arg;
	const char *tubes[] = { "full" };
	struct sluice_take_opts o = { tubes, 1, 10000, 1, 1, 0, 0 };
	struct sluice_client *c = it_client_url(w->url);
	struct sluice_task *t = NULL;

	w->rc = -1;
	if (c == NULL)
		return NULL;
	w->rc = sluice_take(c, &o, &t, &w->n);
	w->done_ms = it_mono_ms();
	sluice_task_free(t);
	sluice_close(c);
	return NULL;
}

/* A take waiting on a tube whose cap is full is answered when a slot is
 * freed (an ack here; a release, fail, ttr expiry or disconnect alike),
 * at once, not at the end of its wait. */
static void
test_cap_frees_a_slot_for_a_waiting_take(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	struct sluice_task *a;
	struct cap_waiter w = { 0 };
	int64_t t0;

	it_start(s);
	c = it_client(s);
	put_n(c, "full", 3);
	set_limits(c, "full", SLUICE_LIM_CONCURRENCY, 0, 0, 0, 1);
	a = it_take(c, "full", 0, 1);
	w.url = s->url;
	assert_int_equal(pthread_create(&w.th, NULL, cap_wait, &w), 0);
	for (int i = 0; i < 400 && it_node_kv(c, "waiting_takes") != 1; i++)
		it_sleep_ms(5);
	assert_int_equal(it_node_kv(c, "waiting_takes"), 1);
	t0 = it_mono_ms();
	it_rc(c, sluice_ack(c, a->id, a->lease, NULL, NULL), 0);
	assert_int_equal(pthread_join(w.th, NULL), 0);
	assert_int_equal(w.rc, 0);
	assert_int_equal(w.n, 1);
	print_message(
	    "woken %lld ms after the ack\n", (long long)(w.done_ms - t0));
	assert_true(w.done_ms - t0 < 2000);
	sluice_task_free(a);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- bad input, restart, replication --------------------------------- */

/* Each bad limit is refused with its own reason and changes nothing; a
 * tube that does not exist is not made; the CLI refuses a rate without
 * its unit. */
static void
test_bad_limits_change_nothing(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_limits l, now;
	struct sluice_client *c;
	char err[1024];
	static const struct {
		struct sluice_limits l;
		const char *why;
	} bad[] = {
		{ { SLUICE_LIM_RATE, 0, 1000, 1, 0, 0, 0, 0 }, "rate of 0" },
		{ { SLUICE_LIM_RATE, 1000001, 1000, 2000, 0, 0, 0, 0 },
		    "over 1000000/s" },
		{ { SLUICE_LIM_RATE, 61000000, 60000, 2000, 0, 0, 0, 0 },
		    "over 1000000/s" },
		{ { SLUICE_LIM_RATE, 10, 1000, 1000001, 0, 0, 0, 0 },
		    "burst over 1000000" },
		{ { SLUICE_LIM_RATE, 10, 1234, 1, 0, 0, 0, 0 },
		    "second, minute or hour" },
		{ { SLUICE_LIM_CONCURRENCY, 0, 0, 0, 0, 0, 0, 0 },
		    "concurrency of 0" },
		{ { SLUICE_LIM_CONCURRENCY, 0, 0, 0, 1000001, 0, 0, 0 },
		    "concurrency over" },
	};

	it_start(s);
	c = it_client(s);
	it_put(c, "real", "x");
	set_limits(c, "real", SLUICE_LIM_CONCURRENCY, 0, 0, 0, 7);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		it_rc(c, sluice_tube_limit(c, "real", &bad[i].l, 0, NULL),
		    SLUICE_EINVAL);
		if (strstr(sluice_errmsg(c), bad[i].why) == NULL)
			fail_msg("case %zu: \"%s\" does not say \"%s\"", i,
			    sluice_errmsg(c), bad[i].why);
	}
	it_rc(c, sluice_tube_limits(c, "real", &now), 0);
	assert_int_equal(now.set, SLUICE_LIM_CONCURRENCY);
	assert_int_equal(now.concurrency, 7);
	/* no such tube: refused, and not made */
	l = (struct sluice_limits) { SLUICE_LIM_RATE, 5, 1000, 1, 0, 0, 0, 0 };
	it_rc(c, sluice_tube_limit(c, "ghost", &l, 0, NULL), SLUICE_ENOTFOUND);
	assert_non_null(strstr(sluice_errmsg(c), "no such tube"));
	assert_int_equal(it_cli(s->url, NULL, NULL, 0, err, sizeof(err),
	                     "stats", "-t", "ghost", NULL),
	    1);
	/* a limit both set and lifted */
	it_rc(c, sluice_tube_limit(c, "real", &l, SLUICE_LIM_RATE, NULL),
	    SLUICE_EINVAL);
	/* the CLI: a rate needs its unit; the server's reason is shown */
	assert_int_equal(it_cli(s->url, NULL, NULL, 0, err, sizeof(err), "tube",
	                     "set", "real", "--rate", "100", NULL),
	    2);
	assert_non_null(strstr(err, "100/s"));
	assert_int_equal(it_cli(s->url, NULL, NULL, 0, err, sizeof(err), "tube",
	                     "set", "real", "--rate", "0/s", NULL),
	    1);
	assert_non_null(strstr(err, "rate of 0"));
	assert_int_equal(it_cli(s->url, NULL, NULL, 0, err, sizeof(err), "tube",
	                     "set", "ghost", "--concurrency", "3", NULL),
	    1);
	assert_non_null(strstr(err, "no such tube"));
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* The limits are records: a restart from the log and one from a
 * snapshot hold them from the first take (the rate's bucket starts with
 * its burst; the cap counts the detached leases that survived), and a
 * follower holds them too: promoted after the leader's kill -9, it gives
 * nothing past the cap. */
static void
test_limits_survive_restart_and_replicate(void **state)
{
	struct it_node a, b;
	const char *tubes[] = { "keep" };
	struct sluice_take_opts o = { tubes, 1, 0, 10, 1, 0, 0 };
	struct sluice_limits l;
	struct sluice_task *t = NULL;
	uint64_t lsn;
	size_t n = 0;

	it_node_init(state, &a, "a");
	it_node_init(state, &b, "b");
	it_node_follows(&b, &a);
	it_node_start(&a);
	it_node_start(&b);
	put_n(a.c, "keep", 50);
	set_limits(a.c, "keep", SLUICE_LIM_RATE | SLUICE_LIM_CONCURRENCY, 1,
	    3600000, 3, 5);
	it_node_caught_up(&a, &b);
	it_rc(b.c, sluice_tube_limits(b.c, "keep", &l), 0);
	assert_int_equal(l.set, SLUICE_LIM_RATE | SLUICE_LIM_CONCURRENCY);
	assert_int_equal(l.rate, 1);
	assert_int_equal(l.per_ms, 3600000);
	assert_int_equal(l.burst, 3);
	assert_int_equal(l.concurrency, 5);
	/* a restart from the log: the burst (3 of the cap's 5), then
	 * nothing: no token for an hour */
	it_node_kill(&a);
	it_node_start(&a);
	it_rc(a.c, sluice_take(a.c, &o, &t, &n), 0);
	sluice_task_free(t);
	assert_int_equal(n, 3);
	it_rc(a.c, sluice_take(a.c, &o, &t, &n), SLUICE_ETIMEDOUT);
	/* from a snapshot: the 3 detached leases count, the bucket is full
	 * again, so the cap is what holds: 2 more */
	it_rc(a.c, sluice_snapshot(a.c, &lsn), 0);
	it_node_kill(&a);
	it_node_start(&a);
	it_rc(a.c, sluice_tube_limits(a.c, "keep", &l), 0);
	assert_int_equal(l.set, SLUICE_LIM_RATE | SLUICE_LIM_CONCURRENCY);
	assert_int_equal(l.concurrency, 5);
	assert_int_equal(l.burst, 3);
	assert_int_equal(l.taken, 3);
	it_rc(a.c, sluice_take(a.c, &o, &t, &n), 0);
	sluice_task_free(t);
	assert_int_equal(n, 2);
	it_rc(a.c, sluice_take(a.c, &o, &t, &n), SLUICE_ETIMEDOUT);
	/* a failover: the follower, promoted, holds the cap (5 taken) */
	it_node_caught_up(&a, &b);
	it_node_kill(&a);
	it_rc(b.c, sluice_promote(b.c, &lsn), 0);
	it_rc(b.c, sluice_tube_limits(b.c, "keep", &l), 0);
	assert_int_equal(l.set, SLUICE_LIM_RATE | SLUICE_LIM_CONCURRENCY);
	assert_int_equal(l.taken, 5);
	it_rc(b.c, sluice_take(b.c, &o, &t, &n), SLUICE_ETIMEDOUT);
	it_node_stop(&b, SIGTERM);
}

/* The HTTP face: PUT sets the limits (a bad rate is 400 with its syntax,
 * a rate of 0 the server's reason), the tube's JSON shows them, a take
 * honours them, and /metrics shows what each holds back. */
static void
test_http_limits(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	static char port[32];
	char *body = NULL;
	int hport = it_free_port();

	snprintf(port, sizeof(port), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = port;
	s->args[2] = "--http-admin";
	s->args[3] = NULL;
	it_start(s);
	c = it_client(s);
	put_n(c, "web", 5);
	assert_int_equal(
	    it_http(hport, "PUT", "/v1/tubes/web?rate=5", NULL, NULL, &body),
	    400);
	assert_non_null(strstr(body, "100/s"));
	free(body);
	assert_int_equal(
	    it_http(hport, "PUT", "/v1/tubes/web?rate=0/s", NULL, NULL, &body),
	    400);
	assert_non_null(strstr(body, "rate of 0"));
	free(body);
	assert_int_equal(it_http(hport, "PUT", "/v1/tubes/nope?concurrency=2",
	                     NULL, NULL, &body),
	    404);
	free(body);
	assert_int_equal(it_http(hport, "PUT",
	                     "/v1/tubes/web?rate=3/h&burst=1&concurrency=4",
	                     NULL, NULL, &body),
	    200);
	assert_non_null(strstr(body,
	    "\"limits\":{\"rate\":\"3/h\",\"burst\":1,\"concurrency\":4"));
	free(body);
	assert_int_equal(it_http(hport, "POST", "/v1/tubes/web/take?wait=0",
	                     NULL, NULL, &body),
	    200);
	assert_non_null(strstr(body, "\"id\":1"));
	free(body);
	assert_int_equal(it_http(hport, "POST", "/v1/tubes/web/take?wait=0",
	                     NULL, NULL, &body),
	    200);
	assert_non_null(strstr(body, "\"tasks\":[]"));
	free(body);
	body = it_http_get(hport, "/metrics", 200);
	assert_true(it_metric(body,
	                "sluice_tube_limit_held_tasks{tube=\"web\",limit="
	                "\"rate\"}") == 4);
	assert_true(it_metric(body,
	                "sluice_tube_limit{tube=\"web\",limit="
	                "\"concurrency\"}") == 4);
	free(body);
	body = it_http_get(hport, "/v1/tubes/web", 200);
	assert_non_null(strstr(body, "\"tokens\":0,\"taken\":1,\"held\":4"));
	free(body);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* The beanstalk face: a reserve honours the cap (a third reserve with a
 * cap of 2 times out), and a delete frees a slot for the next. */
static void
test_beanstalk_reserve_honours_cap(void **state)
{
	struct bsc_node n;
	struct bsc b;
	char *r;

	bsc_node_up(state, &n);
	put_n(n.c, "bcap", 5);
	set_limits(n.c, "bcap", SLUICE_LIM_CONCURRENCY, 0, 0, 0, 2);
	assert_int_equal(bsc_open(&b, n.port), 0);
	free(bsc_cmd(&b, "watch bcap\r\n"));
	r = bsc_cmd(&b, "reserve-with-timeout 0\r\n");
	assert_true(strncmp(r, "RESERVED 1 ", 11) == 0);
	free(r);
	r = bsc_cmd(&b, "reserve-with-timeout 0\r\n");
	assert_true(strncmp(r, "RESERVED 2 ", 11) == 0);
	free(r);
	r = bsc_cmd(&b, "reserve-with-timeout 0\r\n");
	assert_string_equal(r, "TIMED_OUT\r\n");
	free(r);
	r = bsc_cmd(&b, "delete 1\r\n");
	assert_string_equal(r, "DELETED\r\n");
	free(r);
	r = bsc_cmd(&b, "reserve-with-timeout 1\r\n");
	assert_true(strncmp(r, "RESERVED 3 ", 11) == 0);
	free(r);
	bsc_close(&b);
	bsc_node_down(&n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_rate_holds_greedy_workers, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_rate_wait_wakes_on_token, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cap_never_exceeded_across_kill, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cap_frees_a_slot_for_a_waiting_take, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bad_limits_change_nothing, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_limits_survive_restart_and_replicate, it_setup,
		    it_node_teardown),
		cmocka_unit_test_setup_teardown(
		    test_http_limits, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_beanstalk_reserve_honours_cap, it_setup, it_teardown),
	};
	return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
