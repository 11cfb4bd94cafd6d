/* The workflow features through the CLI and HTTP across a kill -9 and
 * restart and across a failover, against real servers: the cells of the
 * acceptance matrix that libsluice's tests (after, cancelwait) do not
 * cover through these two faces.
 * - A diamond (A -> B, A -> C, B + C -> D): put through one face, its
 *   tasks acked through the other, a crash (or the failover) between
 *   each step; D runs once, after both, its take carrying both results.
 * - A wait on a task acked before the wait began, through both faces,
 *   after the crash or on the promoted follower.
 * - A cancel of a taken task (detached leases, as the CLI's and HTTP's
 *   takes are): cancelled through one face, the crash or failover, then
 *   the holder's touch through the other gets ECANCELED (the CLI says
 *   "cancelled", HTTP 409 "cancelled", libsluice SLUICE_ECANCELED); its ack
 * still succeeds and removes it, and a wait says cancelled. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"
#include "it_node.h"

/* The faces of the node now leading. */
struct faces {
	struct sluice_client *c;
	const struct t_srv *s;
	int hport;
};

static void
has(const char *text, const char *needle)
{
	if (text == NULL || strstr(text, needle) == NULL)
		fail_msg("no %s in %s", needle, text ? text : "(nothing)");
}

static uint64_t
cli_put(const struct faces *f, const char *tube, const char *after,
    const char *payload)
{
	if (after == NULL)
		assert_int_equal(
		    it_sluice(f->s, "put", "-t", tube, payload, NULL), 0);
	else
		assert_int_equal(it_sluice(f->s, "put", "-t", tube, "--after",
		                     after, payload, NULL),
		    0);
	return strtoull(it_out, NULL, 10);
}

static uint64_t
http_put(const struct faces *f, const char *tube, const char *after,
    const char *payload)
{
	char path[128], *body = NULL;
	uint64_t id;

	snprintf(path, sizeof(path), "/v1/tubes/%s/tasks%s%s", tube,
	    after ? "?after=" : "", after ? after : "");
	assert_int_equal(
	    it_http(f->hport, "POST", path, NULL, payload, &body), 201);
	id = (uint64_t)it_json_num(body, NULL, "id");
	free(body);
	return id;
}

/* Takes the next task of `tube` through the CLI (it must be `want`); its
 * JSON in it_out, its lease. */
static uint64_t
cli_take(const struct faces *f, const char *tube, uint64_t want)
{
	assert_int_equal(
	    it_sluice(f->s, "take", "-t", tube, "-w", "5s", "--json", NULL), 0);
	assert_true((uint64_t)it_json_num(it_out, NULL, "id") == want);
	return (uint64_t)it_json_num(it_out, NULL, "lease");
}

static void
cli_ack(const struct faces *f, uint64_t id, uint64_t lease, const char *result)
{
	char i[32], l[32];

	snprintf(i, sizeof(i), "%" PRIu64, id);
	snprintf(l, sizeof(l), "%" PRIu64, lease);
	assert_int_equal(
	    it_sluice(f->s, "ack", i, "--lease", l, "--result", result, NULL),
	    0);
}

/* Takes the next task of `tube` through HTTP (it must be `want`); its
 * JSON into body (to free), its lease. */
static uint64_t
http_take(const struct faces *f, const char *tube, uint64_t want, char **body)
{
	char path[96];

	snprintf(path, sizeof(path), "/v1/tubes/%s/take?wait=5s", tube);
	assert_int_equal(it_http(f->hport, "POST", path, NULL, "", body), 200);
	assert_true((uint64_t)it_json_num(*body, NULL, "id") == want);
	return (uint64_t)it_json_num(*body, NULL, "lease");
}

static void
http_ack(const struct faces *f, uint64_t id, uint64_t lease, const char *result)
{
	char path[96], *body = NULL;

	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64 "/ack?lease=%" PRIu64,
	    id, lease);
	assert_int_equal(
	    it_http(f->hport, "POST", path, NULL, result, &body), 200);
	free(body);
}

/* `parent` done with `result`, in a take's JSON. */
static void
has_parent(const char *json, uint64_t parent, const char *result)
{
	char want[128];

	snprintf(want, sizeof(want),
	    "{\"id\":%" PRIu64 ",\"outcome\":\"done\",\"result\":\"%s\"}",
	    parent, result);
	has(json, want);
}

struct diamond {
	const char *tube;
	uint64_t a, b, c, d;
	char ids[4][32];
};

/* A through `put` without parents, B and C after A, D after both. */
static void
put_diamond(const struct faces *f, struct diamond *g,
    uint64_t (*put)(
        const struct faces *, const char *, const char *, const char *))
{
	char bc[64];

	g->a = put(f, g->tube, NULL, "A");
	snprintf(g->ids[0], sizeof(g->ids[0]), "%" PRIu64, g->a);
	g->b = put(f, g->tube, g->ids[0], "B");
	g->c = put(f, g->tube, g->ids[0], "C");
	snprintf(bc, sizeof(bc), "%" PRIu64 ",%" PRIu64, g->b, g->c);
	g->d = put(f, g->tube, bc, "D");
	snprintf(g->ids[3], sizeof(g->ids[3]), "%" PRIu64, g->d);
}

/* Nothing else to take from `tube` (HTTP). */
static void
http_none(const struct faces *f, const char *tube)
{
	char path[96], *body = NULL;

	snprintf(path, sizeof(path), "/v1/tubes/%s/take", tube);
	assert_int_equal(it_http(f->hport, "POST", path, NULL, "", &body), 200);
	has(body, "\"tasks\":[]");
	free(body);
}

/* Task `id` acked with `result` before: the CLI's wait and HTTP's result
 * say so. */
static void
waits_say_done(const struct faces *f, uint64_t id, const char *result)
{
	char i[32], path[96], want[96], *body;

	snprintf(i, sizeof(i), "%" PRIu64, id);
	assert_int_equal(it_sluice(f->s, "wait", i, "--json", NULL), 0);
	has(it_out, "\"state\":\"done\",\"final\":true");
	snprintf(want, sizeof(want), "\"result\":\"%s\"", result);
	has(it_out, want);
	snprintf(path, sizeof(path), "/v1/tasks/%s/result?wait=1s", i);
	body = it_http_get(f->hport, path, 200);
	has(body, "\"state\":\"done\",\"final\":true");
	has(body, want);
	free(body);
}

/* Task `id` cancelled and gone: both faces' waits say so. */
static void
waits_say_cancelled(const struct faces *f, uint64_t id)
{
	char i[32], path[96], *body;

	snprintf(i, sizeof(i), "%" PRIu64, id);
	/* exit 1: failed for good */
	assert_int_equal(it_sluice(f->s, "wait", i, "--json", NULL), 1);
	has(it_out, "\"state\":\"cancelled\",\"final\":true");
	snprintf(path, sizeof(path), "/v1/tasks/%s/result", i);
	body = it_http_get(f->hport, path, 200);
	has(body, "\"state\":\"cancelled\",\"final\":true");
	free(body);
}

struct taken {
	uint64_t x, xl; /* taken over HTTP, cancelled by the CLI */
	uint64_t y, yl; /* taken by the CLI, cancelled over HTTP */
};

static void
take_and_cancel(const struct faces *f, struct taken *k)
{
	char i[32], path[96], *body = NULL;

	k->x = it_put(f->c, "cx", "x");
	k->y = it_put(f->c, "cy", "y");
	k->xl = http_take(f, "cx", k->x, &body);
	free(body);
	k->yl = cli_take(f, "cy", k->y);
	snprintf(i, sizeof(i), "%" PRIu64, k->x);
	assert_int_equal(it_sluice(f->s, "cancel", i, NULL), 0);
	has(it_out, "cancelled ");
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64 "/cancel", k->y);
	assert_int_equal(
	    it_http(f->hport, "POST", path, NULL, NULL, &body), 200);
	has(body, "\"cancelled\":true");
	free(body);
}

/* After the crash or failover: the holders' touches get ECANCELED through
 * the other face; X's ack succeeds and removes it; Y's holder gives it
 * back (release: ECANCELED, removed). */
static void
holders_see_cancelled(const struct faces *f, const struct taken *k)
{
	char i[32], l[32], path[128], *body = NULL;

	snprintf(i, sizeof(i), "%" PRIu64, k->x);
	snprintf(l, sizeof(l), "%" PRIu64, k->xl);
	assert_int_equal(it_sluice(f->s, "touch", i, "--lease", l, NULL), 1);
	has(it_err, "cancelled");
	snprintf(path, sizeof(path),
	    "/v1/tasks/%" PRIu64 "/touch?lease=%" PRIu64, k->y, k->yl);
	assert_int_equal(
	    it_http(f->hport, "POST", path, NULL, NULL, &body), 409);
	has(body, "\"error\":\"cancelled\"");
	free(body);
	it_rc(f->c, sluice_touch(f->c, k->x, k->xl, NULL), SLUICE_ECANCELED);
	assert_int_equal(it_state(f->c, k->x), SLUICE_TAKEN);
	http_ack(f, k->x, k->xl, "");
	snprintf(i, sizeof(i), "%" PRIu64, k->y);
	snprintf(l, sizeof(l), "%" PRIu64, k->yl);
	assert_int_equal(it_sluice(f->s, "release", i, "--lease", l, NULL), 1);
	has(it_err, "cancelled");
	waits_say_cancelled(f, k->x);
	waits_say_cancelled(f, k->y);
}

/* A waiting task cancelled (over HTTP): gone at once, its child under
 * `cancel` gone too, its child under `fail` buried naming it, its
 * parent untouched. */
struct waiting {
	uint64_t p, w, cc, cf;
};

static void waiting_cancelled(const struct faces *f, const struct waiting *x);

static void
cancel_waiting(const struct faces *f, struct waiting *x)
{
	char i[32], path[96], *body = NULL;

	x->p = http_put(f, "wc", NULL, "P");
	snprintf(i, sizeof(i), "%" PRIu64, x->p);
	x->w = cli_put(f, "wc", i, "W");
	snprintf(i, sizeof(i), "%" PRIu64, x->w);
	assert_int_equal(it_sluice(f->s, "put", "-t", "wc", "--after", i,
	                     "--on-parent-failure", "cancel", "CC", NULL),
	    0);
	x->cc = strtoull(it_out, NULL, 10);
	x->cf = cli_put(f, "wc", i, "CF");
	assert_int_equal(it_state(f->c, x->w), SLUICE_WAITING);
	snprintf(path, sizeof(path), "/v1/tasks/%" PRIu64 "/cancel", x->w);
	assert_int_equal(
	    it_http(f->hport, "POST", path, NULL, NULL, &body), 200);
	has(body, "\"cancelled\":true");
	free(body);
	waiting_cancelled(f, x);
}

static void
waiting_cancelled(const struct faces *f, const struct waiting *x)
{
	char want[96];
	struct sluice_task *t;

	waits_say_cancelled(f, x->w);
	assert_int_equal(it_state(f->c, x->cc), 0);
	t = it_peek(f->c, x->cf);
	assert_non_null(t);
	assert_int_equal(t->state, SLUICE_BURIED);
	snprintf(want, sizeof(want), "task %" PRIu64 " failed: ", x->w);
	has(t->last_error, want);
	sluice_task_free(t);
	assert_int_equal(it_state(f->c, x->p), SLUICE_READY);
}

static void
test_cli_and_http_over_a_crash(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	static char addr[32];
	struct faces f = { NULL, s, it_free_port() };
	struct diamond g = { .tube = "dia" };
	struct waiting wc;
	struct taken k;
	char *body = NULL;
	uint64_t lease, w;

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", f.hport);
	s->args[0] = "--http";
	s->args[1] = addr;
	s->args[2] = "--http-admin";
	s->args[3] = NULL;
	it_start(s);
	f.c = it_client(s);
	/* the diamond put through the CLI, run through HTTP and the CLI */
	put_diamond(&f, &g, cli_put);
	lease = http_take(&f, "dia", g.a, &body);
	free(body);
	http_ack(&f, g.a, lease, "ra");
	it_crash_restart(s, &f.c);
	lease = cli_take(&f, "dia", g.b);
	has_parent(it_out, g.a, "ra");
	cli_ack(&f, g.b, lease, "rb");
	it_crash_restart(s, &f.c);
	assert_int_equal(it_sluice(s, "peek", g.ids[3], "--json", NULL), 0);
	has(it_out, "\"state\":\"waiting\"");
	has(it_out, "\"parents_pending\":1");
	lease = http_take(&f, "dia", g.c, &body);
	free(body);
	http_ack(&f, g.c, lease, "rc");
	it_crash_restart(s, &f.c);
	lease = http_take(&f, "dia", g.d, &body);
	has_parent(body, g.b, "rb");
	has_parent(body, g.c, "rc");
	free(body);
	cli_ack(&f, g.d, lease, "rd");
	http_none(&f, "dia");
	/* waits on tasks acked before, after the crash */
	w = http_put(&f, "w", NULL, "w");
	lease = cli_take(&f, "w", w);
	cli_ack(&f, w, lease, "rw");
	take_and_cancel(&f, &k);
	cancel_waiting(&f, &wc);
	it_crash_restart(s, &f.c);
	waiting_cancelled(&f, &wc);
	waits_say_done(&f, g.a, "ra");
	waits_say_done(&f, g.d, "rd");
	waits_say_done(&f, w, "rw");
	holders_see_cancelled(&f, &k);
	sluice_close(f.c);
}

static void
test_cli_and_http_over_a_failover(void **state)
{
	static char la[32], fa[32];
	struct it_node l, n;
	struct faces f;
	struct diamond g = { .tube = "dia" };
	struct taken k;
	char *body = NULL;
	uint64_t lease, w;
	int lport = it_free_port(), fport = it_free_port();

	it_node_init(state, &l, "l");
	it_node_init(state, &n, "f");
	snprintf(la, sizeof(la), "127.0.0.1:%d", lport);
	snprintf(fa, sizeof(fa), "127.0.0.1:%d", fport);
	it_node_arg(&l, "--http", la);
	it_node_arg(&n, "--http", fa);
	it_node_arg(&l, "--http-admin", "--http-admin");
	it_node_arg(&n, "--http-admin", "--http-admin");
	it_node_follows(&n, &l);
	it_node_start(&l);
	it_node_start(&n);
	f = (struct faces) { l.c, l.s, lport };
	/* the diamond put through HTTP; A acked through the CLI */
	put_diamond(&f, &g, http_put);
	lease = cli_take(&f, "dia", g.a);
	cli_ack(&f, g.a, lease, "ra");
	w = cli_put(&f, "w", NULL, "w");
	lease = http_take(&f, "w", w, &body);
	free(body);
	http_ack(&f, w, lease, "rw");
	take_and_cancel(&f, &k);
	it_node_caught_up(&l, &n);
	it_node_kill(&l);
	it_rc(n.c, sluice_promote(n.c, NULL), 0);
	f = (struct faces) { n.c, n.s, fport };
	waits_say_done(&f, g.a, "ra");
	waits_say_done(&f, w, "rw");
	holders_see_cancelled(&f, &k);
	/* the rest of the diamond on the new leader */
	lease = cli_take(&f, "dia", g.b);
	has_parent(it_out, g.a, "ra");
	cli_ack(&f, g.b, lease, "rb");
	lease = http_take(&f, "dia", g.c, &body);
	has_parent(body, g.a, "ra");
	free(body);
	http_ack(&f, g.c, lease, "rc");
	lease = cli_take(&f, "dia", g.d);
	has_parent(it_out, g.b, "rb");
	has_parent(it_out, g.c, "rc");
	cli_ack(&f, g.d, lease, "rd");
	http_none(&f, "dia");
	waits_say_done(&f, g.d, "rd");
	it_node_stop(&n, SIGTERM);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_cli_and_http_over_a_crash, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_cli_and_http_over_a_failover, it_setup,
		    it_node_teardown),
	};
	return cmocka_run_group_tests_name("wfmatrix", tests, NULL, NULL);
}
