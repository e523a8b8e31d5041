// fhook doctor
#include <fhook/output/doctor_format.hpp>
#include <fhook/sys/doctor.hpp>

#include "commands.hpp"

namespace fhook::cli {

namespace {

constexpr const char* kDoctorUsage =
    "Usage: fhook doctor [--format text|json]\n"
    "\n"
    "Will fhook work here, and if not, why: the kernel and whether it is a\n"
    "tested target, its ftrace, kprobe, uprobe and BTF options (from\n"
    "/boot/config-*, /proc/config.gz, or inferred from /sys and /proc/kallsyms\n"
    "when neither exists), tracefs, lockdown, Secure Boot, IBT, the module\n"
    "and its ABI, the device, this user's privileges, kptr_restrict and\n"
    "perf_event_paranoid.  Each check that is not fine says what to do.\n"
    "Exits 1 when something will stop fhook (no tracefs, no function tracer\n"
    "or dynamic ftrace, the module missing or of another ABI, lockdown\n"
    "refusing it, /dev/fhook missing with the module loaded); warnings do not.\n";

} // namespace

int cmd_doctor(const Args& args) {
    po::options_description options("Options");
    options.add_options()("format,f",
                          po::value<std::string>()->default_value("text")->value_name("FMT"),
                          "text or json (one JSON document)")("help,h", "show this help");
    po::positional_options_description positional;
    po::variables_map vm = parse_args("doctor", args, options, positional);
    if (vm.count("help")) {
        print_help(kDoctorUsage, options);
        return 0;
    }
    const OutputFormat format = parse_format(vm["format"].as<std::string>());
    const DoctorReport report = doctor();
    print_stdout(format == OutputFormat::Json ? doctor_json(report) : doctor_text(report));
    return report.ok() ? 0 : 1;
}

} // namespace fhook::cli
