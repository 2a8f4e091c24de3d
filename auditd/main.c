/*
 * skillbroker-auditd: the sole writer of the audit log. It opens the log
 * as root, chroots into the log's directory, drops to the privsep user,
 * and appends records from the broker and the master. A record is
 * acknowledged only after fdatasync (group commit), so "acknowledged"
 * means durable.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/privdrop.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/msg.h"
#include "../proto/mpjson.h"
#include "../proto/peer.h"
#include "auditd.h"

#define FD_MASTER 3
#define FD_BROKER 4
#define PENDING_MAX 4096

struct pending_ack {
	struct peer *to;
	uint64_t ref;
	int ok;
	char msg[ERROR_MSG_MAX];
};

static struct audit_log alog;
static struct peer master_peer, broker_peer;
static struct pending_ack pending[PENDING_MAX];
static size_t npending;
static struct event *commit_ev;
static struct event_base *base;

static int on_audit(struct peer *p, const struct mp_doc *d);

static const struct peer_handler master_table[] = {
	{ MSG_AUDIT, 0, on_audit },
	{ 0, 0, NULL },
};
static const struct peer_handler broker_table[] = {
	{ MSG_AUDIT, 0, on_audit },
	{ 0, 0, NULL },
};

/* One fdatasync for every record written since the last commit. */
static void
commit(evutil_socket_t fd, short ev, void *arg)
{
	struct msg_audit_ack a;
	struct mp_enc m;
	struct error e;
	int synced;
	size_t i;

	(void)fd;
	(void)ev;
	(void)arg;
	synced = audit_log_sync(&alog, &e) == 0;
	if (!synced)
		log_warnx("%s", e.msg);
	for (i = 0; i < npending; i++) {
		a.ref = pending[i].ref;
		a.ok = pending[i].ok && synced;
		a.message = a.ok ? "" : (pending[i].ok ? e.msg : pending[i].msg);
		enc_init(&m);
		msg_audit_ack_enc(&m, &a);
		peer_send(pending[i].to, &m, NULL, 0);
		enc_free(&m);
	}
	npending = 0;
}

/* Values allowed in a record: scalars and arrays of scalars. */
static int
audit_value_ok(const msgpack_object *v)
{
	uint32_t i;

	switch (v->type) {
	case MSGPACK_OBJECT_ARRAY:
		for (i = 0; i < v->via.array.size; i++)
			if (v->via.array.ptr[i].type == MSGPACK_OBJECT_ARRAY ||
			    v->via.array.ptr[i].type == MSGPACK_OBJECT_MAP)
				return 0;
		return 1;
	case MSGPACK_OBJECT_MAP:
		return 0;
	default:
		return 1;
	}
}

/* Build the JSON record from the event map; NULL if it is malformed. */
static json_t *
audit_record(const msgpack_object *ev)
{
	json_t *rec = json_object();
	uint32_t i;
	char *key;

	for (i = 0; i < ev->via.map.size; i++) {
		const msgpack_object *k = &ev->via.map.ptr[i].key;
		const msgpack_object *v = &ev->via.map.ptr[i].val;
		key = xstrndup(k->via.str.ptr, k->via.str.size);
		if (!audit_value_ok(v) || key[0] == '.' || key[0] == '@' ||
		    strstr(key, "..") || key[strlen(key) - 1] == '.' ||
		    strcmp(key, "event.hash") == 0 ||
		    strncmp(key, "audit.", 6) == 0) {
			free(key);
			json_decref(rec);
			return NULL;
		}
		json_set_dotted(rec, key, mp_to_json(v));
		free(key);
	}
	return rec;
}

static int
on_audit(struct peer *p, const struct mp_doc *d)
{
	static const char *const keys[] = { "t", "ref", "event", NULL };
	const msgpack_object *ev = NULL;
	struct pending_ack *pa;
	struct error e;
	json_t *rec;
	uint64_t ref;

	if (mp_only_keys(d->root, keys, &e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &ref, &e) ||
	    mp_submap(d->root, "event", 1, &ev, &e) ||
	    (rec = audit_record(ev)) == NULL) {
		log_warnx("%s: malformed audit record", p->name);
		return -1;
	}
	if (npending == PENDING_MAX)
		commit(-1, 0, NULL);
	pa = &pending[npending++];
	pa->to = p;
	pa->ref = ref;
	pa->ok = audit_log_append(&alog, rec, p == &master_peer ? "master" :
	    "broker", &e) == 0;
	if (!pa->ok) {
		snprintf(pa->msg, sizeof(pa->msg), "%s", e.msg);
		log_warnx("%s", e.msg);
	}
	json_decref(rec);
	event_active(commit_ev, EV_TIMEOUT, 0);
	return 0;
}

static void
on_dead(struct peer *p, const char *why)
{
	if (p == &master_peer)
		fatalx("master channel: %s", why);
	log_warnx("broker channel: %s", why);
}

/* The first record of each run says the daemon started. */
static void
audit_started(void)
{
	struct error e;
	json_t *rec = json_object();

	json_set_dotted(rec, "event.action", json_string("daemon.started"));
	json_set_dotted(rec, "event.type", json_string("start"));
	json_set_dotted(rec, "event.outcome", json_string("success"));
	if (audit_log_append(&alog, rec, "auditd", &e) == -1 ||
	    audit_log_sync(&alog, &e) == -1)
		log_warnx("%s", e.msg);
	json_decref(rec);
}

static void
on_term(evutil_socket_t sig, short ev, void *arg)
{
	(void)sig;
	(void)ev;
	(void)arg;
	commit(-1, 0, NULL);
	event_base_loopexit(base, NULL);
}

int
main(int argc, char *argv[])
{
	char *path = NULL, *dir, *name, *tmp1, *tmp2;
	uint64_t uid = 0, gid = 0;
	int ch, fg = 0, verbose = 0, dirfd;
	struct error e;
	struct mp_enc m;

	while ((ch = getopt(argc, argv, "dg:l:u:v")) != -1) {
		switch (ch) {
		case 'd': fg = 1; break;
		case 'g': if (parse_uint(optarg, 1, 4294967294U, &gid)) return 2; break;
		case 'l': path = optarg; break;
		case 'u': if (parse_uint(optarg, 1, 4294967294U, &uid)) return 2; break;
		case 'v': verbose = 1; break;
		default: return 2;
		}
	}
	if (path == NULL || uid == 0 || gid == 0)
		return 2;
	log_init("skillbroker-auditd", fg, verbose);
	tmp1 = xstrdup(path);
	tmp2 = xstrdup(path);
	dir = dirname(tmp1);
	name = basename(tmp2);
	if ((dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		fatal("open %s", dir);
	if (audit_log_open(&alog, dirfd, name, &e) == -1)
		fatalx("%s", e.msg);
	if (fchown(alog.fd, (uid_t)uid, (gid_t)gid) == -1)
		fatal("fchown %s", path);
	close(dirfd);
	if (privdrop((uid_t)uid, (gid_t)gid, dir, &e) == -1)
		fatalx("%s", e.msg);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN);  /* reopen comes with rotation support */
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	commit_ev = event_new(base, -1, 0, commit, NULL);
	evsignal_add(evsignal_new(base, SIGTERM, on_term, NULL), NULL);
	peer_init(&master_peer, base, FD_MASTER, "master", master_table,
	    on_dead, NULL);
	peer_init(&broker_peer, base, FD_BROKER, "broker", broker_table,
	    on_dead, NULL);
	audit_started();
	enc_init(&m);
	msg_ready_enc(&m, "auditd");
	peer_send(&master_peer, &m, NULL, 0);
	enc_free(&m);
	event_base_dispatch(base);
	free(tmp1);
	free(tmp2);
	return 0;
}
