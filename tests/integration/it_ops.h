/* it_ops - every operation a client may send, as a table a test walks:
 * over TLS (test_tls), as each role of --auth (test_auth), or over any
 * other transport.
 *
 * A step of the walk has a tube of its own (PREFIX.N, so a token for
 * `PREFIX*` covers it) and three parts:
 *  - prep: an admin's handle makes what the operation needs (tasks ready,
 *    taken with a lease, buried, a tube setting);
 *  - run: the handle under test sends the operation and keeps what it
 *    answered in the step;
 *  - check: the admin's handle looks at the server and asserts that the
 *    operation did what it says (and that the answer said so).
 * An operation a lone leader without --etcd cannot do (promote, follow,
 * cluster, switchover) has the error it must answer in `want`.
 *
 * it_op_state() reads what a step's operation could change, so that a
 * test can assert that a refused one changed nothing. */
#ifndef SLUICE_IT_OPS_H
#define SLUICE_IT_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "sluice.h"

/* One step: its tube, what prep made, what run got. */
struct it_opx {
	char tube[64];
	uint64_t id[2]; /* tasks prep made (the first with key `tube`) */
	uint64_t lease[2];
	uint64_t n, v;         /* counts and values the operation answered */
	struct sluice_task *t; /* tasks it answered (freed by it_opx_free) */
	size_t nt;
};

struct it_op {
	const char *name;
	uint8_t op; /* the wire op (MSG_OP_*) the server sees */
	int want;   /* its result when allowed: 0, or the error of a lone
	               leader without --etcd */
	void (*prep)(struct sluice_client *adm, struct it_opx *x);
	int (*run)(struct sluice_client *c, struct it_opx *x);
	void (*check)(struct sluice_client *adm, struct it_opx *x);
};

extern const struct it_op it_ops[];
extern const size_t it_nops;

/* A step `n` on tube PREFIX.n, prepared by `adm`. */
void it_opx_init(struct it_opx *x, struct sluice_client *adm,
    const struct it_op *op, const char *prefix, int n);
void it_opx_free(struct it_opx *x);

/* Runs `op` as `c` and asserts its result and effect (checked through
 * `adm`, which may be `c`). The step is prepared and freed here. */
void it_op_ok(const struct it_op *op, struct sluice_client *c,
    struct sluice_client *adm, const char *prefix, int n);

/* What an operation of step `x` could change: the node's role, epoch and
 * snapshot, the tube's counts, pause and settings, and its tasks. */
struct it_op_state {
	/* the node's role and epoch, not its LSN: the walk's earlier tubes
	 * keep logging by themselves (a lease's ttr expiring) */
	int role;
	uint64_t epoch, snapshot_at, paused_until;
	uint64_t ready, delayed, taken, buried;
	struct sluice_tube_conf conf;
	struct {
		int state;
		uint32_t priority, attempts;
		uint64_t deadline, run_at;
	} task[2];
};
void it_op_state(
    struct sluice_client *adm, const struct it_opx *x, struct it_op_state *s);

#endif
