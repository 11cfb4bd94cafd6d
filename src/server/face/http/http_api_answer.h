/* http_api_answer - the task API's answers: the core's answer to a
 * request written in the JSON of `sluice ... --json` (its shape chosen
 * by the route that posted it), and the API's error object
 * {"error":NAME,"code":N,"message":TEXT} with the HTTP status of its
 * code. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_API_ANSWER_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_API_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <nng/nng.h>

#include "proto/msg.h"
#include "server/face/http/http_api_batch.h"

struct msg_rep;

/* What the answer to a request looks like. */
enum http_api_shape {
	SH_PUT,       /* {"id":N,"created":B} */
	SH_PUT_BATCH, /* {"results":[{"id":N,"created":B}|ERROR,...]} */
	SH_ITEMS,     /* ack/delete batch: {"results":[{"id":N}|ERROR]} */
	SH_TASKS,     /* {"tasks":[...]} */
	SH_PAGE,      /* {"tasks":[...],"next":ID|null}: a list in id order */
	SH_KEY_TASKS, /* peek by key as {"tasks":[]} or one of `tube` */
	SH_TASK,      /* one task */
	SH_AFTER,     /* json_after */
	SH_COUNT,     /* {"<count_key>":N} */
	SH_DELETED,   /* {"deleted":1,"id":N} */
	SH_STATS,
	SH_ERRORS,
	SH_GROUPS, /* json_groups: a tube's fair groups by backlog */
	SH_HOURS,
	SH_CONF,          /* a tube's settings */
	SH_PAUSE,         /* {"paused_until":MS} */
	SH_LSN,           /* {"lsn":N} */
	SH_CLUSTER,       /* json_cluster: the members as the node sees them */
	SH_GROUP,         /* a group's limits (http_api_group.h) */
	SH_SCHEDULE,      /* json_schedule: the one schedule of the reply */
	SH_SCHEDULES,     /* {"schedules":[...]} */
	SH_SCHED_DELETED, /* {"deleted":true} */
	SH_RESULT,        /* wait: {"id":N,"state":S,"final":B,...} */
	SH_CANCEL,  /* one cancel: {"cancelled":true,"id":N}, or its error */
	SH_BATCH,   /* a batch (http_api_batches.h) */
	SH_BATCHES, /* {"batches":[...],"total":N} */
};

/* The answer's context, posted with its request (http_post's `arg`):
 * one allocation, freed by http.c after the answer. */
struct http_api_ans {
	enum http_api_shape shape;
	const char *count_key;
	uint64_t id;    /* SH_DELETED */
	uint32_t limit; /* SH_PAGE: a full page has more after it */
	char tube[MSG_TUBE_MAX + 1];
	uint32_t n;    /* batch items, in the request's order */
	uint64_t *ids; /* SH_ITEMS: each item's id */
	struct http_api_batch_err *errs; /* SH_PUT_BATCH: each item's
	                                    refusal */
	union { /* room for n of either; ids or errs use it */
		uint64_t id;
		struct http_api_batch_err err;
	} items[];
};

/* A new answer's context of `shape`, with room for `items` batch items
 * (their ids or their refusals); NULL (and `aio` answered 500) when out
 * of memory. */
struct http_api_ans *http_api_ans_new(
    nng_aio *aio, enum http_api_shape shape, size_t items);

/* The http_answer_fn of every task API request, `arg` its
 * struct http_api_ans. */
void http_api_answer(nng_aio *aio, const struct msg_rep *rep, void *arg);

/* A batch put's results into f: the core's for the items it got (`rep`,
 * NULL when it got none), in order, merged with those refused here. */
void http_api_put_results(
    FILE *f, const struct http_api_ans *a, const struct msg_rep *rep);

/* Answers `len` bytes of JSON at `body` with `status`. */
void http_api_json(nng_aio *aio, uint16_t status, const char *body, size_t len);

/* Answers the error object of `code` saying `msg`, with the code's
 * status. */
void http_api_error(nng_aio *aio, int code, const char *msg);

/* Refuses the request before its route runs, with `status` and the API's
 * error object of `code` saying `msg`; with `close` the connection is
 * closed after the answer (its body is left unread). */
void http_api_refuse(
    nng_aio *aio, uint16_t status, int code, const char *msg, bool close);

/* http_api_refuse with 405 Method Not Allowed and its `allow` header. */
void http_api_refuse_allow(
    nng_aio *aio, int code, const char *msg, const char *allow, bool close);

#endif
