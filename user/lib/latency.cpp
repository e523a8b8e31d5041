#include "fhook/latency.hpp"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <set>

#include <fhook/format.hpp>

namespace fhook {

LatencyHist LatencyHist::since(const LatencyHist& earlier) const {
    auto minus = [](std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; };
    LatencyHist d;
    d.count = minus(count, earlier.count);
    d.sum_ns = minus(sum_ns, earlier.sum_ns);
    d.inflight = inflight;
    for (std::size_t i = 0; i < buckets.size(); i++) {
        d.buckets[i] = minus(buckets[i], earlier.buckets[i]);
    }
    return d;
}

std::pair<std::uint64_t, std::uint64_t> latency_bucket_range(std::size_t i) {
    if (i == 0) {
        return {0, 0};
    }
    const std::uint64_t lo = 1ULL << (i - 1);
    const std::uint64_t hi = i + 1 >= FHOOK_LAT_BUCKETS ? ~0ULL : (1ULL << i) - 1;
    return {lo, hi};
}

namespace {

std::string pad_left(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

} // namespace

std::string format_latency_text(const LatencyHist& h, std::string_view title) {
    std::string out;
    if (!title.empty()) {
        out.append(title).append("\n");
    }
    std::size_t first = h.buckets.size(), last = 0;
    std::uint64_t peak = 0;
    for (std::size_t i = 0; i < h.buckets.size(); i++) {
        if (h.buckets[i]) {
            first = std::min(first, i);
            last = i;
            peak = std::max(peak, h.buckets[i]);
        }
    }
    if (first == h.buckets.size()) {
        out += "     (no calls)\n";
    } else {
        constexpr std::size_t kBar = 40;
        out += pad_left("nsecs", 10) + std::string(15, ' ') + ": count    distribution\n";
        for (std::size_t i = first; i <= last; i++) {
            const auto [lo, hi] = latency_bucket_range(i);
            const std::string range = pad_left(std::to_string(lo), 20) + " -> " +
                                      (hi == ~0ULL ? std::string("...") : std::to_string(hi));
            const std::size_t stars =
                peak ? static_cast<std::size_t>((h.buckets[i] * kBar + peak - 1) / peak) : 0;
            out += pad_right(range, 40) + ": " + pad_right(std::to_string(h.buckets[i]), 8) + " |" +
                   std::string(std::min(stars, kBar), '*') +
                   std::string(kBar - std::min(stars, kBar), ' ') + "|\n";
        }
    }
    const std::uint64_t avg = h.count ? h.sum_ns / h.count : 0;
    out += "\navg = " + std::to_string(avg) + " nsecs, total: " + std::to_string(h.sum_ns) +
           " nsecs, count: " + std::to_string(h.count);
    if (h.inflight) {
        out += ", inside now: " + std::to_string(h.inflight);
    }
    out += "\n";
    return out;
}

std::string format_latency_json(const LatencyHist& h, std::string_view name) {
    std::string out = "{\"name\":";
    append_json_string(name, out);
    out += ",\"count\":" + std::to_string(h.count) + ",\"sum_ns\":" + std::to_string(h.sum_ns) +
           ",\"avg_ns\":" + std::to_string(h.count ? h.sum_ns / h.count : 0) +
           ",\"inflight\":" + std::to_string(h.inflight) + ",\"buckets\":[";
    bool first = true;
    for (std::size_t i = 0; i < h.buckets.size(); i++) {
        if (!h.buckets[i]) {
            continue;
        }
        const auto [lo, hi] = latency_bucket_range(i);
        out += first ? "" : ",";
        first = false;
        out += "{\"lo\":" + std::to_string(lo) + ",\"hi\":" + std::to_string(hi) +
               ",\"count\":" + std::to_string(h.buckets[i]) + "}";
    }
    out += "]}";
    return out;
}

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
    // never return: each call would stay inside the trampoline (and keep
    // the module) for good; the kernel's BPF refuses fexit on them too
    static const std::set<std::string> kNoReturn = {
        "do_exit",
        "do_group_exit",
        "make_task_dead",
        "kthread_exit",
        "kthread_complete_and_exit",
        "__x64_sys_exit",
        "__x64_sys_exit_group",
        "__ia32_sys_exit",
        "__ia32_sys_exit_group",
        "panic",
        "__module_put_and_kthread_exit",
    };
    const FunctionSelector selector({spec});
    std::set<std::string> seen;
    for (const auto& f : functions.functions()) {
        if (!selector.selects(f) || !seen.insert(f.name).second) {
            continue;
        }
        plan.selected++;
        if (kNoReturn.count(f.name)) {
            plan.skipped.push_back(f.name);
            plan.why.push_back("it never returns");
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
