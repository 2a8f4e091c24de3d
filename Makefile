# skillbroker build. `make` builds everything; `make check` installs the
# Debian dependencies if needed, builds, and runs every test layer.

# The release: what every program's -V and the broker's hello say.
VERSION = 0.2.0

PREFIX ?= /usr/local
DESTDIR ?=
SBINDIR = $(PREFIX)/sbin
BINDIR = $(PREFIX)/bin
LIBEXECDIR = $(PREFIX)/libexec/skillbroker
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc/skillbroker,$(PREFIX)/etc/skillbroker)
# The shipped skills hold programs (skills/files): arch-dependent, so
# under lib, not share.
SKILLSDIR ?= $(PREFIX)/lib/skillbroker/skills
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
LOCALSTATEDIR ?= /var
RUNDIR ?= /run/skillbroker

CC ?= cc
PKGS = libevent msgpack yaml-0.1 libcap libseccomp jansson libcrypto libidn2 zlib
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# Sanitizer builds live in their own tree: make SAN=1 check
ifeq ($(SAN),1)
OUT ?= build/san
SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
OUT ?= build
SANFLAGS =
endif

# A program started for every call (the worker, the files skill) is
# linked statically: the dynamic loader's relocations of libcrypto and
# libc cost a worker 5 ms of CPU a call (docs/performance.md). A static
# program takes a fix of those libraries only when rebuilt; STATIC=0
# links them as the rest.
STATIC ?= 1
STATIC_STAMP = $(OUT)/static.stamp
ifeq ($(STATIC),1)
CALL_LDFLAGS = -static-pie
else
CALL_LDFLAGS = -pie
endif
# The sanitizers need their shared runtime (the files skill has none).
WORKER_LDFLAGS = $(if $(SANFLAGS),-pie,$(CALL_LDFLAGS))
# A static link takes what each library needs in turn (pkg-config --static).
pc_libs = $(shell pkg-config --libs $(if $(filter -static-pie,$(1)),--static) $(2) 2>/dev/null)
WORKER_LIBS := $(call pc_libs,$(WORKER_LDFLAGS),msgpack libcap libcrypto)
FILES_SKILL_LIBS := $(call pc_libs,$(CALL_LDFLAGS),msgpack libcrypto)
BIN = $(if $(filter build,$(OUT)),bin,$(OUT)/bin)

WARN = -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
	-Wmissing-prototypes -Wformat=2 -Wno-format-nonliteral
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) -fstack-protector-strong \
	-D_FORTIFY_SOURCE=2 -fPIE -MMD -MP -DLIBEXECDIR='"$(LIBEXECDIR)"' \
	-DSB_VERSION='"$(VERSION)"' $(PKG_CFLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SANFLAGS) -pie -Wl,-z,relro,-z,now

COMMON_SRC = $(wildcard lib/*.c) $(wildcard proto/*.c)
MASTER_SRC = $(wildcard master/*.c)
BROKER_SRC = $(wildcard broker/*.c)
POLICYD_SRC = $(wildcard policyd/*.c)
AUDITD_SRC = $(wildcard auditd/*.c)
WORKER_SRC = $(wildcard worker/*.c)
NETPROXY_SRC = $(wildcard netproxy/*.c)
CLI_SRC = $(wildcard cli/*.c)
# The client library (include/skillbroker.h) and what it speaks the
# protocol with; skillctl and skillbroker-mcp are built on it.
LIBSB_SRC = $(wildcard libskillbroker/*.c)
LIBSB_DEPS_SRC = proto/frame.c proto/mp.c proto/mpjson.c proto/client.c \
	lib/error.c lib/log.c lib/util.c lib/xmalloc.c
LIBSB_MAJOR = 1
LIBSB_VERSION = $(LIBSB_MAJOR).0.0
LIBSB_PKGS = msgpack libcrypto jansson
MCP_SRC = $(wildcard mcp/*.c)
# skillctl policy check lints with policyd's own parsers.
POLICY_LINT_SRC = policyd/policyd_policy.c policyd/policyd_perm.c \
	policyd/policyd_match.c policyd/policyd_skill.c \
	policyd/policyd_spec.c policyd/policyd_tools.c policyd/policyd_cmds.c \
	policyd/policyd_exec.c
# skillctl audit verify checks lines with auditd's own format code.
AUDIT_VERIFY_SRC = auditd/auditd_chain.c

obj = $(patsubst %.c,$(OUT)/obj/%.o,$(1))
pic = $(patsubst %.c,$(OUT)/pic/%.o,$(1))

PROGS = $(BIN)/skillbrokerd $(BIN)/skillbroker-broker $(BIN)/skillbroker-policyd \
	$(BIN)/skillbroker-auditd $(BIN)/skillbroker-worker $(BIN)/skillbroker-netproxy \
	$(BIN)/skillctl $(BIN)/skillbroker-mcp
LIBSB = $(OUT)/lib/libskillbroker.so.$(LIBSB_VERSION) $(OUT)/lib/libskillbroker.a

UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNIT_BINS = $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRC))
# Role code linked into unit tests (everything but each role's main file).
ROLE_LIB_SRC = $(filter-out %/main.c,$(POLICYD_SRC) $(AUDITD_SRC) $(BROKER_SRC) \
	$(WORKER_SRC) $(MASTER_SRC) $(NETPROXY_SRC) $(CLI_SRC) $(LIBSB_SRC) $(MCP_SRC))

.PHONY: all check unit integration run bench install install-users uninstall clean deps format format-check lint fuzz \
	fuzz-seeds fuzz-corpus

# The session files skill (skills/files): one program under four names,
# built without sanitizers in every tree (it runs in the sandbox, under
# the grant's memory limit).
FILES_SKILL_DIR = skills/files/bin
FILES_SKILL = $(addprefix $(FILES_SKILL_DIR)/,put get list delete)
FILES_SKILL_SRC = skills/files/src/files.c lib/error.c lib/log.c lib/util.c \
	lib/xmalloc.c proto/client.c proto/mp.c

all: $(PROGS) $(FILES_SKILL) $(LIBSB)

$(FILES_SKILL_DIR)/put: $(FILES_SKILL_SRC) $(STATIC_STAMP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE $(WARN) $(CFLAGS) -fstack-protector-strong \
		-D_FORTIFY_SOURCE=2 -fPIE $(PKG_CFLAGS) $(LDFLAGS) $(CALL_LDFLAGS) \
		-Wl,-z,relro,-z,now -o $@ $(FILES_SKILL_SRC) $(FILES_SKILL_LIBS)
$(FILES_SKILL_DIR)/get $(FILES_SKILL_DIR)/list $(FILES_SKILL_DIR)/delete: $(FILES_SKILL_DIR)/put
	$(Q)ln -f $< $@


# Quiet by default; make V=1 shows the full commands.
ifeq ($(V),1)
Q =
else
Q = @
endif

$(OUT)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The master has LIBEXECDIR compiled in: rebuild it when PREFIX changes.
LIBEXEC_STAMP = $(OUT)/libexecdir.stamp
$(LIBEXEC_STAMP): FORCE
	@mkdir -p $(OUT)
	@[ "$$(cat $@ 2>/dev/null)" = "$(LIBEXECDIR)" ] || echo "$(LIBEXECDIR)" > $@
$(OUT)/obj/master/main.o: $(LIBEXEC_STAMP)
# Relink what STATIC links when it changes.
$(STATIC_STAMP): FORCE
	@mkdir -p $(OUT)
	@[ "$$(cat $@ 2>/dev/null)" = "$(STATIC)" ] || echo "$(STATIC)" > $@
$(BIN)/skillbroker-worker: $(STATIC_STAMP)
.PHONY: FORCE
FORCE:

# SB_VERSION is used in .c files only (never a header), so this list is
# every object to rebuild when VERSION changes.
VERSION_STAMP = $(OUT)/version.stamp
$(VERSION_STAMP): FORCE
	@mkdir -p $(OUT)
	@[ "$$(cat $@ 2>/dev/null)" = "$(VERSION)" ] || echo "$(VERSION)" > $@
VERSION_SRC := $(shell grep -l SB_VERSION $(wildcard */*.c) 2>/dev/null)
$(call obj,$(VERSION_SRC)) $(call pic,$(VERSION_SRC)): $(VERSION_STAMP)

COMMON_AR = $(OUT)/libcommon.a
$(COMMON_AR): $(call obj,$(COMMON_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^
$(BIN)/skillbrokerd: $(call obj,$(MASTER_SRC)) $(COMMON_AR)
$(BIN)/skillbroker-broker: $(call obj,$(BROKER_SRC)) $(COMMON_AR)
$(BIN)/skillbroker-policyd: $(call obj,$(POLICYD_SRC)) $(COMMON_AR)
$(BIN)/skillbroker-auditd: $(call obj,$(AUDITD_SRC)) $(COMMON_AR)
$(BIN)/skillbroker-worker: $(call obj,$(WORKER_SRC)) $(COMMON_AR)
$(BIN)/skillbroker-netproxy: $(call obj,$(NETPROXY_SRC)) $(COMMON_AR)
$(BIN)/skillctl: $(call obj,$(CLI_SRC) $(LIBSB_SRC) $(POLICY_LINT_SRC) $(AUDIT_VERIFY_SRC)) $(COMMON_AR)
$(BIN)/skillbroker-mcp: $(call obj,$(MCP_SRC) $(LIBSB_SRC)) $(COMMON_AR)

# The library's objects are position-independent, and everything but the
# SB_API functions of include/skillbroker.h stays inside it: the shared
# object exports by its version script, the archive is one object whose
# hidden symbols are made local.
LIBSB_OBJS = $(call pic,$(LIBSB_SRC) $(LIBSB_DEPS_SRC))
LIBSB_LIBS := $(shell pkg-config --libs $(LIBSB_PKGS) 2>/dev/null)
$(OUT)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (pic)")
	$(Q)$(CC) $(ALL_CFLAGS) -DSB_LIBRARY -fPIC -fvisibility=hidden -c $< -o $@
$(OUT)/lib/libskillbroker.so.$(LIBSB_VERSION): $(LIBSB_OBJS) libskillbroker/libskillbroker.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(LDFLAGS) $(SANFLAGS) -Wl,-z,relro,-z,now,-z,defs \
		-Wl,-soname,libskillbroker.so.$(LIBSB_MAJOR) \
		-Wl,--version-script=libskillbroker/libskillbroker.map \
		-o $@ $(LIBSB_OBJS) $(LIBSB_LIBS)
	$(Q)ln -sf libskillbroker.so.$(LIBSB_VERSION) $(OUT)/lib/libskillbroker.so.$(LIBSB_MAJOR)
	$(Q)ln -sf libskillbroker.so.$(LIBSB_MAJOR) $(OUT)/lib/libskillbroker.so
$(OUT)/lib/libskillbroker.a: $(LIBSB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)ld -r -o $(OUT)/lib/libskillbroker.o $(LIBSB_OBJS) && \
		objcopy --localize-hidden $(OUT)/lib/libskillbroker.o && \
		rm -f $@ && ar rcs $@ $(OUT)/lib/libskillbroker.o

# The library's test program and the documented example (docs/libskillbroker.md)
# see only the public header and link the shared library, as a user's
# program does.
LIBSB_USER_FLAGS = -Iinclude -L$(OUT)/lib -Wl,-rpath,$(CURDIR)/$(OUT)/lib
$(OUT)/tests/clients/client_test: tests/clients/client_test.c include/skillbroker.h $(LIBSB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(LIBSB_USER_FLAGS) -o $@ $< -lskillbroker
$(OUT)/tests/clients/example: examples/sb-invoke.c include/skillbroker.h $(LIBSB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(LIBSB_USER_FLAGS) -o $@ $< -lskillbroker

$(filter-out $(BIN)/skillbroker-worker,$(PROGS)):
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -Wl,--as-needed -o $@ $^ $(PKG_LIBS)
$(BIN)/skillbroker-worker:
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) $(SANFLAGS) $(WORKER_LDFLAGS) -Wl,-z,relro,-z,now \
		-o $@ $(filter-out $(STATIC_STAMP),$^) $(WORKER_LIBS)

# Unit tests link role code from an archive, so each pulls in only the
# files it tests (a test of master code defines the master's globals).
ROLE_AR = $(OUT)/librole.a
$(ROLE_AR): $(call obj,$(ROLE_LIB_SRC))
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(OUT)/tests/%: tests/unit/%.c $(ROLE_AR) $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(ROLE_AR) \
		$(call obj,$(COMMON_SRC)) $(PKG_LIBS) -lcmocka

# Test tools (tests/tools/*.c) link the common code only, without cmocka.
$(OUT)/tests/tools/%: tests/tools/%.c $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
		$(call obj,$(COMMON_SRC)) $(PKG_LIBS)

deps:
	@sh scripts/install-deps

check: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@$(MAKE) --no-print-directory unit integration

# Each suite prints one line (its counts and time); its whole output is
# $(CHECK_LOG)/NAME.log, and a failing suite shows what failed first
# (tests/run-suite.sh). make V=1 check shows everything as it comes.
CHECK_LOG = $(OUT)/check
SUITE = SB_CHECK_VERBOSE=$(V) sh tests/run-suite.sh $(CHECK_LOG)

# The layering check reads the roles' objects (tests/check-layers.sh).
LAYER_OBJS = $(call obj,$(BROKER_SRC) $(MASTER_SRC) $(AUDITD_SRC) $(POLICYD_SRC) $(WORKER_SRC) $(NETPROXY_SRC))

# The unit tests, the layering, whether docs/architecture.md names
# every message type of proto/msg.h, and the manual pages' mdoc.
unit: $(UNIT_BINS) $(LAYER_OBJS)
	@$(SUITE) unit sh tests/run-unit.sh $(UNIT_BINS)
	@$(SUITE) man sh -c 'mandoc -Tlint -W warning man/*.[1-9] && \
		echo "man: $$(ls man/*.[1-9] | wc -l) pages lint clean"'
	@$(SUITE) layers sh tests/check-layers.sh $(OUT)/obj
	@$(SUITE) check-msg-doc sh tests/check-msg-doc.sh

# LeakSanitizer cannot work in roles that chroot and drop uid (no /proc);
# every other sanitizer check stays on, and errors are fatal.
ifeq ($(SAN),1)
INTEG_ENV = ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
endif

integration: all $(OUT)/tests/tools/rawclient $(OUT)/tests/tools/dosclient \
		$(OUT)/tests/clients/client_test $(OUT)/tests/clients/example
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) SB_TOOLS=$(CURDIR)/$(OUT)/tests/tools $(SUITE) integration sh tests/integration/run.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) $(SUITE) policy bash tests/integration/policy.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) $(SUITE) audit bash tests/integration/audit.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) $(SUITE) files bash tests/integration/files.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) $(SUITE) published bash tests/integration/published.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) $(SUITE) skillcli bash tests/integration/skillcli.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) SB_CLIENT_BIN=$(CURDIR)/$(OUT)/tests/clients $(SUITE) clients bash tests/clients/run.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) $(SUITE) escape bash tests/escape/run.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) $(SUITE) network bash tests/escape/network.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) SB_TOOLS=$(CURDIR)/$(OUT)/tests/tools $(SUITE) dos bash tests/dos/run.sh
	@$(INTEG_ENV) SB_BIN=$(CURDIR)/$(BIN) $(SUITE) faults bash tests/faults/run.sh

run: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/run-dev

# The bench installs its own tools (bubblewrap) beside the build's.
bench:
	@sh scripts/install-deps bench
	@$(MAKE) --no-print-directory all $(OUT)/bench/audit_bench $(OUT)/bench/sb_bench
	@SB_BIN=$(CURDIR)/$(BIN) SB_BENCH=$(CURDIR)/$(OUT)/bench sh bench/run.sh

# sb_bench, the load generator, sees only the public header and links
# the shared library, as a user's program does.
SB_BENCH_SRC = bench/sb_bench.c bench/bench_client.c bench/bench_launch.c \
	bench/bench_stats.c
$(OUT)/bench/sb_bench: $(SB_BENCH_SRC) bench/bench.h include/skillbroker.h $(LIBSB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(filter-out -MMD -MP,$(ALL_CFLAGS)) $(ALL_LDFLAGS) \
		$(LIBSB_USER_FLAGS) -o $@ $(SB_BENCH_SRC) -lskillbroker

# Bench tools (bench/*.c) link the common code only.
$(OUT)/bench/%: bench/%.c $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
		$(call obj,$(COMMON_SRC)) $(PKG_LIBS)

# The roles' users (users.* of the config), made only when installing
# into this system as root; a staged install (DESTDIR) leaves them to the
# package (debian/skillbroker.postinst). System users and groups of their
# own, no home, no shell; make uninstall leaves them (userdel removes
# them). Worker uids (worker.uids) need no user.
ROLE_USERS = _sb-broker _sb-policyd _sb-auditd _sb-netproxy
install-users:
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
		for u in $(ROLE_USERS); do \
			getent passwd $$u >/dev/null || useradd --system \
			    --user-group --no-create-home --home-dir /nonexistent \
			    --shell /usr/sbin/nologin $$u || exit 1; \
		done; \
	fi

# Where the service files go: the unit where systemd looks for PREFIX,
# logrotate's directory always /etc/logrotate.d (logrotate reads no other).
UNITDIR ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
LOGROTATEDIR ?= /etc/logrotate.d
MANPAGES = $(wildcard man/*.[1-9])
INSTALL_CONF = $(OUT)/install/skillbroker.yaml
INSTALL_UNIT = $(OUT)/install/skillbroker.service
INSTALL_LOGROTATE = $(OUT)/install/logrotate
INSTALL_PC = $(OUT)/install/skillbroker.pc

# The installed config: production paths, no notes about the source tree
# (scripts/install-config); the unit and the logrotate file with the
# same paths.
$(INSTALL_CONF): etc/skillbroker.yaml scripts/install-config FORCE
	@mkdir -p $(dir $@)
	@sh scripts/install-config $(SYSCONFDIR) $(SKILLSDIR) $(RUNDIR) \
		$(LOCALSTATEDIR) <etc/skillbroker.yaml >$@.tmp && mv $@.tmp $@
$(INSTALL_UNIT): etc/systemd/skillbroker.service.in FORCE
	@mkdir -p $(dir $@)
	@sed -e 's|@SBINDIR@|$(SBINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
		-e 's|/var/log/skillbroker|$(LOCALSTATEDIR)/log/skillbroker|g' \
		etc/systemd/skillbroker.service.in >$@
$(INSTALL_LOGROTATE): etc/logrotate.d/skillbroker FORCE
	@mkdir -p $(dir $@)
	@sed -e 's|/run/skillbroker/|$(RUNDIR)/|g' \
		-e 's|/var/log/skillbroker/|$(LOCALSTATEDIR)/log/skillbroker/|g' \
		etc/logrotate.d/skillbroker >$@
$(INSTALL_PC): libskillbroker/skillbroker.pc.in FORCE
	@mkdir -p $(dir $@)
	@sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(LIBSB_VERSION)|' \
		-e 's|@PRIVATE@|$(LIBSB_LIBS)|' libskillbroker/skillbroker.pc.in >$@

INSTALL_GEN = $(INSTALL_CONF) $(INSTALL_UNIT) $(INSTALL_LOGROTATE) $(INSTALL_PC)

# A config file the admin may have edited is never overwritten: a
# different one already there gets the new one beside it as FILE.new.
define install_conf
	if [ -e $(2) ] && ! cmp -s $(1) $(2); then \
		install -m 644 $(1) $(2).new && \
		echo "install: $(2) differs, kept; the new one is $(2).new"; \
	else install -m 644 $(1) $(2); fi
endef

install: all install-users $(INSTALL_GEN)
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) \
		$(DESTDIR)$(SYSCONFDIR)/policy.d $(DESTDIR)$(SKILLSDIR) \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCLUDEDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)$(LOGROTATEDIR)
	install -d -m 750 $(DESTDIR)$(LOCALSTATEDIR)/log/skillbroker
	install -m 755 $(BIN)/skillbrokerd $(DESTDIR)$(SBINDIR)/
	install -m 755 $(BIN)/skillctl $(BIN)/skillbroker-mcp $(DESTDIR)$(BINDIR)/
	install -m 755 $(BIN)/skillbroker-broker $(BIN)/skillbroker-policyd \
		$(BIN)/skillbroker-auditd $(BIN)/skillbroker-worker $(BIN)/skillbroker-netproxy \
		$(DESTDIR)$(LIBEXECDIR)/
	@$(call install_conf,$(INSTALL_CONF),$(DESTDIR)$(SYSCONFDIR)/skillbroker.yaml)
	@for f in etc/policy.d/*.yaml; do \
		$(call install_conf,$$f,$(DESTDIR)$(SYSCONFDIR)/policy.d/$${f##*/}); \
	done
	@$(call install_conf,$(INSTALL_LOGROTATE),$(DESTDIR)$(LOGROTATEDIR)/skillbroker)
	@case "$(SKILLSDIR)" in /?*) ;; *) echo "SKILLSDIR=$(SKILLSDIR): an absolute path below /, please" >&2; exit 1 ;; esac
	rm -rf $(DESTDIR)$(SKILLSDIR)
	cp -R skills $(DESTDIR)$(SKILLSDIR)
	chmod -R u+rwX,go+rX,go-w $(DESTDIR)$(SKILLSDIR)
	install -m 644 $(INSTALL_UNIT) $(DESTDIR)$(UNITDIR)/skillbroker.service
	install -m 644 $(OUT)/lib/libskillbroker.so.$(LIBSB_VERSION) \
		$(OUT)/lib/libskillbroker.a $(DESTDIR)$(LIBDIR)/
	ln -sf libskillbroker.so.$(LIBSB_VERSION) \
		$(DESTDIR)$(LIBDIR)/libskillbroker.so.$(LIBSB_MAJOR)
	ln -sf libskillbroker.so.$(LIBSB_MAJOR) $(DESTDIR)$(LIBDIR)/libskillbroker.so
	install -m 644 include/skillbroker.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(INSTALL_PC) $(DESTDIR)$(LIBDIR)/pkgconfig/skillbroker.pc
	@for m in $(MANPAGES); do s=$${m##*.}; \
		install -d $(DESTDIR)$(MANDIR)/man$$s && \
		install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/ || exit 1; \
	done

# Remove what make install put, as Debian's remove does: the config files
# (config, policy.d, logrotate) go only when they are as installed; the
# state, the audit log and the role users stay (docs/install.md).
define uninstall_conf
	if [ -e $(2) ] && cmp -s $(1) $(2); then rm -f $(2); \
	elif [ -e $(2) ]; then echo "uninstall: $(2) was changed, kept"; fi; \
	if [ -e $(2).new ] && cmp -s $(1) $(2).new; then rm -f $(2).new; fi
endef

uninstall: $(INSTALL_GEN)
	rm -f $(DESTDIR)$(SBINDIR)/skillbrokerd $(DESTDIR)$(BINDIR)/skillctl \
		$(DESTDIR)$(BINDIR)/skillbroker-mcp
	rm -f $(addprefix $(DESTDIR)$(LIBEXECDIR)/,skillbroker-broker \
		skillbroker-policyd skillbroker-auditd skillbroker-worker \
		skillbroker-netproxy)
	-rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null
	@case "$(SKILLSDIR)" in /?*) ;; *) echo "SKILLSDIR=$(SKILLSDIR): an absolute path below /, please" >&2; exit 1 ;; esac
	rm -rf $(DESTDIR)$(SKILLSDIR)
	-rmdir $(dir $(DESTDIR)$(SKILLSDIR)) 2>/dev/null
	rm -f $(DESTDIR)$(UNITDIR)/skillbroker.service
	rm -f $(DESTDIR)$(LIBDIR)/libskillbroker.so.$(LIBSB_VERSION) \
		$(DESTDIR)$(LIBDIR)/libskillbroker.so.$(LIBSB_MAJOR) \
		$(DESTDIR)$(LIBDIR)/libskillbroker.so $(DESTDIR)$(LIBDIR)/libskillbroker.a \
		$(DESTDIR)$(LIBDIR)/pkgconfig/skillbroker.pc \
		$(DESTDIR)$(INCLUDEDIR)/skillbroker.h
	rm -f $(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	@$(call uninstall_conf,$(INSTALL_CONF),$(DESTDIR)$(SYSCONFDIR)/skillbroker.yaml)
	@for f in etc/policy.d/*.yaml; do \
		$(call uninstall_conf,$$f,$(DESTDIR)$(SYSCONFDIR)/policy.d/$${f##*/}); \
	done
	@$(call uninstall_conf,$(INSTALL_LOGROTATE),$(DESTDIR)$(LOGROTATEDIR)/skillbroker)
	-rmdir $(DESTDIR)$(SYSCONFDIR)/policy.d $(DESTDIR)$(SYSCONFDIR) 2>/dev/null

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# CI: every tracked C file already as .clang-format says.
format-check:
	@clang-format --dry-run -Werror $$(git ls-files '*.c' '*.h')

lint:
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
		--inline-suppr --suppress=missingIncludeSystem -D__linux__ \
		--include=/usr/include/x86_64-linux-gnu/sys/queue.h \
		lib proto master broker policyd auditd worker netproxy cli skills/files/src \
		libskillbroker mcp examples tests/clients

clean:
	rm -rf build bin run var $(FILES_SKILL_DIR)

-include $(shell find build -name '*.d' -type f 2>/dev/null)

# libFuzzer harnesses (clang), each run for FUZZ_TIME seconds: make fuzz
FUZZ_TIME ?= 30
FUZZ_BINS = build/fuzz/fuzz_client_req build/fuzz/fuzz_msg build/fuzz/fuzz_yaml \
	build/fuzz/fuzz_http build/fuzz/fuzz_reply build/fuzz/fuzz_mcp
FUZZ_CFLAGS = -std=gnu11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-DSB_VERSION='"$(VERSION)"'
# fuzz_yaml reads YAML as policyd reads a policy file.
FUZZ_YAML_SRC = policyd/policyd_policy.c policyd/policyd_perm.c \
	policyd/policyd_match.c

build/fuzz/fuzz_yaml: tests/fuzz/fuzz_yaml.c $(COMMON_SRC) $(FUZZ_YAML_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -o $@ $< $(COMMON_SRC) \
		$(FUZZ_YAML_SRC) $(PKG_LIBS)

# fuzz_http reads request heads as the egress proxy does.
FUZZ_HTTP_SRC = netproxy/netproxy_http.c netproxy/netproxy_addr.c

build/fuzz/fuzz_http: tests/fuzz/fuzz_http.c $(COMMON_SRC) $(FUZZ_HTTP_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -o $@ $< $(COMMON_SRC) \
		$(FUZZ_HTTP_SRC) $(PKG_LIBS)

# fuzz_reply feeds what a broker sends to the client library.
build/fuzz/fuzz_reply: tests/fuzz/fuzz_reply.c $(COMMON_SRC) $(LIBSB_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -o $@ $< $(COMMON_SRC) \
		$(LIBSB_SRC) $(PKG_LIBS)

# fuzz_mcp reads lines as skillbroker-mcp reads its stdin.
FUZZ_MCP_SRC = mcp/mcp_rpc.c mcp/mcp_line.c mcp/mcp_args.c mcp/mcp_text.c
build/fuzz/fuzz_mcp: tests/fuzz/fuzz_mcp.c $(COMMON_SRC) $(FUZZ_MCP_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -o $@ $< $(COMMON_SRC) \
		$(FUZZ_MCP_SRC) $(PKG_LIBS)

build/fuzz/%: tests/fuzz/%.c $(COMMON_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -o $@ $< $(COMMON_SRC) $(PKG_LIBS)

# The seeds of fuzz_msg: each message type's unit test sample, one file.
fuzz-seeds: $(OUT)/tests/fuzz/gen_seeds
	@$(OUT)/tests/fuzz/gen_seeds tests/fuzz/seeds/fuzz_msg

$(OUT)/tests/fuzz/gen_seeds: tests/fuzz/gen_seeds.c $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
		$(call obj,$(COMMON_SRC)) $(PKG_LIBS)

# Each harness starts from its checked-in corpus (tests/fuzz/corpus) and
# its seeds; what it finds goes to build/fuzz/corpus-NAME.
fuzz: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do n=$${f##*/}; \
		mkdir -p build/fuzz/corpus-$$n tests/fuzz/corpus/$$n && \
		echo "fuzz: $$n for $(FUZZ_TIME) s" && \
		$$f -max_total_time=$(FUZZ_TIME) -dict=tests/fuzz/$$n.dict \
		-artifact_prefix=build/fuzz/$$n- -print_final_stats=1 \
		build/fuzz/corpus-$$n tests/fuzz/corpus/$$n \
		tests/fuzz/seeds/$$n 2>build/fuzz/$$n.log || \
		{ tail -n 40 build/fuzz/$$n.log; exit 1; }; \
		grep -E '^stat::(number_of_executed_units|average_exec_per_sec)' \
		build/fuzz/$$n.log | tr '\n' ' '; echo; done

# Keep what the runs found: the corpus, minimized, goes into the tree.
fuzz-corpus: $(FUZZ_BINS)
	@for f in $(FUZZ_BINS); do n=$${f##*/}; \
		mkdir -p build/fuzz/corpus-$$n build/fuzz/min-$$n && \
		rm -f build/fuzz/min-$$n/* && \
		$$f -merge=1 build/fuzz/min-$$n tests/fuzz/corpus/$$n \
		build/fuzz/corpus-$$n tests/fuzz/seeds/$$n \
		2>build/fuzz/$$n-merge.log && \
		rm -rf tests/fuzz/corpus/$$n && \
		mv build/fuzz/min-$$n tests/fuzz/corpus/$$n && \
		echo "fuzz-corpus: $$n: $$(ls tests/fuzz/corpus/$$n | wc -l) inputs" \
		|| exit 1; done
