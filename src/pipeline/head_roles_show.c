/* head_roles_show.c — see head_roles_show.h. */
#include "pipeline/head_roles_show.h"
#include "core/errmsg.h"
#include "render/labelgrid.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each role's colour at full strength. */
static const unsigned char role_rgb[HEAD_ROLE_N][3] = {
    {0x1F, 0x5F, 0xA8},   /* previous token: blue    */
    {0x6A, 0x3D, 0x9A},   /* sink: purple            */
    {0xE0, 0x7B, 0x00},   /* duplicate token: orange */
    {0xC6, 0x28, 0x28},   /* induction: red          */
    {0x4C, 0xA0, 0x4C},   /* local: green            */
    {0x90, 0x90, 0x90},   /* diffuse: grey           */
    {0x8D, 0x6E, 0x63},   /* focused: brown          */
};

/* The number a cell shows: the role's score; local's weight near the query;
 * diffuse's entropy. */
static void cell_of(const HeadRoleScores *s, HeadRole role, RenderLabelCell *c, char *value, size_t n) {
    const float v[HEAD_ROLE_N] = {s->previous, s->first, s->duplicate, s->induction, s->local, s->entropy, s->entropy};
    if (role == HEAD_ROLE_LOCAL) snprintf(value, n, "near %.2f", (double)v[role]);
    else if (role >= HEAD_ROLE_DIFFUSE) snprintf(value, n, "H %.2f", (double)v[role]);
    else snprintf(value, n, "%.2f", (double)v[role]);
    c->name = head_roles_name(role);
    c->value = value;
    memcpy(c->rgb, role_rgb[role], 3);
    c->strength = role >= HEAD_ROLE_LOCAL ? 0.3f : 0.3f + 0.7f * v[role];
}

/* The highest score of a role over every head: its value, and "layer L head H" into where. */
static float best_of(const HeadRoles *r, int induction, char *where, size_t n) {
    float best = -1;
    for (int k = 0; k < r->n_tables; k++)
        for (int x = 0; x < r->tab[k].L * r->tab[k].H; x++) {
            float v = induction ? r->tab[k].s[x].induction : r->tab[k].s[x].duplicate;
            if (v <= best) continue;
            best = v;
            if (r->n_tables > 1) snprintf(where, n, "%s %d head %d", r->tab[k].stack, x / r->tab[k].H, x % r->tab[k].H);
            else snprintf(where, n, "layer %d head %d", x / r->tab[k].H, x % r->tab[k].H);
        }
    return best;
}

/* The caption's lines: the thresholds, the best probe scores, the caveat. */
static void threshold_notes(const HeadRoles *r, char lines[6][320]) {
    char dw[64] = "", iw[64] = "";
    float d = best_of(r, 0, dw, sizeof dw), i = best_of(r, 1, iw, sizeof iw);
    snprintf(lines[0], 320, "Named where a score reaches its threshold (the highest such score wins): previous token ≥ %.2f "
             "(mean weight on key t−1), sink ≥ %.2f (on key 0).", (double)HEAD_ROLES_MIN_PREVIOUS, (double)HEAD_ROLES_MIN_FIRST);
    snprintf(lines[1], 320, "Duplicate token ≥ %.2f, induction ≥ %.2f: on a probe of %d random tokens repeated twice (seed %llu), "
             "weight on the token's first occurrence / on the token after it.", (double)HEAD_ROLES_MIN_DUPLICATE,
             (double)HEAD_ROLES_MIN_INDUCTION, r->probe_length, (unsigned long long)r->seed);
    snprintf(lines[2], 320, "None reached: local when ≥ %.2f of the weight lies within %d positions of the query (\"near\"), "
             "else diffuse when H ≥ %.2f, else focused", (double)HEAD_ROLES_LOCAL_MIN, HEAD_ROLES_WINDOW,
             (double)HEAD_ROLES_DIFFUSE_MIN);
    snprintf(lines[3], 320, "(H = the rows' entropy ÷ its most, 1 = uniform; focused: most weight on a few keys beyond the "
             "window and the first token, often particular words).");
    snprintf(lines[4], 320, "Highest duplicate-token score %.2f (%s), highest induction score %.2f (%s)%s", (double)d, dw,
             (double)i, iw, d < HEAD_ROLES_MIN_DUPLICATE && i < HEAD_ROLES_MIN_INDUCTION ? ": no head reaches either." : ".");
    snprintf(lines[5], 320, "Previous token, sink, local, diffuse, focused are means over query rows 1 … T−1 of the text: a short text "
             "gives few rows, so read them as hints.");
}

/* Every table's rows, one after the other, with their titles. */
static int fill_cells(const HeadRoles *r, RenderLabelCell *cells, char (*values)[24], char (*titles)[48], int cols) {
    int row = 0;
    for (int k = 0; k < r->n_tables; k++) {
        const HeadRoleTable *tb = &r->tab[k];
        for (int l = 0; l < tb->L; l++, row++) {
            if (r->n_tables > 1) snprintf(titles[row], 48, "%s %d", tb->stack, l);
            else snprintf(titles[row], 48, "layer %d", l);
            for (int h = 0; h < cols; h++) {
                RenderLabelCell *c = &cells[row * cols + h];
                if (h >= tb->H) { *c = (RenderLabelCell){"", NULL, {255, 255, 255}, 0}; continue; }
                cell_of(&tb->s[l * tb->H + h], tb->role[l * tb->H + h], c, values[row * cols + h], 24);
            }
        }
    }
    return row;
}

int head_roles_draw(const char *path, const HeadRoles *r, const char *what, const RenderMeta *meta, char *err,
                    size_t errlen) {
    int rows = 0, cols = 0;
    for (int k = 0; k < r->n_tables; k++) {
        rows += r->tab[k].L;
        if (r->tab[k].H > cols) cols = r->tab[k].H;
    }
    if (rows == 0 || cols == 0) return errmsg_set(err, errlen, "head roles: nothing to draw");
    RenderLabelCell *cells = calloc((size_t)rows * cols, sizeof *cells);
    char (*values)[24] = calloc((size_t)rows * cols, sizeof *values);
    char (*titles)[48] = calloc((size_t)rows, sizeof *titles);
    char (*heads)[16] = calloc((size_t)cols, sizeof *heads);
    const char **rt = calloc((size_t)rows, sizeof *rt), **ct = calloc((size_t)cols, sizeof *ct);
    int rc = -1;
    if (!cells || !values || !titles || !heads || !rt || !ct) { errmsg_set(err, errlen, "out of memory"); goto done; }
    fill_cells(r, cells, values, titles, cols);
    for (int i = 0; i < rows; i++) rt[i] = titles[i];
    for (int h = 0; h < cols; h++) { snprintf(heads[h], 16, "head %d", h); ct[h] = heads[h]; }
    char notes[6][320], sub[600];
    threshold_notes(r, notes);
    const char *note_p[6] = {notes[0], notes[1], notes[2], notes[3], notes[4], notes[5]};
    snprintf(sub, sizeof sub, "%s%s%s", what ? "text: “" : "", what ? what : "", what ? "”" : "");
    RenderLabelGrid g = {"What each head does: roles measured (layers × heads)", what ? sub : NULL, cells, rows, cols, rt, ct,
                         note_p, 6};
    rc = render_label_grid(path, &g, meta, err, errlen);
done:
    free(cells); free(values); free(titles); free(heads); free(rt); free(ct);
    return rc;
}

static void page_section(Show *w) {
    html_section(w->pg, "head-roles", "What each head does",
                 "Each self-attention head is named for what it measurably does. On this text: previous token (it looks at "
                 "the token just before) and sink (it parks its weight on the first token when it has nothing to look "
                 "for). On a probe of random tokens repeated twice: duplicate token (the second copy looks back at the "
                 "same token) and induction (it looks at the token that came after it last time, which lets a model "
                 "continue a repeated pattern: Olsson et al. 2022). The numbers are in trace.json under head_roles.",
                 "Mỗi head tự chú ý được đặt tên theo việc nó làm, đo được. Trên câu này: token trước (nhìn token ngay "
                 "trước) và sink (dồn trọng số vào token đầu tiên khi không có gì để tìm). Trên một đoạn thử gồm các "
                 "token ngẫu nhiên lặp lại hai lần: token trùng (bản sao thứ hai nhìn lại chính token đó) và induction "
                 "(nhìn token đứng sau nó ở lần trước, nhờ vậy mô hình nối tiếp được một mẫu lặp: Olsson và cộng sự "
                 "2022). Số liệu nằm trong trace.json, mục head_roles.");
    char cap[900], capvi[900];
    snprintf(cap, sizeof cap, "Thresholds: previous token ≥ %.2f, sink ≥ %.2f, duplicate token ≥ %.2f, induction ≥ %.2f "
             "(probe: %d random tokens twice, seed %llu); a head that reaches none is local when ≥ %.2f of its weight lies "
             "within %d positions, else diffuse when H (its entropy ÷ the most, 1 = uniform) ≥ %.2f, else focused (a few keys "
             "beyond the window: often particular words). Darker = higher score.",
             (double)HEAD_ROLES_MIN_PREVIOUS, (double)HEAD_ROLES_MIN_FIRST, (double)HEAD_ROLES_MIN_DUPLICATE,
             (double)HEAD_ROLES_MIN_INDUCTION, w->ps->head_roles->probe_length,
             (unsigned long long)w->ps->head_roles->seed, (double)HEAD_ROLES_LOCAL_MIN, HEAD_ROLES_WINDOW,
             (double)HEAD_ROLES_DIFFUSE_MIN);
    snprintf(capvi, sizeof capvi, "Ngưỡng: token trước ≥ %.2f, sink ≥ %.2f, token trùng ≥ %.2f, induction ≥ %.2f "
             "(đoạn thử: %d token ngẫu nhiên lặp hai lần, seed %llu); head không đạt ngưỡng nào là local khi ≥ %.2f trọng "
             "số nằm trong %d vị trí, nếu không là diffuse khi H (entropy ÷ giá trị lớn nhất, 1 = đều) ≥ %.2f, còn lại là focused "
             "(dồn vào vài khóa ngoài cửa sổ: thường là những từ cụ thể). Càng đậm, điểm càng cao.",
             (double)HEAD_ROLES_MIN_PREVIOUS, (double)HEAD_ROLES_MIN_FIRST, (double)HEAD_ROLES_MIN_DUPLICATE,
             (double)HEAD_ROLES_MIN_INDUCTION, w->ps->head_roles->probe_length,
             (unsigned long long)w->ps->head_roles->seed, (double)HEAD_ROLES_LOCAL_MIN, HEAD_ROLES_WINDOW,
             (double)HEAD_ROLES_DIFFUSE_MIN);
    html_figure(w->pg, "head_roles.png", cap, capvi, NULL);
}

int head_roles_show(Show *w) {
    const HeadRoles *r = w->ps->head_roles;
    if (!r) return 0;
    if (trace_take_section(w->t, "head_roles", head_roles_json(r))) return errmsg_set(w->err, w->errlen, "out of memory");
    if (w->ps->no_pictures) return 0;
    char path[4096];
    RenderMetaItem items[8];
    RenderMeta meta = pictures_meta(w, items, "head roles", NULL, NULL, NULL);
    pictures_path(w, "head_roles.png", path, sizeof path);
    if (head_roles_draw(path, r, w->s->text, &meta, w->err, w->errlen) || trace_add_image(w->t, "head_roles.png"))
        return -1;
    page_section(w);
    return 0;
}
