// Folded stacks and flame graphs (the formats of Brendan Gregg's
// FlameGraph: stackcollapse's folded lines, flamegraph.pl's SVG), drawn
// from a histogram's stacktrace key.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include <fhook/core/error.hpp>
#include <fhook/output/flamegraph.hpp>
#include <fhook/output/hist_format.hpp>

#include "numbers.hpp"

namespace fhook {

namespace {

// The part of a key as one frame: a name, or a number
std::string frame_of(const HistField& f, const HistKeyPart& v, const HistEntry& e) {
    if (const auto* s = std::get_if<std::string>(&v)) {
        return *s;
    }
    const std::uint64_t n = std::get<std::uint64_t>(v);
    if (f.modifier == HistModifier::Execname) {
        return (n == 0 ? std::string("<idle>") : e.comm) + "-" + std::to_string(n);
    }
    return f.name + "=" + std::to_string(n);
}

// A user frame's function, as stackcollapse names it: "f+0x1a (/bin/x)"
// -> "f"; an address as it is
std::string user_function(const std::string& frame) {
    std::string f = frame.substr(0, frame.rfind(" ("));
    const auto plus = f.rfind("+0x");
    return plus == std::string::npos || plus == 0 ? f : f.substr(0, plus);
}

// A node of the merged stacks: children by name (FlameGraph's order)
struct Node {
    std::string name;
    std::uint64_t total = 0;
    std::map<std::string, std::unique_ptr<Node>> children;
};

void append_xml(std::string_view text, std::string& out) {
    for (char c : text) {
        switch (c) {
        case '&':
            out.append("&amp;");
            break;
        case '<':
            out.append("&lt;");
            break;
        case '>':
            out.append("&gt;");
            break;
        case '"':
            out.append("&quot;");
            break;
        default:
            out.push_back(c);
        }
    }
}

// flamegraph.pl's "hot" palette, from a hash of the name (stable colours)
std::string colour(std::string_view name) {
    std::uint32_t h = 2166136261u;
    for (char c : name) {
        h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), "rgb(%u,%u,%u)", 205 + h % 51, (h >> 8) % 231, (h >> 16) % 56);
    return buf;
}

constexpr double kWidth = 1200, kPad = 10, kFrame = 16, kTop = 40, kBottom = 30;

struct Drawing {
    std::string& out;
    std::uint64_t grand;
    double scale; // pixels per count
    double height;
};

void draw(const Node& n, double x, unsigned depth, Drawing& d) {
    const double w = static_cast<double>(n.total) * d.scale;
    if (w < 0.1) {
        return; // FlameGraph's --minwidth
    }
    const double y = d.height - kBottom - (depth + 1) * kFrame;
    char num[160];
    d.out.append("<g class=\"f\" data-name=\"");
    append_xml(n.name, d.out);
    std::snprintf(num, sizeof(num), "\" data-x=\"%.2f\" data-w=\"%.2f\" data-d=\"%u\"><title>", x,
                  w, depth);
    d.out.append(num);
    append_xml(n.name, d.out);
    std::snprintf(num, sizeof(num), " (%llu samples, %.2f%%)</title>",
                  static_cast<unsigned long long>(n.total),
                  100.0 * static_cast<double>(n.total) / static_cast<double>(d.grand));
    d.out.append(num);
    std::snprintf(num, sizeof(num),
                  "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" rx=\"2\" fill=\"",
                  kPad + x, y, w, kFrame - 1);
    d.out.append(num).append(colour(n.name)).append("\"/>");
    std::snprintf(num, sizeof(num), "<text x=\"%.2f\" y=\"%.1f\">", kPad + x + 3, y + kFrame - 5);
    d.out.append(num);
    // the label the script would give it (viewers without scripts show it too)
    const auto fit = static_cast<long>((w - 6) / 7);
    if (fit >= 3) {
        append_xml(static_cast<long>(n.name.size()) <= fit
                       ? n.name
                       : n.name.substr(0, static_cast<std::size_t>(fit - 2)) + "..",
                   d.out);
    }
    d.out.append("</text></g>\n");
    double cx = x;
    for (const auto& [name, child] : n.children) {
        draw(*child, cx, depth + 1, d);
        cx += static_cast<double>(child->total) * d.scale;
    }
}

unsigned depth_of(const Node& n) {
    unsigned deepest = 0;
    for (const auto& [name, child] : n.children) {
        deepest = std::max(deepest, depth_of(*child));
    }
    return deepest + 1;
}

// zoom, search and labels, as flamegraph.pl's SVGs behave
constexpr const char* kScript = R"JS(
var frames, details, matched, unzoomer, W = 1180, PAD = 10;
function init() {
  frames = document.getElementById("frames").children;
  details = document.getElementById("details").firstChild;
  matched = document.getElementById("matched").firstChild;
  unzoomer = document.getElementById("unzoom");
  for (var i = 0; i < frames.length; i++) {
    var f = frames[i];
    f.onclick = function() { zoom(this); };
    f.onmouseover = function() { details.nodeValue = this.querySelector("title").textContent; };
    f.onmouseout = function() { details.nodeValue = " "; };
  }
  window.addEventListener("keydown", function(e) {
    if ((e.ctrlKey || e.metaKey) && e.key == "f") { e.preventDefault(); ask(); }
  });
  unzoom();
}
function num(f, n) { return parseFloat(f.getAttribute("data-" + n)); }
function place(f, x, w) {
  var r = f.querySelector("rect"), t = f.querySelector("text"), name = f.getAttribute("data-name");
  f.style.display = "";
  r.setAttribute("x", x); r.setAttribute("width", w); t.setAttribute("x", x + 3);
  var fit = Math.floor((w - 6) / 7);
  t.textContent = fit < 3 ? "" : name.length <= fit ? name : name.substring(0, fit - 2) + "..";
}
function zoom(node) {
  var x0 = num(node, "x"), w0 = num(node, "w"), d0 = num(node, "d"), k = W / w0;
  for (var i = 0; i < frames.length; i++) {
    var f = frames[i], x = num(f, "x"), w = num(f, "w"), d = num(f, "d");
    if (d < d0 && x <= x0 + 0.01 && x + w >= x0 + w0 - 0.01) place(f, PAD, W);
    else if (d >= d0 && x >= x0 - 0.01 && x + w <= x0 + w0 + 0.01) place(f, PAD + (x - x0) * k, w * k);
    else f.style.display = "none";
  }
  unzoomer.style.display = "";
}
function unzoom() {
  for (var i = 0; i < frames.length; i++) place(frames[i], PAD + num(frames[i], "x"), num(frames[i], "w"));
  unzoomer.style.display = "none";
}
function ask() {
  var re = prompt("Search (a regular expression)", "");
  if (re) search(re); else search(null);
}
function search(re) {
  var rx = re ? new RegExp(re) : null, spans = [], total = num(frames[0], "w");
  for (var i = 0; i < frames.length; i++) {
    var f = frames[i], r = f.querySelector("rect");
    if (!r.hasAttribute("data-fill")) r.setAttribute("data-fill", r.getAttribute("fill"));
    var hit = rx && rx.test(f.getAttribute("data-name"));
    r.setAttribute("fill", hit ? "rgb(230,0,230)" : r.getAttribute("data-fill"));
    if (hit) spans.push([num(f, "x"), num(f, "x") + num(f, "w")]);
  }
  spans.sort(function(a, b) { return a[0] - b[0]; });
  var covered = 0, end = -1;
  for (var j = 0; j < spans.length; j++) {
    var s = Math.max(spans[j][0], end);
    if (spans[j][1] > s) { covered += spans[j][1] - s; end = spans[j][1]; }
  }
  matched.nodeValue = rx ? "Matched: " + (100 * covered / total).toFixed(1) + "%" : " ";
}
)JS";

} // namespace

std::vector<FoldedStack> folded_stacks(const HistTable& table, const Ksyms& ksyms) {
    const HistSpec& spec = table.spec();
    const auto stack_key = std::find_if(spec.keys.begin(), spec.keys.end(), [](const HistField& f) {
        return f.source == HistSource::Stacktrace || f.source == HistSource::UStacktrace;
    });
    if (stack_key == spec.keys.end()) {
        throw_invalid("folded stacks and flame graphs need a stacktrace or ustacktrace key "
                      "(keys=stacktrace)");
    }
    std::map<std::vector<std::string>, std::uint64_t> merged;
    for (const HistEntry& e : table.sorted()) {
        std::vector<std::string> frames, user;
        const std::vector<std::uint64_t>* stack = nullptr;
        for (std::size_t i = 0; i < spec.keys.size(); i++) {
            if (spec.keys[i].source == HistSource::Stacktrace) {
                stack = std::get_if<std::vector<std::uint64_t>>(&e.key[i]);
            } else if (spec.keys[i].source == HistSource::UStacktrace) {
                user = user_stack_frames(e.key[i]);
            } else {
                frames.push_back(frame_of(spec.keys[i], e.key[i], e));
            }
        }
        // the user stack below the kernel's (perf's and bpftrace's order)
        for (std::size_t i = user.size(); i-- > 0;) {
            frames.push_back(user_function(user[i]));
        }
        // the stack: the probed location first, the outermost caller last
        std::size_t n = 0;
        while (stack && n < stack->size() && n < 16 && (*stack)[n]) {
            n++;
        }
        for (std::size_t i = n; i-- > 0;) {
            frames.push_back(ksyms.name_of((*stack)[i]));
        }
        if (frames.empty()) {
            frames.emplace_back("[no stack]"); // an event recorded without one
        }
        merged[frames] += e.hitcount;
    }
    std::vector<FoldedStack> out;
    for (auto& [frames, count] : merged) {
        out.push_back(FoldedStack{frames, count});
    }
    return out;
}

void append_folded(const std::vector<FoldedStack>& stacks, std::string& out) {
    for (const FoldedStack& s : stacks) {
        for (std::size_t i = 0; i < s.frames.size(); i++) {
            if (i) {
                out.push_back(';');
            }
            out.append(s.frames[i]);
        }
        out.push_back(' ');
        numbers::put_u64(s.count, out);
        out.push_back('\n');
    }
}

std::string flamegraph_svg(const std::vector<FoldedStack>& stacks, const std::string& title) {
    Node root;
    root.name = "all";
    for (const FoldedStack& s : stacks) {
        root.total += s.count;
        Node* at = &root;
        for (const std::string& frame : s.frames) {
            auto& child = at->children[frame];
            if (!child) {
                child = std::make_unique<Node>();
                child->name = frame;
            }
            child->total += s.count;
            at = child.get();
        }
    }
    const double height = kTop + depth_of(root) * kFrame + kBottom;
    std::string out;
    char buf[512];
    std::snprintf(buf, sizeof(buf),
                  "<?xml version=\"1.0\" standalone=\"no\"?>\n"
                  "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                  "xmlns=\"http://www.w3.org/2000/svg\" onload=\"init()\">\n",
                  kWidth, height, kWidth, height);
    out.append(buf);
    out.append("<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000 }\n"
               "#title { font-size: 17px; text-anchor: middle }\n"
               ".f:hover rect { stroke: #000; stroke-width: 0.5 } .f { cursor: pointer }\n"
               "#unzoom, #search { cursor: pointer }</style>\n"
               "<script type=\"text/ecmascript\"><![CDATA[");
    out.append(kScript);
    out.append("]]></script>\n");
    std::snprintf(buf, sizeof(buf),
                  "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n"
                  "<text id=\"title\" x=\"%.0f\" y=\"24\">",
                  kWidth, height, kWidth / 2);
    out.append(buf);
    append_xml(title, out);
    std::snprintf(
        buf, sizeof(buf),
        "</text>\n<text id=\"unzoom\" x=\"10\" y=\"24\" onclick=\"unzoom()\" "
        "style=\"display:none\">Reset Zoom</text>\n<text id=\"search\" x=\"1100\" y=\"24\" "
        "onclick=\"ask()\">Search</text>\n<text id=\"details\" x=\"10\" y=\"%.0f\"> "
        "</text>\n<text id=\"matched\" x=\"1050\" y=\"%.0f\"> </text>\n<g id=\"frames\">\n",
        height - 10, height - 10);
    out.append(buf);
    if (root.total) {
        Drawing d{out, root.total, (kWidth - 2 * kPad) / static_cast<double>(root.total), height};
        draw(root, 0, 0, d);
    }
    out.append("</g>\n</svg>\n");
    return out;
}

} // namespace fhook
