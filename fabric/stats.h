#ifndef STATS_H
#define STATS_H

#include "fabric.h"

void stats_write(struct fabric *f);
/* s as a JSON string, quoted and escaped */
void json_string(FILE *out, const char *s);

#endif
