/* The dashboard (GET /) in a real browser: Debian's chromium, headless,
 * driven through chromedriver's WebDriver API (Debian's chromium-driver,
 * wd.h): one chromedriver and one browser session for every check.
 *
 * - The tube table shows a known workload's counts, and a chosen tube
 *   (#tube=NAME&tab=...) its flow limits (rate, burst, concurrency, the
 *   tokens and slots in use), its buried tasks with their last error and
 *   the errors grouped by text with example ids; read-only without
 *   --http-admin (no buttons). (The DOM is read as HTML once the page's
 *   fetches ran.)
 * - With --http-admin, after a scripted workload: the overview chart
 *   draws non-zero rates, buries among them, over a span that fits the
 *   data (a node up for seconds: 5 minutes, what it did not count shaded)
 *   or the hour chosen; a tube's depth sparkline is full from the first
 *   paint (the server's history), the tube has its own chart, its tabs
 *   list the right tasks, the pager pages by cursor to the last of 1,000
 *   tasks, a search by key finds its task, "kick" (confirmed in its
 *   dialog) makes a buried task ready and "run now" a delayed one. The
 *   bulk actions ask the node for their count first and confirm with it:
 *   an error group retried, every buried task kicked, every taken one
 *   released, the tasks of a state older than an age deleted. Screenshots
 *   of the overview and of the tube page are saved as PNG (into
 *   $SLUICE_SCREENSHOTS when set: that is how docs/images/ is made, else
 *   into the test's directory).
 * - With 1,000 tubes the overview renders them all; the time to the first
 *   paint and to the first full render are printed (not asserted).
 * - The server killed (-9) under the page: it says "unreachable since"
 *   (not a green "healthy") and greys out its stale figures within a
 *   bounded time; restarted, the page recovers by itself.
 * - A task's view: its payload as text, or size and base64 when binary,
 *   truncated with a note when large; last error, attempts, times in UTC
 *   with their age, its result when done.
 * - A task put with parents: the tube's row, tab and counts say waiting; a
 *   task's view names its parents (how each ended) and its children as
 *   links to their views; found by key, it shows in the waiting tab.
 * - Batches: the overview lists them, open ones first, each with its
 *   counts by state, a progress bar (acked, failed, taken over its
 *   tasks), its start and end and its callbacks (the task each put, a
 *   link); a task's view links to its batch, which the overview then
 *   shows first and marked (a screenshot: dashboard-batches).
 * - A tube with fair groups lists its groups with the largest backlog
 *   beside its limits (a screenshot: dashboard-groups).
 * - The errors tab has no pager, a message does not outlive its view,
 *   commit p99 is an upper bound in two significant digits; a node
 *   without --etcd lists itself as the nodes (test_nodes.c: a cluster).
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
#include "wd.h"

/* One chromedriver and one browser session for every test: a session
 * costs a second, and each test goes to its own URLs. */
static char shared_sid[128];

/* The shared session (started with chromedriver at the first call): its
 * id into sid. */
static void
page_session(void **state, char *sid, size_t cap)
{
	struct t_dir *d = *state;

	wd_start(d->path);
	if (shared_sid[0] == '\0')
		wd_session(shared_sid, sizeof(shared_sid));
	snprintf(sid, cap, "%s", shared_sid);
}

/* The test's directory: screenshots go there unless
 * $SLUICE_SCREENSHOTS names another. */
static const char *
dir_of(void **state)
{
	return ((struct t_dir *)*state)->path;
}

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

/* The tube table shows the workload's counts; the chosen tube's buried
 * task and its error, the errors grouped with an example id; no buttons
 * without --http-admin. */
static void
test_page_shows_the_tubes_and_a_tubes_buried_tasks(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	struct sluice_put_opts o;
	struct sluice_task *held;
	struct sluice_tube_conf conf;
	struct sluice_limits lim = { 0 };
	char url[256], row[8192], pat[256], sid[128], *dom;
	uint64_t buried;

	start_page_srv(state, &p, "ro", false);
	page_session(state, sid, sizeof(sid));
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
	lim.set = SLUICE_LIM_RATE | SLUICE_LIM_CONCURRENCY;
	lim.rate = 100;
	lim.per_ms = 1000;
	lim.burst = 20;
	lim.concurrency = 10;
	assert_int_equal(sluice_tube_limit(c, "emails", &lim, 0, NULL), 0);
	held = it_take(c, "emails", 0, 1);
	buried = bury_one(c, "emails", "smtp: connection <refused>");
	bury_one(c, "emails", "smtp: connection <refused>");

	/* The overview: the tube's row. */
	snprintf(url, sizeof(url), "http://%s/", p.haddr);
	dom = wd_dom(sid, url,
	    "return !!document.querySelector('tr[data-tube=emails]') && "
	    "document.querySelector('#health').textContent === 'healthy'");
	tube_row(dom, "emails", row, sizeof(row));
	assert_cell(row, "ready", 3);
	assert_cell(row, "delayed", 1);
	assert_cell(row, "taken", 1);
	assert_cell(row, "buried", 2);
	/* The settings it has of its own. */
	if (strstr(row,
	        "<td class=\"settings text wide\">ttr 30.0 s, max "
	        "attempts 4</td>") == NULL)
		fail_msg("no settings in the row %s", row);
	assert_non_null(strstr(dom, "data-admin=\"0\""));
	assert_non_null(strstr(dom, "class=\"ok\">healthy"));
	free(dom);

	/* Its buried tasks, by id, with the error as text (escaped, not
	 * markup); no buttons. */
	snprintf(
	    url, sizeof(url), "http://%s/#tube=emails&tab=buried", p.haddr);
	dom = wd_dom(sid, url,
	    "return !!document.querySelector('#tasks tbody "
	    "tr[data-state=buried]') && "
	    "!document.querySelector('#tubelimits').hidden");
	snprintf(pat, sizeof(pat),
	    "<tr data-id=\"%" PRIu64 "\" data-state=\"buried\">", buried);
	if (strstr(dom, pat) == NULL)
		fail_msg("no row %s in\n%s", pat, dom);
	/* the tube's limits, and the slot its taken task holds (the
	 * buried ones hold none) */
	if (strstr(dom,
	        "<span id=\"tubelimits\">limits: rate 100/s, burst "
	        "20 (") == NULL ||
	    strstr(dom,
	        " \u00b7 concurrency 10 (1 in use) \u00b7 0 held "
	        "back, 0 takes waiting</span>") == NULL)
		fail_msg("no limits in the tube's page:\n%s", dom);
	assert_non_null(strstr(dom, "smtp: connection &lt;refused&gt;"));
	assert_null(strstr(dom, "class=\"kick\""));
	assert_null(strstr(dom, "class=\"delete\""));
	free(dom);

	/* The errors grouped: 2 of that one, with example ids. */
	snprintf(
	    url, sizeof(url), "http://%s/#tube=emails&tab=errors", p.haddr);
	dom = wd_dom(sid, url,
	    "return !document.querySelector('#errors').hidden && "
	    "!!document.querySelector('#errors tbody td.examples a')");
	assert_non_null(strstr(dom,
	    "<td>2</td><td class=\"text\">smtp: connection &lt;refused&gt;"));
	snprintf(pat, sizeof(pat), "find=%" PRIu64 "\">%" PRIu64 "</a>", buried,
	    buried);
	if (strstr(dom, pat) == NULL)
		fail_msg("no example id %s in\n%s", pat, dom);
	sluice_task_free(held);
	sluice_close(c);
	free(dom);
}

/* `n` tasks of `tube` put in five batches (payload "task"), `pause_ms`
 * between batches (so the chart has a shape); the first id. */
static uint64_t
put_many(struct sluice_client *c, const char *tube, int n, int pause_ms)
{
	int per = (n + 4) / 5;
	struct sluice_batch_item *it = calloc((size_t)per, sizeof(*it));
	uint64_t first = 0;

	assert_non_null(it);
	for (int done = 0; done < n;) {
		int k = n - done < per ? n - done : per;

		for (int i = 0; i < k; i++) {
			sluice_put_opts_init(&it[i].opts);
			it[i].opts.tube = tube;
			it[i].payload = "task";
			it[i].len = 4;
		}
		assert_int_equal(sluice_put_batch(c, it, (size_t)k), 0);
		for (int i = 0; i < k; i++)
			assert_int_equal(it[i].rc, 0);
		if (done == 0)
			first = it[0].id;
		done += k;
		if (done < n && pause_ms > 0)
			it_sleep_ms(pause_ms);
	}
	free(it);
	return first;
}

/* The bulk actions of tube "bulk", each confirmed in a dialog that names
 * the count the server gave first: an error group retried (its buried
 * tasks kicked, not another group's), every buried task kicked, every
 * taken task released, the tasks of a state older than an age deleted
 * (none that old: said, and no dialog). */
static void
bulk_actions(const char *dir, struct sluice_client *c, const char *sid,
    const char *haddr)
{
	struct sluice_task *t[2];
	uint64_t timeout[3], bad;
	char url[256];

	for (int i = 0; i < 3; i++)
		timeout[i] = bury_one(c, "bulk", "timeout");
	bad = bury_one(c, "bulk", "bad input");
	snprintf(url, sizeof(url), "http://%s/#tube=bulk&tab=errors", haddr);
	wd_go(sid, url);
	wd_until(sid,
	    "return document.querySelectorAll('#errors button.retry')"
	    ".length === 2");
	wd_shot(dir, sid, "dashboard-errors");
	wd_click(sid, "button.retry[data-error='timeout']");
	wd_confirm(sid, "Kick 3 buried tasks of bulk whose last error is ");
	for (int i = 0; i < 3; i++)
		assert_true(it_wait_state(
		                c, timeout[i], SLUICE_READY, WD_WAIT_MS) >= 0);
	assert_int_equal(it_state(c, bad), SLUICE_BURIED);
	wd_until(sid,
	    "return document.querySelector('#msg').textContent === "
	    "'kicked 3 buried tasks of bulk (retried)'");

	wd_click(sid, "#bulk-kick");
	wd_confirm(sid, "Kick 1 buried task of bulk?");
	assert_true(it_wait_state(c, bad, SLUICE_READY, WD_WAIT_MS) >= 0);

	t[0] = it_take(c, "bulk", 0, 0);
	t[1] = it_take(c, "bulk", 0, 1);
	wd_click(sid, "#bulk-release");
	wd_confirm(sid, "Release 2 taken tasks of bulk?");
	for (int i = 0; i < 2; i++) {
		assert_true(
		    it_wait_state(c, t[i]->id, SLUICE_READY, WD_WAIT_MS) >= 0);
		sluice_task_free(t[i]);
	}

	/* None an hour old: said so, no dialog; then every ready one. */
	free(wd_js(sid,
	    "document.querySelector('#del-state').value = 'ready';"
	    "document.querySelector('#del-older').value = '1h'; return 1"));
	wd_click(sid, "#bulk-delete");
	wd_until(sid,
	    "return document.querySelector('#msg').textContent === "
	    "'no ready task of bulk older than 1h'");
	free(wd_js(
	    sid, "document.querySelector('#del-older').value = '0'; return 1"));
	wd_click(sid, "#bulk-delete");
	wd_confirm(sid, "Delete 4 ready tasks of bulk? This cannot be undone.");
	wd_until(sid,
	    "return document.querySelector('#msg').textContent === "
	    "'deleted 4 ready tasks of bulk'");
	assert_int_equal(it_state(c, bad), 0); /* gone */
}

/* The dashboard after a scripted workload, driven like a user: the chart,
 * the tabs, the pager, search by key, kick and run now. */
static void
test_the_dashboard_shows_and_acts(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	struct sluice_put_opts o;
	char sid[128], url[256], js[1024], css[256];
	uint64_t first, keyed, delayed, buried[3];
	struct sluice_task *t, *held;
	bool shape;

	start_page_srv(state, &p, "rw", true);
	c = it_client(p.s);
	/* The workload: 1,000 ready tasks, one with a key, takes and acks,
	 * fails, a delayed task and buried ones. Spread over seconds (the
	 * chart's shape) only for the pictures of docs/images/: no check
	 * reads the shape. */
	shape = getenv("SLUICE_SCREENSHOTS") != NULL;
	first = put_many(c, "jobs", 1000, shape ? 600 : 0);
	sluice_put_opts_init(&o);
	o.tube = "jobs";
	o.key = "invoice-77";
	keyed = it_put_o(c, &o, "keyed");
	o.key = NULL;
	o.delay_ms = 3600000;
	delayed = it_put_o(c, &o, "later");
	for (int i = 0; i < 20; i++) {
		t = it_take(c, "jobs", 0, 1);
		it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
		sluice_task_free(t);
		if (i % 5 == 4 && shape)
			it_sleep_ms(300);
	}
	for (int i = 0; i < 3; i++)
		buried[i] = bury_one(c, "jobs", i ? "timeout" : "bad input");
	page_session(state, sid, sizeof(sid));

	/* The overview: the chart's lines carry the puts and acks of the
	 * last 15 minutes (the history), drawn as points. */
	snprintf(url, sizeof(url), "http://%s/", p.haddr);
	wd_go(sid, url);
	wd_until(sid, "return !!document.querySelector('#chart polyline')");
	assert_true(wd_num(sid,
	                "return +document.querySelector('#chart "
	                "polyline[data-kind=puts]').dataset.sum") >= 1000);
	assert_true(wd_num(sid,
	                "return +document.querySelector('#chart "
	                "polyline[data-kind=acks]').dataset.sum") >= 20);
	assert_true(wd_num(sid,
	                "return +document.querySelector('#chart "
	                "polyline[data-kind=fails]').dataset.sum") >= 3);
	assert_true(wd_num(sid,
	                "return +document.querySelector('#chart "
	                "polyline[data-kind=puts]').dataset.max") > 0);
	/* Buries are charted; the span fits the data: a node up for
	 * seconds shows its last 5 minutes, what it did not count (before
	 * it started) shaded, not drawn as zeros. */
	assert_true(wd_num(sid,
	                "return +document.querySelector('#chart "
	                "polyline[data-kind=buries]').dataset.sum") >= 3);
	wd_until(sid,
	    "const c = document.querySelector('#chart');"
	    "return c.dataset.span === '300' && c.dataset.slots === '300' && "
	    "document.querySelector('#span-title').textContent === "
	    "'last 5 minutes (fits the data)' && "
	    "document.querySelector('#spans [aria-pressed=true]')"
	    ".dataset.span === '300' && "
	    "!!c.querySelector('rect.nodata') && "
	    "document.querySelector('#xmin').textContent"
	    ".startsWith('-5 min (started ')");
	wd_until(sid,
	    "return document.querySelector('tr[data-tube=jobs] td.buried')"
	    ".textContent === '3'");
	/* The depth's sparkline is full from the first paint: the server's
	 * history of the tube, 60 slots of 5 s, the last one not empty. */
	assert_int_equal(
	    wd_num(sid,
	        "return document.querySelector('tr[data-tube=jobs] "
	        "svg.spark polyline').getAttribute('points')"
	        ".split(' ').length"),
	    60);
	assert_true(wd_num(sid,
	                "return +document.querySelector('tr[data-tube=jobs] "
	                "svg.spark polyline').getAttribute('points')"
	                ".split(' ').pop().split(',')[1]") < 19);
	wd_shot(dir_of(state), sid, "dashboard-overview");
	/* The hour, chosen: 3,600 slots of 1 s, the same events in them. */
	wd_click(sid, "#spans [data-span='3600']");
	wd_until(sid,
	    "const c = document.querySelector('#chart');"
	    "return c.dataset.span === '3600' && c.dataset.slots === '3600' && "
	    "document.querySelector('#span-title').textContent === "
	    "'last hour' && +c.querySelector('polyline[data-kind=puts]')"
	    ".dataset.sum >= 1000 && document.querySelector('#xmin')"
	    ".textContent.startsWith('-1 h (started ')");

	/* The tube: ready tab, the first page in id order. */
	snprintf(url, sizeof(url), "http://%s/#tube=jobs&tab=ready", p.haddr);
	wd_go(sid, url);
	snprintf(js, sizeof(js),
	    "return document.querySelectorAll('#tasks tbody "
	    "tr[data-state=ready]').length === 100 && "
	    "document.querySelector('#tasks tbody tr').dataset.id === "
	    "'%" PRIu64 "'",
	    first + 20);
	wd_until(sid, js);
	/* The pager asks for the page after the last id shown, by cursor,
	 * to the last page: the 981 ready tasks (the first 20 acked, the
	 * keyed one the highest id) are 10 pages of 100, the last of 81. */
	for (int page = 2; page <= 10; page++) {
		wd_click(sid, "#next");
		snprintf(js, sizeof(js),
		    "return document.querySelector('#pageinfo').textContent"
		    ".startsWith('page %d,')",
		    page);
		wd_until(sid, js);
	}
	snprintf(js, sizeof(js),
	    "const r = document.querySelectorAll('#tasks tbody "
	    "tr[data-state=ready]');"
	    "return r.length === 81 && r[0].dataset.id === '%" PRIu64 "' && "
	    "r[80].dataset.id === '%" PRIu64 "' && "
	    "document.querySelector('#next').disabled",
	    first + 920, keyed);
	wd_until(sid, js);
	assert_int_equal(keyed, first + 1000);
	/* Delayed, taken and buried tabs: their tasks. */
	wd_click(sid, "button[data-tab=delayed]");
	snprintf(
	    css, sizeof(css), "button.runnow[data-id='%" PRIu64 "']", delayed);
	wd_click(sid, css);
	snprintf(js, sizeof(js), "run now task %" PRIu64 "?", delayed);
	wd_confirm(sid, js);
	assert_true(it_wait_state(c, delayed, SLUICE_READY, WD_WAIT_MS) >= 0);

	wd_click(sid, "button[data-tab=buried]");
	snprintf(js, sizeof(js),
	    "return document.querySelectorAll('#tasks tbody "
	    "tr[data-state=buried]').length === 3 && "
	    "!!document.querySelector('tr[data-id=\\\"%" PRIu64 "\\\"]')",
	    buried[0]);
	wd_until(sid, js);
	/* The tube's own chart: its 5 s slots, 15 minutes at most (the
	 * hour chosen above is more than a tube's history holds). */
	wd_until(sid,
	    "const c = document.querySelector('#tchart');"
	    "return !document.querySelector('#tubechart').hidden && "
	    "c.dataset.span === '900' && c.dataset.slots === '180' && "
	    "+c.querySelector('polyline[data-kind=puts]').dataset.sum >= "
	    "1000 && +c.querySelector('polyline[data-kind=buries]')"
	    ".dataset.sum >= 3 && document.querySelector('#tspan')"
	    ".textContent.startsWith('last 15 min (a tube')");
	wd_shot(dir_of(state), sid, "dashboard-tube");
	snprintf(
	    css, sizeof(css), "button.kick[data-id='%" PRIu64 "']", buried[1]);
	wd_click(sid, css);
	snprintf(js, sizeof(js), "kick task %" PRIu64 "?", buried[1]);
	wd_confirm(sid, js);
	assert_true(it_wait_state(c, buried[1], SLUICE_READY, WD_WAIT_MS) >= 0);
	assert_int_equal(it_state(c, buried[0]), SLUICE_BURIED);

	/* Search by key, typed and submitted: that one task. */
	wd_type(sid, "#q", "invoice-77\\uE007"); /* Enter */
	snprintf(js, sizeof(js),
	    "return document.querySelectorAll('#tasks tbody tr').length === 1 "
	    "&& document.querySelector('#tasks tbody tr').dataset.id === "
	    "'%" PRIu64 "'",
	    keyed);
	wd_until(sid, js);

	/* The taken tab names each lease's holder: this client's session
	 * and address, or detached. */
	it_put(c, "held", "mine");
	it_put(c, "held", "loose");
	t = it_take(c, "held", 0, 0);
	held = it_take(c, "held", 0, 1);
	snprintf(url, sizeof(url), "http://%s/#tube=held&tab=taken", p.haddr);
	wd_go(sid, url);
	snprintf(js, sizeof(js),
	    "const h = i => [...document.querySelectorAll('#tasks tbody tr')]"
	    ".find(r => r.dataset.id === String(i))"
	    "?.querySelector('td.holder');"
	    "return !!h(%" PRIu64 ") && !!h(%" PRIu64 ") && "
	    "h(%" PRIu64 ").textContent === 'session %" PRIu32 " (%s)' && "
	    "h(%" PRIu64 ").textContent === 'detached'",
	    t->id, held->id, t->id, t->session, t->peer, held->id);
	wd_until(sid, js);
	sluice_task_free(t);
	sluice_task_free(held);

	bulk_actions(dir_of(state), c, sid, p.haddr);
	sluice_close(c);
}

/* The server killed (-9) under an open page: within a bounded time the
 * page says "unreachable since ..." in a badge that is not green, and
 * greys out every figure (they are the last read); the server started
 * again on the same ports: the page recovers by itself, "healthy", its
 * figures live and new (a put made meanwhile shows). */
static void
test_the_page_of_a_server_that_is_down(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	char sid[128], url[256];
	double since;

	start_page_srv(state, &p, "down", false);
	c = it_client(p.s);
	it_put(c, "mail", "one");
	page_session(state, sid, sizeof(sid));
	snprintf(url, sizeof(url), "http://%s/", p.haddr);
	wd_go(sid, url);
	wd_until(sid,
	    "return document.querySelector('#health').textContent === "
	    "'healthy' && document.querySelector('tr[data-tube=mail] "
	    "td.ready')?.textContent === '1'");
	assert_true(wd_num(sid,
	                "return document.body.classList.contains('stale') ? 1 "
	                ": 0") == 0);

	sluice_close(c);
	assert_true(WIFSIGNALED(t_srv_stop(p.s, SIGKILL)));
	/* The page polls every 2 s: unreachable within WD_WAIT_MS. */
	wd_until(sid,
	    "const h = document.querySelector('#health');"
	    "return h.textContent.startsWith('unreachable since ') && "
	    "h.className !== 'ok' && "
	    "getComputedStyle(h).color !== 'rgb(143, 224, 143)' && "
	    "document.body.classList.contains('stale') && "
	    "getComputedStyle(document.querySelector('main')).opacity < 1 && "
	    "getComputedStyle(document.querySelector('#node')).opacity < 1 && "
	    "!document.querySelector('#asof').hidden && "
	    "document.querySelector('#asof').textContent"
	    ".startsWith('figures as of ')");
	since = wd_num(sid, "return +document.body.dataset.unreachableSince");
	assert_true(since > 0 && since <= (double)it_wall_ms());
	/* Still unreachable at the next poll, from the same time on: each
	 * poll without an answer writes the badge again with its age, so a
	 * new text is the next poll's (waited for, bounded). */
	assert_true(wd_num(sid,
	                "window.firstDown = document.querySelector('#health')"
	                ".textContent; return 1") == 1);
	wd_until(sid,
	    "const h = document.querySelector('#health').textContent;"
	    "return h.startsWith('unreachable since ') && "
	    "h !== window.firstDown");
	assert_true(
	    wd_num(sid, "return +document.body.dataset.unreachableSince") ==
	    since);
	wd_shot(dir_of(state), sid, "dashboard-unreachable");

	it_start(p.s);
	c = it_client(p.s);
	it_put(c, "mail", "two");
	wd_until(sid,
	    "return document.querySelector('#health').textContent === "
	    "'healthy' && document.querySelector('#health').className === "
	    "'ok' && !document.body.classList.contains('stale') && "
	    "!document.body.dataset.unreachableSince && "
	    "document.querySelector('#asof').hidden && "
	    "getComputedStyle(document.querySelector('main')).opacity == 1 && "
	    "document.querySelector('tr[data-tube=mail] td.ready')"
	    "?.textContent === '2'");
	sluice_close(c);
}

/* The text of the task view's field `k` is `want` (a JS expression on
 * `v`, the field's value text), waited for (bounded). */
static void
wd_field(const char *sid, const char *k, const char *cond)
{
	char js[1024];

	snprintf(js, sizeof(js),
	    "const v = document.querySelector('#taskinfo [data-k=\\\"%s\\\"] "
	    ".v')?.textContent; return v !== undefined && (%s)",
	    k, cond);
	wd_until(sid, js);
}

/* A task's view (its id clicked in a tab, or #tube=T&task=ID): its
 * payload as text, or as size and base64 when binary, truncated with a
 * note when large; its last error, attempts, times with their zone and
 * age, and its result once done. */
static void
test_the_view_of_a_task(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	struct sluice_put_opts o;
	struct sluice_tube_conf conf;
	struct sluice_ack_opts ao = { .result = "sent: 250 OK" };
	struct sluice_task *t;
	static const unsigned char bin[] = { 0, 1, 2, 0xff, 0xfe };
	char sid[128], url[256], js[1024], *big;
	uint64_t text, binary, large, done;

	start_page_srv(state, &p, "task", false);
	c = it_client(p.s);
	memset(&conf, 0, sizeof(conf));
	conf.set = SLUICE_TS_KEEP_DONE;
	conf.keep_done_ms = 3600000;
	assert_int_equal(sluice_tube_set(c, "mail", &conf, 0, NULL), 0);
	/* Text, failed once (delayed an hour) with an error. */
	sluice_put_opts_init(&o);
	o.tube = "mail";
	o.max_attempts = 5;
	text = it_put_o(c, &o, "to=ada@example.com <b>hi</b>");
	t = it_take(c, "mail", 0, 1);
	assert_int_equal(t->id, text);
	it_rc(c,
	    sluice_fail(
	        c, t->id, t->lease, "smtp 451: try later", 3600000, NULL),
	    0);
	sluice_task_free(t);
	/* Binary; 10,000 bytes of text; one done with a result. */
	o.max_attempts = 0;
	o.delay_ms = 3600000;
	assert_int_equal(sluice_put(c, &o, bin, sizeof(bin), &binary, NULL), 0);
	big = malloc(10001);
	assert_non_null(big);
	memset(big, 'x', 10000);
	big[10000] = '\0';
	large = it_put_o(c, &o, big);
	free(big);
	o.delay_ms = 0;
	done = it_put_o(c, &o, "report 7");
	t = it_take(c, "mail", 0, 1);
	assert_int_equal(t->id, done);
	it_rc(c, sluice_ack_opts(c, t->id, t->lease, &ao, NULL), 0);
	sluice_task_free(t);
	assert_int_equal(it_state(c, done), SLUICE_DONE);

	page_session(state, sid, sizeof(sid));
	/* From the delayed tab, the task's id opens its view. */
	snprintf(url, sizeof(url), "http://%s/#tube=mail&tab=delayed", p.haddr);
	wd_go(sid, url);
	snprintf(js, sizeof(js), "a.task[data-id='%" PRIu64 "']", text);
	wd_click(sid, js);
	snprintf(js, sizeof(js),
	    "const b = document.querySelector('#taskview');"
	    "return !b.hidden && b.dataset.id === '%" PRIu64 "' && "
	    "location.hash.endsWith('task=%" PRIu64 "') && "
	    "document.querySelector('#payload').textContent === "
	    "'to=ada@example.com <b>hi</b>' && "
	    "document.querySelector('#payload-note').textContent === "
	    "'text, 28 bytes'",
	    text, text);
	wd_until(sid, js);
	wd_field(sid, "last error", "v === 'smtp 451: try later'");
	wd_field(sid, "attempts", "v === '1 of 5'");
	wd_field(sid, "state", "v === 'delayed'");
	/* Times in UTC, with their age or how far ahead. */
	wd_field(sid, "created",
	    "/^20..-..-.. ..:..:.. UTC \\\\(.* ago\\\\)$/.test(v)");
	wd_field(
	    sid, "runs at", "/ UTC \\\\(in (59|60)\\\\.. min\\\\)$/.test(v)");
	wd_shot(dir_of(state), sid, "dashboard-task");

	/* Binary: its size and base64. */
	snprintf(url, sizeof(url), "http://%s/#tube=mail&task=%" PRIu64,
	    p.haddr, binary);
	wd_go(sid, url);
	wd_until(sid,
	    "return document.querySelector('#payload').textContent === "
	    "'AAEC//4=' && document.querySelector('#payload-note')"
	    ".textContent === 'binary, 5 bytes, in base64'");
	/* Large: the first 4,096 characters, and a note saying so. */
	snprintf(url, sizeof(url), "http://%s/#tube=mail&task=%" PRIu64,
	    p.haddr, large);
	wd_go(sid, url);
	wd_until(sid,
	    "return document.querySelector('#payload').textContent.length === "
	    "4096 && document.querySelector('#payload-note').textContent === "
	    "'text, 10000 bytes; truncated: the first 4096 characters of "
	    "10000 bytes shown'");
	/* Done: its result and when it finished. */
	snprintf(url, sizeof(url), "http://%s/#tube=mail&task=%" PRIu64,
	    p.haddr, done);
	wd_go(sid, url);
	wd_field(sid, "state", "v === 'done'");
	wd_field(sid, "result", "v === 'sent: 250 OK'");
	wd_field(sid, "finished", "/ UTC \\\\(.* ago\\\\)$/.test(v)");
	assert_true(wd_num(sid,
	                "return document.querySelector('#payload')"
	                ".textContent === 'report 7' ? 1 : 0") == 1);
	sluice_close(c);
}

/* What stood in the way of a reader: the errors tab shows no pager (a
 * CSS rule made `hidden` show it, stale); a message is about its view
 * and is gone in the next; commit p99 is an upper bound in two
 * significant digits, not a histogram bucket's bound to the microsecond. */
static void
test_the_page_says_only_what_is_so(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	char sid[128], url[256];

	start_page_srv(state, &p, "so", false);
	c = it_client(p.s);
	for (int i = 0; i < 20; i++)
		it_put(c, "mail", "x");
	bury_one(c, "mail", "bounced");
	page_session(state, sid, sizeof(sid));

	snprintf(url, sizeof(url), "http://%s/#tube=mail&tab=ready", p.haddr);
	wd_go(sid, url);
	wd_until(sid,
	    "return getComputedStyle(document.querySelector('#pager'))"
	    ".display !== 'none' && document.querySelectorAll('#tasks tbody "
	    "tr[data-state=ready]').length === 20");
	wd_click(sid, "button[data-tab=errors]");
	wd_until(sid,
	    "return !document.querySelector('#errors').hidden && "
	    "document.querySelector('#errors tbody').textContent"
	    ".includes('bounced') && "
	    "getComputedStyle(document.querySelector('#pager')).display === "
	    "'none' && getComputedStyle(document.querySelector('#tasks'))"
	    ".display === 'none'");

	/* A search that finds nothing says so; the next view does not. */
	wd_click(sid, "button[data-tab=ready]");
	wd_type(sid, "#q", "no-such-key\\uE007"); /* Enter */
	wd_until(sid,
	    "return document.querySelector('#msg').textContent === "
	    "'find no-such-key: not found'");
	/* A search's result is about its view too: found, then another
	 * tab reached by its address (a link, the back button) lists its
	 * own tasks, with an empty search box. */
	free(wd_js(sid, "document.querySelector('#q').value = ''; return 1"));
	wd_type(sid, "#q", "5\\uE007"); /* Enter */
	wd_until(sid,
	    "const r = document.querySelectorAll('#tasks tbody tr');"
	    "return r.length === 1 && r[0].dataset.id === '5' && "
	    "document.querySelector('#pageinfo').textContent === "
	    "'search result'");
	free(wd_js(sid, "location.hash = '#tube=mail&tab=buried'; return 1"));
	wd_until(sid,
	    "const r = document.querySelectorAll('#tasks tbody tr');"
	    "return r.length === 1 && r[0].dataset.id === '21' && "
	    "r[0].dataset.state === 'buried' && "
	    "document.querySelector('#pageinfo').textContent"
	    ".startsWith('page 1') && document.querySelector('#q').value === "
	    "'' && document.querySelector('#msg').textContent === ''");
	free(wd_js(sid, "location.hash = '#'; return true"));
	wd_until(sid,
	    "return !document.querySelector('#overview').hidden && "
	    "document.querySelector('#msg').textContent === ''");

	/* The nodes of a node without --etcd: itself, leading, no
	 * follower connected. */
	wd_until(sid,
	    "const r = document.querySelectorAll('#nodes tbody tr');"
	    "return r.length === 1 && r[0].dataset.node.startsWith('this "
	    "node (') && r[0].querySelector('td.role').textContent === "
	    "'leader' && document.querySelector('#nodes-src').textContent"
	    ".startsWith('(no --etcd')");

	/* commit p99: at most so much, in two significant digits. */
	wd_until(sid,
	    "const t = document.querySelector('#nodeinfo "
	    "[data-k=\\\"commit p99\\\"]')?.textContent || '';"
	    "const m = t.match(/^commit p99 (\u2264|>) ([0-9.]+) ms$/);"
	    "return !!m && m[2].replace('.', '').replace(/^0+/, '')"
	    ".replace(/0+$/, '').length <= 2");
	sluice_close(c);
}

/* 1,000 tubes: the overview renders a row for each. How long the first
 * paint and the first full render took is printed, not asserted. */
static void
test_the_overview_of_a_thousand_tubes(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	struct sluice_batch_item *it = calloc(1000, sizeof(*it));
	char(*names)[16] = calloc(1000, sizeof(*names));
	char sid[128], url[256];
	double paint, render;

	assert_non_null(it);
	assert_non_null(names);
	start_page_srv(state, &p, "many", false);
	c = it_client(p.s);
	for (int i = 0; i < 1000; i++) {
		snprintf(names[i], sizeof(names[i]), "tube-%04d", i);
		sluice_put_opts_init(&it[i].opts);
		it[i].opts.tube = names[i];
		it[i].payload = "x";
		it[i].len = 1;
	}
	assert_int_equal(sluice_put_batch(c, it, 1000), 0);
	page_session(state, sid, sizeof(sid));
	snprintf(url, sizeof(url), "http://%s/", p.haddr);
	wd_go(sid, url);
	wd_until(sid,
	    "return document.querySelectorAll('#tubes tbody "
	    "tr[data-tube]').length === 1000");
	paint = wd_num(sid,
	    "const e = performance.getEntriesByName('first-contentful-paint');"
	    " return e.length ? e[0].startTime : -1");
	render = wd_num(sid, "return +document.body.dataset.firstRenderMs");
	printf("1000 tubes: first contentful paint %.0f ms, first full render "
	       "%.0f ms after navigation\n",
	    paint, render);
	assert_true(render > 0);
	sluice_close(c);
	free(it);
	free(names);
}

/* n tasks of `tube` in group `g` (NULL: none). */
static void
put_n(struct sluice_client *c, const char *tube, const char *g, int n)
{
	struct sluice_put_opts o;

	sluice_put_opts_init(&o);
	o.tube = tube;
	o.group = g;
	for (int i = 0; i < n; i++)
		it_put_o(c, &o, "x");
}

/* A tube with fair groups: beside its limits, its page lists the groups
 * with the largest backlog (ready, taken, oldest ready), the largest
 * first, and says how many there are in all; a tube without groups shows
 * none. A screenshot of it (dashboard-groups). */
static void
test_page_shows_a_tubes_groups(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	struct sluice_limits lim = { 0 };
	struct sluice_task *t[2];
	char url[256], sid[128], name[16], *dom;

	start_page_srv(state, &p, "groups", false);
	page_session(state, sid, sizeof(sid));
	c = it_client(p.s);
	put_n(c, "tenants", "acme", 30);
	put_n(c, "tenants", "beta", 5);
	put_n(c, "tenants", NULL, 3);
	for (int i = 0; i < 9; i++) {
		snprintf(name, sizeof(name), "small-%d", i);
		put_n(c, "tenants", name, 1);
	}
	put_n(c, "plain", NULL, 2);
	lim.set = SLUICE_LIM_CONCURRENCY;
	lim.concurrency = 2;
	assert_int_equal(sluice_tube_limit(c, "tenants", &lim, 0, NULL), 0);
	t[0] = it_take(c, "tenants", 0, 1); /* acme's, then beta's */
	t[1] = it_take(c, "tenants", 0, 1);
	assert_string_equal(t[0]->group, "acme");
	assert_string_equal(t[1]->group, "beta");

	snprintf(
	    url, sizeof(url), "http://%s/#tube=tenants&tab=ready", p.haddr);
	dom = wd_dom(sid, url,
	    "return !document.querySelector('#groupsbox').hidden && "
	    "document.querySelectorAll('#groups tbody tr[data-group]')"
	    ".length === 10 && "
	    "!document.querySelector('#tubelimits').hidden");
	if (strstr(dom,
	        "<tr data-group=\"acme\"><td class=\"text\">acme</td>"
	        "<td>29</td><td>1</td>") == NULL ||
	    strstr(dom,
	        "<tr data-group=\"beta\"><td class=\"text\">beta</td>"
	        "<td>4</td><td>1</td>") == NULL ||
	    strstr(dom,
	        "<tr data-group=\"\"><td class=\"text\">(none)</td>"
	        "<td>3</td><td>0</td>") == NULL)
		fail_msg("no groups in the tube's page:\n%s", dom);
	/* the largest first; 10 of 12 shown, and said */
	assert_true(strstr(dom, "data-group=\"acme\"") <
	    strstr(dom, "data-group=\"beta\""));
	assert_true(strstr(dom, "data-group=\"beta\"") <
	    strstr(dom, "data-group=\"\""));
	assert_non_null(strstr(dom,
	    "groups by backlog: the largest 10 of 12 "
	    "with ready or taken tasks"));
	assert_non_null(strstr(dom,
	    "limits: concurrency 2 (2 in use) \u00b7 "
	    "45 held back"));
	free(dom);
	wd_shot(dir_of(state), sid, "dashboard-groups");

	/* a tube without groups: none shown */
	snprintf(url, sizeof(url), "http://%s/#tube=plain&tab=ready", p.haddr);
	dom = wd_dom(sid, url,
	    "return document.querySelector('#detail-title').textContent === "
	    "'Tube plain' && document.querySelectorAll('#tasks tbody "
	    "tr[data-state=ready]').length === 2");
	assert_non_null(strstr(dom, "<div id=\"groupsbox\" hidden=\"\">"));
	free(dom);
	for (int i = 0; i < 2; i++)
		sluice_task_free(t[i]);
	sluice_close(c);
}

/* A task put with parents: the tube's row and page count it waiting (a
 * tab of its own), and a task's view names its parents (with how each
 * ended) and its children as links to their views, how many parents are
 * pending and the rule for a parent's failure. A waiting task found by
 * its key shows in the waiting tab (the table had no columns for that
 * state, and drew nothing). */
static void
test_the_page_shows_a_tasks_parents_and_children(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	struct sluice_put_opts o;
	struct sluice_ack_opts ao = { .result = "rows=500" };
	struct sluice_task *t;
	char sid[128], url[256], js[1024], cond[128], row[8192], *dom;
	uint64_t a, b, cc, d, bc[2];

	start_page_srv(state, &p, "deps", false);
	c = it_client(p.s);
	sluice_put_opts_init(&o);
	o.tube = "etl";
	a = it_put_o(c, &o, "extract");
	o.after = &a;
	o.nafter = 1;
	b = it_put_o(c, &o, "transform 1");
	cc = it_put_o(c, &o, "transform 2");
	bc[0] = b;
	bc[1] = cc;
	o.after = bc;
	o.nafter = 2;
	o.key = "join-1";
	o.on_parent_failure = SLUICE_ON_PARENT_IGNORE;
	d = it_put_o(c, &o, "load");
	assert_int_equal(it_state(c, b), SLUICE_WAITING);
	t = it_take(c, "etl", 0, 1);
	assert_int_equal(t->id, a);
	it_rc(c, sluice_ack_opts(c, t->id, t->lease, &ao, NULL), 0);
	sluice_task_free(t);
	assert_int_equal(it_state(c, b), SLUICE_READY);
	assert_int_equal(it_state(c, d), SLUICE_WAITING);

	page_session(state, sid, sizeof(sid));
	/* The overview: 2 ready, 1 waiting. */
	snprintf(url, sizeof(url), "http://%s/", p.haddr);
	dom = wd_dom(
	    sid, url, "return !!document.querySelector('tr[data-tube=etl]')");
	tube_row(dom, "etl", row, sizeof(row));
	assert_cell(row, "ready", 2);
	assert_cell(row, "waiting", 1);
	free(dom);

	/* The tube's page: its counts and the waiting tab with the task. */
	snprintf(url, sizeof(url), "http://%s/#tube=etl&tab=waiting", p.haddr);
	wd_go(sid, url);
	snprintf(js, sizeof(js),
	    "return !!document.querySelector('#tasks tbody "
	    "tr[data-id=\\\"%" PRIu64 "\\\"][data-state=waiting]') && "
	    "document.querySelector('button[data-tab=waiting]').textContent "
	    "=== 'waiting (1)' && "
	    "document.querySelector('#tubecounts').textContent"
	    ".includes(' \\\\u00b7 1 waiting \\\\u00b7 ')",
	    d);
	wd_until(sid, js);

	/* The join's view: waiting, both parents pending, links to them. */
	snprintf(js, sizeof(js), "#tasks a.task[data-id='%" PRIu64 "']", d);
	wd_click(sid, js);
	wd_field(sid, "state", "v === 'waiting'");
	snprintf(cond, sizeof(cond),
	    "v === '%" PRIu64 " (pending), %" PRIu64 " (pending)'", b, cc);
	wd_field(sid, "parents", cond);
	wd_field(sid, "parents pending", "v === '2 of 2'");
	wd_field(sid, "on parent failure", "v === 'ignore'");
	wd_shot(dir_of(state), sid, "dashboard-deps");
	/* A parent's link opens its view: its own parent done, its child. */
	snprintf(js, sizeof(js), "#taskinfo a.task[data-id='%" PRIu64 "']", b);
	wd_click(sid, js);
	snprintf(js, sizeof(js),
	    "return document.querySelector('#taskview').dataset.id === "
	    "'%" PRIu64 "'",
	    b);
	wd_until(sid, js);
	wd_field(sid, "state", "v === 'ready'");
	snprintf(cond, sizeof(cond), "v === '%" PRIu64 " (done)'", a);
	wd_field(sid, "parents", cond);
	wd_field(sid, "parents pending", "v === '0 of 1'");
	snprintf(cond, sizeof(cond), "v === '%" PRIu64 "'", d);
	wd_field(sid, "children", cond);
	/* and the child's link the child's. */
	snprintf(js, sizeof(js), "#taskinfo a.task[data-id='%" PRIu64 "']", d);
	wd_click(sid, js);
	snprintf(js, sizeof(js),
	    "return document.querySelector('#taskview').dataset.id === "
	    "'%" PRIu64 "' && document.querySelector('#taskview')"
	    ".dataset.state === 'waiting'",
	    d);
	wd_until(sid, js);

	/* Found by its key from the ready tab: the waiting tab, its row. */
	snprintf(url, sizeof(url), "http://%s/#tube=etl&tab=ready", p.haddr);
	wd_go(sid, url);
	wd_until(sid,
	    "return document.querySelectorAll('#tasks tbody "
	    "tr[data-state=ready]').length === 2");
	wd_type(sid, "#q", "join-1\\uE007"); /* Enter */
	snprintf(js, sizeof(js),
	    "return document.querySelector('button[data-tab=waiting]')"
	    ".getAttribute('aria-selected') === 'true' && "
	    "!!document.querySelector('#tasks tbody tr[data-id=\\\"%" PRIu64
	    "\\\"][data-state=waiting]') && "
	    "document.querySelector('#pageinfo').textContent === "
	    "'search result'",
	    d);
	wd_until(sid, js);
	sluice_close(c);
}

/* The text between `<tr data-batch="NAME"` and its `</tr>`; asserted. */
static char *
batch_row(const char *dom, const char *name, char *out, size_t cap)
{
	char pat[256];
	const char *p, *e;

	snprintf(pat, sizeof(pat), "<tr data-batch=\"%s\"", name);
	p = strstr(dom, pat);
	if (p == NULL)
		fail_msg("no row for batch %s in the page:\n%s", name, dom);
	e = strstr(p, "</tr>");
	assert_non_null(e);
	assert_true((size_t)(e - p) < cap);
	memcpy(out, p, (size_t)(e - p));
	out[e - p] = '\0';
	return out;
}

static void
assert_has(const char *text, const char *want)
{
	if (strstr(text, want) == NULL)
		fail_msg("wanted %s in %s", want, text);
}

/* A batch's progress on the overview: "import" (10 tasks: 6 acked, 1
 * buried, 1 taken, 2 ready; open) before "nightly" (ended, both its
 * callbacks put), each row with its counts, its bar and its callbacks;
 * a task's view links to its batch, shown first and marked. */
static void
test_the_page_shows_a_batchs_progress(void **state)
{
	struct page_srv p;
	struct sluice_client *c;
	struct sluice_batch_callback ok = { "ok", NULL, 0 };
	struct sluice_batch_callback done = { "done", NULL, 0 };
	struct sluice_put_opts o;
	struct sluice_task *t, *held;
	struct sluice_batch b;
	char sid[128], url[256], js[512], pat[128], row[8192], *dom;
	uint64_t ready_id = 0;

	start_page_srv(state, &p, "batches", false);
	c = it_client(p.s);
	sluice_put_opts_init(&o);
	o.tube = "nightly-in";
	o.batch = "nightly";
	it_rc(c, sluice_batch_set(c, "nightly", &ok, &done, 0, NULL), 0);
	it_put_o(c, &o, "n1");
	it_put_o(c, &o, "n2");
	it_rc(c, sluice_batch_set(c, "nightly", NULL, NULL, 1, NULL), 0);
	for (int i = 0; i < 2; i++) {
		t = it_take(c, "nightly-in", 1000, 1);
		it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
		sluice_task_free(t);
	}
	for (int i = 0; i < 200; i++) {
		it_rc(c, sluice_batch_show(c, "nightly", &b), 0);
		if (b.ended && b.success_id != 0 && b.complete_id != 0)
			break;
		it_sleep_ms(50);
	}
	assert_true(b.ended && b.success_id != 0 && b.complete_id != 0);

	it_sleep_ms(5); /* a later start */
	o.tube = "w";
	o.batch = "import";
	it_rc(c, sluice_batch_set(c, "import", &ok, NULL, 0, NULL), 0);
	for (int i = 0; i < 10; i++)
		ready_id = it_put_o(c, &o, "row");
	for (int i = 0; i < 6; i++) {
		t = it_take(c, "w", 1000, 1);
		it_rc(c, sluice_ack(c, t->id, t->lease, NULL, NULL), 0);
		sluice_task_free(t);
	}
	t = it_take(c, "w", 1000, 1);
	it_rc(c, sluice_fail_fatal(c, t->id, t->lease, "bad row", NULL), 0);
	sluice_task_free(t);
	held = it_take(c, "w", 1000, 1);

	page_session(state, sid, sizeof(sid));
	snprintf(url, sizeof(url), "http://%s/", p.haddr);
	dom = wd_dom(sid, url,
	    "return !!document.querySelector('tr[data-batch=import]') && "
	    "!!document.querySelector('tr[data-batch=nightly]')");
	/* open before ended */
	assert_true(strstr(dom, "<tr data-batch=\"import\"") <
	    strstr(dom, "<tr data-batch=\"nightly\""));
	batch_row(dom, "import", row, sizeof(row));
	assert_cell(row, "waiting", 0);
	assert_cell(row, "ready", 2);
	assert_cell(row, "taken", 1);
	assert_cell(row, "buried", 1);
	assert_cell(row, "acked", 6);
	assert_cell(row, "failed", 0);
	assert_has(row, "data-state=\"open\"");
	assert_has(row, "7 of 10 done (70 %)");
	assert_has(row, "class=\"p-ack\" style=\"width: 60%;\"");
	assert_has(row, "class=\"p-fail\" style=\"width: 10%;\"");
	assert_has(row, "class=\"p-take\" style=\"width: 10%;\"");
	assert_has(row, "<td class=\"text ended\">-</td>");
	assert_has(row,
	    "on success: <a href=\"#tube=ok\">ok</a> <span "
	    "class=\"none\">when it ends");
	assert_null(strstr(row, "on complete")); /* it has none */
	{ /* started: MM-DD hh:mm:ss (UTC, in the header) */
		const char *st = strstr(row, "<td class=\"text started\">");
		int mo, d, h, mi, se;
		char end;

		assert_non_null(st);
		assert_int_equal(
		    sscanf(st + strlen("<td class=\"text started\">"),
		        "%2d-%2d %2d:%2d:%2d%c", &mo, &d, &h, &mi, &se, &end),
		    6);
		assert_true(mo >= 1 && mo <= 12 && end == '<');
	}
	batch_row(dom, "nightly", row, sizeof(row));
	assert_cell(row, "acked", 2);
	assert_has(row, "data-state=\"ended\"");
	assert_has(row, "2 of 2 done (100 %)");
	assert_has(row, "<td class=\"text state\">ended</td>");
	assert_has(row, ", took ");
	snprintf(pat, sizeof(pat), "data-id=\"%" PRIu64 "\">task %" PRIu64,
	    b.success_id, b.success_id);
	assert_has(row, pat);
	snprintf(pat, sizeof(pat), "data-id=\"%" PRIu64 "\">task %" PRIu64,
	    b.complete_id, b.complete_id);
	assert_has(row, pat);
	free(dom);

	/* A task's view links to its batch: the overview, it first and
	 * marked. */
	snprintf(url, sizeof(url), "http://%s/#tube=w&tab=ready&task=%" PRIu64,
	    p.haddr, ready_id);
	wd_go(sid, url);
	wd_field(sid, "batch", "v === 'import'");
	wd_click(sid, "#taskinfo a.batch");
	wd_until(sid,
	    "return location.hash === '#batch=import' && "
	    "!document.getElementById('overview').hidden && "
	    "document.querySelector('#batches tbody tr')?.dataset.batch === "
	    "'import' && document.querySelector('#batches tbody "
	    "tr.sel')?.dataset.batch === 'import'");
	/* the progress moves with the next poll: the held task acked */
	it_rc(c, sluice_ack(c, held->id, held->lease, NULL, NULL), 0);
	sluice_task_free(held);
	snprintf(js, sizeof(js),
	    "return document.querySelector('tr[data-batch=import] "
	    "td.progress-cell')?.textContent === '8 of 10 done (80 %%)'");
	wd_until(sid, js);
	/* scrolled to it */
	wd_until(sid,
	    "const r = document.querySelector('#batches tr.sel')"
	    ".getBoundingClientRect(); return r.top >= 0 && "
	    "r.bottom <= window.innerHeight");
	wd_shot(dir_of(state), sid, "dashboard-batches");
	sluice_close(c);
}

int
main(void)
{
	int rc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_page_shows_the_tubes_and_a_tubes_buried_tasks,
		    it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_page_shows_a_tubes_groups, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_dashboard_shows_and_acts, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_overview_of_a_thousand_tubes, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_page_of_a_server_that_is_down, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_view_of_a_task, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_page_says_only_what_is_so, it_setup, it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_page_shows_a_tasks_parents_and_children, it_setup,
		    it_teardown),
		cmocka_unit_test_setup_teardown(
		    test_the_page_shows_a_batchs_progress, it_setup,
		    it_teardown),
	};

	if (!wd_found())
		return 77;
	rc = cmocka_run_group_tests_name("page", tests, NULL, NULL);
	if (shared_sid[0] != '\0')
		wd_end(shared_sid);
	wd_stop();
	return rc;
}
