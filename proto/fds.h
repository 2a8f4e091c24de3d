/*
 * fds.h: the fixed fd numbers at which the master's children find their
 * channels. The master places each fd by these names (never by array
 * order) and each child reads them by the same names.
 */
#ifndef SB_FDS_H
#define SB_FDS_H

/* broker, policyd, auditd, netproxy */
#define FD_MASTER 3 /* the channel to the master */

/* broker */
#define FD_BROKER_LISTEN 4  /* the client socket, listening */
#define FD_BROKER_POLICYD 5 /* the channel to policyd */
#define FD_BROKER_AUDITD 6  /* the channel to auditd */

/* policyd, auditd */
#define FD_PEER_BROKER 4 /* the channel to the broker */

/* auditd */
#define FD_PEER_NETPROXY 5 /* the channel to the egress proxy */

/* netproxy */
#define FD_NETPROXY_AUDITD 4 /* the channel to auditd */

/* worker: 0, 1, 2 are the skill's stdin, stdout and stderr pipes */
#define FD_WORKER_CTL 3    /* the channel to the master */
#define FD_WORKER_REPORT 4 /* write: FILES for the broker */
#define FD_WORKER_WORK 5   /* the session's work dir, a detached tmpfs */
#define FD_WORKER_DATA 6   /* the skill's data dir, when granted */

#endif
