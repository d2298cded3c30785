#!/usr/bin/env bash
# Builds a small FFmpeg with what glcv uses, from Debian 12's source package (the same version as
# Debian's libavcodec), for a host that has a GPU but no FFmpeg (a minimal container image, a
# cloud GPU image). The result is a folder tree to copy onto that host:
#
#   bash scripts/ffmpeg-minimal.sh DEST      DEST/usr/local/{bin,lib,include,...}: copy DEST/usr/local/.
#                                            to the host's /usr/local and run ldconfig there
#
# What it holds (about 30 MB): libavformat, libavcodec, libavdevice, libavfilter, libswscale,
# libswresample, libavutil and the ffmpeg program, with
#   - decoders and demuxers for the files and streams glcv reads (H.264, HEVC, MPEG-4 and DivX,
#     MJPEG, FFV1, raw video, PNG/JPEG/BMP/TIFF/TGA/PNM images; MP4, Matroska, AVI, MPEG-TS,
#     Annex-B; RTSP, RTP, HTTP, TCP, UDP; V4L2 cameras; lavfi graphs),
#   - encoders for the test fixtures (FFV1, MPEG-4, x264 and x265 through Debian's libx264 and
#     libx265, which are copied beside the libraries, as is libnuma; NVENC H.264/HEVC, loaded from the
#     driver at run time: data-centre GPUs such as the H100 have no NVENC),
#   - NVDEC/CUVID and NVENC through nv-codec-headers (loaded from the driver at run time, so the
#     libraries also run where there is no NVIDIA driver).
# Needs Debian 12 with deb-src reachable (it adds a private source list; nothing is installed
# system-wide but the build dependencies: nasm, libx264-dev, libx265-dev, libffmpeg-nvenc-dev).
set -euo pipefail

dest=${1:?usage: ffmpeg-minimal.sh DEST}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
work=$(mktemp -d /tmp/glcv-ffmpeg.XXXXXX)
trap 'rm -rf "$work"' EXIT
jobs=$(nproc 2>/dev/null || echo 2)

need=()
for p in nasm libx264-dev libx265-dev libffmpeg-nvenc-dev pkg-config build-essential xz-utils dpkg-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"
fi

# Debian's source package, through a source list of our own (the system's may have no deb-src).
mkdir -p "$work/parts" "$work/lists/partial" "$work/src"
cat >"$work/parts/debian-src.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt_opts=(-oDir::Etc::SourceList=/dev/null "-oDir::Etc::SourceParts=$work/parts" "-oDir::State::Lists=$work/lists"
          -oAPT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq
(cd "$work/src" && apt-get "${apt_opts[@]}" source --download-only -qq ffmpeg)
tar -xf "$work"/src/ffmpeg_*.orig.tar.xz -C "$work/src"
srcdir=$(find "$work/src" -maxdepth 1 -type d -name 'ffmpeg-*' | head -1)

list() { local IFS=,; echo "$*"; }
decoders=(h264 hevc mpeg4 msmpeg4v1 msmpeg4v2 msmpeg4v3 mpeg1video mpeg2video mjpeg ffv1 rawvideo png bmp tiff
          targa ppm pgm pgmyuv pbm pam h264_cuvid hevc_cuvid mjpeg_cuvid)
encoders=(ffv1 mpeg4 rawvideo png mjpeg libx264 libx265 h264_nvenc hevc_nvenc wrapped_avframe)
demuxers=(mov matroska avi h264 hevc mjpeg mpegts rtsp rtp sdp image2 image2pipe rawvideo
          image_png_pipe image_jpeg_pipe image_bmp_pipe image_tiff_pipe image_ppm_pipe image_pgm_pipe)
muxers=(mp4 mov matroska avi h264 hevc mpegts rtsp rtp null image2 rawvideo)
protocols=(file pipe fd tcp udp rtp http)
parsers=(h264 hevc mpeg4video mpegvideo mjpeg png bmp)
bsfs=(h264_mp4toannexb hevc_mp4toannexb extract_extradata null)
hwaccels=(h264_nvdec hevc_nvdec mjpeg_nvdec)

cd "$srcdir"
./configure --prefix=/usr/local --enable-shared --disable-static --disable-doc --disable-debug \
    --disable-ffplay --disable-ffprobe --enable-gpl --enable-libx264 --enable-libx265 \
    --enable-ffnvcodec --enable-nvdec --enable-nvenc --enable-cuvid \
    --disable-everything --enable-indev=lavfi,v4l2 --enable-filters \
    --enable-decoder="$(list "${decoders[@]}")" --enable-encoder="$(list "${encoders[@]}")" \
    --enable-demuxer="$(list "${demuxers[@]}")" --enable-muxer="$(list "${muxers[@]}")" \
    --enable-protocol="$(list "${protocols[@]}")" --enable-parser="$(list "${parsers[@]}")" \
    --enable-bsf="$(list "${bsfs[@]}")" --enable-hwaccel="$(list "${hwaccels[@]}")" \
    --disable-xlib --disable-libxcb --disable-sdl2 --disable-vaapi --disable-vdpau --disable-lzma \
    --disable-bzlib --disable-iconv --disable-alsa --disable-sndio --disable-securetransport \
    --extra-ldflags='-Wl,-rpath,$$ORIGIN' >"$work/configure.log"
make -j"$jobs" >"$work/make.log"
make install DESTDIR="$dest" >/dev/null
# libx264, libx265 and libnuma from Debian, beside the libraries that need them.
for lib in libx264 libx265 libnuma; do
    cp -L "$(ldconfig -p | awk -v l="$lib" '$1 ~ "^" l "\\.so\\.[0-9]+$" && /x86-64/ {print $NF; exit}')" "$dest/usr/local/lib/"
done
rm -rf "$dest/usr/local/share/ffmpeg/examples"
du -sh "$dest"
echo "FFmpeg $(cat VERSION 2>/dev/null || echo 5.1) in $dest/usr/local"
