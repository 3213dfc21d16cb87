/* driver.c — placeholder main; the real driver follows. */
#include "texc.h"
int main(int argc, char **argv) { (void)argc; (void)argv; return 0; }
