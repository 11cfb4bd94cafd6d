/* metrics - a stats reply as Prometheus metrics (text exposition format
 * 0.0.4, `sluice_` prefix), for GET /metrics. docs/operations.md lists
 * every metric. */
#ifndef SLUICE_SERVER_FACE_HTTP_METRICS_H
#define SLUICE_SERVER_FACE_HTTP_METRICS_H

#include <stdio.h>

#include "sluice.h"

struct http_srv_stats;

/* Writes every metric of `s` (a stats reply of every tube) to `f`. */
void metrics_write(FILE *f, const struct sluice_stats *s);

enum { METRICS_GROUPS = 20 }; /* fair groups with series of their own */

/* The fair groups of every tube with the largest backlog (a groups reply
 * of every tube, at most METRICS_GROUPS: the bound on their series), each
 * with its ready and taken tasks and its oldest ready task's age, labelled
 * tube and group ("" for the tasks put without one). */
void metrics_groups(FILE *f, const struct sluice_group *g, size_t n);

/* The HTTP face's connections (http_srv.h), after metrics_write: the
 * face serving /metrics knows them, the core does not. */
void metrics_http(FILE *f, const struct http_srv_stats *st);

#endif
