/* image.h: a size-bound persistent directory: an ext4 image, mounted. */
#ifndef SB_IMAGE_H
#define SB_IMAGE_H

#include <stdint.h>

#include "error.h"

/*
 * Files an image of size_mb may hold: one per 4 KiB block, as a tmpfs
 * of ours (OS_TMPFS_INODES), so what fits by size fits by count.
 */
#define IMAGE_INODES(size_mb) ((size_mb)*256 + 64)

/*
 * A detached mount (nosuid, nodev) of the image NAME in dirfd, made
 * there first if missing (size_mb reserved on disk). The caller holds
 * the fd; the loop device goes when the last mount of it does.
 */
int image_mount(int dirfd, const char *name, uint64_t size_mb, struct error *e);
/*
 * A new detached mount of the image KEY.img in the directory dir (one
 * directory per process; image_mount on the first call for a key; the
 * mount is held while this process lives).
 */
int image_clone(
    const char *dir, const char *key, uint64_t size_mb, struct error *e);

#endif
