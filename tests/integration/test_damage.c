/* Damage on disk against a real sluiced and the real sluice-log: each
 * case writes a log through sluiced, stops it, damages the directory as a
 * disk (or a careless hand) would, and checks that
 *   - the start refuses, naming the file and offset and what to run, or
 *     recovers, exactly as docs/operations.md says for that damage;
 *   - `sluice-log verify` agrees with the server (exit 1 where sluiced
 *     refuses, never "a torn tail only" over acknowledged records, 0 on a
 *     healthy directory sluiced starts on);
 *   - the runbook's commands, read from docs/operations.md and run as
 *     written there, bring the node back, and `repair` salvages every
 *     whole record (counted: the tasks after the start are exactly the
 *     puts among the whole records verify found).
 * The cases: a flipped byte in the last record of a cleanly stopped node,
 * a segment cut to half its length, a flipped byte mid-segment, a
 * truncated newest snapshot (the start falls back to the one before,
 * --keep-snapshots), a snapshot taken right after an EPOCH record (a
 * healthy directory verify once called damaged), a killed snapshot's
 * leftover file, a lost put with the take and ack of its task after it
 * (refused, and named in LOST), a log from before the DURABLE mark, and
 * a snapshot on a full disk (ENOSPC, the node still takes writes; on a
 * tmpfs, as root). Every wait is bounded. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"
#include "util/fsutil.h"

enum {
	TASKS = 10000,
	PAYLOAD = 200,
	SEG = 1 << 20,
	OUT = 1 << 20,
	CMDS = 16,
};

static char out[OUT], err[OUT];

/* ---- helpers ----------------------------------------------------------- */

/* A server of the test's with the flags every case uses. */
static struct t_srv *
node(void **state, const char *name)
{
	struct t_srv *s = it_srv(*state, name);
	int i = 0;

	s->args[i++] = "--segment-size";
	s->args[i++] = "1048576";
	s->args[i++] = "--keep-segments";
	s->args[i++] = "0";
	s->args[i] = NULL;
	return s;
}

/* `n` puts of `size` bytes into tube "work" through `sluice put
 * --lines`, each in the fair group "g": a put with a group is a record
 * of its own, where a batch's plain puts would share PUTS records, and
 * these cases damage the log record by record, one task each. */
static void
fill_sized(struct t_srv *s, int n, int size)
{
	size_t len = (size_t)n * (size_t)(size + 1) + 1;
	char *in = malloc(len), *p = in;

	assert_non_null(in);
	for (int i = 0; i < n; i++) {
		int k = snprintf(p, (size_t)size + 1, "task %06d ", i);

		memset(p + k, 'x', (size_t)(size - k));
		p[size] = '\n';
		p += size + 1;
	}
	*p = '\0';
	assert_int_equal(
	    it_cli(s->url, in, out, sizeof(out), err, sizeof(err), "put",
	        "--lines", "-t", "work", "--group", "g", NULL),
	    0);
	free(in);
}

/* `n` puts of PAYLOAD bytes. */
static void
fill(struct t_srv *s, int n)
{
	fill_sized(s, n, PAYLOAD);
}

/* What the cases that damage a log of several segments fill it with:
 * TASKS puts of PAYLOAD bytes, or under the sanitizers half as many of
 * twice the size (the same bytes, so the same segments, for half the
 * work). */
static int
tasks(void)
{
	return it_sanitized() ? TASKS / 2 : TASKS;
}

static void
fill_segments(struct t_srv *s)
{
	fill_sized(s, tasks(), it_sanitized() ? 2 * PAYLOAD : PAYLOAD);
}

/* A copy of the directory fill_segments leaves behind a clean stop,
 * made by the first case that needs one (the cases that damage it each
 * get a copy: filling it through sluiced costs seconds, the sanitizers'
 * build most). */
static char filled_dir[1024];

static void
copy_dir(const char *from, const char *to)
{
	const char *argv[] = { "/bin/cp", "-a", from, to, NULL };

	assert_int_equal(
	    t_run((char *const *)argv, NULL, NULL, 0, err, sizeof(err)), 0);
}

/* `s` (not started) on a copy of a log of several segments, filled by
 * fill_segments and stopped cleanly: the first call fills it through
 * sluiced, the next ones copy what it left. */
static void
filled_segments(struct t_srv *s)
{
	const char *base = getenv("TMPDIR");

	if (filled_dir[0] != '\0') {
		copy_dir(filled_dir, s->data);
		return;
	}
	it_start(s);
	fill_segments(s);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	snprintf(filled_dir, sizeof(filled_dir), "%s/sluice-filled-XXXXXX",
	    base != NULL && *base != '\0' ? base : "/tmp");
	assert_non_null(mkdtemp(filled_dir));
	/* the copy is made inside it, as "log" */
	assert_true(strlen(filled_dir) + 5 < sizeof(filled_dir));
	strcat(filled_dir, "/log");
	copy_dir(s->data, filled_dir);
}

static uint64_t
ready(struct t_srv *s)
{
	struct sluice_client *c = it_client(s);
	uint64_t n = it_counts(c, NULL).ready;

	sluice_close(c);
	return n;
}

static void
snapshot(struct t_srv *s)
{
	assert_int_equal(it_cli(s->url, NULL, out, sizeof(out), err,
	                     sizeof(err), "snapshot", NULL),
	    0);
}

/* `sluice-log ARGS...` into out; its exit code. */
#define tool(...) it_log_tool(out, sizeof(out), __VA_ARGS__, NULL)

/* The LSN range and count of whole records verify found, from its first
 * line ("DIR: 3 segments, LSN 1..10001 (10000 records), ..."). */
static void
verify_counts(const char *data, uint64_t *last, uint64_t *whole)
{
	const char *p;
	unsigned long long a, b, n;

	tool("verify", data);
	p = strstr(out, ", LSN ");
	assert_non_null(p);
	assert_int_equal(
	    sscanf(p, ", LSN %llu..%llu (%llu records)", &a, &b, &n), 3);
	*last = b;
	*whole = n;
}

/* Where record `lsn` lies: its segment file's path and its offset. */
static void
record_at(const char *data, uint64_t lsn, char *seg, size_t n, uint64_t *off)
{
	char l[32];
	const char *p;

	snprintf(l, sizeof(l), "%llu", (unsigned long long)lsn);
	assert_int_equal(
	    tool("dump", data, "--json", "--from", l, "--to", l), 0);
	p = strstr(out, "\"segment\":\"");
	assert_non_null(p);
	p += strlen("\"segment\":\"");
	snprintf(seg, n, "%s/%.*s", data, (int)(strchr(p, '"') - p), p);
	p = strstr(out, "\"offset\":");
	assert_non_null(p);
	*off = strtoull(p + strlen("\"offset\":"), NULL, 10);
}

static void
flip(const char *path, uint64_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

/* Runs sluiced on `s`'s data and expects it to refuse: exit 1, its
 * stderr (in err) naming `what` and what to run. */
static void
start_refuses(struct t_srv *s, const char *what)
{
	const char *argv[] = { t_bin("sluiced"), "--data", s->data, "--listen",
		s->url, NULL };
	char *bin = strdup(argv[0]);

	argv[0] = bin;
	assert_int_equal(
	    t_run((char *const *)argv, NULL, NULL, 0, err, sizeof(err)), 1);
	free(bin);
	if (strstr(err, what) == NULL) {
		fprintf(stderr, "sluiced said:\n%s\nnot: %s\n", err, what);
		fail();
	}
	assert_non_null(strstr(err, "sluice-log verify"));
	assert_non_null(strstr(err, "sluice-log repair"));
}

/* ---- the runbook ------------------------------------------------------- */

struct runbook {
	char cmd[CMDS][256];
	int n;
};

/* The commands of the runbook block of docs/operations.md, as written. */
static void
runbook_read(struct runbook *rb)
{
	const char *doc = SLUICE_SOURCE_DIR "/docs/operations.md";
	const char *p, *end;
	uint8_t *text;
	size_t len;

	memset(rb, 0, sizeof(*rb));
	assert_int_equal(fs_read_all(doc, &text, &len), 0);
	text = realloc(text, len + 1);
	assert_non_null(text);
	text[len] = 0;
	p = strstr((char *)text, "<!-- runbook");
	assert_non_null(p);
	p = strstr(p, "```sh\n");
	assert_non_null(p);
	p += 6;
	end = strstr(p, "```");
	assert_non_null(end);
	while (p < end) {
		const char *nl = strchr(p, '\n');

		if (strncmp(p, "$ ", 2) == 0) {
			assert_true(rb->n < CMDS);
			snprintf(rb->cmd[rb->n++], sizeof(rb->cmd[0]), "%.*s",
			    (int)(nl - p - 2), p + 2);
		}
		p = nl + 1;
	}
	free(text);
	assert_true(rb->n >= 5);
}

/* `cmd` with every "DIR" replaced by `data`. */
static void
subst(const char *cmd, const char *data, char *outp, size_t n)
{
	size_t k = 0;

	for (const char *p = cmd; *p != '\0' && k + 1 < n;) {
		if (strncmp(p, "DIR", 3) == 0) {
			k += (size_t)snprintf(outp + k, n - k, "%s", data);
			p += 3;
		} else {
			outp[k++] = *p++;
		}
	}
	outp[k < n ? k : n - 1] = '\0';
}

/* Runs the runbook on `s` (stopped). `first_verify` is the exit code the
 * first verify must give; with 0 the runbook stops there, as it says.
 * The sluiced line starts `s` (its own flags added, as the runbook
 * says). The repair's output is left in `repair_out`. */
static void
runbook_run(struct t_srv *s, int first_verify, char *repair_out, size_t cap)
{
	struct runbook rb;
	bool verified = false;

	runbook_read(&rb);
	for (int i = 0; i < rb.n; i++) {
		char line[1024];
		const char *argv[] = { "/bin/bash", "-c", line, NULL };
		int want = 0, rc;

		if (strncmp(rb.cmd[i], "sluiced ", 8) == 0) {
			/* as written: only the data directory */
			assert_string_equal(rb.cmd[i], "sluiced --data DIR");
			it_start(s);
			continue;
		}
		if (strncmp(rb.cmd[i], "sluice-log verify ", 18) == 0) {
			want = verified ? 0 : first_verify;
			verified = true;
		}
		subst(rb.cmd[i], s->data, line, sizeof(line));
		strncat(line, " 2>&1", sizeof(line) - strlen(line) - 1);
		rc =
		    t_run((char *const *)argv, NULL, out, sizeof(out), NULL, 0);
		if (rc != want) {
			fprintf(stderr, "runbook: %s: exit %d, not %d:\n%s\n",
			    line, rc, want, out);
			fail();
		}
		if (strncmp(rb.cmd[i], "sluice-log repair DIR", 21) == 0 &&
		    repair_out != NULL)
			snprintf(repair_out, cap, "%s", out);
		if (want == 0 && verified && first_verify == 0) {
			/* sound: "stop here and start sluiced" */
			it_start(s);
			return;
		}
	}
}

/* The count in "... that applies: N records kept" of a salvage. */
static uint64_t
salvaged(const char *text)
{
	const char *p = strstr(text, "that applies: ");

	if (p == NULL) {
		fprintf(stderr, "no salvage in:\n%s\n", text);
		fail();
	}
	return strtoull(p + strlen("that applies: "), NULL, 10);
}

/* ---- the cases --------------------------------------------------------- */

/* One flipped byte in the last record of a node stopped cleanly: that
 * record was acknowledged, so this is damage, not a torn write; the start
 * refuses and verify never says "a torn tail only". */
static void
test_flipped_byte_in_the_last_record_of_a_clean_stop(void **state)
{
	struct t_srv *s = node(state, "last");
	static char rep[OUT];
	uint64_t last, whole, off;
	char seg[1024], what[1200];

	filled_segments(s);
	verify_counts(s->data, &last, &whole);
	/* the EPOCH record and the puts */
	assert_true(whole == (uint64_t)tasks() + 1);
	record_at(s->data, last, seg, sizeof(seg), &off);
	flip(seg, off + 26); /* its time: the body still reads */

	snprintf(what, sizeof(what), "segment=%s offset=%" PRIu64, seg, off);
	start_refuses(s, what);
	assert_int_equal(tool("verify", s->data), 1);
	assert_null(strstr(out, "torn tail only"));
	assert_non_null(strstr(out, "stopped cleanly"));
	assert_non_null(strstr(out, "sluiced will not start"));

	verify_counts(s->data, &last, &whole);
	runbook_run(s, 1, rep, sizeof(rep));
	/* every whole record kept: all the puts but the damaged one */
	assert_true(salvaged(rep) == whole);
	assert_true(ready(s) == (uint64_t)tasks() - 1);
	/* what was lost, named: the put the damaged record held */
	assert_non_null(strstr(rep, "was probably: PUT_G id="));
	assert_non_null(strstr(rep, "tube=work"));
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* A segment cut to half its length (one that has a successor): records
 * known written are gone; the start refuses; the salvage keeps every
 * whole record of this segment and of the ones after it. */
static void
test_a_segment_cut_to_half_its_length(void **state)
{
	struct t_srv *s = node(state, "half");
	static char rep[OUT];
	uint64_t last, whole, before;
	char seg[1024];

	filled_segments(s);
	verify_counts(s->data, &last, &before);
	assert_true(before == (uint64_t)tasks() + 1);
	snprintf(seg, sizeof(seg), "%s/%020d.wal", s->data, 1);
	assert_true(t_file_size(seg) == SEG);
	assert_int_equal(truncate(seg, SEG / 2), 0);
	assert_int_equal(tool("verify", s->data), 1);
	assert_non_null(strstr(out, "shorter than its preallocated size"));
	verify_counts(s->data, &last, &whole);
	assert_true(whole < before && whole > before / 2);

	start_refuses(s, "shorter than its preallocated size");
	runbook_run(s, 1, rep, sizeof(rep));
	assert_true(salvaged(rep) == whole);
	/* every whole record is a put but the EPOCH at LSN 1 */
	assert_true(ready(s) == whole - 1);
	assert_non_null(strstr(rep, "no whole record holds them"));
	assert_non_null(strstr(rep, "put in the lost LSNs"));
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* The case: the only segment, cut to half its length, after a
 * clean stop. It once started with a warning and half the acknowledged
 * tasks gone; now the start refuses, verify names the synced LSNs that
 * are gone, and the salvage keeps every whole record left. */
static void
test_the_last_segment_cut_to_half_its_length(void **state)
{
	struct t_srv *s = node(state, "halflast");
	static char rep[OUT];
	uint64_t last, whole, before;
	char seg[1024];

	s->args[1] = "4194304"; /* one segment holds every record */
	it_start(s);
	fill_segments(s);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	verify_counts(s->data, &last, &before);
	snprintf(seg, sizeof(seg), "%s/%020d.wal", s->data, 1);
	assert_int_equal(truncate(seg, 4194304 / 2), 0);
	start_refuses(s, "shorter than its preallocated size");
	assert_int_equal(tool("verify", s->data), 1);
	assert_null(strstr(out, "torn tail only"));
	assert_non_null(strstr(out, "had synced up to LSN"));
	verify_counts(s->data, &last, &whole);
	assert_true(whole < before);
	runbook_run(s, 1, rep, sizeof(rep));
	assert_true(salvaged(rep) == whole);
	assert_true(ready(s) == whole - 1);
	assert_non_null(strstr(rep, "the log had synced up to LSN"));
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* A flipped byte in the middle of a segment: the start refuses; the
 * salvage keeps the half of the records after it (a cut kept none of
 * them). */
static void
test_a_flipped_byte_mid_segment(void **state)
{
	struct t_srv *s = node(state, "mid");
	static char rep[OUT];
	uint64_t last, whole, off;
	char seg[1024], what[1200];

	filled_segments(s);
	record_at(s->data, (uint64_t)tasks() / 2 + 1, seg, sizeof(seg), &off);
	flip(seg, off + 60);
	snprintf(what, sizeof(what), "segment=%s offset=%" PRIu64, seg, off);
	start_refuses(s, what);
	assert_int_equal(tool("verify", s->data), 1);
	assert_non_null(strstr(out, "valid records resume"));
	assert_non_null(strstr(out, "would salvage"));
	verify_counts(s->data, &last, &whole);
	assert_true(whole == (uint64_t)tasks());
	runbook_run(s, 1, rep, sizeof(rep));
	assert_true(salvaged(rep) == whole);
	assert_true(ready(s) == (uint64_t)tasks() - 1);
	/* what was lost, by id: the put the damaged record held */
	assert_non_null(strstr(rep, "was probably: PUT_G id="));
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* The snapshots of a directory, ascending. */
static int
snaps(const char *dir, char names[][64], int max)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL && n < max)
		if (strlen(e->d_name) == 25 &&
		    strcmp(e->d_name + 20, ".snap") == 0)
			memcpy(names[n++], e->d_name, 26); /* and its NUL */
	closedir(d);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char t[64];

				memcpy(t, names[i], 64);
				memcpy(names[i], names[j], 64);
				memcpy(names[j], t, 64);
			}
	return n;
}

/* A truncated newest snapshot, its segments removed: the previous
 * snapshot and the segments it needs were kept (--keep-snapshots 2), so
 * the start falls back to it, loudly, with every task. */
static void
test_a_truncated_snapshot_falls_back(void **state)
{
	struct t_srv *s = node(state, "snap");
	char names[8][64], path[1024];
	int n;

	it_start(s);
	fill(s, 4000);
	snapshot(s);
	fill(s, 4000);
	snapshot(s);
	fill(s, 100);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	n = snaps(s->data, names, 8);
	assert_int_equal(n, 2);
	snprintf(path, sizeof(path), "%s/%s", s->data, names[1]);
	assert_int_equal(truncate(path, t_file_size(path) / 2), 0);

	/* verify: damaged, but sluiced starts from the older one */
	assert_int_equal(tool("verify", s->data), 1);
	assert_non_null(strstr(out, "sluiced starts from an older snapshot"));
	it_start(s);
	assert_true(it_log_count(s, "DAMAGED SNAPSHOT") == 1);
	assert_true(ready(s) == 8100);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);

	runbook_run(s, 1, NULL, 0);
	assert_true(ready(s) == 8100);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* A snapshot taken right after the EPOCH record a start writes: the
 * queue's own LSN is one below the snapshot's name. sluiced starts on it,
 * and verify calls it sound (it once said DAMAGED). A killed snapshot's
 * file is removed at the start. */
static void
test_a_snapshot_right_after_an_epoch_is_sound(void **state)
{
	struct t_srv *s = node(state, "epoch");
	char names[8][64], left[1024];
	uint64_t last, whole;
	FILE *f;

	it_start(s);
	fill(s, 100);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_start(s); /* writes an EPOCH record */
	snapshot(s);
	assert_true(WIFSIGNALED(t_srv_stop(s, SIGKILL)));
	verify_counts(s->data, &last, &whole);
	assert_int_equal(snaps(s->data, names, 8), 1);
	assert_true(strtoull(names[0], NULL, 10) == last);
	{
		char from[32];

		snprintf(from, sizeof(from), "%llu", (unsigned long long)last);
		assert_int_equal(tool("dump", s->data, "--from", from), 0);
	}
	assert_non_null(strstr(out, "EPOCH"));

	/* what a snapshot killed with its server leaves */
	snprintf(left, sizeof(left), "%s/%020d.snap.inprogress", s->data, 99);
	f = fopen(left, "w");
	assert_non_null(f);
	fputs("half a snapshot", f);
	fclose(f);

	runbook_run(s, 0, NULL, 0); /* verify: exit 0, then start */
	assert_true(ready(s) == 100);
	assert_int_equal(access(left, F_OK), -1);
	assert_true(it_log_count(s, "removed unfinished snapshots") == 1);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* A put lost to damage, with the take and the ack of its task after it:
 * the salvage keeps every other record, refuses the two that no longer
 * apply (their task does not exist), and names all three in LOST. */
static void
test_a_lost_put_and_what_followed_it(void **state)
{
	struct t_srv *s = node(state, "refused");
	static char rep[OUT], lost[OUT];
	char seg[1024], path[1200];
	struct sluice_client *c;
	struct sluice_task *t;
	uint64_t off, first = 0;
	struct dirent *e;
	DIR *d;

	it_start(s);
	c = it_client(s);
	for (int i = 0; i < 100; i++) {
		uint64_t id = it_put(c, "work", "first batch");

		if (i == 0)
			first = id;
	}
	t = it_take(c, "work", 1000, 0);
	assert_true(t->id == first);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	for (int i = 0; i < 10; i++)
		(void)it_put(c, "work", "second batch");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);

	record_at(s->data, 2, seg, sizeof(seg), &off); /* the first put */
	flip(seg, off + 26);
	start_refuses(s, "bad record followed by a valid one");
	runbook_run(s, 1, rep, sizeof(rep));
	assert_non_null(strstr(rep, "2 whole records refused by the queue"));
	assert_true(ready(s) == 109); /* as before the damage */
	/* LOST names the put, and the take and the ack refused, with why */
	snprintf(path, sizeof(path), "%s/lost+found", s->data);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			snprintf(path, sizeof(path), "%s/lost+found/%s/LOST",
			    s->data, e->d_name);
	closedir(d);
	{
		int fd = open(path, O_RDONLY);
		ssize_t n;

		assert_true(fd >= 0);
		n = read(fd, lost, sizeof(lost) - 1);
		close(fd);
		assert_true(n > 0);
		lost[n] = '\0';
	}
	snprintf(path, sizeof(path), "was probably: PUT id=%llu tube=work",
	    (unsigned long long)first);
	assert_non_null(strstr(lost, path));
	snprintf(path, sizeof(path), "ACK id=%llu", (unsigned long long)first);
	assert_non_null(strstr(lost, path));
	assert_non_null(strstr(lost, "does not apply to the state before it"));
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
}

/* A directory written before the DURABLE mark existed reads as before:
 * sluiced starts on it and writes the mark from then on. */
static void
test_a_log_from_before_the_durable_mark_starts(void **state)
{
	struct t_srv *s = node(state, "old");
	char mark[1024];

	it_start(s);
	fill(s, 100);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	snprintf(mark, sizeof(mark), "%s/DURABLE", s->data);
	assert_int_equal(unlink(mark), 0);
	assert_int_equal(tool("verify", s->data), 0);
	assert_non_null(strstr(out, "no DURABLE mark"));
	it_start(s);
	assert_true(ready(s) == 100);
	assert_int_equal(access(mark, F_OK), 0);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	assert_int_equal(tool("verify", s->data), 0);
	assert_non_null(strstr(out, "stopped cleanly"));
}

/* A snapshot on a full disk answers ENOSPC ("no room"), not ELOG ("the
 * node refuses writes"): the log is fine and the node goes on. On a
 * tmpfs of its own (root only). */
static void
test_a_snapshot_on_a_full_disk_is_enospc(void **state)
{
	struct t_srv *s = node(state, "full");
	char opts[64], filler[1024];
	struct sluice_client *c;
	struct sluice_task *t;
	uint64_t lsn;
	int fd, rc = -1;

	assert_int_equal(mkdir(s->data, 0755), 0);
	snprintf(opts, sizeof(opts), "size=%dm", 24);
	if (geteuid() != 0 || unshare(CLONE_NEWNS) != 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("sluice-test", s->data, "tmpfs", 0, opts) != 0) {
		fprintf(stderr, "skipped: needs root and a tmpfs\n");
		return;
	}
	it_start(s);
	fill(s, 3000);
	/* Fill what is left of the disk (the log keeps its spares). */
	snprintf(filler, sizeof(filler), "%s/filler", s->data);
	fd = open(filler, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	{
		static char block[64 << 10];

		for (int i = 0; i < 10000; i++)
			if (write(fd, block, sizeof(block)) < 0)
				break;
	}
	close(fd);
	c = it_client(s);
	rc = sluice_snapshot(c, &lsn);
	it_rc(c, rc, SLUICE_ENOSPC);
	assert_null(strstr(sluice_errmsg(c), "refuses writes"));
	/* The log is fine: a take and an ack are written. */
	t = it_take(c, "work", 1000, 0);
	it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
	sluice_task_free(t);
	/* Room again: a snapshot and a put work. */
	assert_int_equal(unlink(filler), 0);
	it_rc(c, sluice_snapshot(c, &lsn), 0);
	(void)it_put(c, "work", "after");
	sluice_close(c);
	assert_int_equal(t_srv_stop(s, SIGTERM), 0);
	it_verify_startable(s->data);
	umount2(s->data, MNT_DETACH);
}

int
main(void)
{
	static char path[4096];
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_flipped_byte_in_the_last_record_of_a_clean_stop,
		    it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_segment_cut_to_half_its_length, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_last_segment_cut_to_half_its_length, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_flipped_byte_mid_segment, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_truncated_snapshot_falls_back, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_snapshot_right_after_an_epoch_is_sound, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_lost_put_and_what_followed_it, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_log_from_before_the_durable_mark_starts, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_a_snapshot_on_a_full_disk_is_enospc, it_setup,
		    it_teardown),
	};
	char bin[4096];
	int rc;

	/* The runbook's commands run from $PATH: this build's first. */
	snprintf(bin, sizeof(bin), "%s", t_bin("sluice-log"));
	snprintf(path, sizeof(path), "%s:%s", dirname(bin),
	    getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	setenv("PATH", path, 1);
	rc = cmocka_run_group_tests_name("damage", tests, NULL, NULL);
	if (filled_dir[0] != '\0') {
		const char *argv[] = { "/bin/rm", "-rf", dirname(filled_dir),
			NULL };

		t_run((char *const *)argv, NULL, NULL, 0, NULL, 0);
	}
	return rc;
}
