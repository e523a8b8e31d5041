// ftrace's event formats and fhook's (tracedat_formats.hpp).
#include "tracedat_formats.hpp"

#include <fhook/output/tracedat.hpp>

namespace fhook {
namespace tracedat {

const char* const kCommonFields =
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

namespace {

std::string function_format() {
    return std::string("name: function\nID: 1\nformat:\n") + kCommonFields +
           "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
           "\tfield:unsigned long parent_ip;\toffset:16;\tsize:8;\tsigned:0;\n\n"
           "print fmt: \" %ps <-- %ps\", (void *)REC->ip, (void *)REC->parent_ip\n";
}

// ftrace's own events of the wakeup tracers (struct ctx_switch_entry,
// trace_entries.h): the wakeup and the switch of a latency trace
std::string sched_format(bool wakeup) {
    return std::string("name: ") + (wakeup ? "wakeup" : "context_switch") +
           "\nID: " + (wakeup ? "3" : "2") + "\nformat:\n" + kCommonFields +
           "\tfield:unsigned int prev_pid;\toffset:8;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned int next_pid;\toffset:12;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned int next_cpu;\toffset:16;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned char prev_prio;\toffset:20;\tsize:1;\tsigned:0;\n"
           "\tfield:unsigned char prev_state;\toffset:21;\tsize:1;\tsigned:0;\n"
           "\tfield:unsigned char next_prio;\toffset:22;\tsize:1;\tsigned:0;\n"
           "\tfield:unsigned char next_state;\toffset:23;\tsize:1;\tsigned:0;\n\n"
           "print fmt: \"%u:%u:%u  " +
           (wakeup ? "+" : "==>") +
           " %u:%u:%u [%03u]\", REC->prev_pid, REC->prev_prio, REC->prev_state, "
           "REC->next_pid, REC->next_prio, REC->next_state, REC->next_cpu\n";
}

// ftrace's own graph events (6.1's layout), so that trace-cmd report draws
// the call trees with its function_graph printer
std::string graph_entry_format() {
    return std::string("name: funcgraph_entry\nID: 11\nformat:\n") + kCommonFields +
           "\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
           "\tfield:int depth;\toffset:16;\tsize:4;\tsigned:1;\n\n"
           "print fmt: \"--> %ps (%d)\", (void *)REC->func, REC->depth\n";
}

std::string graph_exit_format() {
    return std::string("name: funcgraph_exit\nID: 10\nformat:\n") + kCommonFields +
           "\tfield:unsigned long func;\toffset:8;\tsize:8;\tsigned:0;\n"
           "\tfield:int depth;\toffset:16;\tsize:4;\tsigned:1;\n"
           "\tfield:unsigned int overrun;\toffset:20;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned long long calltime;\toffset:24;\tsize:8;\tsigned:0;\n"
           "\tfield:unsigned long long rettime;\toffset:32;\tsize:8;\tsigned:0;\n\n"
           "print fmt: \"<-- %ps (%d) (start: %llx  end: %llx) over: %d\", (void *)REC->func, "
           "REC->depth, REC->calltime, REC->rettime, REC->depth\n";
}

// kernel_stack: the callers up to the record's end (trace-cmd's stack
// handler reads them so; the declared array is the kernel's 8)
std::string stack_format() {
    return std::string("name: kernel_stack\nID: 4\nformat:\n") + kCommonFields +
           "\tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n"
           "\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n\n"
           "print fmt: \"\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n"
           "\\t=> %ps\\n\\t=> %ps\\n\", (void *)REC->caller[0], (void *)REC->caller[1], "
           "(void *)REC->caller[2], (void *)REC->caller[3], (void *)REC->caller[4], "
           "(void *)REC->caller[5], (void *)REC->caller[6], (void *)REC->caller[7]\n";
}

// struct hwlat_entry, 6.1's and 6.12's layout
std::string hwlat_format() {
    return std::string("name: hwlat\nID: 15\nformat:\n") + kCommonFields +
           "\tfield:u64 duration;\toffset:8;\tsize:8;\tsigned:0;\n"
           "\tfield:u64 outer_duration;\toffset:16;\tsize:8;\tsigned:0;\n"
           "\tfield:u64 nmi_total_ts;\toffset:24;\tsize:8;\tsigned:0;\n"
           "\tfield:s64 tv_sec;\toffset:32;\tsize:8;\tsigned:1;\n"
           "\tfield:long tv_nsec;\toffset:40;\tsize:8;\tsigned:1;\n"
           "\tfield:unsigned int nmi_count;\toffset:48;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned int seqnum;\toffset:52;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned int count;\toffset:56;\tsize:4;\tsigned:0;\n\n"
           "print fmt: \"cnt:%u\\tts:%010llu.%010lu\\tinner:%llu\\touter:%llu\\tcount:%d\\t"
           "nmi-ts:%llu\\tnmi-count:%u\\n\", REC->seqnum, REC->tv_sec, REC->tv_nsec, "
           "REC->duration, REC->outer_duration, REC->count, REC->nmi_total_ts, REC->nmi_count\n";
}

// struct osnoise_entry
std::string osnoise_format() {
    return std::string("name: osnoise\nID: 16\nformat:\n") + kCommonFields +
           "\tfield:u64 noise;\toffset:8;\tsize:8;\tsigned:0;\n"
           "\tfield:u64 runtime;\toffset:16;\tsize:8;\tsigned:0;\n"
           "\tfield:u64 max_sample;\toffset:24;\tsize:8;\tsigned:0;\n"
           "\tfield:unsigned int hw_count;\toffset:32;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned int nmi_count;\toffset:36;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned int irq_count;\toffset:40;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned int softirq_count;\toffset:44;\tsize:4;\tsigned:0;\n"
           "\tfield:unsigned int thread_count;\toffset:48;\tsize:4;\tsigned:0;\n\n"
           "print fmt: \"noise:%llu\\tmax_sample:%llu\\thw:%u\\tnmi:%u\\tirq:%u\\tsoftirq:%u\\t"
           "thread:%u\\n\", REC->noise, REC->max_sample, REC->hw_count, REC->nmi_count, "
           "REC->irq_count, REC->softirq_count, REC->thread_count\n";
}

// struct timerlat_entry
std::string timerlat_format() {
    return std::string("name: timerlat\nID: 17\nformat:\n") + kCommonFields +
           "\tfield:unsigned int seqnum;\toffset:8;\tsize:4;\tsigned:0;\n"
           "\tfield:int context;\toffset:12;\tsize:4;\tsigned:1;\n"
           "\tfield:u64 timer_latency;\toffset:16;\tsize:8;\tsigned:0;\n\n"
           "print fmt: \"seq:%u\\tcontext:%d\\ttimer_latency:%llu\\n\", REC->seqnum, "
           "REC->context, REC->timer_latency\n";
}

} // namespace

std::string hook_format(std::uint32_t id) {
    return "name: hook_" + std::to_string(id) + "\nID: " + std::to_string(kHookBase + id) +
           "\nformat:\n" + kCommonFields +
           "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
           "\tfield:unsigned long ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n"
           "\tfield:s64 ret;\toffset:24;\tsize:8;\tsigned:1;\n"
           "\tfield:u64 duration;\toffset:32;\tsize:8;\tsigned:0;\n"
           "\tfield:u32 action;\toffset:40;\tsize:4;\tsigned:0;\n\n"
           "print fmt: \"(%ps <- %ps) ret=%lld duration=%lluns action=%u\", (void *)REC->ip, "
           "(void *)REC->ret_ip, REC->ret, REC->duration, REC->action\n";
}

std::string noise_format() {
    return std::string("name: sample_threshold\nID: ") + std::to_string(kNoiseId) + "\nformat:\n" +
           kCommonFields +
           "\tfield:u64 start;\toffset:8;\tsize:8;\tsigned:0;\n"
           "\tfield:u64 duration;\toffset:16;\tsize:8;\tsigned:0;\n"
           "\tfield:u64 interference;\toffset:24;\tsize:8;\tsigned:0;\n\n"
           "print fmt: \"start %llu duration %llu ns interference %llu\", REC->start, "
           "REC->duration, REC->interference\n";
}

std::vector<std::string> ftrace_formats() {
    return {function_format(), sched_format(false), sched_format(true),
            stack_format(),    graph_exit_format(), graph_entry_format(),
            hwlat_format(),    osnoise_format(),    timerlat_format()};
}

} // namespace tracedat

namespace {

// Bytes before a definition's fields in its events: the common fields,
// then __probe_ip (entry probes) or __probe_func and __probe_ret_ip.
std::size_t probe_prefix(const KprobeDef& def) {
    return 8 + (def.is_return ? 16 : 8);
}

// The C type, size and printf conversion of a field.
struct FieldDecl {
    std::string type;
    std::size_t size = 0;
    bool is_signed = false;
    std::string conv; // "" = not printed (arrays)
};

FieldDecl declare(const FetchType& t) {
    FieldDecl d;
    const std::string bits = std::to_string(t.size * 8);
    switch (t.kind) {
    case FetchType::Kind::Signed:
        d.type = "s" + bits;
        d.is_signed = true;
        d.conv = t.size == 8 ? "%lld" : "%d";
        break;
    case FetchType::Kind::Hex:
    case FetchType::Kind::Bitfield:
        d.type = "u" + bits;
        d.conv = t.size == 8 ? "0x%llx" : "0x%x";
        break;
    case FetchType::Kind::Char:
        d.type = "u8";
        d.conv = "%c";
        break;
    case FetchType::Kind::Symbol:
        d.type = "u64";
        d.conv = "%pS";
        break;
    case FetchType::Kind::String:
    case FetchType::Kind::UString:
        d.type = "__data_loc char[]";
        d.size = 4;
        d.conv = "\\\"%s\\\"";
        return d;
    default:
        d.type = "u" + bits;
        d.conv = t.size == 8 ? "%llu" : "%u";
        break;
    }
    d.size = t.size;
    if (t.count) {
        d.type += "[" + std::to_string(t.count) + "]";
        d.size *= t.count;
        d.conv.clear();
    }
    return d;
}

} // namespace

std::string TraceDatWriter::probe_format(const KprobeDef& def, std::uint32_t id) {
    std::string fields, print, args;
    std::size_t off = probe_prefix(def);
    if (def.is_return) {
        fields += "\tfield:unsigned long __probe_func;\toffset:8;\tsize:8;\tsigned:0;\n"
                  "\tfield:unsigned long __probe_ret_ip;\toffset:16;\tsize:8;\tsigned:0;\n";
        print = "(%pS <- %ps)";
        args = ", (void *)REC->__probe_ret_ip, (void *)REC->__probe_func";
    } else {
        fields += "\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n";
        print = "(%pS)";
        args = ", (void *)REC->__probe_ip";
    }
    for (const ProbeField& f : def.fields) {
        const FieldDecl d = declare(f.type);
        fields +=
            "\tfield:" + d.type + " " + f.name + ";\toffset:" + std::to_string(off + f.offset) +
            ";\tsize:" + std::to_string(d.size) + ";\tsigned:" + (d.is_signed ? "1" : "0") + ";\n";
        if (d.conv.empty()) {
            continue;
        }
        print += " " + f.name + "=" + d.conv;
        args += f.type.is_string() ? ", __get_str(" + f.name + ")" : ", REC->" + f.name;
    }
    return "name: " + def.event + "\nID: " + std::to_string(tracedat::kProbeBase + id) +
           "\nformat:\n" + tracedat::kCommonFields + fields + "\nprint fmt: \"" + print + "\"" +
           args + "\n";
}

} // namespace fhook
