/* What each --auth role may send (server/ops/auth.c,
 * ops_auth_role_allows): the whole table, op by op, for every role. */
#include <stdbool.h>
#include <string.h>

#include "t_lib.h"

#include "proto/msg.h"
#include "server/ops/ops.h"
#include "util/tokens.h"

/* The whole table: for each role, the ops it may send. */
static void
test_auth_role_by_op(void **state)
{
	static const uint8_t producer[] = { MSG_OP_PUT, MSG_OP_PUT_BATCH,
		MSG_OP_PEEK, MSG_OP_PEEK_KEY, MSG_OP_PEEK_NEXT, MSG_OP_WAIT,
		MSG_OP_AUTH, MSG_OP_MAP };
	static const uint8_t worker[] = { MSG_OP_PUT, MSG_OP_PUT_BATCH,
		MSG_OP_TAKE, MSG_OP_ACK, MSG_OP_ACK_BATCH, MSG_OP_RELEASE,
		MSG_OP_FAIL, MSG_OP_TOUCH, MSG_OP_BURY, MSG_OP_WAIT,
		MSG_OP_AUTH, MSG_OP_MAP };
	static const uint8_t monitor[] = { MSG_OP_STATS, MSG_OP_STATS_HOURLY,
		MSG_OP_HISTORY, MSG_OP_CLUSTER, MSG_OP_GROUPS, MSG_OP_AUTH,
		MSG_OP_MAP };
	static const uint8_t replica[] = { MSG_OP_AUTH };
	static const struct {
		int role;
		const uint8_t *ops;
		size_t n;
	} table[] = {
		{ TOKENS_PRODUCER, producer, sizeof(producer) },
		{ TOKENS_WORKER, worker, sizeof(worker) },
		{ TOKENS_MONITOR, monitor, sizeof(monitor) },
		{ TOKENS_REPLICA, replica, sizeof(replica) },
	};

	(void)state;
	for (unsigned op = 1; op < MSG_OP_END_; op++) {
		assert_true(ops_auth_role_allows(TOKENS_ADMIN, (uint8_t)op));
		assert_false(
		    ops_auth_role_allows(0, (uint8_t)op) && op != MSG_OP_AUTH);
		for (size_t r = 0; r < sizeof(table) / sizeof(table[0]); r++) {
			bool want =
			    memchr(table[r].ops, (int)op, table[r].n) != NULL;

			if (ops_auth_role_allows(table[r].role, (uint8_t)op) !=
			    want)
				fail_msg("role %s op 0x%02x: %s",
				    tokens_role_name(table[r].role), op,
				    want ? "refused" : "allowed");
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_role_by_op),
	};
	return cmocka_run_group_tests_name("ops_auth", tests, NULL, NULL);
}
