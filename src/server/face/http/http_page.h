/* http_page - the dashboard served at GET / (http_pages.c serves it):
 * dashboard.html, embedded at build time, with the admin's buttons shown
 * or not. */
#ifndef SLUICE_SERVER_FACE_HTTP_HTTP_PAGE_H
#define SLUICE_SERVER_FACE_HTTP_HTTP_PAGE_H

#include <stdbool.h>
#include <stddef.h>

/* The page, NUL-ended, in a new allocation the caller frees; `admin`
 * shows the kick and delete buttons. NULL when out of memory. */
char *http_page_build(bool admin, size_t *len);

#endif
