/* t_fake - see t_fake.h. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "t_fake.h"
#include "t_lib.h"

#include "sluice.h"

#define S(lit) ((struct msg_str) { lit, sizeof(lit) - 1 })

static atomic_uint nfakes; /* numbers the ipc paths */

static const struct msg_kv kvs[] = { { S("puts"), 3 }, { S("acks"), 2 } };
static const struct msg_kv node_kvs[] = { { S("uptime_ms"), 99 } };

/* The cluster as node "b" sees it: every role, both flags. */
static const struct msg_member members[] = {
	{ .name = S("a"),
	    .client = S("tcp://10.0.0.1:7711"),
	    .repl = S("tcp://10.0.0.1:7712"),
	    .role = MSG_NODE_LEADER,
	    .flags = MSG_MEMBER_LEASE,
	    .epoch = 3,
	    .durable_lsn = 1234,
	    .lease_until = T_FAKE_LEASE_UNTIL,
	    .age_ms = 300 },
	{ .name = S("b"),
	    .client = S(T_FAKE_NEW_LEADER),
	    .repl = S("tcp://10.0.0.2:7712"),
	    .role = MSG_NODE_FOLLOWER,
	    .flags = MSG_MEMBER_SYNC,
	    .epoch = 3,
	    .durable_lsn = 1230,
	    .lag_records = 4,
	    .age_ms = 1100 },
	{ .name = S("c"), .role = MSG_NODE_CANDIDATE, .epoch = 2 },
};

static void
canned_task(struct msg_task *t, uint64_t id)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->lease = 1000 + id;
	t->state = MSG_ST_TAKEN;
	t->priority = 1024;
	t->attempts = 1;
	t->ttr = 60000;
	t->run_at = 1700000000000ULL;
	t->deadline = 1700000060000ULL;
	t->size = 5;
	t->tube = S("emails");
	t->key = id == 2 ? S("k2") : S("");
	t->last_error = id == 2 ? S("boom") : S("");
	t->payload = S("hello");
}

static void
copy_str(char *dst, size_t n, struct msg_str s)
{
	snprintf(dst, n, "%.*s", (int)s.len, s.p);
}

/* The index of a "work" task by id, or -1. */
static int
work_index(const struct t_fake *f, uint64_t id)
{
	return id > 100 && id <= 100 + (uint64_t)f->nwork ? (int)(id - 101)
	                                                  : -1;
}

/* A take: from "work", canned tasks, or none ("empty"). Returns the count;
 * sets *sleep_ms when it should answer "nothing" only after a while. */
static uint32_t
answer_take(struct t_fake *f, const struct msg_req *q, struct msg_task *v,
    int *sleep_ms)
{
	struct msg_iter it = q->take.it;
	bool empty = false, work = false, binary = false;
	struct msg_str s;
	uint32_t n = 0;

	f->last_take_max = q->take.max;
	f->last_take_detach = q->take.detach;
	f->last_take_strict = q->take.strict;
	f->last_tubes[0] = '\0';
	while (msg_next_str(&it, &s)) {
		size_t l = strlen(f->last_tubes);

		snprintf(f->last_tubes + l, sizeof(f->last_tubes) - l, "%s%.*s",
		    l ? "," : "", (int)s.len, s.p);
		empty |= s.len == 5 && memcmp(s.p, "empty", 5) == 0;
		work |= s.len == 4 && memcmp(s.p, "work", 4) == 0;
		binary |= s.len == 6 && memcmp(s.p, "binary", 6) == 0;
	}
	if (work) {
		while (n < q->take.max && n < 3 && f->work_next < f->nwork) {
			int i = f->work_next++;

			canned_task(&v[n], 101 + (uint64_t)i);
			v[n].lease = 5000 + (uint64_t)i;
			v[n].tube = S("work");
			v[n].ttr = f->work_ttr ? f->work_ttr : 60000;
			v[n].payload = msg_cstr(f->work[i]);
			v[n].size = (uint32_t)v[n].payload.len;
			n++;
		}
		if (n == 0)
			*sleep_ms =
			    q->take.wait < 100 ? (int)q->take.wait : 100;
		return n;
	}
	if (empty)
		return 0;
	n = q->take.max < 3 ? q->take.max : 3;
	for (uint32_t i = 0; i < n; i++) {
		canned_task(&v[i], i + 1);
		if (binary) {
			v[i].payload = S("\xff\x00\x01");
			v[i].size = 3;
		}
	}
	return n;
}

/* Records what a lease operation carried. */
static void
note_lease_op(struct t_fake *f, const struct msg_req *q)
{
	int i = work_index(f, q->lease.id); /* id first in each of them */

	/* id, lease, force: the same first fields in each of them */
	f->last_lease = q->lease.lease;
	f->last_force = q->lease.force;
	if (i < 0)
		return;
	if (q->op == MSG_OP_ACK)
		f->acked[i] = true;
	else if (q->op == MSG_OP_FAIL)
		copy_str(f->failed[i], sizeof(f->failed[i]), q->fail.error);
	else if (q->op == MSG_OP_TOUCH)
		f->touches[i]++;
}

/* Records what the request carried, and answers success for its op. */
static void
answer_echo(
    struct t_fake *f, const struct msg_req *q, struct buf *b, int *sleep_ms)
{
	struct msg_rep r = { .op = q->op };
	struct msg_task tasks[3];
	struct msg_put_res res[MSG_BATCH_MAX];
	struct msg_tube_stats ts[1];
	struct msg_error_count ec[2] = { { S("timeout"), 4 }, { S(""), 1 } };
	struct msg_iter it;
	struct msg_put p;
	uint32_t i = 0;

	pthread_mutex_lock(&f->mtx);
	switch (q->op) {
	case MSG_OP_PUT:
		f->last_put = q->put;
		copy_str(
		    f->last_put_tube, sizeof(f->last_put_tube), q->put.tube);
		copy_str(f->last_put_key, sizeof(f->last_put_key), q->put.key);
		copy_str(
		    f->last_payload, sizeof(f->last_payload), q->put.payload);
		r.put.created = q->put.key.len == 0;
		r.put.id = 42;
		break;
	case MSG_OP_PUT_BATCH:
		f->last_batch_n = q->put_batch.n;
		it = q->put_batch.it;
		while (msg_next_put(&it, &p)) {
			f->batch_items++;
			f->batch_hash = t_fake_hash(
			    f->batch_hash, p.payload.p, p.payload.len);
			/* payloads or keys starting with 'x' fail alone */
			bool bad = (p.key.len && p.key.p[0] == 'x') ||
			    (p.payload.len && p.payload.p[0] == 'x');

			res[i].status = bad ? SLUICE_EEXIST : 0;
			res[i].created = !bad;
			res[i].id = bad ? 0 : 100 + i;
			i++;
		}
		r.put_batch.n = i;
		r.put_batch.items = res;
		break;
	case MSG_OP_TAKE:
		r.tasks.n = answer_take(f, q, tasks, sleep_ms);
		r.tasks.tasks = tasks;
		break;
	case MSG_OP_LIST:
		r.tasks.n = 2;
		canned_task(&tasks[0], 1);
		canned_task(&tasks[1], 2);
		tasks[0].state = tasks[1].state = MSG_ST_BURIED;
		if (!q->list.payloads)
			tasks[0].payload = tasks[1].payload = S("");
		r.tasks.tasks = tasks;
		break;
	case MSG_OP_ACK:
	case MSG_OP_RELEASE:
	case MSG_OP_FAIL:
	case MSG_OP_TOUCH:
	case MSG_OP_BURY:
		note_lease_op(f, q);
		r.after.id = q->lease.id;
		r.after.state = q->op == MSG_OP_ACK ? MSG_ST_NONE
		    : q->op == MSG_OP_FAIL          ? MSG_ST_DELAYED
		    : q->op == MSG_OP_TOUCH         ? MSG_ST_TAKEN
		    : q->op == MSG_OP_BURY          ? MSG_ST_BURIED
		                                    : MSG_ST_READY;
		r.after.run_at = q->op == MSG_OP_FAIL ? 5000 : 0;
		r.after.deadline = q->op == MSG_OP_TOUCH ? 7000 : 0;
		break;
	case MSG_OP_KICK_ID:
		r.after.id = q->id;
		r.after.state = MSG_ST_READY;
		break;
	case MSG_OP_KICK:
		r.count = q->kick.n;
		break;
	case MSG_OP_FLUSH:
		r.count = 7;
		break;
	case MSG_OP_DELETE_KEY:
		r.id = 17;
		break;
	case MSG_OP_PAUSE:
		r.until = q->pause.duration ? 1700000000000ULL : 0;
		break;
	case MSG_OP_SNAPSHOT:
		r.lsn = 555;
		break;
	case MSG_OP_PROMOTE:
		r.epoch = 4;
		break;
	case MSG_OP_PEEK:
	case MSG_OP_PEEK_KEY:
	case MSG_OP_PEEK_NEXT:
		canned_task(&r.task, 2);
		if (q->op == MSG_OP_PEEK)
			r.task.id = q->id;
		break;
	case MSG_OP_STATS:
		r.stats.role = MSG_ROLE_LEADER;
		r.stats.epoch = 1;
		r.stats.lsn = 10;
		r.stats.durable_lsn = 9;
		r.stats.totals.ready = 5;
		r.stats.totals.buried = 1;
		r.stats.totals.more.n = 2;
		r.stats.totals.more.kvs = kvs;
		r.stats.more.n = 1;
		r.stats.more.kvs = node_kvs;
		memset(ts, 0, sizeof(ts));
		ts[0].name = S("emails");
		ts[0].ready = 5;
		ts[0].buried = 1;
		ts[0].more.n = 2;
		ts[0].more.kvs = kvs;
		r.stats.ntubes = 1;
		r.stats.tubes = ts;
		break;
	case MSG_OP_ERRORS:
		r.errors.n = 2;
		r.errors.errors = ec;
		break;
	case MSG_OP_CLUSTER:
		r.cluster.cluster = S("prod");
		r.cluster.node = S("b");
		r.cluster.leader = S("a");
		r.cluster.ttl_ms = 10000;
		r.cluster.etcd_error =
		    S("etcd 127.0.0.1:2379: connection refused");
		r.cluster.n = 3;
		r.cluster.members = members;
		break;
	case MSG_OP_SWITCHOVER:
		copy_str(
		    f->last_node, sizeof(f->last_node), q->switchover.node);
		f->last_switchover_timeout = q->switchover.timeout_ms;
		r.switchover.leader = S(T_FAKE_NEW_LEADER);
		r.switchover.epoch = 4;
		break;
	}
	pthread_mutex_unlock(&f->mtx);
	assert_int_equal(msg_encode_rep(b, &r), 0);
}

static void *
fake_run(void *arg)
{
	struct t_fake *f = arg;
	struct buf b;

	buf_init(&b);
	while (!atomic_load(&f->stop)) {
		nng_msg *m, *rep;
		struct msg_req q;
		int mode, rc, sleep_ms = 0, eop;

		if (nng_recvmsg(f->sock, &m, 0) != 0)
			continue; /* receive timeout: look at stop again */
		atomic_fetch_add(&f->nreq, 1);
		mode = atomic_load(&f->mode);
		rc = msg_decode_req(nng_msg_body(m), nng_msg_len(m), NULL, &q);
		if (rc == 0)
			atomic_fetch_add(&f->nop[q.op], 1);
		if (mode == T_FAKE_DROP_ONCE) {
			atomic_store(&f->mode, atomic_load(&f->after_drop));
			mode = T_FAKE_DROP;
		}
		if (mode == T_FAKE_DROP) {
			nng_pipe_close(nng_msg_get_pipe(m));
			nng_msg_free(m);
			continue;
		}
		if (mode == T_FAKE_SILENT) {
			nng_msg_free(m);
			continue;
		}
		eop = atomic_load(&f->error_op);
		buf_reset(&b);
		if (rc != 0)
			msg_encode_err(&b,
			    msg_req_op(nng_msg_body(m), nng_msg_len(m)), rc,
			    "bad request", NULL);
		else if (mode == T_FAKE_NOTLEADER)
			msg_encode_err(&b, q.op, SLUICE_ENOTLEADER,
			    "not leader", f->leader);
		else if (mode == T_FAKE_ERROR && (eop == 0 || eop == q.op))
			msg_encode_err(&b, q.op, atomic_load(&f->status),
			    "lease 7 is not the current one", NULL);
		else if (mode == T_FAKE_GARBAGE)
			buf_put(&b, "hello", 5);
		else
			answer_echo(f, &q, &b, &sleep_ms);
		sleep_ms += atomic_load(&f->delay_ms);
		if (sleep_ms > 0)
			usleep((useconds_t)sleep_ms * 1000);
		nng_msg_free(m);
		if (nng_msg_alloc(&rep, b.len) == 0) {
			memcpy(nng_msg_body(rep), b.data, b.len);
			if (nng_sendmsg(f->sock, rep, 0) != 0)
				nng_msg_free(rep);
		}
	}
	buf_fini(&b);
	return NULL;
}

struct t_fake *
t_fake_start(enum t_fake_mode mode)
{
	struct t_fake *f = calloc(1, sizeof(*f));
	nng_listener l;
	nng_sockaddr sa;

	assert_non_null(f);
	pthread_mutex_init(&f->mtx, NULL);
	atomic_store(&f->mode, mode);
	assert_int_equal(nng_rep0_open(&f->sock), 0);
	assert_int_equal(nng_socket_set_ms(f->sock, NNG_OPT_RECVTIMEO, 20), 0);
	assert_int_equal(
	    nng_socket_set_size(f->sock, NNG_OPT_RECVMAXSZ, MSG_SIZE_MAX), 0);
	assert_int_equal(nng_listen(f->sock, "tcp://127.0.0.1:0", &l, 0), 0);
	assert_int_equal(nng_listener_get_addr(l, NNG_OPT_LOCADDR, &sa), 0);
	snprintf(f->url, sizeof(f->url), "tcp://127.0.0.1:%u",
	    (unsigned)ntohs(sa.s_in.sa_port));
	snprintf(f->ipc_url, sizeof(f->ipc_url),
	    "ipc:///tmp/sluice-fake-%ld-%u.ipc", (long)getpid(),
	    atomic_fetch_add(&nfakes, 1));
	assert_int_equal(nng_listen(f->sock, f->ipc_url, NULL, 0), 0);
	assert_int_equal(pthread_create(&f->thread, NULL, fake_run, f), 0);
	return f;
}

void
t_fake_stop(struct t_fake *f)
{
	atomic_store(&f->stop, true);
	pthread_join(f->thread, NULL);
	nng_close(f->sock);
	pthread_mutex_destroy(&f->mtx);
	free(f);
}

uint64_t
t_fake_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;

	if (h == 0)
		h = 14695981039346656037ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ULL;
	return (h ^ 0xff) * 1099511628211ULL;
}

void
t_fake_add_work(struct t_fake *f, const char *payload)
{
	pthread_mutex_lock(&f->mtx);
	assert_true(f->nwork < T_FAKE_WORK_MAX);
	snprintf(f->work[f->nwork++], sizeof(f->work[0]), "%s", payload);
	pthread_mutex_unlock(&f->mtx);
}
