// fhook errors: what the watched functions' return types make a failure,
// for the module to judge (fhook_graph.zero_ips, none_ips).
#include <string>
#include <unordered_set>

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
// a pointer fails with NULL too, a bool with false when asked, and void,
// unsigned and other values never (the register holds a callee's value);
// signed integers keep the module's errno test, as does a function
// without a prototype.  Without addresses or BTF, errnos alone are judged.
void Tracer::State::plan_errors_types() {
    if (!functions || ksyms.empty() || ksyms.addresses_hidden() || !kernel_btf()) {
        return;
    }
    const FunctionSelector entries(specs);
    const FunctionSelector below(graph_below_specs());
    std::unordered_set<std::string> watched;
    for (const TraceableFunction& f : functions->functions()) {
        if (entries.selects(f) || (spec.graph->depth != 1 && below.selects(f))) {
            watched.insert(function_key(f.module, f.name));
        }
    }
    for (const SymbolRef& s : ksyms.text_symbols()) {
        if (!watched.contains(function_key(s.module, s.name))) {
            continue;
        }
        const KernelBtf* btf = s.module.empty() ? kernel_btf() : module_btf(std::string(s.module));
        const auto f = btf ? btf->function(s.name) : std::nullopt;
        if (!f) {
            continue;
        }
        switch (return_type(*btf, *f).kind) {
        case ReturnType::Kind::Pointer:
            errors_types.zero_fails.push_back(s.offset);
            break;
        case ReturnType::Kind::Bool:
            (spec.graph->false_fails ? errors_types.zero_fails : errors_types.never_fail)
                .push_back(s.offset);
            break;
        case ReturnType::Kind::None:
            errors_types.never_fail.push_back(s.offset);
            break;
        case ReturnType::Kind::Errno:
            break;
        }
    }
}

// The failure filter on an ENTRY's return register: "ret" as the
// entries' return type holds it (an int in the low 4 bytes, signed; a
// bool in the low byte), a long when no prototype says otherwise.
void Tracer::State::plan_fail_filter() {
    if (spec.graph->fail.empty()) {
        return;
    }
    ProbeField ret;
    ret.name = "ret";
    ret.text = "$retval";
    ret.type = signed_type(8);
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
        const ReturnType t = return_type(*btf, *proto);
        const FetchType type = t.kind == ReturnType::Kind::Errno  ? signed_type(t.size)
                               : t.kind == ReturnType::Kind::Bool ? unsigned_type(1)
                                                                  : unsigned_type(8);
        if (!typed.empty() && (type.kind != ret.type.kind || type.size != ret.type.size)) {
            throw_invalid("a filter on the return value needs entry functions of one return "
                          "type: " +
                          typed + " returns " + ret.type.name + ", " + f.name + " " + type.name);
        }
        typed = f.name;
        ret.type = type;
    }
    KprobeDef def;
    def.is_return = true;
    def.fields.push_back(ret);
    def.data_size = 8;
    try {
        fail_pred = compile_filter(spec.graph->fail, &def);
    } catch (const Error& e) {
        throw_invalid("the failure filter '" + spec.graph->fail + "': " + e.what());
    }
}

} // namespace fhook
