// fhook bench: the cost per hit of every mechanism, fhook's and its peers'
// (docs/benchmarks.md); fhook bench --plot: an SVG from saved JSON.
#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include <fhook/bench/bench.hpp>
#include <fhook/core/error.hpp>

#include "commands.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kBenchUsage =
    "Usage: fhook bench [options]\n"
    "       fhook bench --plot -o OUT.svg RESULTS.json...\n"
    "\n"
    "Measure what hooking one function costs per call, for fhook's mechanisms\n"
    "and the tools people would use instead, on the same workload: the\n"
    "kernel's function tracer and kprobe_events (with cat trace_pipe), bpftrace\n"
    "(kfunc and kprobe count(), kprobe hist()), libbpf-tools funclatency and an\n"
    "fentry program streaming to a BPF ring buffer (vmtests' fhook-bench-stream).\n"
    "Each mechanism is attached alone, the workload runs --repeats times under\n"
    "it (after one shorter warm-up run) and the median ns per call is compared\n"
    "with the baseline (nothing attached).  Consumers (fhook's reader,\n"
    "trace_pipe, bpftrace) run on --consumer-cpu: on a one-CPU machine their\n"
    "work is part of every figure, fhook's and its peers' alike.  Tools that\n"
    "are not installed become skipped rows.  Needs root, the fhook module and\n"
    "tracefs; the kloop workload needs vmtests' fhook_testmod.ko.\n"
    "\n"
    "Workloads: kloop (fhook_testmod's in-kernel loop calling the empty\n"
    "noinline fhook_testmod_nop(): the pure cost of the hook) and read\n"
    "(read(2) of one byte from /dev/zero, vfs_read hooked: a whole syscall);\n"
    "switch measures the scheduler's latency tracers per context switch instead\n"
    "(a pipe ping-pong with a SCHED_FIFO child on the same CPU): fhook wakeup\n"
    "--rt and hist, the kernel's wakeup_rt tracer and libbpf-tools runqlat;\n"
    "timer a busy loop (ns per 1,000 iterations) under fhook's and the kernel's\n"
    "timerlat tracers on its CPU every 100 us.\n"
    "\n"
    "--plot reads the JSON of earlier runs (one per kernel) and writes a bar\n"
    "chart of the overhead per mechanism.\n";

std::string read_all(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        throw_invalid("cannot read '" + path + "': " + std::strerror(errno));
    }
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void write_out(const std::string& path, const std::string& text) {
    if (path.empty() || path == "-") {
        print_stdout(text);
        return;
    }
    std::ofstream out(path, std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        throw_runtime("cannot write '" + path + "'");
    }
}

} // namespace

// The option table (most of its 120 lines), then parse, run, output: a
// command as thin as the others, with more options.
int cmd_bench(const Args& args) {
    bench::RunOptions run;
    po::options_description options("Options");
    options.add_options()("workload,w",
                          po::value<std::string>()->default_value("kloop")->value_name("WORKLOAD"),
                          "kloop, read, switch or timer")(
        "function,f", po::value<std::string>()->value_name("FUNC"),
        "the hooked function (default: fhook_testmod_nop for kloop, vfs_read for read)")(
        "calls,n", po::value<std::string>()->value_name("N"), "calls per repeat (default 200000)")(
        "repeats,r", po::value<std::string>()->default_value("3")->value_name("N"),
        "figures per mechanism")(
        "only", po::value<std::vector<std::string>>()->composing()->value_name("GLOB"),
        "only these mechanisms (globs, repeatable; the baseline always runs)")(
        "cpu", po::value<std::string>()->default_value("0")->value_name("CPU"),
        "CPU of the workload")("consumer-cpu", po::value<std::string>()->value_name("CPU"),
                               "CPU of the consumers (default: the last)")(
        "settle", po::value<std::string>()->default_value("2")->value_name("SEC"),
        "seconds to wait before the first figure")(
        "bpftrace", po::value<std::string>()->default_value("bpftrace")->value_name("PATH"),
        "bpftrace to run")("trace-cmd",
                           po::value<std::string>()->default_value("trace-cmd")->value_name("PATH"),
                           "trace-cmd to run")(
        "funclatency", po::value<std::string>()->default_value("funclatency")->value_name("PATH"),
        "libbpf-tools funclatency to run")(
        "runqlat", po::value<std::string>()->default_value("runqlat")->value_name("PATH"),
        "libbpf-tools runqlat to run (switch)")(
        "bpf-stream",
        po::value<std::string>()->default_value("fhook-bench-stream")->value_name("PATH"),
        "the BPF ring buffer streaming peer to run (vmtests/bench/fhook-bench-stream)")(
        "clock", po::value<std::string>()->default_value("CLOCK_MONOTONIC ns")->value_name("NAME"),
        "what the figures' unit is called in the output (the VM driver says when guest ns "
        "are instructions)")(
        "format", po::value<std::string>()->default_value("text")->value_name("FMT"),
        "text or json")("output,o", po::value<std::string>()->value_name("FILE"),
                        "write the table, JSON or SVG here")(
        "json", po::value<std::string>()->value_name("FILE"),
        "also write the JSON to this file")("list", "list the mechanisms and exit")(
        "plot", "write an SVG plot of RESULTS.json...")("help,h", "show this help");
    po::options_description hidden;
    hidden.add_options()("input", po::value<std::vector<std::string>>()->default_value({}, ""));
    po::options_description all;
    all.add(options).add(hidden);
    po::positional_options_description positional;
    positional.add("input", -1);
    po::variables_map vm = parse_args("bench", args, all, positional);
    if (vm.count("help")) {
        print_help(kBenchUsage, options);
        return 0;
    }
    const std::string out = vm.count("output") ? vm["output"].as<std::string>() : "";
    const auto inputs = vm["input"].as<std::vector<std::string>>();
    if (vm.count("list")) {
        std::string text;
        for (const auto& [name, what] : bench::mechanisms()) {
            text += name + std::string(name.size() < 24 ? 24 - name.size() : 1, ' ') + what + "\n";
        }
        print_stdout(text);
        return 0;
    }
    if (vm.count("plot")) {
        if (inputs.empty()) {
            throw_invalid("--plot needs the JSON of one or more 'fhook bench --format json' runs");
        }
        std::vector<bench::Results> sets;
        for (const auto& path : inputs) {
            sets.push_back(bench::parse_json(read_all(path), path));
        }
        write_out(out, bench::render_svg(sets));
        return 0;
    }
    if (!inputs.empty()) {
        throw_invalid("unexpected argument '" + inputs.front() +
                      "' (only --plot reads files; mechanisms go to --only)");
    }
    const bool json = parse_format(vm["format"].as<std::string>()) == OutputFormat::Json;
    run.workload = vm["workload"].as<std::string>();
    if (vm.count("function")) {
        run.function = vm["function"].as<std::string>();
    }
    if (vm.count("calls")) {
        run.calls = parse_u64("--calls", vm["calls"].as<std::string>());
        if (run.calls == 0) {
            throw_invalid("--calls must be at least 1");
        }
    }
    const auto repeats = parse_u64("--repeats", vm["repeats"].as<std::string>());
    if (repeats == 0 || repeats > 1000) {
        throw_invalid("--repeats must be 1..1000");
    }
    run.repeats = static_cast<unsigned>(repeats);
    if (vm.count("only")) {
        run.only = vm["only"].as<std::vector<std::string>>();
        for (const auto& glob : run.only) {
            bool any = false;
            for (const auto& [name, what] : bench::mechanisms()) {
                any = any || fnmatch(glob.c_str(), name.c_str(), 0) == 0;
            }
            if (!any) {
                throw_invalid("--only '" + glob +
                              "' matches no mechanism (see fhook bench --list)");
            }
        }
    }
    run.workload_cpu = static_cast<int>(parse_u64("--cpu", vm["cpu"].as<std::string>()));
    if (vm.count("consumer-cpu")) {
        run.consumer_cpu =
            static_cast<int>(parse_u64("--consumer-cpu", vm["consumer-cpu"].as<std::string>()));
    }
    run.settle = parse_seconds("--settle", vm["settle"].as<std::string>());
    run.bpftrace = vm["bpftrace"].as<std::string>();
    run.funclatency = vm["funclatency"].as<std::string>();
    run.runqlat = vm["runqlat"].as<std::string>();
    run.bpf_stream = vm["bpf-stream"].as<std::string>();
    run.trace_cmd = vm["trace-cmd"].as<std::string>();
    run.clock = vm["clock"].as<std::string>();
    run.tracefs = tracefs_dir();
    run.progress = [](std::string_view name) {
        const std::string line = "fhook bench: " + std::string(name) + "\n";
        [[maybe_unused]] auto n = write(2, line.data(), line.size());
    };
    const bench::Results results = bench::run(run);
    if (vm.count("json")) {
        write_out(vm["json"].as<std::string>(), bench::render_json(results));
    }
    write_out(out, json ? bench::render_json(results) : bench::render_text(results));
    return 0;
}

} // namespace fhook::cli
