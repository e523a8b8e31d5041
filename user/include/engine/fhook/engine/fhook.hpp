// libfhook: everything.
#pragma once

// core: errors, fds, the device and its session
#include <fhook/core/cpulist.hpp>
#include <fhook/core/device.hpp>
#include <fhook/core/error.hpp>
#include <fhook/core/fd.hpp>
#include <fhook/core/functions.hpp>
#include <fhook/core/latency.hpp>
#include <fhook/core/output.hpp>
#include <fhook/core/probe_def.hpp>
#include <fhook/core/session.hpp>

// sys: what the system says (kallsyms, BTF, ELF, ftrace, commands, signals)
#include <fhook/sys/btf.hpp>
#include <fhook/sys/command.hpp>
#include <fhook/sys/disasm.hpp>
#include <fhook/sys/elfsym.hpp>
#include <fhook/sys/ftrace_state.hpp>
#include <fhook/sys/ksyms.hpp>
#include <fhook/sys/signals.hpp>
#include <fhook/sys/usersyms.hpp>

// ring: ring buffers, records, record files
#include <fhook/ring/event.hpp>
#include <fhook/ring/recfile.hpp>
#include <fhook/ring/ring.hpp>

// probe: the probe languages
#include <fhook/probe/latency_plan.hpp>
#include <fhook/probe/probe.hpp>
#include <fhook/probe/spec.hpp>

// output: events, tables, histograms as text and JSON
#include <fhook/output/fields.hpp>
#include <fhook/output/format.hpp>
#include <fhook/output/latency_format.hpp>
#include <fhook/output/summary.hpp>
#include <fhook/output/trace_event.hpp>

// engine: the trace engine
#include <fhook/engine/sinks.hpp>
#include <fhook/engine/tracer.hpp>
