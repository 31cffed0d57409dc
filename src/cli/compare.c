/* compare.c — placeholder */
#include "cli/cli.h"
int cli_compare(int argc, char **argv) {
    (void)argc; (void)argv;
    cli_error("compare: not yet");
    return 2;
}
