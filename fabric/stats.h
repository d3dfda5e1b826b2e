#ifndef STATS_H
#define STATS_H

#include "fabric.h"

void stats_write(struct fabric *f);

#endif
