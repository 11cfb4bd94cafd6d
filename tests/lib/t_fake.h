/* t_fake - a tiny sluice server for tests that have no real one: an nng REP
 * socket on 127.0.0.1 (a free port) and on an ipc:// path, and a thread that
 * decodes each request with the real codec and answers a canned reply. Modes
 * make it play a follower, drop the connection, stay silent or answer garbage.
 * It records what requests carried, for the test to check.
 *
 * The tube "work" is a small queue the test fills (t_fake_add_work): takes
 * from it hand those tasks out once each; acks, fails and touches are
 * recorded. Other takes get canned tasks (none from the tube "empty", a
 * binary payload from the tube "binary"). cluster answers node "b"'s view
 * of three nodes ("a" leads, its lease ending at T_FAKE_LEASE_UNTIL) and
 * an etcd error; a switchover names "b" the leader at T_FAKE_NEW_LEADER,
 * epoch 4.
 *
 * Link with the codec (sluice_proto or the client objects), nng and
 * pthreads. */
#ifndef SLUICE_T_FAKE_H
#define SLUICE_T_FAKE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <nng/nng.h>

#include "proto/msg.h"

enum t_fake_mode {
	T_FAKE_ECHO,      /* a canned success for every op */
	T_FAKE_NOTLEADER, /* ENOTLEADER naming `leader` (may be empty) */
	T_FAKE_DROP,      /* close the connection instead of answering */
	T_FAKE_DROP_ONCE, /* drop the first request, then as `after_drop`
	                     (T_FAKE_ECHO unless set) */
	T_FAKE_SILENT,    /* never answer */
	T_FAKE_GARBAGE,   /* answer bytes that are not a reply */
	T_FAKE_ERROR,     /* answer `status`, for `error_op` (0: every op) */
};

enum { T_FAKE_WORK_MAX = 32 };

#define T_FAKE_NEW_LEADER  "tcp://10.0.0.2:7711"
#define T_FAKE_LEASE_UNTIL 1700000010000LL

struct t_fake {
	nng_socket sock;
	char url[64];     /* tcp://127.0.0.1:PORT */
	char ipc_url[96]; /* the same socket also listens here */
	pthread_t thread;
	atomic_bool stop;
	atomic_int mode;
	atomic_int nreq;             /* requests received */
	atomic_int nop[MSG_OP_END_]; /* per op */
	atomic_int delay_ms;         /* before each reply */
	atomic_int status;           /* T_FAKE_ERROR's */
	atomic_int error_op;         /* T_FAKE_ERROR's op; 0: every op */
	char leader[64];             /* T_FAKE_NOTLEADER's; set before use */
	atomic_int after_drop;       /* T_FAKE_DROP_ONCE's mode after */

	/* Under mtx: what requests carried. */
	pthread_mutex_t mtx;
	struct msg_put last_put; /* numbers only: its strings are gone */
	char last_put_tube[256], last_put_key[256], last_payload[256];
	uint32_t last_take_max;
	bool last_take_detach;
	bool last_take_strict;
	char last_tubes[256];
	uint32_t last_batch_n;
	uint64_t batch_items; /* items of every batch put so far */
	uint64_t batch_hash;  /* t_fake_hash over their payloads, in order */
	uint64_t last_lease;  /* of the last ack/release/fail/touch/bury */
	bool last_force;      /* its force flag */
	char last_node[80];   /* the last switchover's node */
	uint32_t last_switchover_timeout;

	/* Under mtx: the "work" tube. Task i has id 101 + i. */
	char work[T_FAKE_WORK_MAX][64];
	int nwork, work_next;
	uint64_t work_ttr; /* ms; 0: 60000 */
	bool acked[T_FAKE_WORK_MAX];
	char failed[T_FAKE_WORK_MAX][128]; /* fail's text; "" if none */
	int touches[T_FAKE_WORK_MAX];
};

/* Starts a fake in `mode`. Never fails (asserts). */
struct t_fake *t_fake_start(enum t_fake_mode mode);

/* Stops and frees it; its port is closed when this returns. */
void t_fake_stop(struct t_fake *f);

/* FNV-1a of `n` bytes and a separator, continuing from `h` (start: 0). */
uint64_t t_fake_hash(uint64_t h, const void *p, size_t n);

/* Appends a task with `payload` to the "work" tube. */
void t_fake_add_work(struct t_fake *f, const char *payload);

#endif
