/* frame.c: length-prefixed frames. */
#include "frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

enum frame_status
frame_check(const uint8_t *data, size_t avail, size_t max, size_t *body_len,
    struct error *e)
{
	uint32_t len;

	if (avail < FRAME_HDR_LEN)
		return FRAME_NEED_MORE;
	len = frame_get_len(data);
	if (len == 0) {
		error_set(e, ERR_BAD_REQUEST, "empty frame");
		return FRAME_BAD;
	}
	if (len > max) {
		error_set(e, ERR_BAD_REQUEST,
		    "frame of %u bytes exceeds the limit of %zu", len, max);
		return FRAME_BAD;
	}
	if (avail - FRAME_HDR_LEN < len)
		return FRAME_NEED_MORE;
	*body_len = len;
	return FRAME_READY;
}

uint32_t
frame_get_len(const uint8_t hdr[FRAME_HDR_LEN])
{
	return ((uint32_t)hdr[0] << 24) | ((uint32_t)hdr[1] << 16) |
	       ((uint32_t)hdr[2] << 8) | (uint32_t)hdr[3];
}

void
frame_put_len(uint8_t hdr[FRAME_HDR_LEN], size_t len)
{
	hdr[0] = (uint8_t)(len >> 24);
	hdr[1] = (uint8_t)(len >> 16);
	hdr[2] = (uint8_t)(len >> 8);
	hdr[3] = (uint8_t)len;
}

int
frame_send(int fd, const void *body, size_t len, struct error *e)
{
	uint8_t hdr[FRAME_HDR_LEN];

	if (len == 0 || len > UINT32_MAX)
		return error_set(e, ERR_INTERNAL, "bad frame length %zu", len);
	frame_put_len(hdr, len);
	if (write_full(fd, hdr, sizeof(hdr)) == -1 ||
	    write_full(fd, body, len) == -1)
		return error_set(e, ERR_INTERNAL, "write: %s", strerror(errno));
	return 0;
}

int
frame_send_fd(int fd, const void *body, size_t len, int pass, struct error *e)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	uint8_t hdr[FRAME_HDR_LEN];
	struct iovec iov = {hdr, 1};
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t n;

	if (len == 0 || len > UINT32_MAX)
		return error_set(e, ERR_INTERNAL, "bad frame length %zu", len);
	frame_put_len(hdr, len);
	memset(&mh, 0, sizeof(mh));
	memset(&cm, 0, sizeof(cm));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &pass, sizeof(int));
	while ((n = sendmsg(fd, &mh, MSG_NOSIGNAL)) == -1 && errno == EINTR)
		;
	if (n != 1 || write_full(fd, hdr + 1, sizeof(hdr) - 1) == -1 ||
	    write_full(fd, body, len) == -1)
		return error_set(e, ERR_INTERNAL, "write: %s", strerror(errno));
	return 0;
}

/*
 * The first byte of a frame, with the fds attached to it; a truncated
 * list (more than max, or a short control buffer) closes all and fails.
 */
static int
frame_first_byte(
    int fd, uint8_t *b, int *fds, int max, int *nfds, struct error *e)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * FRAME_FDS_MAX)];
	} cm;
	struct iovec iov = {b, 1};
	struct msghdr mh;
	struct cmsghdr *c;
	ssize_t n;
	int i, k, bad = 0;

	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	*nfds = 0;
	while ((n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC)) == -1 && errno == EINTR)
		;
	if (n <= 0)
		return error_set(e, ERR_INTERNAL, "%s",
		    n == 0 ? "connection closed" : strerror(errno));
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < k; i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + sizeof(int) * (size_t)i,
			    sizeof(int));
			if (*nfds < max)
				fds[(*nfds)++] = got;
			else {
				close(got);
				bad = 1;
			}
		}
	}
	if (bad || (mh.msg_flags & MSG_CTRUNC)) {
		for (i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return error_set(
		    e, ERR_BAD_REQUEST, "too many fds with a frame");
	}
	return 0;
}

/* The rest of a frame of which hdr holds the first have bytes. */
static int
frame_rest(int fd, uint8_t hdr[FRAME_HDR_LEN], size_t have, size_t max,
    uint8_t **body, size_t *len, struct error *e)
{
	size_t n;
	int r;

	if ((r = read_full(fd, hdr + have, FRAME_HDR_LEN - have)) != 0)
		return error_set(e, ERR_INTERNAL, "%s",
		    r == -2 ? "connection closed" : strerror(errno));
	if (frame_check(hdr, FRAME_HDR_LEN, max, &n, e) == FRAME_BAD)
		return -1;
	n = ((size_t)hdr[0] << 24) | ((size_t)hdr[1] << 16) |
	    ((size_t)hdr[2] << 8) | hdr[3];
	*body = xmalloc(n);
	if ((r = read_full(fd, *body, n)) != 0) {
		free(*body);
		*body = NULL;
		return error_set(e, ERR_INTERNAL, "%s",
		    r == -2 ? "truncated frame" : strerror(errno));
	}
	*len = n;
	return 0;
}

int
frame_recv(int fd, size_t max, uint8_t **body, size_t *len, struct error *e)
{
	uint8_t hdr[FRAME_HDR_LEN];

	return frame_rest(fd, hdr, 0, max, body, len, e);
}

int
frame_recv_fds(int fd, size_t max, uint8_t **body, size_t *len, int *fds,
    int maxfds, int *nfds, struct error *e)
{
	uint8_t hdr[FRAME_HDR_LEN];
	int i;

	if (maxfds < 0 || maxfds > FRAME_FDS_MAX)
		return error_set(e, ERR_INTERNAL, "bad fd count %d", maxfds);
	if (frame_first_byte(fd, hdr, fds, maxfds, nfds, e) == -1)
		return -1;
	if (frame_rest(fd, hdr, 1, max, body, len, e) == -1) {
		for (i = 0; i < *nfds; i++)
			close(fds[i]);
		*nfds = 0;
		return -1;
	}
	return 0;
}
