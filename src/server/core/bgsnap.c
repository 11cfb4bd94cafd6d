/* bgsnap - snapshots written in the background by a forked child.
 *
 * fork() gives the child a copy-on-write image of the queue as it is at
 * that instant, at LSN L (every record appended so far is applied). The
 * child writes it with the snapshot writer, which allocates nothing (the
 * buffer was allocated before the fork), then exits; the core thread
 * stalls only for the fork itself. The parent learns of the exit through
 * a pidfd in its poll set.
 *
 * A written snapshot is published (renamed into place) only once the log
 * is durable up to L: otherwise a crash could leave a snapshot holding
 * changes that the log, and so every client, never saw acknowledged. The
 * child reads the file back whole before it exits, so a snapshot that
 * does not read back is never published. Then the snapshots older than
 * the newest --keep-snapshots (default 2) are removed, and the segments
 * that the oldest snapshot kept covers (keeping --keep-segments of them
 * for followers): when the newest snapshot turns out damaged at a start,
 * recovery falls back to the one before and the log it needs.
 *
 * A full log (c->full: new work refused, or no room for spares) is given
 * its room back by snapshots: one is started when as many tasks finished
 * (acked, deleted) since the last snapshot as are live, so that it holds
 * at most half of what the log since then does (a drain halves the queue
 * between two), and while the log is full its segments are removed
 * without keeping --keep-segments (connected followers still keep
 * theirs). A snapshot that does not fit on a full disk fails and is
 * tried again when as many more tasks finished; one asked for answers
 * SLUICE_ENOSPC (the log is fine and takes writes), never SLUICE_ELOG,
 * which says the log failed. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log/seg.h"
#include "log/snap.h"
#include "server/core/bgsnap.h"
#include "server/core/core.h"
#include "sluice.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	SNAP_BUF_SIZE = 1 << 20,
	REPL_RETAIN_SEGMENTS = 16,
	ROOM_SNAP_MS = 1000, /* between two snapshots for room, at least */
	EXIT_NOSPC = 2,      /* the child's exit: the disk had no room */
	EXIT_UNREADABLE = 3, /* the child's exit: written, but it does not
	                      * read back whole */
};

int
bgsnap_error(int rc)
{
	if (rc == -ENOSPC || rc == -EDQUOT || rc == SLUICE_ENOSPC)
		return SLUICE_ENOSPC;
	return rc > 0 ? rc : SLUICE_ELOG;
}

void
bgsnap_init(struct bgsnap *s)
{
	memset(s, 0, sizeof(*s));
	s->pidfd = -1;
}

bool
bgsnap_due(const struct core *c)
{
	struct wal_stats ws;

	if (c->snap.pid != 0 || c->snap.ready)
		return false;
	wal_stats(c->wal, &ws);
	return ws.records - c->snap.records_at_last >= c->cfg->snap_records ||
	    ws.bytes - c->snap.bytes_at_last >= c->cfg->snap_bytes;
}

/* Tasks finished so far (acked, deleted, flushed). */
static uint64_t
tasks_done(const struct queue_stats *st)
{
	return st->ctr.ack + st->ctr.del;
}

bool
bgsnap_due_for_room(struct core *c, bool start)
{
	struct queue_stats st;
	struct wal_stats ws;
	int64_t now = clock_mono_ms();
	uint64_t done;

	if (!c->full.on)
		return false;
	if (c->snap.pid != 0 || c->snap.ready)
		return !start; /* one is under way: its removal is wanted */
	if (wal_last_lsn(c->wal) == c->snap.last_lsn ||
	    queue_stats(c->q, c->now, &st) != 0)
		return false;
	done = tasks_done(&st) - c->full.done_mark;
	if (done == 0 || done < st.tasks)
		return false; /* a snapshot would hold most of the log */
	wal_stats(c->wal, &ws);
	if (ws.segments < 2)
		return false; /* only the segment being written: no room */
	if (!start)
		return true;
	if (now < c->full.next_ms)
		return false;
	c->full.next_ms = now + ROOM_SNAP_MS;
	log_info("snap",
	    "snapshot for room: the log is full and tasks finished since "
	    "the last snapshot done=%" PRIu64 " tasks=%" PRIu64
	    " segments=%" PRIu64,
	    done, st.tasks, ws.segments);
	return true;
}

static int
emit(void *arg, uint16_t type, const void *a, size_t alen, const void *b,
    size_t blen)
{
	return snap_writer_add(arg, type, a, alen, b, blen);
}

/* Answers every snapshot request: with the LSN covered, or an error,
 * `why` (NULL: the error's own text); for the local log alone with
 * `local` (the request being handled, a read), else at the commit LSN
 * as every answer the loop sends later. */
static void
answer_waiters(struct core *c, int rc, const char *why, bool local)
{
	struct core_reply_how how = { .local = local };
	struct snap_waiter *w;

	while ((w = c->snap.waiters) != NULL) {
		c->snap.waiters = w->next;
		if (rc == 0) {
			struct msg_rep rep = { .op = MSG_OP_SNAPSHOT };

			rep.lsn = c->snap.last_lsn;
			buf_reset(&c->out);
			if (msg_encode_rep(&c->out, &rep) == 0)
				core_reply_as(c, w->ctx, &how);
			else
				face_ctx_drop(w->ctx);
		} else {
			core_reply_err_as(c, w->ctx, &how, MSG_OP_SNAPSHOT,
			    bgsnap_error(rc), "snapshot failed: %s",
			    why != NULL ? why : sluice_strerror(rc));
		}
		free(w);
	}
}

static void
remove_unfinished(struct core *c)
{
	char path[4096], tmp[4200];

	if (snap_path(path, sizeof(path), c->cfg->data_dir, c->snap.lsn) == 0) {
		snprintf(tmp, sizeof(tmp), "%s.inprogress", path);
		unlink(tmp);
	}
}

/* In the child: closes every descriptor above stdio but `keep`. */
static void
close_all_but(int keep)
{
	if (keep > 3)
		close_range(3, (unsigned)keep - 1, 0);
	close_range((unsigned)keep + 1, ~0U, 0);
}

int
bgsnap_start(struct core *c)
{
	struct bgsnap *s = &c->snap;
	struct snap_writer w;
	struct wal_stats ws;
	struct queue_stats st;
	int64_t t0;
	pid_t pid, parent;
	int rc;

	if (s->pid != 0 || s->ready)
		return 0;
	if (wal_poisoned(c->wal))
		return SLUICE_ELOG;
	if (s->buf == NULL) {
		s->buf = malloc(SNAP_BUF_SIZE);
		if (s->buf == NULL)
			return -ENOMEM;
	}
	wal_stats(c->wal, &ws);
	s->records_at_last = ws.records;
	s->bytes_at_last = ws.bytes;
	if (queue_stats(c->q, c->now, &st) == 0)
		c->full.done_mark = tasks_done(&st);
	s->lsn = wal_last_lsn(c->wal);
	if (s->lsn == s->last_lsn) {
		/* Nothing new since the last one: it already covers all. */
		answer_waiters(c, 0, NULL, true);
		return 0;
	}
	rc = snap_writer_open(&w, c->cfg->data_dir, s->lsn, wal_epoch(c->wal),
	    c->now, s->buf, SNAP_BUF_SIZE);
	if (rc != 0) {
		log_err("snap", "cannot start a snapshot data=%s error=\"%s\"",
		    c->cfg->data_dir, sluice_strerror(rc));
		return rc;
	}
	t0 = clock_mono_ns();
	s->started_ns = t0;
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		snap_writer_abort(&w);
		log_err("snap", "cannot fork for a snapshot error=\"%s\"",
		    strerror(-rc));
		return rc;
	}
	if (pid == 0) {
		/* The child: the queue as it was at the fork. It keeps no
		 * descriptor but the snapshot's (and stdio): copies of the
		 * data directory's lock and of the listening socket must
		 * not outlive a killed server, or its restart would find
		 * both taken until the snapshot is written. And it dies
		 * with the server: only the server publishes a snapshot, so
		 * one without it is of no use. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 ||
		    getppid() != parent)
			_exit(1);
		close_all_but(w.fd);
		rc = queue_snapshot_write(c->q, emit, &w);
		if (rc == 0)
			rc = snap_writer_finish(&w);
		else
			snap_writer_abort(&w);
		/* Read back whole before the older ones may go (the reader
		 * maps the file: nothing is allocated). */
		if (rc == 0 && snap_load(w.tmp, NULL, NULL, NULL, NULL) != 0)
			_exit(EXIT_UNREADABLE);
		_exit(rc == 0                            ? 0
		        : rc == -ENOSPC || rc == -EDQUOT ? EXIT_NOSPC
		                                         : 1);
	}
	s->fork_us = (uint64_t)(clock_mono_ns() - t0) / 1000;
	close(w.fd); /* the child's now */
	s->pid = pid;
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (s->pidfd < 0) {
		/* Without a pidfd the loop would not notice the exit. */
		log_warn("snap",
		    "pidfd_open failed; waiting for the snapshot error=\"%s\"",
		    strerror(errno));
		bgsnap_reap(c);
	}
	log_debug("snap", "writing a snapshot lsn=%" PRIu64 " fork_us=%" PRIu64,
	    s->lsn, s->fork_us);
	return 0;
}

void
bgsnap_reap(struct core *c)
{
	struct bgsnap *s = &c->snap;
	int status;
	pid_t r;

	if (s->pid == 0)
		return;
	r = waitpid(s->pid, &status, s->pidfd >= 0 ? WNOHANG : 0);
	if (r != s->pid)
		return;
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->pidfd = -1;
	s->pid = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		s->ready = true;
		bgsnap_publish(c);
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NOSPC)
		log_warn("snap",
		    "snapshot failed: no room for it on the disk lsn=%" PRIu64
		    "; the log keeps its segments until one fits",
		    s->lsn);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_UNREADABLE)
		log_err("snap",
		    "snapshot written but it does not read back whole "
		    "lsn=%" PRIu64 "; removed, the older snapshots and their "
		    "segments stay (check the disk)",
		    s->lsn);
	else
		log_err("snap", "snapshot failed lsn=%" PRIu64 " %s=%d", s->lsn,
		    WIFEXITED(status) ? "exit" : "signal",
		    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	remove_unfinished(c);
	if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_NOSPC)
		answer_waiters(c, SLUICE_ENOSPC,
		    "no room for it on the disk; the log is fine and the "
		    "node takes writes",
		    false);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_UNREADABLE)
		answer_waiters(c, SLUICE_ECORRUPT,
		    "it was written but does not read back whole (check the "
		    "disk); the older snapshots stay, the log is fine",
		    false);
	else
		answer_waiters(c, SLUICE_ELOG,
		    "the snapshot's writer failed (the log is fine; see the "
		    "server's log)",
		    false);
}

/* The first LSN the segments must keep: what the snapshot does not cover,
 * and what connected followers have not acked yet, up to
 * REPL_RETAIN_SEGMENTS segments more (past that, a follower that far
 * behind loads a snapshot instead). */
static uint64_t
retain_from(struct core *c, uint64_t after_snap)
{
	uint64_t need =
	    c->repl_hook != NULL ? c->repl_hook->needed_lsn(c) : UINT64_MAX;
	uint64_t seg = c->cfg->seg_size ? c->cfg->seg_size : SEG_SIZE_DEFAULT;
	uint64_t span = REPL_RETAIN_SEGMENTS * seg / 64; /* records, at
	                                                  * least */

	if (need >= after_snap)
		return after_snap;
	if (after_snap - need > span)
		return after_snap - span;
	return need;
}

/* The LSN of the oldest snapshot to keep: the newest --keep-snapshots of
 * them stay, so that a damaged newest one falls back to the one before.
 * Returns 0 or -errno. */
static int
kept_from(struct core *c, uint64_t *out)
{
	unsigned keep = c->cfg->keep_snapshots ? c->cfg->keep_snapshots : 1;
	uint64_t *lsns = NULL;
	size_t n = 0;
	int rc = snap_list(c->cfg->data_dir, &lsns, &n);

	if (rc != 0)
		return rc;
	*out = n == 0 ? c->snap.lsn : n <= keep ? lsns[0] : lsns[n - keep];
	free(lsns);
	return 0;
}

void
bgsnap_publish(struct core *c)
{
	struct bgsnap *s = &c->snap;
	uint64_t keep = 0;
	int rc;

	if (!s->ready || wal_durable_lsn(c->wal) < s->lsn)
		return;
	s->ready = false;
	rc = snap_publish(c->cfg->data_dir, s->lsn);
	if (rc != 0) {
		log_err("snap",
		    "cannot publish the snapshot lsn=%" PRIu64 " error=\"%s\"",
		    s->lsn, strerror(-rc));
		remove_unfinished(c);
		answer_waiters(c, rc, NULL, false);
		return;
	}
	s->last_lsn = s->lsn;
	s->last_at = clock_now_ms();
	s->last_ms = (clock_mono_ns() - s->started_ns) / 1000000;
	rc = kept_from(c, &keep);
	if (rc == 0)
		rc = snap_remove_before(c->cfg->data_dir, keep);
	if (rc != 0) {
		log_warn("snap", "cannot remove older snapshots error=\"%s\"",
		    strerror(-rc));
		keep = 0; /* keep every segment too */
	}
	/* The oldest snapshot kept needs the segments after it; while the
	 * log is full, room comes first: the newest one's only. */
	if (c->full.on)
		keep = s->lsn;
	rc = keep == 0 ? 0
	               : wal_remove_before(c->wal, retain_from(c, keep + 1),
	                     c->full.on ? 0 : c->cfg->keep_segments);
	if (rc < 0)
		log_warn("snap", "cannot remove old segments error=\"%s\"",
		    strerror(-rc));
	log_info("snap",
	    "snapshot written lsn=%" PRIu64 " ms=%" PRId64 " fork_us=%" PRIu64
	    " removed=%d",
	    s->lsn, s->last_ms, s->fork_us, rc < 0 ? 0 : rc);
	answer_waiters(c, 0, NULL, false);
}

void
bgsnap_fini(struct core *c)
{
	struct bgsnap *s = &c->snap;
	int status;

	if (s->pid != 0) {
		kill(s->pid, SIGKILL);
		waitpid(s->pid, &status, 0);
		remove_unfinished(c);
		s->pid = 0;
	}
	if (s->pidfd >= 0)
		close(s->pidfd);
	s->pidfd = -1;
	answer_waiters(c, SLUICE_ESHUTDOWN, NULL, false);
	free(s->buf);
	s->buf = NULL;
}
