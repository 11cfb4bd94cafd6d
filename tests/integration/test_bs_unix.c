/* The beanstalk face on a Unix socket (--beanstalk unix:PATH, as
 * beanstalkd's -l unix:PATH, which clients such as greenstalk connect
 * to): jobs go in and out as over TCP, a closed connection's reservation
 * is ready at once, a stale socket file left by a killed server is
 * replaced on the next start while any other file at the path is kept
 * and named in the error, and a path that cannot be a socket's is
 * refused with the flag's error. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bsc.h"
#include "it.h"

static char sock_path[108];

static void
unix_open(struct bsc *b)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		fail_msg("connect %s: %s", sock_path, strerror(errno));
	b->fd = fd;
	buf_init(&b->in);
}

static void
expect(struct bsc *b, const char *cmd, const char *want)
{
	char *got = bsc_cmd(b, cmd);

	if (strncmp(got, want, strlen(want)) != 0)
		fail_msg("%s-> %s (wanted %s)", cmd, got, want);
	free(got);
}

static struct t_srv *
start_on_socket(void **state, const char *name)
{
	struct t_srv *s = it_srv(*state, name);
	static char addr[128];

	snprintf(addr, sizeof(addr), "unix:%s", sock_path);
	s->args[0] = "--beanstalk";
	s->args[1] = addr;
	return s;
}

static void
test_jobs_over_a_unix_socket(void **state)
{
	struct t_srv *s;
	struct bsc a, b;
	struct stat st;
	FILE *f;

	snprintf(sock_path, sizeof(sock_path), "/tmp/sluice-bs-%d.sock",
	    (int)getpid());
	unlink(sock_path);
	s = start_on_socket(state, "node");
	it_start(s);
	assert_int_equal(lstat(sock_path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));

	unix_open(&a);
	expect(&a, "put 0 0 60 5\r\nhello\r\n", "INSERTED ");
	expect(&a, "reserve-with-timeout 0\r\n", "RESERVED 1 5\r\nhello");
	bsc_close(&a); /* its reservation is ready at once */
	unix_open(&b);
	expect(&b, "reserve-with-timeout 5\r\n", "RESERVED 1 5\r\nhello");
	expect(&b, "delete 1\r\n", "DELETED");
	bsc_close(&b);

	/* killed: the socket file stays behind, stale; the next start
	 * replaces it */
	{
		int ws = t_srv_stop(s, SIGKILL);

		assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
	}
	assert_int_equal(lstat(sock_path, &st), 0);
	it_start(s);
	unix_open(&a);
	expect(&a, "put 0 0 60 2\r\nok\r\n", "INSERTED ");
	bsc_close(&a);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);

	/* a file that is not a socket is never removed */
	unlink(sock_path);
	f = fopen(sock_path, "w");
	assert_non_null(f);
	fputs("keep me\n", f);
	fclose(f);
	assert_int_not_equal(t_srv_start(s), 0);
	assert_true(it_log_count(s, sock_path) > 0);
	assert_int_equal(lstat(sock_path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	unlink(sock_path);
}

static void
test_a_path_no_socket_can_have_is_refused(void **state)
{
	char out[512], err[1024], path[200], arg[220];
	char *argv[] = { (char *)t_bin("sluiced"), "--beanstalk", arg, "--data",
		path, NULL };

	(void)state;
	memset(path, 'x', 150);
	path[0] = '/';
	path[150] = '\0';
	snprintf(arg, sizeof(arg), "unix:%s", path);
	assert_int_not_equal(
	    t_run(argv, NULL, out, sizeof(out), err, sizeof(err)), 0);
	if (strstr(err, "--beanstalk unix:PATH") == NULL)
		fail_msg("no flag error for a 150-byte path: %s", err);
	snprintf(arg, sizeof(arg), "unix:");
	assert_int_not_equal(
	    t_run(argv, NULL, out, sizeof(out), err, sizeof(err)), 0);
	if (strstr(err, "--beanstalk unix:PATH") == NULL)
		fail_msg("no flag error for an empty path: %s", err);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, it_setup, it_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_jobs_over_a_unix_socket),
		T(test_a_path_no_socket_can_have_is_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
