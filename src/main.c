/* main.c — placeholder; the CLI work fills this in. */
#include <stdio.h>
int main(void) { puts("imgpu: not implemented yet"); return 1; }
