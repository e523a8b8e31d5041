#!/usr/bin/env bash
# scripts/fleet-demo.sh: docs/img/fleet-prometheus.png, a Prometheus graph
# fed by fhook in a real run (docs/fleet.md).  `fhook latency --listen`
# times vfs_read in a 6.1 guest (fhook vm; QEMU's user network forwards
# 127.0.0.1:19110 on this host to the guest's 9110) while dd reads 4 KiB,
# then 64 KiB, then 1 MiB blocks; Debian's Prometheus on this host scrapes
# it every second; the graph is Prometheus's own answer (query_range):
# reads per second and the median read latency from fhook's buckets,
# drawn with gnuplot.  A figure, not a test; needs prometheus, gnuplot.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/docs/img/fleet-prometheus.png}
rel=$(awk '$1 ~ /^6\.1\.[0-9]+-[0-9]+-amd64$/ { print $1; exit }' "$top/build/kernels/targets")
mods=$top/build/kernels/$rel/lib/modules/$rel/kernel
port=19110 web=19090
for tool in prometheus gnuplot; do
	command -v $tool > /dev/null || { echo "fleet-demo: $tool missing (apt-get install prometheus gnuplot-nox)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'kill $prom 2> /dev/null; wait $prom 2> /dev/null; rm -rf "$work"' EXIT
cat > "$work/prometheus.yml" << END
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: fhook
    static_configs: [{targets: ['127.0.0.1:$port']}]
END
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/data" \
	--web.listen-address=127.0.0.1:$web --log.level=warn > "$work/prometheus.log" 2>&1 &
prom=$!
cat > "$work/demo.sh" << 'END'
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net; do
	insmod /root/$m.ko 2> /dev/null
done
ip link set lo up
ip addr add 10.0.2.15/24 dev eth0
ip link set eth0 up
fhook latency --listen 0.0.0.0:9110 -d 75 vfs_read > /dev/null 2>&1 &
sleep 5
for bs in 4k 64k 1M; do
	end=$(($(cut -d. -f1 /proc/uptime) + 20))
	while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
		dd if=/dev/zero of=/dev/null bs=$bs count=200 2> /dev/null
	done
done
wait
END
# the network card's driver and what it needs (modules on Debian's kernel)
virtio=""
for m in virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci failover net_failover virtio_net; do
	virtio+=" $(find "$mods" -name "$m.ko" | head -n 1)"
done
start=$(date +%s)
# shellcheck disable=SC2046
FHOOK_VM_QEMU_ARGS="-netdev user,id=n0,hostfwd=tcp:127.0.0.1:$port-:9110 -device virtio-net-pci,netdev=n0" \
	"$top/build/user/fhook" vm --kernel "$rel" --accel tcg --timeout 300 \
	$(for m in $virtio; do printf -- '--add %s ' "$m"; done) --add "$work/demo.sh" -- sh /root/demo.sh
end=$(date +%s)
# Prometheus's answers, a "seconds value" line per point
query() {
	curl -s -G "http://127.0.0.1:$web/api/v1/query_range" --data-urlencode "query=$1" \
		--data-urlencode "start=$start" --data-urlencode "end=$end" --data-urlencode step=1 |
		python3 -c 'import json, sys
for t, v in json.load(sys.stdin)["data"]["result"][0]["values"]:
    print(float(t) - '"$start"', v)'
}
query 'rate(fhook_function_duration_seconds_count{function="vfs_read"}[5s])' > "$work/rate"
query 'histogram_quantile(0.5, rate(fhook_function_duration_seconds_bucket{function="vfs_read"}[5s])) * 1e6' > "$work/p50"
[ -s "$work/rate" ] || { echo "fleet-demo: Prometheus has no samples (see $work/prometheus.log)" >&2; exit 1; }
gnuplot << END
set terminal pngcairo size 900,520 font ",11" noenhanced
set output "$out"
set multiplot layout 2,1 title "fhook latency --listen vfs_read, scraped every second by Prometheus ($rel guest, $(date -u +%F))"
set ylabel "reads / s"
set grid
unset xlabel
plot "$work/rate" using 1:2 with lines lw 2 title "rate(fhook_function_duration_seconds_count[5s])"
set ylabel "median, us"
set logscale y
set xlabel "seconds (dd bs=4k, then 64k, then 1M)"
plot "$work/p50" using 1:2 with lines lw 2 lc 2 title "histogram_quantile(0.5, rate(fhook_function_duration_seconds_bucket[5s]))"
unset multiplot
END
echo "fleet-demo: $out"
