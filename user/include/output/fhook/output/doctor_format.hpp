// fhook doctor's report as text (one line a check) or one JSON document.
#pragma once

#include <string>

#include <fhook/sys/doctor.hpp>

namespace fhook {

std::string doctor_text(const DoctorReport& report);
std::string doctor_json(const DoctorReport& report);

} // namespace fhook
