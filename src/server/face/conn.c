/* conn - the core thread's stream sockets on one epoll (conn.h), under
 * the faces that run on that thread (sp.c, the beanstalk face).
 *
 * Level-triggered epoll. A connection has EPOLLIN armed while it may read
 * (open, input below in_max) and EPOLLOUT while written output is left
 * over (the socket's buffer was full); epoll_ctl runs only when one of the
 * two changes, which a request/reply exchange never causes. Output is
 * written at the end of the turn (conns_flush, conn_flush.c), so every
 * reply of a turn to one connection leaves in one write, and the writes
 * of a turn to many connections leave in one io_uring_enter
 * (conn_ring.c).
 *
 * Freeing is deferred: a connection that is closed and no longer held
 * goes on the free list, emptied at the end of conns_run and conns_flush,
 * so no caller ever holds a pointer to freed memory inside a turn.
 *
 * Memory: a read goes to the set's shared buffer when the connection has
 * nothing unparsed; what its face leaves is copied to a buffer of the
 * connection's own, freed as soon as it is parsed. Output is freed once
 * written (a small buffer is kept). An idle connection holds its struct
 * and its face's, nothing more.
 *
 * Freed connections' small blocks stay in the heap; after many are gone
 * malloc_trim hands the free pages back (conns_tick): once a wave of
 * closes has ended (a tick freed none), at most every TRIM_QUIET_MS, or
 * every TRIM_EVERY_MS under closes that never pause.
 *
 * Timeouts are checked by a scan of every connection once per TICK_MS
 * (conns_tick): their resolution is that tick, and a scan of thousands
 * of connections costs microseconds. A listener out of descriptors is
 * paused for ACCEPT_PAUSE_MS (its EPOLLIN disarmed). */
#include <fcntl.h>
#include <malloc.h>
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

#include "server/face/conn.h"
#include "server/face/conn_addr.h"
#include "server/face/conn_int.h"
#include "server/face/conn_ring.h"
#include "util/clock.h"
#include "util/log.h"

enum {
	EVENTS = 64,
	READ_MIN = 16 * 1024,             /* free room offered to each read */
	READ_MAX = 256 * 1024,            /* the most one read asks for */
	READ_BATCH = READ_MAX / READ_MIN, /* read together (read_batch) */
	TAG_LISTENER = 1,
	TICK_MS = 250,          /* timeouts are checked this often */
	ACCEPT_PAUSE_MS = 100,  /* a listener out of descriptors rests */
	ACCEPT_DRAIN = 64,      /* accepted and closed with the reserve fd */
	ACCEPT_BATCH = 64,      /* accepted per listener per turn */
	FRAME_PROGRESS = 16384, /* bytes of a unit that restart its timeout */
	TRIM_AFTER = 256,       /* connections freed before a malloc_trim */
	TRIM_QUIET_MS = 1000,   /* at most this often after a wave of closes */
	TRIM_EVERY_MS = 10000,  /* and this often while they go on */
	NOTE_EVERY_MS = 10000,  /* a refusal's log line, at most this often */
};

/* Counts one refusal of a kind, and logs the count of those not logged
 * yet when the last line is older than NOTE_EVERY_MS. */
static void
note(struct conn_note *n, const char *face, const char *what)
{
	int64_t now = clock_mono_ms();

	n->since++;
	if (n->last_ms != 0 && now - n->last_ms < NOTE_EVERY_MS)
		return;
	log_warn(face, "%s count=%llu", what, (unsigned long long)n->since);
	n->since = 0;
	n->last_ms = now;
}

int
conns_open(struct conns **out)
{
	struct conns *cs = calloc(1, sizeof(*cs));

	if (cs == NULL)
		return -ENOMEM;
	cs->rbuf = malloc(READ_MAX);
	cs->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cs->epfd < 0 || cs->rbuf == NULL) {
		int rc = cs->rbuf == NULL ? -ENOMEM : -errno;

		if (cs->epfd >= 0)
			close(cs->epfd);
		free(cs->rbuf);
		free(cs);
		return rc;
	}
	cs->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (conn_ring_open(&cs->ring) != 0) {
		cs->ring = NULL;
		log_info("conn", "no io_uring for the replies: one send each");
	}
	*out = cs;
	return 0;
}

void
conns_set_limits(struct conns *cs, const struct conns_limits *lim)
{
	cs->lim = *lim;
}

void
conns_stats(const struct conns *cs, struct conns_stats *out)
{
	*out = cs->st;
	out->open = cs->nconns;
}

int
conns_fd(const struct conns *cs)
{
	return cs->epfd;
}

/* ---- listening ---------------------------------------------------------- */

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
	rc = conn_addr_resolve(addr, &res);
	if (rc != 0)
		return rc;
	fd = socket(
	    res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		rc = -errno;
		conn_addr_free(addr, res);
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
	conn_addr_free(addr, res);
	return 0;

fail:
	close(fd);
	conn_addr_free(addr, res);
	return rc;
}

void
conns_stop_listening(struct conns *cs)
{
	if (cs == NULL)
		return;
	/* The structs stay until conns_close: connections point at them. */
	for (size_t i = 0; i < cs->nls; i++) {
		if (cs->ls[i]->fd < 0)
			continue;
		close(cs->ls[i]->fd); /* leaves the epoll set with it */
		cs->ls[i]->fd = -1;
		cs->ls[i]->paused_until = 0;
	}
}

/* ---- a connection ------------------------------------------------------- */

static void
unready_unlink(struct conn *c)
{
	struct conn_listener *l = c->listen;

	if (c->ready)
		return;
	c->ready = true;
	if (c->uprev != NULL)
		c->uprev->unext = c->unext;
	else
		l->unready_head = c->unext;
	if (c->unext != NULL)
		c->unext->uprev = c->uprev;
	else
		l->unready_tail = c->uprev;
	c->unext = c->uprev = NULL;
	l->nunready--;
}

void
conn_ready(struct conn *c)
{
	unready_unlink(c);
}

void
conn_want_more(struct conn *c)
{
	size_t have = c->in_len - c->in_off;

	if (c->part_ms == 0 || have >= c->part_len + FRAME_PROGRESS) {
		c->part_ms = clock_mono_ms();
		c->part_len = have;
	}
}

bool
conn_room(const struct conn *c, unsigned more)
{
	const struct conns_limits *lim = &c->cs->lim;

	return (lim->out_bytes == 0 || conn_unsent(c) < lim->out_bytes) &&
	    (lim->out_msgs == 0 || c->out_msgs + more < lim->out_msgs);
}

bool
conn_over(const struct conn *c)
{
	return !conn_room(c, 0);
}

/* The stall timeout counts from the later of the last byte written and
 * the crossing of the mark: a connection quiet for long whose burst of
 * replies crosses it has all of --stall-timeout to take them. */
static void
mark_crossed(struct conn *c, bool was_over)
{
	if (!was_over && conn_over(c))
		c->sent_ms = clock_mono_ms();
}

void
conn_msg_queued(struct conn *c)
{
	bool was_over = conn_over(c);

	c->out_msgs++;
	mark_crossed(c, was_over);
}

void
conn_set_events(struct conn *c, bool reading, bool writing)
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

bool
conn_may_read(const struct conn *c)
{
	return !c->closed && !c->close_sent &&
	    c->in_len - c->in_off < c->in_max;
}

void
conn_maybe_free(struct conn *c)
{
	struct conns *cs = c->cs;

	if (!c->closed || c->holds > 0 || c->freed_later || c->queued)
		return; /* a queued one is freed when the flush takes it */
	c->freed_later = true;
	c->fnext = cs->free_head;
	cs->free_head = c;
}

void
conn_free_dead(struct conns *cs)
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
		buf_fini(&c->out);
		if (!c->in_shared)
			free(c->in);
		free(c);
		cs->freed++;
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
	c->listen->nconns--;
	unready_unlink(c);
	buf_fini(&c->out);
	c->out_off = 0;
	c->out_msgs = 0;
	if (c->face->closed != NULL && !c->cs->closing)
		c->face->closed(c);
	conn_maybe_free(c);
}

void
conn_refuse(struct conn *c)
{
	c->cs->st.closed_refused++;
	conn_close(c);
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
	conn_maybe_free(c);
}

size_t
conn_unsent(const struct conn *c)
{
	return c->out.len - c->out_off;
}

void
conn_write(struct conn *c, const void *p, size_t len)
{
	bool was_over;

	if (c->closed)
		return;
	was_over = conn_over(c);
	buf_put(&c->out, p, len);
	mark_crossed(c, was_over);
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
	c->part_ms = 0;
	if (c->in_off == c->in_len) {
		c->in_off = c->in_len = 0;
		if (!c->in_shared) {
			free(c->in);
			c->in = NULL;
			c->in_cap = 0;
		}
	}
	if (!c->reading && conn_may_read(c))
		conn_set_events(c, true, c->writing);
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
		} else if (ss.ss_family == AF_UNIX) {
			snprintf(
			    out, cap, "unix"); /* its clients are nameless */
			return;
		}
	}
	snprintf(out, cap, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", host,
	    port);
}

/* accept() found no descriptor: give up the reserve to accept and close
 * what waits (its clients learn at once instead of waiting in the
 * backlog), take the reserve back, and rest the listener a moment. */
static void
accept_exhausted(struct conns *cs, struct conn_listener *l, int err)
{
	struct epoll_event ev = { .events = 0 };

	cs->st.accept_exhausted++;
	if (cs->reserve_fd >= 0) {
		close(cs->reserve_fd);
		for (int i = 0; i < ACCEPT_DRAIN; i++) {
			int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);

			if (fd < 0)
				break;
			close(fd);
			cs->st.refused_fds++;
		}
		cs->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	ev.data.u64 = (uint64_t)(uintptr_t)l | TAG_LISTENER;
	if (epoll_ctl(cs->epfd, EPOLL_CTL_MOD, l->fd, &ev) == 0) {
		l->paused_until = clock_mono_ms() + ACCEPT_PAUSE_MS;
		cs->any_paused = true;
	}
	note(&cs->note_fds, l->face->name,
	    err == ENFILE ? "out of descriptors (the system's, ENFILE): "
	                    "connections refused; accepting again shortly"
	                  : "out of descriptors (EMFILE; raise LimitNOFILE "
	                    "or --max-conns lower): connections refused; "
	                    "accepting again shortly");
}

static void
unready_append(struct conn *c)
{
	struct conn_listener *l = c->listen;

	c->uprev = l->unready_tail;
	if (l->unready_tail != NULL)
		l->unready_tail->unext = c;
	else
		l->unready_head = c;
	l->unready_tail = c;
	l->nunready++;
}

/* Accepts one waiting connection; false when none was (or the listener
 * rests). */
static bool
accept_one(struct conns *cs, struct conn_listener *l)
{
	struct epoll_event ev;
	struct conn *c;
	int fd, one = 1;

	fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			accept_exhausted(cs, l, errno);
		else if (errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED)
			log_warn(l->face->name, "accept failed error=\"%s\"",
			    strerror(errno));
		return false;
	}
	if (cs->lim.max_conns != 0 && l->nconns >= cs->lim.max_conns) {
		close(fd);
		cs->st.refused_full++;
		note(&cs->note_full, l->face->name,
		    "connections refused: the face has --max-conns open");
		return true;
	}
	if (cs->lim.max_unready != 0 && l->nunready >= cs->lim.max_unready) {
		struct conn *old = l->unready_head;

		cs->st.evicted_unready++;
		note(&cs->note_unready, l->face->name,
		    "connections closed: the oldest not yet authenticated "
		    "gave way to new ones (--max-unauth-conns)");
		conn_close(old);
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return true;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->cs = cs;
	c->face = l->face;
	c->fd = fd;
	c->in_max = READ_MIN;
	c->listen = l;
	c->born_ms = c->active_ms = c->sent_ms = clock_mono_ms();
	buf_init(&c->out);
	peer_name(fd, c->peer, sizeof(c->peer));
	l->nconns++;
	unready_append(c);
	if (l->face->open(c, l->arg) != 0) {
		l->nconns--;
		unready_unlink(c);
		close(fd);
		buf_fini(&c->out);
		free(c);
		return true;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = c;
	if (epoll_ctl(cs->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		log_warn(l->face->name,
		    "cannot watch a connection error=\"%s\"", strerror(errno));
		c->closed = true; /* never reported open to epoll */
		l->nconns--;
		unready_unlink(c);
		if (c->face->closed != NULL)
			c->face->closed(c);
		c->next = cs->all; /* free_dead unlinks it */
		if (cs->all != NULL)
			cs->all->prev = c;
		cs->all = c;
		conn_maybe_free(c);
		return true;
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
	return true;
}

/* After the face parsed from the shared buffer: what it left is copied
 * to a buffer of the connection's own. */
static void
leave_shared(struct conn *c)
{
	size_t left = c->in_len - c->in_off;
	const uint8_t *from = c->in + c->in_off;

	c->in_shared = false;
	c->in = NULL;
	c->in_cap = 0;
	c->in_off = c->in_len = 0;
	if (left == 0 || c->closed)
		return;
	c->in = malloc(left);
	if (c->in == NULL) {
		conn_close(c);
		return;
	}
	memcpy(c->in, from, left);
	c->in_len = c->in_cap = left;
}

/* After a read of `n` bytes (or -errno): the connection stops reading
 * at its limit, and closes at the end of the stream or on an error. */
static void
read_done(struct conn *c, ssize_t n)
{
	if (n > 0) {
		if (!c->closed && !conn_may_read(c))
			conn_set_events(c, false, c->writing);
		return;
	}
	if (n == -EAGAIN || n == -EINTR)
		return;
	conn_close(c); /* the peer closed, or the socket failed */
}

/* Reads what the socket holds, up to in_max unparsed bytes. */
static void
read_some(struct conn *c)
{
	size_t want, pending = c->in_len - c->in_off;
	ssize_t n;

	if (!conn_may_read(c)) {
		conn_set_events(c, false, c->writing);
		return;
	}
	want = c->in_max - pending;
	if (want < READ_MIN)
		want = READ_MIN;
	if (want > READ_MAX)
		want = READ_MAX;
	if (pending == 0) {
		/* nothing kept: read into the shared buffer */
		free(c->in);
		c->in = c->cs->rbuf;
		c->in_shared = true;
		c->in_off = c->in_len = 0;
		c->in_cap = READ_MAX;
		n = read(c->fd, c->in, want);
		if (n > 0) {
			c->in_len = (size_t)n;
			c->active_ms = clock_mono_ms();
			c->face->input(c);
		}
		leave_shared(c);
	} else {
		if (c->in_off > 0) {
			memmove(c->in, c->in + c->in_off, pending);
			c->in_len = pending;
			c->in_off = 0;
		}
		if (c->in_cap - c->in_len < want) {
			/* doubling, up to what the face said it must see
			 * (a large frame costs a few copies, not one per
			 * read) */
			size_t cap = c->in_len + want;
			size_t dbl = 2 * c->in_cap < c->in_max ? 2 * c->in_cap
			                                       : c->in_max;
			uint8_t *p;

			if (cap < dbl)
				cap = dbl;
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
			c->active_ms = clock_mono_ms();
			c->face->input(c);
		}
	}
	read_done(c, n < 0 ? -errno : n);
}

/* Receives for read_batch; 0, or -errno when nothing was read. */
static int
recv_slices(struct conns *cs, struct conn **b, struct conn_ring_io *io,
    size_t n, size_t slice)
{
	for (size_t i = 0; i < n; i++) {
		size_t want = b[i]->in_max;

		if (want < READ_MIN)
			want = READ_MIN;
		if (want > slice)
			want = slice;
		io[i] = (struct conn_ring_io) {
			.fd = b[i]->fd, .p = cs->rbuf + i * slice, .len = want
		};
	}
	return conn_ring_recv(cs->ring, io, n);
}

/* Reads into a slice of the shared buffer, through conn_ring.c, for
 * each of the n connections of `b` that epoll found readable and that
 * keep nothing unparsed: one io_uring_enter for all, where read_some
 * makes one read each. A slice is READ_MAX / n bytes (at least
 * READ_MIN): a larger request is finished by the next reads, into the
 * connection's own buffer as read_some does. */
static void
read_batch(struct conns *cs, struct conn **b, size_t n)
{
	struct conn_ring_io io[READ_BATCH];
	size_t slice = n > 0 ? READ_MAX / n : 0;
	int64_t now;

	if (n < 2 || recv_slices(cs, b, io, n, slice) != 0) {
		for (size_t i = 0; i < n; i++)
			if (!b[i]->closed)
				read_some(b[i]);
		return;
	}
	now = clock_mono_ms();
	for (size_t i = 0; i < n; i++) {
		struct conn *c = b[i];

		if (c->closed)
			continue;
		free(c->in);
		c->in = io[i].p;
		c->in_shared = true;
		c->in_off = c->in_len = 0;
		c->in_cap = slice;
		if (io[i].res > 0) {
			c->in_len = (size_t)io[i].res;
			c->active_ms = now;
			c->face->input(c);
		}
		leave_shared(c);
		read_done(c, io[i].res);
	}
}

/* ---- bounds in time ------------------------------------------------------ */

/* The first bound in time `c` is past at `now`, as a counter to bump and
 * a word for the log; NULL when none. */
static uint64_t *
overdue(struct conn *c, int64_t now, const char **why)
{
	const struct conns_limits *lim = &c->cs->lim;
	struct conns_stats *st = &c->cs->st;

	if (!c->ready && lim->handshake_ms != 0 &&
	    now - c->born_ms >= lim->handshake_ms) {
		*why = "handshake";
		return &st->closed_handshake;
	}
	if (c->part_ms != 0 && lim->frame_ms != 0 &&
	    now - c->part_ms >= lim->frame_ms) {
		*why = "frame";
		return &st->closed_frame;
	}
	if (conn_over(c) && lim->stall_ms != 0 &&
	    now - c->sent_ms >= lim->stall_ms) {
		*why = "unread replies";
		return &st->closed_stalled;
	}
	if (lim->idle_ms != 0 && now - c->active_ms >= lim->idle_ms &&
	    conn_unsent(c) == 0 && c->in_len == c->in_off &&
	    (c->face->busy == NULL || !c->face->busy(c))) {
		*why = "idle";
		return &st->closed_idle;
	}
	return NULL;
}

void
conns_tick(struct conns *cs, int64_t now)
{
	if (cs->any_paused) {
		cs->any_paused = false;
		for (size_t i = 0; i < cs->nls; i++) {
			struct conn_listener *l = cs->ls[i];
			struct epoll_event ev = { .events = EPOLLIN };

			if (l->paused_until == 0 || l->fd < 0)
				continue;
			if (now < l->paused_until) {
				cs->any_paused = true;
				continue;
			}
			ev.data.u64 = (uint64_t)(uintptr_t)l | TAG_LISTENER;
			if (epoll_ctl(cs->epfd, EPOLL_CTL_MOD, l->fd, &ev) == 0)
				l->paused_until = 0;
			else
				cs->any_paused = true;
		}
	}
	if (now < cs->next_tick)
		return;
	cs->next_tick = now + TICK_MS;
	/* Many connections gone: their small blocks, freed, sit in the
	 * heap's middle where free() cannot return them; hand the pages
	 * back. Not in the middle of a wave of closes, whose rest would then
	 * keep its memory until the next trim is due: once a tick has freed
	 * none, or after TRIM_EVERY_MS of closes that never pause. */
	if (cs->freed >= TRIM_AFTER &&
	    ((cs->freed == cs->freed_tick &&
	         now - cs->trimmed_ms >= TRIM_QUIET_MS) ||
	        now - cs->trimmed_ms >= TRIM_EVERY_MS)) {
		malloc_trim(0);
		cs->freed = 0;
		cs->trimmed_ms = now;
	}
	cs->freed_tick = cs->freed;
	for (struct conn *c = cs->all; c != NULL; c = c->next) {
		const char *why = NULL;
		uint64_t *ctr;

		if (c->closed || (ctr = overdue(c, now, &why)) == NULL)
			continue;
		(*ctr)++;
		log_debug(c->face->name,
		    "closing a connection: %s timeout peer=%s", why, c->peer);
		note(&cs->note_timeout, c->face->name,
		    "connections closed by a timeout (handshake, frame, idle "
		    "or unread replies; see stats)");
		conn_close(c);
	}
	conn_free_dead(cs);
}

int64_t
conns_next_ms(const struct conns *cs)
{
	int64_t next = cs->nconns > 0 ? cs->next_tick : INT64_MAX;

	for (size_t i = 0; cs->any_paused && i < cs->nls; i++)
		if (cs->ls[i]->paused_until != 0 &&
		    cs->ls[i]->paused_until < next)
			next = cs->ls[i]->paused_until;
	return next;
}

void
conns_run(struct conns *cs)
{
	struct epoll_event evs[EVENTS];
	struct conn *b[READ_BATCH];
	size_t nb = 0;
	int n = epoll_wait(cs->epfd, evs, EVENTS, 0);

	for (int i = 0; i < n; i++) {
		uint64_t u = evs[i].data.u64;
		struct conn *c;

		if (u & TAG_LISTENER) {
			struct conn_listener *l =
			    (struct conn_listener *)(uintptr_t)(u &
			        ~(uint64_t)TAG_LISTENER);

			/* a burst of connections is taken in one turn */
			for (int k = 0; k < ACCEPT_BATCH && l->fd >= 0 &&
			     l->paused_until == 0 && accept_one(cs, l);
			     k++)
				;
			continue;
		}
		c = evs[i].data.ptr;
		if (c->closed)
			continue;
		if (evs[i].events & EPOLLOUT) {
			bool was_full = conn_unsent(c) > 0;

			if (conn_write_some(c) && was_full && !c->closed)
				c->face->input(c); /* room again */
		}
		if (c->closed)
			continue;
		if ((evs[i].events & (EPOLLHUP | EPOLLERR)) &&
		    !conn_may_read(c))
			conn_close(c); /* dead, and nothing would read it */
		else if (!(evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			continue;
		else if (cs->ring != NULL && nb < READ_BATCH &&
		    c->in_len == c->in_off && conn_may_read(c))
			b[nb++] = c; /* read below, with the others */
		else
			read_some(c);
	}
	read_batch(cs, b, nb);
	conn_free_dead(cs);
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
		conn_maybe_free(c);
	}
	conn_free_dead(cs);
	for (size_t i = 0; i < cs->nls; i++)
		free(cs->ls[i]);
	close(cs->epfd);
	if (cs->reserve_fd >= 0)
		close(cs->reserve_fd);
	conn_ring_close(cs->ring);
	free(cs->rbuf);
	free(cs);
}
