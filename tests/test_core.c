/* Status strings, engine-mode names, pixel formats. No GL needed. */
#include "testutil.h"

#include <string.h>

int main(void)
{
    for (int s = GLCV_OK; s <= GLCV_ERROR_CORRUPT_DATA; s++) {
        const char *t = glcv_status_string((glcv_status)s);
        CHECK(t && strlen(t) > 0 && strcmp(t, "unknown status") != 0, "status %d has no text", s);
    }
    CHECK(strcmp(glcv_status_string((glcv_status)999), "unknown status") == 0, "unknown status text");

    const char *names[] = {"auto", "fragment", "compute", "cpu"};
    for (int i = 0; i < 4; i++) {
        glcv_engine_mode m;
        CHECK_OK(glcv_engine_mode_parse(names[i], &m));
        CHECK(strcmp(glcv_engine_mode_string(m), names[i]) == 0, "round trip of %s", names[i]);
    }
    glcv_engine_mode m;
    CHECK_STATUS(glcv_engine_mode_parse("gpu", &m), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_engine_mode_parse(NULL, &m), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(strcmp(glcv_engine_mode_string(GLCV_ENGINE_DEFAULT), "auto") == 0, "default is auto");

    CHECK(glcv_pixel_format_size(GLCV_PIXEL_GRAY8) == 1, "gray");
    CHECK(glcv_pixel_format_size(GLCV_PIXEL_BGR8) == 3, "bgr");
    CHECK(glcv_pixel_format_size(GLCV_PIXEL_RGBA8) == 4, "rgba");
    CHECK(glcv_pixel_format_size((glcv_pixel_format)42) == 0, "invalid format size");
    return test_finish("test_core");
}
