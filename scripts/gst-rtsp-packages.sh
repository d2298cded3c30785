#!/usr/bin/env bash
# Gathers GStreamer's RTSP server from Debian 12's packages, for a host that has a GPU but no
# GStreamer (a minimal container image, a cloud GPU image), so that the tests' live RTSP cameras run
# there too: tests/rtsp_server is built when CMake finds gstreamer-rtsp-server-1.0, and
# test_cli_sources (its RTSP cameras) and test_serve (restart, reload, takeover) use it. The result
# is a folder tree to copy onto that host:
#
#   bash scripts/gst-rtsp-packages.sh DEST   DEST/usr/...: copy onto the host's / without replacing
#                                            any file or folder it has, then run ldconfig there:
#   tar -C DEST -cf - usr | tar -C / -xf - --skip-old-files --no-same-owner && ldconfig
#
# What it holds (17 MB of packages, 58 MB unpacked): GStreamer 1.22, its base library, the plugins
# the RTSP cameras' pipeline uses (Matroska, H.264 parser, RTP, UDP, app), the RTSP server, and the
# headers and pkg-config files needed to build against them (GLib's among them, with those of the
# libraries their pkg-config files name). The packages are unpacked, not installed: the host's own
# libraries, newer GLib included, stay; the copy only adds what is missing. /lib and /bin are merged
# into /usr, as on hosts whose /lib is a link to usr/lib. GStreamer's GL library is not among them,
# so CMake leaves the GStreamer elements (gst/) out there.
# Needs Debian 12 with its package lists (apt-get update); nothing is installed on this machine.
set -euo pipefail

dest=${1:?usage: gst-rtsp-packages.sh DEST}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
work=$(mktemp -d /tmp/glcv-gst.XXXXXX)
trap 'rm -rf "$work"' EXIT

packages=(
    # run time
    libglib2.0-0 libgstreamer1.0-0 libgstreamer-plugins-base1.0-0 libgstreamer-plugins-bad1.0-0
    gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
    libgstrtspserver-1.0-0 liborc-0.4-0 libunwind8 libdw1 libelf1
    # build: the headers and pkg-config files, and those of the libraries the .pc files require
    libgstrtspserver-1.0-dev libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libglib2.0-dev
    liborc-0.4-dev libunwind-dev libdw-dev libelf-dev liblzma-dev libpcre2-dev libffi-dev zlib1g-dev
    libmount-dev libblkid-dev libselinux1-dev libsepol-dev
)
(cd "$work" && apt-get -oAPT::Sandbox::User=root download -qq "${packages[@]}") ||
    { echo "gst-rtsp-packages: apt-get download failed (run apt-get update first?)" >&2; exit 1; }
for f in "$work"/*.deb; do
    dpkg -x "$f" "$dest"
done
# Without GStreamer's GL library (not gathered) its pkg-config files would let CMake try to build
# the GStreamer elements: they go, as do the documentation, translations and introspection data.
rm -f "$dest"/usr/lib/*/pkgconfig/gstreamer-gl*.pc
rm -rf "$dest"/usr/share/doc "$dest"/usr/share/man "$dest"/usr/share/locale \
    "$dest"/usr/share/gtk-doc "$dest"/usr/share/gir-1.0
for d in lib bin sbin; do
    if [ -d "$dest/$d" ]; then
        mkdir -p "$dest/usr/$d"
        cp -a "$dest/$d/." "$dest/usr/$d/"
        rm -rf "${dest:?}/$d"
    fi
done
echo "gst-rtsp-packages: ${#packages[@]} packages in $dest ($(du -sh "$dest" | cut -f1))"
