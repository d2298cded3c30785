/* glcv: real-time GPU video analysis. Umbrella header. */
#ifndef GLCV_GLCV_H
#define GLCV_GLCV_H

#include "core.h"
#include "image.h"
#include "synth.h"
#include "context.h"
#include "cuda.h"
#include "segment.h"
#include "bgsub.h"
#include "delta.h"
#include "match.h"
#include "correlate.h"
#include "track.h"
#if GLCV_HAVE_FFMPEG
#include "media.h"
#endif

#endif
