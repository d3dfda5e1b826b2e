#ifndef CONFIG_H
#define CONFIG_H

#include "fabric.h"

int config_load(struct fabric *f, const char *path, char *err, size_t errlen);
int parse_u64(const char *s, uint64_t *out);
/* enum rl_protocol's name in the configuration and in messages */
const char *protocol_name(uint32_t protocol);

#endif
