/* t_etcd - see t_etcd.h. */
#include <arpa/inet.h>
#include <assert.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t_etcd.h"
#include "t_lib.h"
#include "t_srv.h"

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

bool
t_etcd_available(void)
{
	const char *path = getenv("PATH");
	char *dirs, *save = NULL;
	bool found = false;

	if (path == NULL || (dirs = strdup(path)) == NULL)
		return false;
	for (char *d = strtok_r(dirs, ":", &save); d != NULL && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char prog[1024];

		snprintf(prog, sizeof(prog), "%s/etcd", d);
		found = access(prog, X_OK) == 0;
	}
	free(dirs);
	return found;
}

void
t_etcd_init(struct t_etcd *e, const char *dir, const char *name)
{
	static unsigned instances;

	memset(e, 0, sizeof(*e));
	e->client_port = t_free_port();
	do
		e->peer_port = t_free_port();
	while (e->peer_port == e->client_port);
	snprintf(e->url, sizeof(e->url), "http://127.0.0.1:%d", e->client_port);
	snprintf(e->name, sizeof(e->name), "sluice-test-%d-%u", (int)getpid(),
	    instances++);
	snprintf(e->data, sizeof(e->data), "%s/%s", dir, name);
	snprintf(e->log, sizeof(e->log), "%s.log", e->data);
}

/* True when etcd answers GET /health with {"health":"true"}. */
static bool
healthy(const struct t_etcd *e)
{
	static const char req[] = "GET /health HTTP/1.0\r\n"
	                          "Host: 127.0.0.1\r\n\r\n";
	struct sockaddr_in a = { .sin_family = AF_INET };
	char got[2048];
	size_t n = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)e->client_port);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) ==
	        (ssize_t)sizeof(req) - 1;
	/* HTTP/1.0: the answer ends when etcd closes the connection. */
	while (ok && n < sizeof(got) - 1) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&p, 1, 1000) != 1 ||
		    (r = read(fd, got + n, sizeof(got) - 1 - n)) <= 0)
			break;
		n += (size_t)r;
	}
	got[n] = '\0';
	if (fd >= 0)
		close(fd);
	return ok && strstr(got, "\"health\":\"true\"") != NULL;
}

static void
print_log(const struct t_etcd *e)
{
	char buf[4096];
	ssize_t n;
	int fd = open(e->log, O_RDONLY);

	if (fd < 0)
		return;
	fprintf(stderr, "--- %s\n", e->log);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stderr);
	close(fd);
}

int
t_etcd_start(struct t_etcd *e)
{
	char client[64], peer[64], cluster[160];
	pid_t pid;

	snprintf(client, sizeof(client), "http://127.0.0.1:%d", e->client_port);
	snprintf(peer, sizeof(peer), "http://127.0.0.1:%d", e->peer_port);
	snprintf(cluster, sizeof(cluster), "%s=%s", e->name, peer);
	const char *argv[] = { "etcd", "--name", e->name, "--data-dir", e->data,
		"--listen-client-urls", client, "--advertise-client-urls",
		client, "--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer, "--initial-cluster",
		cluster, "--initial-cluster-token", e->name, NULL };

	if ((pid = t_spawn_logged((char *const *)argv, e->log)) < 0)
		return -1;
	e->pid = pid;
	for (int i = 0; i < 600; i++) {
		int status;

		if (healthy(e))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			e->pid = 0;
			break;
		}
		sleep_ms(50);
	}
	fprintf(stderr, "etcd on %s did not start\n", e->url);
	print_log(e);
	t_etcd_signal(e, SIGKILL);
	return -1;
}

int
t_etcd_signal(struct t_etcd *e, int sig)
{
	int status;

	if (e->pid <= 0)
		return -1;
	kill(e->pid, sig);
	if (sig == SIGSTOP)
		return t_wait_stopped(e->pid);
	if (sig == SIGCONT)
		return 0;
	for (int i = 0; i < 1000; i++) {
		if (waitpid(e->pid, &status, WNOHANG) == e->pid) {
			e->pid = 0;
			return 0;
		}
		sleep_ms(10);
	}
	fprintf(stderr, "etcd did not stop within 10 s of signal %d\n", sig);
	kill(e->pid, SIGKILL);
	waitpid(e->pid, &status, 0);
	e->pid = 0;
	return -1;
}

/* ---- The fake ----------------------------------------------------------- */

/* Reads one request (its headers and Content-Length bytes of body),
 * giving up after a few seconds of silence. */
static bool
read_request(int fd)
{
	char buf[8192];
	size_t n = 0;

	while (n < sizeof(buf) - 1) {
		struct pollfd p = { fd, POLLIN, 0 };
		const char *end, *cl;
		ssize_t r;

		if (poll(&p, 1, 5000) != 1 ||
		    (r = read(fd, buf + n, sizeof(buf) - 1 - n)) <= 0)
			return false;
		n += (size_t)r;
		buf[n] = '\0';
		if ((end = strstr(buf, "\r\n\r\n")) == NULL)
			continue;
		cl = strcasestr(buf, "Content-Length:");
		if (cl == NULL ||
		    n - (size_t)(end + 4 - buf) >= strtoul(cl + 15, NULL, 10))
			return true;
	}
	return false;
}

/* Sleeps `ms` in small steps, or less when the fake is told to stop. */
static void
fake_wait(struct t_etcd_fake *f, int ms)
{
	for (int waited = 0; waited < ms && !atomic_load(&f->stop);
	     waited += 20)
		sleep_ms(20);
}

static void
answer(struct t_etcd_fake *f, int fd)
{
	char head[256], body[sizeof(f->body)];
	int status, delay;
	bool hangup;
	size_t len;

	pthread_mutex_lock(&f->mtx);
	status = f->status;
	delay = f->delay_ms;
	hangup = f->close;
	memcpy(body, f->body, sizeof(body));
	pthread_mutex_unlock(&f->mtx);
	fake_wait(f, delay);
	if (hangup)
		return;
	len = strlen(body);
	snprintf(head, sizeof(head),
	    "HTTP/1.1 %d Fake\r\nContent-Type: application/json\r\n"
	    "Content-Length: %zu\r\nConnection: close\r\n\r\n",
	    status, len);
	if (send(fd, head, strlen(head), MSG_NOSIGNAL) > 0)
		send(fd, body, len, MSG_NOSIGNAL);
}

static void *
fake_main(void *arg)
{
	struct t_etcd_fake *f = arg;

	while (!atomic_load(&f->stop)) {
		struct pollfd p = { f->fd, POLLIN, 0 };
		int c;

		if (poll(&p, 1, 50) != 1)
			continue;
		if ((c = accept4(f->fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
			continue;
		if (read_request(c)) {
			atomic_fetch_add(&f->nreq, 1);
			answer(f, c);
		}
		close(c);
	}
	return NULL;
}

/* A listening socket on a free loopback port (a few tries: another test
 * may take the port between t_free_port's check and this bind). */
static int
fake_listen(int *port)
{
	for (int tries = 0; tries < 20; tries++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		*port = t_free_port();
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a.sin_port = htons((uint16_t)*port);
		if (fd >= 0 &&
		    bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		    listen(fd, 16) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
	}
	return -1;
}

struct t_etcd_fake *
t_etcd_fake_start(void)
{
	struct t_etcd_fake *f = calloc(1, sizeof(*f));
	int rc;

	assert(f != NULL);
	f->fd = fake_listen(&f->port);
	assert(f->fd >= 0);
	snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%d", f->port);
	f->status = 200;
	pthread_mutex_init(&f->mtx, NULL);
	rc = pthread_create(&f->thread, NULL, fake_main, f);
	assert(rc == 0);
	(void)rc;
	return f;
}

void
t_etcd_fake_set(struct t_etcd_fake *f, int status, const char *body,
    int delay_ms, bool close)
{
	pthread_mutex_lock(&f->mtx);
	f->status = status;
	snprintf(f->body, sizeof(f->body), "%s", body);
	f->delay_ms = delay_ms;
	f->close = close;
	pthread_mutex_unlock(&f->mtx);
}

void
t_etcd_fake_stop(struct t_etcd_fake *f)
{
	if (f == NULL)
		return;
	atomic_store(&f->stop, true);
	pthread_join(f->thread, NULL);
	close(f->fd);
	pthread_mutex_destroy(&f->mtx);
	free(f);
}
