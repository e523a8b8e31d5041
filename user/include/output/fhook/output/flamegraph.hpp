// Stacks counted by a histogram (keys=stacktrace) as Brendan Gregg's
// FlameGraph takes them: folded lines ("root;...;leaf COUNT") and a flame
// graph SVG drawn here (no Perl), clickable to zoom and searchable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fhook/probe/hist.hpp>
#include <fhook/sys/ksyms.hpp>

namespace fhook {

struct FoldedStack {
    std::vector<std::string> frames; // root first, the probed function last
    std::uint64_t count = 0;
};

// The entries of `table` as folded stacks: the key's other parts first
// (a task name, a number: one frame each, in key order), then the user
// stack (ustacktrace, named: name_user_stacks()), then the kernel stack,
// each from its outermost frame to the probed location, by function name
// (stackcollapse's convention: no offsets or binaries).  Stacks that fold
// to the same line are added up; sorted by line.  Invalid Error when the
// table has no stacktrace or ustacktrace key.
std::vector<FoldedStack> folded_stacks(const HistTable& table, const Ksyms& ksyms);

// "a;b;c COUNT\n" per stack.
void append_folded(const std::vector<FoldedStack>& stacks, std::string& out);

// A flame graph of `stacks` as a standalone SVG document: a frame's width
// is its share of the counts, callers below callees; click a frame to zoom
// into it, Ctrl-F or the Search button to highlight frames by a regular
// expression, as FlameGraph's SVGs do.
std::string flamegraph_svg(const std::vector<FoldedStack>& stacks, const std::string& title);

} // namespace fhook
