/* it_etcd - the one etcd a test program's tests share (the cluster map's
 * tests: clustermap, move, move_carry): a real single-member etcd on
 * 127.0.0.1 with its data in a temporary directory of the group's,
 * started by the group's set-up, started again by a test's set-up when a
 * test before killed it, and stopped at the group's end. Its tests clear
 * the map they use themselves: one etcd serves the whole run.
 *
 *	int main(void) {
 *		const struct CMUnitTest tests[] = {
 *			cmocka_unit_test_setup_teardown(
 *			    test_x, it_etcd_setup, it_node_teardown), };
 *		return IT_ETCD_RUN("name", tests);
 *	}
 *
 * IT_ETCD_RUN applies $SLUICE_TEST_FILTER and answers 77 (skipped), with
 * a line saying how to install it, when no `etcd` is on the PATH. */
#ifndef SLUICE_IT_ETCD_H
#define SLUICE_IT_ETCD_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include "t_etcd.h"

extern struct t_etcd it_etcd;    /* it_etcd.url: for a node's --etcd */
extern char it_etcd_map_url[80]; /* etcd://127.0.0.1:PORT: for
                                    sluice_open_map and the CLI's -s */

/* The group's: a temporary directory and etcd in it, healthy (up to 30
 * s); and the end of both. */
int it_etcd_group_setup(void **state);
int it_etcd_group_teardown(void **state);

/* A test's: etcd started again if it is not running, then it_setup. */
int it_etcd_setup(void **state);

/* True (after a line on stderr) when the program should exit 77: no
 * `etcd` on the PATH. Applies $SLUICE_TEST_FILTER first. */
bool it_etcd_skip(void);

#define IT_ETCD_RUN(name, tests)                                               \
	(it_etcd_skip() ? 77                                                   \
	                : cmocka_run_group_tests_name((name), (tests),         \
	                      it_etcd_group_setup, it_etcd_group_teardown))

#endif
