/* conn_addr - the addresses the connections' listeners (face/conn.h)
 * take: HOST:PORT (a name or a literal, [v6]:PORT, *:PORT for every
 * interface), or unix:PATH for a Unix socket (the beanstalk face's, as
 * beanstalkd's -l unix:PATH). */
#ifndef SLUICE_SERVER_FACE_CONN_ADDR_H
#define SLUICE_SERVER_FACE_CONN_ADDR_H

#include <netdb.h>

/* Resolves `addr` for a listener into *res (one address, for bind), to
 * be freed with conn_addr_free(addr, *res). A unix:PATH whose file is a
 * stale socket (nothing accepts on it) has it removed, so that the bind
 * succeeds, as a restart after a crash needs; any other file stays and
 * the bind fails. Returns 0, -EINVAL (not HOST:PORT), -ENAMETOOLONG (a
 * path empty or over a socket address's room), -EADDRNOTAVAIL (a name
 * that does not resolve) or -ENOMEM. */
int conn_addr_resolve(const char *addr, struct addrinfo **res);

void conn_addr_free(const char *addr, struct addrinfo *res);

#endif
