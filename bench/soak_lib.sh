# What the soak scripts (stream_soak.sh, serve_soak.sh) share.

# sample PID: "rss_mb fds threads" of a live process, nothing once it is gone
sample() {
    local rss threads fds
    rss=$(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null) || return
    threads=$(sed -n 's/^Threads:[[:space:]]*\([0-9]*\)/\1/p' "/proc/$1/status" 2>/dev/null) || return
    fds=$(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
    [ -n "$rss" ] && [ -n "$threads" ] && echo "$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }') $fds $threads"
}

# soak_table SAMPLES NAME TOTAL UNIT PER: the Markdown table of one process from SAMPLES (lines
# "x rss_mb fds threads", x growing: frames, seconds): the value after warm-up (x >= TOTAL / 10), at
# the end, and the slope per PER of x over the run and over its last half; UNIT names PER
soak_table() {
    echo "| $2 | after warm-up | end | slope per $4 | slope per $4, last half |"
    echo "|---|---:|---:|---:|---:|"
    awk -v total="$3" -v per="$5" '
        { f[NR] = $1; for (q = 1; q <= 3; q++) v[q, NR] = $(q + 1) }
        function slope(q, from,    i, n, sx, sy, sxx, sxy, d) {
            n = 0; sx = sy = sxx = sxy = 0
            for (i = from; i <= NR; i++) { n++; sx += f[i]; sy += v[q, i]; sxx += f[i] * f[i]; sxy += f[i] * v[q, i] }
            d = n * sxx - sx * sx
            return d > 0 ? (n * sxy - sx * sy) / d * per : 0
        }
        END {
            if (NR < 4) { print "| (too few samples) | | | | |"; exit }
            split("RSS MB|open fds|threads", name, "|")
            w = 1; while (w < NR && f[w] < total / 10) w++
            h = 1; while (h < NR && f[h] < f[NR] / 2) h++
            for (q = 1; q <= 3; q++)
                printf "| %s | %s (at %d) | %s | %+.3f | %+.3f |\n", name[q], v[q, w], f[w], v[q, NR], slope(q, w), slope(q, h)
        }' "$1"
}
