/* cli_work - `sluice work -t TUBE -- CMD ARGS`: run CMD once per task.
 *
 * One process, one thread, up to N children. The loop:
 *   1. with free slots (and not stopping), take up to that many tasks,
 *      waiting a little (short while children run, so their events are
 *      not kept waiting), and spawn CMD for each;
 *   2. ppoll() on the children's stdin (payload still to write), their
 *      stderr (forwarded to ours; the last line is kept for fail) and
 *      nothing else: signals are blocked everywhere except inside ppoll,
 *      so SIGCHLD/SIGINT/SIGTERM only ever interrupt the wait, never a
 *      library call, and never land on one of nng's threads;
 *   3. reap children: exit 0 acks, anything else fails with the last
 *      stderr line (or how it ended);
 *   4. touch the lease of every task whose CMD has run half its ttr; a
 *      touch answered "cancelled" (sluice cancel) stops that CMD
 *      (SIGTERM to its process group), and its end only ends the lease,
 *      which removes the cancelled task.
 * The pauses (--pause-ok, --pause-error, --pause-empty) put off the next
 * take until a time (`take_after`): a success, a failure or an empty
 * take moves it to now + its pause, never earlier than it was. Running
 * children are served meanwhile, and a signal still stops at once.
 * The first SIGINT/SIGTERM stops taking; running children finish. A second
 * one sends SIGTERM to them (each runs in its own process group, so a ^C
 * at the terminal reaches only this process). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_util.h"
#include "cli_vars.h"

extern char **environ;

enum {
	TEXT_MAX = 1024,     /* fail's text */
	WAIT_BUSY_MS = 200,  /* take's wait while children run */
	WAIT_IDLE_MS = 1000, /* take's wait when none run */
	RETRY_MS = 1000,     /* after a connection problem */
	MAX_CONCURRENCY = 256,
};

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct job {
	pid_t pid; /* 0: free slot */
	uint64_t id, lease, ttr_ms;
	uint32_t attempts;
	int64_t next_touch; /* monotonic ms; 0: never */
	bool cancelled;     /* its touch said so: CMD was stopped */
	int in_fd;          /* the child's stdin; -1 once written */
	char *payload;
	size_t len, off;
	int err_fd;          /* the child's stderr; -1 at its end */
	char line[TEXT_MAX]; /* the line being read */
	size_t line_len;
	char last[TEXT_MAX]; /* the last complete non-empty line */
	size_t last_len;
};

struct work {
	struct cli *cli;
	const char **tubes;
	size_t ntubes;
	char **argv; /* CMD ARGS, NULL-terminated */
	struct job *jobs;
	int njobs;
	uint64_t max_tasks, taken;
	uint64_t idle_ms; /* --wait; 0: never stop for lack of tasks */
	/* the pauses before the next take: after a success, after a
	 * failure, after a take that found nothing (0: none) */
	uint64_t pause_ok_ms, pause_error_ms, pause_empty_ms;
	int64_t take_after; /* monotonic ms: no take before it */
	int status;
};

/* No take before now + ms (a later time already set stays). */
static void
pause_takes(struct work *w, uint64_t ms)
{
	int64_t until = mono_ms() + (int64_t)ms;

	if (ms > 0 && until > w->take_after)
		w->take_after = until;
}

static volatile sig_atomic_t got_stop;
static volatile sig_atomic_t got_child;

static void
on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_child = 1;
	else
		got_stop++;
}

static int
running(const struct work *w)
{
	int n = 0;

	for (int i = 0; i < w->njobs; i++)
		n += w->jobs[i].pid != 0;
	return n;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* ---- starting CMD ------------------------------------------------------- */

/* environ plus the task's SLUICE_* variables (cli_vars.c, the ones take
 * --sh prints): any of those names already there is dropped, so that a
 * variable the task does not set (SLUICE_PAYLOAD of a large payload) is
 * never inherited. */
static char **
job_env(const struct cli_vars *v)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	if ((env = calloc(n + (size_t)v->n + 1, sizeof(*env))) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!cli_vars_is_ours(environ[i]))
			env[k++] = environ[i];
	for (int i = 0; i < v->n; i++)
		env[k++] = v->entry[i];
	env[k] = NULL;
	return env;
}

/* Spawns CMD for `t` in slot `j`. Returns 0, or the errno of the failure
 * (the task is then failed by the caller with that reason). */
static int
job_start(struct work *w, struct job *j, const struct sluice_task *t)
{
	int in[2] = { -1, -1 }, err[2] = { -1, -1 };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dflt;
	struct cli_vars vars;
	char **env;
	pid_t pid;
	int rc;

	memset(j, 0, sizeof(*j));
	j->in_fd = j->err_fd = -1;
	j->id = t->id;
	j->lease = t->lease;
	j->ttr_ms = t->ttr_ms;
	j->attempts = t->attempts;
	if ((j->payload = malloc(t->payload_len + 1)) == NULL)
		return ENOMEM;
	memcpy(j->payload, t->payload, t->payload_len);
	j->len = t->payload_len;
	if (cli_vars_of(&vars, t) != 0) {
		free(j->payload);
		return ENOMEM;
	}
	if ((env = job_env(&vars)) == NULL) {
		cli_vars_free(&vars);
		free(j->payload);
		return ENOMEM;
	}
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
		rc = errno;
		goto fail;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
	posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
	posix_spawnattr_init(&at);
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGTERM);
	sigaddset(&dflt, SIGCHLD);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dflt);
	posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at,
	    POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
	        POSIX_SPAWN_SETPGROUP);
	rc = posix_spawnp(&pid, w->argv[0], &fa, &at, w->argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc != 0)
		goto fail;
	close(in[0]);
	close(err[1]);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	j->in_fd = in[1];
	j->err_fd = err[0];
	j->pid = pid;
	if (j->ttr_ms > 0)
		j->next_touch = mono_ms() + (int64_t)(j->ttr_ms / 2);
	if (j->len == 0)
		close_fd(&j->in_fd);
	free(env);
	cli_vars_free(&vars);
	return 0;

fail:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	free(env);
	cli_vars_free(&vars);
	free(j->payload);
	j->payload = NULL;
	return rc;
}

/* ---- a child's pipes ------------------------------------------------------
 */

static void
job_write(struct job *j)
{
	while (j->in_fd >= 0 && j->off < j->len) {
		ssize_t n =
		    write(j->in_fd, j->payload + j->off, j->len - j->off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) { /* EPIPE: CMD does not read all of it */
			close_fd(&j->in_fd);
			return;
		}
		j->off += (size_t)n;
	}
	close_fd(&j->in_fd);
}

static void
keep_line(struct job *j)
{
	size_t n = j->line_len;

	while (n > 0 && (j->line[n - 1] == '\r' || j->line[n - 1] == ' '))
		n--;
	if (n > 0) {
		memcpy(j->last, j->line, n);
		j->last_len = n;
	}
	j->line_len = 0;
}

/* Forwards what CMD wrote to stderr and remembers its last line. */
static void
job_read(struct job *j)
{
	char buf[4096];

	while (j->err_fd >= 0) {
		ssize_t n = read(j->err_fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close_fd(&j->err_fd);
			keep_line(j);
			return;
		}
		(void)!write(STDERR_FILENO, buf, (size_t)n);
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n')
				keep_line(j);
			else if (j->line_len < sizeof(j->line))
				j->line[j->line_len++] = buf[i];
		}
	}
}

/* ---- ending a task ------------------------------------------------------ */

static void
job_done(struct work *w, struct job *j, int wstatus)
{
	struct cli *cli = w->cli;
	char text[TEXT_MAX + 64];
	int rc;

	job_read(j); /* what is left in the pipe */
	close_fd(&j->err_fd);
	close_fd(&j->in_fd);
	keep_line(j);
	if (j->cancelled) {
		/* the lease's end removes the task: the release says so */
		rc = sluice_release(cli->c, j->id, j->lease, 0, -1, NULL);
		if (rc != 0 && rc != SLUICE_ECANCELED && rc != SLUICE_ENOTFOUND)
			w->status =
			    cli_fail(cli, rc, "work: release %" PRIu64, j->id);
	} else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {
		if ((rc = sluice_ack(cli->c, j->id, j->lease, NULL, NULL)) != 0)
			w->status =
			    cli_fail(cli, rc, "work: ack %" PRIu64, j->id);
		pause_takes(w, w->pause_ok_ms);
	} else {
		if (j->last_len > 0)
			snprintf(text, sizeof(text), "%.*s",
			    (int)cli_utf8_cut(j->last, j->last_len, TEXT_MAX),
			    j->last);
		else if (WIFEXITED(wstatus))
			snprintf(text, sizeof(text), "exit status %d",
			    WEXITSTATUS(wstatus));
		else
			snprintf(text, sizeof(text), "killed by signal %d (%s)",
			    WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
		fprintf(stderr, "sluice: work: task %" PRIu64 " failed: %s\n",
		    j->id, text);
		rc = sluice_fail(cli->c, j->id, j->lease, text, -1, NULL);
		if (rc == SLUICE_ECANCELED)
			fprintf(stderr,
			    "sluice: work: task %" PRIu64 " was cancelled\n",
			    j->id);
		else if (rc != 0)
			w->status =
			    cli_fail(cli, rc, "work: fail %" PRIu64, j->id);
		pause_takes(w, w->pause_error_ms);
	}
	free(j->payload);
	memset(j, 0, sizeof(*j));
	j->in_fd = j->err_fd = -1;
}

/* A task whose CMD could not even start: fail it with the reason. */
static void
fail_unstarted(struct work *w, const struct sluice_task *t, int err)
{
	char text[256];
	int rc;

	snprintf(
	    text, sizeof(text), "cannot run %s: %s", w->argv[0], strerror(err));
	fprintf(stderr, "sluice: work: task %" PRIu64 ": %s\n", t->id, text);
	if ((rc = sluice_fail(w->cli->c, t->id, t->lease, text, -1, NULL)) != 0)
		w->status = cli_fail(w->cli, rc, "work: fail %" PRIu64, t->id);
}

static void
reap(struct work *w)
{
	int wstatus;
	pid_t pid;

	got_child = 0;
	while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
		for (int i = 0; i < w->njobs; i++)
			if (w->jobs[i].pid == pid)
				job_done(w, &w->jobs[i], wstatus);
	}
}

static void
touch_due(struct work *w)
{
	int64_t now = mono_ms();
	int rc;

	for (int i = 0; i < w->njobs; i++) {
		struct job *j = &w->jobs[i];

		if (j->pid == 0 || j->next_touch == 0 || j->next_touch > now)
			continue;
		j->next_touch = now + (int64_t)(j->ttr_ms / 2);
		rc = sluice_touch(w->cli->c, j->id, j->lease, NULL);
		if (rc == SLUICE_ECANCELED) {
			fprintf(stderr,
			    "sluice: work: task %" PRIu64 " was cancelled: "
			    "stopping its command (pid %d)\n",
			    j->id, (int)j->pid);
			kill(-j->pid, SIGTERM);
			j->cancelled = true;
			j->next_touch = 0;
		} else if (rc != 0) {
			w->status =
			    cli_fail(w->cli, rc, "work: touch %" PRIu64, j->id);
			j->next_touch = 0; /* the lease is gone: stop */
		}
	}
}

/* ---- the loop ----------------------------------------------------------- */

/* Takes up to the free slots' worth of tasks and starts them. Returns 0, or
 * -1 when taking failed for a reason retrying will not fix. */
static int
take_some(struct work *w, int free_slots, bool busy)
{
	struct sluice_take_opts o = { .tubes = w->tubes, .ntubes = w->ntubes };
	struct sluice_task *t;
	size_t n, k = 0;
	int rc;

	o.max = (uint32_t)free_slots;
	if (w->max_tasks && w->max_tasks - w->taken < o.max)
		o.max = (uint32_t)(w->max_tasks - w->taken);
	o.wait_ms = busy ? WAIT_BUSY_MS : WAIT_IDLE_MS;
	rc = sluice_take(w->cli->c, &o, &t, &n);
	if (rc == SLUICE_ETIMEDOUT &&
	    strncmp(sluice_errmsg(w->cli->c), "nothing to take", 15) == 0) {
		pause_takes(w, w->pause_empty_ms);
		return 0;
	}
	if (rc == SLUICE_ECONN || rc == SLUICE_ETIMEDOUT ||
	    rc == SLUICE_ESHUTDOWN || rc == SLUICE_ENOTLEADER) {
		cli_fail(w->cli, rc, "work: take");
		w->status = EXIT_ERR;
		usleep(RETRY_MS * 1000);
		return 0;
	}
	if (rc != 0) {
		w->status = cli_fail(w->cli, rc, "work: take");
		return -1;
	}
	w->taken += n;
	for (int i = 0; i < w->njobs && k < n; i++) {
		if (w->jobs[i].pid != 0)
			continue;
		if ((rc = job_start(w, &w->jobs[i], &t[k])) != 0)
			fail_unstarted(w, &t[k], rc);
		k++;
	}
	sluice_task_free(t);
	return 0;
}

/* Waits for the children's pipes and signals, at most `ms`. */
static void
wait_events(struct work *w, int64_t ms, const sigset_t *open_mask)
{
	struct pollfd fds[2 * MAX_CONCURRENCY];
	struct job *owner[2 * MAX_CONCURRENCY];
	struct timespec ts;
	int64_t now = mono_ms();
	nfds_t n = 0;

	for (int i = 0; i < w->njobs; i++) {
		struct job *j = &w->jobs[i];

		if (j->pid != 0 && j->next_touch != 0 &&
		    j->next_touch - now < ms)
			ms = j->next_touch > now ? j->next_touch - now : 0;
		if (j->in_fd >= 0) {
			fds[n] = (struct pollfd) { j->in_fd, POLLOUT, 0 };
			owner[n++] = j;
		}
		if (j->err_fd >= 0) {
			fds[n] = (struct pollfd) { j->err_fd, POLLIN, 0 };
			owner[n++] = j;
		}
	}
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	if (ppoll(fds, n, &ts, open_mask) <= 0)
		return; /* timeout, or a signal: the caller looks at both */
	for (nfds_t i = 0; i < n; i++) {
		if (fds[i].revents == 0)
			continue;
		if (fds[i].events == POLLOUT)
			job_write(owner[i]);
		else
			job_read(owner[i]);
	}
}

static void
terminate_children(struct work *w)
{
	for (int i = 0; i < w->njobs; i++)
		if (w->jobs[i].pid != 0)
			kill(-w->jobs[i].pid, SIGTERM);
}

static int
work_loop(struct work *w)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, open_mask;
	int64_t last_task = mono_ms();
	bool killed = false, broken = false;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &open_mask);
	sigdelset(&open_mask, SIGINT);
	sigdelset(&open_mask, SIGTERM);
	sigdelset(&open_mask, SIGCHLD);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	for (;;) {
		int busy = running(w);
		bool want = !got_stop && !broken &&
		    (w->max_tasks == 0 || w->taken < w->max_tasks);
		int64_t wait_ms = 1000;

		if (want && busy == 0 && w->idle_ms &&
		    mono_ms() - last_task >= (int64_t)w->idle_ms)
			want = false; /* --wait: nothing came for that long */
		if (!want && busy == 0)
			break;
		if (want && busy < w->njobs && mono_ms() < w->take_after) {
			/* a pause: serve the children until it ends */
			wait_ms = w->take_after - mono_ms();
			if (wait_ms > 1000)
				wait_ms = 1000;
		} else if (want && busy < w->njobs) {
			uint64_t before = w->taken;

			if (take_some(w, w->njobs - busy, busy > 0) != 0)
				broken = true;
			if (w->taken != before)
				last_task = mono_ms();
			wait_ms = 0; /* go straight back to taking */
		}
		wait_events(w, wait_ms, &open_mask);
		if (got_child)
			reap(w);
		touch_due(w);
		if (got_stop >= 2 && !killed) {
			terminate_children(w);
			killed = true;
		}
	}
	sigprocmask(SIG_SETMASK, &open_mask, NULL);
	return broken ? EXIT_ERR : w->status;
}

/* True when `path` is a file this process may execute. Sets errno. */
static bool
executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return false;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		return false;
	}
	return access(path, X_OK) == 0;
}

/* Refuses, before any task is taken, a CMD that cannot be run: a path
 * that is not an executable file, or a name found nowhere in $PATH (as
 * posix_spawnp looks it up). Returns 0, or prints why and returns
 * EXIT_ERR. A CMD that vanishes later still fails its task with the
 * reason (fail_unstarted). */
static int
check_runnable(const char *cmd)
{
	const char *path = getenv("PATH");
	char full[PATH_MAX];

	if (strchr(cmd, '/') != NULL) {
		if (executable(cmd))
			return 0;
		fprintf(stderr, "sluice: work: cannot run %s: %s\n", cmd,
		    strerror(errno));
		return EXIT_ERR;
	}
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		size_t n = strcspn(p, ":");

		/* an empty entry is the current directory */
		if (snprintf(full, sizeof(full), "%.*s%s%s", (int)n,
		        n ? p : ".", "/", cmd) < (int)sizeof(full) &&
		    executable(full))
			return 0;
		p += n;
		if (*p == '\0')
			break;
	}
	fprintf(
	    stderr, "sluice: work: cannot run %s: not found in $PATH\n", cmd);
	return EXIT_ERR;
}

static const char work_usage[] =
    "usage: sluice work -t TUBE [-c N] [--max-tasks N] [--wait DUR]\n"
    "                   [--pause-ok DUR] [--pause-error DUR] "
    "[--pause-empty DUR]\n"
    "                   -- CMD [ARGS...]\n";
static const char work_help[] =
    "\nRuns CMD once per task of TUBE, with the payload on its standard "
    "input,\nup to N at once (a CMD that cannot be run is refused before any "
    "task\nis taken). CMD's exit status decides: 0 acks the task; "
    "anything\nelse fails it with the last line CMD wrote to standard error "
    "(or how it\nended), so it is retried after a backoff or buried. While "
    "CMD runs\nlonger than half the task's ttr, its lease is touched; "
    "when the touch\nsays the task was cancelled (sluice cancel), CMD gets "
    "SIGTERM and the\ntask goes.\n\n"
    "CMD sees the task in its environment, the variables take --sh prints:\n"
    "  SLUICE_TASK_ID, SLUICE_LEASE, SLUICE_TUBE, SLUICE_ATTEMPTS\n"
    "  SLUICE_PAYLOAD_SIZE    the payload's size in bytes\n"
    "  SLUICE_PAYLOAD         the payload, when it is text (UTF-8, no NUL\n"
    "                         byte) of at most 64 KiB\n"
    "  SLUICE_PAYLOAD_BASE64  instead, a payload of at most 64 KiB that is\n"
    "                         not text, in base64\n"
    "A payload over 64 KiB is in neither (both are unset): read it from\n"
    "standard input, which always carries the whole payload.\n\n"
    "  -t, --tube TUBE       the tube (repeat for several)\n"
    "  -c, --concurrency N   run up to N commands at once (default 1)\n"
    "      --max-tasks N     stop after N tasks (default: never)\n"
    "      --wait DUR        stop when no task came for DUR (default: "
    "never)\n"
    "      --pause-ok DUR    after a task succeeded, take the next one only\n"
    "                        DUR later (default: at once)\n"
    "      --pause-error DUR after a task failed, take the next one only\n"
    "                        DUR later (a broken dependency is not hammered)\n"
    "      --pause-empty DUR after a take found no task, look again only DUR\n"
    "                        later (default: at once; a take waits up to 1s\n"
    "                        for a task anyway)\n"
    "With -c N a pause holds back every slot; running commands go on, and\n"
    "a signal stops at once. DUR has a unit: 500ms, 2s, 1m.\n\n"
    "Example:\n"
    "  sluice work -t emails --pause-error 30s --pause-empty 5s -- "
    "./send.sh\n\n"
    "SIGINT or SIGTERM stops taking tasks; running commands finish and "
    "their\ntasks are acked or failed. A second signal terminates them "
    "(their tasks\nfail). The leases are bound to this process: if it "
    "dies, its tasks\nreturn to ready.\n";

static int
cmd_work(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tube", required_argument, NULL, 't' },
		{ "concurrency", required_argument, NULL, 'c' },
		{ "max-tasks", required_argument, NULL, 'm' },
		{ "wait", required_argument, NULL, 'w' },
		{ "pause-ok", required_argument, NULL, OPT_PAUSE_OK },
		{ "pause-error", required_argument, NULL, OPT_PAUSE_ERROR },
		{ "pause-empty", required_argument, NULL, OPT_PAUSE_EMPTY },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tubes[64];
	struct work w = { .cli = cli, .tubes = tubes, .njobs = 1 };
	uint64_t v;
	int ch, rc;

	/* "+": CMD's own options are not ours, even without "--" */
	while ((ch = getopt_long(argc, argv, "+t:c:w:h", opts, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (w.ntubes == 64)
				return cli_usage_error(cli, "at most 64 tubes");
			tubes[w.ntubes++] = optarg;
			break;
		case 'c':
			if ((rc = cli_parse_num(cli, "-c", optarg, 1,
			         MAX_CONCURRENCY, &v)) != 0)
				return rc;
			w.njobs = (int)v;
			break;
		case 'm':
			if ((rc = cli_parse_num(cli, "--max-tasks", optarg, 1,
			         UINT64_MAX, &w.max_tasks)) != 0)
				return rc;
			break;
		case 'w':
			if ((rc = cli_parse_ms(
			         cli, "--wait", optarg, 1, &w.idle_ms)) != 0)
				return rc;
			break;
		case OPT_PAUSE_OK:
			if ((rc = cli_parse_ms(cli, "--pause-ok", optarg, 0,
			         &w.pause_ok_ms)) != 0)
				return rc;
			break;
		case OPT_PAUSE_ERROR:
			if ((rc = cli_parse_ms(cli, "--pause-error", optarg, 0,
			         &w.pause_error_ms)) != 0)
				return rc;
			break;
		case OPT_PAUSE_EMPTY:
			if ((rc = cli_parse_ms(cli, "--pause-empty", optarg, 0,
			         &w.pause_empty_ms)) != 0)
				return rc;
			break;
		case 'h':
			return cli_help(cli);
		default:
			return cli_bad_option(cli);
		}
	}
	if (w.ntubes == 0)
		return cli_usage_error(cli, "-t TUBE is needed");
	if (optind == argc)
		return cli_usage_error(cli, "a CMD to run is needed");
	w.argv = argv + optind;
	if ((rc = check_runnable(w.argv[0])) != 0)
		return rc;
	if ((w.jobs = calloc((size_t)w.njobs, sizeof(*w.jobs))) == NULL) {
		fprintf(stderr, "sluice: work: out of memory\n");
		return EXIT_ERR;
	}
	for (int i = 0; i < w.njobs; i++)
		w.jobs[i].in_fd = w.jobs[i].err_fd = -1;
	if ((rc = cli_connect(cli)) == 0) {
		/* a worker outlives a server's restart: it waits for it to
		 * listen again, as the library does by default */
		sluice_set_refused_retry(cli->c, -1);
		rc = work_loop(&w);
	}
	free(w.jobs);
	return rc;
}

CLI_COMMAND(work, cmd_work);
