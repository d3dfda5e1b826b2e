/*
 * Marks for the instruction profile (docs/profile.md): rl_profile_mark() opens
 * a window, the next one closes it. `retrolink run --insn-profile N` counts node
 * N's instructions inside the windows; without it the mark is a no-op
 * ("xchg %bx,%bx", which the profile's QEMU plugin looks for).
 */
#ifndef RL_PROFILE_H
#define RL_PROFILE_H

static inline void rl_profile_mark(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __asm__ __volatile__("xchg %%bx, %%bx" ::: "memory");
#endif
}

#endif
