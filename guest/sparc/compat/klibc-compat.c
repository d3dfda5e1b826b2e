// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * klibc has no clock_gettime: the system call itself, as klibc makes its own on sparc32
 * (trap 0x10 with the number in %g1; the carry flag set on an error, whose number is
 * then in %o0). The kernel's sparc32 clock_gettime takes klibc's timespec (32-bit
 * seconds). Our programs time with CLOCK_MONOTONIC, the guest's virtual time.
 */
#include <errno.h>
#include <asm/unistd.h>

#include "klibc-compat.h"

int clock_gettime(int clock, struct timespec *ts)
{
	register long g1 __asm__("g1") = __NR_clock_gettime;
	register long o0 __asm__("o0") = clock;
	register long o1 __asm__("o1") = (long)ts;
	long failed;

	__asm__ volatile("ta 0x10\n\t"
			 "addx %%g0, 0, %1"          /* the carry: the call failed */
			 : "+r"(o0), "=r"(failed)
			 : "r"(g1), "r"(o1)
			 : "memory", "cc");
	if (failed) {
		errno = o0;
		return -1;
	}
	return 0;
}
