/* The main of rl_osu_<name>: its one measurement, OSU_TEST (meson.build), a job of its own. */
#include "osu.h"

int main(int argc, char **argv)
{
    return osu_main(&OSU_TEST, argc, argv);
}
