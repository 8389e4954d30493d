#!/usr/bin/env bash
# plot-schedules.sh: runs the schedules benchmark (bench/schedules.cc) and
# draws its figures with gnuplot (scripts/setup.sh installs gnuplot-nox):
# test RMSE against epochs and against seconds for the 2-D and the forced
# data-parallel plan (and the serial executor), and seconds per epoch against
# workers.
#
#   scripts/plot-schedules.sh [--quick] [--json FILE] [--save-json FILE] [--out PNG]
#                             [--bin-dir DIR]
#
# --json FILE reads the bench's JSON lines from FILE instead of running it;
# --save-json FILE keeps them; --out defaults to docs/img/schedules.png.
# Run after a Release build (build/bench/schedules).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin_dir="$root/build/bench"  # where the schedules bench is (--bin-dir)
out="$root/docs/img/schedules.png"
json="" save="" quick=()
usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=(--quick) ;;
    --json) json=${2:?}; shift ;;
    --save-json) save=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    --bin-dir) bin_dir=${2:?}; shift ;;
    -h|--help) usage ;;
    *) echo "plot-schedules.sh: unknown argument '$1'" >&2; usage ;;
  esac
  shift
done
command -v gnuplot >/dev/null || { echo "plot-schedules.sh: gnuplot not found (scripts/setup.sh installs it)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z "$json" ]]; then
  [[ -x "$bin_dir/schedules" ]] || { echo "plot-schedules.sh: $bin_dir/schedules not found (build first)" >&2; exit 1; }
  json="$tmp/schedules.json"
  "$bin_dir/schedules" "${quick[@]}" >"$json"
fi
[[ -n "$save" ]] && cp "$json" "$save"

# The bench writes flat JSON objects, one per line: pick fields by name.
extract() {  # FIGURE KEY=VALUE FIELD...  -> whitespace-separated columns
  local figure=$1 select=$2
  shift 2
  awk -v figure="$figure" -v select="$select" -v fields="$*" '
    function get(line, key,   m) {
      if (match(line, "\"" key "\": *(\"[^\"]*\"|[^,}]*)")) {
        m = substr(line, RSTART, RLENGTH)
        sub("^\"" key "\": *", "", m)
        gsub("\"", "", m)
        return m
      }
      return ""
    }
    {
      if (get($0, "figure") != figure) next
      split(select, kv, "=")
      if (select != "" && get($0, kv[1]) != kv[2]) next
      n = split(fields, f, " ")
      row = ""
      for (i = 1; i <= n; ++i) row = row (i > 1 ? " " : "") get($0, f[i])
      print row
    }' "$json"
}

for s in serial conflict_free_2d data_parallel; do
  extract rmse "schedule=$s" epoch elapsed_s test_rmse >"$tmp/rmse_$s.dat"
  [[ -s "$tmp/rmse_$s.dat" ]] || echo "plot-schedules.sh: no rmse figures for $s" >&2
done
extract epoch_time mode=distributed workers epoch_s epoch_s_min epoch_s_max >"$tmp/scale.dat"
serial_s=$(extract epoch_time mode=serial epoch_s | head -1)
cores=$(extract setup "" cores | head -1)
size=$(extract setup "" ratings rows cols | head -1)
floor=$(extract setup "" noise_floor_rmse | head -1)
read -r ratings rows cols <<<"$size"
[[ -n "$serial_s" ]] || serial_s=NaN

mkdir -p "$(dirname "$out")"
gnuplot <<EOF
set terminal pngcairo size 1500,460 font ",10"
set output "$out"
set multiplot layout 1,3 title "examples/mf.rgl, $ratings ratings over $rows x $cols, K = 16; all processes on one $cores-core machine"
set grid
set key top right
set style line 1 lc rgb "#555555" lw 2 pt 7 ps 0.7
set style line 2 lc rgb "#1f77b4" lw 2 pt 5 ps 0.9
set style line 3 lc rgb "#d62728" lw 2 pt 9 ps 1.1
set xlabel "epoch"
set xtics 1
set ylabel "test RMSE"
set title "test RMSE per epoch (2 workers, 2 servers)"
plot "$tmp/rmse_serial.dat" using 1:3 with linespoints ls 1 title "serial (rigel run)", \
     "$tmp/rmse_conflict_free_2d.dat" using 1:3 with linespoints ls 2 title "conflict-free 2-D (chosen)", \
     "$tmp/rmse_data_parallel.dat" using 1:3 with linespoints ls 3 title "data-parallel, relax W, H", \
     $floor with lines dt 2 lc rgb "#888888" title "noise floor"
set xlabel "seconds of training, start-up and data loading excluded (log scale)"
set title "test RMSE against time (2 workers, 2 servers)"
set logscale x
set xtics autofreq
unset key  # the same curves as the left panel
plot "$tmp/rmse_serial.dat" using 2:3 with linespoints ls 1 title "serial (rigel run)", \
     "$tmp/rmse_conflict_free_2d.dat" using 2:3 with linespoints ls 2 title "conflict-free 2-D (chosen)", \
     "$tmp/rmse_data_parallel.dat" using 2:3 with linespoints ls 3 title "data-parallel, relax W, H", \
     $floor with lines dt 2 lc rgb "#888888" title "noise floor"
unset logscale x
set xtics autofreq
set xlabel "workers"
set ylabel "seconds per epoch (median)"
set title "2-D plan: seconds per epoch (servers = min(workers, 2))"
set xrange [0.5:4.5]
set xtics (1, 2, 4)
set yrange [0:*]
set key bottom right
plot "$tmp/scale.dat" using 1:2:3:4 with yerrorlines ls 2 title "distributed (median; bars: range of rounds)", \
     $serial_s with lines ls 1 dt 2 title "serial executor (median)"
unset multiplot
EOF
echo "plot-schedules.sh: wrote $out" >&2
