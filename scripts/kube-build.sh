#!/usr/bin/env bash
# kube-build.sh - upstream Kubernetes v1.20.2's kube-apiserver,
# kube-controller-manager, kube-scheduler, e2e.test (upstream's end-to-end
# test binary) and kubectl (the one e2e.test's specs were written for), built on this machine from Debian bookworm's `kubernetes`
# source package (1.20.5+really1.20.2: upstream v1.20.2 with its vendor tree)
# with Debian's Go 1.19.
#
# Everything lives outside the clone, in
# ${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-1.20.2}: the downloads
# (dl/, 35 MB), the source tree with its GOPATH and Go build cache (src/, 3.6 GB
# while building, removed after a successful build unless ALLOT_KUBE_KEEP_TREE=1),
# the build log (build.log) and the binaries (bin/, 390 MB). bin/.stamp names the
# recipe that built them: a second run with the same recipe prints the bin
# directory at once.
# The bin directory is the last line printed (stdout); progress goes to stderr:
#     bin=$(scripts/kube-build.sh | tail -1)
#
# What is done to the tree (docs/upstream-e2e.md says why):
# - the orig tarball is used as it is: Debian's three patches change only
#   kubectl's printing (cli-runtime's table printer, kubectl get/describe),
#   nothing in the servers or in e2e.test's specs;
# - vendor/github.com/modern-go/reflect2 v1.0.1 is replaced by v1.0.2 (Debian's
#   golang-github-modern-go-reflect2 source): 1.0.1 reads Go's runtime map
#   internals of Go < 1.18 and the apiserver crashes on map-valued responses;
# - pkg/generated/openapi/zz_generated.openapi.go (make gen_openapi) and
#   test/e2e/generated/bindata.go (hack/generate-bindata.sh) are generated with
#   the tree's own rules, as upstream's release process does.
#
# Environment: ALLOT_KUBE_CACHE (the cache dir), ALLOT_KUBE_KEEP_TREE=1 (keep
# src/ and its Go build cache: a rebuild after a recipe change is then faster).
set -Eeuo pipefail

KUBE_VERSION=1.20.2
DEB_VERSION=1.20.5+really1.20.2
POOL=http://deb.debian.org/debian/pool/main
# The pins: sha256 from Debian bookworm's signed Sources index (InRelease ->
# main/source/Sources.xz -> these files).
K8S_TARBALL=kubernetes_${DEB_VERSION}.orig.tar.gz
K8S_SHA256=b83c0780efb182d928dc63d46488a847f161f04e40a94b96bf5247dd671ecdfc
K8S_URL=$POOL/k/kubernetes/$K8S_TARBALL
R2_TARBALL=golang-github-modern-go-reflect2_1.0.2.orig.tar.gz
R2_SHA256=86049e7ba480c7da86b3d459f13a7c6c383a769134bf4eac0023a0aa024244de
R2_URL=$POOL/g/golang-github-modern-go-reflect2/$R2_TARBALL
GO=/usr/lib/go-1.19/bin
TARGETS=(kube-apiserver kube-controller-manager kube-scheduler kubectl e2e.test)
# A changed recipe rebuilds once: anything above changes it; bump recipe= when
# the steps below change.
RECIPE="k8s=$KUBE_VERSION src=$K8S_SHA256 reflect2=$R2_SHA256 go=golang-1.19 targets=${TARGETS[*]} recipe=1"

CACHE=${ALLOT_KUBE_CACHE:-$HOME/.cache/allot/kubernetes-$KUBE_VERSION}
BIN=$CACHE/bin
LOG=$CACHE/build.log

say() { echo "kube-build: $*" >&2; }

cached() {
  [ "$(cat "$BIN/.stamp" 2>/dev/null)" = "$RECIPE" ] || return 1
  local t
  for t in "${TARGETS[@]}"; do [ -x "$BIN/$t" ] || return 1; done
}

if cached; then
  echo "$BIN"
  exit 0
fi

mkdir -p "$CACHE"
# One build at a time per cache (two ctest runs, two clones).
exec 9>"$CACHE/.lock"
if ! flock -n 9; then
  say "another kube-build.sh is building in $CACHE; waiting for it"
  flock 9
fi
if cached; then
  echo "$BIN"
  exit 0
fi

step=start
on_error() {
  local rc=$?
  say "FAILED (exit $rc) at: $step"
  if [ -s "$LOG" ]; then
    say "last lines of $LOG:"
    tail -25 "$LOG" >&2
  fi
  exit "$rc"
}
trap on_error ERR
: >"$LOG"
start=$SECONDS

step="installing Debian packages"
# (etcd-server: not for the build, for tests/upstream/apiserver-smoke.sh and
# cluster mode)
pkgs=(golang-1.19-go rsync curl ca-certificates make openssl etcd-server)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >>"$LOG" 2>&1
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >>"$LOG" 2>&1
fi

# fetch URL FILE SHA256: download into dl/ (retried), keep it only if it matches.
fetch() {
  local url=$1 file=$CACHE/dl/$2 sum=$3
  mkdir -p "$CACHE/dl"
  if [ -f "$file" ] && echo "$sum  $file" | sha256sum -c --status; then return 0; fi
  say "downloading $2"
  rm -f "$file.part"
  curl -fsSL --retry 5 --retry-delay 5 --retry-all-errors --connect-timeout 30 \
    --max-time 900 -o "$file.part" "$url" >>"$LOG" 2>&1
  if ! echo "$sum  $file.part" | sha256sum -c --status; then
    rm -f "$file.part"
    echo "$2: sha256 mismatch (want $sum)" >>"$LOG"
    return 1
  fi
  mv "$file.part" "$file"
}
step="downloading the sources"
fetch "$K8S_URL" "$K8S_TARBALL" "$K8S_SHA256"
fetch "$R2_URL" "$R2_TARBALL" "$R2_SHA256"

# The tree, prepared once per recipe (src/.prepared holds the recipe).
SRC=$CACHE/src/kubernetes-$KUBE_VERSION
if [ "$(cat "$CACHE/src/.prepared" 2>/dev/null)" != "$RECIPE" ]; then
  step="unpacking"
  say "unpacking into $CACHE/src"
  rm -rf "$CACHE/src"
  mkdir -p "$CACHE/src"
  tar -xzf "$CACHE/dl/$K8S_TARBALL" -C "$CACHE/src"
  [ -f "$SRC/cmd/kube-apiserver/apiserver.go" ] || { echo "unexpected tarball layout" >>"$LOG"; false; }
  step="replacing vendored reflect2 1.0.1 by 1.0.2"
  r2=$CACHE/src/reflect2
  mkdir -p "$r2"
  tar -xzf "$CACHE/dl/$R2_TARBALL" -C "$r2" --strip-components=1
  vr2=$SRC/vendor/github.com/modern-go/reflect2
  grep -q '^# github.com/modern-go/reflect2 v1.0.1' "$SRC/vendor/modules.txt"
  find "$vr2" -maxdepth 1 -type f \( -name '*.go' -o -name '*.s' \) -delete
  cp "$r2"/*.go "$r2"/*.s "$r2/LICENSE" "$vr2/"
  rm -rf "$r2"
  echo "$RECIPE" >"$CACHE/src/.prepared"
fi

export PATH=$GO:$PATH
# hack/lib sets GOPATH=_output/local/go and GOCACHE under it (inside $CACHE);
# nothing is written to the clone, /tmp or ~/go. (GOFLAGS stays unset: hack/lib
# reads build tags out of it.)
export GOTMPDIR=$CACHE/tmp GOENV=off
mkdir -p "$GOTMPDIR"
cd "$SRC"

step="generating pkg/generated/openapi (make gen_openapi)"
say "generating the OpenAPI definitions and e2e bindata"
nice make gen_openapi KUBE_VERBOSE=0 >>"$LOG" 2>&1
step="generating test/e2e/generated/bindata.go (hack/generate-bindata.sh)"
nice ./hack/run-in-gopath.sh hack/generate-bindata.sh >>"$LOG" 2>&1

step="building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl"
say "building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (log: $LOG)"
nice hack/make-rules/build.sh cmd/kube-apiserver cmd/kube-controller-manager \
  cmd/kube-scheduler cmd/kubectl >>"$LOG" 2>&1
step="building test/e2e/e2e.test"
say "building e2e.test"
nice hack/make-rules/build.sh test/e2e/e2e.test >>"$LOG" 2>&1

step="installing the binaries into $BIN"
out=$SRC/_output/local/bin/$(go env GOOS)/$(go env GOARCH)
rm -rf "$BIN.new"
mkdir -p "$BIN.new"
for t in "${TARGETS[@]}"; do cp "$out/$t" "$BIN.new/$t"; done
v=$("$BIN.new/kube-apiserver" --version)
echo "$v" >>"$LOG"
[ "$v" = "Kubernetes v$KUBE_VERSION" ]
echo "$RECIPE" >"$BIN.new/.stamp"
rm -rf "$BIN"
mv "$BIN.new" "$BIN"
cd "$CACHE"
if [ "${ALLOT_KUBE_KEEP_TREE:-}" != 1 ]; then
  chmod -R u+w "$CACHE/src" "$CACHE/tmp" 2>/dev/null || true
  rm -rf "$CACHE/src" "$CACHE/tmp"
fi
say "built in $((SECONDS - start))s"
echo "$BIN"
