/* t_srv - real sluiced processes for integration tests: start one on a
 * free loopback port with its data in a test's directory, wait until it
 * answers, kill it (SIGKILL or SIGTERM), restart it on the same port and
 * data. Every wait is bounded. */
#ifndef SLUICE_T_SRV_H
#define SLUICE_T_SRV_H

#include <stdbool.h>
#include <sys/types.h>

enum { T_SRV_MAX_ARGS = 24 };

struct t_srv {
	pid_t pid; /* 0 when not running */
	int port;
	char url[64];   /* tcp://127.0.0.1:PORT, or an ipc://PATH set before
	                   t_srv_start */
	char data[512]; /* --data */
	char log[600];  /* its stderr goes here (DATA.log) */
	const char *args[T_SRV_MAX_ARGS]; /* extra arguments, NULL-ended */
	const char *prog; /* the program in bin/; NULL: sluiced */
};

/* Path of a built program (bin/NAME next to the test binary). */
const char *t_bin(const char *name);

/* A port on 127.0.0.1 that was free a moment ago. */
int t_free_port(void);
/* Where test processes reserve the ports they hand out (t_free_port;
 * the Python and Node.js clients' test harnesses do the same). */
#define T_PORT_DIR "/tmp/sluice-test-ports"

/* Fills `s` for a server with its data in `dir`/`name` on a fresh port.
 * Extra arguments may be added to s->args before t_srv_start. */
void t_srv_init(struct t_srv *s, const char *dir, const char *name);

/* The --segment-size of a server whose s->args name none: sluiced's
 * default of 64 MiB writes and syncs 128 MiB of zeros at every start
 * (the first segment and its spare), hundreds of starts a run, all
 * beside other tests' fsyncs; 4 MiB writes 8. A test about the default
 * size names it. */
#define T_SRV_SEGMENT "4194304"

/* Starts sluiced and waits (up to 10 s) until it accepts connections.
 * Returns 0, or -1 (its log is printed to stderr). */
int t_srv_start(struct t_srv *s);

/* t_srv_start in two steps, so that several servers start at once:
 * t_srv_spawn starts the process (0, or -1), t_srv_wait waits until it
 * accepts connections, as t_srv_start does. */
int t_srv_spawn(struct t_srv *s);
int t_srv_wait(struct t_srv *s);

/* Sends `sig` and waits up to 10 s for the process to end. Returns its
 * wait status, or -1 if it did not end (it is then SIGKILLed). */
int t_srv_stop(struct t_srv *s, int sig);

/* Copies the server's log (its stderr) to the test's stderr: for a
 * failure worth explaining. */
void t_srv_print_log(const struct t_srv *s);

/* True while the process runs. */
bool t_srv_alive(struct t_srv *s);

/* Runs a command line (argv, NULL-ended) with stdin from `in` (may be
 * NULL), capturing up to outcap-1 bytes of stdout into out (NUL-ended;
 * may be NULL) and of stderr into err (may be NULL). Returns the exit code,
 * or -1 if it did not end within 30 s (then killed). */
/* Starts argv (argv[0] found on PATH unless it holds a '/') in the
 * background with its stdout and stderr appended to `log`. Its pid, or
 * -1 when it could not be started. */
pid_t t_spawn_logged(char *const argv[], const char *log);

int t_run(char *const argv[], const char *in, char *out, size_t outcap,
    char *err, size_t errcap);

#endif
