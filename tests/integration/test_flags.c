/* sluiced's flags and a start that cannot succeed: a bad flag is one line
 * and a hint; durations read as the sluice tool reads them; a start that
 * fails for an address (not a URL, taken, unresolvable) says why and leaves
 * nothing on disk; a follower whose leader cannot be reached says so,
 * naming the URL, and not in a flood. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"

enum { OUT_MAX = 16 << 10, ARGS_MAX = 24 };

static char out[OUT_MAX], err[OUT_MAX];

/* Runs `sluiced ARGS...` (NULL-ended) to its end; its exit code, stdout
 * in `out`, stderr in `err`. */
static int
sluiced(const char *arg, ...)
{
	char *argv[ARGS_MAX];
	char bin[1024];
	int argc = 0;
	va_list ap;

	snprintf(bin, sizeof(bin), "%s", t_bin("sluiced"));
	argv[argc++] = bin;
	va_start(ap, arg);
	for (const char *a = arg; a != NULL && argc < ARGS_MAX - 1;
	     a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	return t_run(argv, NULL, out, sizeof(out), err, sizeof(err));
}

static int
lines(const char *s)
{
	int n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

static bool
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* A TCP socket listening on 127.0.0.1, as another program holding a port
 * would; its port in `*port`. */
static int
hold_port(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* An unknown option: getopt's line and a hint, not the whole help. */
static void
test_an_unknown_option_is_one_line_and_a_hint(void **state)
{
	(void)state;
	assert_int_equal(sluiced("--bogus", NULL), 2);
	assert_int_equal(lines(err), 2);
	assert_non_null(strstr(err, "'--bogus'"));
	assert_non_null(strstr(err, "Try 'sluiced --help'"));
	assert_null(strstr(err, "usage"));
	assert_string_equal(out, "");

	assert_int_equal(sluiced("--data", NULL), 2);
	assert_int_equal(lines(err), 2);
	assert_non_null(strstr(err, "Try 'sluiced --help'"));

	assert_int_equal(sluiced("--data", "d", "extra", NULL), 2);
	assert_int_equal(lines(err), 2);
	assert_non_null(strstr(err, "'extra'"));
}

/* Bad values: one line each, naming the flag, what it takes, and what
 * was given. */
static void
test_a_bad_value_is_one_clear_line(void **state)
{
	struct t_dir *d = *state;

	assert_int_equal(
	    sluiced("--data", t_path(d, "data"), "--fsync", "sometimes", NULL),
	    2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "--fsync"));
	assert_non_null(strstr(err, "always"));
	assert_non_null(strstr(err, "never"));
	assert_non_null(strstr(err, "'sometimes'"));

	assert_int_equal(sluiced("--ttr", "soon", NULL), 2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "--ttr"));
	assert_non_null(strstr(err, "2s"));

	assert_int_equal(sluiced("--sync-replicas", "many", NULL), 2);
	assert_int_equal(lines(err), 1);

	/* the snapshot cadence's growth is a per cent, 0 to 10000 */
	assert_int_equal(sluiced("--data", t_path(d, "data"),
	                     "--snapshot-growth", "10001", NULL),
	    2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "--snapshot-growth"));
	assert_non_null(strstr(err, "10000"));
	assert_int_equal(sluiced("--data", t_path(d, "data"),
	                     "--snapshot-growth", "half", NULL),
	    2);
	assert_non_null(strstr(err, "--snapshot-growth"));

	/* how long the snapshot worker keeps its state: 0 to 86400 s */
	assert_int_equal(sluiced("--data", t_path(d, "data"),
	                     "--snapshot-reuse", "86401", NULL),
	    2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "--snapshot-reuse"));
	assert_non_null(strstr(err, "86400"));
	assert_int_equal(sluiced("--data", t_path(d, "data"),
	                     "--snapshot-reuse", "-1", NULL),
	    2);
	assert_non_null(strstr(err, "--snapshot-reuse"));

	/* a URL flag given a bare address says what a URL looks like */
	assert_int_equal(sluiced("--data", t_path(d, "data"), "--listen",
	                     "127.0.0.1:7711", NULL),
	    2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "--listen"));
	assert_non_null(strstr(err, "tcp://127.0.0.1:7711"));
	assert_int_equal(sluiced("--data", t_path(d, "data"), "--follow",
	                     "localhost:7721", NULL),
	    2);
	assert_non_null(strstr(err, "tcp://localhost:7721"));
	assert_int_equal(sluiced("--data", t_path(d, "data"), "--repl-listen",
	                     "tcp://", NULL),
	    2);
	assert_int_equal(lines(err), 1);

	/* a payload limit whose record a segment cannot hold: the largest
	 * puts would be refused under that limit's name */
	assert_int_equal(sluiced("--data", t_path(d, "data"), "--max-payload",
	                     "67108864", NULL),
	    2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err,
	    "--max-payload 67108864 does not fit in "
	    "a log segment of 67108864 bytes"));
	assert_non_null(strstr(err, "--segment-size of at least 67178496"));
	assert_non_null(strstr(err, "--max-payload of at most 67043264"));
	assert_int_equal(sluiced("--data", t_path(d, "data"), "--max-payload",
	                     "1048576", "--segment-size", "1048576", NULL),
	    2);
	assert_non_null(strstr(err, "--max-payload 1048576 does not fit"));
	assert_false(exists(t_path(d, "data")));
}

/* The flags of automatic failover: each mistake named in one line, before
 * anything is written. */
static void
test_failover_flags_are_checked(void **state)
{
	struct t_dir *d = *state;
	const char *data = t_path(d, "data");
	const char *etcd = "http://127.0.0.1:2379";

	assert_int_equal(sluiced("--data", data, "--etcd", etcd, NULL), 2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "--etcd needs --repl-listen"));

	assert_int_equal(sluiced("--data", data, "--etcd", etcd,
	                     "--repl-listen", "tcp://127.0.0.1:7721",
	                     "--follow", "tcp://127.0.0.1:7722", NULL),
	    2);
	assert_non_null(strstr(err, "leave --follow out"));

	assert_int_equal(
	    sluiced("--data", data, "--etcd", "127.0.0.1:2379", NULL), 2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "http://127.0.0.1:2379"));
	assert_non_null(strstr(err, "'127.0.0.1:2379'"));

	assert_int_equal(sluiced("--data", data, "--etcd",
	                     "http://127.0.0.1:2379,http://h", NULL),
	    2);
	assert_non_null(strstr(err, "'http://h' has no port"));

	assert_int_equal(sluiced("--data", data, "--node", "a b", NULL), 2);
	assert_non_null(strstr(err, "--node takes 1 to 64"));
	assert_int_equal(sluiced("--data", data, "--node", "n1", NULL), 2);
	assert_non_null(strstr(err, "need --etcd"));
	assert_int_equal(sluiced("--data", data, "--advertise-http",
	                     "http://10.0.0.1:7780", NULL),
	    2);
	assert_non_null(strstr(err, "need --etcd"));
	assert_int_equal(sluiced("--data", data, "--advertise-http",
	                     "tcp://10.0.0.1:7780", NULL),
	    2);
	assert_non_null(strstr(err,
	    "--advertise-http takes a URL such as "
	    "http://"));
	assert_int_equal(
	    sluiced("--data", data, "--advertise-http", "http://:7780", NULL),
	    2);
	assert_non_null(strstr(err, "needs a host and a port"));
	assert_int_equal(sluiced("--data", data, "--advertise-http",
	                     "http://h:7780/v1", NULL),
	    2);
	assert_non_null(strstr(err, "no path"));

	assert_int_equal(
	    sluiced("--data", data, "--leader-ttl", "500ms", NULL), 2);
	assert_non_null(strstr(err, "--leader-ttl"));
	assert_non_null(strstr(err, "1s"));
	assert_int_equal(
	    sluiced("--data", data, "--map-reread", "500ms", NULL), 2);
	assert_non_null(strstr(err, "--map-reread"));
	assert_non_null(strstr(err, "1s"));

	assert_int_equal(sluiced("--data", data, "--etcd", etcd, "--listen",
	                     "tcp://0.0.0.0:7711", "--repl-listen",
	                     "tcp://127.0.0.1:7721", NULL),
	    2);
	assert_non_null(strstr(err, "say --advertise URL"));
	assert_false(exists(data));
}

/* A bare number other than 0 is no duration: the flag and the value
 * named, both readings offered, one line, nothing written. */
static void
test_a_bare_number_is_no_duration(void **state)
{
	struct t_dir *d = *state;
	const char *data = t_path(d, "data");

	assert_int_equal(sluiced("--data", data, "--ttr", "30", NULL), 2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err,
	    "--ttr 30: a duration needs a unit: say "
	    "30s or 30000ms (30ms if milliseconds "
	    "were meant)"));
	assert_int_equal(
	    sluiced("--data", data, "--sync-timeout", "3000", NULL), 2);
	assert_non_null(strstr(err,
	    "--sync-timeout 3000: a duration needs a "
	    "unit: say 3000s or 3000000ms"));
	assert_int_equal(sluiced("--data", data, "--fsync", "10", NULL), 2);
	assert_int_equal(lines(err), 1);
	assert_non_null(
	    strstr(err, "--fsync 10: a duration needs a unit: say 10s"));
	assert_int_equal(
	    sluiced("--data", data, "--idle-timeout", "1.5", NULL), 2);
	assert_non_null(strstr(err,
	    "--idle-timeout 1.5: a duration needs a unit: say 1.5s or "
	    "1500ms"));
	assert_false(exists(data));
}

/* The durations of sluiced's flags are the sluice tool's: 5s, 1.5m, 5ms,
 * and 0 alone. */
static void
test_durations_take_units(void **state)
{
	struct t_srv *s = it_srv(*state, "units");
	struct sluice_client *c;
	struct sluice_task *t;

	s->args[0] = "--ttr";
	s->args[1] = "5s";
	s->args[2] = "--dedup-window";
	s->args[3] = "1.5m";
	s->args[4] = "--sync-timeout";
	s->args[5] = "2s";
	s->args[6] = "--fsync";
	s->args[7] = "5ms";
	s->args[8] = "--idle-timeout";
	s->args[9] = "0";
	it_start(s);
	c = it_client(s);
	t = it_peek(c, it_put(c, "units", "x"));
	assert_non_null(t);
	assert_int_equal(t->ttr_ms, 5000);
	sluice_task_free(t);
	sluice_close(c);
}

/* A start that finds a port taken tries it again for 2 s (a killed
 * sluiced's port may be let go only a moment after it ended) before it
 * gives up: those starts run side by side, each with a data directory
 * and free ports of its own. */
struct bg {
	pid_t pid;
	char data[600], log[608];
};

/* Starts `sluiced --data DIR/name ARGS...` (NULL-ended) in the
 * background, its output into DIR/name.log. */
static void
bg_start(struct bg *b, struct t_dir *d, const char *name, ...)
{
	char *argv[ARGS_MAX];
	char bin[1024];
	const char *a;
	int argc = 0;
	va_list ap;

	snprintf(b->data, sizeof(b->data), "%s", t_path(d, name));
	snprintf(b->log, sizeof(b->log), "%s.log", b->data);
	snprintf(bin, sizeof(bin), "%s", t_bin("sluiced"));
	argv[argc++] = bin;
	argv[argc++] = "--data";
	argv[argc++] = b->data;
	va_start(ap, name);
	while ((a = va_arg(ap, const char *)) != NULL && argc < ARGS_MAX - 1)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	b->pid = t_spawn_logged(argv, b->log);
	assert_true(b->pid > 0);
	it_track_pid(b->pid);
}

/* Waits for `b` to end (30 s at most); its exit code (-1: it did not end
 * by itself), its output in `err`; asserts it left nothing on disk. */
static int
bg_wait(struct bg *b)
{
	int64_t end = it_mono_ms() + 30000;
	int status = 0;
	pid_t r;
	size_t n = 0;
	FILE *f;

	while (
	    (r = waitpid(b->pid, &status, WNOHANG)) == 0 && it_mono_ms() < end)
		it_sleep_ms(20);
	if (r == 0) {
		kill(b->pid, SIGKILL);
		waitpid(b->pid, &status, 0);
	}
	if ((f = fopen(b->log, "r")) != NULL) {
		n = fread(err, 1, sizeof(err) - 1, f);
		fclose(f);
	}
	err[n] = '\0';
	assert_false(exists(b->data));
	return r != 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A start that fails because of an address touches no disk: no data
 * directory, no segment, no epoch. */
static void
test_a_failed_start_leaves_nothing_on_disk(void **state)
{
	struct t_dir *d = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char url[64], addr[64], data[600], path[600], ipc[616];
	char free_url[5][64];
	struct bg bg[6];
	int port, fd = hold_port(&port), ufd;

	snprintf(data, sizeof(data), "%s", t_path(d, "data"));
	snprintf(path, sizeof(path), "%s", t_path(d, "s"));
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	for (int i = 0; i < 5; i++)
		snprintf(free_url[i], sizeof(free_url[i]), "tcp://127.0.0.1:%d",
		    t_free_port());
	/* an ipc:// path a live server answers on */
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path));
	ufd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(ufd >= 0);
	assert_int_equal(bind(ufd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(ufd, 4), 0);
	snprintf(ipc, sizeof(ipc), "ipc://%s", path);

	/* the client port is taken; so is the replication port, the HTTP
	 * one, the beanstalk one; two flags on one port; the ipc:// path */
	bg_start(&bg[0], d, "data0", "--listen", url, NULL);
	bg_start(&bg[1], d, "data1", "--listen", free_url[0], "--repl-listen",
	    url, NULL);
	bg_start(
	    &bg[2], d, "data2", "--listen", free_url[1], "--http", addr, NULL);
	bg_start(&bg[3], d, "data3", "--listen", free_url[2], "--beanstalk",
	    addr, NULL);
	bg_start(&bg[4], d, "data4", "--listen", free_url[3], "--repl-listen",
	    free_url[3], NULL);
	bg_start(&bg[5], d, "data5", "--listen", ipc, NULL);

	/* meanwhile, those that fail at once: an address that is not this
	 * machine's, a port out of range, an ipc:// path in no directory */
	assert_int_equal(
	    sluiced("--data", data, "--listen", "tcp://192.0.2.1:7711", NULL),
	    1);
	assert_non_null(strstr(err, "192.0.2.1"));
	assert_false(exists(data));
	assert_int_equal(sluiced("--data", data, "--listen", free_url[4],
	                     "--http", "127.0.0.1:99999", NULL),
	    2);
	assert_non_null(strstr(err, "--http takes HOST:PORT"));
	assert_false(exists(data));
	snprintf(ipc, sizeof(ipc), "ipc://%s", t_path(d, "no/such"));
	assert_int_equal(sluiced("--data", data, "--listen", ipc, NULL), 1);
	assert_non_null(strstr(err, "No such file or directory"));
	assert_false(exists(data));

	assert_int_equal(bg_wait(&bg[0]), 1);
	assert_non_null(strstr(err, url));
	assert_non_null(strstr(err, "in use"));
	assert_int_equal(bg_wait(&bg[1]), 1);
	assert_non_null(strstr(err, "--repl-listen"));
	assert_int_equal(bg_wait(&bg[2]), 1);
	assert_non_null(strstr(err, "--http"));
	assert_int_equal(bg_wait(&bg[3]), 1);
	assert_non_null(strstr(err, "--beanstalk"));
	assert_int_equal(bg_wait(&bg[4]), 1);
	assert_int_equal(bg_wait(&bg[5]), 1);
	assert_non_null(strstr(err, "in use"));
	close(fd);
	close(ufd);
}

/* Takes every connection waiting on the listening socket `fd` (made
 * non-blocking) and closes it at once, as a port where no sluice leader
 * answers would; waits up to `ms` for the first. How many it took. */
static int
refuse_all(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = 0, c;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	while (
	    (c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		close(c);
		n++;
	}
	return n;
}

/* A follower whose leader cannot be reached says so within seconds,
 * naming the URL, then at most every 30 s (docs/operations.md), not on
 * every retry. Its retries are of two kinds: the link redials at most a
 * second apart, and a fetch that finds no link gives up after 6 s (the
 * leader's 1 s wait and 5 s more) and is sent again 200 ms later. The
 * "leader" here is a port that takes each connection and closes it, so
 * no exchange ever completes and every redial is counted: the note must
 * stay one over at least 3 redials and 2 fetches given up, all within
 * 25 s of the note, before a second one is due. */
static void
test_an_unreachable_leader_is_logged(void **state)
{
	enum { FETCHES_GIVEN_UP_MS = 2 * (1000 + 5000 + 200) + 500 };
	struct t_srv *s = it_srv(*state, "lonely");
	char leader[64];
	int64_t t0, noted, end;
	int n = 0, port, fd = hold_port(&port), tries = 0, redials = 0;

	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	snprintf(leader, sizeof(leader), "tcp://127.0.0.1:%d", port);
	s->args[0] = "--follow";
	s->args[1] = leader;
	it_start(s);
	t0 = it_mono_ms();
	while (it_mono_ms() - t0 < 10000 &&
	    (n = it_log_count(s, "cannot reach the leader")) < 1)
		tries += refuse_all(fd, 100);
	assert_int_equal(n, 1);
	assert_true(tries >= 1);                   /* it did try this port */
	assert_true(it_log_count(s, leader) >= 2); /* "following", this */
	noted = it_mono_ms();
	end = noted + 25000;
	while (it_mono_ms() < end &&
	    (redials < 3 || it_mono_ms() - t0 < FETCHES_GIVEN_UP_MS))
		redials += refuse_all(fd, 100);
	fprintf(stderr,
	    "%d connections before the note, %d in the %lld ms after it\n",
	    tries, redials, (long long)(it_mono_ms() - noted));
	assert_true(redials >= 3);
	assert_true(it_mono_ms() - t0 >= FETCHES_GIVEN_UP_MS);
	assert_int_equal(it_log_count(s, "cannot reach the leader"), 1);
	/* and stops cleanly: nothing of the unanswered fetch is left */
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	close(fd);
}

/* --repl-token-file and $SLUICE_REPL_TOKEN: a file that cannot be read,
 * or whose first line is no token, stops sluiced with one line; nothing
 * is written. */
static void
test_repl_token_is_checked(void **state)
{
	struct t_dir *d = *state;
	char file[600];
	FILE *f;

	assert_int_equal(sluiced("--data", t_path(d, "data"),
	                     "--repl-token-file", t_path(d, "none"), NULL),
	    2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "--repl-token-file"));
	assert_non_null(strstr(err, "No such file"));

	snprintf(file, sizeof(file), "%s", t_path(d, "blank"));
	assert_non_null(f = fopen(file, "w"));
	fputs("\nsecret\n", f);
	fclose(f);
	assert_int_equal(sluiced("--data", t_path(d, "data"),
	                     "--repl-token-file", file, NULL),
	    2);
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "its first line is not a token"));

	setenv("SLUICE_REPL_TOKEN", "two words", 1);
	assert_int_equal(sluiced("--data", t_path(d, "data"), NULL), 2);
	unsetenv("SLUICE_REPL_TOKEN");
	assert_int_equal(lines(err), 1);
	assert_non_null(strstr(err, "$SLUICE_REPL_TOKEN is not a token"));
	assert_false(exists(t_path(d, "data")));
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)
	const struct CMUnitTest tests[] = {
		T(test_an_unknown_option_is_one_line_and_a_hint),
		T(test_a_bad_value_is_one_clear_line),
		T(test_a_bare_number_is_no_duration),
		T(test_durations_take_units),
		T(test_failover_flags_are_checked),
		T(test_a_failed_start_leaves_nothing_on_disk),
		T(test_an_unreachable_leader_is_logged),
		T(test_repl_token_is_checked),
	};
#undef T
	return cmocka_run_group_tests_name("sluiced flags", tests, NULL, NULL);
}
