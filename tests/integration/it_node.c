/* it_node - see it_node.h. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "it_node.h"

/* The nodes' clients of the running test, so that teardown closes those
 * it did not. */
static struct sluice_client *clients[IT_SRV_MAX];
static int nclients;

static int64_t
wait_ms(void)
{
	return IT_NODE_WAIT_MS * (it_sanitized() ? 2 : 1);
}

int
it_node_teardown(void **state)
{
	for (int i = 0; i < nclients; i++) {
		sluice_close(clients[i]);
		clients[i] = NULL;
	}
	nclients = 0;
	return it_teardown(state);
}

void
it_node_arg(struct it_node *n, const char *k, const char *v)
{
	size_t a = 0;

	while (n->s->args[a] != NULL)
		a++;
	assert_true(a + 2 < T_SRV_MAX_ARGS);
	n->s->args[a++] = k;
	n->s->args[a++] = v;
	n->s->args[a] = NULL;
}

void
it_node_init(void **state, struct it_node *n, const char *name)
{
	memset(n, 0, sizeof(*n));
	assert_true(nclients < IT_SRV_MAX);
	n->slot = nclients++;
	n->s = it_srv(*state, name);
	snprintf(n->repl, sizeof(n->repl), "tcp://127.0.0.1:%d", t_free_port());
	it_node_arg(n, "--repl-listen", n->repl);
}

void
it_node_follows(struct it_node *n, const struct it_node *leader)
{
	snprintf(n->follow, sizeof(n->follow), "%s", leader->repl);
	for (size_t a = 0; n->s->args[a] != NULL; a += 2)
		if (strcmp(n->s->args[a], "--follow") == 0) {
			n->s->args[a + 1] = n->follow;
			return;
		}
	it_node_arg(n, "--follow", n->follow);
}

void
it_node_start(struct it_node *n)
{
	it_start(n->s);
	n->c = clients[n->slot] = it_client(n->s);
}

void
it_node_start_all(struct it_node *const *ns, int count)
{
	for (int i = 0; i < count; i++)
		assert_int_equal(t_srv_spawn(ns[i]->s), 0);
	for (int i = 0; i < count; i++) {
		assert_int_equal(t_srv_wait(ns[i]->s), 0);
		ns[i]->c = clients[ns[i]->slot] = it_client(ns[i]->s);
	}
}

int
it_node_stop(struct it_node *n, int sig)
{
	int status;

	/* A kill -9 comes first: a client closed before it would end its
	 * session while the node still runs, and the node would write the
	 * loss of that session's leases (a backoff) before it dies. */
	if (sig == SIGKILL)
		status = t_srv_stop(n->s, sig);
	if (n->c != NULL)
		sluice_close(n->c);
	n->c = clients[n->slot] = NULL;
	if (sig != SIGKILL)
		status = t_srv_stop(n->s, sig);
	return status;
}

void
it_node_kill(struct it_node *n)
{
	it_node_stop(n, SIGKILL);
}

uint64_t
it_node_lsn(struct it_node *n, uint64_t *epoch)
{
	struct sluice_stats *st = NULL;
	uint64_t lsn;

	it_rc(n->c, sluice_stats(n->c, NULL, &st), 0);
	lsn = st->lsn;
	if (epoch != NULL)
		*epoch = st->epoch;
	sluice_stats_free(st);
	return lsn;
}

int
it_node_role(struct it_node *n)
{
	struct sluice_stats *st = NULL;
	int role;

	it_rc(n->c, sluice_stats(n->c, NULL, &st), 0);
	role = st->role;
	sluice_stats_free(st);
	return role;
}

void
it_node_caught_up(struct it_node *l, struct it_node *f)
{
	int64_t end = it_mono_ms() + wait_ms();
	uint64_t want_epoch, want = it_node_lsn(l, &want_epoch);
	uint64_t got = 0, got_epoch = 0;

	while (it_mono_ms() < end) {
		got = it_node_lsn(f, &got_epoch);
		if (got_epoch == want_epoch && got >= want)
			return;
		it_sleep_ms(10);
	}
	fail_msg("%s did not catch up: lsn %" PRIu64 " of %" PRIu64
	         ", epoch %" PRIu64 " of %" PRIu64,
	    f->s->data, got, want, got_epoch, want_epoch);
}

static uint64_t
fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* A tube's settings, counts and tasks, one line each. */
static size_t
dump_tube(
    struct it_node *n, const struct sluice_tube_stats *t, char *out, size_t cap)
{
	const struct sluice_tube_conf *c = &t->conf;
	size_t len = 0;

	len += (size_t)snprintf(out + len, cap - len,
	    "tube %s set %x ttr %" PRIu64 " max %u backoff %" PRIu64 "-%" PRIu64
	    " keep %" PRIu64 " lost %d dead '%s'\n"
	    "r%" PRIu64 " d%" PRIu64 " t%" PRIu64 " b%" PRIu64 "\n",
	    t->name, c->set, c->ttr_ms, c->max_attempts, c->backoff_base_ms,
	    c->backoff_cap_ms, c->keep_done_ms, c->lost_lease_immediate,
	    c->dead_letter, t->ready, t->delayed, t->taken, t->buried);
	for (int state = SLUICE_READY; state <= SLUICE_BURIED; state++) {
		struct sluice_task *ts = NULL;
		size_t nt = 0;

		it_rc(n->c,
		    sluice_list(n->c, t->name, state, SLUICE_ORDER_AGE,
		        SLUICE_LIST_MAX, 1, &ts, &nt),
		    0);
		for (size_t i = 0; i < nt && len + 128 < cap; i++)
			len += (size_t)snprintf(out + len, cap - len,
			    "%" PRIu64 " %d a%u p%u r%" PRIu64
			    " %zu:%016" PRIx64 "\n",
			    ts[i].id, ts[i].state, ts[i].attempts,
			    ts[i].priority, ts[i].run_at, ts[i].payload_len,
			    fnv(ts[i].payload, ts[i].payload_len));
		sluice_task_free(ts);
	}
	return len;
}

/* Every tube the node lists, in its order, into `out`. */
static void
dump(struct it_node *n, char *out, size_t cap)
{
	struct sluice_stats *st = NULL;
	size_t len = 0;

	out[0] = '\0';
	it_rc(n->c, sluice_stats(n->c, NULL, &st), 0);
	for (size_t i = 0; i < st->ntubes && len + 1024 < cap; i++)
		len += dump_tube(n, &st->tubes[i], out + len, cap - len);
	sluice_stats_free(st);
}

void
it_node_same_state(struct it_node *a, struct it_node *b)
{
	static char da[1 << 20], db[1 << 20];
	int64_t end = it_mono_ms() + wait_ms();
	size_t line = 0;

	do {
		it_node_caught_up(a, b);
		dump(a, da, sizeof(da));
		dump(b, db, sizeof(db));
		if (strcmp(da, db) == 0)
			return;
		it_sleep_ms(50);
	} while (it_mono_ms() < end);
	for (size_t i = 0; da[i] == db[i]; i++) /* they differ: it stops */
		if (da[i] == '\n')
			line = i + 1;
	fprintf(stderr,
	    "--- %s\n%.1000s\n--- %s\n%.1000s\nthe first line that "
	    "differs:\n< %.200s\n> %.200s\n",
	    a->s->data, da, b->s->data, db, da + line, db + line);
	fail_msg("the states of %s and %s differ", a->s->data, b->s->data);
}
