/* datadir.h — where attnviz finds the data it ships (the models and the corpus
 * lexicon), wherever the binary runs from.  One rule for every command:
 *
 *   BIN/../samples/REL          a checkout's build/attnviz
 *   BIN/../../samples/REL       a checkout's build/x/attnviz (e.g. build/san)
 *   BIN/../share/attnviz/REL    an installed PREFIX/bin/attnviz (make install)
 *   ATTNVIZ_DATADIR/REL         the data folder compiled in
 *
 * BIN is the folder of the running binary (/proc/self/exe), so an installed
 * attnviz finds PREFIX/share/attnviz from any working folder, whatever PREFIX
 * it was built with. */
#ifndef ATTNVIZ_DATADIR_H
#define ATTNVIZ_DATADIR_H
#include <stddef.h>

#ifndef ATTNVIZ_DATADIR
#define ATTNVIZ_DATADIR "/usr/local/share/attnviz"
#endif

/* The first readable BASE/REL of the list above into path (e.g. rel
 * "models/attnviz-en-fr-vi.safetensors", "corpus/templates.txt").  0, or -1
 * when none exists (path then holds the last candidate). */
int datadir_find(const char *rel, char *path, size_t n);

#endif
