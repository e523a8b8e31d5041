#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fhook/sys/ftrace_state.hpp>

namespace fhook {

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        return {};
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace

std::string default_tracefs() {
    return ::access("/sys/kernel/tracing/events", F_OK) == 0 ? "/sys/kernel/tracing"
                                                             : "/sys/kernel/debug/tracing";
}

bool ftrace_switched_off(const std::string& path) {
    const std::string text = read_file(path);
    return !text.empty() && text.front() == '0';
}

const char* enabled_flag_meaning(char flag) {
    switch (flag) {
    case 'R':
        return "an ops wants full pt_regs (SAVE_REGS): unless the site can call one "
               "trampoline directly, it calls ftrace_regs_caller";
    case 'I':
        return "an ops may change where the function goes on (IPMODIFY: regs->ip): livepatch, a "
               "hook";
    case 'D':
        return "a direct trampoline is attached (register_ftrace_direct)";
    case 'O':
        return "the site calls the ops' function directly (CALL_OPS)";
    case 'M':
        return "a direct trampoline or an IPMODIFY ops has been on the function since boot "
               "(sticky)";
    default:
        return "see Documentation/trace/ftrace.rst, enabled_functions";
    }
}

const char* enabled_dispatch_meaning(const EnabledFunction& f) {
    if (f.detail.find("ops_list_func") != std::string::npos) {
        return "the list function: several ops want the site, so it calls ftrace_caller, "
               "which calls each ops' callback in turn (arch_ftrace_ops_list_func)";
    }
    if (f.direct()) {
        return ""; // the D flag's sentence: the site calls the direct trampoline
    }
    if (f.detail.rfind("tramp: ftrace_", 0) == 0) {
        return "the shared trampoline: the site calls ftrace_caller/ftrace_regs_caller, "
               "which calls the one ops' function";
    }
    if (f.detail.rfind("tramp: ", 0) == 0) {
        return "a trampoline of the ops' own: a copy of ftrace_caller that calls its "
               "callback directly (no list to walk)";
    }
    return "";
}

std::vector<EnabledFunction> parse_enabled_functions(std::string_view text,
                                                     std::string_view function) {
    std::vector<EnabledFunction> out;
    bool kept = false; // the last entry line was kept: its continuation lines too
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        if (!line.empty() && line.front() == '\t') {
            // "\tdirect-->target" belongs to the line above
            if (kept && !out.empty()) {
                std::string_view more = line.substr(1);
                out.back().detail += (out.back().detail.empty() ? "" : " ") + std::string(more);
                out.back().line += "\n" + std::string(line);
            }
            continue;
        }
        kept = false;
        const std::size_t open = line.find(" (");
        const std::size_t close = line.find(')', open == std::string_view::npos ? 0 : open);
        if (open == std::string_view::npos || close == std::string_view::npos) {
            continue;
        }
        EnabledFunction f;
        f.name = std::string(line.substr(0, open));
        const std::string_view bare = line.substr(0, std::min(open, line.find(' ')));
        if (!function.empty() && bare != function) {
            continue;
        }
        f.refs =
            std::strtol(std::string(line.substr(open + 2, close - open - 2)).c_str(), nullptr, 10);
        // " R I D O" then "\ttramp: ..." or, without a trampoline of its
        // own, " ->func" (add_trampoline_func() in kernel/trace/ftrace.c)
        std::string_view rest = line.substr(close + 1);
        const std::size_t end = std::min(rest.find('\t'), rest.find(" ->"));
        for (char c : rest.substr(0, end)) {
            if (c != ' ') {
                f.flags.push_back(c);
            }
        }
        if (end != std::string_view::npos) {
            std::string_view detail = rest.substr(end);
            while (!detail.empty() && (detail.front() == '\t' || detail.front() == ' ')) {
                detail.remove_prefix(1);
            }
            f.detail = std::string(detail);
        }
        f.line = std::string(line);
        out.push_back(std::move(f));
        kept = true;
    }
    return out;
}

std::vector<EnabledFunction> read_enabled_functions(const std::string& tracefs,
                                                    std::string_view function) {
    return parse_enabled_functions(read_file(tracefs + "/enabled_functions"), function);
}

std::vector<std::string> read_kprobes_on(std::string_view function, const std::string& path) {
    std::vector<std::string> out;
    std::istringstream in(read_file(path));
    std::string line;
    const std::string at = " " + std::string(function) + "+";
    while (std::getline(in, line)) {
        if (line.find(at) != std::string::npos) {
            out.push_back(line);
        }
    }
    return out;
}

bool in_kprobe_blacklist_file(std::string_view function, const std::string& path) {
    std::istringstream in(read_file(path));
    std::string line;
    while (std::getline(in, line)) {
        // "0xffffffff81000000-0xffffffff81000010\tname"
        const std::size_t tab = line.find('\t');
        if (tab != std::string::npos && std::string_view(line).substr(tab + 1) == function) {
            return true;
        }
    }
    return false;
}

std::vector<std::string> hook_conflicts(const std::vector<EnabledFunction>& attached,
                                        bool want_ipmodify,
                                        const std::vector<ModuleHook>& module_hooks) {
    std::vector<std::string> out;
    for (const auto& f : attached) {
        const std::string who = f.detail.empty() ? "" : " (" + f.detail + ")";
        const auto owner =
            std::find_if(module_hooks.begin(), module_hooks.end(), [&](const auto& h) {
                return h.function.substr(0, h.function.find(' ')) == f.name;
            });
        if (f.ipmodify() && owner != module_hooks.end()) {
            out.push_back(f.name + " is hooked by module " + owner->owner +
                          " with fhook's hook API (" + module_hook_kind(owner->kind) +
                          "): a function takes one IPMODIFY user at a time, unload " +
                          owner->owner + " first");
        } else if (f.ipmodify()) {
            out.push_back(f.name + " already has an IPMODIFY user" + who +
                          ": a livepatch, a BPF trampoline or another fhook hook; a function "
                          "takes one at a time, remove it first");
        }
        if (want_ipmodify && f.direct()) {
            out.push_back(f.name + " has a direct trampoline" + who +
                          " (BPF fentry/fexit or an fhook direct probe), which does not share "
                          "the function with an IPMODIFY hook: detach it first");
        }
    }
    return out;
}

} // namespace fhook
