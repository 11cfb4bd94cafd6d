/* Many connections ready in the same turn on the core thread's faces
 * (face/conn.c): the requests one epoll_wait finds on many connections
 * are read together, each into its slice of the shared read buffer, and
 * the replies of a turn to many connections leave together through one
 * io_uring_enter (face/conn_ring.c, face/conn_flush.c). The server is
 * stopped (SIGSTOP) while the beanstalk connections send, so every one is
 * ready in the same turn when it goes on (SIGCONT). Jobs larger than a
 * slice come in whole; commands pipelined on each connection are answered
 * in order on that connection; every job's body comes back byte for
 * byte. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bsc.h"
#include "it.h"

enum {
	CONNS = 14,     /* more than two: the shared buffer in 14 slices */
	BIG = 30000,    /* above a slice (256 KiB / 14 = 18,724 bytes) */
	PIPELINED = 25, /* puts each connection sends at once */
};

/* n bytes of a pattern that differs per `seed` and shows a cut or a
 * shift, NUL-ended. */
static char *
body(size_t n, unsigned seed)
{
	char *p = malloc(n + 1);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++)
		p[i] = (char)('a' + (i * 7 + seed * 3 + i / 4096) % 26);
	p[n] = '\0';
	return p;
}

static uint64_t
inserted(const char *reply)
{
	uint64_t id = 0;

	if (sscanf(reply, "INSERTED %" SCNu64, &id) != 1)
		fail_msg("not INSERTED: %.80s", reply);
	return id;
}

/* The job `id` reads back as `b`. */
static void
peek_is(struct bsc *c, uint64_t id, const char *b)
{
	char cmd[64], *got, *want;
	size_t n = strlen(b);

	snprintf(cmd, sizeof(cmd), "peek %" PRIu64 "\r\n", id);
	got = bsc_cmd(c, cmd);
	want = malloc(n + 64);
	assert_non_null(want);
	snprintf(want, 64, "FOUND %" PRIu64 " %zu\r\n", id, n);
	strcat(want, b);
	strcat(want, "\r\n");
	assert_string_equal(got, want);
	free(want);
	free(got);
}

static void
test_large_jobs_from_many_connections_in_one_turn(void **state)
{
	struct bsc_node f;
	struct bsc c[CONNS];
	char *b[CONNS], *cmd, *got;
	uint64_t id[CONNS];

	bsc_node_up(state, &f);
	for (int i = 0; i < CONNS; i++)
		assert_int_equal(bsc_open(&c[i], f.port), 0);
	free(bsc_cmd(&c[0], "list-tubes\r\n")); /* every one accepted */
	assert_int_equal(kill(f.s->pid, SIGSTOP), 0);
	for (int i = 0; i < CONNS; i++) {
		size_t n = BIG + 101 * (size_t)i;
		int h;

		b[i] = body(n, (unsigned)i);
		cmd = malloc(n + 64);
		assert_non_null(cmd);
		h = snprintf(cmd, 64, "put 0 0 60 %zu\r\n", n);
		memcpy(cmd + h, b[i], n);
		memcpy(cmd + h + n, "\r\n", 2);
		assert_int_equal(bsc_send(&c[i], cmd, (size_t)h + n + 2), 0);
		free(cmd);
	}
	assert_int_equal(kill(f.s->pid, SIGCONT), 0);
	for (int i = 0; i < CONNS; i++) {
		got = bsc_reply(&c[i]);
		id[i] = inserted(got);
		free(got);
	}
	for (int i = 0; i < CONNS; i++) {
		peek_is(&c[(i + 1) % CONNS], id[i], b[i]);
		free(b[i]);
	}
	for (int i = 0; i < CONNS; i++)
		bsc_close(&c[i]);
	bsc_node_down(&f);
}

static void
test_pipelined_commands_answered_in_order_on_each_connection(void **state)
{
	struct bsc_node f;
	struct bsc c[CONNS];
	static uint64_t id[CONNS][PIPELINED];
	char job[64], line[128];
	struct buf out;

	bsc_node_up(state, &f);
	for (int i = 0; i < CONNS; i++)
		assert_int_equal(bsc_open(&c[i], f.port), 0);
	free(bsc_cmd(&c[0], "list-tubes\r\n"));
	assert_int_equal(kill(f.s->pid, SIGSTOP), 0);
	for (int i = 0; i < CONNS; i++) {
		buf_init(&out);
		for (int j = 0; j < PIPELINED; j++) {
			int jl =
			    snprintf(job, sizeof(job), "conn %d job %d", i, j);

			snprintf(line, sizeof(line), "put 0 0 60 %d\r\n%s\r\n",
			    jl, job);
			buf_put(&out, line, strlen(line));
		}
		assert_int_equal(bsc_send(&c[i], out.data, out.len), 0);
		buf_fini(&out);
	}
	assert_int_equal(kill(f.s->pid, SIGCONT), 0);
	for (int i = 0; i < CONNS; i++) {
		for (int j = 0; j < PIPELINED; j++) {
			char *got = bsc_reply(&c[i]);

			id[i][j] = inserted(got);
			free(got);
			if (j > 0)
				assert_true(id[i][j] > id[i][j - 1]);
		}
	}
	for (int i = 0; i < CONNS; i++) {
		for (int j = 0; j < PIPELINED; j += 6) {
			snprintf(job, sizeof(job), "conn %d job %d", i, j);
			peek_is(&c[0], id[i][j], job);
		}
	}
	for (int i = 0; i < CONNS; i++)
		bsc_close(&c[i]);
	bsc_node_down(&f);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_large_jobs_from_many_connections_in_one_turn),
		T(test_pipelined_commands_answered_in_order_on_each_connection),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
