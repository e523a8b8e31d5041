// SPDX-License-Identifier: GPL-2.0
/* x86-64's registers as fetch programs name them (arch.h). */
#include "arch.h"

#include <linux/stddef.h>

const u16 fhook_arch_reg_offset[FHOOK_REG_MAX] = {
	[FHOOK_REG_AX] = offsetof(struct pt_regs, ax),
	[FHOOK_REG_BX] = offsetof(struct pt_regs, bx),
	[FHOOK_REG_CX] = offsetof(struct pt_regs, cx),
	[FHOOK_REG_DX] = offsetof(struct pt_regs, dx),
	[FHOOK_REG_SI] = offsetof(struct pt_regs, si),
	[FHOOK_REG_DI] = offsetof(struct pt_regs, di),
	[FHOOK_REG_BP] = offsetof(struct pt_regs, bp),
	[FHOOK_REG_SP] = offsetof(struct pt_regs, sp),
	[FHOOK_REG_R8] = offsetof(struct pt_regs, r8),
	[FHOOK_REG_R9] = offsetof(struct pt_regs, r9),
	[FHOOK_REG_R10] = offsetof(struct pt_regs, r10),
	[FHOOK_REG_R11] = offsetof(struct pt_regs, r11),
	[FHOOK_REG_R12] = offsetof(struct pt_regs, r12),
	[FHOOK_REG_R13] = offsetof(struct pt_regs, r13),
	[FHOOK_REG_R14] = offsetof(struct pt_regs, r14),
	[FHOOK_REG_R15] = offsetof(struct pt_regs, r15),
	[FHOOK_REG_IP] = offsetof(struct pt_regs, ip),
	[FHOOK_REG_FLAGS] = offsetof(struct pt_regs, flags),
	[FHOOK_REG_CS] = offsetof(struct pt_regs, cs),
	[FHOOK_REG_SS] = offsetof(struct pt_regs, ss),
	[FHOOK_REG_ORIG_AX] = offsetof(struct pt_regs, orig_ax),
};

const u8 fhook_arch_arg_regs[FHOOK_REG_ARGS] = {
	FHOOK_REG_DI, FHOOK_REG_SI, FHOOK_REG_DX, FHOOK_REG_CX, FHOOK_REG_R8, FHOOK_REG_R9,
};
