/* The admin page (GET /) in a real browser: Debian's chromium, headless.
 *
 * - The tube table shows a known workload's counts, and a chosen tube
 *   (#tube=NAME) its buried tasks with their last error and the errors
 *   grouped by text; read-only without --http-admin (no buttons).
 *   (chromium --headless --dump-dom prints the DOM once the page's
 *   fetches ran.)
 * - With --http-admin, a kick clicked on the page, confirmed in its
 *   dialog, moves a buried task back to ready. The browser is driven
 *   through chromedriver's WebDriver API (Debian's chromium-driver).
 *
 * Skipped (exit code 77, saying so) only where chromium or
 * chromium-driver is not installed; `make test` installs both. */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"
#include "it_http.h"

enum {
	DOM_MAX = 1 << 20,
	BUDGET_MS = 4000, /* the page's virtual time before the dump */
	DRIVER_WAIT_MS = 20000,
};

static char chromium[1024], driver[1024];
static pid_t driver_pid; /* leads its own process group */

static const char *const browser_args[] = { "--headless", "--no-sandbox",
	"--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
	"--disable-extensions" };

struct page_srv {
	struct t_srv *s;
	int hport;
	char haddr[64];
};

static void
start_page_srv(void **state, struct page_srv *p, const char *name, bool admin)
{
	p->s = it_srv(*state, name);
	p->hport = it_free_port();
	snprintf(p->haddr, sizeof(p->haddr), "127.0.0.1:%d", p->hport);
	p->s->args[0] = "--http";
	p->s->args[1] = p->haddr;
	p->s->args[2] = admin ? "--http-admin" : NULL;
	it_start(p->s);
}

/* A task of `tube` buried by failing it at max_attempts 1 with `error`;
 * its id. */
static uint64_t
bury_one(struct sluice_client *c, const char *tube, const char *error)
{
	struct sluice_put_opts o;
	struct sluice_task *t;
	uint64_t id;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.max_attempts = 1;
	o.priority = 0; /* taken before the tube's other tasks */
	id = it_put_o(c, &o, "payload");
	t = it_take(c, tube, 0, 1);
	assert_int_equal(t->id, id);
	it_rc(c, sluice_fail(c, t->id, t->lease, error, -1, NULL), 0);
	sluice_task_free(t);
	assert_int_equal(it_state(c, id), SLUICE_BURIED);
	return id;
}

/* The text between `<tr data-tube="NAME"` and its `</tr>`; asserted. */
static char *
tube_row(const char *dom, const char *tube, char *out, size_t cap)
{
	char pat[256];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "<tr data-tube=\"%s\"", tube);
	p = strstr(dom, pat);
	if (p == NULL)
		fail_msg("no row for tube %s in the page:\n%s", tube, dom);
	e = strstr(p, "</tr>");
	assert_non_null(e);
	assert_true((size_t)(e - p) < cap);
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return out;
}

static void
assert_cell(const char *row, const char *cls, uint64_t want)
{
	char pat[128];

	snprintf(
	    pat, sizeof(pat), "<td class=\"%s\">%" PRIu64 "</td>", cls, want);
	if (strstr(row, pat) == NULL)
		fail_msg("wanted %s in the row %s", pat, row);
}

/* chromium --headless --dump-dom URL: the DOM (to free). */
static char *
dump_dom(void **state, const char *url)
{
	struct t_dir *d = *state;
	char budget[64], profile[512], *out = malloc(DOM_MAX), err[8192];
	char *argv[16];
	int n = 0, rc;

	assert_non_null(out);
	snprintf(budget, sizeof(budget), "--virtual-time-budget=%d", BUDGET_MS);
	snprintf(
	    profile, sizeof(profile), "--user-data-dir=%s/chromium", d->path);
	argv[n++] = chromium;
	for (size_t i = 0; i < sizeof(browser_args) / sizeof(browser_args[0]);
	     i++)
		argv[n++] = (char *)browser_args[i];
	argv[n++] = profile;
	argv[n++] = budget;
	argv[n++] = "--dump-dom";
	argv[n++] = (char *)url;
	argv[n] = NULL;
	rc = t_run(argv, NULL, out, DOM_MAX, err, sizeof(err));
	if (rc != 0)
		fail_msg("chromium --dump-dom: exit %d\n%s", rc, err);
	return out;
}

/* The tube table shows the workload's counts; the chosen tube's buried
 * task and its error; no buttons without --http-admin. */
static void
test_page_shows_the_tubes_and_a_tubes_buried_tasks(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	struct sluice_put_opts o;
	struct sluice_task *held;
	struct sluice_tube_conf conf;
	char url[256], row[4096], pat[128], *dom;
	uint64_t buried;

	start_page_srv(state, &p, "ro", false);
	c = it_client(p.s);
	memset(&conf, 0, sizeof(conf));
	conf.set = SLUICE_TS_TTR | SLUICE_TS_MAX_ATTEMPTS;
	conf.ttr_ms = 30000;
	conf.max_attempts = 4;
	assert_int_equal(sluice_tube_set(c, "emails", &conf, 0, NULL), 0);
	sluice_put_opts_init(&o);
	o.tube = "emails";
	for (int i = 0; i < 4; i++)
		it_put_o(c, &o, "hello");
	o.delay_ms = 3600000;
	it_put_o(c, &o, "later");
	held = it_take(c, "emails", 0, 1);
	buried = bury_one(c, "emails", "smtp: connection <refused>");
	bury_one(c, "emails", "smtp: connection <refused>");

	snprintf(url, sizeof(url), "http://%s/#tube=emails", p.haddr);
	dom = dump_dom(state, url);
	tube_row(dom, "emails", row, sizeof(row));
	assert_cell(row, "ready", 3);
	assert_cell(row, "delayed", 1);
	assert_cell(row, "taken", 1);
	assert_cell(row, "buried", 2);
	/* The settings it has of its own. */
	if (strstr(row,
	        "<td class=\"settings text\">ttr 30.0 s, max "
	        "attempts 4</td>") == NULL)
		fail_msg("no settings in the row %s", row);
	/* The chosen tube: its buried tasks, by id, with the error as text
	 * (escaped, not markup), and the errors grouped: 2 of that one. */
	snprintf(pat, sizeof(pat), "<tr data-id=\"%" PRIu64 "\">", buried);
	assert_non_null(strstr(dom, pat));
	assert_non_null(strstr(dom, "smtp: connection &lt;refused&gt;"));
	assert_non_null(strstr(dom,
	    "<td>2</td><td class=\"text\">smtp: connection &lt;refused&gt;"));
	assert_non_null(strstr(dom, "data-admin=\"0\""));
	assert_null(strstr(dom, "class=\"kick\""));
	assert_non_null(strstr(dom, "class=\"ok\">healthy"));
	sluice_task_free(held);
	sluice_close(c);
	free(dom);
}

/* ---- WebDriver ---------------------------------------------------------- */

static int driver_port;

static void
driver_stop(void)
{
	int status;

	if (driver_pid <= 0)
		return;
	kill(-driver_pid, SIGTERM);
	for (int i = 0; i < 300; i++) {
		if (waitpid(driver_pid, &status, WNOHANG) == driver_pid) {
			driver_pid = 0;
			break;
		}
		it_sleep_ms(10);
	}
	if (driver_pid > 0) {
		kill(-driver_pid, SIGKILL);
		waitpid(driver_pid, &status, 0);
		driver_pid = 0;
	}
}

static int
page_teardown(void **state)
{
	driver_stop();
	return it_teardown(state);
}

static void
driver_start(void **state)
{
	struct t_dir *d = *state;
	char port[64], log[600];
	int64_t deadline;
	char *body = NULL;

	driver_port = it_free_port();
	snprintf(port, sizeof(port), "--port=%d", driver_port);
	snprintf(log, sizeof(log), "%s/chromedriver.log", d->path);
	driver_pid = fork();
	assert_true(driver_pid >= 0);
	if (driver_pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		setpgid(0, 0); /* its browsers die with it */
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execl(driver, driver, port, (char *)NULL);
		_exit(127);
	}
	setpgid(driver_pid, driver_pid);
	it_track_pid(driver_pid);
	deadline = it_mono_ms() + DRIVER_WAIT_MS;
	while (it_mono_ms() < deadline) {
		if (it_http(driver_port, "GET", "/status", NULL, NULL, &body) ==
		        200 &&
		    strstr(body, "\"ready\":true") != NULL) {
			free(body);
			return;
		}
		free(body);
		body = NULL;
		it_sleep_ms(50);
	}
	fail_msg("chromedriver did not become ready (see %s)", log);
}

/* A WebDriver command; its status and answer (to free). */
static int
wd(const char *method, const char *path, const char *json, char **out)
{
	return it_http(driver_port, method, path, NULL, json, out);
}

/* With --http-admin, kick on the page and OK in its confirmation: the
 * buried task is ready again. */
static void
test_kick_on_the_page_makes_a_buried_task_ready(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	char caps[2048], path[512], json[512], sid[128], eid[256];
	char *body = NULL;
	int64_t deadline;
	uint64_t id;
	size_t n;
	int st;

	start_page_srv(state, &p, "rw", true);
	c = it_client(p.s);
	id = bury_one(c, "jobs", "worker crashed");
	driver_start(state);

	n = (size_t)snprintf(caps, sizeof(caps),
	    "{\"capabilities\":{\"alwaysMatch\":{\"goog:chromeOptions\":{"
	    "\"binary\":\"%s\",\"args\":[",
	    chromium);
	for (size_t i = 0; i < sizeof(browser_args) / sizeof(browser_args[0]);
	     i++)
		n += (size_t)snprintf(caps + n, sizeof(caps) - n, "%s\"%s\"",
		    i ? "," : "", browser_args[i]);
	snprintf(caps + n, sizeof(caps) - n, "]}}}}");
	st = wd("POST", "/session", caps, &body);
	if (st != 200 || !it_json_str(body, "sessionId", sid, sizeof(sid)))
		fail_msg("new session: %d %s", st, body ? body : "");
	free(body);

	snprintf(path, sizeof(path), "/session/%s/url", sid);
	snprintf(
	    json, sizeof(json), "{\"url\":\"http://%s/#tube=jobs\"}", p.haddr);
	assert_int_equal(wd("POST", path, json, &body), 200);
	free(body);

	/* The button appears once the page fetched the tube. */
	snprintf(path, sizeof(path), "/session/%s/element", sid);
	snprintf(json, sizeof(json),
	    "{\"using\":\"css selector\",\"value\":"
	    "\"button.kick[data-id='%" PRIu64 "']\"}",
	    id);
	deadline = it_mono_ms() + DRIVER_WAIT_MS;
	for (;;) {
		st = wd("POST", path, json, &body);
		if (st == 200 &&
		    it_json_str(body, "element-6066-11e4-a52e-4f735466cecf",
		        eid, sizeof(eid)))
			break;
		if (it_mono_ms() > deadline)
			fail_msg("no kick button for %" PRIu64 ": %d %s", id,
			    st, body ? body : "");
		free(body);
		body = NULL;
		it_sleep_ms(100);
	}
	free(body);
	assert_int_equal(it_state(c, id), SLUICE_BURIED);

	snprintf(path, sizeof(path), "/session/%s/element/%s/click", sid, eid);
	assert_int_equal(wd("POST", path, "{}", &body), 200);
	free(body);
	/* The confirmation names what it will do; nothing happened yet. */
	snprintf(path, sizeof(path), "/session/%s/alert/text", sid);
	assert_int_equal(wd("GET", path, NULL, &body), 200);
	snprintf(json, sizeof(json), "kick task %" PRIu64 "?", id);
	assert_non_null(strstr(body, json));
	free(body);
	assert_int_equal(it_state(c, id), SLUICE_BURIED);
	snprintf(path, sizeof(path), "/session/%s/alert/accept", sid);
	assert_int_equal(wd("POST", path, "{}", &body), 200);
	free(body);

	assert_true(it_wait_state(c, id, SLUICE_READY, DRIVER_WAIT_MS) >= 0);

	snprintf(path, sizeof(path), "/session/%s", sid);
	wd("DELETE", path, NULL, &body);
	free(body);
	driver_stop();
	sluice_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_page_shows_the_tubes_and_a_tubes_buried_tasks,
		    it_setup, page_teardown),
		cmocka_unit_test_setup_teardown(
		    test_kick_on_the_page_makes_a_buried_task_ready, it_setup,
		    page_teardown),
	};

	if (!it_which("chromium", chromium, sizeof(chromium))) {
		printf("skipped: chromium is not installed (Debian's chromium "
		       "package; make test installs it)\n");
		return 77;
	}
	if (!it_which("chromedriver", driver, sizeof(driver))) {
		printf("skipped: chromedriver is not installed (Debian's "
		       "chromium-driver package; make test installs it)\n");
		return 77;
	}
	return cmocka_run_group_tests_name("page", tests, NULL, NULL);
}
