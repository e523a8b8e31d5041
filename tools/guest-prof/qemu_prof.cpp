// A QEMU TCG plugin that counts the guest instructions executed per
// translation block, for vmtests/profile.sh: at QEMU's exit it writes one
// line per block start address, "%016llx COUNT", to the file given as
// out=FILE (default /tmp/fhook-qemu-prof.out).  Under -icount every guest
// instruction is one tick of the guest clock, so these counts are the
// instructions `fhook bench` figures are made of, exactly and by address
// (perf in a TCG guest samples too rarely to see a few hundred
// instructions per call).
//
// The plugin API is declared here rather than taken from qemu-plugin.h,
// which Debian does not package: these are the version-1 entry points of
// QEMU 7.2 (bookworm); inline counters are QEMU_PLUGIN_INLINE_ADD_U64.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

extern "C" {
using qemu_plugin_id_t = std::uint64_t;
struct qemu_plugin_tb;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
using qemu_plugin_tb_trans_cb_t = void (*)(qemu_plugin_id_t, qemu_plugin_tb*);
using qemu_plugin_udata_cb_t = void (*)(qemu_plugin_id_t, void*);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_tb_trans_cb_t cb);
std::size_t qemu_plugin_tb_n_insns(const qemu_plugin_tb* tb);
std::uint64_t qemu_plugin_tb_vaddr(const qemu_plugin_tb* tb);
void qemu_plugin_register_vcpu_tb_exec_inline(qemu_plugin_tb* tb, qemu_plugin_op op, void* ptr,
                                              std::uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const void* info, int argc, char** argv);
}

namespace {

// One counter per (start, length) translation: a block retranslated with
// another length (an -icount budget, a page boundary) counts on its own.
struct Block {
    std::uint64_t vaddr;
    std::uint64_t insns;
    bool operator==(const Block&) const = default;
};
struct BlockHash {
    std::size_t operator()(const Block& b) const noexcept { return b.vaddr * 31 + b.insns; }
};

std::mutex lock;
std::unordered_map<Block, std::unique_ptr<std::uint64_t>, BlockHash> counters;
char out_path[4096] = "/tmp/fhook-qemu-prof.out";
bool written;

void write_counts() {
    std::lock_guard<std::mutex> guard(lock);
    if (written) {
        return;
    }
    written = true;
    std::unordered_map<std::uint64_t, std::uint64_t> by_start;
    for (const auto& [block, count] : counters) {
        if (*count) {
            by_start[block.vaddr] += *count;
        }
    }
    FILE* f = std::fopen(out_path, "w");
    if (!f) {
        std::perror(out_path);
        return;
    }
    for (const auto& [vaddr, count] : by_start) {
        std::fprintf(f, "%016llx %llu\n", static_cast<unsigned long long>(vaddr),
                     static_cast<unsigned long long>(count));
    }
    std::fclose(f);
}

void on_translate(qemu_plugin_id_t, qemu_plugin_tb* tb) {
    const Block block{qemu_plugin_tb_vaddr(tb), qemu_plugin_tb_n_insns(tb)};
    std::uint64_t* counter;
    {
        std::lock_guard<std::mutex> guard(lock);
        auto& slot = counters[block];
        if (!slot) {
            slot = std::make_unique<std::uint64_t>(0);
        }
        counter = slot.get();
    }
    // every execution of the block adds its instructions (a block left
    // early by an exception still counts whole: rare, and the same in
    // both runs profile.sh compares)
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, counter, block.insns);
}

void on_exit(qemu_plugin_id_t, void*) {
    write_counts();
}

} // namespace

int qemu_plugin_install(qemu_plugin_id_t id, const void*, int argc, char** argv) {
    for (int i = 0; i < argc; i++) {
        if (std::strncmp(argv[i], "out=", 4) == 0) {
            std::snprintf(out_path, sizeof(out_path), "%s", argv[i] + 4);
        } else {
            std::fprintf(stderr, "fhook qemu_prof: unknown argument '%s' (out=FILE)\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit, nullptr);
    // QEMU 7.2 runs plugin exit callbacks only on some ways out: the
    // process's own exit handlers catch the rest (before the statics go)
    std::atexit([] { write_counts(); });
    return 0;
}
