/* srv - sluiced's start-up, its core event loop, and its shutdown.
 *
 * Start-up: lock the data directory; rebuild the queue from the newest
 * snapshot plus the log after it (recover.c, with the same queue_apply the
 * live server uses); open the writer where the valid log ends; release
 * every session lease (those sessions died with the previous process);
 * listen.
 *
 * The server's layers, top down, a folder each (docs/architecture.md
 * draws them; tests/layout.py checks that each includes only those below
 * it): this file, the loop, which calls every other; ops/, one handler
 * per request; failover/, the election through etcd; repl/, the leader's
 * and the follower's sides of replication; core/, commit, replies held
 * until durable, sessions, snapshots; face/, the faces that receive
 * requests and carry replies (face/sp.c and face/beanstalk/ over
 * face/conn.c on this thread; face/stream*.c, face/nng.c and face/http/
 * on nng's threads), and the event queue between them and the core.
 *
 * One turn of the loop, on the one thread that owns the queue and the
 * writer:
 *   1. poll: the core's own sockets, nng's events, writer completions, a
 *      signal, the snapshot child, or the next timer (a delayed task, a
 *      lease deadline, a pause end, a waiting take's deadline) — never a
 *      busy wait;
 *   2. replies the durable LSN now covers are sent (pending FIFO);
 *   3. the core's sockets are read (conns_run): each face cuts requests
 *      and posts them here, with no lock and no wake-up;
 *   4. every request is handled: decide, append, apply, encode the
 *      reply and queue it with the LSN it depends on;
 *   5. timers: time-driven changes, expired leases (logged records);
 *   6. waiting takes are served in arrival order, on the tubes a task
 *      came to since the last turn (ops/wait.c, core/waiters.c);
 *   7. the writer commits the batch this turn filled, on this thread:
 *      one write and one fdatasync for every request of the turn (group
 *      commit); the replies it covers are queued on their connections,
 *      and conns_flush writes each connection's with one send. Under
 *      `always`, with nothing in flight, the commit may wait a few turns
 *      for the writers the last one answered (core/cohort.h).
 *
 * Shutdown (SIGTERM, SIGINT): stop reading requests, answer waiting takes
 * with nothing, end the session leases as a disconnect would ("server
 * stopped (lease of PEER)", docs/queue.md), sync the log, send every
 * reply it now covers, close. SIGUSR1 (beanstalkd's drain mode): puts are
 * refused from then on, and everything else goes on until the stop. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "log/recover.h"
#include "log/snap.h"
#include "server/core/bgsnap.h"
#include "server/core/core.h"
#include "server/face/beanstalk/beanstalk.h"
#include "server/face/conn.h"
#include "server/face/http/http.h"
#include "server/face/nng.h"
#include "server/face/stream.h"
#include "server/failover/cluster.h"
#include "server/failover/cmap_node.h"
#include "server/ops/ops.h"
#include "server/repl/follow.h"
#include "server/repl/lead.h"
#include "server/srv.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/fsutil.h"
#include "util/log.h"

enum {
	SHUTDOWN_SYNC_MS = 30000,
	TAKE_SYNC_WAIT_MS = 2, /* the longest takes wait for company */
};

/* The HTTP face with the settings of its flags. */
static int
open_http(struct core *c, const struct config *cfg)
{
	struct http_conf hc = {
		.addr = cfg->http,
		.admin = cfg->http_admin,
		.tls = cfg->tls_cert != NULL ? cfg->tls : NULL,
		.auth = cfg->auth_file != NULL,
		.payload_max = cfg->max_payload,
		.body_timeout_ms = cfg->http_body_timeout_ms,
		.header_timeout_ms = cfg->http_header_timeout_ms,
		.idle_timeout_ms = cfg->http_idle_timeout_ms,
		.max_conns = cfg->http_max_conns,
		.nhosts = cfg->http_nhosts,
	};

	_Static_assert(
	    (int)CONFIG_HTTP_HOSTS_MAX == (int)HTTP_HOSTS_MAX, "--http-host");
	for (size_t i = 0; i < cfg->http_nhosts; i++)
		hc.hosts[i] = cfg->http_hosts[i];
	return http_open(&c->http, &hc);
}

/* The turn's clock: wall time that never goes back, so records' times
 * never decrease even when the system clock is stepped. */
static void
core_tick_clock(struct core *c)
{
	int64_t now = clock_now_ms();

	if (now > c->now)
		c->now = now;
}

/* Time-driven work: catch up, then log every expired lease. */
static void
run_timers(struct core *c)
{
	struct qrec r;
	uint64_t lsn;
	int rc;

	queue_tick(c->q, c->now);
	if (c->follower || c->fenced || c->handing)
		return; /* expiries come as the leader's records; a fenced
		         * leader writes nothing more, nor one handing over */
	ops_sched_run(c);
	ops_batch_run(c);
	for (int i = 0; i < 100000; i++) {
		rc = queue_decide_expired(c->q, c->now, &r);
		if (rc != 0)
			break;
		rc = core_commit(c, &r, 0, &lsn);
		if (rc != 0) {
			log_warn("srv", "cannot log a ttr expiry error=\"%s\"",
			    sluice_strerror(rc));
			break;
		}
	}
}

static void
handle_events(struct core *c)
{
	struct event *ev, *next;

	for (ev = events_drain(c->events); ev != NULL; ev = next) {
		next = ev->next;
		switch (ev->kind) {
		case EVENT_REQUEST: {
			struct event_req q = event_take(ev);

			if (c->stopping)
				core_reply_err_as(c, q.ctx,
				    &(struct core_reply_how) { 0 },
				    msg_req_op(nng_msg_body(q.msg),
				        nng_msg_len(q.msg)),
				    SLUICE_ESHUTDOWN, NULL);
			else
				ops_handle(c, q.ctx, q.session, q.msg);
			nng_msg_free(q.msg);
			continue;
		}
		case EVENT_SESSION_OPEN:
			c->sessions++;
			core_session_open(c, ev->session, ev->peer);
			break;
		case EVENT_SESSION_CLOSE:
			if (c->sessions > 0)
				c->sessions--;
			ops_drop_waiters(c, ev->session);
			core_session_gone(c, ev->session);
			break;
		case EVENT_WAKE: /* a waiting take lost its client: this
		                  * turn's ops_serve_waiters drops it */
			c->waits_check = true;
			break;
		}
		event_done(ev);
	}
}

/* Whether the log is full: new work refused, or spares the disk has no
 * room for; and after that, until a snapshot for room is no longer due
 * (bgsnap_due_for_room), so that the room of a drain comes back even when
 * the reserve it freed ended the refusal first. */
static void
full_turn(struct core *c)
{
	if (c->follower)
		c->full.on = false;
	else if (wal_refusing(c->wal) || wal_space_short(c->wal))
		c->full.on = true;
	else if (c->full.on && !bgsnap_due_for_room(c, false))
		c->full.on = false;
}

/* How long poll may sleep: until the next timer, at most a second. */
static int
poll_timeout(struct core *c)
{
	int64_t wake = queue_next_wake(c->q);
	int64_t dl = ops_next_deadline(c);
	int64_t ms = 1000;

	if (ops_sched_next_wake(c) < wake)
		wake = ops_sched_next_wake(c);
	if (ops_batch_next_wake(c) < wake)
		wake = ops_batch_next_wake(c);

	if (lead_next_deadline(c) < dl)
		dl = lead_next_deadline(c);
	if (follow_next_deadline(c) < dl)
		dl = follow_next_deadline(c);
	if (cluster_next_deadline(c) < dl)
		dl = cluster_next_deadline(c);
	if (c->pend_head != NULL && c->cfg->sync_replicas > 0 &&
	    c->pend_head->at + (int64_t)c->cfg->sync_timeout_ms < dl)
		dl = c->pend_head->at + (int64_t)c->cfg->sync_timeout_ms;
	if (c->takes_since != 0 && c->takes_since + TAKE_SYNC_WAIT_MS < dl)
		dl = c->takes_since + TAKE_SYNC_WAIT_MS;
	if (conns_next_ms(c->conns) < dl)
		dl = conns_next_ms(c->conns);

	if (wake != INT64_MAX) {
		int64_t d = wake - clock_now_ms();

		if (d < ms)
			ms = d;
	}
	if (dl != INT64_MAX) {
		int64_t d = dl - clock_mono_ms();

		if (d < ms)
			ms = d;
	}
	return ms < 0 ? 0 : (int)ms;
}

/* Whether the log's commit may wait this turn: all it holds that is not
 * durable yet are takes, whose replies went out already (a take's reply
 * waits for what its tubes depend on only, at most hard_lsn: core.h), and no
 * reply waits for them. A worker's ack usually comes within the next
 * milliseconds: the take then shares its fdatasync instead of costing one of
 * its own, which would delay that ack by a whole fdatasync. They wait
 * TAKE_SYNC_WAIT_MS at the most. A crash meanwhile loses takes only
 * (at-least-once: the tasks are ready again, the attempts uncounted). */
static bool
commit_may_wait(struct core *c)
{
	int64_t mono = clock_mono_ms();

	if (c->follower || c->pend_head != NULL ||
	    wal_durable_lsn(c->wal) < c->hard_lsn ||
	    wal_last_lsn(c->wal) == wal_durable_lsn(c->wal)) {
		c->takes_since = 0;
		return false;
	}
	if (c->takes_since == 0)
		c->takes_since = mono;
	return mono - c->takes_since < TAKE_SYNC_WAIT_MS;
}

static void
handle_signal(struct core *c)
{
	struct signalfd_siginfo si;

	/* Logged once, at the end of the stop (srv_run). */
	while (read(c->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			ops_auth_reload(c);
			continue;
		}
		if (si.ssi_signo == SIGUSR1) {
			if (!c->draining)
				log_info("srv",
				    "SIGUSR1: draining: puts are refused until "
				    "the stop; takes, acks and reads go on");
			c->draining = true;
			continue;
		}
		if (!c->stopping)
			c->stop_signo = (int)si.ssi_signo;
		c->stopping = true;
	}
}

/* The HTTP face's turn: what /health reports (the face never waits for
 * the core), published before the replies of a turn and at its end. */
static void
publish_health(struct core *c)
{
	struct http_health h = {
		.log_failed = wal_poisoned(c->wal),
		.follower = c->follower,
		.leader_lost = c->follower && !follow_connected(c),
		.fenced = c->fenced,
		.no_lease = c->fenced && c->fenced_by == 0,
		.log_full = !c->follower && wal_refusing(c->wal),
	};

	http_turn(c->http, &h);
}

/* nng's socket (abstract://, wss://; the other URLs are faces'), once
 * a second: a pipe over its unread replies' marks too long is closed
 * (face_nng_check_stalled); and under --auth one whose session has not
 * authenticated within --handshake-timeout, and, past --max-unauth-conns
 * of those, the oldest (the other faces do all three themselves). */
struct unauthed {
	struct core *c;
	struct unauthed_pipe {
		int64_t opened_ms;
		uint32_t id;
	} * v;
	size_t n, cap;
};

static void
note_unauthed(struct sess *s, void *arg)
{
	struct unauthed *u = arg;
	struct core *c = u->c;

	if (s->authed || s->id >= 1u << 31)
		return;
	if (clock_mono_ms() - s->opened_ms >= (int64_t)c->cfg->handshake_ms &&
	    c->cfg->handshake_ms != 0) {
		if (face_nng_close_pipe(c->nng, s->id)) {
			c->pipes_closed_handshake++;
			log_debug("net",
			    "closed a connection: not authenticated within "
			    "the handshake timeout session=%u peer=%s",
			    s->id, s->peer);
		}
		return;
	}
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 64;
		struct unauthed_pipe *v = realloc(u->v, cap * sizeof(*v));

		if (v == NULL)
			return; /* the cap waits for the next check */
		u->v = v;
		u->cap = cap;
	}
	u->v[u->n++] = (struct unauthed_pipe) { s->opened_ms, s->id };
}

static int
cmp_opened(const void *a, const void *b)
{
	const struct unauthed_pipe *x = a, *y = b;

	return x->opened_ms < y->opened_ms ? -1 : x->opened_ms > y->opened_ms;
}

static void
check_pipes(struct core *c, int64_t now)
{
	struct unauthed u = { .c = c };

	if (now < c->pipes_check_ms || face_sp_serves(c->cfg->listen) ||
	    c->fstream != NULL)
		return;
	c->pipes_check_ms = now + 1000;
	face_nng_check_stalled(c->nng, now);
	if (!c->auth_on)
		return;
	sess_each(&c->sess, note_unauthed, &u);
	if (c->cfg->max_unauth_conns != 0 && u.n > c->cfg->max_unauth_conns) {
		qsort(u.v, u.n, sizeof(*u.v), cmp_opened);
		for (size_t i = 0; i < u.n - c->cfg->max_unauth_conns; i++)
			if (face_nng_close_pipe(c->nng, u.v[i].id))
				c->pipes_evicted++;
	}
	free(u.v);
}

/* The replies of writes that wait for the log (takes' and reads' left
 * out: they leave before their own records are durable). */
static uint32_t
waiting_writes(const struct core *c)
{
	return c->pend_n - c->pend_loose;
}

/* Whether the log's commit waits this turn for the writers the last one
 * answered (core/cohort.h): only a leader's, under `always`, while
 * nothing is in flight. */
static bool
commit_holds(struct core *c)
{
	if (c->follower || c->cfg->fsync != WAL_FSYNC_ALWAYS ||
	    wal_busy(c->wal))
		return false;
	return cohort_hold(&c->cohort, waiting_writes(c), clock_mono_ns(),
	    wal_commit_ns(c->wal));
}

/* poll's timeout as ppoll's: `ms`, or less while a commit is held for
 * its cohort. */
static struct timespec
wait_for(struct core *c, int ms)
{
	int64_t ns = (int64_t)ms * 1000000, now = clock_mono_ns();
	int64_t until = cohort_deadline_ns(&c->cohort, wal_commit_ns(c->wal));

	/* one reading of the clock: a second one could pass `until` and
	 * make the time negative, which ppoll refuses (EINVAL) */
	if (until != 0 && until - now < ns)
		ns = until > now ? until - now : 0;
	return (struct timespec) { .tv_sec = ns / 1000000000,
		.tv_nsec = ns % 1000000000 };
}

static int
loop(struct core *c)
{
	bool failed_logged = false;

	while (!c->stopping) {
		struct pollfd pfd[11] = {
			{ .fd = events_fd(c->events), .events = POLLIN },
			{ .fd = wal_fd(c->wal), .events = POLLIN },
			{ .fd = c->sigfd, .events = POLLIN },
			{ .fd = c->snap.fd, .events = POLLIN },
			{ .fd = lead_fd(c), .events = POLLIN },
			{ .fd = follow_fd(c), .events = POLLIN },
			{ .fd = lead_io_fd(c), .events = POLLIN },
			{ .fd = conns_fd(c->conns), .events = POLLIN },
			{ .fd = cluster_fd(c), .events = POLLIN },
			{ .fd = cmap_node_fd(c), .events = POLLIN },
			{ .fd = wal_wake_fd(c->wal), .events = POLLIN },
		};
		struct timespec wait = wait_for(
		    c, events_has_local(c->events) ? 0 : poll_timeout(c));
		uint64_t durable = wal_durable_lsn(c->wal);
		uint32_t writes = waiting_writes(c);
		bool may_wait, held;

		if (ppoll(pfd, 11, &wait, NULL) < 0 && errno != EINTR) {
			log_err(
			    "srv", "poll failed error=\"%s\"", strerror(errno));
			return 1;
		}
		core_tick_clock(c);
		c->applied = false;
		if (pfd[2].revents)
			handle_signal(c);
		/* no read of the faces' eventfd when the poll saw nothing;
		 * the log's completions are seen on the ring's own
		 * descriptor, which needs no read at all */
		events_polled(c->events, pfd[0].revents != 0);
		if (pfd[1].revents || pfd[10].revents)
			wal_reap(c->wal);
		publish_health(c); /* before the replies that tell of it */
		lead_handle(c);
		core_flush_replies(c);
		if (wal_durable_lsn(c->wal) != durable)
			cohort_answered(&c->cohort,
			    writes > waiting_writes(c)
			        ? writes - waiting_writes(c)
			        : 0);
		/* what the commit answered leaves before anything else of
		 * the turn; the durable mark is written after it (wal_mark) */
		conns_flush(c->conns);
		if (pfd[3].revents)
			bgsnap_reap(c);
		follow_turn(c, clock_mono_ms());
		cluster_turn(c);
		cmap_node_turn(c);
		if (pfd[7].revents)
			conns_run(c->conns);
		conns_tick(c->conns, clock_mono_ms());
		face_stream_tick(c->fstream, clock_mono_ms());
		check_pipes(c, clock_mono_ms());
		handle_events(c);
		if ((c->follower || c->fenced || c->handing) && c->waits.n > 0)
			ops_end_waiters(c); /* only a leader hands tasks out */
		run_timers(c);
		ops_serve_waiters(c, clock_mono_ms());
		core_update_reservation(c);
		full_turn(c);
		/* what is answered already leaves before the log's commit,
		 * which blocks this thread for an fdatasync (inline commit):
		 * a reserve that needs nothing of it is not held back */
		conns_flush(c->conns);
		may_wait = commit_may_wait(c);
		held = !may_wait && commit_holds(c);
		if (!held)
			cohort_cancel(&c->cohort); /* no hold left to time */
		if (!may_wait && !held) {
			c->takes_since = 0;
			if (!wal_busy(c->wal) &&
			    wal_last_lsn(c->wal) > wal_durable_lsn(c->wal))
				cohort_submitted(&c->cohort);
			wal_submit(c->wal);
			core_flush_replies(c); /* durable already, inline */
			follow_turn(c, clock_mono_ms()); /* a follower acks
			                                  * it at once */
		}
		conns_flush(c->conns);
		wal_mark(c->wal);
		lead_serve(c, clock_mono_ms());
		if (c->snap.waiting)
			bgsnap_launch(c);
		else if (bgsnap_due(c) || bgsnap_due_for_room(c, true))
			bgsnap_start(c);
		publish_health(c);
		if (wal_poisoned(c->wal) && !failed_logged) {
			log_err("srv",
			    "the log refuses writes from now on; restart "
			    "sluiced to recover from what is durable");
			failed_logged = true;
			core_flush_replies(c);
		}
	}
	return 0;
}

/* Finishes in-flight work: no new requests; waiting takes get nothing;
 * the log is synced and every reply it covers is sent. */
static void
shutdown_core(struct core *c)
{
	int rc;

	ops_end_waiters(c);
	ops_result_end(c);
	bgsnap_fini(c);
	follow_stop(c);
	handle_events(c); /* answered with SLUICE_ESHUTDOWN */
	core_stop_sessions(c);
	wal_submit(c->wal);
	rc = wal_sync(c->wal, SHUTDOWN_SYNC_MS);
	if (rc != 0)
		log_err("srv", "cannot sync the log at shutdown error=\"%s\"",
		    sluice_strerror(rc));
	wal_reap(c->wal);
	core_flush_replies(c);
	core_fail_pending(c); /* still waiting for followers */
	face_nng_quiesce(c->nng, 2000);
	face_stream_quiesce(c->fstream, 2000);
	conns_stop_listening(c->conns);
	conns_flush(c->conns);
	for (int i = 0; i < 200 && conns_sending(c->conns); i++) {
		struct pollfd pfd = { .fd = conns_fd(c->conns),
			.events = POLLIN };

		poll(&pfd, 1, 10);
		conns_run(c->conns);
		conns_flush(c->conns);
	}
}

/* ---- start-up ------------------------------------------------------- */

static int
open_signals(void)
{
	sigset_t set;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);  /* reads --auth's file again */
	sigaddset(&set, SIGUSR1); /* drain mode (beanstalkd's) */
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* The native face asks the core about a connection's session. */
static bool
sp_session_authed(void *arg, uint32_t session)
{
	struct core *c = arg;
	const struct sess *s = sess_find(&c->sess, session);

	return s != NULL && s->authed;
}

static bool
sp_session_holds(void *arg, uint32_t session)
{
	struct core *c = arg;

	return queue_session_holds(c->q, session);
}

static void conn_limits(const struct config *cfg, struct conns_limits *out);

static int
start(struct core *c, const struct config *cfg)
{
	struct queue_config qc;
	struct recover_result res;
	struct queue_stats st;
	int rc;

	queue_config_default(&qc);
	qc.max_payload = cfg->max_payload;
	qc.default_ttr_ms = cfg->default_ttr_ms;
	qc.dedup_ms = cfg->dedup_ms;
	qc.keep_done_ms = cfg->keep_done_ms;
	qc.max_done = cfg->max_done;
	qc.lost_lease_retry = cfg->lost_lease_retry;
	c->q = queue_new(&qc);
	if (c->q == NULL)
		return -ENOMEM;
	queue_on_ready(c->q, ops_tube_ready, c);
	queue_on_final(c->q, ops_result_final, c);
	queue_on_lost_lease(c->q, core_session_lost_ready, c);
	rc = epochs_load(&c->epochs, cfg->data_dir);
	if (rc != 0) {
		log_err("srv",
		    "cannot read the epoch history data=%s error=\"%s\"",
		    cfg->data_dir, sluice_strerror(rc));
		return rc;
	}
	if ((rc = core_open_log(c, &res)) != 0)
		return rc;
	/* The tokens' quotas count what the recovered state holds. */
	quota_apply(c);
	/* The per-second history counts from here: what recovery replayed
	 * is not news (queue.h, "Rates"). Without it the node still serves. */
	if (queue_rates_enable(c->q, true) != 0)
		log_warn("srv",
		    "no memory for the rates history; "
		    "it stays empty");
	c->now = clock_now_ms();
	if (cfg->repl_listen != NULL) {
		rc = lead_open(c, cfg->repl_listen);
		if (rc != 0) {
			log_err("srv",
			    "cannot listen for followers repl_listen=%s "
			    "error=\"%s\"",
			    cfg->repl_listen, face_strerror(rc));
			return rc;
		}
	}
	if (cfg->etcd != NULL) {
		/* The election decides: until then a follower of nobody,
		 * taking no writes (cluster.c) */
		core_set_follower(c, true);
	} else if (cfg->follow != NULL) {
		rc = follow_start(c, cfg->follow);
		if (rc != 0) {
			log_err("srv", "cannot follow leader=%s error=\"%s\"",
			    cfg->follow, face_strerror(rc));
			return rc;
		}
	} else {
		/* Every start of a leader begins an epoch: records it sent
		 * to followers before they were durable here, and lost in a
		 * crash, belong to the old epoch, so followers that hold
		 * them learn to cut them (docs/replication.md). */
		rc = core_new_epoch(c, wal_epoch(c->wal) + 1);
		if (rc != 0) {
			log_err("srv", "cannot begin a new epoch error=\"%s\"",
			    sluice_strerror(rc));
			return rc;
		}
		core_release_sessions(c,
		    "server restarted (lease of a session of its previous "
		    "run)");
	}
	core_update_reservation(c);
	wal_submit(c->wal);

	/* The transport refuses only what no request could be; the decoder
	 * names every finer limit. */
	c->sp.events = NULL;
	c->sp.max_msg = MSG_RECV_MAX;
	c->sp.auth_on = c->auth_on;
	c->sp.session_authed = sp_session_authed;
	c->sp.session_holds = sp_session_holds;
	c->sp.arg = c;
	if (face_sp_serves(cfg->listen)) {
		/* tcp:// clients are served on this thread (face/sp.c);
		 * the event queue carries the other faces' requests */
		rc = events_new(&c->events);
		c->sp.events = c->events;
		if (rc == 0)
			rc = face_sp_listen(c->conns, &c->sp, cfg->listen);
	} else if (face_stream_serves(cfg->listen)) {
		/* tls+tcp://, ipc:// and ws:// clients: read on nng's
		 * threads with the same bounds (face/stream.c) */
		struct conns_limits lim;

		conn_limits(cfg, &lim);
		rc = events_new(&c->events);
		c->sp.events = c->events;
		if (rc == 0)
			rc = face_stream_open(
			    &c->fstream, cfg->listen, cfg->tls, &c->sp, &lim);
	} else {
		rc = events_new(&c->events);
		if (rc == 0)
			rc = face_nng_open(&c->nng, c->events, cfg->listen,
			    MSG_RECV_MAX, cfg->tls);
		if (rc == 0) {
			face_nng_set_max_pipes(c->nng, cfg->max_conns);
			face_nng_set_out_limits(c->nng,
			    (size_t)cfg->max_queued_bytes,
			    cfg->max_queued_replies, cfg->stall_ms);
		}
	}
	if (rc != 0) {
		log_err("srv", "cannot listen listen=%s error=\"%s\"",
		    cfg->listen, face_strerror(rc));
		return rc;
	}
	queue_stats(c->q, c->now, &st);
	log_info("srv",
	    "sluiced serving version=%d.%d.%d listen=%s role=%s data=%s "
	    "fsync=%s tasks=%" PRIu64 " tubes=%" PRIu64 " lsn=%" PRIu64
	    " epoch=%" PRIu64 " recovered_ms=%" PRId64,
	    SLUICE_VERSION_MAJOR, SLUICE_VERSION_MINOR, SLUICE_VERSION_PATCH,
	    cfg->listen,
	    cfg->etcd != NULL ? "candidate"
	        : c->follower ? "follower"
	                      : "leader",
	    cfg->data_dir,
	    cfg->fsync == WAL_FSYNC_ALWAYS      ? "always"
	        : cfg->fsync == WAL_FSYNC_NEVER ? "never"
	                                        : "interval",
	    st.tasks, st.tubes, wal_last_lsn(c->wal), wal_epoch(c->wal),
	    res.elapsed_ms);
	return 0;
}

/* The bounds of every client connection (conn.h). */
static void
conn_limits(const struct config *cfg, struct conns_limits *out)
{
	struct conns_limits lim = {
		.max_conns = cfg->max_conns,
		.max_unready = cfg->max_unauth_conns,
		.handshake_ms = cfg->handshake_ms,
		.frame_ms = cfg->frame_ms,
		.idle_ms = cfg->idle_ms,
		.stall_ms = cfg->stall_ms,
		.out_bytes = (size_t)cfg->max_queued_bytes,
		.out_msgs = cfg->max_queued_replies,
	};

	*out = lim;
}

static void
set_conn_limits(struct core *c, const struct config *cfg)
{
	struct conns_limits lim;

	conn_limits(cfg, &lim);
	conns_set_limits(c->conns, &lim);
}

/* The beanstalk face, when asked for (--beanstalk). */
static int
start_beanstalk(
    struct core *c, const struct config *cfg, struct face_beanstalk **bs)
{
	struct face_beanstalk_config bc = {
		.addr = cfg->beanstalk,
		.max_job = cfg->beanstalk_max_job ? cfg->beanstalk_max_job
		                                  : cfg->max_payload,
		.payload_max = cfg->max_payload,
		.max_ttr_ms = QUEUE_DEFAULT_MAX_TTR_MS,
		.seg_size = cfg->seg_size,
		.draining = &c->draining,
	};
	int rc = face_beanstalk_open(bs, c->events, c->conns, &bc);

	if (rc != 0)
		log_err("srv", "cannot listen for beanstalk clients on %s: %s",
		    cfg->beanstalk, strerror(-rc));
	else
		log_info("srv", "beanstalk protocol on %s", cfg->beanstalk);
	return rc;
}

int
srv_run(const struct config *cfg)
{
	struct face_beanstalk *bs = NULL;
	struct core c;
	int lockfd = -1, rc, exit_code = 1;

	memset(&c, 0, sizeof(c));
	c.cfg = cfg;
	c.sigfd = -1;
	c.started_ms = clock_now_ms();
	c.limits.msg_max = MSG_SIZE_MAX;
	c.limits.payload_max = cfg->max_payload;
	reserve_sizes_init(&c.rsv);
	c.rsv_pool = reserve_pool(cfg->max_log_bytes);
	buf_init(&c.body);
	buf_init(&c.puts);
	buf_init(&c.out);
	bgsnap_init(&c.snap);
	sess_tab_init(&c.sess);
	waiters_init(&c.waits);
	rwaits_init(&c.rwaits);

	rc = fs_mkdir_p(cfg->data_dir);
	if (rc != 0) {
		log_err("srv",
		    "cannot create the data directory data=%s "
		    "error=\"%s\"",
		    cfg->data_dir, strerror(-rc));
		goto out;
	}
	rc = fs_lock_dir(cfg->data_dir, &lockfd);
	if (rc != 0) {
		log_err("srv",
		    "cannot lock the data directory data=%s "
		    "error=\"%s\"",
		    cfg->data_dir,
		    rc == -EBUSY ? "another sluiced is using it"
		                 : strerror(-rc));
		goto out;
	}
	rc = conns_open(&c.conns);
	if (rc != 0) {
		log_err("srv", "epoll failed error=\"%s\"", strerror(-rc));
		goto out;
	}
	set_conn_limits(&c, cfg);
	if (ops_auth_open(&c) != 0)
		goto out;
	c.sigfd = open_signals();
	if (c.sigfd < 0) {
		log_err("srv", "signalfd failed error=\"%s\"", strerror(errno));
		goto out;
	}
	/* Up before recovery: /health answers "recovering" meanwhile. */
	if (cfg->http != NULL && (rc = open_http(&c, cfg)) != 0) {
		log_err("srv", "cannot serve HTTP http=%s error=\"%s\"",
		    cfg->http, face_strerror(rc));
		goto out;
	}
	if (start(&c, cfg) != 0)
		goto out;
	if ((rc = bgsnap_open(&c.snap)) != 0)
		log_warn("snap",
		    "cannot start the snapshot worker yet error=\"%s\"; the "
		    "first snapshot tries again",
		    sluice_strerror(rc));
	http_attach(c.http, c.events);
	if (cfg->http != NULL)
		log_info("http",
		    "serving /metrics, /health, /stats and the "
		    "admin page addr=%s scheme=%s admin=%s",
		    cfg->http, cfg->tls_cert != NULL ? "https" : "http",
		    cfg->http_admin ? "yes" : "no");
	if (cfg->beanstalk != NULL && start_beanstalk(&c, cfg, &bs) != 0)
		goto out;
	if (cluster_open(&c) != 0 || cmap_node_open(&c) != 0)
		goto out;
	exit_code = loop(&c);
	http_quiesce(c.http);
	shutdown_core(&c);
	cluster_close(&c); /* no writes are taken any more */

out:
	cmap_node_close(&c);
	cluster_close(&c);
	bgsnap_fini(&c);
	http_close(c.http);
	follow_stop(&c);
	lead_close(&c);
	face_stream_stop(c.fstream);
	face_nng_stop(c.nng);
	events_free(c.events);
	face_nng_free(c.nng);        /* after events_free: its events may be */
	face_stream_free(c.fstream); /* theirs */
	conns_close(c.conns); /* after events_free: its events may be theirs */
	face_beanstalk_free(bs); /* after conns_close: they refer to it */
	if (c.wal != NULL) {
		rc = wal_close(c.wal);
		if (rc != 0) {
			log_err("srv", "cannot close the log error=\"%s\"",
			    sluice_strerror(rc));
			exit_code = 1;
		}
	}
	queue_free(c.q);
	waiters_fini(&c.waits);
	rwaits_fini(&c.rwaits);
	epochs_fini(&c.epochs);
	ops_auth_close(&c);
	sess_tab_fini(&c.sess);
	buf_fini(&c.body);
	buf_fini(&c.puts);
	buf_fini(&c.out);
	if (c.sigfd >= 0)
		close(c.sigfd);
	if (lockfd >= 0)
		close(lockfd);
	if (exit_code == 0 && c.stop_signo != 0 &&
	    sigabbrev_np(c.stop_signo) != NULL)
		log_info("srv",
		    "stopped after finishing in-flight work signal=SIG%s "
		    "exit=0",
		    sigabbrev_np(c.stop_signo));
	else
		log_info("srv", "stopped%s exit=%d",
		    exit_code == 0 ? "" : " after an error", exit_code);
	return exit_code;
}
