/* it_move - what the tests of a tube's move share (it_move.h). */
#include <inttypes.h>
#include <pthread.h>

#include "it_etcd.h"
#include "it_move.h"

int64_t
it_move_scaled(int64_t ms)
{
	return ms * (it_sanitized() ? 2 : 1);
}

void
it_move_node_init(void **state, struct it_node *n, const char *name,
    const char *cluster, bool sync)
{
	it_node_init(state, n, name);
	it_node_arg(n, "--etcd", it_etcd.url);
	it_node_arg(n, "--cluster", cluster);
	it_node_arg(n, "--node", name);
	/* in plain builds a lease shorter than the default 3 s, as
	 * test_failover.c's nodes have: a node killed and started again
	 * leads (or a follower takes over) once its lease ends */
	if (!it_sanitized())
		it_node_arg(n, "--leader-ttl", "2s");
	if (sync)
		it_node_arg(n, "--sync-replicas", "1");
}

struct sluice_router *
it_move_router(void)
{
	struct sluice_router *r;

	assert_int_equal(sluice_open_map(it_etcd_map_url, &r), 0);
	sluice_router_set_timeout(r, (int)it_move_scaled(IT_MOVE_ELECT_MS));
	return r;
}

void
it_move_wait_role(struct it_node *n, int role)
{
	int64_t end = it_mono_ms() + it_move_scaled(IT_MOVE_ELECT_MS);

	while (it_mono_ms() < end) {
		if (it_node_role(n) == role)
			return;
		it_sleep_ms(50);
	}
	t_srv_print_log(n->s);
	fail_msg("%s is not %s within %" PRId64 " ms", n->s->url,
	    sluice_node_role_name(role), it_move_scaled(IT_MOVE_ELECT_MS));
}

void
it_move_wait_writes_to(struct it_node *n, const char *tube)
{
	int64_t end = it_mono_ms() + it_move_scaled(IT_MOVE_ELECT_MS);

	while (it_mono_ms() < end) {
		struct sluice_put_opts o;
		uint64_t id;
		int created;

		sluice_put_opts_init(&o);
		o.tube = tube;
		if (it_node_role(n) == SLUICE_LEADER &&
		    sluice_put(n->c, &o, "x", 1, &id, &created) == 0)
			return;
		it_sleep_ms(50);
	}
	t_srv_print_log(n->s);
	fail_msg("%s does not take writes", n->s->url);
}

void
it_move_wait_writes(struct it_node *n)
{
	it_move_wait_writes_to(n, "probe");
}

uint64_t
it_move_live_in(struct sluice_client *c, const char *tube)
{
	struct it_counts k = it_counts(c, tube);

	return k.ready + k.delayed + k.taken + k.buried;
}

void
it_move_pair_init(void **state, struct it_node *a, struct it_node *b,
    const char *ca, const char *cb)
{
	it_move_node_init(state, a, ca, ca, false);
	it_move_node_init(state, b, cb, cb, false);
}

struct sluice_router *
it_move_pair_start(
    struct it_node *a, struct it_node *b, const char *ca, const char *tube)
{
	struct it_node *const ab[] = { a, b };
	struct sluice_router *r;
	uint64_t rev;

	it_node_start_all(ab, 2);
	it_move_wait_writes(a);
	it_move_wait_writes(b);
	r = it_move_router();
	assert_int_equal(sluice_router_map_set(r, tube, ca, NULL, 0, &rev), 0);
	return r;
}

struct killed {
	const char *tube, *to;
	int stage;
	int rc;
	bool stopped;
	struct sluice_router *r; /* closed by the test, once it is dead */
};

static void
killed_stop(void *arg, const struct sluice_move_progress *p)
{
	struct killed *k = arg;

	if (p->stage == k->stage) {
		k->stopped = true;
		pthread_exit(NULL); /* as a kill -9: the mover keeps nothing */
	}
}

static void *
killed_run(void *arg)
{
	struct killed *k = arg;
	struct sluice_move_opts o = { 0 };

	o.timeout_ms = it_move_scaled(60000);
	o.report = killed_stop;
	o.report_arg = k;
	k->rc = sluice_router_move(k->r, k->tube, k->to, &o, NULL);
	return NULL;
}

void
it_move_killed_at(const char *tube, const char *to, int stage)
{
	struct killed k = { tube, to, stage, 0, false, NULL };
	pthread_t th;

	k.r = it_move_router();
	assert_int_equal(pthread_create(&th, NULL, killed_run, &k), 0);
	pthread_join(th, NULL);
	if (!k.stopped)
		fail_msg("the mover did not reach stage %d: %s: %s", stage,
		    sluice_strerror(k.rc), sluice_router_errmsg(k.r));
	sluice_router_close(k.r);
}
