#!/usr/bin/env bash
# run.sh — one fuzzing campaign: run.sh FUZZ_BINARY TARGET SECONDS WORKDIR [extra libFuzzer args]
# TARGET is decode, ops, cli, exif, exif_write, jpeg, webp, tiff, bmp, manifest or utf8. The corpus
# starts from tests/fuzz/seeds/TARGET (plus, for decode and ops, assets/), tests/fuzz/corpus/TARGET (a
# kept, minimized corpus) and the regression inputs; new coverage goes to WORKDIR/corpus,
# crashes to WORKDIR/ (crash-*, leak-*, timeout-*, oom-*). The libFuzzer settings are the
# project's bounds: 10 s per input, 2 GiB of RSS. Exit status: libFuzzer's (0: nothing found).
# The figures (executions, time) are in WORKDIR/log's last "stat::" and "Done" lines.
set -euo pipefail
bin=$(realpath "$1") target=$2 secs=$3 work=$(realpath -m "$4")
shift 4
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
assets=${IMGPU_ASSETS:-$here/../../assets}
mkdir -p "$work/corpus"
seeds=("$work/corpus" "$here/seeds/$target" "$here/corpus/$target" "$here/regress/$target")
case $target in decode|ops) seeds+=("$assets") ;; esac
dict=() dname=$target
[ "$target" = exif_write ] && dname=exif   # the same blobs: exif.dict's tags and types
[ -f "$here/$dname.dict" ] && dict=(-dict="$here/$dname.dict")
existing=()
for d in "${seeds[@]}"; do [ -d "$d" ] && existing+=("$d"); done
cd "$work"
set +e
"$bin" "${existing[@]}" "${dict[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$work/" "$@" 2>&1 | tee "$work/log" |
    grep -E '^(#[0-9]+ +(INITED|DONE)|==[0-9]+==|SUMMARY|artifact_prefix|Test unit written|stat::)' | tail -n 40
rc=${PIPESTATUS[0]}
set -e
exit "$rc"
