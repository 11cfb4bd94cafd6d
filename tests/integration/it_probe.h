/* it_probe - a healthy client beside an attack: a thread that puts, takes
 * and acks one task at a time on its own tube and records how long each
 * call took, so a test can say what the attack cost everybody else (its
 * p99) and whether the server kept serving at all. And the server's
 * resident memory, for the bound a test states.
 *
 * The probe's loop is bounded twice: it stops when it_probe_stop is
 * called, and by itself after IT_PROBE_MAX_MS or IT_PROBE_MAX_CALLS. */
#ifndef SLUICE_IT_PROBE_H
#define SLUICE_IT_PROBE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

enum {
	IT_PROBE_MAX_CALLS = 60000,
	IT_PROBE_MAX_MS = 120000,
	IT_PROBE_PAUSE_MS = 2,    /* between two rounds: a client, not a load */
	IT_PROBE_WARM_MS = 30000, /* the most it_probe_start waits */
};

struct it_probe {
	char url[256];
	char tube[64];
	pthread_t thread;
	atomic_bool stop;
	atomic_bool warm;  /* its first round (not timed) is over */
	atomic_bool ready; /* it_probe_start returned: the rounds are timed */
	/* Written by the thread, read after it_probe_stop. */
	uint32_t *us; /* each call's duration in microseconds */
	size_t n;
	unsigned long errors; /* calls that failed */
	char first_error[256];
	char token[257];    /* sent first when not empty (--auth) */
	char ca[512];       /* a tls+tcp:// server's CA; "" for others */
	int64_t t0_ms;      /* it_mono_ms() when the timed calls began */
	int64_t spawned_ms; /* it_mono_ms() when its thread was started */
};

struct it_probe_result {
	size_t calls;
	unsigned long errors;
	double p50_ms, p99_ms, max_ms;
	int64_t ms; /* how long the timed calls ran */
};

/* Starts the probe against `url` on tube `tube` (asserted), and returns
 * once its first round is over (bounded by IT_PROBE_WARM_MS): that round,
 * which connects (and sends the token), is not timed, so the calls timed
 * are those of a connected client, and an attack started next finds it
 * connected. A failure of that round counts in the errors. */
void it_probe_start(struct it_probe *p, const char *url, const char *tube);

/* it_probe_start_tls in two steps, so that two probes are timed over the
 * same window: it_probe_spawn starts the thread (its first round not
 * timed), it_probe_arm waits for that round (bounded by
 * IT_PROBE_WARM_MS) and times every call from then on. */
void it_probe_spawn(struct it_probe *p, const char *url, const char *tube,
    const char *token, const char *ca);
void it_probe_arm(struct it_probe *p);

/* it_probe_start for a server with --auth: the probe's client sends
 * `token` first. */
void it_probe_start_token(
    struct it_probe *p, const char *url, const char *tube, const char *token);

/* it_probe_start for a tls+tcp:// server whose certificate `ca` signs;
 * `token` NULL without --auth. */
void it_probe_start_tls(struct it_probe *p, const char *url, const char *tube,
    const char *token, const char *ca);

/* Stops it, joins the thread and sums up what it saw (printed to stderr
 * with `what` as the line's name). */
struct it_probe_result it_probe_stop(struct it_probe *p, const char *what);

/* The resident set of process `pid` in KiB (VmRSS), -1 when unknown. */
long it_rss_kb(pid_t pid);

/* The CPU time (user + system) process `pid` has used, in ms (to the
 * kernel's tick, 10 ms); -1 when unknown. Unlike a wall-clock time, it
 * hardly moves with the load of the machine. */
long it_cpu_ms(pid_t pid);

/* The peak of its resident set in KiB (VmHWM), -1 when unknown. */
long it_hwm_kb(pid_t pid);

/* The process's open descriptors, -1 when unknown. */
long it_fd_count(pid_t pid);

#endif
