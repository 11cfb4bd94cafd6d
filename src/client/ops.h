/* ops - what the files of the public operations (ops.c, ops_read.c)
 * share. Internal to libsluice. */
#ifndef SLUICE_CLIENT_OPS_H
#define SLUICE_CLIENT_OPS_H

#include "proto/msg.h"
#include "sluice.h"

/* The tube named, or SLUICE_DEFAULT_TUBE for NULL. */
struct msg_str ops_tube_or_default(const char *tube);

/* SLUICE_EINVAL, with `what` as the client's error message (when `c` is
 * not NULL). */
int ops_bad_arg(struct sluice_client *c, const char *what);

/* A batch's arguments (`what` names it in the error): 0, SLUICE_EINVAL
 * (none), SLUICE_ELIMIT (over SLUICE_BATCH_MAX). */
int ops_batch_args(struct sluice_client *c, const char *what, const void *in,
    size_t n, const void *out);

/* Sends a batch request of `n` items and copies each item's result out;
 * their texts live in the handle until the next call. */
int ops_call_batch(struct sluice_client *c, const struct msg_req *q, size_t n,
    const char *what, struct sluice_result *results);

#endif
