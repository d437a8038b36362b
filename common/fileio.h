/*
 * fileio.h: whole writes and reads that survive short counts and EINTR.
 */
#ifndef FILEIO_H
#define FILEIO_H

#include <stddef.h>
#include <stdint.h>

/* Write all n bytes to fd. 0, or -1 with errno. */
int	fileio_write_all(int fd, const void *p, size_t n);
/* Write all n bytes to fd at offset off (pwrite). 0, or -1 with errno. */
int	fileio_pwrite_all(int fd, const void *p, size_t n, uint64_t off);
/* Read exactly n bytes from fd. 0, or -1 (errno 0: the file ended first). */
int	fileio_read_all(int fd, void *p, size_t n);

#endif
