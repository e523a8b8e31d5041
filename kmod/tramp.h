/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by tramp.S and the C files: trampoline slots and the layout of
 * the trace-around trampoline's stack frame (struct fhook_around_frame,
 * checked against these numbers with BUILD_BUG_ON in hook.c).
 */
#ifndef FHOOK_TRAMP_H
#define FHOOK_TRAMP_H

/*
 * Trampolines are per slot: slot N's entry loads N and jumps to the code
 * of its kind, which finds its probe in a table.  Slots are global (all
 * sessions); a direct probe or hook holds one while it exists.
 */
#define FHOOK_NR_SLOTS		64
#define FHOOK_SLOT_LIST	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, \
	16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,		\
	32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,		\
	48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63

/* struct fhook_around_frame: a struct pt_regs (168 bytes), then these */
#define FHOOK_AF_SLOT		168
#define FHOOK_AF_TARGET		176
#define FHOOK_AF_SIZE		464

#endif /* FHOOK_TRAMP_H */
