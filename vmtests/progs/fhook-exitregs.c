// SPDX-License-Identifier: GPL-2.0
/*
 * fhook-exitregs ADDR... [START-END]...: exit with chosen registers.  For
 * every address given (and every byte of each START-END range, all hex),
 * children exit with it in each general register and the stack pointer
 * (16 addresses per child), once through exit_group() and once by jumping
 * to the first (a kernel address: SIGSEGV, so the saved instruction
 * pointer is forged too).  What a user puts in the registers it exits
 * with is at the top of its kernel stack while do_exit() runs; fhook's
 * exit walk (kmod/frames.c) must never take one for a trampoline frame
 * (issue 41: a forged frame would count out a call of someone else's).
 * Prints "exits N syscall N segv N"; exit 1 if a child ended otherwise.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* x86-64: rax (the jump target), rbx ... r15, rsp; arm64: x0 (the target), 14 more, sp */
#define NREGS 16

#if defined(__aarch64__)
/* x1..x6, x19..x22, x29, x30, x9, x10 and sp from v[1..15] */
#define FHOOK_LOAD_REGS					\
	"ldp x1, x2, [x0, #0x08]\n\t"			\
	"ldp x3, x4, [x0, #0x18]\n\t"			\
	"ldp x5, x6, [x0, #0x28]\n\t"			\
	"ldp x19, x20, [x0, #0x38]\n\t"		\
	"ldp x21, x22, [x0, #0x48]\n\t"		\
	"ldp x29, x30, [x0, #0x58]\n\t"		\
	"ldp x9, x10, [x0, #0x68]\n\t"			\
	"ldr x11, [x0, #0x78]\n\t"			\
	"mov sp, x11\n\t"

static void __attribute__((noreturn)) forged_end(const unsigned long *v, int jump)
{
	register const unsigned long *x0 asm("x0") = v;

	if (jump)
		asm volatile(FHOOK_LOAD_REGS
			     "ldr x0, [x0]\n\t"
			     "br x0"
			     : : "r"(x0) : "memory");
	else
		asm volatile(FHOOK_LOAD_REGS
			     "mov x8, #94\n\t"	/* exit_group */
			     "svc #0"
			     : : "r"(x0) : "memory");
	__builtin_unreachable();
}
#else
static void __attribute__((noreturn)) forged_end(const unsigned long *v, int jump)
{
	if (jump)
		asm volatile("movq 0x08(%%rax), %%rbx\n\t"
			     "movq 0x10(%%rax), %%rcx\n\t"
			     "movq 0x18(%%rax), %%rdx\n\t"
			     "movq 0x20(%%rax), %%rsi\n\t"
			     "movq 0x28(%%rax), %%rdi\n\t"
			     "movq 0x30(%%rax), %%rbp\n\t"
			     "movq 0x38(%%rax), %%r8\n\t"
			     "movq 0x40(%%rax), %%r9\n\t"
			     "movq 0x48(%%rax), %%r10\n\t"
			     "movq 0x50(%%rax), %%r11\n\t"
			     "movq 0x58(%%rax), %%r12\n\t"
			     "movq 0x60(%%rax), %%r13\n\t"
			     "movq 0x68(%%rax), %%r14\n\t"
			     "movq 0x70(%%rax), %%r15\n\t"
			     "movq 0x78(%%rax), %%rsp\n\t"
			     "movq 0x00(%%rax), %%rax\n\t"
			     "jmp *%%rax"
			     : : "a"(v) : "memory");
	else	/* (the kernel saves rip and rflags in rcx and r11: not ours) */
		asm volatile("movq 0x08(%%rax), %%rbx\n\t"
			     "movq 0x18(%%rax), %%rdx\n\t"
			     "movq 0x20(%%rax), %%rsi\n\t"
			     "movq 0x28(%%rax), %%rdi\n\t"
			     "movq 0x30(%%rax), %%rbp\n\t"
			     "movq 0x38(%%rax), %%r8\n\t"
			     "movq 0x40(%%rax), %%r9\n\t"
			     "movq 0x48(%%rax), %%r10\n\t"
			     "movq 0x58(%%rax), %%r12\n\t"
			     "movq 0x60(%%rax), %%r13\n\t"
			     "movq 0x68(%%rax), %%r14\n\t"
			     "movq 0x70(%%rax), %%r15\n\t"
			     "movq 0x78(%%rax), %%rsp\n\t"
			     "movl $231, %%eax\n\t"	/* exit_group */
			     "syscall"
			     : : "a"(v) : "memory");
	__builtin_unreachable();
}
#endif

static unsigned long *addrs;
static size_t naddrs, cap;

static void add(unsigned long a)
{
	if (naddrs == cap) {
		cap = cap ? 2 * cap : 256;
		addrs = realloc(addrs, cap * sizeof(*addrs));
		if (!addrs) {
			perror("fhook-exitregs");
			exit(2);
		}
	}
	addrs[naddrs++] = a;
}

int main(int argc, char **argv)
{
	unsigned long exits = 0, bysys = 0, bysegv = 0;
	int i, bad = 0;

	for (i = 1; i < argc; i++) {
		unsigned long a, b;
		char *end;

		a = strtoul(argv[i], &end, 16);
		if (*end == '-') {
			b = strtoul(end + 1, &end, 16);
			if (*end || b < a || b - a > 1 << 20)
				goto usage;
			for (; a < b; a++)
				add(a);
		} else if (*end || end == argv[i]) {
			goto usage;
		} else {
			add(a);
		}
	}
	if (!naddrs)
		goto usage;
	for (size_t k = 0; k < naddrs; k += NREGS) {
		unsigned long v[NREGS];
		int jump;

		for (i = 0; i < NREGS; i++)
			v[i] = addrs[(k + i) % naddrs];
		for (jump = 0; jump < 2; jump++) {
			pid_t pid = fork();
			int st;

			if (pid < 0) {
				perror("fhook-exitregs: fork");
				return 2;
			}
			if (!pid)
				forged_end(v, jump);
			if (waitpid(pid, &st, 0) != pid) {
				perror("fhook-exitregs: waitpid");
				return 2;
			}
			exits++;
			if (!jump && WIFEXITED(st)) {
				bysys++;
			} else if (jump && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV) {
				bysegv++;
			} else {
				fprintf(stderr, "fhook-exitregs: child %s with status 0x%x\n",
					jump ? "jumping" : "exiting", st);
				bad = 1;
			}
		}
	}
	printf("exits %lu syscall %lu segv %lu\n", exits, bysys, bysegv);
	return bad;
usage:
	fprintf(stderr, "usage: fhook-exitregs ADDR|START-END... (hex)\n");
	return 2;
}
