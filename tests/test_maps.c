/* test_maps.c — the strongest-link rule of maps.c. */
#include "check.h"
#include "trace/maps.h"
#include <string.h>

TEST(maps_strongest_link_skips_self_and_specials) {
    char *keys[] = {"the", "animal", "it", "tired", "<eos>"};
    float w[5 * 5] = {0};
    /* row 2 ("it"): itself 0.5, <eos> 0.3, animal 0.15, tired 0.05 */
    w[2 * 5 + 2] = 0.5f; w[2 * 5 + 4] = 0.3f; w[2 * 5 + 1] = 0.15f; w[2 * 5 + 3] = 0.05f;
    TraceHead h = {.head = 0, .weights = w};
    TraceMap m = {0};
    m.Tq = m.Tk = 5; m.keys = keys; m.queries = keys; m.n_heads = 1; m.heads = &h;
    float got;
    CHECK_INT(maps_strongest_link(&m, 0, 2, &got), 1);
    CHECK_NEAR(got, 0.15, 1e-7);
    CHECK(maps_is_special("<pad>") && maps_is_special("<2vi>") && !maps_is_special("<") && !maps_is_special("a<b>"));
}
