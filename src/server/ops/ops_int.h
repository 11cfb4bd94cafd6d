/* ops_int - what the files of ops/ share and no one else calls: the
 * handlers ops_handle dispatches to (dispatch.c), the reply helpers they
 * all use, and the pieces one handler lends another (a take's for the
 * waiting takes, a lease op's texts for ack_batch, the auth checks for the
 * dispatcher). Each declaration names its file. */
#ifndef SLUICE_SERVER_OPS_OPS_INT_H
#define SLUICE_SERVER_OPS_OPS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"
#include "queue/queue.h"
#include "server/core/core.h"
#include "util/tokens.h"

struct face_ctx;

enum {
	/* A reply carries at most MSG_SIZE_MAX bytes: its head and count,
	 * then its tasks, each at most ops_task_wire_max bytes. */
	OPS_REPLY_MAX = MSG_SIZE_MAX,
	OPS_REPLY_HEAD_MAX = 64,
	/* ops_task_wire_max's room for a task's fixed fields and every
	 * length prefix */
	TASK_WIRE_FIXED = 512,
	OPS_ITEM_TEXT = 256, /* a batch item's message, at most */
};

/* ---- dispatch.c: replies and the task as the wire carries it ---------- */

/* Encodes `rep` and answers it as core_reply does (an encoding that
 * fails answers an error instead). */
void ops_reply(struct core *c, struct face_ctx *ctx, const struct msg_rep *rep);

/* ops_reply for an answer that shows counts or outcomes no one task's
 * records bound (a batch, a schedule, a task's outcome): a read waits
 * until the log holds every record applied so far (queue_lsn), so that
 * it never shows what a crash could undo (an ack, a firing). */
void ops_reply_applied(
    struct core *c, struct face_ctx *ctx, const struct msg_rep *rep);

/* ops_reply sent as `how` says (core_reply_as). */
void ops_reply_as(struct core *c, struct face_ctx *ctx,
    const struct msg_rep *rep, const struct core_reply_how *how);

/* The reply of ack, release, fail, touch, bury, kick_id, update: where
 * task `id` is now; `replaced`: its lease ended by a pending replacement
 * taking its place (said only to a request that asked). */
void ops_reply_after(struct core *c, struct face_ctx *ctx, uint8_t op,
    uint64_t id, bool replaced);

/* A task as the wire carries it (the payload only when asked), with the
 * holder of a session lease. Its strings are borrowed from the queue and
 * the session table: encode it before the core moves on. */
void ops_view_to_task(const struct core *c, const struct queue_task_view *v,
    bool payload, struct msg_task *t);

/* The most bytes task `v` takes in a reply (its fixed fields and every
 * length prefix within TASK_WIRE_FIXED, its strings, and with `payload`
 * its payloads): a reply is built within MSG_SIZE_MAX. */
size_t ops_task_wire_max(const struct queue_task_view *v, bool payload);

/* The room for the tasks of a reply to `session` beyond its first: less
 * for the HTTP face's, which it writes again as JSON. */
size_t ops_reply_budget(const struct core *c, uint32_t session);

/* Whether a lease request overrides the lease (its force flag: an
 * operator's; release_all always does). */
bool ops_req_forced(const struct msg_req *r);

/* ---- move.c: move_out, move_in, move_end (the admin's) ------------------ */

void ops_move(struct core *c, struct face_ctx *ctx, const struct msg_req *req);
/* move_in's tasks, each through `one` (0 and *id, or a SLUICE_E* code),
 * answered with a result apiece (move.c: copies and reservations;
 * move_window.c: placeholders). */
void ops_move_each(struct core *c, struct face_ctx *ctx,
    const struct msg_move_req *m,
    int (*one)(struct core *c, const struct msg_move_req *m,
        const struct msg_task *t, uint64_t *id));

/* move_keys.c: move_out's keys (the source's key reservations of the
 * tube, answered as tasks), and move_in of one of them at the target (0
 * and *id, or a SLUICE_E* code). */
/* A page of move_out's keys or live (move_keys.c): room for m->max
 * tasks in *t and as many of the queue's entries of `size` bytes,
 * returned; NULL, answered SLUICE_ENOMEM, when there is no memory. Then
 * ops_move_page answers with the tasks t[0..n) (at most m->max) that one
 * reply holds (the mover asks for the rest by the last id), and frees t
 * and the entries `k`. */
void *ops_move_room(struct core *c, struct face_ctx *ctx,
    const struct msg_move_req *m, size_t size, struct msg_task **t);
void ops_move_page(struct core *c, struct face_ctx *ctx,
    const struct msg_move_req *m, struct msg_task *t, size_t n, void *k);
void ops_move_keys(
    struct core *c, struct face_ctx *ctx, const struct msg_move_req *m);
int ops_move_key_in(struct core *c, const struct msg_move_req *m,
    const struct msg_task *t, uint64_t *id);

/* move_window.c: move_out's live and keep on the source, move_in's
 * placeholders, pend and ready on the target (queue/move_place.c). */
void ops_move_live(
    struct core *c, struct face_ctx *ctx, const struct msg_move_req *m);
void ops_move_keep(
    struct core *c, struct face_ctx *ctx, const struct msg_move_req *m);
void ops_move_window_in(
    struct core *c, struct face_ctx *ctx, const struct msg_move_req *m);

/* ---- put.c ------------------------------------------------------------ */

/* put and put_batch, for a request of token `tok` (NULL without --auth):
 * its quotas. */
void ops_put(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req);
void ops_put_batch(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req);

/* ---- take.c ----------------------------------------------------------- */

void ops_take(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct tokens_entry *tok, const struct msg_req *req);

/* The log's class of a take of task `id` (reserve.h): 0 for its first
 * take, WAL_RETRY for a task taken before. */
unsigned ops_take_flags(struct core *c, uint64_t id);

/* Takes up to `max` tasks now into ids[] (*got of them), no more than a
 * reply can carry. Returns 0 with *got >= 1; or the reason there is
 * nothing (SLUICE_ETIMEDOUT, SLUICE_EPAUSED), SLUICE_EMSGSIZE when the
 * first task alone is over the reply limit (its id in *big, nothing
 * taken), or an error, with *got tasks taken before it. */
int ops_take_now(struct core *c, const struct queue_take_req *tr, uint32_t max,
    uint64_t *ids, uint32_t *got, uint64_t *big);

/* The error of a take that got nothing (ops_take_now's `rc`, `big`). */
void ops_take_err(struct core *c, struct face_ctx *ctx, int rc, uint64_t big);

/* Answers a take of `session` with the n tasks it got (`durable`: it
 * asked to wait for its own records). Should the reply not reach its
 * client, the core undoes the takes (core.c). */
void ops_reply_tasks(struct core *c, struct face_ctx *ctx, uint32_t session,
    const uint64_t *ids, uint32_t n, bool durable);

/* ---- lease.c ---------------------------------------------------------- */

/* ack, release, fail, touch, bury and release_all; `peer` is set for a
 * forced request, which is logged whatever its result. */
void ops_ack(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req,
    const char *peer);
void ops_release(struct core *c, struct face_ctx *ctx,
    const struct msg_req *req, const char *peer);
void ops_fail(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
    const char *peer);
void ops_touch(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
    const char *peer);
void ops_bury(struct core *c, struct face_ctx *ctx, const struct msg_req *req,
    const char *peer);
void ops_release_all(struct core *c, struct face_ctx *ctx,
    const struct msg_req *req, const char *peer);

/* Why a lease operation `op` on task `id` with `lease` was refused with
 * `rc`, in words, into out[len]. Never says the task's current lease. */
void ops_lease_err_text(struct core *c, uint8_t op, uint64_t id, uint64_t lease,
    int rc, char *out, size_t len);

/* The log's class (reserve.h) of an ack decided with `rc` as record `r`. */
unsigned ops_ack_flags(int rc, const struct qrec *r);

/* ---- batch.c ---------------------------------------------------------- */

void ops_ack_batch(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req);
void ops_delete_batch(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req);

/* ---- task.c: a task's own changes outside its lease -------------------- */

void ops_kick_id(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req);
void ops_delete(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req);
void ops_update(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req);

/* Answers a delete_key or peek_key that names no tube. */
void ops_key_without_tube(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req);

/* ---- kick_error.c: bulk kicks and dry runs --------------------------- */

/* kick_error.c: a kick of an error group (k->error) or a dry run
 * (k->dry), answered; false for a plain kick, left to ops_kick. */
bool ops_kick_bulk(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req);

/* ---- tube.c: a tube as a whole ---------------------------------------- */

/* tube_set, tube_show and tube_delete (`tok`: a tube set's quotas). */
/* batches.c: batch_show, batch_set. */
void ops_batch(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req);
/* sched.c: sched_set, sched_list, sched_ctl. */
void ops_sched(struct core *c, struct face_ctx *ctx, const struct msg_req *req);

void ops_tube(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req);
void ops_kick(struct core *c, struct face_ctx *ctx, const struct msg_req *req);
void ops_flush(struct core *c, struct face_ctx *ctx, const struct msg_req *req);
/* `peer`: who asked, for a forced one (taken tasks), which is logged. */
void ops_delete_where(struct core *c, struct face_ctx *ctx,
    const struct msg_req *req, const char *peer);
void ops_pause(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req);

/* A tube's settings as the wire carries them (borrows the dead letter's
 * name). */
void ops_tube_conf_to_msg(
    const struct qrec_tube_conf *q, struct msg_tube_conf *m);

/* ---- limit.c: a tube's flow limits ------------------------------------ */

struct queue_tube_limit_req;

enum { OPS_LIMIT_KVS = 11 }; /* key/values ops_limit_kvs adds, at most */

/* The limits `f` asks for, into *lim: a rate without a burst gets the
 * default one (queue_limits_default_burst); a group's or a tube's. */
void ops_limits_asked(const struct msg_flow *f, struct qrec_limits *lim);
/* Checks the limits part of tube_set `m` (flag 0x01) whole: the tube
 * exists and the limits it would leave are valid. Returns 0 with `*out`
 * the queue's request, or the error it answered (nothing changed). */
int ops_limit_check(struct core *c, struct face_ctx *ctx,
    const struct msg_tube_set *m, struct queue_tube_limit_req *out);
/* Decides and logs `a`. Returns 0 or the error it answered. */
int ops_limit_commit(
    struct core *c, struct face_ctx *ctx, const struct queue_tube_limit_req *a);
/* The limits of `tube` and where they stand, for a reply. */
void ops_limit_to_msg(struct core *c, struct msg_str tube, struct msg_flow *f,
    struct msg_flow_state *s);
/* Appends the stats key/values of a limited tube to kv[n..]; returns
 * how many (0: no limits). */
size_t ops_limit_kvs(
    struct core *c, const char *name, size_t len, struct msg_kv *kv, size_t n);
/* Whether the tube has limits (it is then listed, as with settings). */
bool ops_limit_has(const struct core *c, const char *name, size_t len);

/* ---- group.c: the limits of a tube's fair groups ------------------------ */

enum { OPS_GROUP_KVS = 7 }; /* key/values ops_group_kvs adds, at most */

/* group (0x2a): shows, sets, pauses or resumes a group's settings. */
void ops_group(struct core *c, struct face_ctx *ctx, const struct msg_req *req);
/* Appends the stats key/values of a tube with group settings to kv[n..];
 * returns how many (0: none). */
size_t ops_group_kvs(const struct core *c, const char *name, size_t len,
    struct msg_kv *kv, size_t n);

/* ---- result.c: wait and cancel ---------------------------------------- */

void ops_wait(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct tokens_entry *tok, const struct msg_req *req);
void ops_cancel(struct core *c, struct face_ctx *ctx,
    const struct tokens_entry *tok, const struct msg_req *req);
/* Answers the waits whose task ended or whose time passed; with `check`
 * (the HTTP face saw a client leave), drops those whose client left. */
void ops_result_serve(struct core *c, int64_t mono_ms, bool check);
/* Drops the waits of a session that is gone. */
void ops_result_drop(struct core *c, uint32_t session);
/* The earliest deadline of a wait (monotonic ms), 0 when some are to be
 * answered now, or INT64_MAX. */
int64_t ops_result_next(const struct core *c);

/* ---- read.c ----------------------------------------------------------- */

void ops_peek(struct core *c, struct face_ctx *ctx, const struct msg_req *req);
void ops_list(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct msg_req *req);
void ops_errors(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req);
/* groups: a tube's fair groups (or every tube's) by backlog. */
void ops_groups(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req);
void ops_stats_hourly(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req);
void ops_history(
    struct core *c, struct face_ctx *ctx, const struct msg_req *req);

/* ---- stats.c ---------------------------------------------------------- */

void ops_stats(struct core *c, struct face_ctx *ctx, const struct msg_req *req);

/* ---- node.c ----------------------------------------------------------- */

/* A snapshot on demand: answered once it is published. */
void ops_snapshot(struct core *c, struct face_ctx *ctx);

/* Refuses write `op` on a node that does not take writes (a follower, a
 * fenced or handing-over leader), saying why and where the leader is. */
void ops_refuse_write(struct core *c, struct face_ctx *ctx, uint8_t op);

/* ---- job.c ------------------------------------------------------------ */

/* MSG_OP_JOB, the beanstalk face's operations on one task. */
void ops_job(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct msg_req *req);

/* ---- auth.c ----------------------------------------------------------- */

/* Whether the request may go on to its op; else it is answered (an auth
 * request is answered here). When it goes on: *tok, the token it came
 * with (NULL without --auth), and *hidden, a task it names that the token
 * may not see (0: none), which the dispatcher hides from the queue for
 * the request. */
bool ops_auth_check(struct core *c, struct face_ctx *ctx, uint32_t session,
    const struct msg_req *req, const struct tokens_entry **tok,
    uint64_t *hidden);

/* Whether task `id` is of a tube token `tok` (NULL: any) may not see:
 * answered as if it did not exist. */
bool ops_auth_hidden(
    struct core *c, const struct tokens_entry *tok, uint64_t id);

/* Drops the unknown token's answer of a client session that is gone. */
void ops_auth_drop(struct core *c, uint32_t session);

#endif
