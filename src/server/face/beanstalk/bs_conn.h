/* bs_conn - what the files of the beanstalk face share (beanstalk.c
 * the face and its connections, bs_cmd.c the commands, bs_reply.c the
 * translation of the core's answers, bs_stats.c the YAML): the face, a
 * connection, a command in its FIFO. Private to those files; the
 * server sees beanstalk.h. Everything runs on the core thread. */
#ifndef SLUICE_SERVER_FACE_BEANSTALK_BS_CONN_H
#define SLUICE_SERVER_FACE_BEANSTALK_BS_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nng/nng.h>

#include "proto/msg.h"
#include "server/face/beanstalk/beanstalk.h"
#include "server/face/beanstalk/bs_proto.h"
#include "server/face/events.h"
#include "server/face/face.h"
#include "util/buf.h"

struct bs_conn;

/* One command of a connection. */
struct bs_req {
	struct bs_req *next; /* the connection's FIFO */
	struct bs_conn *conn;
	struct face_ctx ctx; /* face = &bs_face */
	struct event ev;     /* the posted request */
	struct bs_cmd cmd;   /* strings in it are not valid after parse */
	char tube[BS_NAME_MAX + 1]; /* the command's tube, beanstalk form */
	size_t tube_len;
	bool posted;   /* the core holds it */
	bool done;     /* `text` is the reply */
	bool capped;   /* reserve: its wait stops at a DEADLINE_SOON */
	int64_t until; /* reserve: when its own wait ends (monotonic ms;
	                * 0 until posted) */
	bool bulky;    /* answered with a job's body (counted in nbulky) */
	int step;      /* pause-tube: 0 looks the tube up, 1 pauses it */
	struct buf text;
};

struct bs_held {
	uint64_t id;
	int64_t deadline; /* unix µs */
};

struct bs_name {
	char s[BS_NAME_MAX + 1];
	size_t len;
};

struct bs_conn {
	struct face_beanstalk *bs;
	struct conn *conn;
	struct bs_conn *next, *prev; /* every connection */
	uint32_t session;
	struct bs_parser ps;
	bool eof;     /* out of memory: close */
	bool quit;    /* quit: close once the replies before it are sent */
	bool closed;  /* the socket closed; freed once nothing is held */
	bool waiting; /* a reserve waits in the core */
	bool producer, worker;
	struct bs_req *head, *tail;
	unsigned nreqs;  /* in the FIFO */
	unsigned posted; /* of them, held by the core */
	unsigned nbulky; /* of them, answered with a job's body */
	struct bs_name use;
	struct bs_name *watch;
	size_t nwatch, watch_cap;
	struct bs_held *held;
	size_t nheld, held_cap;
};

/* The counters of the stats command (beanstalkd's cmd-*). */
enum { CMD_COUNTERS = BS_KIND_END_ };

struct face_beanstalk {
	struct events *events;
	struct face_beanstalk_config cfg;
	struct bs_conn *conns;
	uint64_t cmds[CMD_COUNTERS];
	uint64_t total_conns, nconns;
	int64_t started_ms;
	char id[17];
	struct buf scratch; /* a request being encoded */
};

/* The face of its requests, for the core (beanstalk.c). */
extern const struct face bs_face;

/* beanstalk.c: moves the replies of the done commands at the head of
 * the FIFO to the output; after any event on a connection, replies,
 * parses, and closes it when done. */
void bs_conn_flush(struct bs_conn *c);
void bs_conn_progress(struct bs_conn *c);

/* bs_cmd.c: a command of `c` at the tail of its FIFO, or NULL (out of
 * memory); its end. */
struct bs_req *bs_req_new(struct bs_conn *c, const struct bs_cmd *cmd);
void bs_req_free(struct bs_req *r);

/* The request's reply is `s`, or the formatted text: it is done. */
void bs_req_text(struct bs_req *r, const char *s);
void bs_req_printf(struct bs_req *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A capped reserve (r->capped) ended with nothing: 1 when a job the
 * connection holds now has no more than beanstalkd's safety margin (1 s)
 * left (the answer is DEADLINE_SOON), 2 when it does not yet and the
 * reserve was posted again for the rest of its wait (no answer yet), 0
 * when its own wait is over (TIMED_OUT). */
int bs_reserve_soon(struct bs_req *r);

/* The deadline of job `id` the connection holds (unix µs), or none. */
void bs_held_set(struct bs_conn *c, uint64_t id, int64_t deadline);
void bs_held_drop(struct bs_conn *c, uint64_t id);

/* One parsed command: its request, answered now or posted. */
void bs_cmd_exec(struct bs_conn *c, const struct bs_cmd *cmd);

/* Posts a reserve, the oldest command of its connection. */
void bs_cmd_reserve(struct bs_req *r);

/* pause-tube's second step: the tube exists, pause it. */
void bs_cmd_repost_pause(struct bs_req *r);

/* Whether the command is answered with a job's body. */
bool bs_cmd_bulky(enum bs_kind k);

/* bs_reply.c: the core's answer `rep` to `r`, as beanstalk text. */
void bs_translate(struct bs_req *r, const struct msg_rep *rep);

/* bs_stats.c: "OK <bytes>\r\n<yaml>\r\n" from a body in `y`. */
void bs_req_yaml(struct bs_req *r, const struct buf *y);

/* Whether `c` watches the tube `p` (beanstalk form). */
bool bs_conn_watches(const struct bs_conn *c, const char *p, size_t len);

/* Whether a tube exists for beanstalk clients: it holds jobs (`ts`, the
 * core's stats of it, may be NULL) or a connection uses or watches it. */
bool bs_tube_exists(const struct face_beanstalk *bs,
    const struct msg_tube_stats *ts, const char *p, size_t len);

/* Calls fn for every tube beanstalk clients see: "default", the core's
 * tubes in creation order, then those only referenced by connections. */
typedef void bs_tube_fn(
    void *arg, const char *name, size_t len, const struct msg_tube_stats *ts);
void bs_each_tube(const struct face_beanstalk *bs, const struct msg_stats *st,
    bs_tube_fn *fn, void *arg);

/* A bs_tube_fn that lists each tube in YAML (`arg`: the struct buf). */
void bs_list_one(
    void *arg, const char *name, size_t len, const struct msg_tube_stats *ts);

/* The YAML of stats, stats-tube and stats-job. */
void bs_stats_yaml(
    struct face_beanstalk *bs, const struct msg_stats *st, struct buf *y);
void bs_tube_yaml(struct face_beanstalk *bs, const char *name, size_t len,
    const struct msg_tube_stats *ts, struct buf *y);
void bs_job_yaml(const struct msg_task *t, struct buf *y);

#endif
