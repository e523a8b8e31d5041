// SPDX-License-Identifier: GPL-2.0
/*
 * x86's interrupt vectors with entry tracepoints of their own
 * (arch/x86/include/asm/trace/irq_vectors.h): interrupts that
 * irq_handler_entry does not see.  A kernel without one (its config
 * leaves the vector out) does not find it by name.
 */
#include "fhook.h"

const char *const fhook_arch_irq_vectors[FHOOK_ARCH_NR_IRQ_VECTORS] = {
	"local_timer_entry",
	"reschedule_entry",
	"call_function_entry",
	"call_function_single_entry",
	"irq_work_entry",
	"x86_platform_ipi_entry",
	"error_apic_entry",
	"spurious_apic_entry",
	"thermal_apic_entry",
	"threshold_apic_entry",
	"deferred_error_apic_entry",
};
