/* reserve - the arithmetic of the log's reservation; the rule is in
 * reserve.h and docs/log-format.md. The sizes are measured, not written
 * down: each record is encoded with the widest fields it may carry under
 * the reserve, then framed as the log frames it, so a change to a record's
 * layout changes the reservation with it. */
#include <string.h>

#include "log/rec.h"
#include "queue/qrec.h"
#include "server/core/reserve.h"
#include "util/buf.h"

/* Bytes `r` takes in the log: header, body, padding. */
static uint64_t
framed(const struct qrec *r)
{
	struct buf b;
	uint64_t size = 0;

	buf_init(&b);
	if (qrec_encode(r, &b) == 0)
		size = rec_size(b.len);
	buf_fini(&b);
	/* Every record here is valid: a failure is a bug in this file. */
	return size != 0 ? size : rec_size(REC_MAX_BODY);
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* A lease's end of `type` with `outcome`, every field at its widest (a
 * move to a dead-letter tube names the longest tube). */
static uint64_t
end_size(uint16_t type, uint8_t reason, uint8_t outcome, const char *text,
    size_t text_len)
{
	static char tube[QREC_NAME_MAX];
	struct qrec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.u.end.id = UINT64_MAX;
	r.u.end.lease = UINT64_MAX;
	r.u.end.reason = reason;
	r.u.end.outcome = outcome;
	if (outcome == QREC_WAIT)
		r.u.end.run_at = QREC_TIME_MAX;
	if ((type == QREC_RELEASE || type == QREC_SETBACK) &&
	    outcome == QREC_WAIT)
		r.u.end.pri = UINT32_MAX;
	if (type == QREC_ACK &&
	    (outcome == QREC_DELETED || outcome == QREC_DONE))
		r.u.end.dedup_ms = UINT32_MAX;
	if (outcome == QREC_DONE) {
		r.u.end.keep_ms = QREC_TIME_MAX;
		r.u.end.max_done = UINT64_MAX;
	}
	r.u.end.text = text;
	r.u.end.text_len = text_len;
	if (outcome == QREC_MOVED) {
		memset(tube, 'x', sizeof(tube));
		r.u.end.to = tube;
		r.u.end.to_len = sizeof(tube);
	}
	return framed(&r);
}

void
reserve_sizes_init(struct reserve_sizes *z)
{
	static char text[RESERVE_ERROR_MAX];
	struct qrec r;
	uint64_t end, release, bury;

	memset(text, 'x', sizeof(text));
	memset(&r, 0, sizeof(r));
	r.type = QREC_TAKE_LEASE;
	r.u.take.id = UINT64_MAX;
	r.u.take.session = UINT64_MAX;
	r.u.take.detached = true;
	r.u.take.lease = UINT64_MAX;
	z->take = framed(&r);

	memset(&r, 0, sizeof(r));
	r.type = QREC_KICK;
	r.u.kick.id = UINT64_MAX;
	z->kick = framed(&r);

	release = end_size(QREC_RELEASE, QREC_BY_TTR, QREC_WAIT, NULL, 0);
	bury = end_size(QREC_BURY, QREC_BY_TTR, QREC_BURIED, NULL, 0);
	end = end_size(QREC_ACK, QREC_BY_CLIENT, QREC_DELETED, NULL, 0);
	/* an ack that keeps its task as done, with the longest result */
	end = max_u64(end,
	    end_size(QREC_ACK, QREC_BY_CLIENT, QREC_DONE, text,
	        sizeof(text) < QREC_RESULT_MAX ? sizeof(text)
	                                       : QREC_RESULT_MAX));
	end = max_u64(end, release);
	end = max_u64(end, bury);
	end = max_u64(end,
	    end_size(QREC_FAIL, QREC_BY_CLIENT, QREC_WAIT, text, sizeof(text)));
	end = max_u64(end,
	    end_size(
	        QREC_FAIL, QREC_BY_CLIENT, QREC_BURIED, text, sizeof(text)));
	/* a lost lease or a bury with a text (cut as a fail's) */
	end = max_u64(end,
	    end_size(QREC_SETBACK, QREC_BY_TTR, QREC_WAIT, text, sizeof(text)));
	end = max_u64(end,
	    end_size(
	        QREC_SETBACK, QREC_BY_TTR, QREC_BURIED, text, sizeof(text)));
	/* buried into the tube's dead-letter tube instead: the tube's name
	 * takes its room from a fail's or a bury's text (reserve_error_len);
	 * a lost lease's reason is short (RESERVE_WHY_MAX) and is not cut */
	end = max_u64(end,
	    end_size(QREC_FAIL, QREC_BY_CLIENT, QREC_MOVED, text,
	        sizeof(text) - QREC_NAME_MAX));
	end = max_u64(end,
	    end_size(QREC_SETBACK, QREC_BY_CLIENT, QREC_MOVED, text,
	        sizeof(text) - QREC_NAME_MAX));
	end = max_u64(end,
	    end_size(
	        QREC_SETBACK, QREC_BY_TTR, QREC_MOVED, text, RESERVE_WHY_MAX));
	bury = max_u64(
	    bury, end_size(QREC_BURY, QREC_BY_TTR, QREC_MOVED, NULL, 0));
	end = max_u64(end, bury);
	/* beanstalk's bury with a new priority: a release, then a bury */
	end = max_u64(end, release + bury);
	/* a delete of a taken task ends its lease too */
	memset(&r, 0, sizeof(r));
	r.type = QREC_DELETE;
	r.u.del.id = UINT64_MAX;
	r.u.del.dedup_ms = UINT32_MAX;
	z->end = max_u64(end, framed(&r));
}

/* a * b + acc, saturating */
static uint64_t
mul_add(uint64_t acc, uint64_t a, uint64_t b)
{
	if (a != 0 && b > (UINT64_MAX - acc) / a)
		return UINT64_MAX;
	return acc + a * b;
}

uint64_t
reserve_floor(const struct reserve_sizes *z, const struct reserve_counts *n)
{
	/* One take more: a retry that starts a task over (a recurring
	 * task's ack, a move) is checked against the floor before its own
	 * record adds that task's next take to it. */
	uint64_t sum = z->take, waiting = z->take + z->end;

	sum = mul_add(sum, n->ready, waiting);
	sum = mul_add(sum, n->delayed, waiting);
	sum = mul_add(sum, n->taken, z->end);
	sum = mul_add(sum, n->buried, z->kick + waiting);
	return sum;
}

uint64_t
reserve_pool(uint64_t max_bytes)
{
	if (max_bytes != 0 && max_bytes / RESERVE_POOL_DIV < RESERVE_POOL)
		return max_bytes / RESERVE_POOL_DIV;
	return RESERVE_POOL;
}

uint64_t
reserve_margin(const struct reserve_sizes *z, uint64_t pool)
{
	return pool + z->take + z->end;
}

size_t
reserve_error_len(const char *text, size_t len, size_t max)
{
	size_t n = len;

	if (n <= max)
		return n;
	n = max;
	/* Back off continuation bytes (10xxxxxx): the cut falls before the
	 * character they belong to. At most 3 in valid UTF-8. */
	for (int i = 0;
	     i < 3 && n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80; i++)
		n--;
	return n;
}
