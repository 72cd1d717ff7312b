/* suggest.c — the nearest name to a mistyped one (suggest.h): `imgpu eqalize` says
 * "did you mean 'equalize'?". Optimal string alignment distance (Damerau-Levenshtein without
 * repeated edits of one substring) over three rolling rows; names are short, so the rows live
 * on the stack and a longer word is never near enough to anything. */
#include "suggest.h"

#include <ctype.h>
#include <string.h>

enum { MAX_WORD = 64 };

static size_t osa(const char *a, size_t n, const char *b, size_t m)
{
    size_t r0[MAX_WORD + 1], r1[MAX_WORD + 1], r2[MAX_WORD + 1]; /* rows i-2, i-1, i */
    size_t *pp = r0, *p = r1, *c = r2;
    for (size_t j = 0; j <= m; j++)
        p[j] = j;
    for (size_t i = 1; i <= n; i++) {
        c[0] = i;
        for (size_t j = 1; j <= m; j++) {
            const int ai = tolower((unsigned char)a[i - 1]), bj = tolower((unsigned char)b[j - 1]);
            size_t v = p[j - 1] + (ai != bj);
            if (p[j] + 1 < v)
                v = p[j] + 1;
            if (c[j - 1] + 1 < v)
                v = c[j - 1] + 1;
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1; /* two neighbours swapped: "eqaulize" */
            c[j] = v;
        }
        size_t *t = pp;
        pp = p;
        p = c;
        c = t;
    }
    return p[m];
}

const char *imgpu__suggest(const char *word, size_t len, const char *const *cands, size_t n)
{
    if (len == 0 || len > MAX_WORD)
        return NULL;
    size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    if (limit >= len)
        limit = len - 1;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t k = 0; k < n; k++) {
        if (!cands[k])
            continue;
        const size_t m = strlen(cands[k]);
        if (m > MAX_WORD || (m > len ? m - len : len - m) >= best_d)
            continue;
        const size_t d = osa(word, len, cands[k], m);
        if (d < best_d) {
            best_d = d;
            best = cands[k];
        }
    }
    return best;
}
