/* chaos_node - the cluster and the nemesis: three sluiced started,
 * killed, stopped, starved of disk and failed over. See chaos.h.
 *
 * Roles: node `leader` leads; every other node's `follow` names the
 * replication URL it follows, and a restart keeps its role (a killed
 * leader comes back as the leader, on its own data). Only a failover
 * changes roles, the way docs/replication.md tells an operator to:
 * promote the follower with the highest LSN, re-point the other, bring
 * the old leader back as a follower.
 *
 * With moves the cluster elects its leader through etcd (chaos_move.c
 * adds the flags): no node follows by hand, the leader is looked up by
 * asking the nodes, a failover is the leader killed until another is
 * elected, and a SIGSTOP of the leader is recorded as a crash (its lease
 * in etcd may end, and another node lead without its newest take). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "chaos.h"
#include "sluice_sched.h"

enum {
	HEAL_MS = 15000, /* the longest the cluster may take to be whole */
	NEMESIS_CALL_MS = 3000,
	BALLAST_TASK = 128 << 10, /* bytes */
	BALLAST_TASKS = 24,
	ARGS_MAX = T_SRV_MAX_ARGS,
};

static bool mounts_ok;

bool
chaos_private_mounts(void)
{
	if (geteuid() != 0)
		return false;
	if (unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		fprintf(stderr, "chaos: no mount namespace of its own (%s)\n",
		    strerror(errno));
		return false;
	}
	mounts_ok = true;
	return true;
}

void
chaos_fail(struct chaos *c, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&c->mu);
	if (c->err[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(c->err, sizeof(c->err), fmt, ap);
		va_end(ap);
		fprintf(stderr, "chaos: harness failure: %s\n", c->err);
	}
	pthread_mutex_unlock(&c->mu);
	atomic_store(&c->stop, true);
}

bool
chaos_failed(struct chaos *c)
{
	bool failed;

	pthread_mutex_lock(&c->mu);
	failed = c->err[0] != '\0';
	pthread_mutex_unlock(&c->mu);
	return failed;
}

/* Makes `n` follow the leader whose replication URL is `url` ("": lead)
 * when it next starts. */
static void
set_follow(struct chaos_node *n, const char *url)
{
	char copy[sizeof(n->follow)];

	snprintf(copy, sizeof(copy), "%s", url);
	memcpy(n->follow, copy, sizeof(copy));
}

static bool
mount_tmpfs(struct chaos_node *n, const char *dir, bool moves)
{
	char opts[32];

	if ((size_t)snprintf(n->mnt, sizeof(n->mnt), "%s/n%d-fs", dir,
	        n->idx) >= sizeof(n->mnt) - 8) {
		n->mnt[0] = '\0';
		return false;
	}
	snprintf(opts, sizeof(opts), "size=%dm",
	    moves ? CHAOS_TMPFS_MOVES_MB : CHAOS_TMPFS_MB);
	if (mkdir(n->mnt, 0755) != 0 ||
	    mount("sluice-chaos", n->mnt, "tmpfs", 0, opts) != 0) {
		fprintf(stderr, "chaos: no tmpfs on %s (%s)\n", n->mnt,
		    strerror(errno));
		n->mnt[0] = '\0';
		return false;
	}
	snprintf(n->s->data, sizeof(n->s->data), "%.400s/data", n->mnt);
	snprintf(n->ballast, sizeof(n->ballast), "%.400s/ballast", n->mnt);
	return true;
}

void
chaos_init(
    struct chaos *c, void **state, struct hist *h, uint64_t seed, bool moves)
{
	struct t_dir *d = *state;
	size_t len = 0;

	memset(c, 0, sizeof(*c));
	c->h = h;
	c->seed = seed;
	pthread_mutex_init(&c->mu, NULL);
	c->call_ms = it_sanitized() ? 6000 : 2000;
	c->connect_ms = it_sanitized() ? 1500 : 500;
	c->tmpfs = mounts_ok;
	/* the nodes' clock: at a minute CHAOS_SLOT_LEAD_MS from now */
	{
		int64_t now = it_wall_ms(), at = now + CHAOS_SLOT_LEAD_MS;
		char v[32];

		c->clock_shift_ms = (60000 - at % 60000) % 60000;
		snprintf(v, sizeof(v), "%" PRId64, c->clock_shift_ms);
		setenv("SLUICE_CLOCK_SHIFT_MS", v, 1);
	}
	for (int i = 0; i < CHAOS_NODES; i++) {
		struct chaos_node *n = &c->node[i];
		char name[8];

		snprintf(name, sizeof(name), "n%d", i);
		n->idx = i;
		n->s = it_srv(*state, name);
		n->s->prog = "sluiced-fault"; /* its clock shift */
		snprintf(n->repl, sizeof(n->repl), "tcp://127.0.0.1:%d",
		    t_free_port());
		n->bs_port = t_free_port();
		snprintf(n->bs, sizeof(n->bs), "127.0.0.1:%d", n->bs_port);
		if (c->tmpfs && !mount_tmpfs(n, d->path, moves))
			c->tmpfs = false;
		len += (size_t)snprintf(c->urls + len, sizeof(c->urls) - len,
		    "%s%s", i > 0 ? "," : "", n->s->url);
	}
	atomic_store(&c->leader, 0);
}

void
chaos_unmount(struct chaos *c)
{
	for (int i = 0; i < CHAOS_NODES; i++)
		if (c->node[i].mnt[0] != '\0') {
			umount2(c->node[i].mnt, MNT_DETACH);
			c->node[i].mnt[0] = '\0';
		}
}

struct sluice_client *
chaos_client(struct chaos *c, const char *urls)
{
	struct sluice_client *cl;

	if (sluice_open(urls, &cl) != 0)
		return NULL;
	sluice_set_timeout(cl, c->call_ms);
	sluice_set_connect_timeout(cl, c->connect_ms);
	return cl;
}

/* ---- nodes ------------------------------------------------------------- */

static int
node_start(struct chaos *c, struct chaos_node *n)
{
	const char **a = n->s->args;
	int k = 0;

	a[k++] = "--repl-listen";
	a[k++] = n->repl;
	a[k++] = "--beanstalk";
	a[k++] = n->bs;
	if (n != &c->b) { /* cluster "cb"'s node has no follower */
		a[k++] = "--sync-replicas";
		a[k++] = "1";
	}
	a[k++] = "--sync-timeout";
	a[k++] = "1500ms";
	/* small segments and snapshots: rotations, preallocation and
	 * snapshots happen all the time, and a full disk bites soon */
	a[k++] = "--segment-size";
	a[k++] = "1048576";
	a[k++] = "--snapshot-records";
	a[k++] = "5000";
	/* a log written both ways, pads and all, read and streamed by
	 * every role: which way a start goes follows the seed */
	a[k++] = "--wal-inflight";
	a[k++] = ((c->seed + atomic_fetch_add(&c->starts, 1)) & 1) ? "3" : "1";
	if (c->moves)
		k = chaos_move_args(c, n, k);
	else if (n->follow[0] != '\0') {
		a[k++] = "--follow";
		a[k++] = n->follow;
	}
	a[k] = NULL;
	if (t_srv_start(n->s) != 0) {
		chaos_fail(c, "node %d (%s) did not start", n->idx, n->s->url);
		return -1;
	}
	return 0;
}

int
chaos_node_start(struct chaos *c, struct chaos_node *n)
{
	return node_start(c, n);
}

/* The node that leads (with moves, looked up: the last known one when
 * none answers). */
static struct chaos_node *
leader_of(struct chaos *c)
{
	if (c->moves)
		(void)chaos_find_leader(c);
	return &c->node[atomic_load(&c->leader)];
}

struct node_stats {
	int role;
	uint64_t lsn, epoch, followers;
};

static int
stats_of(struct chaos *c, struct chaos_node *n, struct node_stats *out)
{
	struct sluice_client *cl = chaos_client(c, n->s->url);
	struct sluice_stats *st = NULL;
	int rc;

	if (cl == NULL)
		return -1;
	sluice_set_timeout(cl, NEMESIS_CALL_MS);
	rc = sluice_stats(cl, NULL, &st);
	if (rc == 0) {
		out->role = st->role;
		out->lsn = st->lsn;
		out->epoch = st->epoch;
		out->followers = 0;
		sluice_kv_get(st->kv, st->nkv, "followers", &out->followers);
		sluice_stats_free(st);
	}
	sluice_close(cl);
	return rc;
}

bool
chaos_healthy(struct chaos *c, int ms)
{
	int64_t end = it_mono_ms() + ms;

	for (int i = 0; i < 100000 && it_mono_ms() < end; i++) {
		struct node_stats st, bst;

		if (stats_of(c, leader_of(c), &st) == 0 &&
		    st.role == SLUICE_LEADER &&
		    st.followers == CHAOS_NODES - 1 &&
		    (!c->moves ||
		        (stats_of(c, &c->b, &bst) == 0 &&
		            bst.role == SLUICE_LEADER)))
			return true;
		it_sleep_ms(50);
	}
	return false;
}

int
chaos_start(struct chaos *c)
{
	for (int i = 0; i < CHAOS_NODES; i++) {
		struct chaos_node *n = &c->node[i];

		if (i > 0 && !c->moves)
			set_follow(n, c->node[0].repl);
		if (node_start(c, n) != 0)
			return -1;
		/* with moves the first started is elected first */
		for (int k = 0; c->moves && i == 0 && k < 300 &&
		     chaos_find_leader(c) == NULL;
		     k++)
			it_sleep_ms(50);
	}
	if (c->moves && chaos_start_moves(c) != 0)
		return -1;
	if (!chaos_healthy(c, HEAL_MS)) {
		chaos_fail(c, "the followers did not join the leader");
		return -1;
	}
	return 0;
}

int
chaos_cap(struct chaos *c)
{
	struct chaos_node *l = &c->node[atomic_load(&c->leader)];
	struct sluice_client *cl = chaos_client(c, l->s->url);
	struct sluice_tube_conf conf = { 0 };
	struct sluice_limits lim = { 0 }, now = { 0 }, glim = { 0 };
	struct sluice_group_info gi = { 0 };
	int rc = -1;

	conf.set = SLUICE_TS_TTR;
	conf.ttr_ms = CHAOS_TTR_MAX_MS; /* every put gives its own */
	lim.set = SLUICE_LIM_CONCURRENCY;
	lim.concurrency = CHAOS_CAP;
	glim.set = SLUICE_LIM_CONCURRENCY;
	glim.concurrency = CHAOS_GCAP;
	if (cl == NULL)
		chaos_fail(c, "cap: no client");
	else if (sluice_tube_set(cl, "lib", &conf, 0, NULL) != 0 ||
	    sluice_tube_limit(cl, "lib", &lim, 0, &now) != 0 ||
	    sluice_group_set(cl, "lib", NULL, &glim, 0, &gi) != 0)
		chaos_fail(c, "cap: %s", sluice_errmsg(cl));
	else if (gi.every.concurrency != CHAOS_GCAP)
		chaos_fail(c, "cap: the groups' cap is %" PRIu32,
		    gi.every.concurrency);
	else if (now.concurrency != CHAOS_CAP)
		chaos_fail(
		    c, "cap: the tube's cap is %" PRIu32, now.concurrency);
	else
		rc = 0;
	sluice_close(cl);
	return rc;
}

int
chaos_sched(struct chaos *c)
{
	struct chaos_node *l = &c->node[atomic_load(&c->leader)];
	struct sluice_client *cl = chaos_client(c, l->s->url);
	struct sluice_schedule_opts o = { 0 };
	int rc = 0;

	o.catch_up = "one";
	o.ttr_ms = 5000;
	if (cl == NULL) {
		chaos_fail(c, "sched: no client");
		return -1;
	}
	for (int k = 1; k <= CHAOS_SCHEDS && rc == 0; k++) {
		char name[16];

		snprintf(name, sizeof(name), "chaos-s%d", k);
		if (sluice_schedule_set(cl, name, "sched", "* * * * *", "tick",
		        4, &o, NULL) != 0) {
			chaos_fail(c, "sched: %s", sluice_errmsg(cl));
			rc = -1;
		}
	}
	sluice_close(cl);
	return rc;
}

/* ---- faults ------------------------------------------------------------ */

void
chaos_record(
    struct chaos *c, int type, int kind, int node, int64_t t0, int64_t t1)
{
	struct hist_op op;

	hist_op_init(&op, (enum hist_type)type);
	op.invoke = t0;
	op.complete = t1;
	op.client = (uint32_t)node;
	op.kind = (uint8_t)kind;
	hist_add(c->h, &op);
	c->fig.faults++;
}

/* kill -9, and the interval in which the process died. */
static int
kill9(struct chaos *c, struct chaos_node *n, int64_t *t0, int64_t *t1)
{
	*t0 = hist_now(c->h);
	if (n->s->pid <= 0 || t_srv_stop(n->s, SIGKILL) < 0) {
		chaos_fail(c, "node %d could not be killed", n->idx);
		return -1;
	}
	*t1 = hist_now(c->h);
	return 0;
}

static void
signal_node(struct chaos_node *n, int sig)
{
	if (n->s->pid > 0) /* never kill(0, ...): that is our group */
		kill(n->s->pid, sig);
}

static int
fault_kill(struct chaos *c, uint64_t *rng)
{
	struct chaos_node *n = leader_of(c);
	int64_t t0, t1;

	if (kill9(c, n, &t0, &t1) != 0)
		return -1;
	chaos_record(c, HIST_CRASH, HIST_F_KILL, n->idx, t0, t1);
	it_sleep_ms((int64_t)t_below(rng, 300));
	return node_start(c, n);
}

static int
fault_kill_follower(struct chaos *c, uint64_t *rng)
{
	int l = (int)(leader_of(c) - c->node);
	struct chaos_node *n = &c->node[(l + 1 + (int)t_below(rng, 2)) % 3];
	int64_t t0, t1;

	if (kill9(c, n, &t0, &t1) != 0)
		return -1;
	it_sleep_ms((int64_t)t_below(rng, 500));
	if (node_start(c, n) != 0)
		return -1;
	chaos_record(
	    c, HIST_FAULT, HIST_F_KILL_FOLLOWER, n->idx, t0, hist_now(c->h));
	return 0;
}

static int
fault_stop(struct chaos *c, uint64_t *rng)
{
	int l = (int)(leader_of(c) - c->node);
	int i = t_below(rng, 10) < 7 ? l : (l + 1 + (int)t_below(rng, 2)) % 3;
	struct chaos_node *n = &c->node[i];
	int64_t t0 = hist_now(c->h);

	/* up to twice a client's timeout: calls time out, sessions end */
	signal_node(n, SIGSTOP);
	it_sleep_ms(300 + (int64_t)t_below(rng, 2 * (uint64_t)c->call_ms));
	signal_node(n, SIGCONT);
	chaos_record(c, c->moves && i == l ? HIST_CRASH : HIST_FAULT,
	    HIST_F_STOP, n->idx, t0, hist_now(c->h));
	return 0;
}

/* Fills the node's tmpfs: the ballast file grows by what is free. */
static void
fill(struct chaos_node *n)
{
	int fd = open(n->ballast, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	struct stat st;
	off_t off;

	if (fd < 0)
		return;
	off = fstat(fd, &st) == 0 ? st.st_size : 0;
	for (int i = 0; i < 64; i++) {
		struct statvfs v;
		off_t want;

		if (fstatvfs(fd, &v) != 0)
			break;
		want = (off_t)v.f_bavail * (off_t)v.f_frsize;
		if (want < 4096)
			break;
		if (fallocate(fd, 0, off, want) == 0)
			off += want;
		else if (fallocate(fd, 0, off, want / 2) == 0)
			off += want / 2;
		else
			break;
	}
	close(fd);
}

/* Puts (or, with `flush`, deletes) large tasks in the tube "ballast",
 * which no client uses and the history leaves out. */
static void
ballast_tasks(struct chaos *c, struct chaos_node *n, bool flush)
{
	/* the flush to whichever node leads by then: ballast left behind
	 * would fill every node's disk a little more at each such fault */
	struct sluice_client *cl = chaos_client(c, flush ? c->urls : n->s->url);
	struct sluice_put_opts o;
	char *p = calloc(1, BALLAST_TASK);

	if (cl != NULL && p != NULL) {
		int rc = -1;

		sluice_set_timeout(cl, NEMESIS_CALL_MS);
		sluice_put_opts_init(&o);
		o.tube = "ballast";
		for (int i = 0; i < 20 && flush && rc != 0; i++)
			if ((rc = sluice_flush(cl, "ballast", NULL)) != 0)
				it_sleep_ms(250);
		if (flush && rc != 0)
			fprintf(stderr, "chaos: the ballast tasks stay: %s\n",
			    sluice_strerror(rc));
		for (int i = 0; i < BALLAST_TASKS && !flush; i++)
			if (sluice_put(cl, &o, p, BALLAST_TASK, NULL, NULL) !=
			    0)
				break;
	}
	free(p);
	sluice_close(cl);
}

static int
fault_disk(struct chaos *c, uint64_t *rng)
{
	struct chaos_node *n = leader_of(c);
	int64_t t0 = hist_now(c->h);
	int64_t end = it_mono_ms() + 2000 + (int64_t)t_below(rng, 3000);

	/* The log has a segment or two of room left when the disk fills:
	 * large puts in a tube of the nemesis's own use it up at once, so
	 * the clients meet a full log within the fault. Every snapshot
	 * removes old segments: the ballast file takes what they free, as
	 * a disk another process fills would. */
	fill(n);
	ballast_tasks(c, n, false);
	for (int i = 0; i < 10000 && it_mono_ms() < end; i++) {
		fill(n);
		it_sleep_ms(20);
	}
	unlink(n->ballast);
	ballast_tasks(c, n, true);
	chaos_record(c, HIST_FAULT, HIST_F_DISK, n->idx, t0, hist_now(c->h));
	return 0;
}

/* Makes `n` follow `leader` now: `follow` on the running node, or, when
 * that is refused, a restart with --follow. */
static int
repoint(struct chaos *c, struct chaos_node *n, struct chaos_node *leader)
{
	struct sluice_client *cl;
	int rc = -1;

	set_follow(n, leader->repl);
	for (int i = 0; i < 5 && rc != 0; i++) {
		if ((cl = chaos_client(c, n->s->url)) == NULL)
			break;
		sluice_set_timeout(cl, NEMESIS_CALL_MS);
		rc = sluice_follow(cl, leader->repl);
		sluice_close(cl);
		if (rc != 0)
			it_sleep_ms(100);
	}
	if (rc == 0)
		return 0;
	fprintf(stderr,
	    "chaos: node %d refused to follow node %d (%s); "
	    "restarting it as a follower\n",
	    n->idx, leader->idx, sluice_strerror(rc));
	t_srv_stop(n->s, SIGKILL);
	return node_start(c, n);
}

static int
fault_failover(struct chaos *c, uint64_t *rng)
{
	struct chaos_node *old = leader_of(c), *best = NULL;
	struct node_stats best_st = { 0 };
	struct sluice_client *cl;
	int64_t t0, t1;
	int rc = -1;

	if (kill9(c, old, &t0, &t1) != 0)
		return -1;
	chaos_record(c, HIST_CRASH, HIST_F_FAILOVER, old->idx, t0, t1);
	if (c->moves) { /* etcd elects another; the old one follows it */
		int64_t end = it_mono_ms() + HEAL_MS;

		while (it_mono_ms() < end &&
		    ((best = chaos_find_leader(c)) == NULL || best == old))
			it_sleep_ms(50);
		if (best == NULL || best == old)
			fprintf(stderr,
			    "chaos: no node elected after a "
			    "failover\n");
		return node_start(c, old);
	}
	it_sleep_ms((int64_t)t_below(rng, 200));
	/* the most advanced follower: the highest LSN (docs/replication.md,
	 * "Failover, step by step") */
	for (int i = 0; i < CHAOS_NODES; i++) {
		struct chaos_node *n = &c->node[i];
		struct node_stats st;

		if (n == old || stats_of(c, n, &st) != 0)
			continue;
		if (best == NULL || st.lsn > best_st.lsn ||
		    (st.lsn == best_st.lsn && st.epoch > best_st.epoch)) {
			best = n;
			best_st = st;
		}
	}
	if (best == NULL) {
		chaos_fail(c, "failover: no follower answered");
		return -1;
	}
	for (int i = 0; i < 5 && rc != 0; i++) {
		if ((cl = chaos_client(c, best->s->url)) == NULL)
			break;
		sluice_set_timeout(cl, NEMESIS_CALL_MS);
		rc = sluice_promote(cl, NULL);
		if (rc != 0)
			fprintf(stderr, "chaos: promote of node %d: %s (%s)\n",
			    best->idx, sluice_strerror(rc), sluice_errmsg(cl));
		sluice_close(cl);
		if (rc != 0)
			it_sleep_ms(200);
	}
	if (rc != 0) {
		chaos_fail(c, "failover: node %d could not be promoted: %s",
		    best->idx, sluice_strerror(rc));
		return -1;
	}
	set_follow(best, "");
	atomic_store(&c->leader, best->idx);
	for (int i = 0; i < CHAOS_NODES; i++) {
		struct chaos_node *n = &c->node[i];

		if (n != old && n != best && repoint(c, n, best) != 0)
			return -1;
	}
	set_follow(old, best->repl);
	return node_start(c, old);
}

int
chaos_fault(struct chaos *c, int kind, uint64_t *rng, bool settle)
{
	int rc;

	switch (kind) {
	case HIST_F_KILL:
		rc = fault_kill(c, rng);
		break;
	case HIST_F_KILL_FOLLOWER:
		rc = fault_kill_follower(c, rng);
		break;
	case HIST_F_STOP:
		rc = fault_stop(c, rng);
		break;
	case HIST_F_DISK:
		rc = c->tmpfs ? fault_disk(c, rng) : 0;
		break;
	case HIST_F_FAILOVER:
		rc = fault_failover(c, rng);
		break;
	case HIST_F_MOVE:
		rc = c->moves ? chaos_move(c, rng) : 0;
		break;
	case HIST_F_ELECT: /* not the nemesis's: the watch records it */
		rc = 0;
		break;
	default:
		rc = -1;
		break;
	}
	if (rc == 0 && settle && !chaos_healthy(c, HEAL_MS)) {
		c->fig.unhealthy++;
		fprintf(stderr,
		    "chaos: the cluster was not whole %d s after a %s\n",
		    HEAL_MS / 1000, hist_fault_name(kind));
	}
	return rc;
}

int
chaos_heal(struct chaos *c)
{
	int l = (int)(leader_of(c) - c->node);

	if (c->moves) {
		signal_node(&c->b, SIGCONT);
		if (!t_srv_alive(c->b.s) && node_start(c, &c->b) != 0)
			return -1;
	}

	for (int i = 0; i < CHAOS_NODES; i++) {
		struct chaos_node *n = &c->node[i];

		signal_node(n, SIGCONT);
		if (n->ballast[0] != '\0')
			unlink(n->ballast);
	}
	for (int i = 0; i < CHAOS_NODES; i++) {
		struct chaos_node *n = &c->node[i];

		if (t_srv_alive(n->s))
			continue;
		set_follow(n, i == l ? "" : c->node[l].repl);
		if (node_start(c, n) != 0)
			return -1;
	}
	if (!chaos_healthy(c, HEAL_MS)) {
		chaos_fail(c, "the cluster did not heal");
		return -1;
	}
	return 0;
}
