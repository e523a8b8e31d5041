// SPDX-License-Identifier: GPL-2.0
/* arm64's registers as fetch programs name them (arch.h). */
#include "arch.h"

#include <linux/stddef.h>

const u16 fhook_arch_reg_offset[FHOOK_REG_MAX] = {
	[FHOOK_REG_X0] = offsetof(struct pt_regs, regs[0]),
	[FHOOK_REG_X0 + 1] = offsetof(struct pt_regs, regs[1]),
	[FHOOK_REG_X0 + 2] = offsetof(struct pt_regs, regs[2]),
	[FHOOK_REG_X0 + 3] = offsetof(struct pt_regs, regs[3]),
	[FHOOK_REG_X0 + 4] = offsetof(struct pt_regs, regs[4]),
	[FHOOK_REG_X0 + 5] = offsetof(struct pt_regs, regs[5]),
	[FHOOK_REG_X0 + 6] = offsetof(struct pt_regs, regs[6]),
	[FHOOK_REG_X0 + 7] = offsetof(struct pt_regs, regs[7]),
	[FHOOK_REG_X0 + 8] = offsetof(struct pt_regs, regs[8]),
	[FHOOK_REG_X0 + 9] = offsetof(struct pt_regs, regs[9]),
	[FHOOK_REG_X0 + 10] = offsetof(struct pt_regs, regs[10]),
	[FHOOK_REG_X0 + 11] = offsetof(struct pt_regs, regs[11]),
	[FHOOK_REG_X0 + 12] = offsetof(struct pt_regs, regs[12]),
	[FHOOK_REG_X0 + 13] = offsetof(struct pt_regs, regs[13]),
	[FHOOK_REG_X0 + 14] = offsetof(struct pt_regs, regs[14]),
	[FHOOK_REG_X0 + 15] = offsetof(struct pt_regs, regs[15]),
	[FHOOK_REG_X0 + 16] = offsetof(struct pt_regs, regs[16]),
	[FHOOK_REG_X0 + 17] = offsetof(struct pt_regs, regs[17]),
	[FHOOK_REG_X0 + 18] = offsetof(struct pt_regs, regs[18]),
	[FHOOK_REG_X0 + 19] = offsetof(struct pt_regs, regs[19]),
	[FHOOK_REG_X0 + 20] = offsetof(struct pt_regs, regs[20]),
	[FHOOK_REG_X0 + 21] = offsetof(struct pt_regs, regs[21]),
	[FHOOK_REG_X0 + 22] = offsetof(struct pt_regs, regs[22]),
	[FHOOK_REG_X0 + 23] = offsetof(struct pt_regs, regs[23]),
	[FHOOK_REG_X0 + 24] = offsetof(struct pt_regs, regs[24]),
	[FHOOK_REG_X0 + 25] = offsetof(struct pt_regs, regs[25]),
	[FHOOK_REG_X0 + 26] = offsetof(struct pt_regs, regs[26]),
	[FHOOK_REG_X0 + 27] = offsetof(struct pt_regs, regs[27]),
	[FHOOK_REG_X0 + 28] = offsetof(struct pt_regs, regs[28]),
	[FHOOK_REG_X0 + 29] = offsetof(struct pt_regs, regs[29]),
	[FHOOK_REG_X0 + 30] = offsetof(struct pt_regs, regs[30]),
	[FHOOK_REG_SP] = offsetof(struct pt_regs, sp),
	[FHOOK_REG_PC] = offsetof(struct pt_regs, pc),
	[FHOOK_REG_PSTATE] = offsetof(struct pt_regs, pstate),
};

const u8 fhook_arch_arg_regs[FHOOK_REG_ARGS] = {
	FHOOK_REG_X0, FHOOK_REG_X0 + 1, FHOOK_REG_X0 + 2, FHOOK_REG_X0 + 3,
	FHOOK_REG_X0 + 4, FHOOK_REG_X0 + 5, FHOOK_REG_X0 + 6, FHOOK_REG_X0 + 7,
};
