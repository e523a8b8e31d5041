// libfhook: everything.
#pragma once

// core: errors, fds, the device and its session
#include <fhook/cpulist.hpp>
#include <fhook/device.hpp>
#include <fhook/error.hpp>
#include <fhook/fd.hpp>
#include <fhook/functions.hpp>
#include <fhook/latency.hpp>
#include <fhook/output.hpp>
#include <fhook/probe_def.hpp>
#include <fhook/session.hpp>

// sys: what the system says (kallsyms, BTF, ELF, ftrace, commands, signals)
#include <fhook/btf.hpp>
#include <fhook/command.hpp>
#include <fhook/disasm.hpp>
#include <fhook/elfsym.hpp>
#include <fhook/ftrace_state.hpp>
#include <fhook/ksyms.hpp>
#include <fhook/signals.hpp>
#include <fhook/usersyms.hpp>

// ring: ring buffers, records, record files
#include <fhook/event.hpp>
#include <fhook/recfile.hpp>
#include <fhook/ring.hpp>

// probe: the probe languages
#include <fhook/latency_plan.hpp>
#include <fhook/probe.hpp>
#include <fhook/spec.hpp>

// output: events, tables, histograms as text and JSON
#include <fhook/fields.hpp>
#include <fhook/format.hpp>
#include <fhook/latency_format.hpp>
#include <fhook/summary.hpp>
#include <fhook/trace_event.hpp>

// engine: the trace engine
#include <fhook/sinks.hpp>
#include <fhook/tracer.hpp>
