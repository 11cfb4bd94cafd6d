/* preflight - see preflight.h.
 *
 * The nng URLs (--listen, --repl-listen) are bound through nng itself, so
 * every scheme and option it takes is checked as the server will use it,
 * but for tcp:// and ipc://, which plain sockets check as well; the
 * plain TCP addresses (--http, --beanstalk) with a socket, as the
 * HTTP and beanstalk faces bind them (SO_REUSEADDR, so a port in
 * TIME_WAIT is not mistaken for a taken one). Everything stays bound until
 * the last check, so two flags given one port are caught too. A port in
 * use is tried again for a while (IN_USE_RETRY_MS): one a killed sluiced
 * held may be let go only a moment after it ended. Between the release
 * here and the real bind another program may take a port: that start then
 * fails as before, after recovery. */
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pair0/pair.h>

#include "server/preflight.h"
#include "util/log.h"

enum {
	PREFLIGHT_MAX = 4,
	/* A port whose last holder was just killed can stay taken a few
	 * ms after the process is gone: a listening socket that io_uring
	 * requests hold (the beanstalk face's) is let go only when the
	 * kernel tears the ring down, after the process ended. So a port
	 * in use is tried again, for this long, before it is refused. */
	IN_USE_RETRY_MS = 2000,
	IN_USE_STEP_MS = 20,
};

struct held {
	nng_socket socks[PREFLIGHT_MAX];
	int nsocks;
	int fds[PREFLIGHT_MAX];
	int nfds;
	const char *made[PREFLIGHT_MAX]; /* ipc paths bound here */
	int nmade;
	/* the first failure */
	const char *flag, *addr;
	char why[128];
	bool in_use;
};

static int
refuse(struct held *h, const char *flag, const char *addr, const char *why,
    bool in_use)
{
	h->flag = flag;
	h->addr = addr;
	snprintf(h->why, sizeof(h->why), "%s", why);
	h->in_use = in_use;
	return 1;
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

	if (strncmp(a, "unix:", 5) == 0)
		return 0; /* a socket file: conns_listen says what is wrong */
	if (strncmp(a, "http://", 7) == 0)
		a += 7;
	else if (strncmp(a, "https://", 8) == 0)
		a += 8;
	colon = strrchr(a, ':');
	hl = colon != NULL ? (size_t)(colon - a) : 0;
	if (colon == NULL || hl >= sizeof(host))
		return refuse(h, flag, addr, "not HOST:PORT", false);
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
		return refuse(h, flag, addr, gai_strerror(rc), false);
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		freeaddrinfo(res);
		return refuse(h, flag, addr, strerror(errno), false);
	}
	h->fds[h->nfds++] = fd;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	rc = bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 1) != 0
	    ? errno
	    : 0;
	freeaddrinfo(res);
	return rc != 0 ? refuse(h, flag, addr, strerror(rc), rc == EADDRINUSE)
	               : 0;
}

/* ipc://PATH with a plain unix socket, as nng's ipc listener will see it:
 * a socket a live server answers on is in use; one nobody answers on is
 * stale (nng removes it); a free path is bound and listened on until the
 * last check, then removed. Nothing of nng's
 * is left behind (its close reaps on a thread of its own, after a quick
 * exit too late for LeakSanitizer). */
static int
hold_ipc(struct held *h, const char *flag, const char *url)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = url + 6;
	int fd, rc = 0;

	if (strlen(path) == 0 || strlen(path) >= sizeof(sa.sun_path))
		return refuse(
		    h, flag, url, "not a socket path (1 to 107 bytes)", false);
	memcpy(sa.sun_path, path, strlen(path));
	/* non-blocking: a listener that accepts nobody fills its backlog,
	 * and a connect to it would wait for ever */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return refuse(h, flag, url, strerror(errno), false);
	h->fds[h->nfds++] = fd;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
	    errno == EAGAIN)
		rc = EADDRINUSE;
	else if (errno == ENOENT) {
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			rc = errno;
		} else {
			h->made[h->nmade++] = path;
			if (listen(fd, 1) != 0)
				rc = errno;
		}
	} else if (errno != ECONNREFUSED) {
		rc = errno;
	}
	return rc != 0 ? refuse(h, flag, url, strerror(rc), rc == EADDRINUSE)
	               : 0;
}

static int
hold_url(struct held *h, const char *flag, const char *url)
{
	nng_socket s;
	int rv;

	/* tcp:// is served by sluiced's own sockets: a plain bind says
	 * all, and leaves nothing of nng's behind */
	if (strncmp(url, "tcp://", 6) == 0) {
		if (hold_addr(h, flag, url + 6) == 0)
			return 0;
		h->addr = url; /* named as it was given */
		return 1;
	}
	if (strncmp(url, "ipc://", 6) == 0)
		return hold_ipc(h, flag, url);
	if ((rv = nng_pair0_open(&s)) != 0)
		return refuse(h, flag, url, nng_strerror(rv), false);
	h->socks[h->nsocks++] = s;
	if ((rv = nng_listen(s, url, NULL, 0)) != 0)
		return refuse(h, flag, url,
		    rv == NNG_EADDRINVAL
		        ? "not an address of this machine, or not a valid one"
		        : nng_strerror(rv),
		    rv == NNG_EADDRINUSE);
	return 0;
}

/* Binds them all; then lets them all go. 0, or 1 with h's failure. */
static int
try_all(const struct config *cfg, struct held *h)
{
	int rc = 0;

	memset(h, 0, sizeof(*h));
	if (cfg->listen != NULL)
		rc = hold_url(h, "--listen", cfg->listen);
	if (rc == 0 && cfg->repl_listen != NULL)
		rc = hold_url(h, "--repl-listen", cfg->repl_listen);
	if (rc == 0 && cfg->http != NULL)
		rc = hold_addr(h, "--http", cfg->http);
	if (rc == 0 && cfg->beanstalk != NULL)
		rc = hold_addr(h, "--beanstalk", cfg->beanstalk);
	for (int i = 0; i < h->nsocks; i++)
		nng_close(h->socks[i]);
	for (int i = 0; i < h->nfds; i++)
		close(h->fds[i]);
	for (int i = 0; i < h->nmade; i++)
		unlink(h->made[i]);
	return rc;
}

int
preflight_check(const struct config *cfg)
{
	struct timespec step = { 0, IN_USE_STEP_MS * 1000000L };
	struct held h;

	for (int waited = 0; try_all(cfg, &h) != 0; waited += IN_USE_STEP_MS) {
		if (!h.in_use || waited >= IN_USE_RETRY_MS) {
			log_err("srv",
			    "cannot listen flag=%s addr=%s error=\"%s\"; "
			    "nothing was written to the data directory",
			    h.flag, h.addr, h.why);
			return 1;
		}
		nanosleep(&step, NULL);
	}
	return 0;
}
