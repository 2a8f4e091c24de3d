/* error.c: the typed error values shared by every role and the client. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static const char *const err_names[ERR__COUNT] = {
    [ERR_NONE] = "none",
    [ERR_BAD_REQUEST] = "bad_request",
    [ERR_UNKNOWN_SKILL] = "unknown_skill",
    [ERR_SKILL_NOT_ENABLED] = "skill_not_enabled",
    [ERR_UNKNOWN_COMMAND] = "unknown_command",
    [ERR_PHASE_VIOLATION] = "phase_violation",
    [ERR_PERMISSION_DENIED] = "permission_denied",
    [ERR_APPROVAL_DENIED] = "approval_denied",
    [ERR_APPROVAL_TIMEOUT] = "approval_timeout",
    [ERR_RATE_LIMITED] = "rate_limited",
    [ERR_TIMEOUT] = "timeout",
    [ERR_RESOURCE_LIMIT] = "resource_limit",
    [ERR_SANDBOX_FAILED] = "sandbox_failed",
    [ERR_AUDIT_UNAVAILABLE] = "audit_unavailable",
    [ERR_POLICY_UNAVAILABLE] = "policy_unavailable",
    [ERR_CANCELLED] = "cancelled",
    [ERR_OVERLOADED] = "overloaded",
    [ERR_INTERNAL] = "internal",
    [ERR_UNSUPPORTED] = "unsupported",
    [ERR_NOT_FOUND] = "not_found",
};

int
error_set(struct error *e, enum err_type type, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return -1;
	e->type = type;
	va_start(ap, fmt);
	/* A message cut at the bound stays UTF-8 (it goes into replies). */
	if (vsnprintf(e->msg, sizeof(e->msg), fmt, ap) >= (int)sizeof(e->msg))
		utf8_trim(e->msg);
	va_end(ap);
	return -1;
}

const char *
err_type_name(enum err_type type)
{
	if ((unsigned)type >= ERR__COUNT)
		return "internal";
	return err_names[type];
}

enum err_type
err_type_from_name(const char *name)
{
	int i;

	for (i = 0; i < ERR__COUNT; i++)
		if (strcmp(err_names[i], name) == 0)
			return (enum err_type)i;
	return ERR__COUNT;
}
