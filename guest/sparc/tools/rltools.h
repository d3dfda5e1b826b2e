/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rltools' commands in files of their own (rltools.c calls them by name) */
#ifndef RLTOOLS_H
#define RLTOOLS_H

/* "what arg: strerror(errno)" on stderr; returns 1 */
int fail(const char *what, const char *arg);

int ping_main(int argc, char **argv);

#endif
