/* The snapshot worker's state kept between snapshots (--snapshot-reuse,
 * server/core/bgsnap.c): a snapshot started within the window applies
 * only the log since the last one to the state that one was written
 * from, instead of loading it again.
 *
 * - The second snapshot starts from the state kept ("base=kept" in its
 *   log line), and it holds what a rebuild from the first snapshot and
 *   the log gives: `sluice-log state` reads the same from it as from the
 *   first one plus the log, and a restart from it after a kill -9 finds
 *   every task as it was (state, tube, priority, attempts, key, payload).
 * - The state kept is not used when the newest snapshot on disk is no
 *   longer the one it was written as (here: removed): the next snapshot
 *   is rebuilt from the disk, and is right.
 * - A follower's second snapshot starts from the state kept too, and a
 *   restart from it has the leader's state.
 * - With --snapshot-reuse 0, and after the window with --snapshot-reuse
 *   3, a snapshot loads the one before. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"
#include "it_node.h"

enum { TASKS = 300, MAXID = TASKS + 64 };

/* One task's visible fields, or an empty text when it does not exist. */
static void
sig_of(struct sluice_client *c, uint64_t id, char *out, size_t n)
{
	struct sluice_task *t = it_peek(c, id);

	out[0] = '\0';
	if (t == NULL)
		return;
	snprintf(out, n, "%d %s %" PRIu32 " %" PRIu32 " %s %.*s", t->state,
	    t->tube, t->priority, t->attempts, t->key ? t->key : "-",
	    (int)t->payload_len, (const char *)t->payload);
	sluice_task_free(t);
}

/* Every task's signature, ids 1 .. MAXID. */
static char (*all_sigs(struct sluice_client *c))[128]
{
	char(*s)[128] = calloc(MAXID + 1, sizeof(*s));

	assert_non_null(s);
	for (uint64_t id = 1; id <= MAXID; id++)
		sig_of(c, id, s[id], sizeof(s[id]));
	return s;
}

/* Puts, takes, acks, buries and deletes in two tubes: TASKS tasks in
 * all, of which some change after `from` of them are in. */
static void
load(struct sluice_client *c, int from, int to)
{
	char payload[32];

	for (int i = from; i < to; i++) {
		struct sluice_put_opts o;

		sluice_put_opts_init(&o);
		o.tube = i % 3 == 0 ? "r2" : "r1";
		o.priority = (uint32_t)(i % 7);
		snprintf(payload, sizeof(payload), "task-%d", i);
		if (i % 10 == 0) {
			char key[16];

			snprintf(key, sizeof(key), "k%d", i);
			o.key = key;
			it_put_o(c, &o, payload);
		} else {
			it_put_o(c, &o, payload);
		}
	}
	for (int i = 0; i < (to - from) / 5; i++) {
		struct sluice_task *t = it_take(c, "r1", 1000, 1);

		switch (i % 4) {
		case 0:
			it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
			break;
		case 1:
			it_rc(c, sluice_bury(c, t->id, t->lease, NULL), 0);
			break;
		case 2:
			it_rc(c, sluice_delete(c, t->id), 0);
			break;
		default:
			break; /* stays taken (detached: over the restart) */
		}
		sluice_task_free(t);
	}
}

/* `sluice-log state --json` of `data`, into out, with what depends on
 * when it is read (the tool's clock, ages) and on the snapshot it starts
 * from (its LSN, the records replayed after it) each made one 'x'. */
static void
offline_state(const char *data, char *out, size_t n)
{
	static const char *const clocked[] = { "\"now\":", "_age_ms\":",
		"\"snapshot_lsn\":", "\"records_replayed\":" };

	assert_int_equal(it_log_tool(out, n, "state", data, "--json", NULL), 0);
	for (size_t i = 0; i < sizeof(clocked) / sizeof(clocked[0]); i++)
		for (char *p = out; (p = strstr(p, clocked[i])) != NULL;) {
			size_t k =
			    strspn(p += strlen(clocked[i]), "0123456789");

			if (k > 0) {
				*p = 'x';
				memmove(p + 1, p + k, strlen(p + k) + 1);
			}
		}
}

static void
test_the_next_snapshot_starts_from_the_state_kept(void **state)
{
	static char st_kept[64 << 10], st_rebuilt[64 << 10];
	struct t_srv *s = it_srv(*state, "node");
	char want[128], path[1200], aside[1300];
	char(*before)[128], (*after)[128];
	struct sluice_client *c;
	uint64_t lsn1, lsn2;
	int status;

	it_start(s);
	c = it_client(s);
	load(c, 0, TASKS / 2);
	it_rc(c, sluice_snapshot(c, &lsn1), 0);
	load(c, TASKS / 2, TASKS);
	it_rc(c, sluice_snapshot(c, &lsn2), 0);
	assert_true(lsn2 > lsn1);
	snprintf(want, sizeof(want), "snapshot written lsn=%" PRIu64 " ", lsn2);
	assert_int_equal(it_log_count(s, want), 1);
	snprintf(want, sizeof(want), "base_lsn=%" PRIu64 " base=kept ", lsn1);
	assert_int_equal(it_log_count(s, want), 1);
	before = all_sigs(c);
	sluice_close(c);
	/* Nothing after the second snapshot: the state is its alone. */
	status = t_srv_stop(s, SIGKILL);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	offline_state(s->data, st_kept, sizeof(st_kept));
	/* The same LSN rebuilt from the first snapshot and the log. */
	snprintf(path, sizeof(path), "%s/%020" PRIu64 ".snap", s->data, lsn2);
	snprintf(aside, sizeof(aside), "%s.aside", path);
	assert_int_equal(rename(path, aside), 0);
	offline_state(s->data, st_rebuilt, sizeof(st_rebuilt));
	assert_int_equal(rename(aside, path), 0);
	if (strcmp(st_kept, st_rebuilt) != 0)
		fprintf(stderr, "from the kept state:\n%s\nrebuilt:\n%s\n",
		    st_kept, st_rebuilt);
	assert_string_equal(st_kept, st_rebuilt);
	/* A restart from it finds every task as it was. */
	it_start(s);
	c = it_client(s);
	snprintf(want, sizeof(want), "snap_lsn=%" PRIu64 " ", lsn2);
	assert_true(it_log_count(s, want) >= 1);
	after = all_sigs(c);
	for (uint64_t id = 1; id <= MAXID; id++)
		assert_string_equal(before[id], after[id]);
	assert_true(before[1][0] != '\0');
	free(before);
	free(after);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* The snapshot the state was kept as is removed from the disk: the next
 * one cannot start from it (a rebuild would not) and is built from what
 * the disk holds (here the log from its first record). */
static void
test_the_state_kept_is_not_used_once_its_snapshot_is_gone(void **state)
{
	struct t_srv *s = it_srv(*state, "node");
	char want[128], path[1200];
	char(*before)[128], (*after)[128];
	struct sluice_client *c;
	uint64_t lsn1, lsn2;

	it_start(s);
	c = it_client(s);
	load(c, 0, TASKS / 2);
	it_rc(c, sluice_snapshot(c, &lsn1), 0);
	snprintf(path, sizeof(path), "%s/%020" PRIu64 ".snap", s->data, lsn1);
	assert_int_equal(unlink(path), 0);
	load(c, TASKS / 2, TASKS);
	it_rc(c, sluice_snapshot(c, &lsn2), 0);
	snprintf(want, sizeof(want), "snapshot written lsn=%" PRIu64 " ", lsn2);
	assert_int_equal(it_log_count(s, want), 1);
	assert_int_equal(
	    it_log_count(s, "base_lsn=0 base=snapshot records="), 2);
	assert_int_equal(it_log_count(s, "base=kept"), 0);
	before = all_sigs(c);
	it_crash_restart(s, &c);
	snprintf(want, sizeof(want), "snap_lsn=%" PRIu64 " ", lsn2);
	assert_true(it_log_count(s, want) >= 1);
	after = all_sigs(c);
	for (uint64_t id = 1; id <= MAXID; id++)
		assert_string_equal(before[id], after[id]);
	free(before);
	free(after);
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* A follower's snapshots: the records the leader streams go into the
 * state its worker kept as into its queue, and a follower restarted from
 * the snapshot built on them has the leader's state. */
static void
test_a_followers_snapshot_from_the_state_kept(void **state)
{
	struct it_node l, f;
	char want[64];
	uint64_t lsn;

	it_node_init(state, &l, "leader");
	it_node_init(state, &f, "follower");
	it_node_start(&l);
	it_node_follows(&f, &l);
	it_node_start(&f);
	load(l.c, 0, TASKS / 2);
	it_node_caught_up(&l, &f);
	it_rc(f.c, sluice_snapshot(f.c, &lsn), 0);
	load(l.c, TASKS / 2, TASKS);
	it_node_caught_up(&l, &f);
	it_rc(f.c, sluice_snapshot(f.c, &lsn), 0);
	assert_int_equal(it_log_count(f.s, "base=kept"), 1);
	it_node_kill(&f);
	it_node_start(&f);
	snprintf(want, sizeof(want), "snap_lsn=%" PRIu64 " ", lsn);
	assert_true(it_log_count(f.s, want) >= 1);
	it_node_same_state(&l, &f);
}

/* Three snapshots with `args`, one put before each of the last two, the
 * third after `pause_ms`: how many of them started from the state kept. */
static int
kept_of_three(void **state, const char *const *args, int64_t pause_ms)
{
	struct t_srv *s = it_srv(*state, "node");
	struct sluice_client *c;
	uint64_t lsn;
	int n;

	for (int i = 0; args[i] != NULL; i++)
		s->args[i] = args[i];
	it_start(s);
	c = it_client(s);
	load(c, 0, 20);
	for (int i = 0; i < 3; i++) {
		if (i == 2)
			it_sleep_ms(pause_ms);
		if (i > 0)
			it_put(c, "r1", "one more");
		it_rc(c, sluice_snapshot(c, &lsn), 0);
	}
	assert_int_equal(it_log_count(s, "snapshot written "), 3);
	n = it_log_count(s, "base=kept");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	return n;
}

static void
test_no_state_kept_with_reuse_0(void **state)
{
	static const char *const args[] = { "--snapshot-reuse", "0", NULL };

	assert_int_equal(kept_of_three(state, args, 0), 0);
}

static void
test_the_state_kept_is_given_back_after_the_window(void **state)
{
	static const char *const args[] = { "--snapshot-reuse", "3", NULL };

	/* the second right after the first (kept), the third 6 s after the
	 * second (given back 3 s after it) */
	assert_int_equal(kept_of_three(state, args, 6000), 1);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_the_next_snapshot_starts_from_the_state_kept),
		T(test_the_state_kept_is_not_used_once_its_snapshot_is_gone),
		cmocka_unit_test_setup_teardown(
		    test_a_followers_snapshot_from_the_state_kept, it_setup,
		    it_node_teardown),
		T(test_no_state_kept_with_reuse_0),
		T(test_the_state_kept_is_given_back_after_the_window),
	};
#undef T
	return cmocka_run_group_tests_name("snapreuse", tests, NULL, NULL);
}
