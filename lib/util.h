/* util.h: small helpers with no process role: time, UTF-8, fds, names. */
#ifndef SB_UTIL_H
#define SB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <sys/types.h>

/* A parameter a callback must take and does not use. */
#define UNUSED __attribute__((unused))

/* Milliseconds on the monotonic clock. */
/* ms as a timeval, for event timers. */
struct timeval timeval_ms(uint64_t ms);
uint64_t now_mono_ms(void);
/* Nanoseconds on the monotonic clock. */
uint64_t now_mono_ns(void);
/* Write the current UTC time as RFC 3339 with milliseconds into buf. */
void now_rfc3339(char *buf, size_t len);
/* ts as now_rfc3339 writes the time ("2026-11-22T00:04:13.202Z"). */
struct timespec;
void rfc3339_fmt(const struct timespec *ts, char *buf, size_t len);
/* 1 if [s, s+len) is well-formed UTF-8 without NUL, else 0. */
int utf8_valid(const char *s, size_t len);
/* 1 if s is a safe identifier: 1..max of [A-Za-z0-9._-], not "." or "..". */
int ident_valid(const char *s, size_t max);
/* 1 if s names a command: 1..max bytes of identifiers joined by single
 * '/' (a script's path in its skill), none "." or "..". */
int command_name_valid(const char *s, size_t max);
int set_nonblock(int fd);
int set_cloexec(int fd, int on);
/* Close every fd >= lowfd. */
void close_from(int lowfd);
/* Write all of buf, retrying on EINTR; -1 on error. */
int write_full(int fd, const void *buf, size_t len);
/* Read exactly len bytes; 0 ok, -1 error, -2 EOF before len. */
int read_full(int fd, void *buf, size_t len);
/* Parse an unsigned decimal within [min, max]; -1 on error. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Fill buf with len random bytes from the kernel. */
int random_bytes(void *buf, size_t len);
/* Hex-encode len bytes into out (2*len+1 bytes). */
void hex_encode(const uint8_t *in, size_t len, char *out);

/* mkdir -p with mode for each created level; existing dirs are kept. */
int mkdir_p(const char *path, mode_t mode);
/*
 * A copy of s that is valid UTF-8: if s is not, every byte outside
 * printable ASCII becomes the text \xNN (names a skill chose may hold
 * any bytes; messages and records may not).
 */
char *utf8_escape(const char *s);
/* The most bytes of valid UTF-8 s, at most max, that end on a character. */
size_t utf8_cut(const char *s, size_t max);
/* Drop a character that snprintf cut short at the end of s. */
void utf8_trim(char *s);
/* 1 if the first n bytes of s are lowercase hex digits (ids, hashes). */
int hex_lower_n(const char *s, size_t n);
/* The sha256 (hex, 65 bytes) of what fd reads to its end: -1 on error. */
int sha256_fd(int fd, char *hex);
/* The sha256 (hex, 65 bytes) of len bytes at p: -1 on error. */
int sha256_mem(const void *p, size_t len, char *hex);
/* A copy of n strings, NULL-ended (strarr_free frees it). */
char **strarr_dup(char *const *v, size_t n);
/* Free n strings and the array holding them (NULL is fine). */
void strarr_free(char **v, size_t n);
/* snprintf that reports truncation: -1 if the result did not fit. */
int fmt_path(char *out, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Lexically drop ".", ".." and repeated slashes of an absolute path. */
void path_normalize(char *path);
/* "killed by signal N" or "exited with status N", into buf. */
const char *wait_status_text(int status, char *buf, size_t len);
/* 1 if a component of path is "." or "..". */
int path_has_dot(const char *path);
/* 1 if path a is b or lies beneath it (b's trailing slashes aside). */
int path_under(const char *a, const char *b);
#endif
