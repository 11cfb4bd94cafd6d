/* sluice stats --hourly against a real sluiced: acks, fails, buries, ttr
 * expiries and the work and wait of a tube's tasks, counted in the hour of
 * their records. Made through the library, read through the CLI (text and
 * --json) and the library, of one tube and of every tube; and the same
 * numbers after a kill -9 and a restart, from the log alone and from a
 * snapshot plus the log after it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"

enum { OUT = 64 << 10 };

static char out[OUT], err[OUT];

/* The unsigned number after the first `"name":` after `from` in out. */
static uint64_t
json_num(const char *from, const char *name)
{
	char key[64];
	const char *p = strstr(out, from);

	snprintf(key, sizeof(key), "\"%s\":", name);
	if (p == NULL || (p = strstr(p, key)) == NULL)
		fail_msg("no %s after %s in %s", key, from, out);
	return strtoull(p + strlen(key), NULL, 10);
}

/* The hour of `tube` (NULL: every tube) whose start is `start` (0: the
 * newest), through the library. */
static struct sluice_hour
lib_hour(struct sluice_client *c, const char *tube, uint64_t start)
{
	struct sluice_hour *h, found;
	size_t n, i;

	it_rc(c, sluice_stats_hourly(c, tube, &h, &n), 0);
	assert_true(n >= 1 && n <= 48);
	for (i = 0; i < n && start != 0 && h[i].start != start; i++)
		;
	assert_true(i < n);
	for (size_t k = 1; k < n; k++)
		assert_true(h[k].start < h[k - 1].start); /* newest first */
	found = h[i];
	sluice_stats_hourly_free(h);
	return found;
}

/* The same hour through `sluice stats --hourly -t TUBE --json`, checked
 * field by field against `want`. */
static void
cli_agrees(
    const struct t_srv *s, const char *tube, const struct sluice_hour *want)
{
	char start[32];

	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "stats",
	        "--hourly", "-t", tube, "--json", NULL),
	    0);
	snprintf(start, sizeof(start), "\"start\":%" PRIu64, want->start);
	assert_non_null(strstr(out, start));
	assert_true(json_num(start, "acks") == want->acks);
	assert_true(json_num(start, "fails") == want->fails);
	assert_true(json_num(start, "buries") == want->buries);
	assert_true(json_num(start, "ttr_expired") == want->ttr_expired);
	assert_true(json_num(start, "count") == want->work.count);
	assert_true(json_num(start, "total_ms") == want->work.total_ms);
	assert_true(json_num(start, "p99_ms") == want->work.p99_ms);
	assert_true(json_num("\"wait\"", "count") == want->wait.count);
	assert_true(json_num("\"wait\"", "total_ms") == want->wait.total_ms);
	/* and the table a person reads */
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "stats",
	        "--hourly", "-t", tube, NULL),
	    0);
	assert_non_null(strstr(out, "HOUR (UTC)"));
	assert_non_null(strstr(out, "WAIT AVG"));
}

/* Waits (bounded) until the ttr expiry of tube "mail" has been counted. */
static struct sluice_hour
wait_ttr(struct sluice_client *c)
{
	struct sluice_hour h;
	int64_t end = it_mono_ms() + 15000;

	do {
		h = lib_hour(c, "mail", 0);
		if (h.ttr_expired == 1)
			return h;
		it_sleep_ms(20);
	} while (it_mono_ms() < end);
	fail_msg("the ttr expiry was never counted");
	return h;
}

/* The hour `want->start` of `tube` is as it was. */
static void
same_hour(
    struct sluice_client *c, const char *tube, const struct sluice_hour *want)
{
	struct sluice_hour got = lib_hour(c, tube, want->start);

	assert_memory_equal(&got, want, sizeof(got));
}

static void
test_hourly_stats_through_every_interface_and_a_crash(void **state)
{
	struct t_srv *s = it_srv(*state, "hourly");
	struct sluice_client *c;
	struct sluice_put_opts o;
	struct sluice_task *t;
	struct sluice_hour mail, all, sms, again;
	struct sluice_hour *h;
	uint64_t id;
	size_t n;

	it_start(s);
	c = it_client(s);
	/* Nothing yet: an unknown tube is an error, and says which. */
	it_rc(c, sluice_stats_hourly(c, "mail", &h, &n), SLUICE_ENOTFOUND);
	assert_int_equal(
	    it_cli(s->url, NULL, out, sizeof(out), err, sizeof(err), "stats",
	        "--hourly", "-t", "mail", NULL),
	    1);
	assert_non_null(strstr(err, "no such tube"));

	/* mail: an ack after some work, a fail, a ttr expiry at the last
	 * attempt (an expiry and a bury); sms: one ack. */
	it_put(c, "mail", "a");
	it_put(c, "mail", "b");
	sluice_put_opts_init(&o);
	o.tube = "mail";
	o.ttr_ms = 300;
	o.max_attempts = 1;
	id = it_put_o(c, &o, "c");
	t = it_take(c, "mail", 1000, 1);
	it_sleep_ms(30);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	t = it_take(c, "mail", 1000, 1);
	it_rc(c, sluice_fail(c, t->id, t->lease, "smtp down", 60000, NULL), 0);
	sluice_task_free(t);
	t = it_take(c, "mail", 1000, 1);
	assert_true(t->id == id);
	sluice_task_free(t);
	it_put(c, "sms", "d");
	t = it_take(c, "sms", 1000, 1);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);

	mail = wait_ttr(c);
	assert_true(mail.start % 3600000 == 0);
	assert_true(mail.acks == 1 && mail.fails == 1 && mail.buries == 1 &&
	    mail.ttr_expired == 1);
	assert_true(mail.work.count == 1 && mail.work.total_ms >= 30 &&
	    mail.work.max_ms == mail.work.total_ms);
	assert_true(mail.work.p50_ms <= mail.work.max_ms &&
	    mail.work.p99_ms <= mail.work.max_ms);
	assert_true(
	    mail.wait.count == 3 && mail.wait.p99_ms <= mail.wait.max_ms);
	sms = lib_hour(c, "sms", mail.start);
	assert_true(sms.acks == 1 && sms.wait.count == 1 && sms.fails == 0);
	all = lib_hour(c, NULL, mail.start);
	assert_true(all.acks == 2 && all.wait.count == 4 && all.buries == 1 &&
	    all.ttr_expired == 1);
	assert_true(
	    all.work.total_ms == mail.work.total_ms + sms.work.total_ms);
	cli_agrees(s, "mail", &mail);
	cli_agrees(s, "sms", &sms);

	/* kill -9: the log alone gives the same hours. */
	it_crash_restart(s, &c);
	same_hour(c, "mail", &mail);
	same_hour(c, NULL, &all);
	cli_agrees(s, "mail", &mail);

	/* A snapshot, one more ack after it, kill -9: snapshot + log. */
	it_rc(c, sluice_snapshot(c, NULL), 0);
	it_put(c, "sms", "e");
	t = it_take(c, "sms", 1000, 1);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	again = lib_hour(c, "sms", 0);
	assert_true(again.acks >= 1);
	it_crash_restart(s, &c);
	same_hour(c, "sms", &again);
	cli_agrees(s, "sms", &again);
	if (again.start == mail.start) /* the same hour still */
		same_hour(c, "mail", &mail);
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_hourly_stats_through_every_interface_and_a_crash,
		    it_setup, it_teardown),
	};

	return cmocka_run_group_tests_name("hourly", tests, NULL, NULL);
}
