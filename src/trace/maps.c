/* maps.c — see maps.h. */
#include "trace/maps.h"
#include <cJSON.h>
#include <stdio.h>
#include <string.h>

int maps_is_special(const char *w) {
    size_t n = strlen(w);
    return n >= 3 && w[0] == '<' && w[n - 1] == '>';
}

int maps_strongest_link(const TraceMap *m, int h, int q, float *w) {
    int best = -1;
    float bw = -1;
    for (int j = 0; j < m->Tk; j++) {
        if (j == q || maps_is_special(m->keys[j])) continue;
        float x = m->heads[h].weights[(size_t)q * m->Tk + j];
        if (x > bw) { bw = x; best = j; }
    }
    *w = bw;
    return best;
}

int maps_coref_head_from_metadata(const char *metadata_json, int n_layers, int n_heads,
                                  int *layer, int *head, double *acc) {
    int found = 0, l;
    cJSON *root = metadata_json ? cJSON_Parse(metadata_json) : NULL;
    const cJSON *v = root ? cJSON_GetObjectItemCaseSensitive(root, "coreference_head") : NULL;
    cJSON *obj = cJSON_IsString(v) ? cJSON_Parse(v->valuestring) : NULL;
    const cJSON *mp = obj ? cJSON_GetObjectItemCaseSensitive(obj, "map") : NULL;
    const cJSON *hd = obj ? cJSON_GetObjectItemCaseSensitive(obj, "head") : NULL;
    const cJSON *ac = obj ? cJSON_GetObjectItemCaseSensitive(obj, "accuracy") : NULL;
    if (cJSON_IsString(mp) && cJSON_IsNumber(hd) && sscanf(mp->valuestring, "encoder.%d.self", &l) == 1 &&
        l >= 0 && l < n_layers && hd->valueint >= 0 && hd->valueint < n_heads) {
        *layer = l;
        *head = hd->valueint;
        *acc = cJSON_IsNumber(ac) ? ac->valuedouble : -1;
        found = 1;
    }
    cJSON_Delete(obj);
    cJSON_Delete(root);
    return found;
}

int maps_head_supervised(const char *metadata_json, const char *map_id, int head) {
    int found = 0;
    cJSON *root = metadata_json ? cJSON_Parse(metadata_json) : NULL;
    const cJSON *v = root ? cJSON_GetObjectItemCaseSensitive(root, "supervised_heads") : NULL;
    cJSON *list = cJSON_IsString(v) ? cJSON_Parse(v->valuestring) : NULL;
    const cJSON *it;
    cJSON_ArrayForEach(it, list) {
        const cJSON *mp = cJSON_GetObjectItemCaseSensitive(it, "map");
        const cJSON *hd = cJSON_GetObjectItemCaseSensitive(it, "head");
        if (cJSON_IsString(mp) && cJSON_IsNumber(hd) && !strcmp(mp->valuestring, map_id) && hd->valueint == head)
            found = 1;
    }
    cJSON_Delete(list);
    cJSON_Delete(root);
    return found;
}
