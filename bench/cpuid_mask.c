/* An AVX2-only x86-64 CPU made out of an AVX-512 one, for benchmarks: an LD_PRELOAD library that
 * hides every feature above x86-64-v3 from the CPUID instruction.
 *
 *   gcc -O2 -shared -fPIC bench/cpuid_mask.c -o cpuid_mask.so
 *   LD_PRELOAD=$PWD/cpuid_mask.so GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL,... PROGRAM
 *
 * Why: on a machine with AVX-512, `KILN_CPU_ISA=avx2` caps kiln's kernels, but ONNX Runtime (and
 * every other baseline) has no such cap, so a kiln/ORT ratio there compares AVX2 code with AVX-512
 * code. With this library loaded, every program in the process asks CPUID and is told: AVX2, FMA,
 * F16C, no AVX-512, no AMX, no AVX-VNNI/IFMA/NE-CONVERT/VNNI-INT8, no AVX10 (a Zen 2/3 class
 * feature set); each picks the kernels it would pick on such a CPU, kiln and ORT alike. With
 * KILN_CPUID_MASK_KEEP_AVX_VNNI=1 the CPU keeps AVX-VNNI (vpdpbusd on ymm registers): an Alder
 * Lake or Sierra Forest class feature set, AVX2 with VNNI but no AVX-512.
 *
 * How: Linux's CPUID faulting (arch_prctl(ARCH_SET_CPUID, 0); the CPU flag `cpuid_fault`, which
 * KVM guests have too) makes CPUID raise SIGSEGV in this process. The handler runs the real
 * CPUID with faulting briefly off, clears the hidden bits and steps over the instruction. The
 * setting is per thread and inherited by threads created later; execve resets it, and the
 * LD_PRELOAD in the environment sets it again in the new program. XGETBV is not masked: software
 * that checks the OS's ZMM state also checks CPUID's AVX512F first.
 *
 * Programs that install their own SIGSEGV handler (GCC's cc1plus does, to report internal errors)
 * keep it: sigaction() and signal() are interposed for SIGSEGV, record the program's action and
 * leave this one installed, which passes every fault that is not a CPUID on to it.
 *
 * What it cannot change: the microarchitecture (port count, caches, clock). Figures taken under
 * it are "this CPU's cores running their AVX2 code", which is what an AVX2-only machine runs, on
 * different silicon.
 * Prints "cpuid_mask: ..." to stderr and leaves CPUID alone if the CPU or kernel has no
 * faulting; KILN_CPUID_MASK_REQUIRED=1 makes that fatal instead.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifndef ARCH_GET_CPUID
#define ARCH_GET_CPUID 0x1011
#define ARCH_SET_CPUID 0x1012
#endif

static long set_cpuid_enabled(int enabled) { return syscall(SYS_arch_prctl, ARCH_SET_CPUID, enabled); }

#define BIT(n) (1u << (n))

/* Leaf 7 sub-leaf 0. */
static const unsigned hide7_ebx = BIT(16) /* AVX512F */ | BIT(17) /* DQ */ | BIT(21) /* IFMA */ |
                                  BIT(26) /* PF */ | BIT(27) /* ER */ | BIT(28) /* CD */ |
                                  BIT(30) /* BW */ | BIT(31) /* VL */;
static const unsigned hide7_ecx = BIT(1) /* VBMI */ | BIT(6) /* VBMI2 */ | BIT(11) /* VNNI */ |
                                  BIT(12) /* BITALG */ | BIT(14) /* VPOPCNTDQ */;
static const unsigned hide7_edx = BIT(2) /* 4VNNIW */ | BIT(3) /* 4FMAPS */ | BIT(8) /* VP2INTERSECT */ |
                                  BIT(22) /* AMX-BF16 */ | BIT(23) /* AVX512-FP16 */ | BIT(24) /* AMX-TILE */ |
                                  BIT(25) /* AMX-INT8 */;
/* Leaf 7 sub-leaf 1. */
static const unsigned hide71_eax = BIT(4) /* AVX-VNNI */ | BIT(5) /* AVX512-BF16 */ | BIT(21) /* AMX-FP16 */ |
                                   BIT(23) /* AVX-IFMA */;
static const unsigned hide71_edx = BIT(4) /* AVX-VNNI-INT8 */ | BIT(5) /* AVX-NE-CONVERT */ |
                                   BIT(8) /* AMX-COMPLEX */ | BIT(19) /* AVX10 */;
/* Leaf 0xD sub-leaf 0: the XSAVE state components the CPU supports (opmask, ZMM, AMX tiles). */
static const unsigned hide_d_eax = BIT(5) | BIT(6) | BIT(7) | BIT(17) | BIT(18);

static unsigned keep71_eax; /* BIT(4) under KILN_CPUID_MASK_KEEP_AVX_VNNI=1 */

static void masked_cpuid(unsigned leaf, unsigned sub, unsigned r[4]) {
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
    if (leaf == 7 && sub == 0) {
        r[1] &= ~hide7_ebx;
        r[2] &= ~hide7_ecx;
        r[3] &= ~hide7_edx;
    } else if (leaf == 7 && sub == 1) {
        r[0] &= ~(hide71_eax & ~keep71_eax);
        r[3] &= ~hide71_edx;
    } else if (leaf == 0xd && sub == 0) {
        r[0] &= ~hide_d_eax;
    } else if (leaf == 0x1d || leaf == 0x1e || leaf == 0x24) {
        r[0] = r[1] = r[2] = r[3] = 0; /* AMX tile and TMUL information, AVX10 converged ISA */
    }
}

typedef int (*sigaction_fn)(int, const struct sigaction*, struct sigaction*);

static sigaction_fn real_sigaction(void) {
    static sigaction_fn fn;
    if (!fn) fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
    return fn;
}

/* The SIGSEGV action the program asked for (SIG_DFL until it asks). */
static struct sigaction program_action;

int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    if (sig != SIGSEGV) return real_sigaction()(sig, act, old);
    if (old) *old = program_action;
    if (act) program_action = *act;
    return 0;
}

sighandler_t signal(int sig, sighandler_t handler) {
    struct sigaction act, old;
    memset(&act, 0, sizeof act);
    act.sa_handler = handler;
    act.sa_flags = SA_RESTART;
    sigemptyset(&act.sa_mask);
    if (sigaction(sig, &act, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

static void on_fault(int sig, siginfo_t* info, void* context) {
    ucontext_t* uc = (ucontext_t*)context;
    greg_t* g = uc->uc_mcontext.gregs;
    /* A faulting CPUID is a general-protection fault: si_code SI_KERNEL, RIP at the instruction. */
    if (info->si_code == SI_KERNEL) {
        const unsigned char* ip = (const unsigned char*)g[REG_RIP];
        if (ip[0] == 0x0f && ip[1] == 0xa2) {
            unsigned r[4];
            set_cpuid_enabled(1);
            masked_cpuid((unsigned)g[REG_RAX], (unsigned)g[REG_RCX], r);
            set_cpuid_enabled(0);
            g[REG_RAX] = r[0];
            g[REG_RBX] = r[1];
            g[REG_RCX] = r[2];
            g[REG_RDX] = r[3];
            g[REG_RIP] += 2;
            return;
        }
    }
    /* Not ours: the program's own handler, or the default action. */
    if (program_action.sa_flags & SA_SIGINFO) {
        program_action.sa_sigaction(sig, info, context);
    } else if (program_action.sa_handler != SIG_DFL && program_action.sa_handler != SIG_IGN) {
        program_action.sa_handler(sig);
    } else {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        real_sigaction()(sig, &dfl, NULL); /* returning re-runs the instruction, which faults again */
    }
}

__attribute__((constructor(101))) static void hide_features(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    const char* required = getenv("KILN_CPUID_MASK_REQUIRED");
    const char* keep_vnni = getenv("KILN_CPUID_MASK_KEEP_AVX_VNNI");
    if (keep_vnni && *keep_vnni == '1') keep71_eax = BIT(4);
    if (real_sigaction()(SIGSEGV, &sa, NULL) != 0 || set_cpuid_enabled(0) != 0) {
        fprintf(stderr, "cpuid_mask: CPUID faulting unavailable (no cpuid_fault flag?): AVX-512 not hidden\n");
        if (required && *required == '1') _exit(70);
    }
}
