/* head_roles_show.h — head roles (head_roles.h) in a sentence's output: the
 * "head_roles" member of its trace, the picture head_roles.png (every layer ×
 * head of each self-attention kind, each cell naming the head's role and its
 * score, the thresholds in the caption) and its section of index.html.
 * pictures.c calls it when the spec carries head roles (PictureSpec.head_roles);
 * `generate` may call head_roles_draw for its own page.
 * Errors: -1 and a one-line message. */
#ifndef ATTNVIZ_HEAD_ROLES_SHOW_H
#define ATTNVIZ_HEAD_ROLES_SHOW_H
#include <stddef.h>
#include "pipeline/head_roles.h"
#include "pipeline/pictures_common.h"
#include "render/render.h"

/* The grid of roles as a PNG at path; what (NULL: none) is the text measured,
 * on the subtitle.  0, or -1 with err. */
int head_roles_draw(const char *path, const HeadRoles *r, const char *what, const RenderMeta *meta, char *err,
                    size_t errlen);

/* In a sentence's page (w->ps->head_roles given): the trace's "head_roles",
 * and unless no_pictures head_roles.png with its section.  0 (nothing to do
 * without head roles), or -1. */
int head_roles_show(Show *w);

#endif
