/* The client's two transports against a real sluiced: SP over TCP spoken
 * by libsluice itself (tcp://) and nng (ipc://), each carrying a session
 * whose leases end with the connection; and what a tcp:// client says
 * when it is pointed at one of sluiced's other ports. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "it.h"
#include "it_http.h"

/* A task taken without detach returns to ready once the handle that took
 * it is closed: the connection is the session. */
static void
check_session(const char *url)
{
	struct sluice_client *a = it_client_url(url), *b = it_client_url(url);
	struct sluice_task *t;
	uint64_t id;

	assert_non_null(a);
	assert_non_null(b);
	id = it_put(a, "tr", "hello");
	t = it_take(a, "tr", 0, 0);
	assert_true(t->id == id);
	assert_string_equal((const char *)t->payload, "hello");
	it_rc(a, sluice_ack(a, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);

	id = it_put(a, "tr", "again");
	t = it_take(a, "tr", 0, 0);
	sluice_task_free(t);
	assert_int_equal(it_state(b, id), SLUICE_TAKEN);
	sluice_close(a);
	assert_true(it_wait_state(b, id, SLUICE_READY, 5000) >= 0);
	sluice_close(b);
}

static void
test_tcp_carries_a_session(void **state)
{
	struct t_srv *s = it_srv(*state, "a");

	it_start(s);
	check_session(s->url);
}

/* ipc:// still goes through nng, and works the same. */
static void
test_ipc_carries_a_session(void **state)
{
	struct t_srv *s = it_srv(*state, "a");
	const char *path = t_path(*state, "sock");
	char tmp[40];

	/* in the test's directory, unless that is too long for a URL */
	if (strlen(path) + strlen("ipc://") >= sizeof(s->url)) {
		snprintf(
		    tmp, sizeof(tmp), "/tmp/sluice-it-%ld.ipc", (long)getpid());
		path = tmp;
	}
	snprintf(s->url, sizeof(s->url), "ipc://%s", path);
	it_start(s);
	check_session(s->url);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	unlink(path);
}

/* Pointed at the HTTP port, the client says so (the face answers the SP
 * greeting with a 400 at once). */
static void
test_tcp_at_the_http_port_names_it(void **state)
{
	struct t_srv *s = it_srv(*state, "a");
	struct sluice_client *c;
	char haddr[64], url[96], want[256];

	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", it_free_port());
	s->args[0] = "--http";
	s->args[1] = haddr;
	it_start(s);
	snprintf(url, sizeof(url), "tcp://%s", haddr);
	assert_non_null(c = it_client_url(url));
	it_rc(c, sluice_stats(c, NULL, &(struct sluice_stats *) { NULL }),
	    SLUICE_ECONN);
	snprintf(want, sizeof(want),
	    "%s speaks HTTP, not the sluice protocol; is this the --http "
	    "port?",
	    url);
	assert_string_equal(sluice_errmsg(c), want);
	sluice_close(c);
}

/* The beanstalk port waits for a line and says nothing to our header;
 * the line ended after half the connect timeout gets its error, which
 * names it. */
static void
test_tcp_at_the_beanstalk_port_is_named(void **state)
{
	struct t_srv *s = it_srv(*state, "a");
	struct sluice_client *c;
	char baddr[64], url[96];
	int64_t t0;

	snprintf(baddr, sizeof(baddr), "127.0.0.1:%d", it_free_port());
	s->args[0] = "--beanstalk";
	s->args[1] = baddr;
	it_start(s);
	snprintf(url, sizeof(url), "tcp://%s", baddr);
	assert_non_null(c = it_client_url(url));
	sluice_set_connect_timeout(c, 300);
	t0 = it_mono_ms();
	it_rc(c, sluice_stats(c, NULL, &(struct sluice_stats *) { NULL }),
	    SLUICE_ECONN);
	assert_true(it_mono_ms() - t0 < 3000);
	assert_non_null(
	    strstr(sluice_errmsg(c), "speaks the beanstalk protocol"));
	sluice_close(c);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_tcp_carries_a_session),
		T(test_ipc_carries_a_session),
		T(test_tcp_at_the_http_port_names_it),
		T(test_tcp_at_the_beanstalk_port_is_named),
	};
#undef T
	return cmocka_run_group_tests_name("transport", tests, NULL, NULL);
}
