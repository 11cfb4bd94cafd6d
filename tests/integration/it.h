/* it - what the integration tests share: servers that are stopped even
 * when a test fails, clients with bounded timeouts, clocks, and short
 * forms of the calls every test makes (each asserts success).
 *
 * Servers come from it_srv(), which keeps them in a table so that
 * it_teardown() can SIGKILL whatever a failed test left running before its
 * directory is removed. Worker processes a test forks are tracked the same
 * way (it_track_pid).
 *
 * cmocka's asserts may only run on the test's own thread: worker threads
 * count their failures (and keep the first message) in a `struct it_errs`
 * the test checks after joining them. */
#ifndef SLUICE_IT_H
#define SLUICE_IT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sluice.h"
#include "t_lib.h"
#include "t_srv.h"

enum {
	IT_SRV_MAX = 6,
	IT_PIDS_MAX = 64,
	IT_CALL_MS = 10000,   /* every client call's timeout (x3 sanitized) */
	IT_CONNECT_MS = 2000, /* x2 sanitized: a sanitized follower loading
	                         a snapshot on a busy machine greeted late */
};

/* Per-test set-up and tear-down: a temp directory; at the end every
 * server and tracked process still running is killed. */
int it_setup(void **state);
int it_teardown(void **state);

/* True under SLUICE_SANITIZED=1 (ASan + UBSan: everything ~3x slower). */
bool it_sanitized(void);

/* `n` plainly, `n / div` (at least `min`) when sanitized. */
long it_scale(long n, long div, long min);

int64_t it_mono_ms(void);
int64_t it_wall_ms(void);
void it_sleep_ms(int64_t ms);

/* A server with its data in the test's directory under `name`, extra
 * arguments in s->args (pointers must stay valid: use literals or
 * storage that lives as long as the test). Not started. */
struct t_srv *it_srv(void *state, const char *name);

/* t_srv_start, asserted. */
void it_start(struct t_srv *s);

/* SIGKILL, then start again on the same port and data. `*c` (when `c`
 * is not NULL) is a client of `s`: it is closed while the server is down
 * and opened again once it is up. (A handle kept across the restart
 * would reconnect by itself, but closing an nng socket while its dialer
 * is connecting to the new server sometimes leaks nng's pipe objects
 * (nng 1.5.2), which LeakSanitizer reports.) */
void it_crash_restart(struct t_srv *s, struct sluice_client **c);

/* Remembers a forked process so teardown kills it. */
void it_track_pid(pid_t pid);

/* A client of `s` with IT_CALL_MS (scaled) per call. Asserted. */
struct sluice_client *it_client(const struct t_srv *s);

/* The same for any URL; NULL on failure (usable from any thread). */
struct sluice_client *it_client_url(const char *url);

/* put of a NUL-ended payload with default options to `tube`; its id. */
uint64_t it_put(struct sluice_client *c, const char *tube, const char *payload);

/* put with options; its id. */
uint64_t it_put_o(struct sluice_client *c, const struct sluice_put_opts *o,
    const char *payload);

/* Takes exactly one task from `tube` (waiting up to wait_ms). */
struct sluice_task *it_take(
    struct sluice_client *c, const char *tube, uint64_t wait_ms, int detach);

/* The task `id`, or NULL when it does not exist (any other error fails
 * the test). Free with sluice_task_free. */
struct sluice_task *it_peek(struct sluice_client *c, uint64_t id);

/* The state of task `id`, 0 when it does not exist. */
int it_state(struct sluice_client *c, uint64_t id);

/* Polls (every 5 ms, up to timeout_ms) until task `id` is in `state` (0:
 * gone). Returns the ms it took, or -1 when it never was. */
int64_t it_wait_state(
    struct sluice_client *c, uint64_t id, int state, int64_t timeout_ms);

/* Counts of `tube` (NULL: totals): ready, delayed, taken, buried; zeros
 * for a tube the server never had. */
struct it_counts {
	uint64_t ready, delayed, taken, buried;
};
struct it_counts it_counts(struct sluice_client *c, const char *tube);

/* The node key/value `name` of stats (asserted to exist). */
uint64_t it_node_kv(struct sluice_client *c, const char *name);

/* Failures seen by threads. */
struct it_errs {
	pthread_mutex_t mtx;
	unsigned long n;
	char first[512];
};
void it_errs_init(struct it_errs *e);
void it_errs_add(struct it_errs *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Fails the test (printing the first message) when any were added. */
void it_errs_check(struct it_errs *e);

/* Asserts `rc` equals `want`, printing both names and the client's
 * message otherwise. */
#define it_rc(c, rc, want) it_rc_at((c), (rc), (want), __FILE__, __LINE__)
void it_rc_at(
    struct sluice_client *c, int rc, int want, const char *file, int line);

/* Runs `sluice -s URL ARGS...` (NULL-ended, at most IT_CLI_ARGS - 4) with
 * `in` on stdin (NULL: none); returns its exit code, with its stdout in
 * out[outcap] and its stderr in err[errcap] (either may be NULL). */
int it_cli(const char *url, const char *in, char *out, size_t outcap, char *err,
    size_t errcap, ...);
int it_cli_v(const char *url, const char *in, char *out, size_t outcap,
    char *err, size_t errcap, va_list ap);

/* `sluice -s URL ARGS...` (NULL-ended) against `s`: its exit code, what
 * it printed to stdout in it_out and to stderr in it_err (NUL-ended; the
 * next call overwrites them). */
enum { IT_OUT_MAX = 256 << 10 };
extern char it_out[IT_OUT_MAX], it_err[IT_OUT_MAX];
int it_sluice(const struct t_srv *s, ...);

/* The command line of `sluice -s URL ARGS...` from a NULL-ended list, for
 * a test that runs it its own way (in the background, say). */
enum { IT_CLI_ARGS = 32 };
struct it_argv {
	char *argv[IT_CLI_ARGS]; /* NULL-ended */
	char bin[1024];          /* argv[0] */
};
void it_cli_argv(struct it_argv *a, const char *url, va_list ap);

/* Runs `sluice-log ARGS...` (NULL-ended); its exit code, its stdout in
 * out[outcap] (may be NULL). */
int it_log_tool(char *out, size_t outcap, ...);

/* Asserts that `sluice-log verify DATA` calls the directory sound or a
 * torn tail only (exit 0 or 3): for a directory sluiced starts on, so
 * that verify and the server never disagree. */
void it_verify_startable(const char *data);

/* Lines of the server's log (its stderr) that contain `needle`. */
int it_log_count(const struct t_srv *s, const char *needle);

#endif
