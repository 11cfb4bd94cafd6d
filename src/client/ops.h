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

#endif
