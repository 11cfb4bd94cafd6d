/* The operator's bulk actions of the HTTP task API (sluiced --http-admin),
 * each asked first for its count (dry_run=1: the number it would act on,
 * nothing changed), then done:
 * - kick every buried task of a tube (POST .../kick?n=N);
 * - retry an error group: kick the buried tasks whose last error is one
 *   text (?error=TEXT), and only those: not a buried task of another
 *   error, not a delayed task of the same error (failed, not buried);
 * - delete a tube's tasks by state and age (DELETE .../tasks?state=S);
 * - release every taken task of a tube (POST .../release), whoever holds
 *   it, ready at once.
 * Bad parameters are refused naming them; without --http-admin each is
 * refused (403), the dry runs too. One server for every check. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"

/* A task of `tube` failed with `error` at max_attempts 1 (buried), or
 * with max_attempts 5 (delayed an hour, its last error set); its id. */
static uint64_t
failed_one(
    struct sluice_client *c, const char *tube, const char *error, bool bury)
{
	struct sluice_put_opts o;
	struct sluice_task *t;
	uint64_t id;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.max_attempts = bury ? 1 : 5;
	o.priority = 0;
	id = it_put_o(c, &o, "payload");
	t = it_take(c, tube, 0, 1);
	assert_int_equal(t->id, id);
	it_rc(c, sluice_fail(c, t->id, t->lease, error, 3600000, NULL), 0);
	sluice_task_free(t);
	assert_int_equal(
	    it_state(c, id), bury ? SLUICE_BURIED : SLUICE_DELAYED);
	return id;
}

/* `method` `path` answers `status` with exactly `want`. */
static void
expect(int port, const char *method, const char *path, int status,
    const char *want)
{
	char *body = NULL;
	int st = it_http(port, method, path, NULL, NULL, &body);

	if (st != status || body == NULL || strcmp(body, want) != 0)
		fail_msg("%s %s: %d %s, wanted %d %s", method, path, st,
		    body ? body : "(none)", status, want);
	free(body);
}

/* `method` `path` answers `status` and its body holds `part`. */
static void
expect_has(int port, const char *method, const char *path, int status,
    const char *part)
{
	char *body = NULL;
	int st = it_http(port, method, path, NULL, NULL, &body);

	if (st != status || body == NULL || strstr(body, part) == NULL)
		fail_msg("%s %s: %d %s, wanted %d with %s", method, path, st,
		    body ? body : "(none)", status, part);
	free(body);
}

static void
test_bulk_actions_count_first_then_act(void **state)
{
	struct t_srv *s = it_srv(*state, "bulk");
	struct sluice_client *c;
	struct sluice_task *held[3];
	uint64_t boom[3], bang, later, old;
	int hport = it_free_port();
	char haddr[64];

	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = haddr;
	s->args[2] = "--http-admin";
	it_start(s);
	c = it_client(s);

	/* An error group of 3 buried tasks, another error's buried task,
	 * twice, and a delayed task with the group's error (failed, not
	 * buried). */
	for (int i = 0; i < 3; i++)
		boom[i] = failed_one(c, "mail", "smtp 550: no such user", true);
	bang = failed_one(c, "mail", "timeout", true);
	failed_one(c, "mail", "timeout", true);
	later = failed_one(c, "mail", "smtp 550: no such user", false);

	/* Its count, then the retry: those 3 only, in id order up to n. */
	expect(hport, "POST",
	    "/v1/tubes/mail/kick?n=1000&error=smtp%20550%3A%20no+such+user"
	    "&dry_run=1",
	    200, "{\"would_kick\":3}");
	assert_int_equal(it_state(c, boom[0]), SLUICE_BURIED);
	expect(hport, "POST",
	    "/v1/tubes/mail/kick?n=2&error=smtp%20550%3A%20no+such+user", 200,
	    "{\"kicked\":2}");
	assert_int_equal(it_state(c, boom[0]), SLUICE_READY);
	assert_int_equal(it_state(c, boom[1]), SLUICE_READY);
	assert_int_equal(it_state(c, boom[2]), SLUICE_BURIED);
	expect(hport, "POST",
	    "/v1/tubes/mail/kick?n=1000&error=smtp%20550%3A%20no+such+user",
	    200, "{\"kicked\":1}");
	assert_int_equal(it_state(c, boom[2]), SLUICE_READY);
	assert_int_equal(it_state(c, bang), SLUICE_BURIED);
	assert_int_equal(it_state(c, later), SLUICE_DELAYED);
	expect(hport, "POST", "/v1/tubes/mail/kick?n=1000&error=nothing", 200,
	    "{\"kicked\":0}");

	/* Every buried task of a tube: counted, then kicked. */
	expect(hport, "POST", "/v1/tubes/mail/kick?n=1000&dry_run=1", 200,
	    "{\"would_kick\":2}");
	expect(hport, "POST", "/v1/tubes/mail/kick?n=1&dry_run=1", 200,
	    "{\"would_kick\":1}");
	assert_int_equal(it_state(c, bang), SLUICE_BURIED);
	expect(hport, "POST", "/v1/tubes/mail/kick?n=2", 200, "{\"kicked\":2}");
	assert_int_equal(it_state(c, bang), SLUICE_READY);

	/* Release every taken task of a tube: its count is the tube's
	 * taken; each is ready at once, a session's lease and a detached
	 * one alike, and the holders' leases are stale. */
	held[0] = it_take(c, "mail", 0, 0);
	held[1] = it_take(c, "mail", 0, 1);
	held[2] = it_take(c, "mail", 0, 1);
	expect_has(hport, "GET", "/v1/tubes/mail/stats", 200, "\"taken\":3");
	expect(
	    hport, "POST", "/v1/tubes/mail/release", 200, "{\"released\":3}");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(it_state(c, held[i]->id), SLUICE_READY);
		assert_int_equal(
		    sluice_ack(c, held[i]->id, held[i]->lease, NULL, NULL),
		    SLUICE_ESTATE);
		sluice_task_free(held[i]);
	}
	expect(
	    hport, "POST", "/v1/tubes/mail/release", 200, "{\"released\":0}");

	/* Delete by state and age: counted (nothing deleted), then
	 * deleted; the count of an age no task has is 0. */
	old = it_put(c, "old", "a");
	it_put(c, "old", "b");
	it_sleep_ms(1100);
	expect(hport, "DELETE", "/v1/tubes/old/tasks?state=ready&dry_run=1",
	    200, "{\"would_delete\":2}");
	expect(hport, "DELETE",
	    "/v1/tubes/old/tasks?state=ready&older=1h&dry_run=1", 200,
	    "{\"would_delete\":0}");
	assert_int_equal(it_state(c, old), SLUICE_READY);
	expect(hport, "DELETE", "/v1/tubes/old/tasks?state=ready&older=1s", 200,
	    "{\"deleted\":2}");

	/* Bad parameters, named. */
	expect_has(hport, "POST", "/v1/tubes/mail/kick?error=", 400,
	    "error: a last error's text, 1..1024 bytes");
	expect_has(hport, "POST", "/v1/tubes/mail/kick?error=x&delayed=1", 400,
	    "error: kicks buried tasks only (not with delayed=1)");
	expect_has(hport, "POST", "/v1/tubes/bad%20name/release", 400,
	    "bad tube name");
	sluice_close(c);
}

/* Without --http-admin, every bulk action and its count is refused. */
static void
test_bulk_actions_need_http_admin(void **state)
{
	struct t_srv *s = it_srv(*state, "ro");
	int hport = it_free_port();
	char haddr[64];

	snprintf(haddr, sizeof(haddr), "127.0.0.1:%d", hport);
	s->args[0] = "--http";
	s->args[1] = haddr;
	it_start(s);
	expect_has(hport, "POST", "/v1/tubes/mail/kick?n=5&dry_run=1", 403,
	    "--http-admin");
	expect_has(hport, "POST", "/v1/tubes/mail/kick?n=5&error=x", 403,
	    "--http-admin");
	expect_has(
	    hport, "POST", "/v1/tubes/mail/release", 403, "--http-admin");
	expect_has(hport, "DELETE",
	    "/v1/tubes/mail/tasks?state=ready&dry_run=1", 403, "--http-admin");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_bulk_actions_count_first_then_act, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_bulk_actions_need_http_admin, it_setup, it_teardown),
	};

	return cmocka_run_group_tests_name("bulk", tests, NULL, NULL);
}
