#include "trace/trace-hw_retrolink.h"
