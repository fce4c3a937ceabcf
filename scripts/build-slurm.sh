#!/usr/bin/env bash
# Build slurmctld/slurmd from Debian's source archive into /opt/archform/slurm/<version>,
# so `archform verify` and the tests can parse generated configs with the parser of the
# version a blueprint declares (issue 15). Usage:
#   scripts/build-slurm.sh [VERSION...]      default: 24.11.5 26.05.5
# Env: ARCHFORM_SLURM_BUILD_ROOT (default /opt/archform/slurm), JOBS (default: nproc).
# Sources: the upstream tarball Debian ships as slurm-wlm_<ver>.orig.tar.gz
#   24.11.5: https://packages.debian.org/source/trixie/slurm-wlm
#   26.05.5: https://packages.debian.org/source/sid/slurm-wlm
# Cached by version: a prefix whose sbin/slurmctld -V prints the version is not rebuilt.
# The source tarball is kept as $ROOT/<version>.orig.tar.gz (fetched alone for a cached
# build without it): tests/spec/test_slurm_module.py regenerates the Slurm option tables
# from it (scripts/gen-slurm-options --src).
# Needs root and apt-get for the build dependencies and the deb-src entries.
set -euo pipefail
ROOT=${ARCHFORM_SLURM_BUILD_ROOT:-/opt/archform/slurm}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
[ $# -gt 0 ] || set -- 24.11.5 26.05.5
say() { printf 'build-slurm: %s\n' "$*" >&2; }

built() { # VERSION -> 0 when $ROOT/VERSION already runs and reports VERSION
  local out
  out=$("$ROOT/$1/sbin/slurmctld" -V 2>/dev/null) || return 1
  [ "$out" = "slurm $1" ]
}

kept() { [ -s "$ROOT/$1.orig.tar.gz" ]; } # VERSION -> 0 when its source tarball is kept

need_todo=0
for v in "$@"; do { built "$v" && kept "$v"; } || need_todo=1; done
if [ "$need_todo" = 0 ]; then say "cached: $* under $ROOT"; exit 0; fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  list=/etc/apt/sources.list.d/archform-slurm-src.sources
  if [ ! -f "$list" ]; then
    say "adding deb-src entries (bookworm trixie unstable) in $list"
    cat > "$list" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm trixie unstable
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    build-essential pkg-config dpkg-dev libmunge-dev munge libjson-c-dev libyaml-dev \
    libhwloc-dev liblz4-dev zlib1g-dev python3 >/dev/null
fi

fetch_orig() { # VERSION: $ROOT/VERSION.orig.tar.gz from Debian's source package (own shell)
  local v=$1 work deb
  kept "$v" && return 0
  work=$(mktemp -d /tmp/archform-slurm-fetch.XXXXXX)
  # Expanded now: $work is local to this function, gone when the EXIT trap runs (set -u).
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  cd "$work"
  # Only the upstream tarball: Debian's orig.tar.gz is SchedMD's release tarball.
  deb=$(apt-cache showsrc slurm-wlm | awk -v v="$v" '$1=="Version:" && index($2, v"-")==1 {print $2; exit}' || true)
  [ -n "$deb" ] || { say "error: no Debian source package for slurm $v (hint: apt-cache showsrc slurm-wlm)"; exit 2; }
  # The .dsc/.debian.tar of a point release can be gone from the mirror while the orig
  # tarball (checked by apt against the Sources index) is still served: only it is used.
  apt-get source -qq --download-only "slurm-wlm=$deb" >/dev/null 2>&1 || true
  if [ ! -f "slurm-wlm_$v.orig.tar.gz" ]; then
    # A final answer from the mirror (404), not a broken build: leave a marker that the
    # tests read, so they name it (a skip locally; under ARCHFORM_REQUIRE_TOOLS a failure).
    mkdir -p "$ROOT"
    printf 'apt-get source slurm-wlm=%s: the Debian mirror reached from this machine does not serve slurm-wlm_%s.orig.tar.gz (checked %s)\n' \
      "$deb" "$v" "$(date -u +%Y-%m-%d)" > "$ROOT/$v.unobtainable"
    say "error: apt-get source slurm-wlm=$deb gave no slurm-wlm_$v.orig.tar.gz (the mirror does not serve it; wrote $ROOT/$v.unobtainable)"
    exit 2
  fi
  rm -f "$ROOT/$v.unobtainable"
  mkdir -p "$ROOT"
  cp "slurm-wlm_$v.orig.tar.gz" "$ROOT/.$v.orig.tar.gz.tmp"
  mv -f "$ROOT/.$v.orig.tar.gz.tmp" "$ROOT/$v.orig.tar.gz"
  say "kept: $ROOT/$v.orig.tar.gz"
}

build_one() { # VERSION: configure, make, install the kept source (runs in its own shell)
  local v=$1 work src
  (fetch_orig "$v") # a subshell: its EXIT trap removes its own download folder
  work=$(mktemp -d /tmp/archform-slurm-build.XXXXXX)
  # shellcheck disable=SC2064 # expanded now, as in fetch_orig
  trap "rm -rf '$work'" EXIT
  cd "$work"
  tar xzf "$ROOT/$v.orig.tar.gz"
  src=$(find . -maxdepth 1 -type d -name 'slurm-*' | head -1)
  cd "$src"
  rm -rf "${ROOT:?}/$v"
  ./configure -q --prefix="$ROOT/$v" --sysconfdir="$ROOT/$v/etc" --disable-debug >/dev/null
  make -s -j"$JOBS" >/dev/null 2>&1 || make -j"$JOBS"
  make -s install >/dev/null
  built "$v" || { say "error: $ROOT/$v/sbin/slurmctld -V does not report $v"; exit 1; }
  say "built: $("$ROOT/$v/sbin/slurmctld" -V)"
}

failed=()
for v in "$@"; do
  # A fresh shell per version, so one missing source does not stop the others.
  fns="$(declare -f say built kept fetch_orig build_one)"
  if built "$v"; then
    say "cached: $v"
    ROOT=$ROOT bash -euo pipefail -c "$fns; fetch_orig $v" || failed+=("$v")
    continue
  fi
  say "building slurm $v into $ROOT/$v (about 3 min with 2 idle cores)"
  ROOT=$ROOT JOBS=$JOBS bash -euo pipefail -c "$fns; build_one $v" || failed+=("$v")
done
if [ ${#failed[@]} -gt 0 ]; then
  say "error: not built: ${failed[*]} (their tests skip locally and fail in CI; a release whose source the mirror does not serve, <version>.unobtainable, skips in CI too, with the mirror's answer)"
  exit 1
fi
