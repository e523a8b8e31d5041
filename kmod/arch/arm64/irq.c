// SPDX-License-Identifier: GPL-2.0
/*
 * arm64 has no interrupt vectors with entry tracepoints of their own: its
 * timer and IPIs are irq descriptors, which irq_handler_entry sees.
 */
#include "fhook.h"

const char *const fhook_arch_irq_vectors[] = {};
