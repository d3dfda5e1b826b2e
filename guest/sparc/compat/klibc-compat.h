/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What our guest programs use that klibc does not have, for the sparc32 nodes
 * (docs/sparc.md): included before every file of a program built against klibc
 * (src/retrolink/build/sparc_programs.py).
 */
#ifndef RL_KLIBC_COMPAT_H
#define RL_KLIBC_COMPAT_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>
#include <linux/time.h>
#include <linux/mman.h>		/* MADV_* */

int clock_gettime(int clock, struct timespec *ts);	/* clockid_t: an int */
int madvise(void *addr, size_t length, int advice);
int setvbuf(FILE *f, char *buf, int mode, size_t size);

#endif /* RL_KLIBC_COMPAT_H */
