# shellcheck shell=sh
# The demo's commands, run in a guest: by scripts/demo.sh through
# `fhook vm --no-load` (README's first command), and by vmtests/run.sh --demo.
say() { printf '\n$ %s\n' "$*"; }
run() { say "$*"; "$@" 2>&1; }

echo "fhook demo: $(uname -sr) guest under QEMU, $(nproc) CPUs"
run insmod /fhook/fhook.ko
run fhook --version
# 1. function events: dd reads and writes in 32-byte blocks, one vfs_read
# and one vfs_write each, printed as tracefs' trace_pipe prints them
run fhook trace vfs_read vfs_write -- dd if=/etc/passwd bs=32 count=4 status=none of=/dev/null
# 2. a kprobe with fetched arguments: the open's directory fd, its path
# (a user string behind the second argument) and its flags: the shell
# opens /dev/null for writing, cat opens /etc/passwd.  (cat's output goes
# to /dev/null: busybox cat writes with sendfile(), which does not take
# the file position's lock, and could write over fhook's lines in a file
# that both share.)
run fhook trace 'p:open do_sys_openat2 dfd=$arg1:s32 path=+0($arg2):ustring flags=+0($arg3):x64' -- sh -c 'cat /etc/passwd > /dev/null'
# 3. a latency histogram kept in the module (libbpf-tools' funclatency),
# where the kernel has direct calls (not arm64's 6.1)
if fhook status 2>/dev/null | grep -q '^features:.* latency'; then
	run fhook latency -u vfs_read -- dd if=/dev/zero of=/dev/null bs=4k count=2000 status=none
else
	say "(no fhook latency here: this kernel has no direct calls)"
fi
# 4. how ftrace hooks a function: its call site, idle and armed
run fhook explain --arm ops vfs_read
# 5. the call tree under a function, with durations (function_graph)
say "fhook graph --depth 2 do_sys_openat2 -- head -n 1 /etc/passwd | head -n 16"
fhook graph --depth 2 do_sys_openat2 -- head -n 1 /etc/passwd 2>&1 | head -n 16
run rmmod fhook
