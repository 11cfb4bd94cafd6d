/* replay - runs a fuzz target over every file of the corpus directories
 * named on the command line, so gcc builds exercise the decoders on the
 * checked-in corpus in `make test`. Exits 0 when every input ran (a crash
 * or a sanitizer report fails the test), 1 when a directory is missing. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/fsutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
main(int argc, char **argv)
{
	int ran = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *e;

		if (d == NULL) {
			fprintf(stderr, "replay: cannot open %s\n", argv[i]);
			return 1;
		}
		while ((e = readdir(d)) != NULL) {
			char path[4096];
			uint8_t *data;
			size_t len;

			if (e->d_name[0] == '.')
				continue;
			if (fs_join(path, sizeof(path), argv[i], e->d_name))
				continue;
			if (fs_read_all(path, &data, &len) != 0)
				continue;
			LLVMFuzzerTestOneInput(data, len);
			free(data);
			ran++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", ran);
	return 0;
}
