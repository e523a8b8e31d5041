/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fhook_testmod's trace event: the kernel ftrace ring's side of the
 * transport benchmark ("bench N SIZE" writes N of them, SIZE payload
 * bytes each, read back through trace_pipe_raw).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fhook_testmod

#if !defined(FHOOK_TESTMOD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define FHOOK_TESTMOD_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(fhook_testmod_bench,
	TP_PROTO(const u64 *payload, unsigned int len),
	TP_ARGS(payload, len),
	TP_STRUCT__entry(
		__dynamic_array(u8, payload, len)
	),
	TP_fast_assign(
		memcpy(__get_dynamic_array(payload), payload, len);
	),
	TP_printk("len=%u", __get_dynamic_array_len(payload))
);

#endif /* FHOOK_TESTMOD_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fhook_testmod_trace
#include <trace/define_trace.h>
