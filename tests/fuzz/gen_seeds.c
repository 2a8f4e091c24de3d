/*
 * gen_seeds.c: write the seeds of fuzz_msg, one file per message type
 * named after it, each the unit tests' sample (tests/unit/msgsample.h).
 * make fuzz-seeds runs it into tests/fuzz/seeds/fuzz_msg.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../unit/msgsample.h"

int
main(int argc, char **argv)
{
	char path[4096];
	struct mp_enc m;
	size_t i;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_seeds dir\n");
		return 2;
	}
	for (i = 0; i < SAMPLE_NTYPES; i++) {
		snprintf(
		    path, sizeof(path), "%s/%s", argv[1], sample_types[i].name);
		enc_init(&m);
		if (sample_enc(&m, sample_types[i].type) == -1 ||
		    (f = fopen(path, "wb")) == NULL ||
		    fwrite(m.sb.data, 1, m.sb.size, f) != m.sb.size ||
		    fclose(f) != 0) {
			perror(path);
			return 1;
		}
		enc_free(&m);
	}
	return 0;
}
