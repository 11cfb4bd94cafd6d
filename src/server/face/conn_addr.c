/* conn_addr - a listener's address, HOST:PORT or unix:PATH, made into
 * a socket address (conn_addr.h). Names resolve with getaddrinfo (the
 * first answer); a Unix socket's address is built here, in one
 * allocation shaped as an addrinfo so that the listener binds either
 * the same way. */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/face/conn_addr.h"

static int
resolve_inet(const char *addr, struct addrinfo **res)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	struct addrinfo hints;
	size_t hl;

	if (colon == NULL || colon[1] == '\0')
		return -EINVAL;
	hl = (size_t)(colon - addr);
	if (hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, addr, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	if (strcmp(host, "*") == 0)
		host[0] = '\0';
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, res) != 0)
		return -EADDRNOTAVAIL;
	return 0;
}

/* unix:PATH: a Unix socket at PATH, in place of a stale one (a socket
 * file nothing listens on) but never of another file. */
static int
resolve_unix(const char *path, struct addrinfo **res)
{
	struct addrinfo *ai =
	    calloc(1, sizeof(*ai) + sizeof(struct sockaddr_un));
	struct sockaddr_un *sun;
	struct stat st;

	if (ai == NULL)
		return -ENOMEM;
	sun = (struct sockaddr_un *)(ai + 1);
	if (*path == '\0' || strlen(path) >= sizeof(sun->sun_path)) {
		free(ai);
		return -ENAMETOOLONG;
	}
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, strlen(path) + 1);
	ai->ai_family = AF_UNIX;
	ai->ai_addr = (struct sockaddr *)sun;
	ai->ai_addrlen = (socklen_t)sizeof(*sun);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 &&
		    errno == ECONNREFUSED)
			unlink(path);
		if (fd >= 0)
			close(fd);
	}
	*res = ai;
	return 0;
}

void
conn_addr_free(const char *addr, struct addrinfo *res)
{
	if (strncmp(addr, "unix:", 5) == 0)
		free(res);
	else
		freeaddrinfo(res);
}

int
conn_addr_resolve(const char *addr, struct addrinfo **res)
{
	if (strncmp(addr, "unix:", 5) == 0)
		return resolve_unix(addr + 5, res);
	return resolve_inet(addr, res);
}
