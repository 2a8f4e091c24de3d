/*
 * skillbroker-auditd: the sole writer of the audit log. It opens the log
 * and the head file as root, chroots into the log's directory, drops to
 * the privsep user, and appends records from the broker and the master.
 * Records that arrive together share one commit (group commit): one sync
 * as the flush setting says, a check that the file is still the log,
 * then an acknowledgement for each, so "acknowledged" means durable
 * under the configured flush mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/privdrop.h"
#include "../lib/usage.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/fds.h"
#include "../proto/msg.h"
#include "../proto/peer.h"
#include "auditd.h"

#define PENDING_MAX 4096
#define RESUME_MS 100 /* a suspended log is retried this often on a record */
#define PRIO_IO 1     /* channels, signals, the tick */
#define PRIO_COMMIT 2 /* after every channel has been read */
#define LAZY_MS 50    /* a record nobody waits for waits this long at most */
#define BATCH_RECORDS 256        /* lines written with one write() */
#define BATCH_BYTES (256 * 1024) /* a batch is cut once this big */
#define BATCH_CAP (BATCH_BYTES + AUDIT_LINE_MAX) /* so a line still fits */
#define TRIM_THRESHOLD (4 * 1024 * 1024) /* free heap kept for batches */

struct pending_ack {
	struct peer *to;
	uint64_t ref;
	int ok;
	char msg[ERROR_MSG_MAX];
	/* its line waits in the batch: the event, to write it again alone
	 * if the batch's write fails */
	int batched;
	struct mp_doc doc;
	const msgpack_object *ev;
};

/*
 * The lines of the records read in this pass of the loop, written with
 * one write() once the channels have been read (batch_flush): head is
 * the chain's head with them, len their bytes.
 */
static struct {
	char *buf; /* BATCH_CAP bytes, once made */
	size_t len, n;
	struct audit_head head;
} batch;

static struct alog alog;
static struct peer master_peer, broker_peer, netproxy_peer;
static struct pending_ack pending[PENDING_MAX];
static size_t npending, nwritten;
static struct event *commit_ev, *finish_ev, *lazy_ev, *flush_ev;
static struct event_base *base;

static int on_audit(struct peer *p, const struct mp_doc *d);
static int on_peer_channel(struct peer *p, const struct mp_doc *d);
static void on_dead(struct peer *p, const char *why);

static const struct peer_handler master_table[] = {
    {MSG_AUDIT, 0, on_audit},
    {MSG_PEER_CHANNEL, 0, on_peer_channel},
    {0, 0, NULL},
};
/* The broker and the egress proxy send records and nothing else. */
static const struct peer_handler client_table[] = {
    {MSG_AUDIT, 0, on_audit},
    {0, 0, NULL},
};

/*
 * Sync and check the batch; 0 when its records are durable. A moved or
 * read-only file still holds them; a deleted or changed one does not.
 */
static int
commit_batch(int *moved, struct error *e)
{
	enum alog_health h;

	*moved = 0;
	if (alog_sync(&alog, 0, e) == -1) {
		alog_failed(&alog, alog.fail, e->msg);
		return -1;
	}
	h = alog_health(&alog, e);
	if (h == ALOG_HEALTHY || h == ALOG_MOVED || h == ALOG_READONLY)
		alog_head_write(&alog);
	if (h == ALOG_MOVED)
		*moved = 1;
	else if (h != ALOG_HEALTHY)
		alog_failed(&alog, ALOG_FAIL_ERROR, e->msg);
	return h == ALOG_LOST || h == ALOG_BROKEN ? -1 : 0;
}

/* After acknowledging: follow a moved file, rotate at max_log_file. */
static void
commit_after(int moved)
{
	struct error e;

	if (moved &&
	    alog_reopen(&alog, "the log file was moved away", &e) == -1)
		alog_failed(&alog, alog.fail, e.msg);
	if (!alog.suspended && alog.set.max_log_file > 0 &&
	    (uint64_t)alog.size >= alog.set.max_log_file &&
	    alog_rotate(&alog, "max_log_file reached", &e) == -1)
		alog_failed(&alog, alog.fail, e.msg);
}

static void batch_flush(void);

/* One commit for every record written since the last one. */
static void
commit(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg UNUSED)
{
	struct msg_audit_ack a;
	struct mp_enc m;
	struct error e;
	int durable = 1, moved = 0;
	size_t i;

	batch_flush();        /* the lines read so far are in the file first */
	evtimer_del(lazy_ev); /* this commit takes the lazy records too */
	if (nwritten > 0 && commit_batch(&moved, &e) == -1)
		durable = 0;
	for (i = 0; i < npending; i++) {
		a.ref = pending[i].ref;
		a.ok = pending[i].ok && durable;
		a.message = a.ok ? "" : pending[i].ok ? e.msg : pending[i].msg;
		enc_init(&m);
		msg_audit_ack_enc(&m, &a);
		peer_send(pending[i].to, &m, NULL, 0);
		enc_free(&m);
	}
	npending = nwritten = 0;
	commit_after(moved);
}

/* The lazy records' time is up: commit them. */
static void
lazy_due(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg UNUSED)
{
	event_active(commit_ev, EV_TIMEOUT, 0);
}

/*
 * A record waits for a commit: one somebody waits for gets it once the
 * channels are read; a lazy one, where commits sync, rides on the next
 * such commit, or on its own within LAZY_MS, so a call's records before
 * its gating one cost it no sync of their own.
 */
static void
commit_soon(int lazy)
{
	struct timeval tv = {0, LAZY_MS * 1000};

	if (!lazy || (alog.set.flush != AUDIT_FLUSH_DATA &&
	                 alog.set.flush != AUDIT_FLUSH_SYNC)) {
		event_active(commit_ev, EV_TIMEOUT, 0);
		return;
	}
	if (!evtimer_pending(lazy_ev, NULL) && evtimer_add(lazy_ev, &tv) == -1)
		fatalx("lazy commit timer");
}

/* Write one event; a failed write gets the configured action, once. */
static int
write_event(const msgpack_object *ev, const char *provider, struct error *e)
{
	struct audit_stamp st = {0, NULL, provider, alog.host, NULL};
	char hash[HASH_HEX_LEN + 1], *line;
	size_t len;
	int tries, r = -1;

	for (tries = 0; tries < 2 && r == -1; tries++) {
		st.seq = alog.head.seq + 1;
		st.prev_hash = alog.head.hash;
		if ((line = audit_event_line(ev, &st, hash, &len, e)) == NULL)
			return -1;
		if (alog.suspended) {
			free(line);
			alog.refused++;
			return error_set(e, ERR_AUDIT_UNAVAILABLE,
			    "the audit "
			    "log is suspended: %s",
			    alog.why);
		}
		if ((r = alog_write(&alog, line, len, hash, e)) == 0)
			nwritten++;
		free(line);
		if (r == -1 && alog_failed(&alog, alog.fail, e->msg) == -1)
			return -1;
	}
	return r;
}

/*
 * Batch one record's line, stamped after the batch's last; -1 (e set)
 * as write_event when its line cannot be made. The doc is kept, to
 * write the record alone if the batch cannot be written; pa must be
 * pending (on_audit counts it) before the batch is flushed.
 */
static int
batch_add(const struct mp_doc *d, const msgpack_object *ev,
    const char *provider, struct pending_ack *pa, struct error *e)
{
	struct audit_stamp st = {0, NULL, provider, alog.host, NULL};
	char hash[HASH_HEX_LEN + 1], *line;
	size_t len;

	if (batch.n == 0)
		batch.head = alog.head;
	st.seq = batch.head.seq + 1;
	st.prev_hash = batch.head.hash;
	if ((line = audit_event_line(ev, &st, hash, &len, e)) == NULL)
		return -1;
	/* made once, not grown batch by batch (its copies and page faults
	 * were a tenth of auditd's time) */
	if (batch.buf == NULL)
		batch.buf = xmalloc(BATCH_CAP);
	if (BATCH_CAP - batch.len < len) /* on_audit cuts at BATCH_BYTES */
		fatalx(
		    "audit batch: %zu bytes and a line of %zu", batch.len, len);
	memcpy(batch.buf + batch.len, line, len);
	free(line);
	batch.len += len;
	batch.n++;
	batch.head.seq = st.seq;
	memcpy(batch.head.hash, hash, sizeof(hash));
	pa->batched = 1;
	mp_doc_take(&pa->doc, d);
	pa->ev = ev;
	return 0;
}

/*
 * Write the batch with one write(). If that fails, the file is as it
 * was, and each of its records is written again alone, with the
 * failure's action as for any record (write_event), so a failing batch
 * ends as the same records written one by one would have.
 */
static void
batch_flush(void)
{
	struct pending_ack *pa;
	struct error e;
	size_t i, n = batch.n;
	int ok, moved;

	if (n == 0)
		return;
	batch.n = 0;
	/* a renamed log gets its new file first; the batch's lines, made
	 * for the old head, are then made again one by one after its header */
	moved = !alog_at_path(&alog);
	if (moved &&
	    alog_reopen(&alog, "the log file was moved away", &e) == -1)
		alog_failed(&alog, alog.fail, e.msg);
	ok = !moved && alog_write_lines(&alog, batch.buf, batch.len, n,
	                   &batch.head, &e) == 0;
	batch.len = 0;
	if (ok)
		nwritten += n;
	else if (!moved)
		log_warnx(
		    "%s; its %zu records are written one by one", e.msg, n);
	for (i = 0; i < npending; i++) {
		pa = &pending[i];
		if (!pa->batched)
			continue;
		if (!ok && write_event(pa->ev, pa->to->name, &e) == -1) {
			pa->ok = 0;
			snprintf(pa->msg, sizeof(pa->msg), "%s", e.msg);
		}
		pa->batched = 0;
		pa->ev = NULL;
		mp_doc_free(&pa->doc);
	}
}

/* The channels have been read: what they brought goes to the file. */
static void
batch_due(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg UNUSED)
{
	batch_flush();
}

/*
 * A record came to a suspended log: try it again (at most every
 * RESUME_MS), so calls succeed soon after space returns, not at the
 * next tick; what is pending is committed (refused) first.
 */
static void
resume_on_record(void)
{
	static uint64_t tried;
	uint64_t now = now_mono_ms();

	if (!alog.suspended || now - tried < RESUME_MS)
		return;
	tried = now;
	if (npending > 0)
		commit(-1, 0, NULL);
	(void)alog_try_resume(&alog, "retry");
}

/* A record: malformed ones end the peer; others are acknowledged. */
static int
on_audit(struct peer *p, const struct mp_doc *d)
{
	const msgpack_object *ev = NULL;
	struct pending_ack *pa;
	struct error e;
	uint64_t ref;
	int ok, lazy;

	if (msg_audit_dec(d, &ref, &ev, &e) == -1) {
		log_warnx("%s: malformed audit message: %s", p->name, e.msg);
		return -1;
	}
	if (npending == PENDING_MAX)
		commit(-1, 0, NULL);
	resume_on_record();
	lazy = msg_audit_is_lazy(d); /* batch_add takes d */
	pa = &pending[npending];
	memset(pa, 0, sizeof(*pa));
	/* batched while the log takes records; else written (or refused)
	 * alone at once, as the failure actions say */
	if (!alog.suspended && alog.fd != -1)
		ok = batch_add(d, ev, p->name, pa, &e) == 0;
	else
		ok = write_event(ev, p->name, &e) == 0;
	if (!ok && e.type == ERR_BAD_REQUEST) {
		log_warnx("%s: malformed audit record: %s", p->name, e.msg);
		return -1;
	}
	npending++;
	pa->to = p;
	pa->ref = ref;
	pa->ok = ok;
	if (!ok)
		snprintf(pa->msg, sizeof(pa->msg), "%s", e.msg);
	if (batch.n >= BATCH_RECORDS || batch.len >= BATCH_BYTES)
		batch_flush();
	else if (batch.n > 0)
		event_active(flush_ev, EV_TIMEOUT, 0);
	commit_soon(lazy);
	return 0;
}

/*
 * A restarted egress proxy's channel: what is pending is acknowledged on
 * the old one first, so no acknowledgement reaches the wrong process.
 */
static int
on_peer_channel(struct peer *p, const struct mp_doc *d)
{
	static const char *const roles[] = {"netproxy", NULL};
	int fd, which;

	if ((fd = peer_take_channel(p, d, roles, &which)) == -1)
		return -1;
	commit(-1, 0, NULL);
	peer_flush(&netproxy_peer);
	peer_kill(&netproxy_peer, "replaced by a restarted process");
	peer_init(
	    &netproxy_peer, base, fd, "netproxy", client_table, on_dead, NULL);
	return 0;
}

/* auditd's own record, synced at once; a failure gets the action. */
static void
own_record(json_t *rec)
{
	struct error e;

	if (alog.suspended) {
		json_decref(rec);
		return;
	}
	if (alog_append_own(&alog, rec, &e) == -1 ||
	    alog_sync(&alog, 1, &e) == -1) {
		alog_failed(&alog, alog.fail, e.msg);
		return;
	}
	alog_head_write(&alog);
	alog_head_sync(&alog);
}

/* The settings in force, and what recovery found. */
static void
audit_started(void)
{
	const struct audit_settings *s = &alog.set;
	json_t *rec;

	rec = audit_own_record("audit.started", "start", "success",
	    alog.notes[0] ? alog.notes : NULL);
	json_set_dotted(
	    rec, "audit.flush", json_string(audit_flush_names[s->flush]));
	json_set_dotted(rec, "audit.freq", json_integer((json_int_t)s->freq));
	json_set_dotted(rec, "audit.max_log_file",
	    json_integer((json_int_t)s->max_log_file));
	json_set_dotted(rec, "audit.max_log_file_action",
	    json_string(audit_max_action_names[s->max_log_file_action]));
	json_set_dotted(
	    rec, "audit.num_logs", json_integer((json_int_t)s->num_logs));
	json_set_dotted(rec, "audit.disk_full_action",
	    json_string(audit_fail_action_names[s->disk_full_action]));
	json_set_dotted(rec, "audit.disk_error_action",
	    json_string(audit_fail_action_names[s->disk_error_action]));
	own_record(rec);
}

/* Before exiting: the acknowledgements queued go out. */
static void
peers_flush(void)
{
	peer_flush(&master_peer);
	peer_flush(&broker_peer);
	peer_flush(&netproxy_peer);
}

/* The last commit, the last record, the head synced: then exit. */
static void
finish(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg UNUSED)
{
	struct error e;

	commit(-1, 0, NULL);
	own_record(
	    audit_own_record("audit.stopped", "end", "success", "SIGTERM"));
	if (alog_sync(&alog, 1, &e) == -1)
		log_warnx("%s", e.msg);
	alog_head_sync(&alog);
	peers_flush();
	event_base_loopbreak(base);
}

/* A dead broker or proxy is logged; a dead master ends us after a commit. */
static void
on_dead(struct peer *p, const char *why)
{
	if (p != &master_peer) {
		log_warnx("%s channel: %s", p->name, why);
		return;
	}
	commit(-1, 0, NULL);
	alog_head_sync(&alog);
	peers_flush();
	fatalx("master channel: %s", why);
}

/* SIGTERM: read what the peers already sent, then finish. */
static void
on_term(evutil_socket_t sig UNUSED, short ev UNUSED, void *arg UNUSED)
{
	if (master_peer.alive)
		event_active(master_peer.rev, EV_READ, 0);
	if (broker_peer.alive)
		event_active(broker_peer.rev, EV_READ, 0);
	if (netproxy_peer.alive)
		event_active(netproxy_peer.rev, EV_READ, 0);
	event_active(finish_ev, EV_TIMEOUT, 0);
}

/*
 * SIGUSR1 (the master passes on its own): follow a rotated or replaced
 * file; resume if suspended. Reloading is policyd's, on SIGHUP.
 */
static void
on_reopen(evutil_socket_t sig UNUSED, short ev UNUSED, void *arg UNUSED)
{
	struct error e;

	commit(-1, 0, NULL);
	if (alog.suspended)
		alog_try_resume(&alog, "SIGUSR1");
	else if (alog_reopen(&alog, "reopened on SIGUSR1", &e) == -1)
		alog_failed(&alog, alog.fail, e.msg);
}

/* Every second: sync the head file, retry a suspended log. */
static void
on_tick(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg UNUSED)
{
	alog_head_sync(&alog);
	if (alog.suspended && npending == 0)
		alog_try_resume(&alog, "retry");
}

/* As root: the log's directory, the head file, the log; nothing parsed. */
static void
open_files(const struct conf_auditd *c)
{
	char *tmp1 = xstrdup(c->path), *tmp2 = xstrdup(c->path);
	int dirfd, headfd;
	struct stat st;
	struct error e;

	if ((dirfd = open(dirname(tmp1), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		fatal("open %s", tmp1);
	if ((headfd = open(c->head, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	         0600)) == -1 ||
	    fstat(headfd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 1 || st.st_uid != 0)
		fatalx("%s must be a regular file of root's with one link",
		    c->head);
	if (alog_open(&alog, dirfd, basename(tmp2), headfd, &c->set, &e) == -1)
		fatalx("%s", e.msg);
	if (alog.fd != -1 &&
	    fchown(alog.fd, (uid_t)c->uid, (gid_t)c->gid) == -1)
		fatal("fchown %s", c->path);
	free(tmp1);
	free(tmp2);
}

/* The loop: channels and signals first, the commit after them. */
static void
setup_events(void)
{
	struct timeval sec = {1, 0};
	struct event *tick;

	if ((base = event_base_new()) == NULL ||
	    event_base_priority_init(base, 3) == -1)
		fatalx("event_base_new");
	commit_ev = event_new(base, -1, 0, commit, NULL);
	finish_ev = event_new(base, -1, 0, finish, NULL);
	lazy_ev = evtimer_new(base, lazy_due, NULL);
	flush_ev = event_new(base, -1, 0, batch_due, NULL);
	tick = event_new(base, -1, EV_PERSIST, on_tick, NULL);
	if (commit_ev == NULL || finish_ev == NULL || tick == NULL ||
	    lazy_ev == NULL || flush_ev == NULL ||
	    event_priority_set(flush_ev, PRIO_COMMIT) == -1 ||
	    event_priority_set(commit_ev, PRIO_COMMIT) == -1 ||
	    event_priority_set(finish_ev, PRIO_COMMIT) == -1 ||
	    event_add(tick, &sec) == -1 ||
	    evsignal_add(evsignal_new(base, SIGTERM, on_term, NULL), NULL) ||
	    evsignal_add(evsignal_new(base, SIGUSR1, on_reopen, NULL), NULL))
		fatalx("event setup");
	peer_defer_writes(); /* a commit's acknowledgements go out together */
	peer_init(&master_peer, base, FD_MASTER, "master", master_table,
	    on_dead, NULL);
	peer_init(&broker_peer, base, FD_PEER_BROKER, "broker", client_table,
	    on_dead, NULL);
	peer_init(&netproxy_peer, base, FD_PEER_NETPROXY, "netproxy",
	    client_table, on_dead, NULL);
}

/*
 * Open as root, drop, then read the head and recover the log's end,
 * say READY, and serve until SIGTERM.
 */
int
main(int argc, char *argv[])
{
	struct conf_auditd conf;
	struct privdrop pd;
	struct mp_doc d;
	struct error e;
	int ch, fg = 0, verbose = 0;
	char *dir;

	usage_helper(argc, argv, "skillbroker-auditd", "[-dv]", FD_MASTER);
	while ((ch = getopt(argc, argv, "dv")) != -1)
		if (ch == 'd')
			fg = 1;
		else if (ch == 'v')
			verbose = 1;
		else {
			fputs("usage: skillbroker-auditd [-dv]\n", stderr);
			exit(2);
		}
	log_init("skillbroker-auditd", fg, verbose);
	if (msg_read(FD_MASTER, MSG_CONF_AUDITD, &d, &e) == -1 ||
	    conf_auditd_dec(&d, &conf, &e) == -1)
		fatalx("settings: %s", e.msg);
	mp_doc_free(&d);
	open_files(&conf);
	dir = xstrdup(conf.path);
	pd = (struct privdrop){(uid_t)conf.uid, (gid_t)conf.gid, dirname(dir)};
	if (privdrop(&pd, &e) == -1)
		fatalx("%s", e.msg);
	free(dir);
	conf_auditd_free(&conf);
	if (alog_start(&alog, &e) == -1) {
		if (alog.fail == ALOG_FAIL_NONE)
			fatalx("%s", e.msg);
		alog_failed(&alog, alog.fail, e.msg);
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGHUP, SIG_IGN); /* a reload is not ours */
	/* A batch holds its records' documents until its write: the heap
	 * is not given back between batches only to fault in again. */
	if (mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) != 1)
		log_debug("mallopt M_TRIM_THRESHOLD: not supported here");
	setup_events();
	audit_started();
	PEER_SEND(&master_peer, msg_ready_enc, "auditd");
	event_base_dispatch(base);
	return 0;
}
