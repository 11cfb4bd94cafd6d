/* fuzz_rec - the record decoder over arbitrary bytes. Records are decoded
 * one after another as a segment reader would; each valid one must
 * re-encode to the same checksummed bytes (decode is the inverse of
 * encode), and nothing may be read outside the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log/rec.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		struct rec_view v;
		struct buf b;

		if (rec_decode(data + off, size - off, &v) != REC_VALID)
			break;
		if (v.size > size - off || v.size % REC_ALIGN != 0 ||
		    v.body_len + REC_HDR_SIZE != v.hdr.len)
			abort();
		buf_init(&b);
		if (rec_encode(&b, &v.hdr, v.body, v.body_len) != 0 ||
		    b.len != v.size ||
		    memcmp(b.data, data + off, v.hdr.len) != 0)
			abort();
		buf_fini(&b);
		off += v.size;
	}
	return 0;
}
