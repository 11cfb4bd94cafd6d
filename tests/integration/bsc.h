/* bsc - a raw beanstalk protocol client for the tests: a TCP connection
 * to 127.0.0.1, bounded reads that split the byte stream into replies
 * (a line, plus the chunk that RESERVED, FOUND and OK announce), and a
 * real beanstalkd started beside sluiced for the differential tests. */
#ifndef SLUICE_BSC_H
#define SLUICE_BSC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sluice.h"
#include "util/buf.h"

struct bsc {
	int fd;
	struct buf in; /* received, not yet returned */
};

/* Connects to 127.0.0.1:port, retrying for up to 5 s. 0 or -1. */
int bsc_open(struct bsc *c, int port);

/* The same, retrying for up to `ms` (a port nothing listens on fails
 * after that long; 0 tries once). */
int bsc_open_within(struct bsc *c, int port, int ms);

void bsc_close(struct bsc *c);

/* Sends every byte. 0 or -1. */
int bsc_send(struct bsc *c, const void *p, size_t len);
int bsc_sends(struct bsc *c, const char *s);

/* Reads `n` whole replies (waiting up to timeout_ms in all) and appends
 * them to `out`. Returns how many it read: fewer when the connection
 * closed or the time ran out. */
int bsc_replies(struct bsc *c, int n, int timeout_ms, struct buf *out);

/* One reply as a NUL-ended string (asserted to arrive in 10 s); the
 * caller frees it. */
char *bsc_reply(struct bsc *c);

/* Sends `cmd` and returns its one reply (bsc_reply). */
char *bsc_cmd(struct bsc *c, const char *cmd);

/* True when nothing arrives within ms (and the connection stays open). */
bool bsc_quiet(struct bsc *c, int ms);

/* True when the server closed the connection within ms. */
bool bsc_closed(struct bsc *c, int ms);

/* Starts /usr/bin/beanstalkd on a free loopback port with `extra`
 * arguments (NULL-ended, may be NULL); its pid is tracked so teardown
 * kills it. Returns the port, or 0 when beanstalkd is not installed. */
int bsc_beanstalkd(const char *const *extra, pid_t *pid);

/* A sluiced (it_srv's "node") with its beanstalk face on a free loopback
 * port, started, and a native client of it. */
struct bsc_node {
	struct t_srv *s;
	struct sluice_client *c;
	int port;
	char addr[32];
};

void bsc_node_up(void **state, struct bsc_node *n);

/* Closes the client and stops the server with SIGTERM (a clean stop). */
void bsc_node_down(struct bsc_node *n);

#endif
