#!/usr/bin/env bash
# Manual check of the two set-up commands on a fresh Debian 12, in a debootstrap chroot (as root).
# Not a test: it downloads Debian, PyPI and npm packages. Its last result is in the README (Set-up).
#
#   tests/setup/fresh_debian_check.sh [nodesource|debian-node|no-node]   (default: nodesource)
#
# The chroot starts as `debootstrap --variant=minbase` plus python3, make, git and ca-certificates:
# no python3-venv, no Chromium, no compiler. "nodesource" adds Node.js as NodeSource ships it (npm
# inside the nodejs package, which conflicts with Debian's npm), repacked from this machine's nodejs
# when that is NodeSource's; "debian-node" adds Debian's nodejs without npm; "no-node" adds nothing.
# Then, from a clone: `make test-deps` as a normal user must stop with one line, and as root
# `make run` must reach "Serving" and `make test-deps` must install Chromium and nothing else.
set -euo pipefail
case="${1:-nodesource}"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work="${OYA_CHECK_DIR:-/var/tmp/oya-fresh-debian}"
root="$work/$case"
port="${PORT:-8790}"

[ "$(id -u)" = 0 ] || { echo "fresh_debian_check: run as root (debootstrap, chroot)"; exit 1; }
command -v debootstrap >/dev/null || apt-get install -y --no-install-recommends debootstrap
if [ ! -d "$work/pristine" ]; then
  debootstrap --variant=minbase --include=python3,make,git,ca-certificates bookworm \
    "$work/pristine" http://deb.debian.org/debian
fi
rm -rf "$root" && cp -a "$work/pristine" "$root"

if [ "$case" = nodesource ]; then
  dpkg -s nodejs | grep -q '^Maintainer: NodeSource' || { echo "this machine's nodejs is not NodeSource's"; exit 1; }
  pkg="$work/nodesource-deb"
  rm -rf "$pkg" && mkdir -p "$pkg/DEBIAN"
  # its files as they are now (`npm install -g npm` may have replaced some of the bundled npm's)
  { dpkg -L nodejs | grep -v '^/usr/lib/node_modules/npm/' | while read -r f; do
      if [ -e "$f" ] && [ ! -d "$f" ]; then echo "${f#/}"; fi; done
    echo usr/lib/node_modules/npm; } | tar -C / -cf - -T - | tar -xf - -C "$pkg"
  dpkg -s nodejs | grep -E '^(Package|Version|Architecture|Maintainer|Provides|Depends|Conflicts|Replaces):' \
    >"$pkg/DEBIAN/control"
  echo "Description: NodeSource's nodejs, repacked for Oya's set-up check" >>"$pkg/DEBIAN/control"
  dpkg-deb --build -Zgzip "$pkg" "$root/tmp/nodejs.deb" >/dev/null
  chroot "$root" dpkg -i /tmp/nodejs.deb >/dev/null
elif [ "$case" = debian-node ]; then
  chroot "$root" apt-get update -qq
  chroot "$root" apt-get install -y -qq --no-install-recommends nodejs >/dev/null
fi

# This machine's network set-up (resolver, the egress CA, pip's local indexes), nothing of Oya's.
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
[ -f /etc/pip.conf ] && cp /etc/pip.conf "$root/etc/pip.conf"
for d in /opt/wheels /opt/pypi /opt/pypi-more; do
  [ -d "$d" ] && mkdir -p "$root$d" && mount --bind -o ro "$d" "$root$d"
done
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
cleanup() { for m in /opt/pypi-more /opt/pypi /opt/wheels /dev /proc; do umount "$root$m" 2>/dev/null || true; done; }
trap cleanup EXIT

git clone -q "$repo" "$root/root/oya"
chroot "$root" useradd -m dev
git clone -q "$repo" "$root/home/dev/oya" && chroot "$root" chown -R dev: /home/dev/oya
in_root() { chroot "$root" env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
  SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
  PIP_CERT=/etc/ssl/certs/ca-certificates.crt bash -c "$1"; }

echo "== as a normal user: make test-deps"
in_root "su dev -c 'cd ~/oya && make test-deps'" && echo "UNEXPECTED: it passed" || true

echo "== as root: make run (PORT=$port)"
start=$SECONDS
# its own process group (setsid), so the server is stopped by that group's id and nothing else
setsid bash -c "$(declare -f in_root); root=$root; in_root 'cd /root/oya && make run PORT=$port'" \
  >"$root/make-run.log" 2>&1 &
group=$!
until grep -q Serving "$root/make-run.log" 2>/dev/null; do
  if ! kill -0 $group 2>/dev/null || [ $((SECONDS - start)) -gt 1800 ]; then
    kill -- -$group 2>/dev/null || true
    tail -20 "$root/make-run.log"; echo "FAILED: make run did not reach Serving"; exit 1
  fi
  sleep 5
done
echo "Serving after $((SECONDS - start)) s; HTTP $(in_root "python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:$port/').status)\"")"
kill -- -$group 2>/dev/null || true
wait $group || true
grep "oya setup" "$root/make-run.log" || true

echo "== as root: make test-deps, make llm, then the set-up tests and one real-browser test"
in_root "cd /root/oya && make test-deps && make llm >/dev/null && command -v chromium node npm c++ \
  && dpkg-query -W -f='\${Package} \${Version}\n' nodejs npm chromium g++ libgomp1 python3-venv 2>&1"
in_root "cd /root/oya && .venv/bin/python -m pytest -q -p no:cacheprovider tests/setup \
  tests/site/test_browser_runtime.py::test_mermaid_bundle_renders_offline"
