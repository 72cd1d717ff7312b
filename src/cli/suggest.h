/* suggest.h — "did you mean": the nearest of a list of names to what a user typed (an unknown
 * command or option), by edit distance. */
#ifndef IMGPU_SUGGEST_H
#define IMGPU_SUGGEST_H

#include <stddef.h>

/* The candidate nearest to word[0..len) by optimal string alignment distance (insertions,
 * deletions, substitutions and swaps of two neighbours, each 1; case-insensitive), when near
 * enough to be a slip: at most 1 for words of up to 4 letters, 2 up to 8, 3 beyond, and less
 * than the word's length. Ties go to the first. NULL when none is; a NULL candidate is passed
 * over. */
const char *imgpu__suggest(const char *word, size_t len, const char *const *cands, size_t n);

#endif
