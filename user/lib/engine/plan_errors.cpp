// fhook errors: what the watched functions' return types make a failure,
// for the module to judge (fhook_graph.zero_ips, none_ips).
#include <algorithm>
#include <string>
#include <unordered_map>

#include <fhook/probe/probe.hpp>
#include <fhook/probe/retval.hpp>

#include "tracer_state.hpp"

namespace fhook {

namespace {

std::string function_key(std::string_view module, std::string_view name) {
    std::string key(module);
    key += '\0';
    key += name;
    return key;
}

FetchType signed_type(unsigned size) {
    FetchType t;
    t.kind = FetchType::Kind::Signed;
    t.size = size;
    t.name = "s" + std::to_string(size * 8);
    return t;
}

FetchType unsigned_type(unsigned size) {
    FetchType t = signed_type(size);
    t.kind = FetchType::Kind::Unsigned;
    t.name[0] = 'u';
    return t;
}

} // namespace

// Each watched function (an ENTRY, or one below) by its BTF return type:
// a pointer fails with NULL too, a bool with false when asked (else
// never), and void, small unsigned and other values never (the register
// holds a callee's value); errno-sized integers keep the module's errno
// test, as does a function without a prototype, or one whose name its
// kernel or module gives to several (static) functions.  Without
// addresses or BTF, or past what the module takes, values are judged
// alone.
void Tracer::State::plan_errors_types() {
    if (!functions || ksyms.empty() || ksyms.addresses_hidden() || !kernel_btf()) {
        return;
    }
    const FunctionSelector entries(specs);
    const FunctionSelector below(graph_below_specs());
    // (module, name) -> its text symbols' addresses
    std::unordered_map<std::string, std::vector<std::uint64_t>> watched;
    for (const TraceableFunction& f : functions->functions()) {
        if (entries.selects(f) || (spec.graph->depth != 1 && below.selects(f))) {
            watched.try_emplace(function_key(f.module, f.name));
        }
    }
    for (const SymbolRef& s : ksyms.text_symbols()) {
        if (auto it = watched.find(function_key(s.module, s.name)); it != watched.end()) {
            it->second.push_back(s.offset);
        }
    }
    for (const auto& [key, addrs] : watched) {
        if (addrs.size() != 1) {
            continue;
        }
        const std::string module = key.substr(0, key.find('\0'));
        const std::string name = key.substr(key.find('\0') + 1);
        const KernelBtf* btf = module.empty() ? kernel_btf() : module_btf(module);
        const auto f = btf ? btf->function(name) : std::nullopt;
        if (!f) {
            continue;
        }
        switch (return_type(*btf, *f).kind) {
        case ReturnType::Kind::Pointer:
            errors_types.zero_fails.push_back(addrs.front());
            break;
        case ReturnType::Kind::Bool:
            (spec.graph->false_fails ? errors_types.false_fails : errors_types.never_fail)
                .push_back(addrs.front());
            break;
        case ReturnType::Kind::None:
            errors_types.never_fail.push_back(addrs.front());
            break;
        case ReturnType::Kind::Errno:
            break;
        }
    }
    for (auto* list :
         {&errors_types.zero_fails, &errors_types.never_fail, &errors_types.false_fails}) {
        std::sort(list->begin(), list->end());
        list->erase(std::unique(list->begin(), list->end()), list->end());
        if (list->size() > FHOOK_MAX_IPS) {
            list->clear();
        }
    }
}

// "ret", a long until the entries' return type says otherwise
static ProbeField fail_ret_field() {
    ProbeField ret;
    ret.name = "ret";
    ret.text = "$retval";
    ret.type = signed_type(8);
    return ret;
}

// The filter on "ret", @ret's field; a bad expression named in the error.
static std::vector<fhook_insn> compile_fail_filter(const std::string& expr, const ProbeField& ret) {
    KprobeDef def;
    def.is_return = true;
    def.fields.push_back(ret);
    def.data_size = 8;
    try {
        return compile_filter(expr, &def);
    } catch (const Error& e) {
        throw_invalid("the failure filter '" + expr + "': " + e.what());
    }
}

// The failure filter on an ENTRY's return register: "ret" as the
// entries' return type holds it (an int in the low 4 bytes, signed; a
// bool in the low byte), a long when no prototype says otherwise; a void
// entry has none.
void Tracer::State::plan_fail_filter() {
    if (spec.graph->fail.empty()) {
        return;
    }
    ProbeField ret = fail_ret_field();
    std::string typed; // the entry whose type it is
    const FunctionSelector entries(specs);
    const std::vector<TraceableFunction> none;
    for (const TraceableFunction& f : functions ? functions->functions() : none) {
        if (!entries.selects(f)) {
            continue;
        }
        const KernelBtf* btf = f.module.empty() ? kernel_btf() : module_btf(f.module);
        const auto proto = btf ? btf->function(f.name) : std::nullopt;
        if (!proto) {
            continue;
        }
        if (proto->ret == 0) {
            throw_invalid(f.name + " returns void: no value to filter on");
        }
        // (pointers, structs: the register; integers and enums as wide as they are)
        const KernelBtf::Kind kind = btf->kind(proto->ret);
        const std::uint32_t size = kind == KernelBtf::Kind::Int || kind == KernelBtf::Kind::Enum
                                       ? btf->size(proto->ret)
                                       : 8;
        const FetchType type = size > 8 || (size & (size - 1)) != 0 ? unsigned_type(8)
                               : btf->is_signed(proto->ret)         ? signed_type(size)
                                                                    : unsigned_type(size);
        if (!typed.empty() && (type.kind != ret.type.kind || type.size != ret.type.size)) {
            throw_invalid("a filter on the return value needs entry functions of one return "
                          "type: " +
                          typed + " returns " + ret.type.name + ", " + f.name + " " + type.name);
        }
        typed = f.name;
        ret.type = type;
    }
    fail_pred = compile_fail_filter(spec.graph->fail, ret);
}

// A failure filter's syntax and field names, before the seconds that
// kallsyms and BTF take under emulation: "ret" as a long (the entries'
// type, which plan_fail_filter() finds later, changes no name or operator).
void Tracer::State::check_fail_filter() {
    if (!spec.graph || spec.graph->fail.empty()) {
        return;
    }
    compile_fail_filter(spec.graph->fail, fail_ret_field());
}

} // namespace fhook
