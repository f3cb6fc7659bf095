#!/usr/bin/env bash
# Builds wrk2 for the open-loop runs of `npm run bench` (bench/lib/wrk2.ts calls it when the binary is
# missing; bin/test-prerequisites.js before `npm test`).
# Usage: bench/tools/build-wrk2.sh OUT_DIR   -> OUT_DIR/wrk2 (idempotent: skips the build when present)
#
# The same pinned source tarball and Debian packages as ../shared/tools/build-wrk2.sh, plus one fix:
# wrk2's event loop (an old copy of Redis's ae.c) computes the wait for a timer that is already overdue
# within the same second as ~1 s instead of 0 (tv_sec = -1 clamped to 0, tv_usec ≈ 999 ms). The first
# connection timer is always overdue by the time the thread polls, so every run lost its first second,
# and mid-run, when no response is in flight and a send timer is late, the generator slept up to a
# second and charged that stall to the server as latency. Redis fixed the same code in 2013; the fix
# below is theirs: wait max(0, when − now).
set -euo pipefail
out=${1:?usage: build-wrk2.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
shared=$(cd "$here/../../../shared/tools" 2>/dev/null && pwd) || { echo "no ../shared/tools beside the repository (the pinned wrk2 tarball)" >&2; exit 1; }
tarball="$shared/wrk2-44a94c1.tar.gz"
mkdir -p "$out"
[ -x "$out/wrk2" ] && exit 0
for p in build-essential libssl-dev zlib1g-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential libssl-dev zlib1g-dev; break; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xzf "$tarball" -C "$work"
ae="$work/wrk2/src/ae.c"
python3 - "$ae" <<'PY'
import sys
path = sys.argv[1]
src = open(path).read()
old = """            tvp->tv_sec = shortest->when_sec - now_sec;
            if (shortest->when_ms < now_ms) {
                tvp->tv_usec = ((shortest->when_ms+1000) - now_ms)*1000;
                tvp->tv_sec --;
            } else {
                tvp->tv_usec = (shortest->when_ms - now_ms)*1000;
            }
            if (tvp->tv_sec < 0) tvp->tv_sec = 0;
            if (tvp->tv_usec < 0) tvp->tv_usec = 0;"""
new = """            long long ms = (shortest->when_sec - now_sec)*1000LL + shortest->when_ms - now_ms;
            if (ms < 0) ms = 0; /* overdue: poll without waiting */
            tvp->tv_sec = ms / 1000;
            tvp->tv_usec = (ms % 1000) * 1000;"""
if old not in src:
    sys.exit("ae.c: the timer-wait code to fix was not found (another wrk2 source?)")
open(path, "w").write(src.replace(old, new))
PY
make -C "$work/wrk2" -j"$(nproc)" >"$work/build.log" 2>&1 || { tail -20 "$work/build.log"; exit 1; }
cp "$work/wrk2/wrk" "$out/wrk2.tmp"
mv "$out/wrk2.tmp" "$out/wrk2"
echo "built $out/wrk2 (wrk2 44a94c1 with the ae.c timer fix)"
