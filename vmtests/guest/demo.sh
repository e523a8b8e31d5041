# shellcheck shell=sh
# vmtests/run.sh --demo: show real fhook events on the host terminal.
echo "FHOOK-DEMO-BEGIN"
say() { printf '\n$ %s\n' "$*"; }
run() { say "$*"; "$@" 2>&1; }

echo "fhook demo: $(uname -sr) guest under QEMU TCG, $(nproc) CPUs"
run insmod /fhook/fhook.ko
run fhook status
run fhook list functions 'vfs_*read*'
# dd reads and writes in 32-byte blocks: one vfs_read and one vfs_write each
run fhook trace vfs_read vfs_write -- dd if=/etc/passwd bs=32 status=none
say "fhook trace 'vfs_*' '!vfs_read' '!vfs_write' -- sh -c 'ls / > /dev/null' | tail -n 12"
fhook trace 'vfs_*' '!vfs_read' '!vfs_write' -- sh -c 'ls / > /dev/null' 2>&1 | tail -n 12
run rmmod fhook
echo "FHOOK-DEMO-END"
