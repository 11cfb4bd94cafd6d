/* nngclose - nng_close with a bound on the wait (why it is needed: see
 * nngclose.h). The close runs on a thread of its own; the caller waits
 * for it on a condition variable with a monotonic deadline, and when the
 * deadline passes first it goes on and leaves the thread to finish (or
 * hang) alone. The state the two share is freed by whichever lets go of
 * it last. */
#include "util/nngclose.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

/* Shared by the caller and the closing thread; whichever of the two is
 * last to let go of it frees it. */
struct closer {
	pthread_mutex_t mx;
	pthread_cond_t cv;
	nng_socket sock;
	bool closed;    /* nng_close returned */
	bool abandoned; /* the caller stopped waiting */
	void (*done)(void *);
	void *arg;
};

static void
closer_free(struct closer *k)
{
	pthread_cond_destroy(&k->cv);
	pthread_mutex_destroy(&k->mx);
	free(k);
}

static void *
closer_main(void *arg)
{
	struct closer *k = arg;
	bool abandoned;

	nng_close(k->sock);
	pthread_mutex_lock(&k->mx);
	k->closed = true;
	abandoned = k->abandoned;
	pthread_cond_signal(&k->cv);
	pthread_mutex_unlock(&k->mx);
	if (abandoned) {
		if (k->done != NULL)
			k->done(k->arg);
		closer_free(k);
	}
	return NULL;
}

struct timespec
nngclose_deadline(int ms)
{
	struct timespec dl;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += ms / 1000;
	dl.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	return dl;
}

bool
nngclose_within(nng_socket sock, int ms, void (*done)(void *), void *arg)
{
	struct closer *k = calloc(1, sizeof(*k));
	struct timespec dl = nngclose_deadline(ms);
	pthread_condattr_t ca;
	pthread_attr_t ta;
	pthread_t th;
	bool closed;
	int rc;

	if (k == NULL) {
		nng_close(sock);
		return true;
	}
	k->sock = sock;
	k->done = done;
	k->arg = arg;
	pthread_mutex_init(&k->mx, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&k->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&th, &ta, closer_main, k);
	pthread_attr_destroy(&ta);
	if (rc != 0) {
		nng_close(sock);
		closer_free(k);
		return true;
	}
	pthread_mutex_lock(&k->mx);
	while (!k->closed &&
	    pthread_cond_timedwait(&k->cv, &k->mx, &dl) != ETIMEDOUT)
		;
	closed = k->closed;
	k->abandoned = !closed;
	pthread_mutex_unlock(&k->mx);
	if (closed)
		closer_free(k);
	return closed;
}
