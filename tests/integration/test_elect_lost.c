/* Election: a create of the leader key that etcd made, but whose answer
 * the node never got (a timeout on a busy machine), against a real etcd
 * on 127.0.0.1 and sluiced-fault (SLUICE_FAULT=elect_lost:1:EIO turns
 * the first successful create's answer into a timeout).
 *
 * The key then names the node under its own lease, which the node keeps
 * alive. Before, the node took that key for one of an earlier run ("it
 * expires") and waited for it forever: the cluster had no leader, and
 * every write was refused. Now the node knows its create may have been
 * made, finds the key under its own lease, and leads.
 *
 * Exits 77 when `etcd` is not installed. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_etcd.h"
#include "it_node.h"

enum { LEAD_WAIT_MS = 30000 };

/* Whether the node's log holds `text`. */
static bool
log_has(const struct it_node *n, const char *text)
{
	static char buf[1 << 20];
	FILE *f = fopen(n->s->log, "r");
	size_t len;

	if (f == NULL)
		return false;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	return strstr(buf, text) != NULL;
}

static void
test_a_create_whose_answer_was_lost_still_leads(void **state)
{
	struct it_node n;
	int64_t end;
	uint64_t id = 0;
	int created = 0, rc = -1;

	it_node_init(state, &n, "lost");
	n.s->prog = "sluiced-fault";
	it_node_arg(&n, "--etcd", it_etcd.url);
	it_node_arg(&n, "--cluster", "lost");
	it_node_arg(&n, "--node", "lost");
	setenv("SLUICE_FAULT", "elect_lost:1:EIO", 1);
	it_node_start(&n);
	unsetenv("SLUICE_FAULT");
	end = it_mono_ms() + LEAD_WAIT_MS;
	while (it_mono_ms() < end) {
		struct sluice_put_opts o;

		sluice_put_opts_init(&o);
		o.tube = "t";
		rc = sluice_put(n.c, &o, "x", 1, &id, &created);
		if (rc == 0)
			break;
		it_sleep_ms(100);
	}
	if (rc != 0)
		t_srv_print_log(n.s);
	assert_int_equal(rc, 0);
	assert_true(id > 0);
	assert_int_equal(it_node_role(&n), SLUICE_LEADER);
	/* the fault fired: the node went through the lost answer */
	assert_true(log_has(&n, "create the leader key"));
	assert_true(log_has(&n, "whose answer was lost"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_a_create_whose_answer_was_lost_still_leads,
		    it_etcd_setup, it_node_teardown),
	};

	return IT_ETCD_RUN("elect_lost", tests);
}
