/* util.c: small role-free helpers. */
/* The digest's own functions, not EVP's: they link only the digest, so
 * the statically linked worker carries no provider machinery. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include "util.h"
#include "xmalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

uint64_t
now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t
now_mono_ms(void)
{
	return now_mono_ns() / 1000000ULL;
}

void
now_rfc3339(char *buf, size_t len)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) == -1)
		memset(&ts, 0, sizeof(ts));
	rfc3339_fmt(&ts, buf, len);
}

/* n decimal digits of v at p, zero-padded. */
static char *
rfc3339_digits(char *p, uint64_t v, int n)
{
	int i;

	for (i = n - 1; i >= 0; i--, v /= 10)
		p[i] = (char)('0' + v % 10);
	return p + n;
}

/*
 * A time as gmtime_r and strftime("%Y-%m-%dT%H:%M:%S") would write it,
 * and milliseconds, without either: the date from the days since the
 * epoch (H. Hinnant's civil_from_days), for years 1970 to 9999.
 */
void
rfc3339_fmt(const struct timespec *ts, char *buf, size_t len)
{
	uint64_t secs = ts->tv_sec > 0 ? (uint64_t)ts->tv_sec : 0;
	uint64_t days = secs / 86400, sod = secs % 86400, z, era, doe, yoe;
	uint64_t y, doy, mp, d, m;
	char out[32], *p = out;

	z = days + 719468;
	era = z / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y += m <= 2;
	p = rfc3339_digits(p, y % 10000, 4);
	*p++ = '-';
	p = rfc3339_digits(p, m, 2);
	*p++ = '-';
	p = rfc3339_digits(p, d, 2);
	*p++ = 'T';
	p = rfc3339_digits(p, sod / 3600, 2);
	*p++ = ':';
	p = rfc3339_digits(p, sod / 60 % 60, 2);
	*p++ = ':';
	p = rfc3339_digits(p, sod % 60, 2);
	*p++ = '.';
	p = rfc3339_digits(p, (uint64_t)(ts->tv_nsec / 1000000L) % 1000, 3);
	*p++ = 'Z';
	*p = '\0';
	if (len == 0)
		return;
	/* as snprintf: cut to fit, always ended */
	if ((size_t)(p - out) >= len)
		p = out + len - 1;
	memcpy(buf, out, (size_t)(p - out));
	buf[p - out] = '\0';
}

/* Eight bytes of ASCII, none of them NUL: most text is, so most of a
 * string is taken a word at a time. */
static int
ascii8(const unsigned char *p)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = ones << 7;
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return (w & highs) == 0 && ((w - ones) & ~w & highs) == 0;
}

/* Strict UTF-8: no overlongs, no surrogates, nothing above U+10FFFF. */
int
utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, n, k;
	uint32_t cp;

	while (i < len) {
		unsigned char c = s[i];
		if (len - i >= 8 && ascii8(s + i)) {
			i += 8;
			continue;
		}
		if (c == 0)
			return 0;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			cp = c & 0x07;
		} else
			return 0;
		if (len - i - 1 < n)
			return 0;
		for (k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += n + 1;
	}
	return 1;
}

int
ident_valid(const char *s, size_t max)
{
	size_t i, len = strlen(s);

	if (len == 0 || len > max)
		return 0;
	if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return 0;
	for (i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		        (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		        c == '-'))
			return 0;
	}
	return 1;
}

int
command_name_valid(const char *s, size_t max)
{
	char seg[256];
	size_t len = strlen(s), n;

	if (len == 0 || len > max)
		return 0;
	for (;;) {
		n = strcspn(s, "/");
		if (n == 0 || n >= sizeof(seg))
			return 0;
		memcpy(seg, s, n);
		seg[n] = '\0';
		if (!ident_valid(seg, n))
			return 0;
		if (s[n] == '\0')
			return 1;
		s += n + 1;
	}
}

int
set_nonblock(int fd)
{
	int fl;

	if ((fl = fcntl(fd, F_GETFL)) == -1)
		return -1;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int
set_cloexec(int fd, int on)
{
	int fl;

	if ((fl = fcntl(fd, F_GETFD)) == -1)
		return -1;
	fl = on ? (fl | FD_CLOEXEC) : (fl & ~FD_CLOEXEC);
	return fcntl(fd, F_SETFD, fl);
}

/* close_range where the kernel has it, else walk /proc/self/fd. */
void
close_from(int lowfd)
{
	DIR *d;
	struct dirent *de;
	int fd;

	if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0)
		return;
	if ((d = opendir("/proc/self/fd")) == NULL) {
		for (fd = lowfd; fd < 65536; fd++)
			(void)close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		fd = atoi(de->d_name);
		if (fd >= lowfd && fd != dirfd(d))
			(void)close(fd);
	}
	closedir(d);
}

int
write_full(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
read_full(int fd, void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = read(fd, p, len);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			return -2;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int
random_bytes(void *buf, size_t len)
{
	char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = getrandom(p, len, 0);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void
hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 0xf];
	}
	out[2 * len] = '\0';
}

int
mkdir_p(const char *path, mode_t mode)
{
	char buf[4096];
	size_t len = strlen(path), i;

	if (len == 0 || len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) == -1 && errno != EEXIST)
			return -1;
		buf[i] = i == len ? '\0' : '/';
	}
	return 0;
}

/* Lexically drop ".", "..", and repeated slashes of an absolute path. */
void
path_normalize(char *path)
{
	char *out = path, *p = path, *seg;
	size_t len;

	if (path[0] != '/')
		return; /* only absolute paths have a meaning without a cwd */
	while (*p == '/')
		p++;
	while (*p != '\0') {
		seg = p;
		while (*p != '\0' && *p != '/')
			p++;
		len = (size_t)(p - seg);
		while (*p == '/')
			p++;
		if (len == 1 && seg[0] == '.')
			continue;
		if (len == 2 && seg[0] == '.' && seg[1] == '.') {
			while (out > path && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		memmove(out, seg, len);
		out += len;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}

int
fmt_path(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

char **
strarr_dup(char *const *v, size_t n)
{
	char **c = xcalloc(n + 1, sizeof(char *));
	size_t i;

	for (i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

void
strarr_free(char **v, size_t n)
{
	size_t i;

	if (v == NULL)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

char *
utf8_escape(const char *s)
{
	size_t len = strlen(s), i, o = 0;
	char *out;

	if (utf8_valid(s, len))
		return xstrdup(s);
	out = xmalloc(4 * len + 1);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, 5, "\\x%02x", c);
	}
	out[o] = '\0';
	return out;
}

int
path_under(const char *a, const char *b)
{
	size_t lb = strlen(b);

	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	if (lb == 1 && b[0] == '/')
		return 1;
	return strncmp(a, b, lb) == 0 && (a[lb] == '\0' || a[lb] == '/');
}

int
path_has_dot(const char *path)
{
	const char *c;

	for (c = path; (c = strchr(c, '.')) != NULL; c++)
		if ((c == path || c[-1] == '/') &&
		    (c[1] == '\0' || c[1] == '/' ||
		        (c[1] == '.' && (c[2] == '\0' || c[2] == '/'))))
			return 1;
	return 0;
}

const char *
wait_status_text(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(
		    buf, len, "exited with status %d", WEXITSTATUS(status));
	return buf;
}

struct timeval
timeval_ms(uint64_t ms)
{
	struct timeval tv = {
	    (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};

	return tv;
}

int
sha256_fd(int fd, char *hex)
{
	unsigned char buf[65536], md[SHA256_DIGEST_LENGTH];
	SHA256_CTX ctx;
	ssize_t n = -1;

	if (!SHA256_Init(&ctx))
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (!SHA256_Update(&ctx, buf, (size_t)n))
			break;
	if (!SHA256_Final(md, &ctx) || n != 0) /* read to its end, or not */
		return -1;
	hex_encode(md, sizeof(md), hex);
	return 0;
}

int
sha256_mem(const void *p, size_t len, char *hex)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256_CTX ctx;

	/* not SHA256(): in libcrypto that one goes through EVP */
	if (!SHA256_Init(&ctx) || !SHA256_Update(&ctx, p, len) ||
	    !SHA256_Final(md, &ctx))
		return -1;
	hex_encode(md, sizeof(md), hex);
	return 0;
}

size_t
utf8_cut(const char *s, size_t max)
{
	size_t len = strnlen(s, max + 1);

	if (len <= max)
		return len;
	while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

void
utf8_trim(char *s)
{
	size_t len = strlen(s), i = len, need;
	unsigned char c;

	while (i > 0 && len - i < 4 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i == 0 || (c = (unsigned char)s[i - 1]) < 0xc0)
		return; /* ASCII last, or no lead byte in reach */
	need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	if (len - (i - 1) < need)
		s[i - 1] = '\0';
}

int
hex_lower_n(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0; /* a NUL too: s is shorter */
	return 1;
}
