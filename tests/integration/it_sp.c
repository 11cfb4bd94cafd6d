/* it_sp - see it_sp.h. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "it.h"
#include "it_sp.h"
#include "proto/sp.h"

int
it_sp_dial(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		.sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	assert_true(fd >= 0);
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

void
it_sp_send_all(int fd, const void *p, size_t n)
{
	size_t done = 0;
	int64_t end = it_mono_ms() + IT_SP_MS;

	while (done < n) {
		ssize_t w =
		    send(fd, (const char *)p + done, n - done, MSG_NOSIGNAL);

		assert_true(w > 0 && it_mono_ms() < end);
		done += (size_t)w;
	}
}

/* Reads exactly n bytes; false when the peer closed (or time ran out). */
static bool
recv_all(int fd, void *p, size_t n)
{
	size_t got = 0;
	int64_t end = it_mono_ms() + IT_SP_MS;

	while (got < n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (it_mono_ms() >= end)
			return false;
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		r = recv(fd, (char *)p + got, n - got, 0);
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

int
it_sp_open(int port)
{
	uint8_t hs[SP_HANDSHAKE], peer[SP_HANDSHAKE];
	int fd = it_sp_dial(port);

	sp_handshake(hs, SP_PROTO_REQ0);
	it_sp_send_all(fd, hs, sizeof(hs));
	assert_true(recv_all(fd, peer, sizeof(peer)));
	assert_true(sp_handshake_ok(peer, SP_PROTO_REP0));
	return fd;
}

void
it_sp_frame(struct buf *out, const uint32_t *bt, size_t nbt, const void *body,
    size_t len)
{
	uint8_t w[SP_LEN];

	sp_store_len(w, 4 * nbt + len);
	buf_put(out, w, SP_LEN);
	for (size_t i = 0; i < nbt; i++) {
		sp_store_u32(w, bt[i]);
		buf_put(out, w, 4);
	}
	buf_put(out, body, len);
	assert_false(buf_failed(out));
}

void
it_sp_send(int fd, uint32_t id, const void *body, size_t len)
{
	uint8_t w[SP_LEN + 4];

	sp_store_len(w, 4 + len);
	sp_store_u32(w + SP_LEN, id);
	it_sp_send_all(fd, w, sizeof(w));
	it_sp_send_all(fd, body, len);
}

bool
it_sp_recv(int fd, uint32_t *bt, size_t nbt, struct buf *body)
{
	uint8_t w[SP_LEN];
	uint64_t len;

	if (!recv_all(fd, w, SP_LEN))
		return false;
	len = sp_load_len(w);
	assert_true(len >= 4 * nbt && len < (64u << 20));
	for (size_t i = 0; i < nbt; i++) {
		if (!recv_all(fd, w, 4))
			return false;
		bt[i] = sp_load_u32(w);
	}
	buf_reset(body);
	assert_true(buf_reserve(body, len - 4 * nbt));
	if (!recv_all(fd, body->data, len - 4 * nbt))
		return false;
	body->len = len - 4 * nbt;
	return true;
}

bool
it_sp_closed_by_peer(int fd)
{
	char b[4096];
	int64_t end = it_mono_ms() + IT_SP_MS;

	while (it_mono_ms() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		r = recv(fd, b, sizeof(b), 0);
		if (r == 0 || (r < 0 && errno == ECONNRESET))
			return true;
	}
	return false;
}
