/*
 * msg_net.c: what the master tells the egress proxy of a call: NET_OPEN
 * (the grant's allow list, with the listener the worker made in its
 * network namespace) and NET_CLOSE.
 */
#include "msg.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/hostport.h"
#include "../lib/util.h"

void
msg_net_open_enc(struct mp_enc *m, const struct msg_net_open *o)
{
	msg_begin(m, MSG_NET_OPEN);
	enc_kstr(m, "grant_id", o->grant_id);
	enc_kstr(m, "skill", o->skill);
	enc_kstr(m, "session", o->session);
	enc_kuint(m, "uid", o->uid);
	enc_kstrarr(m, "allow", o->allow, o->nallow);
	msg_end(m);
}

int
msg_net_open_dec(
    const struct mp_doc *d, struct msg_net_open *o, struct error *e)
{
	static const char *const keys[] = {
	    "t", "grant_id", "skill", "session", "uid", "allow", NULL};
	const msgpack_object *r = d->root;
	char host[HOSTPORT_HOST_MAX], port[8];
	size_t i;

	memset(o, 0, sizeof(*o));
	if (mp_only_keys(r, keys, e) ||
	    mp_str(r, "grant_id", 1, GRANT_ID_LEN, &o->grant_id, e) ||
	    mp_str(r, "skill", 1, NAME_MAX_LEN, &o->skill, e) ||
	    mp_str(r, "session", 1, SESSION_MAX_LEN, &o->session, e) ||
	    mp_uint(r, "uid", 1, UINT32_MAX, &o->uid, e) ||
	    mp_strarr(
	        r, "allow", 1, PERM_ITEMS_MAX, 1024, &o->allow, &o->nallow, e))
		goto bad;
	if (!grant_id_valid(o->grant_id) ||
	    !ident_valid(o->skill, NAME_MAX_LEN) ||
	    !ident_valid(o->session, SESSION_MAX_LEN) || o->nallow == 0) {
		error_set(e, ERR_BAD_REQUEST, "malformed NET_OPEN");
		goto bad;
	}
	for (i = 0; i < o->nallow; i++)
		if (hostport_parse(o->allow[i], host, sizeof(host), port,
		        sizeof(port)) == -1) {
			error_set(e, ERR_BAD_REQUEST,
			    "NET_OPEN: malformed allow entry");
			goto bad;
		}
	return 0;
bad:
	msg_net_open_free(o);
	return -1;
}

void
msg_net_open_free(struct msg_net_open *o)
{
	free(o->grant_id);
	free(o->skill);
	free(o->session);
	strarr_free(o->allow, o->nallow);
	memset(o, 0, sizeof(*o));
}

void
msg_net_close_enc(struct mp_enc *m, const char *grant_id)
{
	msg_begin(m, MSG_NET_CLOSE);
	enc_kstr(m, "grant_id", grant_id);
	msg_end(m);
}

/* CANCEL's fields exactly: its decoder (the type is the dispatcher's). */
int
msg_net_close_dec(const struct mp_doc *d, struct msg_cancel *c, struct error *e)
{
	return msg_cancel_dec(d, c, e);
}
