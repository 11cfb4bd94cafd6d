/* SIGUSR1, beanstalkd's drain mode: the server logs it and keeps running;
 * from then on puts are refused (DRAINING on the beanstalk face,
 * SLUICE_ESHUTDOWN naming the drain on the native face, 503 on HTTP,
 * and beanstalk stats says draining: true)
 * while reserves, deletes and reads go on, and a second SIGUSR1 changes
 * nothing; SIGTERM still stops it cleanly. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"
#include "it_http.h"

static void
expect(struct bsc *b, const char *cmd, const char *want)
{
	char *got = bsc_cmd(b, cmd);

	if (strcmp(got, want) != 0)
		fail_msg("%s-> %s (wanted %s)", cmd, got, want);
	free(got);
}

static void
test_sigusr1_drains_puts_and_the_server_serves_on(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_put_opts o = { 0 };
	struct sluice_client *c;
	struct sluice_task *t;
	struct bsc b;
	char addr[32], haddr[32], cmd[64], *got, *out = NULL;
	int port = t_free_port(), hport = it_free_port();
	uint64_t id, before, id4 = 0;
	int created = 0;
	int64_t end;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", hport);
	s->args[0] = "--beanstalk";
	s->args[1] = addr;
	s->args[2] = "--http";
	s->args[3] = haddr;
	s->args[4] = "--http-admin";
	it_start(s);
	c = it_client(s);
	assert_int_equal(bsc_open(&b, port), 0);
	got = bsc_cmd(&b, "put 1 0 60 3\r\none\r\n");
	assert_int_equal(sscanf(got, "INSERTED %" SCNu64, &before), 1);
	free(got);
	id = it_put(c, "native", "two");
	got = bsc_cmd(&b, "stats\r\n");
	assert_non_null(strstr(got, "\ndraining: false\n"));
	free(got);

	assert_int_equal(kill(s->pid, SIGUSR1), 0);
	end = it_mono_ms() + 10000;
	while (it_log_count(s, "SIGUSR1: draining") == 0 && it_mono_ms() < end)
		it_sleep_ms(10);
	assert_int_equal(it_log_count(s, "SIGUSR1: draining"), 1);
	assert_true(t_srv_alive(s));

	/* puts are refused on every face; stats says so */
	got = bsc_cmd(&b, "stats\r\n");
	assert_non_null(strstr(got, "\ndraining: true\n"));
	free(got);
	expect(&b, "put 1 0 60 5\r\nthree\r\n", "DRAINING\r\n");
	it_rc(
	    c, sluice_put(c, &o, "four", 4, &id4, &created), SLUICE_ESHUTDOWN);
	assert_non_null(strstr(sluice_errmsg(c), "draining"));
	assert_int_equal(
	    it_http(hport, "POST", "/v1/tubes/web/tasks", NULL, "five", &out),
	    503);
	free(out);

	/* takes, deletes and reads go on */
	snprintf(cmd, sizeof(cmd), "RESERVED %" PRIu64 " 3\r\none\r\n", before);
	expect(&b, "reserve-with-timeout 5\r\n", cmd);
	snprintf(cmd, sizeof(cmd), "delete %" PRIu64 "\r\n", before);
	expect(&b, cmd, "DELETED\r\n");
	t = it_take(c, "native", 5000, 0);
	assert_int_equal(t->id, id);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	expect(&b, "reserve-with-timeout 0\r\n", "TIMED_OUT\r\n");

	/* a second SIGUSR1 changes nothing; SIGTERM stops it as ever */
	assert_int_equal(kill(s->pid, SIGUSR1), 0);
	expect(&b, "put 1 0 60 3\r\nsix\r\n", "DRAINING\r\n");
	assert_true(t_srv_alive(s));
	assert_int_equal(it_log_count(s, "SIGUSR1: draining"), 1);
	bsc_close(&b);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_sigusr1_drains_puts_and_the_server_serves_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
