/*
 * msgsample.h: one valid sample of every internal message, with values
 * that differ from the defaults so that a field lost on the way shows.
 * The unit tests (test_msg.c) check them; the fuzz seed generator
 * (tests/fuzz/gen_seeds.c) writes them out as seeds.
 */
#ifndef SB_MSGSAMPLE_H
#define SB_MSGSAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "../../proto/msg.h"

#define SAMPLE_GID "0123456789abcdef0123456789abcdef"

/* {"network": false, "fs_read": ["/x"]}, as policyd would send it. */
#define SAMPLE_EFFECTIVE                                                       \
	"\x82\xa7network\xc2\xa7"                                              \
	"fs_read\x91\xa2/x"
#define SAMPLE_EFFECTIVE_LEN (sizeof(SAMPLE_EFFECTIVE) - 1)

static inline struct conf_broker
sample_conf_broker(void)
{
	struct conf_broker c = {
	    .uid = 64290,
	    .gid = 64291,
	    .root = "/var/empty/skillbroker",
	    .max_frame = 65536,
	    .max_clients = 17,
	    .max_sessions = 33,
	    .session_idle_s = 600,
	    .workers = 40,
	    .max_timeout_ms = 120000,
	    .per_uid = {.clients = 4, .calls = 20, .sessions = 8, .workers = 5},
	    .clients = {.idle_s = 300,
	        .frame_s = 7,
	        .stall_s = 9,
	        .output_bytes = 65536,
	        .approval_s = 45},
	    .call_output = 4096,
	};

	return c;
}

static inline struct conf_policyd
sample_conf_policyd(void)
{
	static char *dirs[] = {"/usr/share/skillbroker/skills", "/srv/skills"};
	static char *prot[] = {"/var/lib/skillbroker", "/run/skillbroker"};
	static char *sys[] = {"/usr", "/bin"};
	struct conf_policyd c = {
	    .sys_paths = sys,
	    .nsys_paths = 2,
	    .protect = prot,
	    .nprotect = 2,
	    .uid = 64291,
	    .gid = 64292,
	    .skills_dirs = dirs,
	    .nskills_dirs = 2,
	    .policy_dir = "/etc/skillbroker/policy.d",
	    .net = NET_PROXY,
	    .limits =
	        {
	            .timeout_ms = 10000,
	            .max_timeout_ms = 300000,
	            .output_bytes = 65536,
	            .memory_mb = 256,
	            .pids = 64,
	            .fsize_mb = 32,
	            .nofile = 128,
	        },
	};

	return c;
}

static inline struct conf_auditd
sample_conf_auditd(void)
{
	struct conf_auditd c = {
	    .uid = 64292,
	    .gid = 64293,
	    .path = "/var/log/skillbroker/audit.jsonl",
	    .head = "/var/lib/skillbroker/audit.head",
	    .set =
	        {
	            .flush = AUDIT_FLUSH_DATA,
	            .freq = 20,
	            .max_log_file = 8 * 1024 * 1024,
	            .max_log_file_action = AUDIT_MAX_KEEP_LOGS,
	            .num_logs = 7,
	            .disk_full_action = AUDIT_FAIL_ROTATE,
	            .disk_error_action = AUDIT_FAIL_HALT,
	        },
	};

	return c;
}

static inline struct conf_netproxy
sample_conf_netproxy(void)
{
	struct conf_netproxy c = {
	    .uid = 64293,
	    .gid = 64294,
	    .root = "/var/lib/skillbroker/empty",
	    .set =
	        {
	            .hosts_file = "/etc/skillbroker/hosts",
	            .max_connections = 8,
	            .max_total_connections = 512,
	            .max_bytes = 1024 * 1024,
	            .connect_timeout_s = 7,
	            .header_timeout_s = 3,
	            .idle_s = 90,
	        },
	};

	return c;
}

static inline struct msg_net_open
sample_net_open(void)
{
	static char *allow[] = {
	    "api.example.com:443", "*.github.com:443", "[::1]:8080", NULL};
	struct msg_net_open o = {.grant_id = SAMPLE_GID,
	    .skill = "web-fetch",
	    .session = "s-1",
	    .uid = 1000,
	    .allow = allow,
	    .nallow = 3};

	return o;
}

static inline struct msg_authz_req
sample_authz_req(void)
{
	static char *args[] = {"--flag", "value with spaces", ""};
	static char *env[] = {"LANG=C.UTF-8", "TZ=UTC"};
	struct msg_authz_req r = {
	    .ref = 9,
	    .uid = 1000,
	    .gid = 1001,
	    .pid = 4242,
	    .skill = "hello",
	    .command = "greet",
	    .session = "s1",
	    .phase = "planning",
	    .args = args,
	    .nargs = 3,
	    .env = env,
	    .nenv = 2,
	    .timeout_ms = 5000,
	    .queued_ms = 250,
	    .approved = 1,
	};

	return r;
}

static inline struct msg_authz_ans
sample_authz_ans(void)
{
	static char *rules[] = {"allow:hello", "phase:planning"};
	struct msg_authz_ans a = {
	    .ref = 10,
	    .err = ERR_NONE,
	    .reason = "allowed by rule 2",
	    .rules = rules,
	    .nrules = 2,
	    .grant_id = SAMPLE_GID,
	    .command = "greet",
	    .timeout_ms = 30000,
	    .output_bytes = 65536,
	    .effective = (uint8_t *)SAMPLE_EFFECTIVE,
	    .effective_len = SAMPLE_EFFECTIVE_LEN,
	};

	return a;
}

static inline struct msg_skills_ans
sample_skills_ans(void)
{
	static char *cmds[] = {"greet", "wave"};
	static char *warns[] = {"SKILL.md:4: allowed-tools \"Task\": no "
	                        "mapping"};
	static struct msg_skill skills[] = {
	    {
	        .name = "hello",
	        .description = "Says hello, in UTF-8: h\xc3\xa9llo",
	        .valid = 1,
	        .error = "",
	        .commands = cmds,
	        .ncommands = 2,
	        .warnings = warns,
	        .nwarnings = 1,
	    },
	    {
	        .name = "broken",
	        .description = "",
	        .valid = 0,
	        .error = "SKILL.md: no name",
	    },
	};
	struct msg_skills_ans a = {
	    .ref = 11,
	    .skills = skills,
	    .nskills = 2,
	    .truncated = 1,
	};

	return a;
}

static inline struct msg_skill_info_req
sample_skill_info_req(void)
{
	struct msg_skill_info_req r = {
	    .ref = 18,
	    .uid = 1000,
	    .gid = 1001,
	    .skill = "notes",
	    .references = 1,
	    .max_bytes = 65280,
	};

	return r;
}

/* {"name": "notes", "metadata": {"tags": ["a", "b"]}}: a frontmatter. */
#define SAMPLE_FRONTMATTER                                                     \
	"\x82\xa4name\xa5notes\xa8metadata\x81\xa4tags\x92\xa1"                \
	"a\xa1"                                                                \
	"b"
#define SAMPLE_FRONTMATTER_LEN (sizeof(SAMPLE_FRONTMATTER) - 1)

static inline struct msg_skill_info_ans
sample_skill_info_ans(void)
{
	static struct msg_info_cmd cmds[] = {
	    {.name = "save",
	        .description = "Saves stdin as a note",
	        .allowed = 1},
	    {.name = "list", .description = "", .allowed = 0, .ask = 1},
	};
	static struct msg_info_ref refs[] = {
	    {
	        .path = "references/format.md",
	        .size = 13,
	        .sha256 = "e3b0c44298fc1c149afbf4c8996fb924"
	                  "27ae41e4649b934ca495991b7852b855",
	        .text = "h\xc3\xa9llo notes\n",
	        .omitted = INFO_OMIT_NONE,
	    },
	    {
	        .path = "references/logo.png",
	        .size = 70000,
	        .sha256 = "",
	        .text = "",
	        .omitted = INFO_OMIT_NOT_TEXT,
	    },
	};
	struct msg_skill_info_ans a = {
	    .ref = 19,
	    .err = ERR_NONE,
	    .message = "",
	    .name = "notes",
	    .description = "Saves notes",
	    .body = "# notes\n\nWrite one note per call.\n",
	    .frontmatter = (uint8_t *)SAMPLE_FRONTMATTER,
	    .frontmatter_len = SAMPLE_FRONTMATTER_LEN,
	    .permissions = (uint8_t *)SAMPLE_EFFECTIVE,
	    .permissions_len = SAMPLE_EFFECTIVE_LEN,
	    .commands = cmds,
	    .ncommands = 2,
	    .refs = refs,
	    .nrefs = 2,
	    .refs_truncated = 1,
	};

	return a;
}

static inline struct msg_reload_req
sample_reload_req(void)
{
	struct msg_reload_req r = {.ref = 12, .uid = 0, .gid = 4};

	return r;
}

static inline struct msg_reload_ans
sample_reload_ans(void)
{
	struct msg_reload_ans a = {
	    .ref = 13,
	    .err = ERR_BAD_REQUEST,
	    .message = "10-base.yaml:3: unknown key",
	};

	return a;
}

static inline struct msg_admins
sample_admins(void)
{
	static uint64_t uids[] = {0, 1000, 4294967295ULL};
	static uint64_t gids[] = {27};
	struct msg_admins a = {uids, gids, 3, 1};

	return a;
}

/* A GRANT: what policyd decides, none of the master's fields. */
static inline struct grant
sample_grant(void)
{
	static char *args[] = {"--flag", "value with spaces", ""};
	static char *env[] = {"LANG=C.UTF-8", "TZ=UTC"};
	static char *rd[] = {"/usr/share/dict"};
	static char *wr[] = {"/tmp/out", "/var/tmp/x"};
	static char *net[] = {"example.org:443"};
	static char *ex[] = {"/bin/sh"};
	static char *envn[] = {"LANG", "TZ"};
	static char *progs[] = {
	    "/usr/bin/dash", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"};
	struct grant g = {
	    .grant_id = SAMPLE_GID,
	    .skill = "hello",
	    .command = "greet",
	    .skill_dir = "/usr/share/skillbroker/skills/hello",
	    .entry = "scripts/hello.sh",
	    .args = args,
	    .nargs = 3,
	    .env = env,
	    .nenv = 2,
	    .perm = {rd, wr, net, ex, envn},
	    .nperm = {1, 2, 1, 1, 2},
	    .principal_uid = 1000,
	    .session = "s1",
	    .timeout_ms = 30000,
	    .output_bytes = 1 << 20,
	    .memory_mb = 256,
	    .pids = 64,
	    .fsize_mb = 16,
	    .nofile = 128,
	    .programs = progs,
	    .nprograms = 2,
	    .interpreter = "/usr/bin/dash",
	    .cwd = GRANT_CWD_SKILL,
	};

	return g;
}

/* A PREP: what a worker builds before its grant (two 1-insn filters). */
static inline struct msg_prep
sample_prep(void)
{
	static uint8_t ret_allow[8] = {0x06, 0, 0, 0, 0, 0, 0xff, 0x7f};
	static char *sys[] = {"/usr", "/lib", "/etc/ssl"};
	static char *libs[] = {"/usr/lib/*-linux-gnu*", "/usr/local/lib"};
	struct msg_prep p = {{ret_allow, ret_allow}, {8, 8},
	    "/run/skillbroker/root", 64, 1, sys, 3, libs, 2};

	return p;
}

/* A SPEC: the grant plus what only the master sets. */
static inline struct grant
sample_spec(void)
{
	struct grant g = sample_grant();

	g.worker_uid = 61000;
	g.worker_gid = 61001;
	g.as_mb = 512;
	g.net = NET_HOST;
	return g;
}

static inline struct msg_grant_ack
sample_grant_ack(void)
{
	struct msg_grant_ack a = {
	    .grant_id = SAMPLE_GID,
	    .err = ERR_OVERLOADED,
	    .message = "no worker uid free",
	};

	return a;
}

static inline struct msg_policy_event
sample_policy_event(void)
{
	struct msg_policy_event p = {
	    .action = POLICY_RELOADED,
	    .message = "3 files",
	    .files = 3,
	    .rules = 14,
	    .skills = 2,
	};

	return p;
}

static inline struct msg_run
sample_run(void)
{
	struct msg_run r = {.ref = UINT64_MAX, .grant_id = SAMPLE_GID};

	return r;
}

static inline struct msg_run_started
sample_run_started(void)
{
	struct msg_run_started r = {.ref = 14, .pid = 31337};

	return r;
}

static inline struct msg_run_exited
sample_run_exited(void)
{
	struct msg_run_exited r = {
	    .ref = 15,
	    .started = 1,
	    .exit_code = -1,
	    .signal = 9,
	    .limit = LIMIT_TIMEOUT,
	    .duration_ms = 30001,
	    .cpu_ms = 12,
	    .max_rss_kb = 2048,
	    .err = ERR_TIMEOUT,
	    .message = "killed after 30000 ms",
	};

	return r;
}

static inline struct msg_session_end
sample_session_end(void)
{
	struct msg_session_end s = {.uid = 1000, .session = "s1"};

	return s;
}

static inline struct msg_cancel
sample_cancel(void)
{
	struct msg_cancel c = {.grant_id = SAMPLE_GID};

	return c;
}

static inline struct msg_worker_fail
sample_worker_fail(void)
{
	struct msg_worker_fail f = {
	    .step = "landlock",
	    .message = "landlock_restrict_self: Operation not permitted",
	};

	return f;
}

static inline struct msg_worker_exit
sample_worker_exit(void)
{
	struct msg_worker_exit x = {.exit_code = 3, .signal = 0};

	return x;
}

static inline struct msg_peer_channel
sample_peer_channel(void)
{
	struct msg_peer_channel p = {.role = "auditd"};

	return p;
}

static inline struct msg_audit_ack
sample_audit_ack(void)
{
	struct msg_audit_ack a = {.ref = 16, .ok = 0, .message = "disk full"};

	return a;
}

static inline struct msg_files
sample_files(void)
{
	static struct written files[] = {
	    {
	        .path = "/work/out.txt",
	        .size = 12,
	        .sha256 = "e3b0c44298fc1c149afbf4c8996fb924"
	                  "27ae41e4649b934ca495991b7852b855",
	    },
	    {.path = "/data/big.bin", .size = 1ULL << 40, .sha256 = ""},
	};
	struct msg_files f = {
	    .files = files,
	    .nfiles = 2,
	    .found = 5,
	    .complete = 0,
	};

	return f;
}

static inline struct audit_call
sample_audit_call(void)
{
	struct audit_call c = {
	    .request_id = "req-1",
	    .uid = 1000,
	    .gid = 1001,
	    .pid = 4242,
	    .session = "s1",
	    .skill = "hello",
	    .command = "greet",
	    .phase = "execution",
	    .grant_id = SAMPLE_GID,
	};

	return c;
}

/* AUDIT through its builder: the call fields and a few of each kind. */
static inline void
sample_audit_enc(struct mp_enc *m)
{
	static char *words[] = {"a", "b"};
	struct audit_call c = sample_audit_call();

	msg_audit_begin(m, 17, "skill.run", "start", "success");
	msg_audit_call(m, &c);
	enc_kint(m, "process.exit_code", -1);
	enc_kbool(m, "skill.dry_run", 0);
	enc_kbin(m, "skill.stderr", "\xff\x00oops", 6);
	enc_kstrarr(m, "skill.args", words, 2);
	msg_audit_end(m);
}

/* The message types, by name: the seed files are named so. */
static const struct {
	enum msg_type type;
	const char *name;
} sample_types[] = {
    {MSG_READY, "ready"},
    {MSG_CONF_BROKER, "conf_broker"},
    {MSG_CONF_POLICYD, "conf_policyd"},
    {MSG_CONF_AUDITD, "conf_auditd"},
    {MSG_CONF_NETPROXY, "conf_netproxy"},
    {MSG_AUTHZ_REQ, "authz_req"},
    {MSG_AUTHZ_ANS, "authz_ans"},
    {MSG_SKILLS_REQ, "skills_req"},
    {MSG_SKILLS_ANS, "skills_ans"},
    {MSG_RELOAD_REQ, "reload_req"},
    {MSG_RELOAD_ANS, "reload_ans"},
    {MSG_ADMINS, "admins"},
    {MSG_SKILL_INFO_REQ, "skill_info_req"},
    {MSG_SKILL_INFO_ANS, "skill_info_ans"},
    {MSG_GRANT, "grant"},
    {MSG_GRANT_ACK, "grant_ack"},
    {MSG_POLICY_EVENT, "policy_event"},
    {MSG_RUN, "run"},
    {MSG_RUN_STARTED, "run_started"},
    {MSG_RUN_EXITED, "run_exited"},
    {MSG_PEER_CHANNEL, "peer_channel"},
    {MSG_SERVE, "serve"},
    {MSG_SESSION_END, "session_end"},
    {MSG_CANCEL, "cancel"},
    {MSG_AUDIT, "audit"},
    {MSG_AUDIT_ACK, "audit_ack"},
    {MSG_FILES, "files"},
    {MSG_SPEC, "spec"},
    {MSG_WORKER_READY, "worker_ready"},
    {MSG_WORKER_GO, "worker_go"},
    {MSG_WORKER_FAIL, "worker_fail"},
    {MSG_WORKER_EXIT, "worker_exit"},
    {MSG_PREP, "prep"},
    {MSG_WORKER_DONE, "worker_done"},
    {MSG_NET_OPEN, "net_open"},
    {MSG_NET_CLOSE, "net_close"},
};
#define SAMPLE_NTYPES (sizeof(sample_types) / sizeof(sample_types[0]))

/* Write the sample of type t into m (after enc_init); 0, or -1 if none. */
static inline int
sample_enc(struct mp_enc *m, enum msg_type t)
{
	union {
		struct conf_broker cb;
		struct conf_policyd cp;
		struct conf_auditd ca;
		struct conf_netproxy cn;
		struct msg_net_open no;
		struct msg_authz_req aq;
		struct msg_authz_ans aa;
		struct msg_skills_ans sa;
		struct msg_reload_req rq;
		struct msg_reload_ans ra;
		struct msg_admins ad;
		struct msg_skill_info_req iq;
		struct msg_skill_info_ans ia;
		struct grant g;
		struct msg_grant_ack ga;
		struct msg_policy_event pe;
		struct msg_run r;
		struct msg_run_started rs;
		struct msg_run_exited rx;
		struct msg_peer_channel pc;
		struct msg_session_end se;
		struct msg_cancel c;
		struct msg_worker_fail wf;
		struct msg_worker_exit wx;
		struct msg_audit_ack ak;
		struct msg_files f;
		struct msg_prep pr;
	} u;

	switch (t) {
	case MSG_READY:
		msg_ready_enc(m, "policyd");
		return 0;
	case MSG_CONF_BROKER:
		u.cb = sample_conf_broker();
		conf_broker_enc(m, &u.cb);
		return 0;
	case MSG_CONF_POLICYD:
		u.cp = sample_conf_policyd();
		conf_policyd_enc(m, &u.cp);
		return 0;
	case MSG_CONF_AUDITD:
		u.ca = sample_conf_auditd();
		conf_auditd_enc(m, &u.ca);
		return 0;
	case MSG_CONF_NETPROXY:
		u.cn = sample_conf_netproxy();
		conf_netproxy_enc(m, &u.cn);
		return 0;
	case MSG_NET_OPEN:
		u.no = sample_net_open();
		msg_net_open_enc(m, &u.no);
		return 0;
	case MSG_NET_CLOSE:
		msg_net_close_enc(m, SAMPLE_GID);
		return 0;
	case MSG_AUTHZ_REQ:
		u.aq = sample_authz_req();
		msg_authz_req_enc(m, &u.aq);
		return 0;
	case MSG_AUTHZ_ANS:
		u.aa = sample_authz_ans();
		msg_authz_ans_enc(m, &u.aa);
		return 0;
	case MSG_SKILLS_REQ:
		msg_skills_req_enc(m, 77);
		return 0;
	case MSG_SKILLS_ANS:
		u.sa = sample_skills_ans();
		msg_skills_ans_enc(m, &u.sa);
		return 0;
	case MSG_RELOAD_REQ:
		u.rq = sample_reload_req();
		msg_reload_req_enc(m, &u.rq);
		return 0;
	case MSG_RELOAD_ANS:
		u.ra = sample_reload_ans();
		msg_reload_ans_enc(m, &u.ra);
		return 0;
	case MSG_ADMINS:
		u.ad = sample_admins();
		msg_admins_enc(m, &u.ad);
		return 0;
	case MSG_SKILL_INFO_REQ:
		u.iq = sample_skill_info_req();
		msg_skill_info_req_enc(m, &u.iq);
		return 0;
	case MSG_SKILL_INFO_ANS:
		u.ia = sample_skill_info_ans();
		msg_skill_info_ans_enc(m, &u.ia);
		return 0;
	case MSG_GRANT:
		u.g = sample_grant();
		grant_enc(m, &u.g);
		return 0;
	case MSG_GRANT_ACK:
		u.ga = sample_grant_ack();
		msg_grant_ack_enc(m, &u.ga);
		return 0;
	case MSG_POLICY_EVENT:
		u.pe = sample_policy_event();
		msg_policy_event_enc(m, &u.pe);
		return 0;
	case MSG_RUN:
		u.r = sample_run();
		msg_run_enc(m, &u.r);
		return 0;
	case MSG_RUN_STARTED:
		u.rs = sample_run_started();
		msg_run_started_enc(m, &u.rs);
		return 0;
	case MSG_RUN_EXITED:
		u.rx = sample_run_exited();
		msg_run_exited_enc(m, &u.rx);
		return 0;
	case MSG_PEER_CHANNEL:
		u.pc = sample_peer_channel();
		msg_peer_channel_enc(m, &u.pc);
		return 0;
	case MSG_SERVE:
	case MSG_WORKER_READY:
	case MSG_WORKER_GO:
	case MSG_WORKER_DONE:
		msg_empty_enc(m, t);
		return 0;
	case MSG_SESSION_END:
		u.se = sample_session_end();
		msg_session_end_enc(m, &u.se);
		return 0;
	case MSG_CANCEL:
		u.c = sample_cancel();
		msg_cancel_enc(m, &u.c);
		return 0;
	case MSG_WORKER_FAIL:
		u.wf = sample_worker_fail();
		msg_worker_fail_enc(m, &u.wf);
		return 0;
	case MSG_WORKER_EXIT:
		u.wx = sample_worker_exit();
		msg_worker_exit_enc(m, &u.wx);
		return 0;
	case MSG_AUDIT:
		sample_audit_enc(m);
		return 0;
	case MSG_AUDIT_ACK:
		u.ak = sample_audit_ack();
		msg_audit_ack_enc(m, &u.ak);
		return 0;
	case MSG_FILES:
		u.f = sample_files();
		msg_files_enc(m, &u.f);
		return 0;
	case MSG_SPEC:
		u.g = sample_spec();
		spec_enc(m, &u.g);
		return 0;
	case MSG_PREP:
		u.pr = sample_prep();
		msg_prep_enc(m, &u.pr);
		return 0;
	}
	return -1;
}

#endif
