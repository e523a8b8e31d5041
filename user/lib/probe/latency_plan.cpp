#include <algorithm>
#include <set>

#include <fhook/probe/latency_plan.hpp>

namespace fhook {

std::uint32_t stack_arg_words(const KernelBtf& btf, const KernelBtf::Function& f) {
    // x86-64 SysV: six integer registers; larger structs go on the stack
    std::uint32_t regs = 0, words = 0;
    for (const auto& param : f.params) {
        const std::uint32_t size = btf.size(param.type);
        const std::uint32_t n = (size + 7) / 8;
        if (size <= 16 && regs + n <= 6) {
            regs += n;
        } else {
            words += n;
        }
    }
    return words;
}

LatencyStackPlan plan_latency_stack(const ProbeSpec& spec, const FunctionList& functions,
                                    const KernelBtf* vmlinux_btf,
                                    const ModuleBtfProvider& module_btf) {
    LatencyStackPlan plan;
    // may never return: each such call would stay inside the trampoline
    // (and keep the module) for good; the module refuses them (EDEADLK),
    // the kernel's BPF refuses fexit on them too
    static const std::set<std::string> kNoReturn = {FHOOK_NORETURN_FUNCS};
    const FunctionSelector selector({spec});
    std::set<std::string> seen;
    for (const auto& f : functions.functions()) {
        if (!selector.selects(f) || !seen.insert(f.name).second) {
            continue;
        }
        plan.selected++;
        // (a compiler clone, "do_exit.cold", is the function too)
        if (kNoReturn.count(f.name.substr(0, f.name.find('.')))) {
            plan.skipped.push_back(f.name);
            plan.why.push_back("a call of it may never return (its task exits inside)");
            continue;
        }
        // a module's function is in its own BTF (split on vmlinux's)
        const KernelBtf* btf =
            f.module.empty() ? vmlinux_btf : (module_btf ? module_btf(f.module) : nullptr);
        std::optional<KernelBtf::Function> proto;
        if (btf) {
            proto = btf->function(f.name);
        }
        if (!proto) {
            // all it can; the module takes that only from CAP_SYS_ADMIN
            plan.stack_args = FHOOK_HOOK_MAX_STACK_ARGS;
            plan.timed.emplace_back(f.name, f.module);
            continue;
        }
        if (proto->variadic) {
            plan.skipped.push_back(f.name);
            plan.why.push_back("variadic: its stack arguments are unbounded");
            continue;
        }
        const std::uint32_t words = stack_arg_words(*btf, *proto);
        if (words > FHOOK_HOOK_MAX_STACK_ARGS) {
            plan.skipped.push_back(f.name);
            plan.why.push_back("its arguments take " + std::to_string(words) +
                               " stack words, the trampoline copies " +
                               std::to_string(FHOOK_HOOK_MAX_STACK_ARGS));
            continue;
        }
        plan.stack_args = std::max(plan.stack_args, words);
        plan.timed.emplace_back(f.name, f.module);
    }
    return plan;
}

} // namespace fhook
