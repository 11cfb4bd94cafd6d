/* it_move - what the tests of a tube's move share (it_move.h). */
#include <inttypes.h>

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
