/* frame.h: 4-byte big-endian length + body framing, bounded. */
#ifndef SB_FRAME_H
#define SB_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"

#define FRAME_HDR_LEN 4
#define FRAME_FDS_MAX 4 /* fds one frame may carry */
#define FRAME_MAX_DEFAULT (1024 * 1024)
/* Internal channels carry no client payload bigger than a client frame. */
#define FRAME_MAX_INTERNAL (FRAME_MAX_DEFAULT + 64 * 1024)

enum frame_status { FRAME_NEED_MORE, FRAME_READY, FRAME_BAD };

/*
 * Inspect avail bytes at data: FRAME_READY sets *body_len when a whole
 * frame is there; FRAME_BAD (with *e) for an empty or oversized frame.
 */
enum frame_status frame_check(const uint8_t *data, size_t avail, size_t max,
    size_t *body_len, struct error *e);
void frame_put_len(uint8_t hdr[FRAME_HDR_LEN], size_t len);
uint32_t frame_get_len(const uint8_t hdr[FRAME_HDR_LEN]);

/* Blocking helpers for simple peers (skillctl, the worker's spec pipe). */
int frame_send(int fd, const void *body, size_t len, struct error *e);
/* frame_send, with pass (an fd) attached to the frame's first byte. */
int frame_send_fd(
    int fd, const void *body, size_t len, int pass, struct error *e);
int frame_recv(
    int fd, size_t max, uint8_t **body, size_t *len, struct error *e);
/*
 * frame_recv, taking the fds attached to the frame's first byte (at most
 * maxfds, close-on-exec, into fds; *nfds); more than maxfds is an error.
 */
int frame_recv_fds(int fd, size_t max, uint8_t **body, size_t *len, int *fds,
    int maxfds, int *nfds, struct error *e);

#endif
