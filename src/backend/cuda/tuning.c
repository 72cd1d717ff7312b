/* tuning.c — the CUDA backend's tuning config (kernels/tuning.h, imgpu_tuning): the
 * compile-time defaults, then the sweep variables of the environment, read once per process,
 * before the first launch that needs them; every launcher with a tuning choice receives it.
 * An invalid value keeps the default, as each check below says. Also the setters through
 * which tests and imgpu bench switch kernel variants between runs. */
#include "cuda_util.h"
#include "kernels.h"

#include <pthread.h>
#include <stdlib.h>

static imgpu_tuning s_tuning = IMGPU_TUNING_DEFAULTS;
static int s_env_rot_layout = -1; /* IMGPU_ROT_LAYOUT, what imgpu_kernels_rot_layout(-1) restores */
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

/* atoi of the variable, 0 when it is not set */
static int env_int(const char *name)
{
    const char *env = getenv(name);
    return env ? atoi(env) : 0;
}

static void read_env(void)
{
    imgpu_tuning *t = &s_tuning;
    int v = env_int("IMGPU_HIST_BLOCKS_PER_SM");
    if (v > 0)
        t->hist_blocks_per_sm = v;
    v = env_int("IMGPU_EQ_BLOCKS_PER_SM");
    if (v > 0)
        t->eq_blocks_per_sm = v;
    v = env_int("IMGPU_SCAN_CDF16_BLOCK");
    if (v == 256 || v == 512 || v == 1024)
        t->scan_cdf16_block = v;
    v = env_int("IMGPU_H16_CLUSTER"); /* > 0 is taken; the launcher checks the cluster size */
    if (v > 0)
        t->h16_cluster = v;
    /* the rotation's block shapes: the threads stay IMGPU_ROT_BX * IMGPU_ROT_BY */
    const int threads = IMGPU_ROT_BX * IMGPU_ROT_BY, warps = threads / 32;
    v = env_int("IMGPU_ROT_BX");
    if (v >= 1 && v <= threads && threads % v == 0)
        t->rot_bx = v;
    v = env_int("IMGPU_ROT_WX");
    if (v >= 1 && v <= warps && warps % v == 0)
        t->rot_wx = v;
    const char *env = getenv("IMGPU_ROT_LAYOUT"); /* 0 rows, 1 warp tiles, for every image */
    if (env && (*env == '0' || *env == '1'))
        s_env_rot_layout = *env - '0';
    t->rot_layout = s_env_rot_layout;
}

const imgpu_tuning *imgpu__cuda_tuning(void)
{
    pthread_once(&s_once, read_env);
    return &s_tuning;
}

void imgpu_kernels_eq_path(int path, int keep_chunks)
{
    pthread_once(&s_once, read_env);
    s_tuning.eq_path = path;
    s_tuning.eq_keep_chunks = keep_chunks;
}

void imgpu_kernels_rot_layout(int layout)
{
    pthread_once(&s_once, read_env);
    s_tuning.rot_layout = layout >= 0 ? layout : s_env_rot_layout;
}

void imgpu_kernels_rot_gather(int on)
{
    pthread_once(&s_once, read_env);
    s_tuning.rot_gather = on != 0;
}

void imgpu_kernels_lut16_path(int path)
{
    pthread_once(&s_once, read_env);
    s_tuning.lut16_path = path;
}
