#include <event-parse.h>
#include <trace-seq.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <fhook/output/trace_event.hpp>

namespace fhook {

TraceEventPrinter::TraceEventPrinter(const Ksyms& ksyms)
    : ksyms_(ksyms), tep_(tep_alloc(), tep_free) {
    tep_set_loglevel(TEP_LOG_NONE); // a format it cannot print falls back quietly
    if (tep_) {
        tep_set_long_size(tep_.get(), sizeof(long));
        tep_set_page_size(tep_.get(), 4096);
        tep_set_function_resolver(tep_.get(), resolve, this);
    }
}

TraceEventPrinter::~TraceEventPrinter() = default;

// libtraceevent's function resolver: the kallsyms symbol containing *addr
// (*addr set to its start), or nullptr.
char* TraceEventPrinter::resolve(void* self, unsigned long long* addr, char** module) {
    auto* p = static_cast<TraceEventPrinter*>(self);
    const std::optional<SymbolRef> sym = p->ksyms_.lookup(*addr);
    if (!sym) {
        return nullptr;
    }
    const std::uint64_t start = *addr - sym->offset;
    auto [it, fresh] = p->names_.try_emplace(start);
    if (fresh) {
        it->second = {std::string(sym->name), std::string(sym->module)};
    }
    *addr = start;
    *module = it->second.second.empty() ? nullptr : it->second.second.data();
    return it->second.first.data();
}

bool TraceEventPrinter::append_syscall(const KprobeDef& def, const Event& event, std::string& out) {
    const bool enter = def.event.starts_with("sys_enter_");
    const std::string name = "sys_" + def.event.substr(enter ? 10 : 9);
    // the fields after __syscall_nr, each one unsigned long
    std::vector<std::pair<std::string, std::uint64_t>> args;
    for (const ProbeField& f : def.fields) {
        if (f.name == "__syscall_nr") {
            continue;
        }
        if (f.type.size != 8 || f.type.count || f.offset + 8u > event.data.size()) {
            return false;
        }
        std::uint64_t v = 0;
        std::memcpy(&v, event.data.data() + f.offset, 8);
        args.emplace_back(f.name, v);
    }
    char buf[32];
    if (!enter) {
        if (args.size() != 1) {
            return false;
        }
        std::snprintf(buf, sizeof(buf), "0x%" PRIx64, args.front().second);
        out += name + " -> " + buf;
        return true;
    }
    out += name + "(";
    for (std::size_t i = 0; i < args.size(); i++) {
        std::snprintf(buf, sizeof(buf), "%" PRIx64, args[i].second);
        out += (i ? ", " : "") + args[i].first + ": " + buf;
    }
    out += ")";
    return true;
}

bool TraceEventPrinter::append_event(const KprobeDef& def, const Event& event, std::string& out) {
    if (def.is_syscall_event()) {
        // the kernel prints these itself, not with their print fmt
        return append_syscall(def, event, out);
    }
    if (!tep_ || def.tp_format.empty() || failed_.count(def.tp_id)) {
        return false;
    }
    if (!parsed_.count(def.tp_id)) {
        tep_event* parsed = nullptr;
        const int err = tep_parse_format(tep_.get(), &parsed, def.tp_format.data(),
                                         def.tp_format.size(), def.group.c_str());
        if (err != 0 || !parsed || (parsed->flags & TEP_EVENT_FL_FAILED) ||
            static_cast<std::uint64_t>(parsed->id) != def.tp_id) {
            failed_.insert(def.tp_id);
            return false;
        }
        parsed_.insert(def.tp_id);
    }
    tep_record record{};
    record.data = const_cast<std::uint8_t*>(event.data.data());
    record.size = static_cast<int>(event.data.size());
    record.cpu = event.cpu;
    record.ts = event.ts;
    if (event.data.size() < 2 ||
        static_cast<std::uint64_t>(tep_data_type(tep_.get(), &record)) != def.tp_id) {
        return false;
    }
    trace_seq s;
    trace_seq_init(&s);
    tep_print_event(tep_.get(), &s, &record, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&s);
    const bool ok = s.state == TRACE_SEQ__GOOD;
    if (ok) {
        out += def.event;
        out += ": ";
        out.append(s.buffer, s.len);
    }
    trace_seq_destroy(&s);
    return ok;
}

} // namespace fhook
