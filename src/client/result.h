/* result - decoded replies (which borrow from the reply message) turned into
 * the public result types of sluice.h, each in one allocation the caller
 * frees with one free(): the structs first, then every string and payload
 * they point to, each followed by a NUL. All return 0 or SLUICE_ENOMEM and
 * write their out-parameters only on success. */
#ifndef SLUICE_CLIENT_RESULT_H
#define SLUICE_CLIENT_RESULT_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/msg.h"
#include "sluice.h"

/* The `n` tasks of a decoded list; n 0 gives NULL. */
int result_tasks(const struct msg_tasks *list, struct sluice_task **out);

/* One task, as an array of one. */
int result_task(const struct msg_task *t, struct sluice_task **out);

int result_stats(const struct msg_stats *s, struct sluice_stats **out);

/* A tube's settings as the wire carried them (the dead letter copied). */
/* The limits and their state of a tube_set or tube_show reply. */
void result_tube_limits(const struct msg_rep *m, struct sluice_limits *o);

void result_tube_conf(
    const struct msg_tube_conf *m, struct sluice_tube_conf *o);

/* The cluster and its members (members NULL when there are none). */
int result_cluster(const struct msg_cluster *m, struct sluice_cluster **out);

/* n 0 gives NULL. */
int result_errors(
    const struct msg_errors *e, struct sluice_error_count **out, size_t *n);

/* n 0 gives NULL. */
int result_groups(
    const struct msg_groups *g, struct sluice_group **out, size_t *n);

/* A history, its counts after the struct. */
int result_history(const struct msg_history *h, struct sluice_history **out);

/* The schedules of a schedule op's reply (their payloads when
 * `payload`); n 0 gives NULL. */
int result_scheds(const struct msg_scheds *l, bool payload,
    struct sluice_schedule **out, size_t *n);

#endif
