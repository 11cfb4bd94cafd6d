/* face_beanstalk - the beanstalk face of sluiced: a TCP listener speaking
 * beanstalkd 1.12's text protocol (docs/beanstalk.md), served by the same core,
 * queue and log as nng clients.
 *
 * Its connections are sockets of the core thread (face/conn.h); each
 * command becomes a wire request posted to the core (events_post_local)
 * (or is answered by the face alone: use, watch, ignore, list-tube-used,
 * list-tubes-watched, quit), and replies leave in command order. */
#ifndef SLUICE_SERVER_FACE_BEANSTALK_BEANSTALK_H
#define SLUICE_SERVER_FACE_BEANSTALK_BEANSTALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct face_beanstalk;
struct conns;
struct events;

struct face_beanstalk_config {
	const char *addr;    /* "HOST:PORT", e.g. "127.0.0.1:11300" */
	size_t max_job;      /* max-job-size: a put's limit here */
	size_t payload_max;  /* --max-payload: the largest job a reply holds */
	uint32_t max_ttr_ms; /* longer ttrs are cut to this */
	uint64_t seg_size;   /* shown as binlog-max-size */
	/* the server's drain mode (SIGUSR1), read by stats on the core
	 * thread; NULL: never draining */
	const bool *draining;
};

/* Listens on cfg->addr among the core's sockets `cs`; commands go to
 * `net` as local posts (the face runs on the core thread). Returns 0,
 * -errno (the address does not resolve or bind: -EADDRNOTAVAIL,
 * -EADDRINUSE, ...), or -EINVAL for an address without a port. */
int face_beanstalk_open(struct face_beanstalk **out, struct events *net,
    struct conns *cs, const struct face_beanstalk_config *cfg);

/* Frees the face; call after conns_close (its connections refer to it).
 * Accepts NULL. */
void face_beanstalk_free(struct face_beanstalk *bs);

#endif
