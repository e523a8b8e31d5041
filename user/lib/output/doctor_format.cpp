#include <algorithm>
#include <nlohmann/json.hpp>

#include <fhook/output/doctor_format.hpp>

namespace fhook {

std::string doctor_text(const DoctorReport& report) {
    std::size_t width = 0;
    for (const auto& c : report.checks) {
        width = std::max(width, c.name.size());
    }
    // (where the answers below come from)
    std::string out = "kernel " + report.release +
                      (report.config_source.empty()
                           ? ": no /boot/config-" + report.release +
                                 " or /proc/config.gz: options inferred from kallsyms and BTF"
                           : ", config from " + report.config_source) +
                      "\n";
    for (const auto& c : report.checks) {
        std::string status = check_status_name(c.status);
        status.resize(5, ' ');
        std::string name = c.name;
        name.resize(width, ' ');
        out += status + name + "  " + c.detail + "\n";
        if (!c.fix.empty()) {
            out += std::string(5 + width + 2, ' ') + "-> " + c.fix + "\n";
        }
    }
    const std::size_t fails = report.count(CheckStatus::Fail);
    const std::size_t warns = report.count(CheckStatus::Warn);
    out += fails
               ? std::to_string(fails) + " problem" + (fails > 1 ? "s" : "") + " will stop fhook, "
               : std::string("fhook will work here, ");
    out += std::to_string(warns) + " warning" + (warns == 1 ? "" : "s") + "\n";
    return out;
}

std::string doctor_json(const DoctorReport& report) {
    using Json = nlohmann::ordered_json;
    Json j;
    j["kernel"] = report.release;
    j["config"] = report.config_source;
    j["ok"] = report.ok();
    j["checks"] = Json::array();
    for (const auto& c : report.checks) {
        j["checks"].push_back({{"name", c.name},
                               {"status", c.status == CheckStatus::Ok     ? "ok"
                                          : c.status == CheckStatus::Warn ? "warn"
                                                                          : "fail"},
                               {"detail", c.detail},
                               {"fix", c.fix}});
    }
    return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

} // namespace fhook
