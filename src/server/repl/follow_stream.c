/* follow_stream - what a follower's leader sends, applied: records
 * written to our log at the same LSNs and applied with the same apply as
 * recovery; a snapshot loaded in chunks, checked and installed; a tail
 * this node wrote but the leader never had, cut (and saved to
 * lost+found). A fetch is positional, so a reply that arrives late, or
 * twice, is recognised by its first LSN and dropped: nothing is applied
 * twice and nothing skipped.
 *
 * Cutting and installing a snapshot both end the same way: the writer is
 * closed, the data directory is changed, and the node rebuilds its state
 * from it (core_reload), as a restart would. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/durable.h"
#include "log/logdir.h"
#include "log/rec.h"
#include "log/snap.h"
#include "proto/replmsg.h"
#include "queue/qrec.h"
#include "server/core/core.h"
#include "server/repl/follow_int.h"
#include "sluice.h"
#include "util/fsutil.h"
#include "util/log.h"

void
follow_snap_abandon(struct follow *f)
{
	if (f->snap_fd >= 0) {
		close(f->snap_fd);
		unlink(f->snap_tmp);
	}
	f->snap_fd = -1;
	f->snap = false;
	free(f->hist);
	f->hist = NULL;
	f->nhist = 0;
}

/* Logs a refusal once (until another one comes). */
static void
refused(struct follow *f, int rc, const char *what, int64_t mono_ms)
{
	if (rc != f->last_err && (rc == SLUICE_EAUTH || rc == SLUICE_EPERM))
		log_err("follow",
		    "the leader refuses this node's replication token "
		    "leader=%s why=\"%s\"; give a token of role replica in "
		    "--repl-token-file or $SLUICE_REPL_TOKEN",
		    f->url, what);
	else if (rc != f->last_err)
		log_warn("follow", "the leader refuses leader=%s why=\"%s\"",
		    f->url, what);
	f->last_err = rc;
	f->retry_at = mono_ms + RETRY_SLOW_MS;
}

static int
apply_one(struct core *c, const struct rec_view *v)
{
	struct qrec r;
	int rc;

	rc = wal_append_rec(c->wal, &v->hdr, v->body, 0);
	if (rc != 0)
		return rc;
	if (v->hdr.type == REC_EPOCH) {
		uint64_t nonce = v->body_len >= REC_EPOCH_BODY
		    ? le_load_u64(v->body + 16)
		    : 0;

		rc = epochs_add(&c->epochs, v->hdr.epoch, nonce, v->hdr.lsn);
		if (rc != 0)
			log_warn("follow",
			    "cannot record an epoch epoch=%" PRIu64
			    " lsn=%" PRIu64 " error=\"%s\"",
			    v->hdr.epoch, v->hdr.lsn, sluice_strerror(rc));
		return 0;
	}
	if (v->hdr.type >= REC_TYPE_LOG_MIN)
		return 0;
	rc = qrec_decode(v->hdr.type, v->body, v->body_len, &r);
	if (rc == 0)
		rc = queue_apply(c->q, v->hdr.lsn, v->hdr.time, &r);
	if (rc == 0 && r.type == QREC_PUTS)
		c->puts_extra += r.u.puts.n - 1; /* core.h */
	if (rc != 0) {
		log_err("follow",
		    "a record from the leader does not apply here; this "
		    "follower stops (rebuild it from the leader) lsn=%" PRIu64
		    " type=%s error=\"%s\"",
		    v->hdr.lsn, qrec_type_name(v->hdr.type),
		    sluice_strerror(rc));
		c->fol->broken = true;
		return SLUICE_ECORRUPT;
	}
	c->applied = true;
	return 0;
}

static void
on_records(struct core *c, struct follow *f, const struct replmsg_fetch_rep *r,
    int64_t mono_ms)
{
	size_t off = 0;

	for (uint32_t i = 0; i < r->count; i++) {
		struct rec_view v;
		int rc;

		if (rec_decode(r->records + off, r->records_len - off, &v) !=
		    REC_VALID) {
			refused(f, SLUICE_EPROTO,
			    "a damaged record in the stream", mono_ms);
			return;
		}
		off += v.size;
		if (v.hdr.lsn <= wal_last_lsn(c->wal))
			continue; /* a late duplicate */
		if (v.hdr.lsn != wal_last_lsn(c->wal) + 1)
			return; /* not ours: fetch again from our end */
		rc = apply_one(c, &v);
		if (rc == SLUICE_EEPOCH) {
			refused(f, rc, "a record from a lower epoch", mono_ms);
			return;
		}
		if (rc != 0) {
			if (!f->broken)
				refused(f, rc, sluice_strerror(rc), mono_ms);
			return;
		}
	}
	f->last_err = 0;
}

/* Copies the records after `from` to lost+found before they are cut. */
static void
save_lost(struct core *c, uint64_t from, uint64_t last)
{
	char dir[LOGDIR_PATH_MAX], path[LOGDIR_PATH_MAX + 64];
	struct logdir_cursor *cur = NULL;
	struct buf b;
	uint64_t got = 0;
	int fd, rc;
	int64_t off = 0;

	if (fs_join(dir, sizeof(dir), c->cfg->data_dir, "lost+found") != 0 ||
	    fs_mkdir_p(dir) != 0)
		return;
	snprintf(path, sizeof(path), "%s/%020" PRIu64 "-%020" PRIu64 ".records",
	    dir, from, last);
	if (logdir_cursor_open(c->cfg->data_dir, from, &cur) != 0)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		logdir_cursor_close(cur);
		return;
	}
	buf_init(&b);
	for (int i = 0; i < 1000000; i++) {
		buf_reset(&b);
		rc = logdir_cursor_read(cur, last, 1 << 20, &b, &got);
		if (rc <= 0 || fs_pwrite_all(fd, b.data, b.len, off) != 0)
			break;
		off += (int64_t)b.len;
	}
	fdatasync(fd);
	close(fd);
	fs_sync_dir(dir);
	buf_fini(&b);
	logdir_cursor_close(cur);
	log_warn("follow",
	    "records that were never the leader's saved to path=%s "
	    "from_lsn=%" PRIu64 " to_lsn=%" PRIu64,
	    path, from, last);
}

/* Removes every segment and snapshot: the node starts over empty. */
static void
wipe(struct core *c)
{
	struct logdir ld = { 0 };
	uint64_t *lsns = NULL;
	size_t n = 0;
	char path[LOGDIR_PATH_MAX + 64];

	if (logdir_list(c->cfg->data_dir, &ld) == 0)
		for (size_t i = 0; i < ld.n; i++) {
			snprintf(path, sizeof(path), "%s/%020" PRIu64 ".wal",
			    c->cfg->data_dir, ld.first[i]);
			unlink(path);
		}
	logdir_fini(&ld);
	if (snap_list(c->cfg->data_dir, &lsns, &n) == 0)
		for (size_t i = 0; i < n; i++)
			if (snap_path(path, sizeof(path), c->cfg->data_dir,
			        lsns[i]) == 0)
				unlink(path);
	free(lsns);
	epochs_set(&c->epochs, NULL, 0);
	durable_remove(c->cfg->data_dir);
	fs_sync_dir(c->cfg->data_dir);
}

/* Stops the writer and any snapshot in progress, before the data
 * directory changes under them. */
static int
close_log(struct core *c)
{
	int rc;

	bgsnap_stop(c);
	rc = wal_close(c->wal);
	c->wal = NULL;
	return rc;
}

static void
cut_to(struct core *c, struct follow *f, uint64_t to, int64_t mono_ms)
{
	uint64_t last = wal_last_lsn(c->wal), *lsns = NULL;
	char path[LOGDIR_PATH_MAX + 64];
	size_t n = 0;
	int rc;

	if (to >= last) {
		f->retry_at = mono_ms;
		return;
	}
	log_warn("follow",
	    "our log parts from the leader's; cutting it cut_to=%" PRIu64
	    " lsn=%" PRIu64,
	    to, last);
	if ((rc = close_log(c)) != 0)
		log_warn("follow", "cannot close the log error=\"%s\"",
		    sluice_strerror(rc));
	save_lost(c, to + 1, last);
	rc = logdir_truncate(c->cfg->data_dir, to);
	if (rc == 0 && snap_list(c->cfg->data_dir, &lsns, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			if (lsns[i] > to &&
			    snap_path(path, sizeof(path), c->cfg->data_dir,
			        lsns[i]) == 0)
				unlink(path);
	}
	free(lsns);
	if (rc == 0)
		rc = epochs_cut(&c->epochs, to);
	if (rc == 0)
		rc = core_reload(c);
	if (rc != 0) {
		log_warn("follow",
		    "cannot keep the log; starting over from the leader "
		    "cut_to=%" PRIu64 " error=\"%s\"",
		    to, sluice_strerror(rc));
		if (c->wal != NULL)
			close_log(c);
		wipe(c);
		if (core_reload(c) != 0)
			abort(); /* an empty directory always recovers */
	}
	f->retry_at = mono_ms;
}

void
follow_on_fetch_rep(
    struct core *c, struct follow *f, nng_msg *m, int64_t mono_ms)
{
	const void *p = nng_msg_body(m);
	size_t len = nng_msg_len(m);
	struct replmsg_fetch_rep r;
	int rc = replmsg_rep_status(p, len, REPLMSG_OP_FETCH);

	if (rc != 0) {
		struct msg_rep e;
		char text[MSG_TEXT_MAX + 64];

		if (msg_decode_rep(p, len, NULL, &e) == 0 && e.status != 0)
			snprintf(text, sizeof(text), "%s (%.*s)",
			    sluice_strerror(e.status), (int)e.err.message.len,
			    e.err.message.p);
		else
			snprintf(text, sizeof(text), "%s", sluice_strerror(rc));
		refused(f, rc, text, mono_ms);
		return;
	}
	if ((rc = replmsg_decode_fetch_rep(p, len, &r)) != 0) {
		refused(f, rc, "a reply that does not decode", mono_ms);
		return;
	}
	if (r.epoch < wal_epoch(c->wal)) {
		char text[160];

		snprintf(text, sizeof(text),
		    "its epoch %" PRIu64 " is below ours (%" PRIu64
		    "); not following it",
		    r.epoch, wal_epoch(c->wal));
		refused(f, SLUICE_EEPOCH, text, mono_ms);
		return;
	}
	if (f->contact == 0 || f->last_err != 0)
		log_info("follow",
		    "following leader=%s epoch=%" PRIu64 " leader_lsn=%" PRIu64
		    " lsn=%" PRIu64,
		    f->url, r.epoch, r.last_lsn, wal_last_lsn(c->wal));
	f->contact = mono_ms;
	f->leader_epoch = r.epoch;
	f->leader_last = r.last_lsn;
	f->leader_last_time = r.last_time;
	memcpy(c->leader_url, r.url.p, r.url.len);
	c->leader_url[r.url.len] = '\0';
	switch (r.kind) {
	case REPLMSG_FETCH_RECORDS:
		on_records(c, f, &r, mono_ms);
		break;
	case REPLMSG_FETCH_SNAPSHOT:
		log_info("follow",
		    "the leader no longer has our next records; loading its "
		    "snapshot leader=%s lsn=%" PRIu64 " snap_lsn=%" PRIu64,
		    f->url, wal_last_lsn(c->wal), r.snap_lsn);
		follow_snap_abandon(f);
		snprintf(f->snap_tmp, sizeof(f->snap_tmp), "%s/repl.snap.tmp",
		    c->cfg->data_dir);
		f->snap_fd = open(f->snap_tmp,
		    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (f->snap_fd < 0) {
			refused(f, -errno,
			    "cannot create a file for the snapshot", mono_ms);
			return;
		}
		f->snap = true;
		f->snap_lsn = r.snap_lsn;
		f->snap_off = 0;
		f->snap_size = 0;
		break;
	case REPLMSG_FETCH_DIVERGED:
		cut_to(c, f, r.truncate_to, mono_ms);
		break;
	}
}

static void
install_snapshot(struct core *c, struct follow *f, int64_t mono_ms)
{
	struct epoch_ent *hist = NULL;
	char path[LOGDIR_PATH_MAX + 64];
	int rc;

	rc = fdatasync(f->snap_fd) < 0 ? -errno : 0;
	close(f->snap_fd);
	f->snap_fd = -1;
	if (rc == 0)
		rc = snap_load(f->snap_tmp, NULL, NULL, NULL, NULL);
	if (rc != 0) {
		follow_snap_abandon(f);
		refused(
		    f, rc, "the snapshot received does not verify", mono_ms);
		return;
	}
	hist = calloc(f->nhist ? f->nhist : 1, sizeof(*hist));
	if (hist == NULL) {
		follow_snap_abandon(f);
		f->retry_at = mono_ms + RETRY_SLOW_MS;
		return;
	}
	for (uint32_t i = 0; i < f->nhist; i++)
		hist[i] = (struct epoch_ent) { f->hist[i].epoch,
			f->hist[i].nonce, f->hist[i].start };
	if ((rc = close_log(c)) != 0)
		log_warn("follow", "cannot close the log error=\"%s\"",
		    sluice_strerror(rc));
	wipe(c);
	rc = snap_path(path, sizeof(path), c->cfg->data_dir, f->snap_lsn);
	if (rc == 0 && rename(f->snap_tmp, path) < 0)
		rc = -errno;
	if (rc == 0)
		rc = fs_sync_dir(c->cfg->data_dir);
	if (rc == 0)
		rc = epochs_set(&c->epochs, hist, f->nhist);
	free(hist);
	follow_snap_abandon(f);
	if (rc == 0)
		rc = core_reload(c);
	if (rc != 0) {
		log_err("follow",
		    "cannot install the leader's snapshot snap_lsn=%" PRIu64
		    " error=\"%s\"",
		    f->snap_lsn, sluice_strerror(rc));
		if (c->wal != NULL)
			close_log(c);
		wipe(c);
		if (core_reload(c) != 0)
			abort();
	} else {
		log_info("follow",
		    "loaded the leader's snapshot snap_lsn=%" PRIu64,
		    f->snap_lsn);
	}
	f->retry_at = mono_ms;
}

void
follow_on_snap_rep(
    struct core *c, struct follow *f, nng_msg *m, int64_t mono_ms)
{
	const void *p = nng_msg_body(m);
	size_t len = nng_msg_len(m);
	struct replmsg_snap_rep r;
	int rc = replmsg_decode_snap_rep(p, len, &r);

	if (rc != 0 || r.snap_lsn != f->snap_lsn || r.offset != f->snap_off) {
		/* gone (a newer one replaced it) or not ours: ask again */
		follow_snap_abandon(f);
		f->retry_at = mono_ms + RETRY_MS;
		return;
	}
	f->contact = mono_ms;
	if (r.offset == 0) {
		free(f->hist);
		f->hist = calloc(r.nhist ? r.nhist : 1, sizeof(*f->hist));
		if (f->hist == NULL) {
			follow_snap_abandon(f);
			return;
		}
		for (uint32_t i = 0; i < r.nhist; i++)
			f->hist[i] = replmsg_hist_at(&r, i);
		f->nhist = r.nhist;
	}
	f->snap_size = r.size;
	if (r.len > 0 &&
	    fs_pwrite_all(f->snap_fd, r.data, r.len, (int64_t)r.offset) != 0) {
		follow_snap_abandon(f);
		refused(f, -EIO, "cannot write the snapshot", mono_ms);
		return;
	}
	f->snap_off += r.len;
	if (f->snap_off == f->snap_size)
		install_snapshot(c, f, mono_ms);
	else if (r.len == 0) {
		follow_snap_abandon(f);
		f->retry_at = mono_ms + RETRY_MS;
	}
}
