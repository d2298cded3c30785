/* The shaders of shaders/NAME.glsl, embedded at build time (see cmake/embed_files.cmake). */
#ifndef GLCV_SHADERS_H
#define GLCV_SHADERS_H

typedef struct glcv_shader_file {
    const char *name; /* file name, e.g. "segment_mrf.glsl" */
    const char *text;
} glcv_shader_file;

/* Terminated by an entry whose name is NULL. */
extern const glcv_shader_file glcv_shader_files[];

#endif
