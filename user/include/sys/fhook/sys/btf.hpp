// Kernel types from BTF (/sys/kernel/btf/vmlinux) through libbpf: function
// prototypes and member offsets for typed fetch arguments
// ($arg1->f_path.dentry, file->f_pos, $args) on every kernel with
// CONFIG_DEBUG_INFO_BTF, 6.1 included.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct btf;

namespace fhook {

class KernelBtf {
public:
    static constexpr const char* kVmlinuxPath = "/sys/kernel/btf/vmlinux";

    // Parses `path` (raw BTF or an ELF file with .BTF).  Runtime Error when
    // missing (CONFIG_DEBUG_INFO_BTF off) or malformed.
    static KernelBtf load(const std::string& path = kVmlinuxPath);
    // A module's BTF (/sys/kernel/btf/MODULE), split on `base` (vmlinux's),
    // which must outlive it.  Runtime Error as load().
    static KernelBtf load_split(const std::string& path, const KernelBtf& base);
    KernelBtf(KernelBtf&&) noexcept;
    KernelBtf& operator=(KernelBtf&&) noexcept;
    ~KernelBtf();

    struct Param {
        std::string name; // "" when BTF has none
        std::uint32_t type = 0;
    };
    struct Function {
        std::string name;
        std::uint32_t ret = 0; // 0: void
        std::vector<Param> params;
        bool variadic = false;
        std::uint32_t proto = 0; // its BTF FUNC_PROTO
    };
    // The function `name` (a BTF FUNC), nullopt if BTF has none.
    std::optional<Function> function(std::string_view name) const;

    // Type `id` without typedefs, const, volatile, restrict.
    std::uint32_t resolve(std::uint32_t id) const;
    // C spelling of type `id` ("struct file *", "size_t", "const char *",
    // "int (*)(struct sock *)").
    std::string type_name(std::uint32_t id) const;
    // "ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)",
    // libbpf's btf_dump C declaration.
    std::string prototype(const Function& f) const;
    // Types `a` and `b` of this BTF are the same C type: the same kinds,
    // qualifiers and typedef names all the way down, through pointers,
    // arrays and function prototypes (a callback's parameters count);
    // structs, unions and enums by kind and name.
    bool same_type(std::uint32_t a, std::uint32_t b) const;
    // The same return type, parameter types and variadic-ness (names aside).
    bool same_prototype(const Function& a, const Function& b) const;

    enum class Kind { Void, Int, Ptr, Array, Struct, Union, Enum, Func, Other };
    Kind kind(std::uint32_t id) const;             // of resolve(id)
    std::uint32_t size(std::uint32_t id) const;    // bytes, of resolve(id)
    bool is_signed(std::uint32_t id) const;        // ints and enums
    std::uint32_t pointee(std::uint32_t id) const; // Ptr: the target type
    std::uint32_t element(std::uint32_t id) const; // Array: the element type
    std::uint32_t elements(std::uint32_t id) const;
    bool is_char(std::uint32_t id) const; // a 1-byte int (char, u8...)

    struct Member {
        std::uint32_t offset = 0; // bytes from the start of the struct
        std::uint32_t type = 0;
        std::uint32_t bitfield_bits = 0; // 0: not a bit field
    };
    // Member `name` of struct/union `id` (anonymous members searched too),
    // nullopt if none.
    std::optional<Member> member(std::uint32_t id, std::string_view name) const;
    // The member names of struct/union `id`, for error messages.
    std::vector<std::string> member_names(std::uint32_t id) const;

private:
    explicit KernelBtf(struct btf* b);
    // the FUNC named `name`, 0: none (a split BTF's own: a module's function
    // is never its base's namesake in vmlinux)
    std::uint32_t find_function(std::string_view name) const;

    struct btf* btf_ = nullptr;
    // FUNC ids by name, made at the first lookup (libbpf searches every
    // type each time: fhook errors looks up every function's)
    mutable std::unordered_map<std::string_view, std::uint32_t> functions_;
    mutable bool indexed_ = false;
};

} // namespace fhook
