/* bs_reply - the core's answers translated to beanstalk's reply lines:
 * a wire reply (msg.h) decoded and turned into INSERTED, RESERVED,
 * FOUND, DELETED, the YAML of stats (bs_stats.c), or an error line for
 * every status of the core. Some answers lead to a second request (a
 * pause-tube first looks its tube up; a tube the core never had may
 * still exist for beanstalk clients). Called on the core thread by
 * beanstalk.c when the core answers. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nng/nng.h>

#include "proto/msg.h"
#include "server/face/beanstalk/bs_conn.h"
#include "server/face/beanstalk/bs_proto.h"
#include "sluice.h"
#include "util/buf.h"
#include "util/clock.h"

static const char *const reply_lines[] = {
	"NOT_FOUND\r\n",
	"TIMED_OUT\r\n",
	"DEADLINE_SOON\r\n",
};

static void
job_text(struct bs_req *r, const char *word, const struct msg_task *t)
{
	bs_req_printf(r, "%s %" PRIu64 " %zu\r\n", word, t->id, t->payload.len);
	buf_put(&r->text, t->payload.p, t->payload.len);
	buf_put(&r->text, "\r\n", 2);
}

/* Whether the command names a job by its id. */
static bool
names_job(enum bs_kind k)
{
	return k == BS_DELETE || k == BS_RELEASE || k == BS_BURY ||
	    k == BS_TOUCH || k == BS_PEEK || k == BS_KICK_JOB ||
	    k == BS_STATS_JOB || k == BS_RESERVE_JOB;
}

/* An error reply as a beanstalk line: every status of the core, as
 * beanstalkd would answer in its place (docs/beanstalk.md). */
static void
err_text(struct bs_req *r, const struct msg_rep *rep)
{
	switch (rep->status) {
	case SLUICE_ENOTFOUND:
	case SLUICE_ESTALE:
	case SLUICE_ESTATE:
	case SLUICE_EPERM:     /* beanstalkd has no other job to show */
	case SLUICE_EEXIST:    /* not reached: beanstalk jobs have no key */
	case SLUICE_ENOTEMPTY: /* not reached: no tube is deleted here */
	case SLUICE_ECANCELED: /* sluice cancel: the job is no longer the
	                          worker's, as a deleted one */
		bs_req_text(r, reply_lines[0]);
		break;
	case SLUICE_EINVAL:
	case SLUICE_ETUBE:
	case SLUICE_EKEY:
		/* a job command's id no job can have (kick-job 0):
		 * beanstalkd finds no such job */
		bs_req_text(r,
		    names_job(r->cmd.kind) ? reply_lines[0] : "BAD_FORMAT\r\n");
		break;
	case SLUICE_ETIMEDOUT:
		bs_req_text(r, reply_lines[1]);
		break;
	case SLUICE_ESHUTDOWN:
		bs_req_text(r, "DRAINING\r\n");
		break;
	case SLUICE_ETOOBIG:
	case SLUICE_EMSGSIZE:
		bs_req_text(r,
		    r->cmd.kind == BS_PUT ? "JOB_TOO_BIG\r\n"
		                          : "OUT_OF_MEMORY\r\n");
		break;
	case SLUICE_ENOMEM:
	case SLUICE_ENOSPC:
	case SLUICE_ELIMIT:
	case SLUICE_ELOG: /* beanstalkd's when its binlog takes no write */
	case SLUICE_EPAUSED:
		bs_req_text(r, "OUT_OF_MEMORY\r\n");
		break;
	case SLUICE_ENOTLEADER:
		/* not beanstalkd's: a follower names where writes go */
		bs_req_printf(r, "NOT_LEADER %.*s\r\n",
		    (int)rep->err.leader.len, rep->err.leader.p);
		break;
	case SLUICE_EMOVED:
		/* not beanstalkd's: the tube's cluster, the map's revision
		 * and that cluster's client URLs (docs/beanstalk.md) */
		bs_req_printf(r, "MOVED %.*s\r\n", (int)rep->err.leader.len,
		    rep->err.leader.p);
		break;
	default:
		/* EPROTO, ETRUNC, EVERSION, EUNKNOWNOP, ECORRUPT, EEPOCH,
		 * EAUTH: a fault of this server, as beanstalkd means it;
		 * EREPLICA: done here, not known to be on the replicas */
		bs_req_text(r, "INTERNAL_ERROR\r\n");
		break;
	}
}

static void
first_task(const struct msg_rep *rep, struct msg_task *t, bool *have)
{
	struct msg_iter it = rep->tasks.it;

	*have = rep->tasks.n > 0 && msg_next_task(&it, t);
}

/* stats-tube and pause-tube of a tube the core never had (ENOTFOUND): it
 * exists here all the same while a connection uses or watches it. */
static void
unknown_tube(struct bs_req *r)
{
	struct msg_tube_stats none;
	struct buf y;

	if (!bs_tube_exists(r->conn->bs, NULL, r->tube, r->tube_len)) {
		bs_req_text(r, reply_lines[0]);
		return;
	}
	if (r->cmd.kind == BS_PAUSE_TUBE) {
		bs_cmd_repost_pause(r);
		return;
	}
	memset(&none, 0, sizeof(none));
	buf_init(&y);
	bs_tube_yaml(r->conn->bs, r->tube, r->tube_len, &none, &y);
	bs_req_yaml(r, &y);
	buf_fini(&y);
}

/* A reserve cut short by a deadline, with nothing reserved. */
static void
capped_end(struct bs_req *r)
{
	switch (bs_reserve_soon(r)) {
	case 1:
		bs_req_text(r, reply_lines[2]);
		break;
	case 2:
		break; /* posted again */
	default:
		bs_req_text(r, reply_lines[1]);
		break;
	}
}

/* The deadline of a job just reserved or touched, in µs: the core
 * counts its ttr from the moment it answered (queue_lease_restart, struct
 * face's restart_leases), a moment before this one, in whole
 * milliseconds; counted from this moment by the microsecond, it is never
 * before the client can know of the reservation, nor before the core's. */
static int64_t
held_deadline(const struct msg_task *t)
{
	int64_t from_now = clock_now_us() + (int64_t)t->ttr * 1000;
	int64_t core = (int64_t)t->deadline * 1000;

	return from_now > core ? from_now : core;
}

void
bs_translate(struct bs_req *r, const struct msg_rep *rep)
{
	struct bs_conn *c = r->conn;
	struct msg_task t;
	struct buf y;
	bool have;

	if (rep->status == SLUICE_ENOTFOUND && r->step == 0 &&
	    (r->cmd.kind == BS_STATS_TUBE || r->cmd.kind == BS_PAUSE_TUBE)) {
		unknown_tube(r);
		return;
	}
	if (rep->status != 0) {
		if (rep->status == SLUICE_ETIMEDOUT && r->capped)
			capped_end(r);
		else
			err_text(r, rep);
		return;
	}
	buf_init(&y);
	switch (r->cmd.kind) {
	case BS_PUT:
		bs_req_printf(r, "INSERTED %" PRIu64 "\r\n", rep->put.id);
		break;
	case BS_RESERVE:
	case BS_RESERVE_TIMEOUT:
	case BS_RESERVE_JOB:
		first_task(rep, &t, &have);
		if (!have) {
			if (r->capped)
				capped_end(r);
			else
				bs_req_text(r, reply_lines[1]);
			break;
		}
		bs_held_set(c, t.id, held_deadline(&t));
		job_text(r, "RESERVED", &t);
		break;
	case BS_DELETE:
		bs_held_drop(c, r->cmd.id);
		bs_req_text(r, "DELETED\r\n");
		break;
	case BS_RELEASE:
		bs_held_drop(c, r->cmd.id);
		bs_req_text(r, "RELEASED\r\n");
		break;
	case BS_BURY:
		bs_held_drop(c, r->cmd.id);
		bs_req_text(r, "BURIED\r\n");
		break;
	case BS_TOUCH:
		first_task(rep, &t, &have);
		if (have)
			bs_held_set(c, t.id, held_deadline(&t));
		bs_req_text(r, "TOUCHED\r\n");
		break;
	case BS_PEEK:
	case BS_PEEK_READY:
	case BS_PEEK_DELAYED:
	case BS_PEEK_BURIED:
		job_text(r, "FOUND", &rep->task);
		break;
	case BS_KICK:
		bs_req_printf(r, "KICKED %" PRIu64 "\r\n", rep->count);
		break;
	case BS_KICK_JOB:
		bs_req_text(r, "KICKED\r\n");
		break;
	case BS_STATS_JOB:
		bs_job_yaml(&rep->task, &y);
		bs_req_yaml(r, &y);
		break;
	case BS_STATS_TUBE:
	case BS_PAUSE_TUBE: {
		struct msg_iter it = rep->stats.it;
		struct msg_tube_stats ts;

		if (r->cmd.kind == BS_PAUSE_TUBE && r->step == 1) {
			bs_req_text(r, "PAUSED\r\n");
			break;
		}
		if (!msg_next_tube_stats(&it, &ts) ||
		    !bs_tube_exists(c->bs, &ts, r->tube, r->tube_len)) {
			bs_req_text(r, reply_lines[0]);
			break;
		}
		if (r->cmd.kind == BS_PAUSE_TUBE) {
			bs_cmd_repost_pause(r);
			break;
		}
		bs_tube_yaml(c->bs, r->tube, r->tube_len, &ts, &y);
		bs_req_yaml(r, &y);
		break;
	}
	case BS_STATS:
		bs_stats_yaml(c->bs, &rep->stats, &y);
		bs_req_yaml(r, &y);
		break;
	case BS_LIST_TUBES:
		buf_put(&y, "---\n", 4);
		bs_each_tube(c->bs, &rep->stats, bs_list_one, &y);
		bs_req_yaml(r, &y);
		break;
	default:
		bs_req_text(r, "INTERNAL_ERROR\r\n");
		break;
	}
	buf_fini(&y);
}
