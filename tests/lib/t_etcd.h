/* t_etcd - etcd for tests: a real single-member etcd on 127.0.0.1 with
 * its data in a test's directory and free ports (started, killed with any
 * signal, restarted on the same ports and data), and a fake etcd, a tiny
 * HTTP server on loopback that answers every request with what the test
 * set (an error status, a body that is not JSON, a reply too late, no
 * reply at all). Every wait is bounded. */
#ifndef SLUICE_T_ETCD_H
#define SLUICE_T_ETCD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

struct t_etcd {
	pid_t pid; /* 0 when not running */
	int client_port, peer_port;
	char url[64];  /* http://127.0.0.1:CLIENT_PORT */
	char name[64]; /* --name, unique per process and instance */
	char data[512];
	char log[600]; /* its output goes here (DATA.log) */
};

/* True when an `etcd` program is on the PATH (tests exit 77 without). */
bool t_etcd_available(void);

/* Fills `e` for an etcd with its data in `dir`/`name` on fresh ports. */
void t_etcd_init(struct t_etcd *e, const char *dir, const char *name);

/* Starts etcd and waits (up to 30 s) until it reports itself healthy.
 * Returns 0, or -1 (its log is printed to stderr). */
int t_etcd_start(struct t_etcd *e);

/* Sends `sig` and, unless it is SIGSTOP or SIGCONT, waits up to 10 s for
 * the process to end (then SIGKILLs it). Returns 0, or -1 when it had to
 * be killed or was not running. */
int t_etcd_signal(struct t_etcd *e, int sig);

/* The fake. Each connection gets one answer, as last set by
 * t_etcd_fake_set; `nreq` counts the requests read. */
struct t_etcd_fake {
	int fd;
	int port;
	char url[64]; /* http://127.0.0.1:PORT */
	pthread_t thread;
	atomic_bool stop;
	atomic_int nreq;
	pthread_mutex_t mtx; /* guards the answer */
	int status;
	char body[1024];
	int delay_ms;
	bool close;
};

/* Starts a fake answering 200 with an empty body. Never fails (asserts). */
struct t_etcd_fake *t_etcd_fake_start(void);

/* From now on: after `delay_ms` (cut short when the fake stops), answer
 * `status` with `body`; or, with `close`, close the connection without
 * a byte. */
void t_etcd_fake_set(struct t_etcd_fake *f, int status, const char *body,
    int delay_ms, bool close);

/* Stops and frees it. */
void t_etcd_fake_stop(struct t_etcd_fake *f);

#endif
