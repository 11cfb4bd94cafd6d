/* wd - chromedriver's WebDriver API for the dashboard's tests (wd.h). */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "it.h"
#include "it_http.h"
#include "wd.h"

char wd_chromium[1024];
static char driver[1024];
static pid_t driver_pid; /* leads its own process group */
static int driver_port;

const char *const wd_browser_args[] = { "--headless", "--no-sandbox",
	"--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
	"--disable-extensions" };
const size_t wd_nbrowser_args =
    sizeof(wd_browser_args) / sizeof(wd_browser_args[0]);

static int
hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	    : c >= 'a' && c <= 'f'  ? c - 'a' + 10
	    : c >= 'A' && c <= 'F'  ? c - 'A' + 10
	                            : 0;
}

bool
wd_found(void)
{
	if (!it_which("chromium", wd_chromium, sizeof(wd_chromium))) {
		printf("skipped: chromium is not installed (Debian's chromium "
		       "package; make test installs it)\n");
		return false;
	}
	if (!it_which("chromedriver", driver, sizeof(driver))) {
		printf("skipped: chromedriver is not installed (Debian's "
		       "chromium-driver package; make test installs it)\n");
		return false;
	}
	return true;
}

void
wd_stop(void)
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

void
wd_start(const char *dir)
{
	char port[64], log[600];
	int64_t deadline;
	char *body = NULL;

	if (driver_pid > 0)
		return;
	driver_port = it_free_port();
	snprintf(port, sizeof(port), "--port=%d", driver_port);
	snprintf(log, sizeof(log), "%s/chromedriver.log", dir);
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
	deadline = it_mono_ms() + WD_WAIT_MS;
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
int
wd(const char *method, const char *path, const char *json, char **out)
{
	return it_http(driver_port, method, path, NULL, json, out);
}

static void
session_caps(char *caps, size_t cap)
{
	size_t n;

	n = (size_t)snprintf(caps, cap,
	    "{\"capabilities\":{\"alwaysMatch\":{\"goog:chromeOptions\":{"
	    "\"binary\":\"%s\",\"args\":[",
	    wd_chromium);
	for (size_t i = 0; i < wd_nbrowser_args; i++)
		n += (size_t)snprintf(caps + n, cap - n, "%s\"%s\"",
		    i ? "," : "", wd_browser_args[i]);
	snprintf(caps + n, cap - n, ",\"--window-size=1200,900\"]}}}}");
}

/* The new session's answer: its id into sid, the window sized. */
static void
session_answered(int st, char *body, char *sid, size_t cap)
{
	char path[256];

	if (st != 200 || !it_json_str(body, "sessionId", sid, cap))
		fail_msg("new session: %d %s", st, body ? body : "");
	free(body);
	body = NULL;
	snprintf(path, sizeof(path), "/session/%s/window/rect", sid);
	wd("POST", path, "{\"width\":1200,\"height\":900}", &body);
	free(body);
}

/* A new browser session (1200 x 900); its id into sid. */
void
wd_session(char *sid, size_t cap)
{
	char caps[2048], *body = NULL;
	int st;

	session_caps(caps, sizeof(caps));
	st = wd("POST", "/session", caps, &body);
	session_answered(st, body, sid, cap);
}

static void *
session_run(void *arg)
{
	struct wd_pending *p = arg;

	p->status = wd("POST", "/session", p->caps, &p->body);
	return NULL;
}

void
wd_session_begin(struct wd_pending *p)
{
	memset(p, 0, sizeof(*p));
	session_caps(p->caps, sizeof(p->caps));
	assert_int_equal(pthread_create(&p->th, NULL, session_run, p), 0);
	p->started = true;
}

void
wd_session_join(struct wd_pending *p)
{
	if (!p->started)
		return;
	pthread_join(p->th, NULL);
	p->started = false;
}

void
wd_session_wait(struct wd_pending *p, char *sid, size_t cap)
{
	char *body;

	wd_session_join(p);
	body = p->body;
	p->body = NULL;
	session_answered(p->status, body, sid, cap);
}

void
wd_go(const char *sid, const char *url)
{
	char path[256], json[512], *body = NULL;

	snprintf(path, sizeof(path), "/session/%s/url", sid);
	snprintf(json, sizeof(json), "{\"url\":\"%s\"}", url);
	assert_int_equal(wd("POST", path, json, &body), 200);
	free(body);
}

/* `script` (JavaScript, no double quote) run in the page: its answer's
 * body (to free). */
char *
wd_js(const char *sid, const char *script)
{
	char path[256], json[4096], *body = NULL;
	int st;

	snprintf(path, sizeof(path), "/session/%s/execute/sync", sid);
	snprintf(json, sizeof(json), "{\"script\":\"%s\",\"args\":[]}", script);
	st = wd("POST", path, json, &body);
	if (st != 200)
		fail_msg("script %s: %d %s", script, st, body ? body : "");
	return body;
}

/* Waits (bounded) until `script` returns true in the page. */
void
wd_until(const char *sid, const char *script)
{
	int64_t deadline = it_mono_ms() + WD_WAIT_MS;
	char *body;

	for (;;) {
		body = wd_js(sid, script);
		if (strstr(body, "\"value\":true") != NULL)
			break;
		if (it_mono_ms() > deadline)
			fail_msg("never true: %s (last: %s)", script, body);
		free(body);
		it_sleep_ms(25); /* a click's answer is often a few ms off */
	}
	free(body);
}

/* The number `script` returns. */
double
wd_num(const char *sid, const char *script)
{
	char *body = wd_js(sid, script);
	double v = it_json_num(body, NULL, "value");

	free(body);
	return v;
}

/* The element `css` (no double quote), waited for (bounded): its id. */
void
wd_find(const char *sid, const char *css, char *eid, size_t cap)
{
	char path[256], json[512], *body = NULL;
	int64_t deadline = it_mono_ms() + WD_WAIT_MS;
	int st;

	snprintf(path, sizeof(path), "/session/%s/element", sid);
	snprintf(json, sizeof(json),
	    "{\"using\":\"css selector\",\"value\":\"%s\"}", css);
	for (;;) {
		st = wd("POST", path, json, &body);
		if (st == 200 &&
		    it_json_str(
		        body, "element-6066-11e4-a52e-4f735466cecf", eid, cap))
			break;
		if (it_mono_ms() > deadline)
			fail_msg(
			    "no element %s: %d %s", css, st, body ? body : "");
		free(body);
		body = NULL;
		it_sleep_ms(100);
	}
	free(body);
}

/* Clicks `css`, found again (bounded) when the page re-rendered it
 * between the find and the click: the poll rebuilds the task rows every
 * 2 s, and the element found is then stale. */
void
wd_click(const char *sid, const char *css)
{
	char path[600], eid[256], *body = NULL;
	int64_t deadline = it_mono_ms() + WD_WAIT_MS;
	int st;

	for (;;) {
		wd_find(sid, css, eid, sizeof(eid));
		snprintf(path, sizeof(path), "/session/%s/element/%s/click",
		    sid, eid);
		st = wd("POST", path, "{}", &body);
		if (st == 200)
			break;
		if (st != 404 || strstr(body, "stale element") == NULL ||
		    it_mono_ms() > deadline)
			fail_msg("click %s: %d %s", css, st, body ? body : "");
		free(body);
		body = NULL;
	}
	free(body);
}

void
wd_type(const char *sid, const char *css, const char *text)
{
	char path[600], json[512], eid[256], *body = NULL;

	wd_find(sid, css, eid, sizeof(eid));
	snprintf(path, sizeof(path), "/session/%s/element/%s/value", sid, eid);
	snprintf(json, sizeof(json), "{\"text\":\"%s\"}", text);
	assert_int_equal(wd("POST", path, json, &body), 200);
	free(body);
}

/* The confirmation dialog, waited for (bounded: a bulk action asks the
 * server for its count first), says `want`; accepted. */
void
wd_confirm(const char *sid, const char *want)
{
	char path[256], *body = NULL;
	int64_t deadline = it_mono_ms() + WD_WAIT_MS;

	snprintf(path, sizeof(path), "/session/%s/alert/text", sid);
	while (wd("GET", path, NULL, &body) != 200) {
		if (it_mono_ms() > deadline)
			fail_msg(
			    "no dialog saying %s: %s", want, body ? body : "");
		free(body);
		body = NULL;
		it_sleep_ms(50);
	}
	if (strstr(body, want) == NULL)
		fail_msg("the dialog says %s, not %s", body, want);
	free(body);
	snprintf(path, sizeof(path), "/session/%s/alert/accept", sid);
	assert_int_equal(wd("POST", path, "{}", &body), 200);
	free(body);
}

static int
b64val(int ch)
{
	static const char a[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789+/";
	const char *p = ch ? strchr(a, ch) : NULL;

	return p ? (int)(p - a) : -1;
}

/* A screenshot of the page as `name`.png: into $SLUICE_SCREENSHOTS when
 * set, else into `dir`. Asserted to be a PNG. */
void
wd_shot(const char *dir, const char *sid, const char *name)
{
	const char *env = getenv("SLUICE_SCREENSHOTS");
	char path[600], *body = NULL, *p;
	unsigned char *png;
	size_t n = 0;
	uint32_t acc = 0;
	int bits = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/session/%s/screenshot", sid);
	assert_int_equal(wd("GET", path, NULL, &body), 200);
	p = strstr(body, "\"value\":\"");
	assert_non_null(p);
	png = malloc(strlen(p));
	assert_non_null(png);
	for (p += 9; (v = b64val(*p)) >= 0; p++) {
		acc = acc << 6 | (uint32_t)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			png[n++] = (unsigned char)(acc >> bits);
		}
	}
	assert_true(n > 8 && memcmp(png, "\x89PNG", 4) == 0);
	snprintf(path, sizeof(path), "%s/%s.png",
	    env != NULL && env[0] != '\0' ? env : dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(png, 1, n, f), n);
	fclose(f);
	printf("screenshot %s.png: %zu bytes\n", name, n);
	free(png);
	free(body);
}

/* Closes the browser session `sid` (chromedriver goes on). */
void
wd_end(const char *sid)
{
	char path[256], *body = NULL;

	snprintf(path, sizeof(path), "/session/%s", sid);
	wd("DELETE", path, NULL, &body);
	free(body);
}

/* The JSON string that starts at `p` (after its opening quote), decoded
 * into a new string (to free): \\, \", \/, \n, \t, \r and \uXXXX (as
 * UTF-8; a surrogate pair's halves each as three bytes, which no check
 * here reads). */
static char *
json_string(const char *p)
{
	char *out = malloc(strlen(p) + 1), *o = out;

	assert_non_null(out);
	for (; *p != '\0' && *p != '"'; p++) {
		unsigned v = 0;

		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		switch (*++p) {
		case 'n':
			*o++ = '\n';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 'u':
			for (int i = 1; i <= 4; i++)
				v = v * 16 + (unsigned)hexval(p[i]);
			p += 4;
			if (v < 0x80) {
				*o++ = (char)v;
			} else if (v < 0x800) {
				*o++ = (char)(0xc0 | v >> 6);
				*o++ = (char)(0x80 | (v & 0x3f));
			} else {
				*o++ = (char)(0xe0 | v >> 12);
				*o++ = (char)(0x80 | (v >> 6 & 0x3f));
				*o++ = (char)(0x80 | (v & 0x3f));
			}
			break;
		default: /* \\ \" \/ */
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

char *
wd_dom(const char *sid, const char *url, const char *ready)
{
	char *body, *p, *dom;

	wd_go(sid, url);
	wd_until(sid, ready);
	body = wd_js(sid, "return document.documentElement.outerHTML");
	p = strstr(body, "\"value\":\"");
	assert_non_null(p);
	dom = json_string(p + 9);
	free(body);
	return dom;
}
