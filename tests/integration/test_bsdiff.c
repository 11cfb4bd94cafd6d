/* The differential test of the beanstalk face: the same scripted byte
 * sequences go to Debian's beanstalkd (1.12) and to sluiced --beanstalk,
 * each freshly started, and the replies must be the same bytes, apart
 * from the stats fields docs/beanstalk.md lists as differing (their
 * values are masked, their keys and order still compared).
 *
 * A script is a list of steps: bytes to send on one of three connections
 * and how many replies to read there before the next step (0: the replies
 * come later, e.g. a reserve that blocks). Both servers are given
 * max-job-size 65535 (beanstalkd's default; sluiced --max-payload).
 * Job ids agree because both servers start empty and number from 1. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"

enum { CONNS = 3 };

struct step {
	int conn;
	const char *bytes;
	size_t len;
	int replies;
};

#define S(conn, lit, n)                                                        \
	{                                                                      \
		(conn), (lit), sizeof(lit) - 1, (n)                            \
	}
#define END                                                                    \
	{                                                                      \
		-1, NULL, 0, 0                                                 \
	}

/* Values that differ by design (docs/beanstalk.md, "What differs"). */
static const char *const masked[] = {
	/* stats */
	"current-jobs-urgent", "pid", "version", "rusage-utime", "rusage-stime",
	"uptime", "binlog-oldest-index", "binlog-current-index",
	"binlog-records-migrated", "binlog-records-written", "binlog-max-size",
	"id", "hostname", "os", "job-timeouts",
	/* stats-job */
	"age", "delay", "time-left", "file", "timeouts", "releases", "buries",
	"kicks",
	/* stats-tube */
	"cmd-pause-tube", "pause", "pause-time-left", NULL
};

/* Fields only sluice's stats have: left out of the comparison. */
static const char *const sluice_only[] = { "sluice-version", NULL };

static bool
is_one_of(const char *const *names, const char *key, size_t len)
{
	for (int i = 0; names[i] != NULL; i++)
		if (strlen(names[i]) == len && memcmp(names[i], key, len) == 0)
			return true;
	return false;
}

static bool
is_masked(const char *key, size_t len)
{
	for (int i = 0; masked[i] != NULL; i++)
		if (strlen(masked[i]) == len &&
		    memcmp(masked[i], key, len) == 0)
			return true;
	return false;
}

/* Replies with their YAML values masked: "OK <n>" loses its count (the
 * masked values change it), each "key: value" line of a masked key
 * becomes "key: *". */
static void
normalize(const struct buf *in, struct buf *out)
{
	const char *p = (const char *)in->data, *end = p + in->len;

	while (p < end) {
		const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
		size_t body = 0;

		if (eol == NULL) {
			buf_put(out, p, (size_t)(end - p));
			return;
		}
		if (strncmp(p, "OK ", 3) != 0) {
			/* a line, and a job body when there is one */
			if (strncmp(p, "RESERVED ", 9) == 0 ||
			    strncmp(p, "FOUND ", 6) == 0) {
				const char *sp = eol;

				while (sp > p && sp[-1] != ' ')
					sp--;
				body = strtoull(sp, NULL, 10) + 2;
			}
			buf_put(out, p, (size_t)(eol - p) + 2 + body);
			p = eol + 2 + body;
			continue;
		}
		body = strtoull(p + 3, NULL, 10);
		buf_put(out, "OK *\r\n", 6);
		p = eol + 2;
		for (const char *q = p; q < p + body;) {
			const char *nl =
			    memchr(q, '\n', (size_t)(p + body - q));
			const char *colon;

			if (nl == NULL)
				nl = p + body;
			colon = memchr(q, ':', (size_t)(nl - q));
			if (colon != NULL &&
			    is_one_of(sluice_only, q, (size_t)(colon - q))) {
				/* dropped */
			} else if (colon != NULL &&
			    is_masked(q, (size_t)(colon - q))) {
				buf_put(out, q, (size_t)(colon - q));
				buf_put(out, ": *\n", 4);
			} else {
				buf_put(out, q, (size_t)(nl - q) + 1);
			}
			q = nl + 1;
		}
		p += body + 2;
	}
}

struct server {
	const char *name;
	int port;
	struct bsc c[CONNS];
	struct buf got[CONNS]; /* normalized replies of this step */
};

static void
run_step(struct server *s, const struct step *st, int ms)
{
	struct buf raw;
	int got;

	buf_init(&raw);
	buf_reset(&s->got[st->conn]);
	if (st->len > 0)
		assert_int_equal(
		    bsc_send(&s->c[st->conn], st->bytes, st->len), 0);
	got = bsc_replies(&s->c[st->conn], st->replies, ms, &raw);
	normalize(&raw, &s->got[st->conn]);
	if (got != st->replies)
		fail_msg("%s: %d of %d replies to %.*s; got:\n%.*s", s->name,
		    got, st->replies, (int)(st->len > 60 ? 60 : st->len),
		    st->bytes, (int)s->got[st->conn].len,
		    (const char *)s->got[st->conn].data);
	buf_fini(&raw);
}

/* The bytes of `b` around `at` (where the two replies part). */
static void
print_bytes(const char *what, const struct buf *b, size_t at)
{
	size_t from = at > 600 ? at - 600 : 0;

	fprintf(stderr, "---- %s (%zu bytes; from byte %zu):\n", what, b->len,
	    from);
	for (size_t i = from; i < b->len && i < at + 600; i++) {
		unsigned char ch = b->data[i];

		if (ch == '\r')
			fputs("\\r", stderr);
		else if (ch == '\n')
			fputs("\\n\n", stderr);
		else if (ch < 32 || ch > 126)
			fprintf(stderr, "\\x%02x", ch);
		else
			fputc(ch, stderr);
	}
	fputc('\n', stderr);
}

/* Runs the script on a fresh beanstalkd and a fresh sluiced, step by
 * step, comparing the replies of each. */
static void
diff(void **state, const struct step *script)
{
	static const char *const sluiced_args[] = { "--max-payload", "65535",
		"--beanstalk", NULL, NULL };
	struct server sv[2] = { { .name = "beanstalkd" },
		{ .name = "sluiced" } };
	char addr[32];
	struct t_srv *s;
	pid_t pid;
	int ms = (int)it_scale(10000, 1, 1) * (it_sanitized() ? 3 : 1);

	sv[0].port = bsc_beanstalkd(NULL, &pid);
	if (sv[0].port == 0)
		skip();
	s = it_srv(*state, "node");
	sv[1].port = t_free_port();
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", sv[1].port);
	for (int i = 0; sluiced_args[i] != NULL || i == 3; i++)
		s->args[i] = i == 3 ? addr : sluiced_args[i];
	it_start(s);
	for (int k = 0; k < 2; k++) {
		struct bsc probe; /* as bsc_beanstalkd's, for the counts */

		if (k == 1) {
			assert_int_equal(bsc_open(&probe, sv[k].port), 0);
			bsc_close(&probe);
		}
		for (int i = 0; i < CONNS; i++) {
			assert_int_equal(bsc_open(&sv[k].c[i], sv[k].port), 0);
			buf_init(&sv[k].got[i]);
		}
	}
	for (const struct step *st = script; st->conn >= 0; st++) {
		for (int k = 0; k < 2; k++)
			run_step(&sv[k], st, ms);
		if (sv[0].got[st->conn].len != sv[1].got[st->conn].len ||
		    (sv[0].got[st->conn].len > 0 &&
		        memcmp(sv[0].got[st->conn].data,
		            sv[1].got[st->conn].data,
		            sv[0].got[st->conn].len) != 0)) {
			fprintf(stderr, "step %d on connection %d: %.*s\n",
			    (int)(st - script), st->conn,
			    (int)(st->len > 200 ? 200 : st->len), st->bytes);
			size_t at = 0;

			while (at < sv[0].got[st->conn].len &&
			    at < sv[1].got[st->conn].len &&
			    sv[0].got[st->conn].data[at] ==
			        sv[1].got[st->conn].data[at])
				at++;
			print_bytes("beanstalkd", &sv[0].got[st->conn], at);
			print_bytes("sluiced", &sv[1].got[st->conn], at);
			fail_msg("the replies differ");
		}
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < CONNS; i++) {
			bsc_close(&sv[k].c[i]);
			buf_fini(&sv[k].got[i]);
		}
	kill(pid, SIGTERM);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
}

/* ---- the scripts --------------------------------------------------------- */

/* put, reserve, delete, peek and the stats of one job's life. */
static void
test_a_job_life_cycle(void **state)
{
	static const struct step script[] = {
		S(0, "put 10 0 60 5\r\nhello\r\n", 1),
		S(0, "peek 1\r\n", 1),
		S(0, "peek-ready\r\n", 1),
		S(0, "stats-job 1\r\n", 1),
		S(0, "stats-tube default\r\n", 1),
		S(0, "reserve\r\n", 1),
		S(0, "stats-job 1\r\n", 1),
		S(0, "peek-ready\r\n", 1),
		S(0, "delete 1\r\n", 1),
		S(0, "delete 1\r\n", 1),
		S(0, "peek 1\r\n", 1),
		S(0, "stats-job 1\r\n", 1),
		S(0, "stats-tube default\r\n", 1),
		S(0, "stats\r\n", 1),
		END,
	};

	diff(state, script);
}

/* Ready jobs of one priority come out by id: a job released at once
 * goes back to its place, ahead of the jobs put after it (a worker that
 * releases what it cannot do yet sees it again first). */
static void
test_a_released_job_keeps_its_place(void **state)
{
	static const struct step script[] = {
		S(0, "put 10 0 60 1\r\na\r\n", 1),
		S(0, "put 10 0 60 1\r\nb\r\n", 1),
		S(0, "put 10 0 60 1\r\nc\r\n", 1),
		S(0, "reserve\r\n", 1),
		S(0, "release 1 10 0\r\n", 1),
		S(0, "reserve\r\n", 1),
		S(0, "reserve\r\n", 1),
		S(0, "release 2 10 0\r\n", 1),
		S(0, "release 1 10 0\r\n", 1),
		S(0, "reserve\r\n", 1),
		S(0, "reserve\r\n", 1),
		S(0, "reserve\r\n", 1),
		END,
	};

	diff(state, script);
}

/* Malformed lines of every kind, each answered and the connection kept. */
static void
test_bad_format_and_unknown_commands(void **state)
{
	static const struct step script[] = {
		S(0, "put\r\n", 1),
		S(0, "put \r\n", 1),
		S(0, "put 1 2 3\r\n", 1),
		S(0, "put a 1 1 1\r\n", 1),
		S(0, "put 1 0 1 1 x\r\n", 1),
		S(0, "put 1 0 1 -1\r\n", 1),
		S(0, "put 4294967296 0 1 1\r\n", 1),
		S(0, "put 1 0 1 2 \r\n", 1),
		S(0, "put 1 0 1 99999999999\r\n", 1),
		S(0, "reserve \r\n", 1),
		S(0, "reservex\r\n", 1),
		S(0, "reserve-job\r\n", 1),
		S(0, "stats \r\n", 1),
		S(0, "stats-job\r\n", 1),
		S(0, "stats-tube\r\n", 1),
		S(0, "stats-tube  default\r\n", 1),
		S(0, "FOO\r\n", 1),
		S(0, "\r\n", 1),
		S(0, "touch\r\n", 1),
		S(0, "kick\r\n", 1),
		S(0, "kick x\r\n", 1),
		S(0, "delete\r\n", 1),
		S(0, "delete x\r\n", 1),
		S(0, "delete 1 \r\n", 1),
		S(0, "delete +1\r\n", 1),
		S(0, "delete -1\r\n", 1),
		S(0, "delete 1x\r\n", 1),
		S(0, "delete  1\r\n", 1),
		S(0, "delete 01\r\n", 1),
		S(0, "delete 18446744073709551615\r\n", 1),
		S(0, "delete 18446744073709551616\r\n", 1),
		S(0, "peek x\r\n", 1),
		S(0, "peek 99999999999999999999\r\n", 1),
		S(0, "peek-ready \r\n", 1),
		S(0, "list-tubes \r\n", 1),
		S(0, "list-tube-usedx\r\n", 1),
		S(0, "release 1 a 1\r\n", 1),
		S(0, "release 1 1\r\n", 1),
		S(0, "release 1 1 1 1\r\n", 1),
		S(0, "bury 1\r\n", 1),
		S(0, "bury 1 1 1\r\n", 1),
		S(0, "touch 1 1\r\n", 1),
		S(0, "kick-job\r\n", 1),
		S(0, "kick-job x\r\n", 1),
		S(0, "pause-tube default\r\n", 1),
		S(0, "pause-tube default x\r\n", 1),
		S(0, "pause-tube default 0 \r\n", 1),
		S(0, "pause-tube default 4294967296\r\n", 1),
		S(0, "use\r\n", 1),
		S(0, "watch\r\n", 1),
		S(0, "ignore\r\n", 1),
		S(0, "use  t\r\n", 1),
		S(0, "use t\tx\r\n", 1),
		S(0, "use a b\r\n", 1),
		S(0, "use -a\r\n", 1),
		S(0, "use a:b\r\n", 1),
		S(0, "use \x01\r\n", 1),
		S(0,
		    "use "
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n",
		    1),
		S(0, "list-tube-used\r\n", 1),
		S(0, "stats\r\n", 1),
		END,
	};

	diff(state, script);
}

/* Framing: a line longer than 224 bytes, a body without its "\r\n", a
 * body over max-job-size (read and thrown away), a line that ends in
 * "\n" only. */
static void
test_bad_framing(void **state)
{
	static char long_line[400], big[65536 + 64];
	static struct step script[] = {
		{ 0, long_line, 0, 1 },
		S(0, "list-tube-used\r\n", 1),
		S(0, "put 0 0 1 2\r\nabX\r\n", 1),
		S(0, "list-tube-used\r\n", 1),
		S(0, "put 1 0 1 5\r\nab\r\n\r\nuse t\r\n", 2),
		{ 0, big, 0, 1 },
		S(0, "list-tube-used\r\n", 1),
		S(0, "stats-tube default\r\n", 1),
		S(0, "list-tubes\r\nlist-tubes-watched\n\r\n", 2),
		S(0, "quit\r\n", 0),
		END,
	};
	size_t n;

	memset(long_line, 'x', 300);
	memcpy(long_line + 300, "\r\n", 2);
	script[0].len = 302;
	n = (size_t)snprintf(big, sizeof(big), "put 1 0 1 65536\r\n");
	memset(big + n, 'y', 65536);
	memcpy(big + n + 65536, "\r\n", 2);
	script[5].len = n + 65538;
	diff(state, script);
}

/* Bodies: empty, binary with CR LF and NUL inside, the largest allowed. */
static void
test_binary_and_large_bodies(void **state)
{
	static char big[65535 + 64];
	static struct step script[] = {
		S(0, "put 0 0 1 0\r\n\r\n", 1),
		S(0, "put 0 0 1 10\r\n\r\n\x00\r\n\xff\r\n\r\n\r\n", 1),
		S(0, "put 0 0 1 4\r\n\r\n\r\n\r\n", 1),
		{ 0, big, 0, 1 },
		S(0, "reserve\r\nreserve\r\nreserve\r\nreserve\r\n", 4),
		S(0, "peek 4\r\nstats-job 4\r\n", 2),
		S(0, "delete 1\r\ndelete 2\r\ndelete 3\r\ndelete 4\r\n", 4),
		END,
	};
	size_t n = (size_t)snprintf(big, sizeof(big), "put 5 0 1 65535\r\n");

	for (size_t i = 0; i < 65535; i++)
		big[n + i] = (char)(i * 7 % 256);
	memcpy(big + n + 65535, "\r\n", 2);
	script[3].len = n + 65537;
	diff(state, script);
}

/* Many commands in one write, answered in order. */
static void
test_pipelined_commands(void **state)
{
	static char burst[64 * 1024];
	static struct step script[] = {
		{ 0, burst, 0, 0 },
		S(0, "stats-tube default\r\n", 1),
		S(1,
		    "reserve\r\ndelete 1\r\nreserve\r\nrelease 2 7 0\r\n"
		    "reserve-with-timeout 0\r\nbury 2 9\r\npeek-buried\r\n"
		    "kick 10\r\nstats-job 2\r\n",
		    9),
		END,
	};
	size_t n = 0;

	for (int i = 0; i < 200; i++)
		n += (size_t)snprintf(burst + n, sizeof(burst) - n,
		    "put %d 0 30 3\r\n%03d\r\nuse t%d\r\nuse default\r\n"
		    "peek-ready\r\n",
		    1000 - i, i, i % 5);
	script[0].len = n;
	script[0].replies = 200 * 4;
	diff(state, script);
}

/* use, watch, ignore, list-*, tube names with beanstalk-only characters,
 * pause-tube. */
static void
test_tubes(void **state)
{
	static const struct step script[] = {
		S(0, "list-tubes\r\n", 1),
		S(0, "use a+b;c$d(e)\r\n", 1),
		S(0, "put 1 0 1 1\r\nx\r\n", 1),
		S(0, "list-tubes\r\n", 1),
		S(0, "list-tube-used\r\n", 1),
		S(0, "stats-tube a+b;c$d(e)\r\n", 1),
		S(0, "watch a+b;c$d(e)\r\nwatch a+b;c$d(e)\r\nwatch _x.y/z\r\n",
		    3),
		S(0, "list-tubes-watched\r\n", 1),
		S(0, "ignore nope\r\nignore default\r\nignore _x.y/z\r\n", 3),
		S(0, "ignore a+b;c$d(e)\r\n", 1),
		S(0, "reserve-with-timeout 0\r\n", 1),
		S(0, "release 1 5 0\r\n", 1),
		S(1, "stats-tube a+b;c$d(e)\r\nstats-tube nope\r\n", 2),
		S(1, "pause-tube nope 1\r\n", 1),
		S(1, "pause-tube a+b;c$d(e) 0\r\n", 1),
		S(1, "use other\r\nput 1 0 1 1\r\ny\r\n", 2),
		S(1, "pause-tube other 100\r\n", 1),
		S(2,
		    "watch other\r\nignore default\r\nreserve-with-timeout "
		    "0\r\n",
		    3),
		S(1, "stats-tube other\r\n", 1),
		S(1, "pause-tube other 0\r\n", 1),
		S(2, "reserve-with-timeout 0\r\n", 1),
		S(1, "list-tubes\r\n", 1),
		S(2,
		    "watch w1\r\nwatch w2\r\nwatch w3\r\nwatch w4\r\n"
		    "watch w5\r\nwatch w6\r\nignore w3\r\n"
		    "list-tubes-watched\r\n",
		    8),
		S(1, "use w6\r\nput 9 0 5 2\r\nw6\r\n", 2),
		/* (list-tubes would differ here: w6 gets jobs after w1) */
		S(2, "reserve-with-timeout 2\r\n", 1),
		END,
	};

	diff(state, script);
}

/* release, bury, touch, kick, kick-job, the peeks, reserve-job, and what
 * another connection may not do to a job it does not hold. */
static void
test_worker_commands(void **state)
{
	static const struct step script[] = {
		S(0, "put 5 0 60 1\r\na\r\nput 5 0 60 1\r\nb\r\n", 2),
		S(0, "put 5 100 60 1\r\nc\r\nput 1 200 60 1\r\nd\r\n", 2),
		S(0, "peek-delayed\r\nstats-job 3\r\n", 2),
		S(0, "reserve\r\n", 1),
		S(1, "delete 1\r\nrelease 1 1 0\r\nbury 1 1\r\ntouch 1\r\n", 4),
		S(1, "reserve-job 1\r\nkick-job 1\r\npeek 1\r\n", 3),
		S(0, "touch 1\r\nbury 1 77\r\nstats-job 1\r\npeek-buried\r\n",
		    4),
		S(0, "bury 1 1\r\nrelease 1 1 0\r\ntouch 1\r\n", 3),
		S(0, "kick 10\r\npeek-buried\r\nkick 1\r\npeek-delayed\r\n", 4),
		S(0, "kick-job 4\r\nkick-job 4\r\nkick-job 99\r\n", 3),
		S(0, "reserve-job 3\r\nreserve-job 3\r\nstats-job 3\r\n", 3),
		S(1, "reserve-job 3\r\ndelete 3\r\n", 2),
		S(0, "release 3 9 100\r\nstats-job 3\r\npeek-delayed\r\n", 3),
		S(0, "reserve-job 3\r\nbury 3 3\r\nreserve-job 3\r\n", 3),
		S(0, "delete 3\r\ndelete 2\r\nreserve-job 99\r\n", 3),
		S(0, "reserve\r\nreserve\r\nreserve-with-timeout 0\r\n", 3),
		S(0, "stats\r\n", 1),
		END,
	};

	diff(state, script);
}

/* Reserves that wait: answered by a put on another connection, or timed
 * out; DEADLINE_SOON at once for a job whose ttr is 1 s; a job held by a
 * connection that quits is ready for the others. */
static void
test_blocking_reserves(void **state)
{
	static const struct step script[] = {
		S(0, "reserve\r\n", 0),
		S(1, "put 3 0 60 2\r\nhi\r\n", 1),
		{ 0, "", 0, 1 },
		S(1, "reserve-with-timeout 1\r\n", 1),
		S(1, "put 3 0 1 2\r\nyo\r\nreserve\r\n", 2),
		S(1, "reserve\r\n", 1),
		S(1, "touch 2\r\nreserve-with-timeout 0\r\n", 2),
		S(1, "release 2 3 0\r\n", 1),
		S(2, "reserve-with-timeout 5\r\n", 1),
		S(2, "stats-job 2\r\nlist-tube-used\r\nquit\r\n", 2),
		S(1, "reserve-with-timeout 5\r\n", 1),
		S(1, "delete 2\r\ndelete 1\r\n", 1),
		S(1, "stats\r\n", 1),
		END,
	};

	diff(state, script);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_a_job_life_cycle),
		T(test_a_released_job_keeps_its_place),
		T(test_bad_format_and_unknown_commands),
		T(test_bad_framing),
		T(test_binary_and_large_bodies),
		T(test_pipelined_commands),
		T(test_tubes),
		T(test_worker_commands),
		T(test_blocking_reserves),
	};
#undef T
	return cmocka_run_group_tests_name("bsdiff", tests, NULL, NULL);
}
