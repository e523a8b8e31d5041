#include <bpf/btf.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string_view>

#include <fhook/core/error.hpp>
#include <fhook/sys/btf.hpp>

namespace fhook {

namespace {

void append_printf(void* ctx, const char* fmt, va_list args) {
    va_list again;
    va_copy(again, args);
    const int n = std::vsnprintf(nullptr, 0, fmt, args);
    if (n > 0) {
        auto* out = static_cast<std::string*>(ctx);
        const std::size_t at = out->size();
        out->resize(at + static_cast<std::size_t>(n) + 1);
        std::vsnprintf(out->data() + at, static_cast<std::size_t>(n) + 1, fmt, again);
        out->resize(at + static_cast<std::size_t>(n));
    }
    va_end(again);
}

// Type `id` declared in C by libbpf's btf_dump, as `name` ("" for the
// type alone); "?" if libbpf cannot.
std::string declaration(const struct btf* b, std::uint32_t id, const std::string& name) {
    std::string out;
    struct btf_dump* d = btf_dump__new(b, append_printf, &out, nullptr);
    if (!d) {
        return "?";
    }
    btf_dump_emit_type_decl_opts opts;
    std::memset(&opts, 0, sizeof(opts));
    opts.sz = sizeof(opts);
    opts.field_name = name.c_str();
    const int err = btf_dump__emit_type_decl(d, id, &opts);
    btf_dump__free(d);
    return err ? "?" : out;
}

} // namespace

KernelBtf::KernelBtf(struct btf* b) : btf_(b) {}
KernelBtf::KernelBtf(KernelBtf&& o) noexcept
    : btf_(o.btf_), functions_(std::move(o.functions_)), indexed_(o.indexed_) {
    o.btf_ = nullptr;
}
KernelBtf& KernelBtf::operator=(KernelBtf&& o) noexcept {
    if (this != &o) {
        btf__free(btf_);
        btf_ = o.btf_;
        functions_ = std::move(o.functions_);
        indexed_ = o.indexed_;
        o.btf_ = nullptr;
    }
    return *this;
}
KernelBtf::~KernelBtf() {
    btf__free(btf_);
}

KernelBtf KernelBtf::load(const std::string& path) {
    struct btf* b = btf__parse(path.c_str(), nullptr);
    if (!b) {
        const int err = errno;
        throw_runtime("cannot read kernel types from '" + path + "': " + errno_text(err) +
                          (err == ENOENT ? ": the kernel has no BTF (CONFIG_DEBUG_INFO_BTF); use "
                                           "registers and offsets instead of names"
                                         : ""),
                      err);
    }
    return KernelBtf(b);
}

KernelBtf KernelBtf::load_split(const std::string& path, const KernelBtf& base) {
    struct btf* b = btf__parse_split(path.c_str(), base.btf_);
    if (!b) {
        const int err = errno;
        throw_runtime(
            "cannot read the module's kernel types from '" + path + "': " + errno_text(err), err);
    }
    return KernelBtf(b);
}

std::uint32_t KernelBtf::find_function(std::string_view name) const {
    if (!indexed_) {
        indexed_ = true;
        const struct btf* base = btf__base_btf(btf_);
        const std::uint32_t n = btf__type_cnt(btf_);
        for (std::uint32_t id = base ? btf__type_cnt(base) : 1; id < n; id++) {
            const struct btf_type* t = btf__type_by_id(btf_, id);
            const char* s = btf_is_func(t) ? btf__name_by_offset(btf_, t->name_off) : nullptr;
            if (s != nullptr) {
                functions_.emplace(s, id); // (the first of a name, as libbpf finds it)
            }
        }
    }
    const auto it = functions_.find(name);
    return it == functions_.end() ? 0 : it->second;
}

std::optional<KernelBtf::Function> KernelBtf::function(std::string_view name) const {
    const std::string n(name);
    const std::uint32_t id = find_function(name);
    if (id == 0) {
        return std::nullopt;
    }
    const struct btf_type* func = btf__type_by_id(btf_, static_cast<__u32>(id));
    const struct btf_type* proto = btf__type_by_id(btf_, func->type);
    if (!proto || !btf_is_func_proto(proto)) {
        return std::nullopt;
    }
    Function f;
    f.name = n;
    f.proto = func->type;
    f.ret = proto->type;
    const struct btf_param* p = btf_params(proto);
    for (int i = 0; i < btf_vlen(proto); i++) {
        if (i == btf_vlen(proto) - 1 && p[i].type == 0) {
            f.variadic = true; // "..."
            break;
        }
        const char* pn = btf__name_by_offset(btf_, p[i].name_off);
        f.params.push_back(Param{pn ? pn : "", p[i].type});
    }
    return f;
}

std::uint32_t KernelBtf::resolve(std::uint32_t id) const {
    for (int guard = 0; id && guard < 64; guard++) {
        const struct btf_type* t = btf__type_by_id(btf_, id);
        if (!t) {
            return 0;
        }
        if (btf_is_typedef(t) || btf_is_mod(t)) {
            id = t->type;
            continue;
        }
        return id;
    }
    return id;
}

KernelBtf::Kind KernelBtf::kind(std::uint32_t id) const {
    id = resolve(id);
    if (!id) {
        return Kind::Void;
    }
    const struct btf_type* t = btf__type_by_id(btf_, id);
    switch (btf_kind(t)) {
    case BTF_KIND_INT:
        return Kind::Int;
    case BTF_KIND_PTR:
        return Kind::Ptr;
    case BTF_KIND_ARRAY:
        return Kind::Array;
    case BTF_KIND_STRUCT:
        return Kind::Struct;
    case BTF_KIND_UNION:
        return Kind::Union;
    case BTF_KIND_ENUM:
    case BTF_KIND_ENUM64:
        return Kind::Enum;
    case BTF_KIND_FUNC_PROTO:
        return Kind::Func;
    default:
        return Kind::Other;
    }
}

std::uint32_t KernelBtf::size(std::uint32_t id) const {
    id = resolve(id);
    if (!id) {
        return 0;
    }
    const __s64 s = btf__resolve_size(btf_, id);
    return s < 0 ? 0 : static_cast<std::uint32_t>(s);
}

bool KernelBtf::is_signed(std::uint32_t id) const {
    id = resolve(id);
    const struct btf_type* t = id ? btf__type_by_id(btf_, id) : nullptr;
    if (!t) {
        return false;
    }
    if (btf_is_int(t)) {
        return btf_int_encoding(t) & BTF_INT_SIGNED;
    }
    if (btf_is_enum(t) || btf_is_enum64(t)) {
        return btf_kflag(t); // kflag: signed enum
    }
    return false;
}

std::uint32_t KernelBtf::pointee(std::uint32_t id) const {
    id = resolve(id);
    const struct btf_type* t = id ? btf__type_by_id(btf_, id) : nullptr;
    return t && btf_is_ptr(t) ? t->type : 0;
}

std::uint32_t KernelBtf::element(std::uint32_t id) const {
    id = resolve(id);
    const struct btf_type* t = id ? btf__type_by_id(btf_, id) : nullptr;
    return t && btf_is_array(t) ? btf_array(t)->type : 0;
}

std::uint32_t KernelBtf::elements(std::uint32_t id) const {
    id = resolve(id);
    const struct btf_type* t = id ? btf__type_by_id(btf_, id) : nullptr;
    return t && btf_is_array(t) ? btf_array(t)->nelems : 0;
}

bool KernelBtf::is_char(std::uint32_t id) const {
    return kind(id) == Kind::Int && size(id) == 1;
}

std::optional<KernelBtf::Member> KernelBtf::member(std::uint32_t id, std::string_view name) const {
    id = resolve(id);
    const struct btf_type* t = id ? btf__type_by_id(btf_, id) : nullptr;
    if (!t || !btf_is_composite(t)) {
        return std::nullopt;
    }
    const struct btf_member* m = btf_members(t);
    for (int i = 0; i < btf_vlen(t); i++) {
        const char* mn = btf__name_by_offset(btf_, m[i].name_off);
        const std::uint32_t bits = btf_member_bit_offset(t, static_cast<__u32>(i));
        const std::uint32_t bf = btf_member_bitfield_size(t, static_cast<__u32>(i));
        if (mn && *mn) {
            if (name == mn) {
                return Member{bits / 8, m[i].type, bf ? bf : (bits % 8 ? 1U : 0U)};
            }
            continue;
        }
        // an anonymous struct or union: its members are ours
        if (auto inner = member(m[i].type, name)) {
            inner->offset += bits / 8;
            return inner;
        }
    }
    return std::nullopt;
}

std::vector<std::string> KernelBtf::member_names(std::uint32_t id) const {
    std::vector<std::string> out;
    id = resolve(id);
    const struct btf_type* t = id ? btf__type_by_id(btf_, id) : nullptr;
    if (!t || !btf_is_composite(t)) {
        return out;
    }
    const struct btf_member* m = btf_members(t);
    for (int i = 0; i < btf_vlen(t); i++) {
        const char* mn = btf__name_by_offset(btf_, m[i].name_off);
        if (mn && *mn) {
            out.emplace_back(mn);
        } else {
            auto inner = member_names(m[i].type);
            out.insert(out.end(), inner.begin(), inner.end());
        }
    }
    return out;
}

std::string KernelBtf::type_name(std::uint32_t id) const {
    if (!id) {
        return "void";
    }
    const struct btf_type* t = btf__type_by_id(btf_, id);
    if (!t) {
        return "?";
    }
    const char* n = btf__name_by_offset(btf_, t->name_off);
    const std::string name = n ? n : "";
    switch (btf_kind(t)) {
    case BTF_KIND_INT:
    case BTF_KIND_TYPEDEF:
    case BTF_KIND_FLOAT:
        return name;
    case BTF_KIND_STRUCT:
        return "struct " + name;
    case BTF_KIND_UNION:
        return "union " + name;
    case BTF_KIND_ENUM:
    case BTF_KIND_ENUM64:
        return "enum " + name;
    case BTF_KIND_CONST:
        return "const " + type_name(t->type);
    case BTF_KIND_VOLATILE:
        return "volatile " + type_name(t->type);
    case BTF_KIND_RESTRICT:
    case BTF_KIND_TYPE_TAG:
        return type_name(t->type);
    case BTF_KIND_PTR: {
        if (kind(t->type) == Kind::Func) {
            return declaration(btf_, id, ""); // "int (*)(struct sock *)"
        }
        std::string inner = type_name(t->type);
        return inner + (inner.ends_with('*') ? "*" : " *");
    }
    case BTF_KIND_ARRAY:
        return type_name(btf_array(t)->type) + "[" + std::to_string(btf_array(t)->nelems) + "]";
    case BTF_KIND_FUNC_PROTO:
        return type_name(t->type);
    default:
        return name.empty() ? "?" : name;
    }
}

std::string KernelBtf::prototype(const Function& f) const {
    return declaration(btf_, f.proto, f.name);
}

bool KernelBtf::same_type(std::uint32_t a, std::uint32_t b) const {
    for (int guard = 0; guard < 64; guard++) {
        if (a == b) {
            return true;
        }
        const struct btf_type* x = a ? btf__type_by_id(btf_, a) : nullptr;
        const struct btf_type* y = b ? btf__type_by_id(btf_, b) : nullptr;
        if (!x || !y || btf_kind(x) != btf_kind(y)) {
            return false;
        }
        const char* xn = btf__name_by_offset(btf_, x->name_off);
        const char* yn = btf__name_by_offset(btf_, y->name_off);
        const bool same_name = std::string_view(xn ? xn : "") == std::string_view(yn ? yn : "");
        switch (btf_kind(x)) {
        case BTF_KIND_INT:
        case BTF_KIND_FLOAT:
        case BTF_KIND_ENUM:
        case BTF_KIND_ENUM64:
        case BTF_KIND_FWD:
            return same_name && x->size == y->size;
        case BTF_KIND_STRUCT:
        case BTF_KIND_UNION:
            // deduplicated BTF has one of each; a module's split BTF may
            // repeat one, always under its name
            return same_name && x->size == y->size && btf_vlen(x) == btf_vlen(y);
        case BTF_KIND_TYPEDEF:
            if (!same_name) {
                return false;
            }
            break;
        case BTF_KIND_PTR:
        case BTF_KIND_CONST:
        case BTF_KIND_VOLATILE:
        case BTF_KIND_RESTRICT:
        case BTF_KIND_TYPE_TAG:
            break;
        case BTF_KIND_ARRAY:
            if (btf_array(x)->nelems != btf_array(y)->nelems) {
                return false;
            }
            a = btf_array(x)->type;
            b = btf_array(y)->type;
            continue;
        case BTF_KIND_FUNC_PROTO: {
            if (btf_vlen(x) != btf_vlen(y)) {
                return false;
            }
            const struct btf_param* xp = btf_params(x);
            const struct btf_param* yp = btf_params(y);
            for (int i = 0; i < btf_vlen(x); i++) {
                if (!same_type(xp[i].type, yp[i].type)) {
                    return false;
                }
            }
            break; // then the return types
        }
        default:
            return false;
        }
        a = x->type;
        b = y->type;
    }
    return false; // deeper than any C type
}

bool KernelBtf::same_prototype(const Function& a, const Function& b) const {
    return same_type(a.proto, b.proto);
}

} // namespace fhook
