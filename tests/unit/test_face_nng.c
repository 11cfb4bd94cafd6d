/* The nng face (face/nng.c) over the event queue (face/events.c):
 * requests from many clients arrive as events
 * tagged with their session, answers reach the client that asked, parked
 * requests never starve new ones, and sessions report their end. */
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>

#include "server/face/events.h"
#include "server/face/face.h"
#include "server/face/nng.h"
#include "t_lib.h"
#include "util/nngclose.h"

enum { CLIENTS = 150, WAIT_MS = 5000 };

/* Waits for events, up to `want` of kind `kind` or WAIT_MS, appending
 * EVENT_REQUEST events to `reqs`. Returns how many of `kind` arrived. */
static int
collect(struct events *n, enum event_kind kind, int want, struct event **reqs,
    int *nreq)
{
	int got = 0;

	for (int spins = 0; got < want && spins < WAIT_MS / 10; spins++) {
		struct pollfd pfd = { .fd = events_fd(n), .events = POLLIN };
		struct event *ev, *next;

		poll(&pfd, 1, 10);
		for (ev = events_drain(n); ev != NULL; ev = next) {
			next = ev->next;
			if (ev->kind == kind)
				got++;
			if (ev->kind == EVENT_REQUEST && reqs != NULL)
				reqs[(*nreq)++] = ev;
			else
				event_done(ev);
		}
	}
	return got;
}

/* 150 clients each send a request; the server holds all of them at once
 * (more than the initial pool), then answers each with its own body. */
static void
test_parked_requests_grow_the_pool_and_answers_find_their_client(void **state)
{
	static struct event *reqs[CLIENTS];
	static nng_socket cli[CLIENTS];
	static nng_aio *aio[CLIENTS];
	char url[300];
	struct events *n;
	struct face_nng *f;
	size_t total, idle;
	int nreq = 0;

	snprintf(url, sizeof(url), "ipc://%s", t_path(*state, "sock"));
	assert_int_equal(events_new(&n), 0);
	assert_int_equal(face_nng_open(&f, n, url, 1 << 20, NULL), 0);
	for (int i = 0; i < CLIENTS; i++) {
		char body[32];
		nng_msg *m;

		assert_int_equal(nng_req0_open(&cli[i]), 0);
		assert_int_equal(nng_dial(cli[i], url, NULL, 0), 0);
		assert_int_equal(nng_aio_alloc(&aio[i], NULL, NULL), 0);
		nng_aio_set_timeout(aio[i], WAIT_MS);
		snprintf(body, sizeof(body), "req-%d", i);
		assert_int_equal(nng_msg_alloc(&m, 0), 0);
		assert_int_equal(nng_msg_append(m, body, strlen(body) + 1), 0);
		nng_aio_set_msg(aio[i], m);
		nng_send_aio(cli[i], aio[i]);
	}
	assert_int_equal(
	    collect(n, EVENT_REQUEST, CLIENTS, reqs, &nreq), CLIENTS);
	face_nng_counts(f, &total, &idle);
	assert_true(total >= CLIENTS);

	/* Answer in reverse order, echoing the request body. */
	for (int i = nreq - 1; i >= 0; i--) {
		nng_msg *m;

		assert_true(reqs[i]->session != 0);
		assert_int_equal(nng_msg_alloc(&m, 0), 0);
		assert_int_equal(nng_msg_append(m, nng_msg_body(reqs[i]->msg),
		                     nng_msg_len(reqs[i]->msg)),
		    0);
		face_ctx_reply(reqs[i]->ctx, m);
		event_done(reqs[i]);
	}
	for (int i = 0; i < CLIENTS; i++) {
		char want[32];
		nng_msg *m;

		nng_aio_wait(aio[i]);
		assert_int_equal(nng_aio_result(aio[i]), 0);
		nng_recv_aio(cli[i], aio[i]);
		nng_aio_wait(aio[i]);
		assert_int_equal(nng_aio_result(aio[i]), 0);
		m = nng_aio_get_msg(aio[i]);
		snprintf(want, sizeof(want), "req-%d", i);
		assert_string_equal((char *)nng_msg_body(m), want);
		nng_msg_free(m);
	}
	for (int i = 0; i < CLIENTS; i++) {
		nng_aio_free(aio[i]);
		nng_close(cli[i]);
	}
	face_nng_stop(f);
	events_free(n);
	face_nng_free(f);
}

/* A client that connects and goes away yields one open and one close
 * event with the same session id, and a request it left unanswered can be
 * dropped. */
static void
test_sessions_report_open_and_close(void **state)
{
	struct event *reqs[4];
	char url[300];
	struct events *n;
	struct face_nng *f;
	nng_socket s;
	uint32_t session;
	int nreq = 0;

	snprintf(url, sizeof(url), "ipc://%s", t_path(*state, "sock"));
	assert_int_equal(events_new(&n), 0);
	assert_int_equal(face_nng_open(&f, n, url, 1 << 20, NULL), 0);
	assert_int_equal(nng_req0_open(&s), 0);
	assert_int_equal(nng_dial(s, url, NULL, 0), 0);
	assert_int_equal(nng_send(s, "x", 1, 0), 0);
	assert_int_equal(collect(n, EVENT_REQUEST, 1, reqs, &nreq), 1);
	session = reqs[0]->session;
	nng_close(s);
	assert_int_equal(collect(n, EVENT_SESSION_CLOSE, 1, NULL, NULL), 1);
	face_ctx_drop(reqs[0]->ctx);
	event_done(reqs[0]);
	assert_true(session != 0);
	face_nng_stop(f);
	events_free(n);
	face_nng_free(f);
}

/* Holds a closing socket up for HOLD_MS, as nng 1.5.2's hang holds it up
 * for good: the pipe's removal runs this before nng_close can return. */
enum { HOLD_MS = 1500 };

static void
hold_the_close(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	(void)p;
	(void)ev;
	(void)arg;
	usleep(HOLD_MS * 1000);
}

static void
note_closed(void *arg)
{
	atomic_store((atomic_bool *)arg, true);
}

/* A close that does not return stops being waited for at the bound (the
 * close sluiced, its follower link and libsluice's sluice_close use), and
 * what it still needs is released once it does return; a close that
 * returns in time says so. */
static void
test_a_hung_close_is_waited_for_no_longer_than_its_bound(void **state)
{
	static atomic_bool closed; /* outlives the test if the close does */
	nng_socket rep, req;
	char url[300];

	snprintf(url, sizeof(url), "ipc://%s", t_path(*state, "sock"));
	assert_int_equal(nng_rep0_open(&rep), 0);
	assert_int_equal(nng_listen(rep, url, NULL, 0), 0);
	assert_int_equal(nng_req0_open(&req), 0);
	assert_int_equal(
	    nng_pipe_notify(req, NNG_PIPE_EV_REM_POST, hold_the_close, NULL),
	    0);
	assert_int_equal(nng_dial(req, url, NULL, 0), 0);

	assert_false(nngclose_within(req, 100, note_closed, &closed));
	assert_false(atomic_load(&closed));
	for (int i = 0; i < 500 && !atomic_load(&closed); i++)
		usleep(10 * 1000);
	assert_true(atomic_load(&closed));

	assert_true(nngclose_within(rep, 3000, NULL, NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_parked_requests_grow_the_pool_and_answers_find_their_client,
		    t_tmpdir_setup, t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_sessions_report_open_and_close, t_tmpdir_setup,
		    t_tmpdir_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_hung_close_is_waited_for_no_longer_than_its_bound,
		    t_tmpdir_setup, t_tmpdir_teardown),
	};
	return cmocka_run_group_tests_name("net", tests, NULL, NULL);
}
