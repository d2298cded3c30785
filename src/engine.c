/* The GL engine: programs, textures and buffers, the pass primitive (fragment or compute), timer
 * queries, and the choice of mode. Uploads, copies and read-backs: engine_transfer.c. The engine
 * object they share is in engine_internal.h, which only these two files include.
 *
 * Why one file of about 1,200 lines: programs, textures, framebuffers, passes, timing and the
 * mode probe all work on the object's caches and the nesting of the host's state, and the probe
 * runs real passes; split further, each part would need the others' internals. */
#include "engine.h"

#include "core_internal.h"
#include "gl.h"
#include "shaders.h"

#include <glcv/context.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"

/* ---- formats ------------------------------------------------------------------------------ */

typedef struct format_info {
    GLenum internal, format, type;
    const char *image_layout; /* GLSL image format qualifier */
    const char *image_type;
    const char *value_type;
} format_info;

static const format_info formats[GLCV_FORMAT_COUNT] = {
    [GLCV_FORMAT_R8] = {GL_R8, GL_RED, GL_UNSIGNED_BYTE, "r8", "image2D", "vec4"},
    [GLCV_FORMAT_RG8UI] = {GL_RG8UI, GL_RG_INTEGER, GL_UNSIGNED_BYTE, "rg8ui", "uimage2D", "uvec4"},
    [GLCV_FORMAT_RGBA8] = {GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, "rgba8", "image2D", "vec4"},
    [GLCV_FORMAT_RGBA32F] = {GL_RGBA32F, GL_RGBA, GL_FLOAT, "rgba32f", "image2D", "vec4"},
    [GLCV_FORMAT_RGBA32I] = {GL_RGBA32I, GL_RGBA_INTEGER, GL_INT, "rgba32i", "iimage2D", "ivec4"},
    [GLCV_FORMAT_R32UI] = {GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, "r32ui", "uimage2D", "uvec4"},
    [GLCV_FORMAT_R16UI] = {GL_R16UI, GL_RED_INTEGER, GL_UNSIGNED_SHORT, "r16ui", "uimage2D", "uvec4"},
    [GLCV_FORMAT_RGBA16UI] = {GL_RGBA16UI, GL_RGBA_INTEGER, GL_UNSIGNED_SHORT, "rgba16ui", "uimage2D", "uvec4"},
    [GLCV_FORMAT_R8UI] = {GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE, "r8ui", "uimage2D", "uvec4"},
    [GLCV_FORMAT_RGBA8UI] = {GL_RGBA8UI, GL_RGBA_INTEGER, GL_UNSIGNED_BYTE, "rgba8ui", "uimage2D", "uvec4"},
    [GLCV_FORMAT_R32F] = {GL_R32F, GL_RED, GL_FLOAT, "r32f", "image2D", "vec4"},
    [GLCV_FORMAT_RGBA32UI] = {GL_RGBA32UI, GL_RGBA_INTEGER, GL_UNSIGNED_INT, "rgba32ui", "uimage2D", "uvec4"},
};

static int format_is_unsigned(glcv_format f)
{
    return f == GLCV_FORMAT_RG8UI || f == GLCV_FORMAT_R32UI || f == GLCV_FORMAT_R16UI || f == GLCV_FORMAT_RGBA16UI ||
           f == GLCV_FORMAT_R8UI || f == GLCV_FORMAT_RGBA8UI || f == GLCV_FORMAT_RGBA32UI;
}

/* ---- shader sources ----------------------------------------------------------------------- */

/* Returns a malloc'd copy of shaders/<name>: from $GLCV_SHADER_DIR when set (development),
 * else the embedded text. */
static char *shader_text(const char *name, const glcv_logger *lg)
{
    const char *dir = getenv("GLCV_SHADER_DIR");
    if (dir && *dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "rb");
        if (f) {
            char *buf = NULL;
            long n = -1;
            if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
                (buf = malloc((size_t)n + 1)) != NULL) {
                if (fread(buf, 1, (size_t)n, f) == (size_t)n) {
                    buf[n] = '\0';
                    fclose(f);
                    glcv_logf(lg, GLCV_LOG_DEBUG, "shader %s loaded from %s", name, path);
                    return buf;
                }
                free(buf);
            }
            fclose(f);
        }
        glcv_logf(lg, GLCV_LOG_WARN, "GLCV_SHADER_DIR: cannot read %s; using the embedded copy", path);
    }
    for (const glcv_shader_file *s = glcv_shader_files; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return strdup(s->text);
    glcv_logf(lg, GLCV_LOG_ERROR, "no shader named %s", name);
    return NULL;
}

/* A growable string. */
typedef struct text {
    char *s;
    size_t n, cap;
    int failed;
} text;

static void text_add(text *t, const char *s)
{
    size_t k = strlen(s);
    if (t->failed)
        return;
    if (t->n + k + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap * 2 : 4096) + k;
        char *p = realloc(t->s, cap);
        if (!p) {
            t->failed = 1;
            return;
        }
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->n, s, k + 1);
    t->n += k;
}

static void text_addf(text *t, const char *fmt, ...) GLCV_PRINTF(2, 3);
static void text_addf(text *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    text_add(t, buf);
}

/* Whether a shader compiled (GL_COMPILE_STATUS) or a program linked (GL_LINK_STATUS); when not,
 * logs the info log as "<kind> <what> failed to <verb>". */
static int gl_object_ok(GLuint obj, GLenum status, const char *what, const glcv_logger *lg)
{
    int shader = status == GL_COMPILE_STATUS;
    GLint ok = 0;
    if (shader)
        glGetShaderiv(obj, status, &ok);
    else
        glGetProgramiv(obj, status, &ok);
    if (ok)
        return 1;
    char log[4096] = "";
    if (shader)
        glGetShaderInfoLog(obj, sizeof log, NULL, log);
    else
        glGetProgramInfoLog(obj, sizeof log, NULL, log);
    glcv_logf(lg, GLCV_LOG_ERROR, "%s %s failed to %s:\n%s", shader ? "shader" : "program", what,
              shader ? "compile" : "link", log);
    return 0;
}

static glcv_status compile_shader(GLenum type, const char *src, const char *what, const glcv_logger *lg,
                                  GLuint *out)
{
    GLuint sh = glCreateShader(type);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    if (!gl_object_ok(sh, GL_COMPILE_STATUS, what, lg)) {
        glDeleteShader(sh);
        return GLCV_ERROR_GL;
    }
    *out = sh;
    return GLCV_OK;
}

/* Links the shaders sh[0..n-1] (names 0 are skipped). */
static glcv_status link_program(const GLuint *sh, int n, const char *what, const glcv_logger *lg, GLuint *out)
{
    GLuint p = glCreateProgram();
    for (int i = 0; i < n; i++)
        if (sh[i])
            glAttachShader(p, sh[i]);
    glLinkProgram(p);
    int ok = gl_object_ok(p, GL_LINK_STATUS, what, lg);
    for (int i = 0; i < n; i++)
        if (sh[i])
            glDetachShader(p, sh[i]);
    if (!ok) {
        glDeleteProgram(p);
        return GLCV_ERROR_GL;
    }
    *out = p;
    return GLCV_OK;
}

static const char vertex_source[] = "#version 330 core\n"
                                    "void main() {\n"
                                    "    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));\n"
                                    "    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);\n"
                                    "}\n";

/* Layered fragment passes: one instance per layer; the geometry shader sends the triangle to the
 * instance's layer and hands the layer to the fragment shader. */
static const char vertex_layered_source[] = "#version 330 core\n"
                                            "flat out int glcv_vlayer;\n"
                                            "void main() {\n"
                                            "    vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));\n"
                                            "    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);\n"
                                            "    glcv_vlayer = gl_InstanceID;\n"
                                            "}\n";
static const char geometry_layered_source[] = "#version 330 core\n"
                                              "layout(triangles) in;\n"
                                              "layout(triangle_strip, max_vertices = 3) out;\n"
                                              "flat in int glcv_vlayer[];\n"
                                              "flat out int glcv_flayer;\n"
                                              "void main() {\n"
                                              "    for (int i = 0; i < 3; i++) {\n"
                                              "        gl_Position = gl_in[i].gl_Position;\n"
                                              "        gl_Layer = glcv_vlayer[0];\n"
                                              "        glcv_flayer = glcv_vlayer[0];\n"
                                              "        EmitVertex();\n"
                                              "    }\n"
                                              "    EndPrimitive();\n"
                                              "}\n";

/* Builds the full source of a pass for the given mode. */
static char *pass_source(glcv_engine_mode mode, const char *const *files, int n_files, const char *defines,
                         const glcv_format *outputs, int n_outputs, const glcv_logger *lg)
{
    text t = {0};
    int compute = mode == GLCV_ENGINE_COMPUTE;
    text_add(&t, compute ? "#version 430 core\n" : "#version 330 core\n");
    if (defines)
        text_add(&t, defines);
    text_add(&t, compute ? "\n#define GLCV_COMPUTE 1\n" : "\n#define GLCV_FRAGMENT 1\n");
    int layered = defines && strstr(defines, "#define GLCV_LAYERED") != NULL;
    text_add(&t, "uniform ivec4 glcv_region;\nivec2 glcv_pos;\nint glcv_layer;\n");
    /* Shaders that run layered or not name their samplers and coordinates through these. */
    text_add(&t, layered ? "#define glcv_sampler2D sampler2DArray\n#define glcv_usampler2D usampler2DArray\n"
                           "#define glcv_at(p) ivec3(p, glcv_layer)\n#define glcv_uv(c) vec3(c, float(glcv_layer))\n"
                         : "#define glcv_sampler2D sampler2D\n#define glcv_usampler2D usampler2D\n"
                           "#define glcv_at(p) (p)\n#define glcv_uv(c) (c)\n");
    if (layered && !compute)
        text_add(&t, "flat in int glcv_flayer;\n");
    if (compute)
        text_addf(&t,
                  "#ifndef GLCV_LOCAL_X\n#define GLCV_LOCAL_X %d\n#define GLCV_LOCAL_Y %d\n#endif\n"
                  "layout(local_size_x = GLCV_LOCAL_X, local_size_y = GLCV_LOCAL_Y) in;\n",
                  LOCAL_X, LOCAL_Y);
    for (int i = 0; i < n_outputs; i++) {
        const format_info *f = &formats[outputs[i]];
        if (compute && layered)
            text_addf(&t,
                      "layout(%s) uniform writeonly %sArray glcv_image%d;\n"
                      "void glcv_store%d(%s v) { imageStore(glcv_image%d, ivec3(glcv_pos, glcv_layer), v); }\n",
                      f->image_layout, f->image_type, i, i, f->value_type, i);
        else if (compute)
            text_addf(&t,
                      "layout(%s) uniform writeonly %s glcv_image%d;\n"
                      "void glcv_store%d(%s v) { imageStore(glcv_image%d, glcv_pos, v); }\n",
                      f->image_layout, f->image_type, i, i, f->value_type, i);
        else
            text_addf(&t,
                      "layout(location = %d) out %s glcv_out%d;\n"
                      "void glcv_store%d(%s v) { glcv_out%d = v; }\n",
                      i, f->value_type, i, i, f->value_type, i);
    }
    for (int i = 0; i < n_files; i++) {
        char *s = shader_text(files[i], lg);
        if (!s) {
            free(t.s);
            return NULL;
        }
        text_addf(&t, "#line 1 %d\n", i + 1);
        text_add(&t, s);
        text_add(&t, "\n");
        free(s);
    }
    if (compute)
        text_add(&t, "#ifdef GLCV_TILED\n"
                     "void main() { glcv_layer = int(gl_WorkGroupID.z); glcv_pass(ivec2(gl_WorkGroupID.xy)); }\n"
                     "#else\n"
                     "void main() {\n"
                     "    glcv_layer = int(gl_GlobalInvocationID.z);\n"
                     "    ivec2 p = ivec2(gl_GlobalInvocationID.xy);\n"
                     "    if (p.x >= glcv_region.z || p.y >= glcv_region.w) return;\n"
                     "    glcv_pos = p + glcv_region.xy;\n"
                     "    glcv_pass(glcv_pos);\n"
                     "}\n"
                     "#endif\n");
    else
        text_add(&t, "void main() {\n"
                     "    glcv_pos = ivec2(gl_FragCoord.xy);\n"
                     "#ifdef GLCV_LAYERED\n"
                     "    glcv_layer = glcv_flayer;\n"
                     "#else\n"
                     "    glcv_layer = 0;\n"
                     "#endif\n"
                     "    glcv_pass(glcv_pos);\n"
                     "}\n");
    if (t.failed) {
        free(t.s);
        return NULL;
    }
    return t.s;
}

static glcv_status build_program(glcv_engine *e, glcv_engine_mode mode, const char *key, const char *const *files,
                                 int n_files, const char *defines, const glcv_format *outputs, int n_outputs,
                                 glcv_program *prog)
{
    memset(prog, 0, sizeof *prog);
    snprintf(prog->key, sizeof prog->key, "%s", key);
    prog->n_outputs = n_outputs;
    if (n_outputs > 0) /* (a compute program may have none, and `outputs` NULL) */
        memcpy(prog->outputs, outputs, sizeof(glcv_format) * (size_t)n_outputs);
    char *src = pass_source(mode, files, n_files, defines, outputs, n_outputs, &e->logger);
    if (!src)
        return GLCV_ERROR_OUT_OF_MEMORY;
    GLuint sh = 0;
    glcv_status st = compile_shader(mode == GLCV_ENGINE_COMPUTE ? GL_COMPUTE_SHADER : GL_FRAGMENT_SHADER, src, key,
                                    &e->logger, &sh);
    free(src);
    if (st != GLCV_OK)
        return st;
    prog->layered = defines && strstr(defines, "#define GLCV_LAYERED") != NULL;
    GLuint shaders[3] = {sh, 0, 0};
    if (mode != GLCV_ENGINE_COMPUTE && prog->layered) {
        if (!e->layered_shaders[0] &&
            (st = compile_shader(GL_VERTEX_SHADER, vertex_layered_source, "layered vertex", &e->logger,
                                 &e->layered_shaders[0])) != GLCV_OK) {
            glDeleteShader(sh);
            return st;
        }
        if (!e->layered_shaders[1] &&
            (st = compile_shader(GL_GEOMETRY_SHADER, geometry_layered_source, "layered geometry", &e->logger,
                                 &e->layered_shaders[1])) != GLCV_OK) {
            glDeleteShader(sh);
            return st;
        }
        shaders[1] = e->layered_shaders[0];
        shaders[2] = e->layered_shaders[1];
    } else if (mode != GLCV_ENGINE_COMPUTE) {
        shaders[1] = e->vertex_shader;
    }
    st = link_program(shaders, 3, key, &e->logger, &prog->id);
    glDeleteShader(sh);
    if (st != GLCV_OK)
        return st;
    prog->region_loc = glGetUniformLocation(prog->id, "glcv_region");
    /* Between engine begin/end: the host's program is restored at the end. */
    glUseProgram(prog->id);
    for (int i = 0; i < n_outputs && mode == GLCV_ENGINE_COMPUTE; i++) {
        char name[32];
        snprintf(name, sizeof name, "glcv_image%d", i);
        GLint loc = glGetUniformLocation(prog->id, name);
        if (loc >= 0)
            glUniform1i(loc, i);
    }
    glUseProgram(0);
    return glcv_gl_check(&e->logger, key);
}

glcv_status glcv_engine_program(glcv_engine *e, const char *key, const char *const *files, int n_files,
                                const char *defines, const glcv_format *outputs, int n_outputs, glcv_program **out)
{
    for (int i = 0; i < e->n_programs; i++) {
        if (strcmp(e->programs[i].key, key) == 0) {
            *out = &e->programs[i];
            return GLCV_OK;
        }
    }
    /* (a compute program may write storage buffers only) */
    if (e->n_programs == MAX_PROGRAMS || n_outputs < (e->mode == GLCV_ENGINE_COMPUTE ? 0 : 1) ||
        n_outputs > GLCV_MAX_OUTPUTS)
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "program %s: too many programs or outputs", key);
    glcv_program *p = &e->programs[e->n_programs];
    glcv_status st = build_program(e, e->mode, key, files, n_files, defines, outputs, n_outputs, p);
    if (st != GLCV_OK)
        return st;
    e->n_programs++;
    *out = p;
    return GLCV_OK;
}

static GLint uniform_location(glcv_program *p, const char *name)
{
    for (int i = 0; i < p->n_locs; i++)
        if (p->locs[i].name == name || strcmp(p->locs[i].name, name) == 0)
            return p->locs[i].location;
    GLint loc = glGetUniformLocation(p->id, name);
    if (p->n_locs < (int)(sizeof p->locs / sizeof p->locs[0])) {
        p->locs[p->n_locs].name = name;
        p->locs[p->n_locs].location = loc;
        p->n_locs++;
    }
    return loc;
}

/* ---- textures and framebuffers ------------------------------------------------------------ */

static glcv_status get_fbo(glcv_engine *e, const glcv_tex *const *outs, int n, GLuint *out);

/* Clears colour attachment 0 of the bound draw framebuffer to zero, by format type. */
static void clear_bound(glcv_format format)
{
    static const GLfloat zf[4] = {0, 0, 0, 0};
    static const GLuint zu[4] = {0, 0, 0, 0};
    static const GLint zi[4] = {0, 0, 0, 0};
    if (format_is_unsigned(format))
        glClearBufferuiv(GL_COLOR, 0, zu);
    else if (format == GLCV_FORMAT_RGBA32I)
        glClearBufferiv(GL_COLOR, 0, zi);
    else
        glClearBufferfv(GL_COLOR, 0, zf);
}

glcv_status glcv_engine_clear(glcv_engine *e, const glcv_tex *tex)
{
    if (!tex->id)
        return GLCV_OK;
    glcv_engine_sync_writes(e);
    GLuint fbo = 0;
    glcv_status st = get_fbo(e, &tex, 1, &fbo);
    if (st != GLCV_OK)
        return st;
    clear_bound(tex->format);
    return glcv_gl_check(&e->logger, "clear");
}

glcv_status glcv_engine_tex_create(glcv_engine *e, glcv_tex *tex, int width, int height, glcv_format format)
{
    return glcv_engine_tex_create_layers(e, tex, width, height, 0, format);
}

glcv_status glcv_engine_tex_create_layers(glcv_engine *e, glcv_tex *tex, int width, int height, int layers,
                                          glcv_format format)
{
    memset(tex, 0, sizeof *tex);
    GLint max_size = 0, max_layers = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
    glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &max_layers);
    if (width < 1 || height < 1 || width > max_size || height > max_size)
        return glcv_fail(&e->logger, GLCV_ERROR_UNSUPPORTED, "texture %dx%d outside 1..GL_MAX_TEXTURE_SIZE (%d)",
                         width, height, max_size);
    if (layers < 0 || layers > max_layers)
        return glcv_fail(&e->logger, GLCV_ERROR_UNSUPPORTED, "%d layers outside 1..GL_MAX_ARRAY_TEXTURE_LAYERS (%d)",
                         layers, max_layers);
    glcv_gl_clear_errors();
    const format_info *f = &formats[format];
    GLenum target = layers ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_2D;
    GLuint id = 0;
    glGenTextures(1, &id);
    glBindTexture(target, id);
    if (layers)
        glTexImage3D(target, 0, (GLint)f->internal, width, height, layers, 0, f->format, f->type, NULL);
    else
        glTexImage2D(target, 0, (GLint)f->internal, width, height, 0, f->format, f->type, NULL);
    glTexParameteri(target, GL_TEXTURE_MAX_LEVEL, 0);
    glTexParameteri(target, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(target, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(target, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(target, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glcv_status st = glcv_gl_check(&e->logger, "texture creation");
    if (st != GLCV_OK) {
        glDeleteTextures(1, &id);
        return st;
    }
    /* Renderable (fragment mode) and clearable: check framebuffer completeness once (every layer
     * of an array: the attachment is layered). */
    GLuint fbo = 0;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbo);
    glFramebufferTexture(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, id, 0);
    GLenum complete = glCheckFramebufferStatus(GL_DRAW_FRAMEBUFFER);
    if (complete == GL_FRAMEBUFFER_COMPLETE)
        clear_bound(format); /* defined initial content: zero */
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
    if (complete != GL_FRAMEBUFFER_COMPLETE) {
        glDeleteTextures(1, &id);
        return glcv_fail(&e->logger, GLCV_ERROR_UNSUPPORTED, "a %s texture is not renderable here (0x%04x)",
                         formats[format].image_layout, complete);
    }
    st = glcv_gl_check(&e->logger, "texture initialisation");
    if (st != GLCV_OK) {
        glDeleteTextures(1, &id);
        return st;
    }
    tex->id = id;
    tex->width = width;
    tex->height = height;
    tex->layers = layers;
    tex->format = format;
    return GLCV_OK;
}

/* A device buffer of `bytes` in whole words; with `texture`, its R32UI buffer texture too. */
static glcv_status make_buffer(glcv_engine *e, glcv_tex *tex, size_t bytes, int texture)
{
    memset(tex, 0, sizeof *tex);
    size_t words = (bytes + 3) / 4;
    if (texture) {
        GLint max_words = 0;
        glGetIntegerv(GL_MAX_TEXTURE_BUFFER_SIZE, &max_words);
        if (words < 1 || words > (size_t)max_words)
            return glcv_fail(&e->logger, GLCV_ERROR_UNSUPPORTED,
                             "a buffer of %zu bytes is above this GL's GL_MAX_TEXTURE_BUFFER_SIZE (%d words)", bytes,
                             max_words);
    } else {
        GLint64 max_bytes = 0;
        glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &max_bytes);
        if (words < 1 || (GLint64)(words * 4) > max_bytes)
            return glcv_fail(&e->logger, GLCV_ERROR_UNSUPPORTED,
                             "a buffer of %zu bytes is above this GL's GL_MAX_SHADER_STORAGE_BLOCK_SIZE (%lld)", bytes,
                             (long long)max_bytes);
    }
    glcv_gl_clear_errors();
    GLuint buf = 0, id = 0;
    glGenBuffers(1, &buf);
    glBindBuffer(GL_COPY_WRITE_BUFFER, buf);
    glBufferData(GL_COPY_WRITE_BUFFER, (GLsizeiptr)(words * 4), NULL, GL_STATIC_COPY);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    if (texture) {
        glGenTextures(1, &id);
        glBindTexture(GL_TEXTURE_BUFFER, id);
        glTexBuffer(GL_TEXTURE_BUFFER, GL_R32UI, buf);
        glBindTexture(GL_TEXTURE_BUFFER, 0);
    }
    glcv_status st = glcv_gl_check(&e->logger, "buffer creation");
    if (st != GLCV_OK) {
        if (id)
            glDeleteTextures(1, &id);
        glDeleteBuffers(1, &buf);
        return st;
    }
    tex->id = id;
    tex->buffer = buf;
    tex->bytes = words * 4;
    tex->width = (int)words;
    tex->format = GLCV_FORMAT_R32UI;
    return GLCV_OK;
}

glcv_status glcv_engine_buffer_create(glcv_engine *e, glcv_tex *tex, size_t bytes)
{
    return make_buffer(e, tex, bytes, 1);
}

glcv_status glcv_engine_storage_create(glcv_engine *e, glcv_tex *tex, size_t bytes)
{
    return make_buffer(e, tex, bytes, 0);
}

void glcv_engine_tex_destroy(glcv_engine *e, glcv_tex *tex)
{
    if (!tex->id && !tex->buffer)
        return;
    if (tex->buffer) {
        if (tex->id)
            glDeleteTextures(1, &tex->id);
        glDeleteBuffers(1, &tex->buffer);
        memset(tex, 0, sizeof *tex);
        return;
    }
    for (int i = 0; i < MAX_FBOS; i++) {
        fbo_entry *f = &e->fbos[i];
        for (int k = 0; k < f->n; k++) {
            if (f->attachments[k] == tex->id) {
                glDeleteFramebuffers(1, &f->fbo);
                memset(f, 0, sizeof *f);
                break;
            }
        }
    }
    glDeleteTextures(1, &tex->id);
    memset(tex, 0, sizeof *tex);
}

/* Framebuffers are cached by the names of their attachments; glcv_engine_tex_destroy drops the
 * entries of a texture before deleting it, so a reused name never hits a stale framebuffer. */
static glcv_status get_fbo(glcv_engine *e, const glcv_tex *const *outs, int n, GLuint *out)
{
    fbo_entry *victim = &e->fbos[0];
    e->fbo_clock++;
    for (int i = 0; i < MAX_FBOS; i++) {
        fbo_entry *f = &e->fbos[i];
        if (f->fbo && f->n == n) {
            int same = 1;
            for (int k = 0; k < n; k++)
                same &= f->attachments[k] == outs[k]->id;
            if (same) {
                f->last_use = e->fbo_clock;
                glBindFramebuffer(GL_DRAW_FRAMEBUFFER, f->fbo);
                *out = f->fbo;
                return GLCV_OK;
            }
        }
        if (!f->fbo || f->last_use < victim->last_use)
            victim = f;
    }
    if (!victim->fbo)
        glGenFramebuffers(1, &victim->fbo);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, victim->fbo);
    GLenum bufs[GLCV_MAX_OUTPUTS];
    for (int k = 0; k < GLCV_MAX_OUTPUTS; k++) {
        GLuint id = k < n ? outs[k]->id : 0;
        glFramebufferTexture(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0 + k, id, 0);
        bufs[k] = GL_COLOR_ATTACHMENT0 + k;
        victim->attachments[k] = id;
    }
    glDrawBuffers(n, bufs);
    victim->n = n;
    victim->last_use = e->fbo_clock;
    GLenum status = glCheckFramebufferStatus(GL_DRAW_FRAMEBUFFER);
    if (status != GL_FRAMEBUFFER_COMPLETE) {
        victim->n = 0;
        return glcv_fail(&e->logger, GLCV_ERROR_GL, "framebuffer incomplete (0x%04x)", status);
    }
    *out = victim->fbo;
    return GLCV_OK;
}

/* ---- state, passes ------------------------------------------------------------------------ */

void glcv_engine_begin(glcv_engine *e)
{
    if (e->depth++ == 0) {
        glcv_gl_clear_errors();
        glcv_glstate_save(e->state, e->gl_version >= 43);
    }
}

void glcv_engine_end(glcv_engine *e)
{
    if (e->depth > 0 && --e->depth == 0)
        glcv_glstate_restore(e->state);
}

static void set_uniform(glcv_program *p, const glcv_uniform *u)
{
    GLint loc = uniform_location(p, u->name);
    if (loc < 0)
        return; /* optimised away: nothing to set */
    switch (u->type) {
    case GLCV_U_1F: glUniform1f(loc, u->f[0]); break;
    case GLCV_U_2F: glUniform2f(loc, u->f[0], u->f[1]); break;
    case GLCV_U_4F: glUniform4f(loc, u->f[0], u->f[1], u->f[2], u->f[3]); break;
    case GLCV_U_1I: glUniform1i(loc, u->i[0]); break;
    case GLCV_U_2I: glUniform2i(loc, u->i[0], u->i[1]); break;
    case GLCV_U_4I: glUniform4i(loc, u->i[0], u->i[1], u->i[2], u->i[3]); break;
    case GLCV_U_4IV: glUniform4iv(loc, u->count, u->array); break;
    }
}

glcv_pass glcv_pass_make(glcv_program *program, const char *label, int width, int height)
{
    glcv_pass p;
    memset(&p, 0, sizeof p);
    p.program = program;
    p.label = label;
    p.width = width;
    p.height = height;
    return p;
}

void glcv_pass_add_input(glcv_pass *p, const char *name, GLuint texture, glcv_sampling sampling)
{
    if (p->n_inputs < GLCV_MAX_INPUTS)
        p->inputs[p->n_inputs++] = (glcv_pass_input){name, texture, sampling, GL_TEXTURE_2D};
}

void glcv_pass_add_input_tex(glcv_pass *p, const char *name, const glcv_tex *texture, glcv_sampling sampling)
{
    if (p->n_inputs < GLCV_MAX_INPUTS)
        p->inputs[p->n_inputs++] = (glcv_pass_input){name, texture->id, sampling,
                                                     texture->buffer   ? GL_TEXTURE_BUFFER
                                                     : texture->layers ? GL_TEXTURE_2D_ARRAY
                                                                       : GL_TEXTURE_2D};
}

void glcv_pass_add_storage(glcv_pass *p, int binding, GLuint buffer)
{
    if (binding >= 0 && binding < GLCV_MAX_STORAGE)
        p->storage[binding] = buffer;
}

void glcv_pass_add_image(glcv_pass *p, const char *name, GLuint texture, GLenum format)
{
    if (p->n_images < GLCV_MAX_IMAGES)
        p->images[p->n_images++] = (glcv_pass_image){name, texture, format};
}

void glcv_pass_add_output(glcv_pass *p, const glcv_tex *texture)
{
    if (p->n_outputs < GLCV_MAX_OUTPUTS)
        p->outputs[p->n_outputs++] = texture;
}

static glcv_uniform *next_uniform(glcv_pass *p, const char *name, glcv_uniform_type type)
{
    if (p->n_uniforms == GLCV_MAX_UNIFORMS)
        return NULL;
    glcv_uniform *u = &p->uniforms[p->n_uniforms++];
    memset(u, 0, sizeof *u);
    u->name = name;
    u->type = type;
    return u;
}

void glcv_pass_add_uniform_i(glcv_pass *p, const char *name, glcv_uniform_type type, int a, int b)
{
    glcv_uniform *u = next_uniform(p, name, type);
    if (u) {
        u->i[0] = a;
        u->i[1] = b;
    }
}

void glcv_pass_add_uniform_f(glcv_pass *p, const char *name, glcv_uniform_type type, const float *v)
{
    glcv_uniform *u = next_uniform(p, name, type);
    if (u)
        memcpy(u->f, v, sizeof(float) * (type == GLCV_U_4F ? 4 : type == GLCV_U_2F ? 2 : 1));
}

void glcv_pass_add_uniform_4iv(glcv_pass *p, const char *name, const int *array, int count)
{
    glcv_uniform *u = next_uniform(p, name, GLCV_U_4IV);
    if (u) {
        u->array = array;
        u->count = count;
    }
}

static GLuint timing_query(glcv_engine *e, const char *label)
{
    if (!e->timing || e->frame_index < 0)
        return 0;
    timing_frame *f = &e->frames[e->frame_index];
    if (f->n == MAX_TIMED_PASSES)
        return 0;
    GLuint q = e->query_pool[e->frame_index * MAX_TIMED_PASSES + f->n];
    f->passes[f->n].query = q;
    f->passes[f->n].label = label;
    f->n++;
    return q;
}

glcv_status glcv_engine_run(glcv_engine *e, const glcv_pass *pass)
{
    glcv_program *p = pass->program;
    if (pass->width < 1 || pass->height < 1)
        return GLCV_OK;
    if (pass->n_outputs != p->n_outputs)
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "pass %s: %d outputs given, program has %d",
                         p->key, pass->n_outputs, p->n_outputs);
    for (int i = 0; i < pass->n_outputs; i++) {
        if ((pass->outputs[i]->layers != 0) != (p->layered != 0))
            return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT,
                             "pass %s: output %d is %s texture array, the program is%s layered", p->key, i,
                             pass->outputs[i]->layers ? "a" : "no", p->layered ? "" : " not");
    }
    glUseProgram(p->id);
    for (int i = 0; i < pass->n_inputs; i++) {
        const glcv_pass_input *in = &pass->inputs[i];
        glActiveTexture(GL_TEXTURE0 + i);
        glBindTexture(in->target, in->texture);
        glBindSampler((GLuint)i, e->samplers[in->sampling]);
        GLint loc = uniform_location(p, in->name);
        if (loc >= 0)
            glUniform1i(loc, i);
    }
    for (int i = 0; i < pass->n_uniforms; i++)
        set_uniform(p, &pass->uniforms[i]);
    int storage = 0;
    for (int i = 0; i < GLCV_MAX_STORAGE; i++) {
        if (pass->storage[i]) {
            glBindBufferBase(GL_SHADER_STORAGE_BUFFER, (GLuint)i, pass->storage[i]);
            storage = 1;
        }
    }
    for (int i = 0; i < pass->n_images; i++) {
        GLuint unit = (GLuint)(pass->n_outputs + i);
        glBindImageTexture(unit, pass->images[i].texture, 0, GL_FALSE, 0, GL_WRITE_ONLY, pass->images[i].format);
        GLint loc = uniform_location(p, pass->images[i].name);
        if (loc >= 0)
            glUniform1i(loc, (GLint)unit);
    }
    if (p->region_loc >= 0)
        glUniform4i(p->region_loc, pass->x, pass->y, pass->width, pass->height);

    /* Layered programs: every layer of the outputs (they are arrays of one layer count). */
    int layers = p->layered ? pass->outputs[0]->layers : 1;
    if (p->layered && layers < 1)
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "pass %s: a layered pass needs array outputs",
                         p->key);
    GLuint q = 0;
    if (e->mode == GLCV_ENGINE_COMPUTE) {
        q = timing_query(e, pass->label);
        if (q)
            glBeginQuery(GL_TIME_ELAPSED, q);
        for (int i = 0; i < pass->n_outputs; i++)
            glBindImageTexture((GLuint)i, pass->outputs[i]->id, 0, p->layered ? GL_TRUE : GL_FALSE, 0,
                               GL_WRITE_ONLY, formats[pass->outputs[i]->format].internal);
        if (pass->indirect) {
            if (layers != 1) {
                if (q)
                    glEndQuery(GL_TIME_ELAPSED);
                return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "pass %s: an indirect pass is not layered",
                                 p->key);
            }
            glMemoryBarrier(GL_COMMAND_BARRIER_BIT); /* the groups were written by a shader */
            glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, pass->indirect);
            glDispatchComputeIndirect((GLintptr)pass->indirect_offset);
            glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, 0);
        } else if (pass->groups_x > 0)
            glDispatchCompute((GLuint)pass->groups_x, (GLuint)pass->groups_y, (GLuint)layers);
        else
            glDispatchCompute((GLuint)(pass->width + LOCAL_X - 1) / LOCAL_X,
                              (GLuint)(pass->height + LOCAL_Y - 1) / LOCAL_Y, (GLuint)layers);
        glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT | GL_SHADER_IMAGE_ACCESS_BARRIER_BIT |
                        (storage ? GL_SHADER_STORAGE_BARRIER_BIT : 0));
    } else {
        GLuint fbo = 0;
        glcv_status st = get_fbo(e, pass->outputs, pass->n_outputs, &fbo);
        if (st != GLCV_OK)
            return st;
        glViewport(pass->x, pass->y, pass->width, pass->height);
        glBindVertexArray(e->vao);
        /* The query begins once the driver works on the pass's framebuffer. Mesa's llvmpipe binds
         * a framebuffer only when a draw validates it and starts its timer in the batch of the
         * framebuffer bound then: begun before the pass's first draw, the query of the frame's
         * first pass got no start (a raw clock, reported as 0 ms) and the others counted the pass
         * before them. A draw with rasterization off makes the framebuffer current and draws
         * nothing. */
        q = timing_query(e, pass->label);
        if (q) {
            glEnable(GL_RASTERIZER_DISCARD);
            glDrawArrays(GL_TRIANGLES, 0, 3);
            glDisable(GL_RASTERIZER_DISCARD);
            glBeginQuery(GL_TIME_ELAPSED, q);
        }
        if (p->layered)
            glDrawArraysInstanced(GL_TRIANGLES, 0, 3, layers);
        else
            glDrawArrays(GL_TRIANGLES, 0, 3);
        if (pass->n_images || storage)
            glMemoryBarrier(GL_ALL_BARRIER_BITS);
    }
    if (q)
        glEndQuery(GL_TIME_ELAPSED);
    return GLCV_OK;
}

void glcv_engine_sync_writes(glcv_engine *e)
{
    if (e->mode == GLCV_ENGINE_COMPUTE)
        glMemoryBarrier(GL_ALL_BARRIER_BITS);
}

glcv_status glcv_engine_check_input(glcv_engine *e, GLuint texture, int width, int height)
{
    glActiveTexture(GL_TEXTURE0);
    return glcv_gl_check_input(texture, width, height, &e->logger);
}

/* ---- timing ------------------------------------------------------------------------------- */

static void collect_frame(glcv_engine *e, timing_frame *f, int wait)
{
    if (!f->pending)
        return;
    for (int i = 0; i < f->n; i++) {
        GLint avail = 0;
        if (!wait) {
            glGetQueryObjectiv(f->passes[i].query, GL_QUERY_RESULT_AVAILABLE, &avail);
            if (!avail)
                return;
        }
    }
    glcv_timing acc[16];
    int n = 0;
    for (int i = 0; i < f->n; i++) {
        GLuint64 ns = 0;
        glGetQueryObjectui64v(f->passes[i].query, GL_QUERY_RESULT, &ns);
        /* Some drivers (Mesa llvmpipe) return a raw timestamp for passes one of their threads
         * did not work on: no single pass takes a minute. */
        if (ns > 60000000000ull)
            ns = 0;
        int k = 0;
        while (k < n && strcmp(acc[k].name, f->passes[i].label) != 0)
            k++;
        if (k == n) {
            if (n == 16)
                continue;
            acc[n].name = f->passes[i].label;
            acc[n].ms = 0;
            acc[n].count = 0;
            acc[n].clock = GLCV_CLOCK_GPU;
            n++;
        }
        acc[k].ms += (double)ns * 1e-6;
        acc[k].count++;
    }
    memcpy(e->last, acc, sizeof(acc[0]) * (size_t)n);
    e->n_last = n;
    f->pending = 0;
}

void glcv_engine_frame_begin(glcv_engine *e)
{
    if (!e->timing)
        return;
    GLint active = 0;
    glGetQueryiv(GL_TIME_ELAPSED, GL_CURRENT_QUERY, &active);
    if (active) { /* the host is timing something: do not interfere */
        e->frame_index = -1;
        return;
    }
    int idx = e->frame_counter % TIMING_FRAMES;
    /* Collect the oldest frame in flight if its slot is needed again. */
    collect_frame(e, &e->frames[idx], 1);
    e->frames[idx].n = 0;
    e->frame_index = idx;
}

void glcv_engine_frame_end(glcv_engine *e)
{
    if (!e->timing || e->frame_index < 0)
        return;
    e->frames[e->frame_index].pending = 1;
    e->frame_index = -1;
    e->frame_counter++;
    /* Collect whatever finished, oldest first, without waiting. */
    for (int k = TIMING_FRAMES - 1; k >= 1; k--) {
        int idx = (e->frame_counter - k) % TIMING_FRAMES;
        if (idx >= 0)
            collect_frame(e, &e->frames[idx], 0);
    }
}

int glcv_engine_timings(glcv_engine *e, glcv_timing *out, int capacity, int wait)
{
    if (!e->timing)
        return 0;
    if (e->frame_counter > 0) {
        int newest = (e->frame_counter - 1) % TIMING_FRAMES;
        if (wait) {
            for (int k = TIMING_FRAMES - 1; k >= 0; k--)
                collect_frame(e, &e->frames[(e->frame_counter - 1 - k + TIMING_FRAMES * 4) % TIMING_FRAMES], 1);
        } else {
            collect_frame(e, &e->frames[newest], 0);
        }
    }
    int n = e->n_last < capacity ? e->n_last : capacity;
    if (n > 0)
        memcpy(out, e->last, sizeof(out[0]) * (size_t)n);
    return n;
}

/* ---- mode choice -------------------------------------------------------------------------- */

typedef struct mode_cache_entry {
    char renderer[128];
    glcv_engine_mode mode;
} mode_cache_entry;

static pthread_mutex_t mode_cache_lock = PTHREAD_MUTEX_INITIALIZER;
static mode_cache_entry mode_cache[8];
static int mode_cache_n;

/* Median wall time in ms of a batch of 8 passes, from glFinish to glFinish, over `reps` batches
 * after a warm-up batch. Wall time rather than timer queries: it is what a frame costs, and some
 * drivers' timer queries are unreliable (llvmpipe). */
static double time_pass(glcv_engine *e, const glcv_pass *pass, int reps)
{
    double t[9];
    int n = 0;
    for (int r = -1; r < reps && n < 9; r++) {
        glFinish();
        double t0 = glcv_now();
        for (int k = 0; k < 8; k++)
            glcv_engine_run(e, pass);
        glFinish();
        if (r >= 0)
            t[n++] = (glcv_now() - t0) * 1e3 / 8;
    }
    for (int i = 1; i < n; i++) /* insertion sort */
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return n ? t[n / 2] : 1e9;
}

/* Times the probe pass (a 3x3 neighbourhood sum over 512x512 RGBA8) in both modes. */
static glcv_engine_mode probe_mode(glcv_engine *e)
{
    static const char *const files[] = {"engine_probe.glsl"};
    const glcv_format fmt = GLCV_FORMAT_RGBA8;
    glcv_tex in = {0}, out = {0};
    double ms[2] = {1e9, 1e9};
    glcv_engine_mode modes[2] = {GLCV_ENGINE_FRAGMENT, GLCV_ENGINE_COMPUTE};
    if (glcv_engine_tex_create(e, &in, 512, 512, fmt) != GLCV_OK ||
        glcv_engine_tex_create(e, &out, 512, 512, fmt) != GLCV_OK)
        goto done;
    for (int m = 0; m < 2; m++) {
        glcv_program prog;
        glcv_engine_mode saved = e->mode;
        e->mode = modes[m];
        if (build_program(e, modes[m], "engine_probe", files, 1, NULL, &fmt, 1, &prog) == GLCV_OK) {
            glcv_pass pass = {.program = &prog, .label = "probe", .width = 512, .height = 512, .n_inputs = 1,
                              .n_outputs = 1};
            pass.inputs[0] = (glcv_pass_input){"source", in.id, GLCV_SAMPLE_NEAREST, GL_TEXTURE_2D};
            pass.outputs[0] = &out;
            ms[m] = time_pass(e, &pass, 5);
            glDeleteProgram(prog.id);
        }
        e->mode = saved;
    }
done:
    glcv_engine_tex_destroy(e, &in);
    glcv_engine_tex_destroy(e, &out);
    glcv_engine_mode pick = ms[1] < ms[0] ? GLCV_ENGINE_COMPUTE : GLCV_ENGINE_FRAGMENT;
    glcv_logf(&e->logger, GLCV_LOG_INFO, "engine mode auto: 512x512 probe pass fragment %.3f ms, compute %.3f ms -> %s",
              ms[0], ms[1], glcv_engine_mode_string(pick));
    return pick;
}

static glcv_engine_mode choose_mode(glcv_engine *e)
{
    if (e->gl_version < 43)
        return GLCV_ENGINE_FRAGMENT;
    const char *renderer = (const char *)glGetString(GL_RENDERER);
    char key[128];
    snprintf(key, sizeof key, "%s", renderer ? renderer : "?");
    pthread_mutex_lock(&mode_cache_lock);
    for (int i = 0; i < mode_cache_n; i++) {
        if (strcmp(mode_cache[i].renderer, key) == 0) {
            glcv_engine_mode m = mode_cache[i].mode;
            pthread_mutex_unlock(&mode_cache_lock);
            glcv_logf(&e->logger, GLCV_LOG_DEBUG, "engine mode auto: %s (cached for %s)",
                      glcv_engine_mode_string(m), key);
            return m;
        }
    }
    pthread_mutex_unlock(&mode_cache_lock);
    glcv_engine_mode m = probe_mode(e);
    pthread_mutex_lock(&mode_cache_lock);
    if (mode_cache_n < 8) {
        snprintf(mode_cache[mode_cache_n].renderer, sizeof mode_cache[0].renderer, "%s", key);
        mode_cache[mode_cache_n].mode = m;
        mode_cache_n++;
    }
    pthread_mutex_unlock(&mode_cache_lock);
    return m;
}

/* ---- create / destroy --------------------------------------------------------------------- */

glcv_status glcv_engine_create(glcv_engine_mode mode, int timing, const glcv_logger *logger, glcv_engine **out)
{
    *out = NULL;
    if (!glcv_gl_context_current())
        return glcv_fail(logger, GLCV_ERROR_NO_CONTEXT, "no OpenGL context is current on this thread");
    glcv_engine *e = calloc(1, sizeof *e);
    if (!e)
        return GLCV_ERROR_OUT_OF_MEMORY;
    if (logger)
        e->logger = *logger;
    e->frame_index = -1;
    e->context = glcv_gl_current_token();
    e->state = glcv_glstate_new();
    if (!e->state) {
        free(e);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    glcv_status st = GLCV_OK;
    e->gl_version = epoxy_gl_version();
    if (!epoxy_is_desktop_gl() || e->gl_version < 33) {
        st = glcv_fail(logger, GLCV_ERROR_UNSUPPORTED, "OpenGL 3.3 core or newer is needed (have %s %d.%d)",
                       epoxy_is_desktop_gl() ? "GL" : "GLES", e->gl_version / 10, e->gl_version % 10);
        goto fail;
    }
    if (mode == GLCV_ENGINE_COMPUTE && e->gl_version < 43) {
        st = glcv_fail(logger, GLCV_ERROR_UNSUPPORTED, "compute mode needs OpenGL 4.3 (have %d.%d)",
                       e->gl_version / 10, e->gl_version % 10);
        goto fail;
    }
    glcv_engine_begin(e);
    e->mode = GLCV_ENGINE_FRAGMENT;
    st = compile_shader(GL_VERTEX_SHADER, vertex_source, "fullscreen vertex", &e->logger, &e->vertex_shader);
    if (st != GLCV_OK)
        goto fail_end;
    glGenVertexArrays(1, &e->vao);
    glGenSamplers(GLCV_SAMPLE_COUNT, e->samplers);
    static const GLfloat zero_border[4] = {0, 0, 0, 0};
    for (int i = 0; i < GLCV_SAMPLE_COUNT; i++) {
        GLenum filter = i == GLCV_SAMPLE_LINEAR_ZERO ? GL_LINEAR : GL_NEAREST;
        GLenum wrap = i == GLCV_SAMPLE_LINEAR_ZERO ? GL_CLAMP_TO_BORDER : GL_CLAMP_TO_EDGE;
        glSamplerParameteri(e->samplers[i], GL_TEXTURE_MIN_FILTER, (GLint)filter);
        glSamplerParameteri(e->samplers[i], GL_TEXTURE_MAG_FILTER, (GLint)filter);
        glSamplerParameteri(e->samplers[i], GL_TEXTURE_WRAP_S, (GLint)wrap);
        glSamplerParameteri(e->samplers[i], GL_TEXTURE_WRAP_T, (GLint)wrap);
        glSamplerParameterfv(e->samplers[i], GL_TEXTURE_BORDER_COLOR, zero_border);
    }
    e->timing = timing ? 1 : 0;
    if (e->timing)
        glGenQueries(TIMING_FRAMES * MAX_TIMED_PASSES, e->query_pool);
    st = glcv_gl_check(&e->logger, "engine setup");
    if (st != GLCV_OK)
        goto fail_end;
    if (mode == GLCV_ENGINE_DEFAULT || mode == GLCV_ENGINE_AUTO)
        mode = choose_mode(e);
    e->mode = mode;
    glcv_engine_end(e);
    glcv_logf(&e->logger, GLCV_LOG_INFO, "engine: %s passes on %s, OpenGL %d.%d", glcv_engine_mode_string(e->mode),
              (const char *)glGetString(GL_RENDERER), e->gl_version / 10, e->gl_version % 10);
    *out = e;
    return GLCV_OK;
fail_end:
    glcv_engine_end(e);
fail:
    glcv_engine_destroy(&e);
    return st;
}

void glcv_engine_destroy(glcv_engine **engine)
{
    glcv_engine *e = engine ? *engine : NULL;
    if (!e)
        return;
    if (!glcv_engine_context_current(e))
        glcv_logf(&e->logger, GLCV_LOG_WARN,
                  "engine: destroyed without its OpenGL context current: its GL objects are left to that context "
                  "(gone with it, or leaked if it lives on)");
    else {
        glcv_engine_begin(e);
        for (int i = 0; i < e->n_programs; i++)
            glDeleteProgram(e->programs[i].id);
        for (int i = 0; i < MAX_FBOS; i++)
            if (e->fbos[i].fbo)
                glDeleteFramebuffers(1, &e->fbos[i].fbo);
        if (e->read_fbo)
            glDeleteFramebuffers(1, &e->read_fbo);
        glcv_engine_transfers_release(e);
        if (e->vertex_shader)
            glDeleteShader(e->vertex_shader);
        for (int i = 0; i < 2; i++)
            if (e->layered_shaders[i])
                glDeleteShader(e->layered_shaders[i]);
        if (e->vao)
            glDeleteVertexArrays(1, &e->vao);
        if (e->samplers[0])
            glDeleteSamplers(GLCV_SAMPLE_COUNT, e->samplers);
        if (e->timing && e->query_pool[0])
            glDeleteQueries(TIMING_FRAMES * MAX_TIMED_PASSES, e->query_pool);
        e->depth = 1;
        glcv_engine_end(e);
    }
    glcv_glstate_free(e->state);
    free(e);
    *engine = NULL;
}

int glcv_engine_context_current(const glcv_engine *e)
{
    return glcv_gl_token_current(e->context);
}

glcv_status glcv_engine_check_context(const glcv_engine *e, const char *what)
{
    if (glcv_engine_context_current(e))
        return GLCV_OK;
    return glcv_fail(&e->logger, GLCV_ERROR_NO_CONTEXT,
                     "%s: the OpenGL context this object was made in is not current (destroyed, or another "
                     "context is current): make it current, or destroy the object",
                     what);
}

glcv_engine_mode glcv_engine_mode_of(const glcv_engine *e)
{
    return e->mode;
}

const glcv_logger *glcv_engine_logger(const glcv_engine *e)
{
    return &e->logger;
}
