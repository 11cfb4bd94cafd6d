/* t_srv - see t_srv.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "t_srv.h"

static void
sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

const char *
t_bin(const char *name)
{
	static char path[PATH_MAX + 256];
	char self[PATH_MAX];

	if (strlen(name) > 200)
		return name;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n < 0)
		n = 0;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash != NULL)
		*slash = '\0';
	snprintf(path, sizeof(path), "%s/%s", self, name);
	return path;
}

/* Whether `port` is now this process's for as long as it lives: its
 * file in T_PORT_DIR, locked (flock) and left open, names this process.
 * Another test process holds the lock of the ports it was given, even
 * while their servers restart and nothing listens on them; a Node.js
 * test, which cannot lock, leaves its pid in the file, and a live pid
 * other than ours keeps the port too. Where the directory cannot be
 * used, the bind check alone decides. */
static bool
port_reserve(int port)
{
	char path[64], pid[24] = { 0 };
	pid_t owner;
	ssize_t w;
	int fd;

	if (mkdir(T_PORT_DIR, 0777) != 0 && errno != EEXIST)
		return true;
	snprintf(path, sizeof(path), "%s/%d", T_PORT_DIR, port);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return true;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return false;
	}
	if (pread(fd, pid, sizeof(pid) - 1, 0) < 0)
		pid[0] = '\0';
	owner = (pid_t)atoi(pid);
	if (owner > 0 && owner != getpid() &&
	    (kill(owner, 0) == 0 || errno == EPERM)) {
		close(fd);
		return false;
	}
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	/* the pid is for the Node.js harness: the lock alone keeps the
	 * port from the C and Python tests */
	w = ftruncate(fd, 0) == 0 ? pwrite(fd, pid, strlen(pid), 0) : -1;
	(void)w;
	return true; /* fd stays open: the lock lasts as long as we do */
}

/* A port below the kernel's ephemeral range (32768 up, on Linux), found
 * free by binding it: an outgoing connection never takes such a port as
 * its own, so a client that dials it before the server listens is
 * refused, never connected to itself (a TCP "simultaneous open" with its
 * own port, which would answer it with its own bytes). Each test process
 * walks a block of its own (by pid), from a random start, and reserves
 * each port it hands out (port_reserve), so that tests running side by
 * side never hand out the same port, between a check and a server's bind
 * or while a server restarts. */
int
t_free_port(void)
{
	enum { BASE = 20000, BLOCKS = 120, BLOCK = 100 };
	static unsigned next;
	static bool started;

	if (!started) {
		/* a random start within the block: two test programs whose
		 * pids share a block, started in the same second, must not
		 * walk the same ports */
		if (getrandom(&next, sizeof(next), 0) != sizeof(next))
			next = (unsigned)time(NULL) ^ (unsigned)getpid();
		next %= BLOCK;
		started = true;
	}
	for (int tries = 0; tries < BLOCK; tries++) {
		struct sockaddr_in a = { .sin_family = AF_INET };
		int fd, ok,
		    port = BASE + (int)((unsigned)getpid() % BLOCKS) * BLOCK +
		    (int)(next++ % BLOCK);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		a.sin_port = htons((uint16_t)port);
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		ok = bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(fd);
		if (ok && port_reserve(port))
			return port;
	}
	return -1;
}

void
t_srv_init(struct t_srv *s, const char *dir, const char *name)
{
	memset(s, 0, sizeof(*s));
	s->port = t_free_port();
	snprintf(s->url, sizeof(s->url), "tcp://127.0.0.1:%d", s->port);
	snprintf(s->data, sizeof(s->data), "%s/%s", dir, name);
	snprintf(s->log, sizeof(s->log), "%s.log", s->data);
}

/* True when the server's URL accepts a connection and answers nng's SP
 * header exchange (as a REQ peer would): tcp://127.0.0.1:PORT, or
 * ipc://PATH (nng's IPC transport opens with the same header). A bare
 * connect-and-close is not enough: nng's listener takes a failed
 * negotiation for a system error and stops accepting for 100 ms, which
 * would delay the test's first request. */
static bool
listening(const struct t_srv *s)
{
	static const unsigned char hdr[8] = { 0, 'S', 'P', 0, 0, 0x30, 0, 0 };
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct sockaddr_un u = { .sun_family = AF_UNIX };
	bool ipc = strncmp(s->url, "ipc://", 6) == 0;
	unsigned char got[8];
	size_t n = 0;
	int fd = socket(ipc ? AF_UNIX : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)s->port);
	snprintf(u.sun_path, sizeof(u.sun_path), "%s", s->url + 6);
	ok = fd >= 0 &&
	    (ipc ? connect(fd, (struct sockaddr *)&u, sizeof(u))
	         : connect(fd, (struct sockaddr *)&a, sizeof(a))) == 0 &&
	    send(fd, hdr, sizeof(hdr), MSG_NOSIGNAL) == (ssize_t)sizeof(hdr);
	while (ok && n < sizeof(got)) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t r;

		ok = poll(&p, 1, 1000) == 1 &&
		    (r = read(fd, got + n, sizeof(got) - n)) > 0;
		if (ok)
			n += (size_t)r;
	}
	/* rep0's own header: never our own bytes come back */
	ok = ok && got[0] == 0 && got[1] == 'S' && got[2] == 'P' &&
	    got[3] == 0 && got[4] == 0 && got[5] == 0x31;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* A TLS URL (tls+tcp://) or a WebSocket one (ws://) cannot be asked in
 * SP without a handshake of its own: the server's log line that it
 * serves stands for the answer (it is written once every listener is
 * up). */
static bool
logged_url(const struct t_srv *s)
{
	return strncmp(s->url, "tls+", 4) == 0 || strncmp(s->url, "ws", 2) == 0;
}

static bool
logged_serving(const struct t_srv *s)
{
	char line[4096];
	FILE *f = fopen(s->log, "r");
	bool found = false;

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, "sluiced serving") != NULL;
	fclose(f);
	return found;
}

void
t_srv_print_log(const struct t_srv *s)
{
	char buf[4096];
	ssize_t n;
	int fd = open(s->log, O_RDONLY);

	if (fd < 0)
		return;
	fprintf(stderr, "--- %s\n", s->log);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stderr);
	close(fd);
}

/* Starts argv with the descriptors in `fds` as its standard input,
 * output and error (-1: inherited); `path`: looked up in $PATH. The
 * child shares the caller's memory until its exec (posix_spawn), which
 * a fork does not: a fork copies the page tables of a sanitized test's
 * shadow memory, tens of ms each on a VM. The pid, or -1. */
static pid_t
spawn(char *const argv[], const int fds[3], bool path)
{
	extern char **environ;
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int rc;

	if (posix_spawn_file_actions_init(&fa) != 0)
		return -1;
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			(void)posix_spawn_file_actions_adddup2(&fa, fds[i], i);
	rc = path ? posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ)
	          : posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	return rc == 0 ? pid : -1;
}

pid_t
t_spawn_logged(char *const argv[], const char *log)
{
	int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	pid_t pid;

	if (fd < 0)
		return -1;
	pid = spawn(argv, (const int[3]) { -1, fd, fd }, true);
	close(fd);
	return pid;
}

int
t_srv_spawn(struct t_srv *s)
{
	const char *argv[T_SRV_MAX_ARGS + 8];
	int argc = 0;
	bool seg_named = false;
	pid_t pid;

	argv[argc++] = t_bin(s->prog != NULL ? s->prog : "sluiced");
	argv[argc++] = "--data";
	argv[argc++] = s->data;
	argv[argc++] = "--listen";
	argv[argc++] = s->url;
	for (int i = 0; i < T_SRV_MAX_ARGS && s->args[i] != NULL; i++) {
		argv[argc++] = s->args[i];
		seg_named =
		    seg_named || strcmp(s->args[i], "--segment-size") == 0;
	}
	if (!seg_named) {
		argv[argc++] = "--segment-size";
		argv[argc++] = T_SRV_SEGMENT;
	}
	argv[argc] = NULL;

	if ((pid = t_spawn_logged((char *const *)argv, s->log)) < 0)
		return -1;
	s->pid = pid;
	return 0;
}

int
t_srv_wait(struct t_srv *s)
{
	for (int i = 0; i < 1000; i++) {
		if (logged_url(s) ? logged_serving(s) : listening(s))
			return 0;
		if (!t_srv_alive(s))
			break;
		sleep_ms(10);
	}
	fprintf(stderr, "sluiced on %s did not start\n", s->url);
	t_srv_print_log(s);
	t_srv_stop(s, SIGKILL);
	return -1;
}

int
t_srv_start(struct t_srv *s)
{
	return t_srv_spawn(s) != 0 ? -1 : t_srv_wait(s);
}

bool
t_srv_alive(struct t_srv *s)
{
	int status;

	if (s->pid <= 0)
		return false;
	if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
		s->pid = 0;
		return false;
	}
	return true;
}

int
t_srv_stop(struct t_srv *s, int sig)
{
	int status;

	if (s->pid <= 0)
		return -1;
	kill(s->pid, sig);
	for (int i = 0; i < 1000; i++) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = 0;
			/* a death the test did not ask for: show why */
			if (WIFSIGNALED(status) && WTERMSIG(status) != sig) {
				fprintf(stderr, "sluiced died of signal %d\n",
				    WTERMSIG(status));
				t_srv_print_log(s);
			}
			return status;
		}
		sleep_ms(10);
	}
	fprintf(stderr, "sluiced did not stop within 10 s of signal %d\n", sig);
	t_srv_print_log(s);
	kill(s->pid, SIGKILL);
	waitpid(s->pid, &status, 0);
	s->pid = 0;
	return -1;
}

/* Reads what is available from fd into buf at *len (keeping a NUL). */
static bool
drain(int fd, char *buf, size_t cap, size_t *len)
{
	char scratch[4096];
	ssize_t n = read(fd, scratch, sizeof(scratch));

	if (n <= 0)
		return false;
	if (buf != NULL && cap > 0) {
		size_t room = cap - 1 - *len;
		size_t take = (size_t)n < room ? (size_t)n : room;

		memcpy(buf + *len, scratch, take);
		*len += take;
		buf[*len] = '\0';
	}
	return true;
}

int
t_run(char *const argv[], const char *in, char *out, size_t outcap, char *err,
    size_t errcap)
{
	int pin[2], pout[2], perr[2], status;
	size_t olen = 0, elen = 0, ilen = in ? strlen(in) : 0, ioff = 0;
	bool oopen = true, eopen = true;
	pid_t pid;

	/* a child that exits before reading all of `in`: EPIPE, not death */
	signal(SIGPIPE, SIG_IGN);
	if (out && outcap)
		out[0] = '\0';
	if (err && errcap)
		err[0] = '\0';
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) ||
	    pipe2(perr, O_CLOEXEC))
		return -1;
	pid = spawn(argv, (const int[3]) { pin[0], pout[1], perr[1] }, false);
	if (pid < 0) {
		for (int i = 0; i < 2; i++) {
			close(pin[i]);
			close(pout[i]);
			close(perr[i]);
		}
		return -1;
	}
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	if (ilen == 0) {
		close(pin[1]);
		pin[1] = -1;
	}
	for (int spins = 0; (oopen || eopen) && spins < 3000; spins++) {
		struct pollfd p[3] = {
			{ .fd = oopen ? pout[0] : -1, .events = POLLIN },
			{ .fd = eopen ? perr[0] : -1, .events = POLLIN },
			{ .fd = pin[1], .events = POLLOUT },
		};

		poll(p, 3, 10);
		if (p[0].revents && !drain(pout[0], out, outcap, &olen))
			oopen = false;
		if (p[1].revents && !drain(perr[0], err, errcap, &elen))
			eopen = false;
		if (pin[1] >= 0 && (p[2].revents & (POLLOUT | POLLERR))) {
			ssize_t n = write(pin[1], in + ioff, ilen - ioff);

			if (n > 0)
				ioff += (size_t)n;
			if (n < 0 || ioff == ilen) {
				close(pin[1]);
				pin[1] = -1;
			}
		}
	}
	if (pin[1] >= 0)
		close(pin[1]);
	close(pout[0]);
	close(perr[0]);
	/* its output closed: it has exited, or is about to */
	for (int i = 0; i < 3000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		sleep_ms(i < 100 ? 1 : 10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}
