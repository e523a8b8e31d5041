// The tracers a session adds whole (no probe definition): wakeup,
// timerlat, hwlat, osnoise, irqsoff.
#include <cerrno>
#include <string>

#include <fhook/core/error.hpp>
#include <fhook/core/session.hpp>

#include "ioctl_args.hpp"

namespace fhook {

using ioctl_args::probe_add;
using ioctl_args::probe_arg;
using ioctl_args::user_ptr;
using ioctl_args::zero_init;

namespace {

// PROBE_ADD of a tracer that runs threads of its own (`cfg`: its struct),
// which needs CAP_SYS_ADMIN for `why`; returns its id.
std::uint32_t add_admin_tracer(const Device& device, std::uint32_t type, std::uint64_t cfg,
                               const std::string& name, const std::string& why) {
    fhook_probe_add arg = probe_arg(type);
    arg.hook = cfg;
    if (probe_add(device, arg) < 0) {
        if (errno == EPERM) {
            throw_runtime(name + " needs CAP_SYS_ADMIN: " + why, EPERM);
        }
        throw_ioctl_error("adding " + name, errno, device.refusal(errno));
    }
    return arg.probe_id;
}

} // namespace

std::uint32_t Session::add_wakeup_probe(std::uint32_t wclass, std::uint64_t threshold_ns,
                                        std::uint32_t flags) {
    device_.require(FHOOK_FEAT_WAKEUP, "the wakeup latency tracer");
    fhook_wakeup cfg;
    zero_init(cfg);
    cfg.size = sizeof(cfg);
    cfg.wclass = wclass;
    cfg.threshold_ns = threshold_ns;
    if (flags & FHOOK_WAKEUP_F_STACK) {
        device_.require(FHOOK_FEAT_WAKEUP_HIST, "the waker's stacks");
    }
    // (an older module tracks and reports, and the reports are dropped)
    cfg.flags = device_.has(FHOOK_FEAT_WAKEUP_HIST) ? flags : 0;
    fhook_probe_add arg = probe_arg(FHOOK_PROBE_WAKEUP);
    arg.hook = user_ptr(&cfg);
    if (probe_add(device_, arg) < 0) {
        throw_ioctl_error("adding the wakeup tracer", errno, device_.refusal(errno));
    }
    return arg.probe_id;
}

std::uint32_t Session::add_timerlat_probe(fhook_timerlat cfg) {
    device_.require(FHOOK_FEAT_TIMERLAT, "the timer latency tracer");
    cfg.size = sizeof(cfg);
    return add_admin_tracer(device_, FHOOK_PROBE_TIMERLAT, user_ptr(&cfg), "the timerlat tracer",
                            "it runs real-time threads of its own on every CPU");
}

std::uint32_t Session::add_hwlat_probe(fhook_hwlat cfg) {
    device_.require(FHOOK_FEAT_HWLAT, "the hardware latency detector");
    cfg.size = sizeof(cfg);
    return add_admin_tracer(device_, FHOOK_PROBE_HWLAT, user_ptr(&cfg), "the hwlat detector",
                            "it disables interrupts on each CPU in turn");
}

std::uint32_t Session::add_osnoise_probe(fhook_osnoise cfg) {
    device_.require(FHOOK_FEAT_OSNOISE, "the operating system noise tracer");
    cfg.size = sizeof(cfg);
    return add_admin_tracer(device_, FHOOK_PROBE_OSNOISE, user_ptr(&cfg), "the osnoise tracer",
                            "it takes the time of every CPU with threads of its own");
}

std::uint32_t Session::add_irqsoff_probe(fhook_irqsoff cfg, const std::string& tracer) {
    const auto need = [&](std::uint32_t kind, std::uint64_t feature, const char* tracepoints,
                          const char* config) {
        if ((cfg.kinds & kind) && !device_.has(feature)) {
            throw_runtime(tracer + " needs the kernel's " + tracepoints +
                              " tracepoints, which this kernel lacks (" + config +
                              "; Debian's kernels are built without them)",
                          EOPNOTSUPP);
        }
    };
    // (the preempt ones first: rarer, so what preemptirqsoff lacks first)
    need(FHOOK_IRQSOFF_PREEMPT, FHOOK_FEAT_PREEMPTOFF, "preempt_disable and preempt_enable",
         "CONFIG_TRACE_PREEMPT_TOGGLE, which only CONFIG_PREEMPT_TRACER selects");
    need(FHOOK_IRQSOFF_IRQ, FHOOK_FEAT_IRQSOFF, "irq_disable and irq_enable",
         "CONFIG_PREEMPTIRQ_TRACEPOINTS, which lockdep's CONFIG_TRACE_IRQFLAGS brings");
    cfg.size = sizeof(cfg);
    fhook_probe_add arg = probe_arg(FHOOK_PROBE_IRQSOFF);
    arg.hook = user_ptr(&cfg);
    if (probe_add(device_, arg) < 0) {
        throw_ioctl_error("adding the " + tracer + " tracer", errno, device_.refusal(errno));
    }
    return arg.probe_id;
}

} // namespace fhook
