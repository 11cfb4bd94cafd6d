/* it_etcd - the one etcd a test program's tests share (it_etcd.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "it.h"
#include "it_etcd.h"
#include "t_lib.h"

struct t_etcd it_etcd;
char it_etcd_map_url[80];
static void *dir;

int
it_etcd_group_setup(void **state)
{
	(void)state;
	if (t_tmpdir_setup(&dir) != 0)
		return -1;
	t_etcd_init(&it_etcd, ((struct t_dir *)dir)->path, "etcd");
	snprintf(it_etcd_map_url, sizeof(it_etcd_map_url),
	    "etcd://127.0.0.1:%d", it_etcd.client_port);
	return t_etcd_start(&it_etcd);
}

int
it_etcd_group_teardown(void **state)
{
	(void)state;
	t_etcd_signal(&it_etcd, SIGTERM);
	return t_tmpdir_teardown(&dir);
}

int
it_etcd_setup(void **state)
{
	if (it_etcd.pid == 0 && t_etcd_start(&it_etcd) != 0)
		return -1;
	return it_setup(state);
}

bool
it_etcd_skip(void)
{
	if (getenv("SLUICE_TEST_FILTER") != NULL)
		cmocka_set_test_filter(getenv("SLUICE_TEST_FILTER"));
	if (t_etcd_available())
		return false;
	fprintf(stderr,
	    "etcd is not installed: skipped (make test-deps installs "
	    "etcd-server)\n");
	return true;
}
