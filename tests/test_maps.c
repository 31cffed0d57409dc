/* test_maps.c — the strongest-link rule and the metadata readers of maps.c. */
#include "check.h"
#include "trace/maps.h"
#include <string.h>

TEST(maps_strongest_link_skips_self_and_specials) {
    char *keys[] = {"the", "animal", "it", "tired", "<eos>"};
    float w[5 * 5] = {0};
    /* row 2 ("it"): itself 0.5, <eos> 0.3, animal 0.15, tired 0.05 */
    w[2 * 5 + 2] = 0.5f; w[2 * 5 + 4] = 0.3f; w[2 * 5 + 1] = 0.15f; w[2 * 5 + 3] = 0.05f;
    TraceHead h = {0, w, NULL, NULL, NULL, NULL};
    TraceMap m = {0};
    m.Tq = m.Tk = 5; m.keys = keys; m.queries = keys; m.n_heads = 1; m.heads = &h;
    float got;
    CHECK_INT(maps_strongest_link(&m, 0, 2, &got), 1);
    CHECK_NEAR(got, 0.15, 1e-7);
    CHECK(maps_is_special("<pad>") && maps_is_special("<2vi>") && !maps_is_special("<") && !maps_is_special("a<b>"));
}

TEST(maps_metadata_readers) {
    const char *meta =
        "{\"format\":\"attnviz-model\",\"coreference_head\":\"{\\\"map\\\":\\\"encoder.2.self\\\",\\\"head\\\":1,"
        "\\\"accuracy\\\":0.93}\",\"supervised_heads\":\"[{\\\"map\\\":\\\"encoder.2.self\\\",\\\"head\\\":1,"
        "\\\"target\\\":\\\"coreference\\\"}]\"}";
    int l = -1, h = -1;
    double acc = 0;
    CHECK_INT(maps_coref_head_from_metadata(meta, 3, 4, &l, &h, &acc), 1);
    CHECK_INT(l, 2);
    CHECK_INT(h, 1);
    CHECK_NEAR(acc, 0.93, 1e-12);
    CHECK_INT(maps_coref_head_from_metadata(meta, 2, 4, &l, &h, &acc), 0);   /* no layer 2 */
    CHECK_INT(maps_coref_head_from_metadata(meta, 3, 1, &l, &h, &acc), 0);   /* no head 1  */
    CHECK_INT(maps_coref_head_from_metadata("{}", 3, 4, &l, &h, &acc), 0);
    CHECK_INT(maps_coref_head_from_metadata("not json", 3, 4, &l, &h, &acc), 0);
    CHECK_INT(maps_coref_head_from_metadata(NULL, 3, 4, &l, &h, &acc), 0);
    CHECK_INT(maps_head_supervised(meta, "encoder.2.self", 1), 1);
    CHECK_INT(maps_head_supervised(meta, "encoder.2.self", 0), 0);
    CHECK_INT(maps_head_supervised(meta, "encoder.1.self", 1), 0);
    CHECK_INT(maps_head_supervised("{}", "encoder.2.self", 1), 0);
    CHECK_INT(maps_head_supervised(NULL, "encoder.2.self", 1), 0);
}
