/* release --front against a real sluiced: a plain release makes the task
 * ready as of now, behind the tasks already due; with front it is back at
 * once at the place it had before the take (its original order among the
 * tasks of its priority, and among those of a new one when the release
 * sets it), through the library, the CLI and the HTTP API, and still so
 * after a kill -9 (the order comes back from the log). Front with a delay
 * is refused, naming both. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"

enum { OUT = 16 << 10 };

static char out[OUT], err[OUT];

static uint64_t
put_pri(struct sluice_client *c, const char *payload, uint32_t pri)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = "q";
	o.priority = pri;
	return it_put_o(c, &o, payload);
}

/* Takes the next task of "q", asserted to be `id`; its lease. */
static uint64_t
take_is(struct sluice_client *c, uint64_t id)
{
	struct sluice_task *t = it_take(c, "q", 0, 1);
	uint64_t lease = t->lease;

	assert_true(t->id == id);
	sluice_task_free(t);
	return lease;
}

static void
front(struct sluice_client *c, uint64_t id, uint64_t lease, int64_t pri)
{
	struct sluice_release_opts o = { 0, pri, 1 };
	struct sluice_after after;

	it_rc(c, sluice_release_opts(c, id, lease, &o, &after), 0);
	assert_int_equal(after.state, SLUICE_READY);
}

static void
test_release_front_keeps_the_place(void **state)
{
	struct t_srv *s = it_srv(*state, "front");
	struct sluice_client *c;
	struct sluice_release_opts bad = { 1000, -1, 1 };
	char path[128], arg[32], larg[32], haddr[32], *body = NULL;
	int hport = it_free_port();
	uint64_t a, b, d, hi, lease;

	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = haddr;
	it_start(s);
	c = it_client(s);
	a = put_pri(c, "a", 10);
	b = put_pri(c, "b", 10);
	d = put_pri(c, "d", 10);

	/* the old way: behind the tasks already due. The ready order is
	 * priority, run_at (in milliseconds), id: a release in the same
	 * millisecond as d's put would tie with it, and a's smaller id
	 * would put it first again, so the clock moves on first. */
	lease = take_is(c, a);
	it_sleep_ms(2);
	it_rc(c, sluice_release(c, a, lease, 0, -1, NULL), 0);
	lease = take_is(c, b);
	/* front: before d and a, where it was */
	front(c, b, lease, -1);
	lease = take_is(c, b);

	/* the CLI */
	snprintf(arg, sizeof(arg), "%" PRIu64, b);
	snprintf(larg, sizeof(larg), "%" PRIu64, lease);
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "release",
	        arg, "--lease", larg, "--front", "--delay", "1s", NULL),
	    2);
	assert_non_null(strstr(err, "--front and --delay"));
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "release",
	        arg, "--lease", larg, "--front", NULL),
	    0);
	lease = take_is(c, b);

	/* the HTTP API */
	snprintf(path, sizeof(path),
	    "/v1/tasks/%" PRIu64 "/release?lease=%" PRIu64 "&front=1", b,
	    lease);
	assert_int_equal(it_http(hport, "POST", path, NULL, NULL, &body), 200);
	assert_non_null(strstr(body, "\"state\":\"ready\""));
	free(body);
	lease = take_is(c, b);

	/* the library refuses a delay with it; so does the server */
	it_rc(c, sluice_release_opts(c, b, lease, &bad, NULL), SLUICE_EINVAL);
	snprintf(path, sizeof(path),
	    "/v1/tasks/%" PRIu64 "/release?lease=%" PRIu64 "&front=1&delay=1s",
	    b, lease);
	assert_int_equal(it_http(hport, "POST", path, NULL, NULL, &body), 400);
	assert_non_null(strstr(body, "no delay"));
	free(body);

	/* with a new priority: its place among the tasks of that one */
	hi = put_pri(c, "hi", 5);
	front(c, b, lease, 5); /* b was due before hi */
	lease = take_is(c, b);
	front(c, b, lease, 10);

	/* after a kill -9, the order comes back from the log */
	it_crash_restart(s, &c);
	lease = take_is(c, hi);
	it_rc(c, sluice_ack(c, hi, lease, NULL, NULL), 0);
	take_is(c, b);
	take_is(c, d);
	take_is(c, a);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_release_front_keeps_the_place, it_setup, it_teardown),
	};

	return cmocka_run_group_tests_name("front", tests, NULL, NULL);
}
