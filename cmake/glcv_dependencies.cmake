# Finds what glcv is built with (included by the top CMakeLists.txt). Sets:
#   GLCV_HAVE_CUDA, GLCV_HAVE_FFMPEG, GLCV_HAVE_GLFW, GLCV_HAVE_ZSTD, GLCV_HAVE_OPENMP,
#   GLCV_HAVE_PYTHON (GLCV_PYTHON_EXECUTABLE: a python3 with numpy and cffi), GLCV_HAVE_GSTREAMER   ON/OFF
#   GLCV_DEPS                 the link dependencies of the library (imported targets, m, dl)
#   GLCV_PC_REQUIRES_PRIVATE  pkg-config modules the static archive needs
#   GLCV_PC_LIBS_PRIVATE      further link flags the static archive needs
# Imported targets are GLOBAL so that a parent project linking the static archive resolves them.
# The installed glcvConfig.cmake finds the same ones (cmake/glcvConfig.cmake.in).

find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED GLOBAL)
pkg_check_modules(GLCV_EPOXY REQUIRED IMPORTED_TARGET GLOBAL epoxy)
pkg_check_modules(GLCV_EGL REQUIRED IMPORTED_TARGET GLOBAL egl)
pkg_check_modules(GLCV_STB REQUIRED IMPORTED_TARGET GLOBAL stb)
# libdeflate: PNG files are compressed with it (and their chunks' CRC-32); required.
pkg_check_modules(GLCV_DEFLATE IMPORTED_TARGET GLOBAL libdeflate)
if(NOT GLCV_DEFLATE_FOUND)
  message(FATAL_ERROR "glcv: libdeflate was not found (pkg-config libdeflate; Debian: libdeflate-dev): glcv writes "
                      "PNG files with it")
endif()
set(GLCV_DEPS PkgConfig::GLCV_EPOXY PkgConfig::GLCV_EGL PkgConfig::GLCV_STB PkgConfig::GLCV_DEFLATE Threads::Threads m
              ${CMAKE_DL_LIBS})
set(GLCV_PC_REQUIRES_PRIVATE "epoxy egl stb libdeflate")
set(GLCV_PC_LIBS_PRIVATE "-lpthread -lm -ldl")

# Reports an optional dependency: fails when GLCV_WITH_<dep> is ON and it was not found.
function(glcv_report dep found what)
  if(GLCV_WITH_${dep} STREQUAL "ON" AND NOT found)
    message(FATAL_ERROR "GLCV_WITH_${dep}=ON, but ${what} was not found")
  endif()
  message(STATUS "glcv: ${what}: ${found}")
endfunction()

# CUDA: the tracker's, matcher's and correlator's CUDA engines and the CUDA-GL bridge.
set(GLCV_HAVE_CUDA OFF)
if(NOT GLCV_WITH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "75;80;86;89;90")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit GLOBAL)
    if(CUDAToolkit_FOUND)
      set(GLCV_HAVE_CUDA ON)
      list(APPEND GLCV_DEPS CUDA::cudart)
      string(APPEND GLCV_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
    endif()
  endif()
endif()
glcv_report(CUDA ${GLCV_HAVE_CUDA} "CUDA (compiler and runtime)")

# FFmpeg: media input (glcv/media.h).
set(GLCV_HAVE_FFMPEG OFF)
if(NOT GLCV_WITH_FFMPEG STREQUAL "OFF")
  set(glcv_ffmpeg_modules libavformat libavcodec libavdevice libswscale libavutil)
  pkg_check_modules(GLCV_FFMPEG IMPORTED_TARGET GLOBAL ${glcv_ffmpeg_modules})
  if(GLCV_FFMPEG_FOUND)
    set(GLCV_HAVE_FFMPEG ON)
    list(APPEND GLCV_DEPS PkgConfig::GLCV_FFMPEG)
    # As link flags, not Requires.private: pkg-config --static would pull in every library
    # FFmpeg itself was built with, while glcv links FFmpeg's shared libraries.
    foreach(dir IN LISTS GLCV_FFMPEG_LIBRARY_DIRS)
      string(APPEND GLCV_PC_LIBS_PRIVATE " -L${dir}")
    endforeach()
    foreach(lib IN LISTS GLCV_FFMPEG_LIBRARIES)
      string(APPEND GLCV_PC_LIBS_PRIVATE " -l${lib}")
    endforeach()
  endif()
endif()
glcv_report(FFMPEG ${GLCV_HAVE_FFMPEG} "FFmpeg (media input)")
# nv-codec-headers (Debian libffmpeg-nvenc-dev): the CUDA context type, so that FFmpeg's NVDEC decodes in
# the CUDA runtime's primary context even when the runtime made it first (glcv_media_set).
set(GLCV_HAVE_FFNVCODEC OFF)
if(GLCV_HAVE_FFMPEG)
  pkg_check_modules(GLCV_FFNVCODEC QUIET ffnvcodec)
  if(GLCV_FFNVCODEC_FOUND)
    set(GLCV_HAVE_FFNVCODEC ON)
  endif()
endif()

# GLFW: the windowed demo and the texture-ID integration example (not the library).
set(GLCV_HAVE_GLFW OFF)
if(NOT GLCV_WITH_GLFW STREQUAL "OFF")
  pkg_check_modules(GLCV_GLFW IMPORTED_TARGET GLOBAL glfw3)
  if(GLCV_GLFW_FOUND)
    set(GLCV_HAVE_GLFW ON)
  endif()
endif()
glcv_report(GLFW ${GLCV_HAVE_GLFW} "GLFW (windowed demo)")

# Zstandard: compressed frame-delta packets (glcv/delta.h); without it they are UNSUPPORTED.
set(GLCV_HAVE_ZSTD OFF)
if(NOT GLCV_WITH_ZSTD STREQUAL "OFF")
  pkg_check_modules(GLCV_ZSTD IMPORTED_TARGET GLOBAL libzstd)
  if(GLCV_ZSTD_FOUND)
    set(GLCV_HAVE_ZSTD ON)
    list(APPEND GLCV_DEPS PkgConfig::GLCV_ZSTD)
    string(APPEND GLCV_PC_REQUIRES_PRIVATE " libzstd")
  endif()
endif()
glcv_report(ZSTD ${GLCV_HAVE_ZSTD} "Zstandard (compressed delta packets)")

# Python 3 with numpy and cffi: the Python package (python/), which loads the shared library
# through cffi. One interpreter is chosen here, and the package, its tests and the examples' test use
# that one: GLCV_PYTHON_EXECUTABLE when given (it must have both), else the first of python3 on PATH
# and /usr/bin/python3 that has both (a pyenv or a venv without them on PATH: then Debian's).
set(GLCV_HAVE_PYTHON OFF)
if(NOT GLCV_WITH_PYTHON STREQUAL "OFF")
  set(GLCV_PYTHON_EXECUTABLE "" CACHE FILEPATH "The Python 3 the package is built and tested for (empty: chosen)")
  if(GLCV_PYTHON_EXECUTABLE)
    set(glcv_py_candidates "${GLCV_PYTHON_EXECUTABLE}")
  else()
    find_program(glcv_path_python3 NAMES python3 NO_CACHE)
    set(glcv_py_candidates ${glcv_path_python3} /usr/bin/python3)
    list(REMOVE_DUPLICATES glcv_py_candidates)
  endif()
  set(glcv_py_rejected "")
  foreach(py IN LISTS glcv_py_candidates)
    if(GLCV_HAVE_PYTHON OR NOT EXISTS "${py}")
      continue()
    endif()
    # What the package needs, and the interpreter itself (sys.executable: a pyenv shim would pick
    # its Python by the folder it runs in).
    execute_process(COMMAND ${py} -c "import sys, numpy, cffi; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3])"
                    RESULT_VARIABLE glcv_py_rc OUTPUT_VARIABLE glcv_py_out ERROR_VARIABLE glcv_py_err
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(glcv_py_rc EQUAL 0)
      set(GLCV_HAVE_PYTHON ON)
      string(REPLACE "\n" ";" glcv_py_out "${glcv_py_out}")
      list(GET glcv_py_out 0 GLCV_PYTHON_FOUND)
      list(GET glcv_py_out 1 GLCV_PYTHON_VERSION)
    else()
      string(REGEX MATCH "No module named '[a-z_]+'" glcv_py_why "${glcv_py_err}")
      if(NOT glcv_py_why)
        set(glcv_py_why "does not run")
      endif()
      list(APPEND glcv_py_rejected "${py} not used (${glcv_py_why})")
    endif()
  endforeach()
  foreach(r IN LISTS glcv_py_rejected)
    message(STATUS "glcv: Python: ${r}")
  endforeach()
  if(GLCV_HAVE_PYTHON)
    set(GLCV_PYTHON_EXECUTABLE "${GLCV_PYTHON_FOUND}")
  endif()
endif()
if(GLCV_HAVE_PYTHON)
  message(STATUS "glcv: Python 3 with numpy and cffi: ${GLCV_PYTHON_EXECUTABLE} (${GLCV_PYTHON_VERSION})")
else()
  glcv_report(PYTHON OFF "Python 3 with numpy and cffi (python3-numpy python3-cffi)")
endif()

# GStreamer 1.x with its GL library: the glcvsegment, glcvbgsub and glcvtrack elements (gst/).
set(GLCV_HAVE_GSTREAMER OFF)
if(NOT GLCV_WITH_GSTREAMER STREQUAL "OFF")
  pkg_check_modules(GLCV_GST IMPORTED_TARGET GLOBAL
                    gstreamer-1.0 gstreamer-base-1.0 gstreamer-video-1.0 gstreamer-gl-1.0)
  if(GLCV_GST_FOUND)
    set(GLCV_HAVE_GSTREAMER ON)
  endif()
endif()
glcv_report(GSTREAMER ${GLCV_HAVE_GSTREAMER} "GStreamer with GL (plugin)")

# OpenSSL's libcrypto: HMAC-SHA256, the constant-time comparison and the random nonces of the
# token handshake of 'glcv stream' (tools/cli/stream_crypto.c). The tool's, not the library's.
if(GLCV_BUILD_TOOLS)
  pkg_check_modules(GLCV_CRYPTO REQUIRED IMPORTED_TARGET GLOBAL libcrypto)
endif()

# 'glcv serve' (tools/service/): its configuration (libyaml), events to MQTT (libmosquitto) and
# NATS JetStream (libnats) as JSON (cJSON), its HTTP endpoint (libwebsockets). The tool's, not the
# library's; without them the tool is built without 'serve'.
set(GLCV_HAVE_SERVICE OFF)
if(GLCV_BUILD_TOOLS AND NOT GLCV_WITH_SERVICE STREQUAL "OFF")
  pkg_check_modules(GLCV_SERVICE_DEPS IMPORTED_TARGET GLOBAL yaml-0.1 libmosquitto libnats libcjson libwebsockets)
  if(GLCV_SERVICE_DEPS_FOUND)
    set(GLCV_HAVE_SERVICE ON)
  endif()
endif()
glcv_report(SERVICE ${GLCV_HAVE_SERVICE} "libyaml, libmosquitto, libnats, cJSON and libwebsockets (glcv serve)")

# OpenMP: the CPU engines' loops over rows and images (optional, always looked for).
find_package(OpenMP COMPONENTS C GLOBAL)
set(GLCV_HAVE_OPENMP ${OpenMP_C_FOUND})
if(GLCV_HAVE_OPENMP)
  list(APPEND GLCV_DEPS OpenMP::OpenMP_C)
  string(APPEND GLCV_PC_LIBS_PRIVATE " ${OpenMP_C_FLAGS}")
endif()
message(STATUS "glcv: OpenMP: ${GLCV_HAVE_OPENMP}")
