// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What klibc lacks, for our programs on the sparc32 nodes (klibc-compat.h).
 *
 * System calls as klibc makes its own on sparc32: trap 0x10 with the number in %g1;
 * the carry flag set on an error, whose number is then in %o0.
 */
#include <errno.h>
#include <asm/unistd.h>
#include <stdioint.h>		/* klibc's own stdio internals (its pinned tree) */

#include "klibc-compat.h"

static long syscall3(long nr, long a, long b, long c)
{
	register long g1 __asm__("g1") = nr;
	register long o0 __asm__("o0") = a;
	register long o1 __asm__("o1") = b;
	register long o2 __asm__("o2") = c;
	long failed;

	__asm__ volatile("ta 0x10\n\t"
			 "addx %%g0, 0, %1"          /* the carry: the call failed */
			 : "+r"(o0), "=r"(failed)
			 : "r"(g1), "r"(o1), "r"(o2)
			 : "memory", "cc");
	if (failed) {
		errno = o0;
		return -1;
	}
	return o0;
}

/* The kernel's sparc32 clock_gettime takes klibc's timespec (32-bit seconds). Our
 * programs time with CLOCK_MONOTONIC, the guest's virtual time. */
int clock_gettime(int clock, struct timespec *ts)
{
	return syscall3(__NR_clock_gettime, clock, (long)ts, 0);
}

int madvise(void *addr, size_t length, int advice)
{
	return syscall3(__NR_madvise, (long)addr, length, advice);
}

/* klibc keeps a stream's buffering mode (line-buffered on a terminal, else full) in its
 * private FILE; the buffer itself stays klibc's. */
int setvbuf(FILE *f, char *buf, int mode, size_t size)
{
	(void)buf;
	(void)size;
	if (mode != _IONBF && mode != _IOLBF && mode != _IOFBF) {
		errno = EINVAL;
		return -1;
	}
	fflush(f);
	stdio_pvt(f)->bufmode = mode;
	return 0;
}
