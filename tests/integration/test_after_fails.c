/* A parent failing for good with each rule of its children, against real
 * servers, through libsluice, the CLI and HTTP, across a kill -9 and
 * restart (the log, then a snapshot) and across a failover.
 *
 * Each case is a chain A -> B -> C whose B and C are put with one rule
 * (fail, ignore, cancel) through one face (libsluice, the CLI, HTTP), 9
 * chains in all, twice: the "early" chains' A fails before the crash or
 * the failover, the "late" ones' after it, on the restarted node or the
 * promoted follower (the graph rebuilt from the log, the snapshot or
 * the stream). A fails through the chain's face: a fatal fail before,
 * a delete after. Then: fail buries B with "task A failed: ERROR" and C
 * with "task B failed: task A failed: ERROR"; ignore makes B ready and
 * C waits for B's ack, then runs; cancel deletes B and C. Each chain is
 * read through its face, and again after each crash. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it.h"
#include "it_http.h"
#include "it_node.h"

enum face { LIB, CLI, HTTP, NFACES };
enum { NCHAINS = 3 * NFACES };

static const char *const face_name[NFACES] = { "lib", "cli", "http" };
static const char *const rule_name[3] = { "fail", "ignore", "cancel" };
static const int rule_code[3] = { SLUICE_ON_PARENT_FAIL,
	SLUICE_ON_PARENT_IGNORE, SLUICE_ON_PARENT_CANCEL };

/* Where a chain's face reaches the node now leading. */
struct where {
	struct sluice_client *c;
	const struct t_srv *s;
	int hport;
};

struct chain {
	enum face face;
	int rule; /* index in rule_name */
	char tube[32];
	uint64_t id[3];
	const char *error; /* A's error once it failed; NULL: not yet */
};

static uint64_t
put_child(const struct where *w, const struct chain *ch, uint64_t parent,
    const char *payload)
{
	char after[32], path[160], *body = NULL;
	struct sluice_put_opts o;
	uint64_t id;

	snprintf(after, sizeof(after), "%" PRIu64, parent);
	switch (ch->face) {
	case LIB:
		sluice_put_opts_init(&o);
		o.tube = ch->tube;
		o.after = &parent;
		o.nafter = 1;
		o.on_parent_failure = rule_code[ch->rule];
		return it_put_o(w->c, &o, payload);
	case CLI:
		assert_int_equal(it_sluice(w->s, "put", "-t", ch->tube,
		                     "--after", after, "--on-parent-failure",
		                     rule_name[ch->rule], payload, NULL),
		    0);
		return strtoull(it_out, NULL, 10);
	default:
		snprintf(path, sizeof(path),
		    "/v1/tubes/%s/tasks?after=%s&on_parent_failure=%s",
		    ch->tube, after, rule_name[ch->rule]);
		assert_int_equal(
		    it_http(w->hport, "POST", path, NULL, payload, &body), 201);
		id = (uint64_t)it_json_num(body, NULL, "id");
		free(body);
		return id;
	}
}

static void
put_chain(const struct where *w, struct chain *ch, enum face f, int rule,
    const char *phase)
{
	memset(ch, 0, sizeof(*ch));
	ch->face = f;
	ch->rule = rule;
	snprintf(ch->tube, sizeof(ch->tube), "%s-%s-%s", rule_name[rule],
	    face_name[f], phase);
	ch->id[0] = it_put(w->c, ch->tube, "A");
	ch->id[1] = put_child(w, ch, ch->id[0], "B");
	ch->id[2] = put_child(w, ch, ch->id[1], "C");
}

/* A fails for good through the chain's face: a fatal fail (taken
 * first), or a delete. */
static void
fail_parent(const struct where *w, struct chain *ch, bool fatal)
{
	struct sluice_task *t = NULL;
	char id[32], lease[32], path[128], *body = NULL;

	snprintf(id, sizeof(id), "%" PRIu64, ch->id[0]);
	if (fatal) {
		t = it_take(w->c, ch->tube, 5000, 1);
		assert_int_equal(t->id, ch->id[0]);
		snprintf(lease, sizeof(lease), "%" PRIu64, t->lease);
	}
	ch->error = fatal ? "disk full" : "deleted";
	switch (ch->face) {
	case LIB:
		it_rc(w->c,
		    fatal ? sluice_fail_fatal(
		                w->c, t->id, t->lease, "disk full", NULL)
		          : sluice_delete(w->c, ch->id[0]),
		    0);
		break;
	case CLI:
		assert_int_equal(fatal
		        ? it_sluice(w->s, "fail", id, "--lease", lease, "-e",
		              "disk full", "--fatal", NULL)
		        : it_sluice(w->s, "delete", id, NULL),
		    0);
		break;
	default:
		if (fatal)
			snprintf(path, sizeof(path),
			    "/v1/tasks/%s/fail?lease=%s&fatal=1", id, lease);
		else
			snprintf(path, sizeof(path), "/v1/tasks/%s", id);
		assert_int_equal(
		    it_http(w->hport, fatal ? "POST" : "DELETE", path, NULL,
		        fatal ? "disk full" : NULL, &body),
		    200);
		free(body);
	}
	sluice_task_free(t);
}

/* Task `id` as the chain's face shows it: its JSON ("" when gone). */
static void
show(const struct where *w, const struct chain *ch, uint64_t id, char *out,
    size_t cap)
{
	char idtxt[32], path[64], *body = NULL;
	struct sluice_task *t;
	int st;

	snprintf(idtxt, sizeof(idtxt), "%" PRIu64, id);
	out[0] = '\0';
	switch (ch->face) {
	case LIB: /* the fields the checks read, in the JSON's words */
		t = it_peek(w->c, id);
		if (t != NULL)
			snprintf(out, cap,
			    "\"state\":\"%s\" \"last_error\":\"%s\"",
			    sluice_state_name(t->state),
			    t->last_error ? t->last_error : "");
		sluice_task_free(t);
		return;
	case CLI:
		st = it_sluice(w->s, "peek", idtxt, "--json", NULL);
		if (st == 0) {
			strncpy(out, it_out, cap - 1);
			out[cap - 1] = '\0';
		}
		return;
	default:
		snprintf(path, sizeof(path), "/v1/tasks/%s", idtxt);
		st = it_http(w->hport, "GET", path, NULL, NULL, &body);
		assert_true(st == 200 || st == 404);
		if (st == 200)
			snprintf(out, cap, "%s", body);
		free(body);
	}
}

static void
has(const char *text, const char *needle, const struct chain *ch)
{
	if (strstr(text, needle) == NULL)
		fail_msg("chain %s: no %s in %s", ch->tube, needle, text);
}

/* The chain as its rule says: A failed or not yet. */
static void
check(const struct where *w, const struct chain *ch)
{
	char b[4096], c[4096], want[160];

	show(w, ch, ch->id[1], b, sizeof(b));
	show(w, ch, ch->id[2], c, sizeof(c));
	if (ch->error == NULL) {
		has(b, "\"state\":\"waiting\"", ch);
		has(c, "\"state\":\"waiting\"", ch);
		return;
	}
	switch (ch->rule) {
	case 0:
		has(b, "\"state\":\"buried\"", ch);
		snprintf(want, sizeof(want),
		    "\"last_error\":\"task %" PRIu64 " failed: %s\"", ch->id[0],
		    ch->error);
		has(b, want, ch);
		has(c, "\"state\":\"buried\"", ch);
		snprintf(want, sizeof(want),
		    "\"last_error\":\"task %" PRIu64 " failed: task %" PRIu64
		    " failed: %s\"",
		    ch->id[1], ch->id[0], ch->error);
		has(c, want, ch);
		break;
	case 1:
		has(b, "\"state\":\"ready\"", ch);
		has(c, "\"state\":\"waiting\"", ch);
		break;
	default:
		if (b[0] != '\0' || c[0] != '\0')
			fail_msg("chain %s: B or C not deleted: %s %s",
			    ch->tube, b, c);
	}
}

static void
check_all(const struct where *w, const struct chain *ch, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check(w, &ch[i]);
}

/* The ignore chains run to the end: B, then C (after B's ack). */
static void
run_ignored(const struct where *w, const struct chain *ch, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (ch[i].rule != 1)
			continue;
		for (int k = 1; k < 3; k++) {
			struct sluice_task *t =
			    it_take(w->c, ch[i].tube, 5000, 1);

			assert_int_equal(t->id, ch[i].id[k]);
			it_rc(w->c,
			    sluice_ack(w->c, t->id, t->lease, NULL, NULL), 0);
			sluice_task_free(t);
		}
	}
}

static void
put_all(const struct where *w, struct chain *ch, const char *phase)
{
	for (int r = 0; r < 3; r++)
		for (int f = 0; f < NFACES; f++)
			put_chain(
			    w, &ch[r * NFACES + f], (enum face)f, r, phase);
}

static void
fail_all(const struct where *w, struct chain *ch, bool fatal)
{
	for (size_t i = 0; i < NCHAINS; i++)
		fail_parent(w, &ch[i], fatal);
}

/* kill -9 and restart: the early chains' failures replayed from the log;
 * the late chains' parents fail on the restarted node; a snapshot and
 * another kill -9: all of it from the snapshot. */
static void
test_each_rule_over_a_crash(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	static struct chain early[NCHAINS], late[NCHAINS];
	static char addr[32];
	struct where w = { NULL, s, it_free_port() };

	snprintf(addr, sizeof(addr), "127.0.0.1:%d", w.hport);
	s->args[0] = "--http";
	s->args[1] = addr;
	s->args[2] = "--http-admin"; /* a delete over HTTP */
	s->args[3] = NULL;
	it_start(s);
	w.c = it_client(s);
	put_all(&w, early, "e");
	put_all(&w, late, "l");
	fail_all(&w, early, true);
	check_all(&w, early, NCHAINS);
	it_crash_restart(s, &w.c);
	check_all(&w, early, NCHAINS);
	check_all(&w, late, NCHAINS);
	fail_all(&w, late, false);
	check_all(&w, late, NCHAINS);
	it_rc(w.c, sluice_snapshot(w.c, NULL), 0);
	it_crash_restart(s, &w.c);
	check_all(&w, early, NCHAINS);
	check_all(&w, late, NCHAINS);
	run_ignored(&w, early, NCHAINS);
	run_ignored(&w, late, NCHAINS);
	sluice_close(w.c);
}

/* A follower holds the graph; the early chains' parents fail on the
 * leader, the leader is killed, the follower promoted: it shows the
 * early chains as the leader did, and applies each rule when the late
 * chains' parents fail on it. */
static void
test_each_rule_over_a_failover(void **state)
{
	static struct chain early[NCHAINS], late[NCHAINS];
	static char la[32], fa[32];
	struct it_node l, f;
	struct where w;
	int lport = it_free_port(), fport = it_free_port();

	it_node_init(state, &l, "l");
	it_node_init(state, &f, "f");
	snprintf(la, sizeof(la), "127.0.0.1:%d", lport);
	snprintf(fa, sizeof(fa), "127.0.0.1:%d", fport);
	it_node_arg(&l, "--http", la);
	it_node_arg(&f, "--http", fa);
	it_node_arg(&l, "--http-admin", "--http-admin");
	it_node_arg(&f, "--http-admin", "--http-admin");
	it_node_follows(&f, &l);
	it_node_start(&l);
	it_node_start(&f);
	w = (struct where) { l.c, l.s, lport };
	put_all(&w, early, "e");
	put_all(&w, late, "l");
	fail_all(&w, early, true);
	check_all(&w, early, NCHAINS);
	it_node_caught_up(&l, &f);
	it_node_kill(&l);
	it_rc(f.c, sluice_promote(f.c, NULL), 0);
	w = (struct where) { f.c, f.s, fport };
	check_all(&w, early, NCHAINS);
	check_all(&w, late, NCHAINS);
	fail_all(&w, late, false);
	check_all(&w, late, NCHAINS);
	run_ignored(&w, early, NCHAINS);
	run_ignored(&w, late, NCHAINS);
	it_node_stop(&f, SIGTERM);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_each_rule_over_a_crash, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_each_rule_over_a_failover, it_setup, it_node_teardown),
	};
	return cmocka_run_group_tests_name("after_fails", tests, NULL, NULL);
}
