/*
 * error.h: the project's one error convention. A function that can fail
 * returns 0 on success and -1 on failure, after filling a struct error
 * with a typed code (the client-visible error type) and a message.
 */
#ifndef SB_ERROR_H
#define SB_ERROR_H

enum err_type {
	ERR_NONE = 0,
	ERR_BAD_REQUEST,
	ERR_UNKNOWN_SKILL,
	ERR_SKILL_NOT_ENABLED,
	ERR_UNKNOWN_COMMAND,
	ERR_PHASE_VIOLATION,
	ERR_PERMISSION_DENIED,
	ERR_APPROVAL_DENIED,
	ERR_APPROVAL_TIMEOUT,
	ERR_RATE_LIMITED,
	ERR_TIMEOUT,
	ERR_RESOURCE_LIMIT,
	ERR_SANDBOX_FAILED,
	ERR_AUDIT_UNAVAILABLE,
	ERR_POLICY_UNAVAILABLE,
	ERR_CANCELLED,
	ERR_OVERLOADED,
	ERR_INTERNAL,
	ERR_UNSUPPORTED, /* a request type or version this server lacks */
	ERR_NOT_FOUND,   /* what the request names is not there */
	ERR__COUNT
};

#define ERROR_MSG_MAX 256

struct error {
	enum err_type type;
	char msg[ERROR_MSG_MAX];
};

/* Fill *e (if not NULL) and return -1, so callers can "return error_set()". */
int error_set(struct error *e, enum err_type type, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *err_type_name(enum err_type type);
/* Map a wire name back to its type; ERR__COUNT when unknown. */
enum err_type err_type_from_name(const char *name);

#endif
