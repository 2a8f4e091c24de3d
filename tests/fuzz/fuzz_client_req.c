/* fuzz_client_req.c: libFuzzer harness for what a client can send. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../../proto/client.h"
#include "../../proto/frame.h"
#include "../../proto/mp.h"
#include "../../proto/mpjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A decoded request re-encodes to one that decodes the same. */
static void
check_round_trip(const struct client_req *r)
{
	struct client_req r2;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	size_t i;

	enc_init(&m);
	client_req_enc(&m, r);
	if (mp_decode(&d, (const uint8_t *)m.sb.data, m.sb.size, NULL, &e) !=
	        0 ||
	    client_req_dec(&d, &r2, &e) != 0)
		abort();
	if (r2.type != r->type || !client_id_eq(&r2.id, &r->id) ||
	    !client_id_eq(&r2.rid, &r->rid) || r2.nargs != r->nargs ||
	    r2.nenv != r->nenv || r2.stdin_len != r->stdin_len ||
	    r2.timeout_ms != r->timeout_ms || r2.protocol != r->protocol ||
	    r2.approvals != r->approvals || r2.references != r->references ||
	    r2.option != r->option || r2.offset != r->offset ||
	    r2.length != r->length)
		abort();
	if ((r->path != NULL) != (r2.path != NULL) ||
	    (r->path != NULL && strcmp(r->path, r2.path) != 0))
		abort();
	if ((r->approval_id != NULL) != (r2.approval_id != NULL) ||
	    (r->approval_id != NULL &&
	        strcmp(r->approval_id, r2.approval_id) != 0))
		abort();
	/* approve: a known option, and an approval id within its bound. */
	if (r->type == CREQ_APPROVE &&
	    (r->option == CLIENT_APPROVAL_NONE || r->approval_id == NULL ||
	        *r->approval_id == '\0' ||
	        strlen(r->approval_id) > CLIENT_APPROVAL_ID_MAX))
		abort();
	for (i = 0; i < r->nargs; i++)
		if (strcmp(r->args[i], r2.args[i]) != 0)
			abort();
	for (i = 0; i < r->nenv; i++)
		if (strcmp(r->env[i], r2.env[i]) != 0)
			abort();
	if (r->stdin_len > 0 &&
	    memcmp(r->stdin_data, r2.stdin_data, r->stdin_len) != 0)
		abort();
	client_req_free(&r2);
	mp_doc_free(&d);
	enc_free(&m);
}

/* p has a ".." component (an independent check of client_path_check). */
static int
has_dotdot(const char *p)
{
	const char *c;

	for (c = p; (c = strstr(c, "..")) != NULL; c++)
		if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
			return 1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct client_req req;
	struct mp_doc d;
	struct error e;
	enum frame_status st;
	size_t blen = 0;
	json_t *j;

	/* The framing layer sees the raw stream first. */
	st = frame_check(data, size, FRAME_MAX_DEFAULT, &blen, &e);
	if (st == FRAME_READY && (blen == 0 || blen > FRAME_MAX_DEFAULT ||
	                             blen > size - FRAME_HDR_LEN))
		abort();

	memset(&e, 0, sizeof(e));
	if (mp_decode(&d, data, size, NULL, &e) != 0) {
		if (e.type != ERR_BAD_REQUEST || d.live || d.root != NULL)
			abort();
		return 0;
	}
	if (d.root == NULL || d.root->type != MSGPACK_OBJECT_MAP)
		abort();
	/* skillctl --json and the audit log render documents as JSON. */
	j = mp_to_json(d.root);
	json_decref(j);
	memset(&e, 0, sizeof(e));
	if (client_req_dec(&d, &req, &e) == 0) {
		/* What SKILL_INFO_REQ requires, or policyd would end the
		 * broker's channel. */
		if (req.type == CREQ_SKILL_INFO &&
		    (req.skill == NULL || *req.skill == '\0' ||
		        strlen(req.skill) > 64))
			abort();
		/* A file request's path stays inside the session: what the
		 * files skill is run with. */
		if (creq_is_file(req.type) && req.type != CREQ_LIST_FILES &&
		    (req.path == NULL ||
		        client_path_check(req.path, strlen(req.path), &e) !=
		            0 ||
		        req.path[0] == '/' || has_dotdot(req.path)))
			abort();
		check_round_trip(&req);
	} else if (e.type != ERR_BAD_REQUEST && e.type != ERR_UNSUPPORTED)
		abort();
	client_req_free(&req);
	mp_doc_free(&d);
	return 0;
}
