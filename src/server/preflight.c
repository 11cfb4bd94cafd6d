/* preflight - see preflight.h.
 *
 * The nng URLs (--listen, --repl-listen) are bound through nng itself, so
 * every scheme and option it takes is checked as the server will use it;
 * the plain TCP addresses (--http, --beanstalk) with a socket, as the
 * HTTP and beanstalk faces bind them (SO_REUSEADDR, so a port in
 * TIME_WAIT is not mistaken for a taken one). Everything stays bound until
 * the last check, so two flags given one port are caught too. Between the
 * release here and the real bind another program may take a port: that
 * start then fails as before, after recovery. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair0/pair.h>

#include "server/preflight.h"
#include "util/log.h"

enum { PREFLIGHT_MAX = 4 };

struct held {
	nng_socket socks[PREFLIGHT_MAX];
	int nsocks;
	int fds[PREFLIGHT_MAX];
	int nfds;
};

static int
refuse(const char *flag, const char *addr, const char *why)
{
	log_err("srv",
	    "cannot listen flag=%s addr=%s error=\"%s\"; nothing was written "
	    "to the data directory",
	    flag, addr, why);
	return 1;
}

static int
hold_url(struct held *h, const char *flag, const char *url)
{
	nng_socket s;
	int rv;

	if ((rv = nng_pair0_open(&s)) != 0)
		return refuse(flag, url, nng_strerror(rv));
	h->socks[h->nsocks++] = s;
	if ((rv = nng_listen(s, url, NULL, 0)) != 0)
		return refuse(flag, url,
		    rv == NNG_EADDRINVAL
		        ? "not an address of this machine, or not a valid one"
		        : nng_strerror(rv));
	return 0;
}

/* HOST:PORT, or http://HOST:PORT for --http; [v6] brackets allowed. */
static int
hold_addr(struct held *h, const char *flag, const char *addr)
{
	struct addrinfo hints = { 0 }, *res = NULL;
	const char *a = addr, *colon;
	char host[256];
	size_t hl;
	int fd, one = 1, rc;

	if (strncmp(a, "http://", 7) == 0)
		a += 7;
	colon = strrchr(a, ':');
	hl = colon != NULL ? (size_t)(colon - a) : 0;
	if (colon == NULL || hl >= sizeof(host))
		return refuse(flag, addr, "not HOST:PORT");
	memcpy(host, a, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if ((rc = getaddrinfo(
	         host[0] ? host : NULL, colon + 1, &hints, &res)) != 0)
		return refuse(flag, addr, gai_strerror(rc));
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		freeaddrinfo(res);
		return refuse(flag, addr, strerror(errno));
	}
	h->fds[h->nfds++] = fd;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	rc = bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 1) != 0
	    ? errno
	    : 0;
	freeaddrinfo(res);
	return rc != 0 ? refuse(flag, addr, strerror(rc)) : 0;
}

int
preflight_check(const struct srv_config *cfg)
{
	struct held h = { .nsocks = 0, .nfds = 0 };
	int rc = 0;

	if (cfg->listen != NULL)
		rc = hold_url(&h, "--listen", cfg->listen);
	if (rc == 0 && cfg->repl_listen != NULL)
		rc = hold_url(&h, "--repl-listen", cfg->repl_listen);
	if (rc == 0 && cfg->http != NULL)
		rc = hold_addr(&h, "--http", cfg->http);
	if (rc == 0 && cfg->beanstalk != NULL)
		rc = hold_addr(&h, "--beanstalk", cfg->beanstalk);
	for (int i = 0; i < h.nsocks; i++)
		nng_close(h.socks[i]);
	for (int i = 0; i < h.nfds; i++)
		close(h.fds[i]);
	return rc;
}
