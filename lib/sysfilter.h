/* sysfilter.h: the worker's syscall filter, compiled once (sysfilter.c). */
#ifndef SB_SYSFILTER_H
#define SB_SYSFILTER_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SYSFILTER_INSN 8                      /* bytes of a sock_filter */
#define SYSFILTER_MAX (4096 * SYSFILTER_INSN) /* BPF_MAXINSNS */

/*
 * The filter of a call without (net 0) or with network as a BPF program
 * (*len bytes, caller frees), for seccomp(SECCOMP_SET_MODE_FILTER).
 */
int sysfilter_compile(int net, uint8_t **prog, size_t *len, struct error *e);

#endif
