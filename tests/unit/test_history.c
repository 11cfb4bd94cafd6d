/* The history checker (tests/history) on histories written by hand: a
 * good one that uses every allowance the rules give (a take lost in a
 * crash, unknown acks and deletes, a release past max_attempts, the
 * beanstalk face), and for each rule a history that breaks it (a cap
 * exceeded, a child taken before its parent's ack, a schedule's slot
 * fired twice among them), which the checker must name. Lines are
 * hist_format's: invoke, complete (us), client, face, type, outcome, fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "t_lib.h"

/* Checks a history of `n` lines; asserts it reads. */
static void
check(const char *const *lines, size_t n, struct hist_report *r)
{
	struct hist h;

	hist_init(&h);
	for (size_t i = 0; i < n; i++)
		if (hist_parse(&h, lines[i]) != 0)
			fail_msg("cannot read line %zu: %s", i, lines[i]);
	assert_int_equal(hist_check(&h, r), 0);
	if (r->violations > 0)
		hist_report_print(&h, r, stderr, 5);
	hist_free(&h);
}

#define CHECK(lines, r) check((lines), sizeof(lines) / sizeof((lines)[0]), (r))

/* Exactly `n` violations, all of `rule`. */
static void
assert_only(const struct hist_report *r, enum hist_rule rule, size_t n)
{
	for (int k = 0; k < HIST_RULES_; k++)
		if (k != (int)rule && r->by_rule[k] != 0)
			fail_msg("%zu violations of %s, expected none",
			    r->by_rule[k], hist_rule_name((enum hist_rule)k));
	assert_int_equal(r->by_rule[rule], n);
	assert_int_equal(r->violations, n);
}

/* Every allowance, and no violation. */
static void
test_a_good_history_passes(void **state)
{
	static const char *const lines[] = {
		/* task 1, max 2: a fail at 1 delays, a fail at 2 buries */
		"0 10 c1 lib put ok id=1 key=a1 max=2",
		"20 30 c2 lib take ok id=1 lease=100 key=a1 att=1 max=2",
		"40 50 c2 lib fail ok id=1 lease=100 state=delayed",
		"60 70 c3 lib take ok id=1 lease=110 key=a1 att=2 max=2",
		"80 90 c3 lib fail ok id=1 lease=110 state=buried",
		/* task 2: a take lost in a crash is uncounted, and its
		 * lease refused; the next take has the same attempts */
		"0 10 c1 lib put ok id=2 key=a2",
		"20 30 c2 lib take ok id=2 lease=120 key=a2 att=1",
		"35 45 n0 - crash ok kind=kill",
		"50 60 c2 lib ack err id=2 lease=120 err=3",
		"70 80 c3 lib take ok id=2 lease=4294967400 key=a2 att=1",
		"90 100 c3 lib ack ok id=2 lease=4294967400 state=gone",
		/* task 3: a put and an ack of unknown outcome; the task
		 * was seen, and the ack may have removed it */
		"0 500 c1 lib put unknown key=a3",
		"30 40 c2 lib take ok id=3 lease=130 key=a3 att=1",
		"50 900 c2 lib ack unknown id=3 lease=130",
		/* task 4, max 1: a release at 1 lets it be taken at 2; a
		 * release of unknown outcome at 2 may leave it ready */
		"0 10 c1 lib put ok id=4 key=a4 max=1",
		"20 30 c2 lib take ok id=4 lease=140 key=a4 att=1 max=1",
		"40 50 c2 lib release ok id=4 lease=140 state=ready",
		"60 70 c3 lib take ok id=4 lease=150 key=a4 att=2 max=1",
		"80 2000 c3 lib release unknown id=4 lease=150",
		/* task 5: beanstalk's reserve and release, then an ack
		 * through the library; the beanstalk delete comes late */
		"0 10 c101 bs put ok id=5 key=a5",
		"20 30 c101 bs take ok id=5 lease=9000001 key=a5",
		"40 50 c101 bs release ok id=5 lease=9000001",
		"60 70 c2 lib take ok id=5 lease=160 key=a5 att=2",
		"80 90 c2 lib ack ok id=5 lease=160 state=gone",
		"95 99 c101 bs delete err id=5 err=1",
		/* a refused put creates nothing; a delete of unknown
		 * outcome may have removed task 7 */
		"0 10 c1 lib put err key=a6 err=13",
		"0 10 c1 lib put ok id=7 key=a7",
		"20 3000 c4 lib delete unknown id=7",
		/* task 8: released, ready at the end */
		"0 10 c1 lib put ok id=8 key=a8",
		"20 30 c2 lib take ok id=8 lease=170 key=a8 att=1",
		"40 50 c2 lib release ok id=8 lease=170 state=ready",
		/* faults that are not crashes */
		"100 300 n1 - fault ok kind=stop",
		"400 900 n0 - fault ok kind=disk",
		"5000 5000 c0 - final ok id=1 key=a1 att=2 max=2 state=buried",
		"5000 5000 c0 - final ok id=4 key=a4 att=2 max=1 state=ready",
		"5000 5000 c0 - final ok id=8 key=a8 att=1 state=ready",
		"end 5000 complete",
	};
	struct hist_report r;

	(void)state;
	CHECK(lines, &r);
	assert_int_equal(r.violations, 0);
	assert_int_equal(r.ops, 30);
	assert_int_equal(r.unknown, 4);
	assert_int_equal(r.faults, 3);
	assert_int_equal(r.by_fault[HIST_F_KILL], 1);
	assert_int_equal(r.final_tasks, 3);
	assert_int_equal(r.tasks, 7);
	assert_int_equal(r.uncounted, 1);
	hist_report_free(&r);
}

/* An acknowledged put that is gone, with nothing that completed it. */
static void
test_a_lost_put_is_caught(void **state)
{
	static const char *const lines[] = {
		"0 10 c1 lib put ok id=1 key=b1",
		"20 30 c2 lib take ok id=1 lease=100 key=b1 att=1",
		"40 50 c2 lib release ok id=1 lease=100 state=ready",
		"0 10 c1 lib put ok id=2 key=b2",
		"5000 5000 c0 - final ok id=1 key=b1 att=1 state=ready",
		"end 5000 complete",
	};
	struct hist_report r;

	(void)state;
	CHECK(lines, &r);
	assert_only(&r, HIST_R_LOST, 1);
	assert_int_equal(r.v[0].id, 2);
	hist_report_free(&r);
}

/* Without a complete final read, nothing can be called lost. */
static void
test_an_incomplete_final_read_judges_no_loss(void **state)
{
	static const char *const lines[] = {
		"0 10 c1 lib put ok id=2 key=b2",
		"end 5000 incomplete",
	};
	struct hist_report r;

	(void)state;
	CHECK(lines, &r);
	assert_int_equal(r.violations, 0);
	hist_report_free(&r);
}

/* An ack and a delete that both succeeded, concurrently. */
static void
test_a_task_completed_twice_is_caught(void **state)
{
	static const char *const lines[] = {
		"0 10 c1 lib put ok id=1 key=c1",
		"20 30 c2 lib take ok id=1 lease=100 key=c1 att=1",
		"40 60 c2 lib ack ok id=1 lease=100 state=gone",
		"45 70 c3 lib delete ok id=1",
		"end 5000 complete",
	};
	struct hist_report r;

	(void)state;
	CHECK(lines, &r);
	assert_only(&r, HIST_R_TWICE, 1);
	hist_report_free(&r);
}

/* Taken again after an ack, or found at the end after one. */
static void
test_an_acked_task_taken_again_is_caught(void **state)
{
	static const char *const taken[] = {
		"0 10 c1 lib put ok id=1 key=d1",
		"20 30 c2 lib take ok id=1 lease=100 key=d1 att=1",
		"40 50 c2 lib ack ok id=1 lease=100 state=gone",
		"60 70 c3 lib take ok id=1 lease=200 key=d1 att=2",
		"end 5000 complete",
	};
	static const char *const present[] = {
		"0 10 c1 lib put ok id=1 key=d1",
		"20 30 c2 lib take ok id=1 lease=100 key=d1 att=1",
		"40 50 c2 lib ack ok id=1 lease=100 state=gone",
		"5000 5000 c0 - final ok id=1 key=d1 att=1 state=ready",
		"end 5000 complete",
	};
	/* a beanstalk reserve after a delete through the library */
	static const char *const reserved[] = {
		"0 10 c1 lib put ok id=1 key=d1",
		"20 30 c1 lib delete ok id=1",
		"40 50 c101 bs take ok id=1 lease=7 key=d1",
		"end 5000 complete",
	};
	struct hist_report r;

	(void)state;
	CHECK(taken, &r);
	assert_only(&r, HIST_R_REVIVED, 1);
	hist_report_free(&r);
	CHECK(present, &r);
	assert_only(&r, HIST_R_REVIVED, 1);
	hist_report_free(&r);
	CHECK(reserved, &r);
	assert_only(&r, HIST_R_REVIVED, 1);
	hist_report_free(&r);
}

/* A release with an older lease after a newer take was answered. */
static void
test_a_stale_lease_accepted_is_caught(void **state)
{
	static const char *const lines[] = {
		"0 10 c1 lib put ok id=1 key=e1",
		"20 30 c2 lib take ok id=1 lease=100 key=e1 att=1",
		"40 50 c3 lib take ok id=1 lease=200 key=e1 att=2",
		"60 70 c2 lib release ok id=1 lease=100 state=ready",
		"80 90 c3 lib release ok id=1 lease=200 state=ready",
		"5000 5000 c0 - final ok id=1 key=e1 att=2 state=ready",
		"end 5000 complete",
	};
	/* the same through the beanstalk face: its reserve is newer by
	 * real time */
	static const char *const bs[] = {
		"0 10 c1 lib put ok id=1 key=e1",
		"20 30 c2 lib take ok id=1 lease=100 key=e1 att=1",
		"40 50 c101 bs take ok id=1 lease=5 key=e1",
		"60 70 c2 lib touch ok id=1 lease=100 state=taken",
		"80 90 c101 bs delete ok id=1",
		"end 5000 complete",
	};
	struct hist_report r;

	(void)state;
	CHECK(lines, &r);
	assert_only(&r, HIST_R_STALE, 1);
	hist_report_free(&r);
	CHECK(bs, &r);
	assert_only(&r, HIST_R_STALE, 1);
	hist_report_free(&r);
}

/* Attempts that go down: with no crash at all, two lower across one, or
 * lower at the end. One lower across a crash is allowed. */
static void
test_attempts_that_go_down_are_caught(void **state)
{
	static const char *const nocrash[] = {
		"0 10 c1 lib put ok id=1 key=f1",
		"20 30 c2 lib take ok id=1 lease=100 key=f1 att=1",
		"40 50 c2 lib release ok id=1 lease=100 state=ready",
		"60 70 c2 lib take ok id=1 lease=110 key=f1 att=1",
		"80 90 c2 lib ack ok id=1 lease=110 state=gone",
		"end 5000 complete",
	};
	static const char *const twolower[] = {
		"0 10 c1 lib put ok id=1 key=f1",
		"20 30 c2 lib take ok id=1 lease=100 key=f1 att=3",
		"35 45 n0 - crash ok kind=failover",
		"60 70 c2 lib take ok id=1 lease=4294967396 key=f1 att=2",
		"80 90 c2 lib ack ok id=1 lease=4294967396 state=gone",
		"end 5000 complete",
	};
	static const char *const crashbefore[] = {
		/* the crash ended before the take began: no excuse */
		"0 10 c1 lib put ok id=1 key=f1",
		"12 18 n0 - crash ok kind=kill",
		"20 30 c2 lib take ok id=1 lease=4294967396 key=f1 att=1",
		"60 70 c2 lib take ok id=1 lease=4294967400 key=f1 att=1",
		"5000 5000 c0 - final ok id=1 key=f1 att=1 state=ready",
		"end 5000 complete",
	};
	static const char *const atend[] = {
		"0 10 c1 lib put ok id=1 key=f1",
		"20 30 c2 lib take ok id=1 lease=100 key=f1 att=2",
		"40 50 c2 lib release ok id=1 lease=100 state=ready",
		"5000 5000 c0 - final ok id=1 key=f1 att=1 state=ready",
		"end 5000 complete",
	};
	static const char *const allowed[] = {
		"0 10 c1 lib put ok id=1 key=f1",
		"20 30 c2 lib take ok id=1 lease=100 key=f1 att=2",
		"35 45 n0 - crash ok kind=kill",
		"5000 5000 c0 - final ok id=1 key=f1 att=1 state=ready",
		"end 5000 complete",
	};
	struct hist_report r;

	(void)state;
	CHECK(nocrash, &r);
	assert_only(&r, HIST_R_ATTEMPTS, 1);
	hist_report_free(&r);
	CHECK(twolower, &r);
	assert_only(&r, HIST_R_ATTEMPTS, 1);
	hist_report_free(&r);
	CHECK(crashbefore, &r);
	assert_only(&r, HIST_R_ATTEMPTS, 1);
	hist_report_free(&r);
	CHECK(atend, &r);
	assert_only(&r, HIST_R_ATTEMPTS, 1);
	hist_report_free(&r);
	CHECK(allowed, &r);
	assert_int_equal(r.violations, 0);
	assert_int_equal(r.uncounted, 1);
	hist_report_free(&r);
}

/* max_attempts: a fail at max that does not bury, one below that does,
 * a take past max with no release, a task ready at the end past max,
 * a task buried below max. */
static void
test_max_attempts_not_burying_is_caught(void **state)
{
	static const char *const failed[] = {
		"0 10 c1 lib put ok id=1 key=91 max=2",
		"20 30 c2 lib take ok id=1 lease=100 key=91 att=1 max=2",
		"40 50 c2 lib fail ok id=1 lease=100 state=buried",
		"60 70 c2 lib kick ok id=1",
	};
	static const char *const notburied[] = {
		"0 10 c1 lib put ok id=1 key=91 max=1",
		"20 30 c2 lib take ok id=1 lease=100 key=91 att=1 max=1",
		"40 50 c2 lib fail ok id=1 lease=100 state=delayed",
		"5000 5000 c0 - final ok id=1 key=91 att=1 max=1 state=buried",
		"end 5000 complete",
	};
	static const char *const past[] = {
		/* the first lease ended by ttr or disconnect, not release */
		"0 10 c1 lib put ok id=1 key=91 max=1",
		"20 30 c2 lib take ok id=1 lease=100 key=91 att=1 max=1",
		"4000 4010 c3 lib take ok id=1 lease=200 key=91 att=2 max=1",
		"4020 4030 c3 lib ack ok id=1 lease=200 state=gone",
		"end 5000 complete",
	};
	static const char *const ready[] = {
		"0 10 c1 lib put ok id=1 key=91 max=2",
		"20 30 c2 lib take ok id=1 lease=100 key=91 att=1 max=2",
		"40 50 c2 lib release ok id=1 lease=100 state=ready",
		"60 70 c2 lib take ok id=1 lease=110 key=91 att=2 max=2",
		"5000 5000 c0 - final ok id=1 key=91 att=2 max=2 state=ready",
		"end 5000 complete",
	};
	static const char *const early[] = {
		"0 10 c1 lib put ok id=1 key=91 max=3",
		"20 30 c2 lib take ok id=1 lease=100 key=91 att=1 max=3",
		"5000 5000 c0 - final ok id=1 key=91 att=1 max=3 state=buried",
		"end 5000 complete",
	};
	struct hist_report r;
	struct hist h;

	(void)state;
	/* "kick" is no operation of the history: the line is refused */
	hist_init(&h);
	assert_int_equal(hist_parse(&h, failed[3]), -1);
	hist_free(&h);
	check(failed, 3, &r);
	assert_only(&r, HIST_R_BURY, 1);
	hist_report_free(&r);
	CHECK(notburied, &r);
	assert_only(&r, HIST_R_BURY, 1);
	hist_report_free(&r);
	CHECK(past, &r);
	assert_only(&r, HIST_R_BURY, 1);
	hist_report_free(&r);
	CHECK(ready, &r);
	assert_only(&r, HIST_R_BURY, 1);
	hist_report_free(&r);
	CHECK(early, &r);
	assert_only(&r, HIST_R_BURY, 1);
	hist_report_free(&r);
}

/* Unknown outcomes, seen both ways: a put that made two tasks, an
 * unknown ack that a newer take shows failed yet is all that could have
 * removed the task, a refused put whose task exists. */
static void
test_an_unknown_seen_both_ways_is_caught(void **state)
{
	static const char *const twice[] = {
		"0 900 c1 lib put unknown key=a1",
		"20 30 c2 lib take ok id=5 lease=100 key=a1 att=1",
		"40 50 c2 lib ack ok id=5 lease=100 state=gone",
		"60 70 c3 lib take ok id=6 lease=110 key=a1 att=1",
		"80 90 c3 lib ack ok id=6 lease=110 state=gone",
		"end 5000 complete",
	};
	static const char *const ack[] = {
		"0 10 c1 lib put ok id=1 key=a2",
		"20 30 c2 lib take ok id=1 lease=100 key=a2 att=1",
		"40 900 c2 lib ack unknown id=1 lease=100",
		"1000 1010 c3 lib take ok id=1 lease=200 key=a2 att=2",
		"end 5000 complete",
	};
	static const char *const refused[] = {
		"0 10 c1 lib put err key=a3 err=13",
		"5000 5000 c0 - final ok id=9 key=a3 att=0 state=ready",
		"end 5000 complete",
	};
	struct hist_report r;

	(void)state;
	CHECK(twice, &r);
	assert_only(&r, HIST_R_UNKNOWN, 1);
	hist_report_free(&r);
	CHECK(ack, &r);
	assert_only(&r, HIST_R_UNKNOWN, 1);
	hist_report_free(&r);
	CHECK(refused, &r);
	assert_only(&r, HIST_R_UNKNOWN, 1);
	hist_report_free(&r);
}

/* Replies that do not fit together: a payload no put had, an ack that
 * left the task ready, a task still taken at the end. */
static void
test_replies_that_do_not_fit_are_caught(void **state)
{
	static const char *const phantom[] = {
		"5000 5000 c0 - final ok id=3 key=77 att=0 state=ready",
		"end 5000 complete",
	};
	static const char *const ack[] = {
		"0 10 c1 lib put ok id=1 key=78",
		"20 30 c2 lib take ok id=1 lease=100 key=78 att=1",
		"40 50 c2 lib ack ok id=1 lease=100 state=ready",
		"end 5000 complete",
	};
	static const char *const taken[] = {
		"0 10 c1 lib put ok id=1 key=79",
		"20 30 c2 lib take ok id=1 lease=100 key=79 att=1",
		"5000 5000 c0 - final ok id=1 key=79 att=1 state=taken",
		"end 5000 complete",
	};
	struct hist_report r;

	(void)state;
	CHECK(phantom, &r);
	assert_only(&r, HIST_R_INTEGRITY, 1);
	hist_report_free(&r);
	CHECK(ack, &r);
	assert_only(&r, HIST_R_INTEGRITY, 1);
	hist_report_free(&r);
	CHECK(taken, &r);
	assert_only(&r, HIST_R_INTEGRITY, 1);
	hist_report_free(&r);
}

/* A tube capped at 2: three tasks surely taken at once is caught; the
 * same takes are allowed when a lease may have ended before the third (an
 * ack invoked, a fault, the taker's new session, its ttr), and the peak
 * is said. */
static void
test_a_cap_exceeded_is_caught(void **state)
{
#define CAP_PUTS                                                               \
	"0 10 c1 lib put ok id=1 key=c1", "0 10 c1 lib put ok id=2 key=c2",    \
	    "0 10 c1 lib put ok id=3 key=c3",                                  \
	    "20 30 c2 lib take ok id=1 lease=100 key=c1 att=1 ttr=1000 cap=2", \
	    "20 40 c3 lib take ok id=2 lease=110 key=c2 att=1 ttr=1000 cap=2"
#define CAP_END                                                                \
	"100 110 c2 lib ack ok id=1 lease=100 state=gone",                     \
	    "300 310 c3 lib ack ok id=2 lease=110 state=gone",                 \
	    "400 410 c4 lib ack ok id=3 lease=120 state=gone",                 \
	    "end 5000 complete"
	static const char *const after_ack[] = { CAP_PUTS,
		"90 105 c4 lib take ok id=3 lease=120 key=c3 att=1 ttr=1000 "
		"cap=2",
		CAP_END };
	static const char *const three[] = { CAP_PUTS,
		"50 60 c4 lib take ok id=3 lease=120 key=c3 att=1 ttr=1000 "
		"cap=2",
		CAP_END };
	static const char *const after_session[] = { CAP_PUTS,
		"42 44 c2 lib session ok",
		"50 60 c4 lib take ok id=3 lease=120 key=c3 att=1 ttr=1000 "
		"cap=2",
		CAP_END };
	static const char *const after_fault[] = { CAP_PUTS,
		"45 47 n0 - fault ok kind=stop",
		"50 60 c4 lib take ok id=3 lease=120 key=c3 att=1 ttr=1000 "
		"cap=2",
		CAP_END };
	/* cap 1: the first lease ran out (ttr) long before the second take,
	 * though its holder's ack came later still (refused) */
	static const char *const ttr_ran_out[] = {
		"0 10 c1 lib put ok id=1 key=c1",
		"0 10 c1 lib put ok id=2 key=c2",
		"20 30 c2 lib take ok id=1 lease=100 key=c1 att=1 ttr=1000 "
		"cap=1",
		"1500000 1500010 c3 lib take ok id=2 lease=110 key=c2 att=1 "
		"ttr=1000 cap=1",
		"1600000 1600010 c3 lib ack ok id=2 lease=110 state=gone",
		"2000000 2000010 c2 lib ack err id=1 lease=100 err=3",
		"3000000 3000000 c0 - final ok id=1 key=c1 att=1 state=ready",
		"end 3000000 complete"
	};
	struct hist_report r;

	(void)state;
	CHECK(after_ack, &r);
	assert_int_equal(r.violations, 0);
	assert_int_equal(r.cap, 2);
	assert_int_equal(r.cap_peak, 2);
	hist_report_free(&r);
	CHECK(three, &r);
	assert_only(&r, HIST_R_CAP, 1);
	assert_int_equal(r.v[0].id, 3);
	assert_int_equal(r.cap_peak, 3);
	hist_report_free(&r);
	CHECK(after_session, &r); /* c2's session lease of task 1 ended */
	assert_int_equal(r.violations, 0);
	assert_int_equal(r.ops, 9); /* a new session is not a call */
	hist_report_free(&r);
	CHECK(after_fault, &r);
	assert_int_equal(r.violations, 0);
	assert_int_equal(r.cap_peak, 2); /* 1 and 2 until the fault */
	hist_report_free(&r);
	CHECK(ttr_ran_out, &r);
	assert_int_equal(r.violations, 0);
	hist_report_free(&r);
#undef CAP_PUTS
#undef CAP_END
}

/* A fair group capped at 1: two of its tasks surely taken at once is
 * caught, two of different groups are not, and the tube's own cap is
 * swept apart from its groups'. */
static void
test_a_group_cap_exceeded_is_caught(void **state)
{
#define G_PUTS                                                                 \
	"0 10 c1 lib put ok id=1 key=c1", "0 10 c1 lib put ok id=2 key=c2",    \
	    "20 30 c2 lib take ok id=1 lease=100 key=c1 att=1 ttr=1000 "       \
	    "cap=4 group=1 gcap=1"
#define G_END                                                                  \
	"100 110 c2 lib ack ok id=1 lease=100 state=gone",                     \
	    "300 310 c3 lib ack ok id=2 lease=110 state=gone",                 \
	    "end 5000 complete"
	static const char *const same[] = { G_PUTS,
		"40 50 c3 lib take ok id=2 lease=110 key=c2 att=1 ttr=1000 "
		"cap=4 group=1 gcap=1",
		G_END };
	static const char *const other[] = { G_PUTS,
		"40 50 c3 lib take ok id=2 lease=110 key=c2 att=1 ttr=1000 "
		"cap=4 group=2 gcap=1",
		G_END };
	static const char *const after_ack[] = { G_PUTS,
		"105 120 c3 lib take ok id=2 lease=110 key=c2 att=1 ttr=1000 "
		"cap=4 group=1 gcap=1",
		G_END };
	struct hist_report r;

	(void)state;
	CHECK(same, &r);
	assert_only(&r, HIST_R_CAP, 1);
	assert_int_equal(r.v[0].id, 2);
	assert_non_null(strstr(r.v[0].why, "fair group 1"));
	assert_int_equal(r.gcap, 1);
	assert_int_equal(r.gcap_peak, 2);
	assert_int_equal(r.cap_peak, 2); /* the tube's 4 held */
	hist_report_free(&r);
	CHECK(other, &r);
	assert_int_equal(r.violations, 0);
	assert_int_equal(r.gcap_peak, 1);
	hist_report_free(&r);
	CHECK(after_ack, &r);
	assert_int_equal(r.violations, 0);
	hist_report_free(&r);
#undef G_PUTS
#undef G_END
}

/* A task put after a parent, taken before any ack or delete of that
 * parent was even asked: caught once. Taken after the parent's ack (one
 * of unknown outcome included, the child's put unknown too), or put
 * after a parent deleted before, it is fine; the line's after= field
 * reads back as written. A child buried by its parent's failure, never
 * taken, is no breach of "bury". */
static void
test_a_child_taken_before_its_parent_is_caught(void **state)
{
	static const char *const lines[] = {
		"0 10 c1 lib put ok id=1 key=a1",
		"20 30 c1 lib put ok id=2 key=a2 after=1",
		"40 50 c2 lib take ok id=1 lease=100 key=a1 att=1",
		"60 70 c2 lib ack ok id=1 lease=100 state=gone",
		"80 90 c3 lib take ok id=2 lease=200 key=a2 att=1",
		"95 99 c3 lib ack ok id=2 lease=200 state=gone",
		/* the child taken while its parent still waits */
		"100 110 c1 lib put ok id=3 key=a3",
		"120 130 c1 lib put ok id=4 key=a4 after=3",
		"140 150 c2 lib take ok id=4 lease=300 key=a4 att=1",
		"160 170 c2 lib ack ok id=4 lease=300 state=gone",
		"180 190 c2 lib take ok id=3 lease=400 key=a3 att=1",
		"200 210 c2 lib ack ok id=3 lease=400 state=gone",
		"300 310 c1 lib put ok id=5 key=a5",
		"320 330 c1 lib put unknown key=a6 after=5",
		"340 350 c2 lib take ok id=5 lease=500 key=a5 att=1",
		"360 900 c2 lib ack unknown id=5 lease=500",
		"400 410 c3 lib take ok id=6 lease=600 key=a6 att=1",
		"420 430 c3 lib ack ok id=6 lease=600 state=gone",
		"500 510 c1 lib put ok id=7 key=a7",
		"520 530 c1 lib delete ok id=7",
		"540 550 c1 lib put ok id=8 key=a8 after=7",
		"560 570 c2 lib take ok id=8 lease=700 key=a8 att=1",
		"580 590 c2 lib ack ok id=8 lease=700 state=gone",
		/* a parent buried: its child too, never taken (not "bury") */
		"600 610 c1 lib put ok id=9 key=a9 max=1",
		"620 630 c1 lib put ok id=10 key=a10 after=9",
		"640 650 c2 lib take ok id=9 lease=800 key=a9 att=1 max=1",
		"660 670 c2 lib fail ok id=9 lease=800 state=buried",
		"4000 4000 c0 - final ok id=9 key=a9 att=1 max=1 state=buried",
		"4000 4000 c0 - final ok id=10 key=a10 state=buried",
		"end 5000 complete",
	};
	struct hist_report r;
	struct hist h;
	char line[512];

	(void)state;
	CHECK(lines, &r);
	assert_only(&r, HIST_R_AFTER, 1);
	assert_int_equal(r.v[0].id, 4);
	assert_int_equal(r.children, 4);
	hist_report_free(&r);
	hist_init(&h);
	assert_int_equal(hist_parse(&h, lines[1]), 0);
	assert_int_equal(h.ops[0].after, 1);
	hist_format(&h.ops[0], line, sizeof(line));
	assert_string_equal(line, lines[1]);
	hist_free(&h);
}

/* A schedule's slot whose tasks were taken: one task per slot, taken
 * again after its lease ended, is fine; a second task for the same slot
 * of the same schedule is caught once (the same slot of another
 * schedule is another slot); a fire line reads back as written. The
 * fires are no client's operations on tasks: the other rules ignore
 * them. */
static void
test_a_slot_fired_twice_is_caught(void **state)
{
	static const char *const good[] = {
		"0 10 c900 lib fire ok id=11 sched=1 slot=1790000040000",
		"20 30 c900 lib fire ok id=12 sched=2 slot=1790000040000",
		/* its lease lost, task 11 is taken again: one firing */
		"5000 5010 c900 lib fire ok id=11 sched=1 slot=1790000040000",
		"60000 60010 c900 lib fire ok id=13 sched=1 slot=1790000100000",
		"end 90000 complete",
	};
	static const char *const twice[] = {
		"0 10 c900 lib fire ok id=11 sched=1 slot=1790000040000",
		"20 30 c900 lib fire ok id=12 sched=2 slot=1790000040000",
		/* after a failover, the slot put a second task */
		"3000 3010 c900 lib fire ok id=14 sched=1 slot=1790000040000",
		"60000 60010 c900 lib fire ok id=13 sched=1 slot=1790000100000",
		"end 90000 complete",
	};
	struct hist_report r;
	struct hist h;
	char line[512];

	(void)state;
	CHECK(good, &r);
	assert_int_equal(r.violations, 0);
	assert_int_equal(r.slots, 3);
	assert_int_equal(r.tasks, 0); /* no task rule judged them */
	hist_report_free(&r);
	CHECK(twice, &r);
	assert_only(&r, HIST_R_SLOT, 1);
	assert_int_equal(r.v[0].id, 14);
	assert_int_equal(r.slots, 3);
	hist_report_free(&r);
	hist_init(&h);
	assert_int_equal(hist_parse(&h, twice[2]), 0);
	assert_int_equal(h.ops[0].type, HIST_FIRE);
	assert_int_equal(h.ops[0].sched, 1);
	assert_true(h.ops[0].slot == 1790000040000);
	hist_format(&h.ops[0], line, sizeof(line));
	assert_string_equal(line, twice[2]);
	hist_free(&h);
}

/* A task of a moving tube (face mv, named by its payload: id
 * 0x80000000000000a1 is HIST_MV_ID(0xa1)): taken on one cluster, its
 * lease run out, copied, taken on the other under a lower lease and
 * acked there is no breach; taken again while the first take surely
 * held it, or found twice at the end, is the rule double; acked on one
 * cluster and taken on the other after is revived. */
static void
test_a_moved_task_held_twice_is_caught(void **state)
{
	static const char *const good[] = {
		"0 10 c201 mv put ok id=9223372036854775969 key=a1 max=3",
		"20 30 c202 mv take ok id=9223372036854775969 lease=900 key=a1 "
		"att=1 max=3 ttr=1000",
		"2000000 2000010 c203 mv take ok id=9223372036854775969 "
		"lease=40 key=a1 att=2 max=3 ttr=1000",
		"2000020 2000030 c203 mv ack ok id=9223372036854775969 "
		"lease=40",
		"0 10 c201 mv put ok id=9223372036854775970 key=a2",
		"end 3000000 complete",
		"3000000 3000000 c0 - final ok id=9223372036854775970 key=a2 "
		"att=0 state=ready",
	};
	static const char *const held[] = {
		"0 10 c201 mv put ok id=9223372036854775969 key=a1 max=3",
		"20 30 c202 mv take ok id=9223372036854775969 lease=900 key=a1 "
		"att=1 max=3 ttr=1000",
		/* its copy handed out 0.5 s into a 1 s lease */
		"500000 500010 c203 mv take ok id=9223372036854775969 "
		"lease=40 key=a1 att=2 max=3 ttr=1000",
		"500020 500030 c203 mv ack ok id=9223372036854775969 lease=40",
		/* c202 still runs: its session (and lease) lives on */
		"900000 900010 c202 mv take err err=2",
		"end 3000000 complete",
	};
	static const char *const copies[] = {
		"0 10 c201 mv put ok id=9223372036854775970 key=a2",
		"end 3000000 complete",
		"3000000 3000000 c0 - final ok id=9223372036854775970 key=a2 "
		"state=ready",
		"3000000 3000000 c0 - final ok id=9223372036854775970 key=a2 "
		"state=ready",
	};
	static const char *const revived[] = {
		"0 10 c201 mv put ok id=9223372036854775969 key=a1",
		"20 30 c202 mv take ok id=9223372036854775969 lease=900 key=a1 "
		"att=1 ttr=1000",
		"40 50 c202 mv ack ok id=9223372036854775969 lease=900",
		"2000000 2000010 c203 mv take ok id=9223372036854775969 "
		"lease=40 key=a1 att=1 ttr=1000",
		"end 3000000 complete",
	};
	struct hist_report r;

	(void)state;
	CHECK(good, &r);
	assert_int_equal(r.violations, 0);
	assert_int_equal(r.retakes, 1);
	hist_report_free(&r);
	CHECK(held, &r);
	assert_only(&r, HIST_R_DOUBLE, 1);
	hist_report_free(&r);
	CHECK(copies, &r);
	assert_only(&r, HIST_R_DOUBLE, 1);
	hist_report_free(&r);
	CHECK(revived, &r);
	assert_int_equal(r.by_rule[HIST_R_REVIVED], 1);
	hist_report_free(&r);
}

/* hist_format and hist_parse agree, and payloads name their put. */
static void
test_text_and_payloads_round_trip(void **state)
{
	struct hist h;
	struct hist_op op;
	char line[512], again[512], p[HIST_PAYLOAD_MAX];
	size_t len;

	(void)state;
	hist_init(&h);
	hist_op_init(&op, HIST_FAIL);
	op.invoke = 12;
	op.complete = 3456;
	op.client = 7;
	op.face = HIST_LIB;
	op.outcome = HIST_ERR;
	op.id = 99;
	op.lease = 4294967396ull;
	op.err = 2;
	op.state = 4;
	op.ttr = 2500;
	op.cap = 10;
	hist_format(&op, line, sizeof(line));
	assert_int_equal(hist_parse(&h, line), 0);
	assert_int_equal(h.n, 1);
	assert_memory_equal(&h.ops[0], &op, sizeof(op));
	hist_format(&h.ops[0], again, sizeof(again));
	assert_string_equal(line, again);
	assert_int_equal(hist_parse(&h, "1 2 c1 lib take maybe id=1"), -1);
	assert_int_equal(hist_parse(&h, "1 2 c1 lib take ok id=x"), -1);
	assert_int_equal(hist_parse(&h, "5 2 c1 lib take ok"), -1);
	assert_int_equal(hist_parse(&h, "# a comment"), 0);
	assert_int_equal(h.n, 1);
	hist_free(&h);

	len = hist_payload(0x1234, p);
	assert_int_equal(hist_payload_key(p, len), 0x1234);
	assert_int_equal(hist_payload_key(p, len - 1), 0);
	p[5] = 'x';
	assert_int_equal(hist_payload_key(p, len), 0);
	assert_int_equal(hist_payload_key("hello", 5), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_good_history_passes),
		cmocka_unit_test(test_a_lost_put_is_caught),
		cmocka_unit_test(test_an_incomplete_final_read_judges_no_loss),
		cmocka_unit_test(test_a_task_completed_twice_is_caught),
		cmocka_unit_test(test_an_acked_task_taken_again_is_caught),
		cmocka_unit_test(test_a_stale_lease_accepted_is_caught),
		cmocka_unit_test(test_attempts_that_go_down_are_caught),
		cmocka_unit_test(test_max_attempts_not_burying_is_caught),
		cmocka_unit_test(test_an_unknown_seen_both_ways_is_caught),
		cmocka_unit_test(test_replies_that_do_not_fit_are_caught),
		cmocka_unit_test(test_a_cap_exceeded_is_caught),
		cmocka_unit_test(test_a_group_cap_exceeded_is_caught),
		cmocka_unit_test(
		    test_a_child_taken_before_its_parent_is_caught),
		cmocka_unit_test(test_a_slot_fired_twice_is_caught),
		cmocka_unit_test(test_a_moved_task_held_twice_is_caught),
		cmocka_unit_test(test_text_and_payloads_round_trip),
	};

	return cmocka_run_group_tests_name("history", tests, NULL, NULL);
}
