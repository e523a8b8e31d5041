#include <cinttypes>
#include <cstdio>
#include <nlohmann/json.hpp>

#include <fhook/core/arch.hpp>
#include <fhook/output/explain.hpp>

namespace fhook {

namespace {

using Json = nlohmann::ordered_json;

std::string hex(std::uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
    return buf;
}

std::string bytes_text(const std::vector<std::uint8_t>& bytes) {
    std::string out;
    char buf[4];
    for (std::uint8_t b : bytes) {
        std::snprintf(buf, sizeof(buf), "%02x", b);
        out += out.empty() ? "" : " ";
        out += buf;
    }
    return out;
}

std::string breakpoint_note(const Insn& insn) {
    return std::string("   <- ") + (insn.mnemonic == "brk" ? "a brk" : "an int3") +
           ": a kprobe (not on the ftrace site)";
}

std::string site_note(const SiteView& v, bool armed) {
    const Insn& insn = v.insns[*v.site];
    switch (site_state(insn)) {
    case SiteState::Nop: // (x86-64's is 5 bytes, arm64's BL's place 4)
        return "   <- ftrace site: a " + std::to_string(insn.bytes.size()) +
               "-byte NOP, nothing traces the function";
    case SiteState::Call:
        return "   <- ftrace site: call " + (insn.target ? v.targets[*v.site] : insn.operands);
    case SiteState::Int3:
        return breakpoint_note(insn);
    case SiteState::Jump:
        return "   <- a jump: an optimized kprobe's detour";
    default:
        return armed ? "   <- ftrace site: neither a NOP nor a call"
                     : "   <- not an ftrace site (the function has no fentry call)";
    }
}

void view_text(const SiteView& v, bool armed, std::string& out) {
    for (std::size_t i = 0; i < v.insns.size(); i++) {
        const Insn& insn = v.insns[i];
        char line[160];
        std::snprintf(line, sizeof(line), "  %016" PRIx64 ":  %-24s %s %s", insn.addr,
                      bytes_text(insn.bytes).c_str(), insn.mnemonic.c_str(), insn.operands.c_str());
        out += line;
        if (insn.target && (!v.site || i != *v.site)) {
            out += "  <" + v.targets[i] + ">";
        }
        if (v.site && i == *v.site) {
            out += site_note(v, armed);
        } else if (site_state(insn) == SiteState::Int3) { // (arm64: before the site)
            out += breakpoint_note(insn);
        }
        out += '\n';
    }
    out += "  attached (tracefs enabled_functions):";
    if (v.attached.empty()) {
        out += " nothing\n";
    } else {
        out += '\n';
        for (const auto& a : v.attached) {
            out += "    " + a.line + "\n";
            if (const std::string how = enabled_dispatch_meaning(a); !how.empty()) {
                out += "      " + how + "\n";
            }
            for (char flag : a.flags) {
                out += "      ";
                out.push_back(flag);
                out += std::string(": ") + enabled_flag_meaning(flag) + "\n";
            }
        }
    }
    for (const auto& h : v.module_hooks) {
        out += "    owner: module " + h.owner + " with fhook's hook API (" +
               module_hook_kind(h.kind) + "), " + std::to_string(h.hits) + " hits, " +
               std::to_string(h.inside) + " inside now\n";
    }
    out += "  kprobes (debugfs kprobes/list):";
    if (v.kprobes.empty()) {
        out += " none\n";
    } else {
        out += '\n';
        for (const auto& k : v.kprobes) {
            out += "    " + k + "\n";
        }
    }
}

Json view_json(const SiteView& v) {
    Json j;
    if (v.site) {
        const Insn& site = v.insns[*v.site];
        j["site"] = site_state_name(site_state(site));
        j["site_addr"] = hex(site.addr);
        if (site.target) {
            j["site_target"] = v.targets[*v.site];
        }
    } else {
        j["site"] = nullptr;
    }
    j["insns"] = Json::array();
    for (const Insn& insn : v.insns) {
        j["insns"].push_back(
            {{"addr", hex(insn.addr)},
             {"bytes", bytes_text(insn.bytes)},
             {"text", insn.mnemonic + (insn.operands.empty() ? "" : " " + insn.operands)}});
    }
    j["attached"] = Json::array();
    for (const auto& a : v.attached) {
        j["attached"].push_back({{"flags", a.flags}, {"refs", a.refs}, {"line", a.line}});
    }
    j["kprobes"] = v.kprobes;
    for (const auto& h : v.module_hooks) { // (only when a module holds it)
        j["module_hooks"].push_back({{"owner", h.owner},
                                     {"kind", module_hook_kind(h.kind)},
                                     {"hits", h.hits},
                                     {"inside", h.inside}});
    }
    return j;
}

} // namespace

const char* explain_arm_name(ExplainArm arm) {
    switch (arm) {
    case ExplainArm::Ops:
        return "ops";
    case ExplainArm::Direct:
        return "direct";
    case ExplainArm::Kprobe:
        return "kprobe";
    case ExplainArm::Hook:
        return "hook";
    default:
        return "none";
    }
}

const char* explain_arm_text(ExplainArm arm) {
    switch (arm) {
    case ExplainArm::Ops:
        return "an ftrace_ops callback counting calls (register_ftrace_function)";
    case ExplainArm::Direct:
        return "fhook's counting trampoline through the direct-call API "
               "(register_ftrace_direct)";
    case ExplainArm::Kprobe:
        return host_arch() == Arch::Arm64
                   ? "a kprobe on the function entry (register_kprobe; arm64 has no kprobes "
                     "on ftrace: a brk)"
                   : "a kprobe on the function entry (register_kprobe; on an ftrace site the "
                     "kernel uses ftrace, not an int3)";
    case ExplainArm::Hook:
        return host_arch() == Arch::Arm64
                   ? "an IPMODIFY trace-around hook (FTRACE_OPS_FL_IPMODIFY, with SAVE_REGS "
                     "where ftrace gives full registers)"
                   : "an IPMODIFY trace-around hook (FTRACE_OPS_FL_IPMODIFY | SAVE_REGS)";
    default:
        return "";
    }
}

std::string explain_text(const Explanation& e) {
    std::string out = e.name + ": " + hex(e.addr) + ", " + std::to_string(e.size) + " bytes" +
                      (e.module.empty() ? " (vmlinux)" : " [" + e.module + "]") + "\n";
    if (!e.prototype.empty()) {
        out += "  prototype: " + e.prototype + " (BTF)\n";
    }
    out += std::string("  traceable: ") +
           (e.traceable ? "yes (in available_filter_functions)" : "no: " + e.why_not) + "\n";
    out += std::string("  kprobes: ") +
           (e.kprobe_blacklisted ? "refused (in the kprobe blacklist: NOKPROBE_SYMBOL or noinstr)"
                                 : "allowed") +
           "\n\n";
    out += "now:\n";
    view_text(e.idle, false, out);
    if (e.armed) {
        out += std::string("\narmed (") + explain_arm_name(e.arm) +
               "): " + explain_arm_text(e.arm) + "\n";
        view_text(*e.armed, true, out);
    }
    return out;
}

std::string explain_json(const Explanation& e) {
    Json j;
    j["function"] = e.name;
    j["addr"] = hex(e.addr);
    j["size"] = e.size;
    j["module"] = e.module;
    j["traceable"] = e.traceable;
    if (!e.traceable) {
        j["why_not"] = e.why_not;
    }
    j["kprobe_blacklisted"] = e.kprobe_blacklisted;
    j["prototype"] = e.prototype;
    j["idle"] = view_json(e.idle);
    if (e.armed) {
        j["armed"] = view_json(*e.armed);
        j["via"] = explain_arm_name(e.arm);
    }
    return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace fhook
