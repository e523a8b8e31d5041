// Hist tables: filled from events as kernel/trace/tracing_map.c fills its
// own, sorted as it sorts them, and the layout of the module's table
// (FHOOK_IOC_HIST_SET/READ) to and from the spec.
#include <algorithm>
#include <cstring>

#include <fhook/probe/hist.hpp>

namespace fhook {

namespace {
std::uint64_t load_le(const std::uint8_t* p, unsigned size) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, std::min(size, 8U)); // x86-64: little-endian
    return v;
}

// A probe field's value as the kernel keeps it: numbers widened to u64
// (signed ones sign-extended), strings as text ("(fault)" when the fetch
// faulted).
HistKeyPart field_value(const ProbeField& f, const Event& ev) {
    const bool fault = f.store < 64 && (ev.faults >> f.store & 1);
    const auto& data = ev.data;
    const FetchType& t = f.type;
    if (f.offset + std::size_t{t.size} > data.size()) {
        return t.is_string() || t.kind == FetchType::Kind::FixedString
                   ? HistKeyPart{std::string()}
                   : HistKeyPart{std::uint64_t{0}};
    }
    const std::uint8_t* p = data.data() + f.offset;
    if (t.kind == FetchType::Kind::FixedString) {
        const char* s = reinterpret_cast<const char*>(p);
        return std::string(s, ::strnlen(s, t.size));
    }
    if (t.is_string()) {
        const auto loc = static_cast<std::uint32_t>(load_le(p, 4));
        const std::size_t len = FHOOK_LOC_LEN(loc), off = FHOOK_LOC_OFF(loc);
        if (fault || off + len > data.size()) {
            return std::string("(fault)");
        }
        const char* s = reinterpret_cast<const char*>(data.data() + off);
        return std::string(s, ::strnlen(s, len));
    }
    if (fault) {
        return std::uint64_t{0};
    }
    std::uint64_t v = load_le(p, t.size);
    if (t.kind == FetchType::Kind::Bitfield) {
        const unsigned bits = t.size * 8;
        v = v << (64 - bits) >> (64 - bits);
        v = (v << (64 - t.bf_width - t.bf_offset)) >> (64 - t.bf_width);
    } else if (t.kind == FetchType::Kind::Signed && t.size < 8) {
        const unsigned shift = 64 - t.size * 8;
        v = static_cast<std::uint64_t>(static_cast<std::int64_t>(v << shift) >> shift);
    }
    return v;
}

HistKeyPart raw_value(const HistField& f, const Event& ev, const KprobeDef* def) {
    switch (f.source) {
    case HistSource::Field:
        return field_value(def->fields[static_cast<std::size_t>(f.field)], ev);
    case HistSource::Pid:
        return std::uint64_t{ev.pid};
    case HistSource::Cpu:
        return std::uint64_t{ev.cpu};
    case HistSource::Comm:
        return ev.comm;
    case HistSource::Ip:
        return ev.ip;
    case HistSource::ParentIp:
        return ev.parent_ip;
    case HistSource::Stacktrace:
        return ev.stack;
    case HistSource::UStacktrace: {
        // the tgid, then the user stack a uprobe's record carries
        std::vector<std::uint64_t> stack{ev.tgid};
        if (ev.type == EventType::Uprobe || ev.type == EventType::Uretprobe) {
            stack.insert(stack.end(), ev.stack.begin(), ev.stack.end());
        }
        return stack;
    }
    case HistSource::Hitcount:
        break;
    }
    return std::uint64_t{0};
}

// The key part with its modifier applied (hist_field_log2() and so on)
HistKeyPart key_value(const HistField& f, const Event& ev, const KprobeDef* def) {
    HistKeyPart v = raw_value(f, ev, def);
    auto* n = std::get_if<std::uint64_t>(&v);
    if (!n) {
        return v;
    }
    switch (f.modifier) {
    case HistModifier::Log2: {
        unsigned log = 0; // ilog2(roundup_pow_of_two(v)): ceil(log2 v)
        while (log < 64 && (std::uint64_t{1} << log) < *n) {
            log++;
        }
        *n = log;
        break;
    }
    case HistModifier::Buckets:
        *n = *n / f.buckets * f.buckets;
        break;
    case HistModifier::Usecs:
        *n /= 1000;
        break;
    default:
        break;
    }
    return v;
}

std::uint64_t number(const HistKeyPart& v) {
    const auto* n = std::get_if<std::uint64_t>(&v);
    return n ? *n : 0;
}

// <0, 0, >0 as tracing_map's comparators order two key parts
int compare_part(const HistField& f, const HistKeyPart& a, const HistKeyPart& b) {
    if (f.source == HistSource::Stacktrace || f.source == HistSource::UStacktrace) {
        return 0; // tracing_map_cmp_none()
    }
    if (f.is_string) {
        const auto* x = std::get_if<std::string>(&a);
        const auto* y = std::get_if<std::string>(&b);
        return x && y ? x->compare(*y) : 0;
    }
    const std::uint64_t x = number(a), y = number(b);
    if (f.is_signed) {
        const auto sx = static_cast<std::int64_t>(x), sy = static_cast<std::int64_t>(y);
        return sx < sy ? -1 : sx > sy;
    }
    return x < y ? -1 : x > y;
}

} // namespace

void HistTable::add(const Event& ev, const KprobeDef* def) {
    std::vector<HistKeyPart> key;
    key.reserve(spec_.keys.size());
    for (const HistField& f : spec_.keys) {
        key.push_back(key_value(f, ev, def));
    }
    auto it = entries_.find(key);
    if (it == entries_.end()) {
        if (entries_.size() >= spec_.size) {
            dropped_++; // tracing_map: no free element
            return;
        }
        HistEntry e;
        e.key = key;
        e.sums.assign(spec_.vals.size(), 0);
        e.comm = ev.comm; // save_comm() when the element is made
        it = entries_.emplace(std::move(key), std::move(e)).first;
    }
    hits_++;
    HistEntry& e = it->second;
    e.hitcount++;
    for (std::size_t i = 0; i < spec_.vals.size(); i++) {
        e.sums[i] += number(key_value(spec_.vals[i], ev, def));
    }
}

void HistTable::set(std::vector<HistEntry> entries, std::uint64_t hits, std::uint64_t dropped) {
    entries_.clear();
    for (auto& e : entries) {
        auto key = e.key;
        entries_.emplace(std::move(key), std::move(e));
    }
    hits_ = hits;
    dropped_ = dropped;
}

std::vector<HistEntry> HistTable::sorted() const {
    std::vector<HistEntry> out;
    out.reserve(entries_.size());
    for (const auto& [key, e] : entries_) {
        out.push_back(e);
    }
    const auto compare = [&](const HistSort& s, const HistEntry& a, const HistEntry& b) {
        if (s.name == "hitcount") {
            return a.hitcount < b.hitcount ? -1 : a.hitcount > b.hitcount;
        }
        for (std::size_t i = 0; i < spec_.vals.size(); i++) {
            if (spec_.vals[i].name == s.name) {
                return a.sums[i] < b.sums[i] ? -1 : a.sums[i] > b.sums[i];
            }
        }
        for (std::size_t i = 0; i < spec_.keys.size(); i++) {
            const HistField& f = spec_.keys[i];
            if (f.name == s.name) {
                // .execname sorts by pid, .sym by address: the stored number
                return compare_part(f, a.key[i], b.key[i]);
            }
        }
        return 0;
    };
    std::stable_sort(out.begin(), out.end(), [&](const HistEntry& a, const HistEntry& b) {
        for (const HistSort& s : spec_.sort) {
            int c = compare(s, a, b);
            if (s.descending) {
                c = -c;
            }
            if (c) {
                return c < 0;
            }
        }
        return false;
    });
    return out;
}

std::optional<fhook_hist_set> module_hist(const HistSpec& spec, const KprobeDef* def,
                                          std::uint32_t probe_id, std::uint32_t table,
                                          std::uint64_t features) {
    fhook_hist_set set{};
    set.size = sizeof(set);
    set.probe_id = probe_id;
    set.table = table;
    set.entries = spec.size;
    // kernel stacks: of function probes and entry kprobes (the module takes them)
    const bool stack_ok = (features & FHOOK_FEAT_HIST_STACK) &&
                          (!def || (!def->is_return && !def->is_uprobe && !def->is_tracepoint));
    const auto field = [&](const HistField& f, fhook_hist_field& out) {
        out.store = FHOOK_HIST_NO_STORE;
        switch (f.source) {
        case HistSource::Pid:
            out.src = FHOOK_HIST_SRC_PID;
            break;
        case HistSource::Cpu:
            out.src = FHOOK_HIST_SRC_CPU;
            break;
        case HistSource::Comm:
            out.src = FHOOK_HIST_SRC_COMM;
            break;
        case HistSource::Ip:
            out.src = FHOOK_HIST_SRC_IP;
            break;
        case HistSource::ParentIp:
            out.src = FHOOK_HIST_SRC_PARENT_IP;
            break;
        case HistSource::Field: {
            const ProbeField& pf = def->fields[static_cast<std::size_t>(f.field)];
            const FetchType& t = pf.type;
            using K = FetchType::Kind;
            const bool number = t.kind == K::Unsigned || t.kind == K::Signed || t.kind == K::Hex ||
                                t.kind == K::Symbol || t.kind == K::Char;
            if (!number || t.count || (t.size != 1 && t.size != 2 && t.size != 4 && t.size != 8)) {
                return false;
            }
            out.src = FHOOK_HIST_SRC_DATA;
            out.size = static_cast<std::uint8_t>(t.size);
            out.offset = pf.offset;
            out.flags = t.kind == K::Signed ? FHOOK_HIST_F_SIGNED : 0;
            out.store = pf.store < 64 ? static_cast<std::uint16_t>(pf.store) : FHOOK_HIST_NO_STORE;
            break;
        }
        case HistSource::Stacktrace:
            if (!stack_ok) {
                return false;
            }
            out.src = FHOOK_HIST_SRC_STACK;
            return true; // as it is
        case HistSource::UStacktrace:
            if (!(features & FHOOK_FEAT_HIST_USTACK)) {
                return false;
            }
            out.src = FHOOK_HIST_SRC_USTACK;
            return true;
        default:
            return false;
        }
        switch (f.modifier) {
        case HistModifier::Log2:
            out.op = FHOOK_HIST_OP_LOG2;
            break;
        case HistModifier::Buckets:
            out.op = FHOOK_HIST_OP_BUCKETS;
            out.param = f.buckets;
            break;
        case HistModifier::Usecs:
            out.op = FHOOK_HIST_OP_DIV;
            out.param = 1000;
            break;
        case HistModifier::Execname:
            set.flags |= FHOOK_HIST_F_COMM;
            break;
        default:
            break; // how it prints
        }
        return true;
    };
    for (const HistField& f : spec.keys) {
        if (!field(f, set.keys[set.nr_keys++])) {
            return std::nullopt;
        }
    }
    for (const HistField& f : spec.vals) {
        if (!field(f, set.vals[set.nr_vals++])) {
            return std::nullopt;
        }
    }
    return set;
}

std::vector<HistEntry> module_hist_entries(const HistSpec& spec, const std::uint8_t* data,
                                           std::uint32_t nr, std::uint32_t key_size,
                                           std::uint32_t elt_size) {
    std::vector<HistEntry> out;
    out.reserve(nr);
    for (std::uint32_t n = 0; n < nr; n++) {
        const std::uint8_t* e = data + std::size_t{n} * elt_size;
        HistEntry entry;
        std::size_t at = 0;
        for (const HistField& f : spec.keys) {
            if (f.source == HistSource::Comm) {
                const char* s = reinterpret_cast<const char*>(e + at);
                entry.key.emplace_back(std::string(s, ::strnlen(s, 16)));
                at += 16;
            } else if (f.source == HistSource::Stacktrace || f.source == HistSource::UStacktrace) {
                // (the tgid first), the frames, zeros after them
                std::vector<std::uint64_t> stack;
                const bool user = f.source == HistSource::UStacktrace;
                if (user) {
                    stack.push_back(load_le(e + at, 8));
                    at += 8;
                }
                for (unsigned i = 0; i < FHOOK_HIST_STACK_DEPTH; i++) {
                    if (const std::uint64_t ip = load_le(e + at + 8 * i, 8)) {
                        stack.push_back(ip);
                    } else {
                        break;
                    }
                }
                entry.key.emplace_back(std::move(stack));
                at += 8 * FHOOK_HIST_STACK_DEPTH;
            } else {
                entry.key.emplace_back(load_le(e + at, 8));
                at += 8;
            }
        }
        entry.hitcount = load_le(e + key_size, 8);
        for (std::size_t i = 0; i < spec.vals.size(); i++) {
            entry.sums.push_back(load_le(e + key_size + 8 * (1 + i), 8));
        }
        const char* comm = reinterpret_cast<const char*>(e + elt_size - 16);
        entry.comm.assign(comm, ::strnlen(comm, 16));
        out.push_back(std::move(entry));
    }
    return out;
}

std::vector<HistEntry> hist_since(const std::vector<HistEntry>& now,
                                  const std::vector<HistEntry>& before) {
    std::map<std::vector<HistKeyPart>, const HistEntry*> old;
    for (const HistEntry& e : before) {
        old.emplace(e.key, &e);
    }
    std::vector<HistEntry> out;
    for (const HistEntry& e : now) {
        HistEntry d = e;
        if (const auto it = old.find(e.key); it != old.end()) {
            d.hitcount -= it->second->hitcount;
            for (std::size_t i = 0; i < d.sums.size() && i < it->second->sums.size(); i++) {
                d.sums[i] -= it->second->sums[i];
            }
        }
        if (d.hitcount) {
            out.push_back(std::move(d));
        }
    }
    return out;
}

} // namespace fhook
