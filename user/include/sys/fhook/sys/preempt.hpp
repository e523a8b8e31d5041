// The running kernel's preemption model, named as its latency traces name
// it (print_trace_header(): "server", "desktop", "preempt", "preempt_rt").
#pragma once

#include <string>

namespace fhook {

// From debugfs's sched/preempt (PREEMPT_DYNAMIC kernels: the mode chosen
// at boot or since), else from uname's version string; "unknown" when
// neither says.  `debugfs` is where debugfs is mounted.
std::string preempt_model(const std::string& debugfs = "/sys/kernel/debug");

// uname -r
std::string kernel_release();

} // namespace fhook
