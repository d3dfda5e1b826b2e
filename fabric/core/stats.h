#ifndef STATS_H
#define STATS_H

#include "fabric.h"

/* 0, or -1 with errno set */
int stats_write(struct fabric *f);
/* s as a JSON string, quoted and escaped */
void json_string(FILE *out, const char *s);

#endif
