// The fetch arguments every probe definition shares (probe_args.cpp), and
// the parts of the uprobe parser (uprobe.cpp) that parse_kprobe() calls:
// the kernel's trace_probe.c and trace_uprobe.c.  Internal to libfhook.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fhook/probe/probe.hpp>
#include <fhook/sys/btf.hpp>

#include "fetch.hpp"

namespace fhook::probe_detail {

// The BTF prototype of a kprobe's function, loaded by the first field that
// names kernel types (the definition must be a kprobe on a vmlinux
// function at offset 0, or a kretprobe).
class ProbeBtf {
public:
    ProbeBtf(const KprobeDef& def, const BtfProvider& provider);
    const KernelBtf::Function& function(std::string_view token);
    const KernelBtf* btf() const noexcept { return btf_; }

private:
    const KprobeDef& def_;
    const BtfProvider& provider_;
    const KernelBtf* btf_ = nullptr;
    std::optional<KernelBtf::Function> fn_;
};

// The fetch arguments with `$args` replaced by NAME=$argN for each of the
// function's parameters.
std::vector<std::string> expand_args(const std::vector<std::string_view>& args, ProbeBtf& btf);

// One NAME=FETCHARG[:TYPE][@entry] field of `def` (its `nth`, from 1):
// name, type, whether it is fetched at entry; `chain` gets what it loads.
ProbeField parse_field(const KprobeDef& def, std::string_view token, std::size_t nth,
                       const SymbolResolver& resolve, const BtfProvider& btf_provider,
                       ProbeBtf& btf, Chain& chain);

// Every field of `def` from its fetch arguments: fields, program
// (entry part first), store indexes and data size.
void parse_fields(KprobeDef& def, const std::vector<std::string_view>& args,
                  const SymbolResolver& resolve, const BtfProvider& btf_provider);

// The definition without names of kernel types or binary symbols.
std::string canonical_text(const KprobeDef& def);

// uprobe.cpp: /PATH:SYMBOL[+OFFS] | /PATH:0xOFFSET into `def`, and the
// event name trace_uprobe.c gives one without a name.
void parse_uprobe_place(KprobeDef& def, std::string_view place);
std::string uprobe_event_name(const KprobeDef& def);

} // namespace fhook::probe_detail
