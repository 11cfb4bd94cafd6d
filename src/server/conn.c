/* conn - see conn.h: the core thread's stream sockets on one epoll.
 *
 * Level-triggered epoll. A connection has EPOLLIN armed while it may read
 * (open, input below in_max) and EPOLLOUT while written output is left
 * over (the socket's buffer was full); epoll_ctl runs only when one of the
 * two changes, which a request/reply exchange never causes. Output is
 * written at the end of the turn (conns_flush), so every reply of a turn
 * to one connection leaves in one write.
 *
 * Freeing is deferred: a connection that is closed and no longer held
 * goes on the free list, emptied at the end of conns_run and conns_flush,
 * so no caller ever holds a pointer to freed memory inside a turn. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "server/conn.h"
#include "util/log.h"

enum {
	LISTENERS_MAX = 8,
	EVENTS = 64,
	READ_MIN = 16 * 1024,  /* free room offered to each read */
	READ_MAX = 256 * 1024, /* the most one read asks for */
	IN_SHRINK = 1 << 20,   /* larger idle input buffers are freed */
	OUT_SHRINK = 1 << 20,  /* larger idle output buffers are freed */
	TAG_LISTENER = 1,
};

struct conn_listener {
	int fd;
	const struct conn_face *face;
	void *arg;
};

struct conns {
	int epfd;
	struct conn_listener *ls[LISTENERS_MAX];
	size_t nls;
	struct conn *all;
	struct conn *flush_head; /* connections with output queued */
	struct conn *free_head;  /* closed, held by nothing */
	size_t nconns;
	bool closing; /* conns_close */
};

int
conns_open(struct conns **out)
{
	struct conns *cs = calloc(1, sizeof(*cs));

	if (cs == NULL)
		return -ENOMEM;
	cs->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cs->epfd < 0) {
		int rc = -errno;

		free(cs);
		return rc;
	}
	*out = cs;
	return 0;
}

int
conns_fd(const struct conns *cs)
{
	return cs->epfd;
}

/* ---- listening ---------------------------------------------------------- */

static int
resolve(const char *addr, struct addrinfo **res)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	struct addrinfo hints;
	size_t hl;

	if (colon == NULL || colon[1] == '\0')
		return -EINVAL;
	hl = (size_t)(colon - addr);
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, addr, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	if (strcmp(host, "*") == 0)
		host[0] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, res) != 0)
		return -EADDRNOTAVAIL;
	return 0;
}

int
conns_listen(
    struct conns *cs, const char *addr, const struct conn_face *face, void *arg)
{
	struct conn_listener *l;
	struct addrinfo *res = NULL;
	struct epoll_event ev;
	int fd, one = 1, rc;

	if (cs->nls == LISTENERS_MAX)
		return -EMFILE;
	rc = resolve(addr, &res);
	if (rc != 0)
		return rc;
	fd = socket(
	    res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rc = -errno;
		freeaddrinfo(res);
		return rc;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 ||
	    listen(fd, 1024) != 0) {
		rc = -errno;
		goto fail;
	}
	l = calloc(1, sizeof(*l));
	if (l == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	l->fd = fd;
	l->face = face;
	l->arg = arg;
	ev.events = EPOLLIN;
	ev.data.u64 = (uint64_t)(uintptr_t)l | TAG_LISTENER;
	if (epoll_ctl(cs->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		rc = -errno;
		free(l);
		goto fail;
	}
	cs->ls[cs->nls++] = l;
	freeaddrinfo(res);
	return 0;

fail:
	close(fd);
	freeaddrinfo(res);
	return rc;
}

void
conns_stop_listening(struct conns *cs)
{
	if (cs == NULL)
		return;
	for (size_t i = 0; i < cs->nls; i++) {
		close(cs->ls[i]->fd); /* leaves the epoll set with it */
		free(cs->ls[i]);
	}
	cs->nls = 0;
}

/* ---- a connection ------------------------------------------------------- */

static void
set_events(struct conn *c, bool reading, bool writing)
{
	struct epoll_event ev;

	if (c->closed || (c->reading == reading && c->writing == writing))
		return;
	ev.events = (reading ? EPOLLIN : 0) | (writing ? EPOLLOUT : 0);
	ev.data.ptr = c;
	if (epoll_ctl(c->cs->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0) {
		c->reading = reading;
		c->writing = writing;
	}
}

static bool
may_read(const struct conn *c)
{
	return !c->closed && !c->close_sent &&
	    c->in_len - c->in_off < c->in_max;
}

static void
maybe_free(struct conn *c)
{
	struct conns *cs = c->cs;

	if (!c->closed || c->holds > 0 || c->freed_later || c->queued)
		return; /* a queued one is freed when the flush takes it */
	c->freed_later = true;
	c->fnext = cs->free_head;
	cs->free_head = c;
}

static void
free_dead(struct conns *cs)
{
	struct conn *c;

	while ((c = cs->free_head) != NULL) {
		cs->free_head = c->fnext;
		if (c->prev != NULL)
			c->prev->next = c->next;
		else
			cs->all = c->next;
		if (c->next != NULL)
			c->next->prev = c->prev;
		if (c->face->free != NULL)
			c->face->free(c);
		close(c->fd);
		buf_free(&c->out);
		free(c->in);
		free(c);
	}
}

void
conn_close(struct conn *c)
{
	if (c->closed)
		return;
	epoll_ctl(c->cs->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	shutdown(c->fd, SHUT_RDWR);
	c->closed = true;
	c->reading = c->writing = false;
	c->cs->nconns--;
	buf_reset(&c->out);
	c->out_off = 0;
	if (c->face->closed != NULL && !c->cs->closing)
		c->face->closed(c);
	maybe_free(c);
}

void
conn_close_when_sent(struct conn *c)
{
	c->close_sent = true;
	if (conn_unsent(c) == 0)
		conn_close(c);
}

void
conn_hold(struct conn *c)
{
	c->holds++;
}

void
conn_release(struct conn *c)
{
	c->holds--;
	maybe_free(c);
}

size_t
conn_unsent(const struct conn *c)
{
	return c->out.len - c->out_off;
}

void
conn_write(struct conn *c, const void *p, size_t len)
{
	if (c->closed)
		return;
	buf_put(&c->out, p, len);
	if (buf_failed(&c->out)) {
		log_warn(c->face->name,
		    "out of memory for a reply; closing the connection "
		    "peer=%s",
		    c->peer);
		conn_close(c);
		return;
	}
	if (!c->queued) {
		c->queued = true;
		c->qnext = c->cs->flush_head;
		c->cs->flush_head = c;
	}
}

void
conn_consume(struct conn *c, size_t n)
{
	c->in_off += n;
	if (c->in_off == c->in_len) {
		c->in_off = c->in_len = 0;
		if (c->in_cap > IN_SHRINK) {
			free(c->in);
			c->in = NULL;
			c->in_cap = 0;
		}
	}
	if (!c->reading && may_read(c))
		set_events(c, true, c->writing);
}

static void
peer_name(int fd, char *out, size_t cap)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
			port = ntohs(a->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
			port = ntohs(a->sin6_port);
		}
	}
	snprintf(out, cap, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
	    port);
}

static void
accept_one(struct conns *cs, struct conn_listener *l)
{
	struct epoll_event ev;
	struct conn *c;
	int fd, one = 1;

	fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warn(l->face->name, "accept failed error=\"%s\"",
			    strerror(errno));
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->cs = cs;
	c->face = l->face;
	c->fd = fd;
	c->in_max = READ_MIN;
	c->listen = l;
	buf_init(&c->out);
	peer_name(fd, c->peer, sizeof(c->peer));
	if (l->face->open(c, l->arg) != 0) {
		close(fd);
		free(c);
		return;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = c;
	if (epoll_ctl(cs->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		log_warn(l->face->name,
		    "cannot watch a connection error=\"%s\"", strerror(errno));
		c->closed = true; /* never reported open to epoll */
		if (c->face->closed != NULL)
			c->face->closed(c);
		c->next = cs->all; /* free_dead unlinks it */
		if (cs->all != NULL)
			cs->all->prev = c;
		cs->all = c;
		maybe_free(c);
		return;
	}
	c->reading = true;
	c->next = cs->all;
	if (cs->all != NULL)
		cs->all->prev = c;
	cs->all = c;
	cs->nconns++;
	/* The face may have queued a greeting (an SP header). */
	if (conn_unsent(c) > 0 && !c->queued) {
		c->queued = true;
		c->qnext = cs->flush_head;
		cs->flush_head = c;
	}
}

/* Reads what the socket holds, up to in_max unparsed bytes. */
static void
read_some(struct conn *c)
{
	size_t want;
	ssize_t n;

	if (!may_read(c)) {
		set_events(c, false, c->writing);
		return;
	}
	if (c->in_off > 0 && c->in_len + READ_MIN > c->in_cap) {
		memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
		c->in_len -= c->in_off;
		c->in_off = 0;
	}
	want = c->in_max - (c->in_len - c->in_off);
	if (want < READ_MIN)
		want = READ_MIN;
	if (want > READ_MAX)
		want = READ_MAX;
	if (c->in_cap - c->in_len < want) {
		size_t cap = c->in_cap ? c->in_cap : 2 * READ_MIN;
		uint8_t *p;

		while (cap - c->in_len < want && cap < c->in_len + want)
			cap *= 2;
		if (cap < c->in_len + want)
			cap = c->in_len + want;
		p = realloc(c->in, cap);
		if (p == NULL) {
			conn_close(c);
			return;
		}
		c->in = p;
		c->in_cap = cap;
	}
	n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
	if (n > 0) {
		c->in_len += (size_t)n;
		c->face->input(c);
		if (!c->closed && !may_read(c))
			set_events(c, false, c->writing);
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	conn_close(c); /* the peer closed, or the socket failed */
}

/* Writes queued output; true when all of it went. */
static bool
write_some(struct conn *c)
{
	while (conn_unsent(c) > 0) {
		ssize_t n = send(c->fd, c->out.data + c->out_off,
		    conn_unsent(c), MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				set_events(c, c->reading, true);
				return false;
			}
			conn_close(c);
			return false;
		}
		c->out_off += (size_t)n;
	}
	c->out_off = 0;
	if (c->out.cap > OUT_SHRINK) {
		buf_free(&c->out);
		buf_init(&c->out);
	} else {
		buf_reset(&c->out);
	}
	if (c->writing)
		set_events(c, c->reading, false);
	if (c->close_sent)
		conn_close(c);
	return true;
}

void
conns_run(struct conns *cs)
{
	struct epoll_event evs[EVENTS];
	int n = epoll_wait(cs->epfd, evs, EVENTS, 0);

	for (int i = 0; i < n; i++) {
		uint64_t u = evs[i].data.u64;
		struct conn *c;

		if (u & TAG_LISTENER) {
			accept_one(cs,
			    (struct conn_listener *)(uintptr_t)(u &
			        ~(uint64_t)TAG_LISTENER));
			continue;
		}
		c = evs[i].data.ptr;
		if (c->closed)
			continue;
		if (evs[i].events & EPOLLOUT) {
			bool was_full = conn_unsent(c) > 0;

			if (write_some(c) && was_full && !c->closed)
				c->face->input(c); /* room again */
		}
		if (c->closed)
			continue;
		if ((evs[i].events & (EPOLLHUP | EPOLLERR)) && !may_read(c))
			conn_close(c); /* dead, and nothing would read it */
		else if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			read_some(c);
	}
	free_dead(cs);
}

void
conns_flush(struct conns *cs)
{
	struct conn *c;

	while ((c = cs->flush_head) != NULL) {
		cs->flush_head = c->qnext;
		c->queued = false;
		if (!c->closed && !c->writing)
			write_some(c);
		if (c->closed)
			maybe_free(c);
	}
	free_dead(cs);
}

bool
conns_sending(const struct conns *cs)
{
	for (const struct conn *c = cs->all; c != NULL; c = c->next)
		if (!c->closed && conn_unsent(c) > 0)
			return true;
	return false;
}

void
conns_close(struct conns *cs)
{
	if (cs == NULL)
		return;
	conns_stop_listening(cs);
	cs->closing = true; /* the core is gone: nothing to tell it */
	for (struct conn *c = cs->all; c != NULL; c = c->next)
		conn_close(c);
	/* Whatever is still held belongs to a core that is gone. */
	cs->flush_head = NULL;
	for (struct conn *c = cs->all; c != NULL; c = c->next) {
		c->holds = 0;
		c->queued = false;
		maybe_free(c);
	}
	free_dead(cs);
	close(cs->epfd);
	free(cs);
}
