// fhook explain [options] FUNC
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>

#include <fhook/btf.hpp>
#include <fhook/disasm.hpp>
#include <fhook/error.hpp>
#include <fhook/format.hpp>
#include <fhook/ftrace_state.hpp>
#include <fhook/ksyms.hpp>
#include <fhook/output.hpp>
#include <fhook/probe.hpp>
#include <fhook/session.hpp>
#include <fhook/spec.hpp>

#include "commands.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kExplainUsage =
    "Usage: fhook explain [options] FUNC\n"
    "\n"
    "Show how ftrace hooks the kernel function FUNC: whether it can be traced\n"
    "and why not; its address and size; its first instructions disassembled\n"
    "(capstone), with the 5-byte ftrace call site that is a NOP while nothing\n"
    "traces the function; who is attached (tracefs enabled_functions: flags,\n"
    "trampolines, direct calls) and which kprobes sit on it.  With --arm, fhook\n"
    "attaches itself the chosen way and shows the same bytes while armed: the\n"
    "call into ftrace_caller/ftrace_regs_caller, a trampoline, fhook's direct\n"
    "trampoline or the int3 of a kprobe, its target symbolized.\n";

enum class Arm { None, Ops, Direct, Kprobe, Hook };

Arm parse_arm(const std::string& text) {
    if (text == "ops") {
        return Arm::Ops;
    }
    if (text == "direct") {
        return Arm::Direct;
    }
    if (text == "kprobe") {
        return Arm::Kprobe;
    }
    if (text == "hook") {
        return Arm::Hook;
    }
    throw_invalid("--arm '" + text + "': use ops, direct, kprobe or hook");
}

const char* arm_text(Arm arm) {
    switch (arm) {
    case Arm::Ops:
        return "an ftrace_ops callback counting calls (register_ftrace_function)";
    case Arm::Direct:
        return "fhook's counting trampoline through the direct-call API "
               "(register_ftrace_direct)";
    case Arm::Kprobe:
        return "a kprobe on the function entry (register_kprobe; on an ftrace site the "
               "kernel uses ftrace, not an int3)";
    case Arm::Hook:
        return "an IPMODIFY trace-around hook (FTRACE_OPS_FL_IPMODIFY | SAVE_REGS)";
    default:
        return "";
    }
}

const char* arm_name(Arm arm) {
    switch (arm) {
    case Arm::Ops:
        return "ops";
    case Arm::Direct:
        return "direct";
    case Arm::Kprobe:
        return "kprobe";
    case Arm::Hook:
        return "hook";
    default:
        return "none";
    }
}

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

struct View {
    std::vector<Insn> insns;
    std::optional<std::size_t> site;
    std::vector<EnabledFunction> attached;
    std::vector<std::string> kprobes;
};

View look(const Session& session, std::uint64_t addr, std::size_t len, const std::string& name,
          std::size_t max_insns) {
    View v;
    v.insns = disassemble(session.read_text(addr, len), addr, max_insns);
    v.site = fentry_index(v.insns);
    v.attached = read_enabled_functions(tracefs_dir(), name);
    v.kprobes = read_kprobes_on(name);
    return v;
}

std::string target_name(const Ksyms& ksyms, std::uint64_t target) {
    std::string out;
    ksyms.append_offset(target, out);
    return out;
}

void print_view(const View& v, const Ksyms& ksyms, bool armed, std::string& out) {
    for (std::size_t i = 0; i < v.insns.size(); i++) {
        const Insn& insn = v.insns[i];
        char line[160];
        std::snprintf(line, sizeof(line), "  %016" PRIx64 ":  %-24s %s %s", insn.addr,
                      bytes_text(insn.bytes).c_str(), insn.mnemonic.c_str(), insn.operands.c_str());
        out += line;
        if (insn.target && (!v.site || i != *v.site)) {
            out += "  <" + target_name(ksyms, *insn.target) + ">";
        }
        if (v.site && i == *v.site) {
            switch (site_state(insn)) {
            case SiteState::Nop:
                out += "   <- ftrace site: a 5-byte NOP, nothing traces the function";
                break;
            case SiteState::Call:
                out += "   <- ftrace site: call " +
                       (insn.target ? target_name(ksyms, *insn.target) : insn.operands);
                break;
            case SiteState::Int3:
                out += "   <- an int3: a kprobe (not on the ftrace site)";
                break;
            case SiteState::Jump:
                out += "   <- a jump: an optimized kprobe's detour";
                break;
            default:
                out += armed ? "   <- ftrace site: neither a NOP nor a call"
                             : "   <- not an ftrace site (the function has no fentry call)";
                break;
            }
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
            for (char flag : a.flags) {
                out += "      ";
                out.push_back(flag);
                out += std::string(": ") + enabled_flag_meaning(flag) + "\n";
            }
        }
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

void json_view(const View& v, const Ksyms& ksyms, std::string& out) {
    out += "{\"site\":";
    if (v.site) {
        out += "\"";
        out += site_state_name(site_state(v.insns[*v.site]));
        out += "\",\"site_addr\":\"" + hex(v.insns[*v.site].addr) + "\"";
        if (v.insns[*v.site].target) {
            out += ",\"site_target\":";
            append_json_string(target_name(ksyms, *v.insns[*v.site].target), out);
        }
    } else {
        out += "null";
    }
    out += ",\"insns\":[";
    for (std::size_t i = 0; i < v.insns.size(); i++) {
        const Insn& insn = v.insns[i];
        out += i ? "," : "";
        out += "{\"addr\":\"" + hex(insn.addr) + "\",\"bytes\":\"" + bytes_text(insn.bytes) +
               "\",\"text\":";
        append_json_string(insn.mnemonic + (insn.operands.empty() ? "" : " " + insn.operands), out);
        out += "}";
    }
    out += "],\"attached\":[";
    for (std::size_t i = 0; i < v.attached.size(); i++) {
        const auto& a = v.attached[i];
        out += i ? "," : "";
        out += "{\"flags\":\"" + a.flags + "\",\"refs\":" + std::to_string(a.refs) + ",\"line\":";
        append_json_string(a.line, out);
        out += "}";
    }
    out += "],\"kprobes\":[";
    for (std::size_t i = 0; i < v.kprobes.size(); i++) {
        out += i ? "," : "";
        append_json_string(v.kprobes[i], out);
    }
    out += "]}";
}

// Why `name` has no kallsyms symbol.
std::string missing_reason(const std::string& name, const Ksyms& ksyms) {
    std::vector<std::string> clones;
    for (const std::string suffix : {".isra.", ".constprop.", ".part.", ".cold", ".llvm."}) {
        for (std::uint32_t i = 0; i < 8; i++) {
            for (const std::string& cand : {name + suffix + std::to_string(i), name + suffix,
                                            name + suffix.substr(0, suffix.size() - 1)}) {
                if (!ksyms.find_text(cand).empty() &&
                    std::find(clones.begin(), clones.end(), cand) == clones.end()) {
                    clones.push_back(cand);
                }
            }
        }
    }
    if (!clones.empty()) {
        std::string list;
        for (const auto& c : clones) {
            list += (list.empty() ? "" : ", ") + c;
        }
        return "the compiler emitted it only as clones (" + list +
               "): trace those names, each is its own function for ftrace";
    }
    try {
        const KernelBtf btf = KernelBtf::load();
        if (btf.function(name)) {
            return "BTF knows it but kallsyms has no symbol: it was inlined into every caller, "
                   "so there is no call to hook";
        }
    } catch (const Error&) {
    }
    return "no such kernel function (a module's functions exist only while it is loaded)";
}

} // namespace

int cmd_explain(const Args& args) {
    po::options_description options("Options");
    options.add_options()("arm", po::value<std::string>()->value_name("HOW"),
                          "also show the bytes while fhook is attached: ops, direct, kprobe or "
                          "hook")("bytes", po::value<std::string>()->value_name("N"),
                                  "bytes of the function to disassemble (default 32)")(
        "format,f", po::value<std::string>()->value_name("FMT"),
        "text (default) or json")("help,h", "show this help");
    po::options_description hidden;
    hidden.add_options()("function", po::value<std::string>());
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("function", 1);
    po::variables_map vm = parse_args("explain", args, all, positional);
    if (vm.count("help")) {
        print_help(kExplainUsage, options);
        return 0;
    }
    if (!vm.count("function")) {
        throw_invalid("give the function to explain, e.g. fhook explain vfs_read");
    }
    const std::string name = vm["function"].as<std::string>();
    const Arm arm = vm.count("arm") ? parse_arm(vm["arm"].as<std::string>()) : Arm::None;
    const bool json = vm.count("format") && parse_format(vm["format"].as<std::string>());
    std::size_t want = 32;
    if (vm.count("bytes")) {
        want = parse_u64("--bytes", vm["bytes"].as<std::string>());
        if (want == 0 || want > FHOOK_MAX_READ_TEXT) {
            throw_invalid("--bytes must be between 1 and " + std::to_string(FHOOK_MAX_READ_TEXT));
        }
    }

    const Ksyms ksyms = Ksyms::load(kallsyms_path());
    const std::vector<SymbolRef> found = ksyms.find_text(name);
    if (found.empty()) {
        throw_runtime(name + ": " + missing_reason(name, ksyms), ENOENT);
    }
    if (found.size() > 1) {
        std::string where;
        for (const auto& s : found) {
            where +=
                " " + hex(s.offset) + (s.module.empty() ? "" : " [" + std::string(s.module) + "]");
        }
        throw_invalid("'" + name + "' names " + std::to_string(found.size()) +
                      " functions:" + where + ": ftrace treats each on its own");
    }
    const std::uint64_t addr = found.front().offset;
    const std::uint64_t size = ksyms.size_of(addr);
    const std::string module(found.front().module);
    const std::size_t len =
        static_cast<std::size_t>(size ? std::min<std::uint64_t>(size, want) : want);

    const FunctionList functions = FunctionList::load(functions_path());
    const bool traceable = std::any_of(functions.functions().begin(), functions.functions().end(),
                                       [&](const TraceableFunction& f) { return f.name == name; });
    const bool blacklisted = in_kprobe_blacklist_file(name);
    std::string prototype;
    std::optional<KernelBtf> btf;
    try {
        btf = KernelBtf::load();
        if (auto f = btf->function(name)) {
            prototype = btf->prototype(*f);
        }
    } catch (const Error&) {
    }
    std::string why_not;
    if (!traceable) {
        if (name.find(".cold") != std::string::npos) {
            why_not = "a .cold part split off a function: not an entry point";
        } else if (blacklisted) {
            why_not = "notrace/noinstr code (it is in the kprobe blacklist too)";
        } else {
            why_not = "notrace, or built without the fentry call (entry code, __init, "
                      "some arch code)";
        }
    }

    Session session(device_path());
    session.setup_ring(FHOOK_RING_MIN_SIZE);
    const std::size_t max_insns = 16;
    const View idle = look(session, addr, len, name, max_insns);

    std::optional<View> armed;
    if (arm != Arm::None) {
        if (!traceable && arm != Arm::Kprobe) {
            throw_runtime("cannot arm " + name + " with --arm " + arm_name(arm) + ": " + why_not,
                          ENOENT);
        }
        FunctionSet function;
        function.filters = {name};
        FunctionProbeOptions counting;
        counting.count = true;
        switch (arm) {
        case Arm::Ops:
            session.add_function_probe(function, counting);
            break;
        case Arm::Direct:
            counting.via = FunctionProbeOptions::Via::Direct;
            session.add_function_probe(function, counting);
            break;
        case Arm::Kprobe:
            session.add_kprobe(parse_kprobe("p:fhook/explain " + name, {}), true);
            break;
        default: {
            fhook_hook h{};
            h.action = FHOOK_HOOK_AROUND;
            session.add_hook(parse_kprobe("p:hook/" + name + " " + name, {}), addr, name, h);
            break;
        }
        }
        session.start();
        armed = look(session, addr, len, name, max_insns);
        session.stop();
    }

    std::string out;
    if (json) {
        out += "{\"function\":";
        append_json_string(name, out);
        out += ",\"addr\":\"" + hex(addr) + "\",\"size\":" + std::to_string(size) + ",\"module\":";
        append_json_string(module, out);
        out += std::string(",\"traceable\":") + (traceable ? "true" : "false");
        if (!traceable) {
            out += ",\"why_not\":";
            append_json_string(why_not, out);
        }
        out += std::string(",\"kprobe_blacklisted\":") + (blacklisted ? "true" : "false");
        out += ",\"prototype\":";
        append_json_string(prototype, out);
        out += ",\"idle\":";
        json_view(idle, ksyms, out);
        if (armed) {
            out += ",\"armed\":";
            json_view(*armed, ksyms, out);
            out += ",\"via\":\"";
            out += arm_name(arm);
            out += "\"";
        }
        out += "}\n";
    } else {
        out += name + ": " + hex(addr) + ", " + std::to_string(size) + " bytes" +
               (module.empty() ? " (vmlinux)" : " [" + module + "]") + "\n";
        if (!prototype.empty()) {
            out += "  prototype: " + prototype + " (BTF)\n";
        }
        out += std::string("  traceable: ") +
               (traceable ? "yes (in available_filter_functions)" : "no: " + why_not) + "\n";
        out += std::string("  kprobes: ") +
               (blacklisted ? "refused (in the kprobe blacklist: NOKPROBE_SYMBOL or noinstr)"
                            : "allowed") +
               "\n\n";
        out += "now:\n";
        print_view(idle, ksyms, false, out);
        if (armed) {
            out += std::string("\narmed with --arm ") + arm_name(arm) + ": " + arm_text(arm) + "\n";
            print_view(*armed, ksyms, true, out);
        }
    }
    OutputWriter writer(STDOUT_FILENO);
    writer.append(out);
    writer.flush();
    return 0;
}

} // namespace fhook::cli
