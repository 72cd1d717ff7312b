/* test_auto_rule.c — `auto`'s two rules (src/backend/ops.c) held to each other (issue 30:
 * `auto` was up to 18% slower than the faster backend, having run the CPU path):
 *   - a job the start rule starts CUDA for is one the run-time rule gives the GPU while the
 *     start-up is still in flight, once enough of it has passed (the rule before started CUDA
 *     for jobs it would then run on the CPU beside the start-up, whatever happened);
 *   - a job it does not start CUDA for runs on the CPU when nothing was started;
 *   - once CUDA is ready, the GPU takes what its cost rule gives it, whatever the start rule
 *     said (a start-up begun for an earlier job of the process);
 *   - the 8K colour bicubic rotation of the H200 measurement (cost model of src/op/rotate.c,
 *     16 threads) is not started for: it runs on the CPU, as --device cpu, which was faster.
 * Pure arithmetic: runs anywhere. */
#include "op/op_table.h"
#include "ops.h"
#include "test_util.h"

#include <stddef.h>

int main(void)
{
    static const double cpu_ms[] = {0.1, 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 100, 120, 140, 160,
                                    180, 200, 250, 300, 400, 600, 1000, 3000};
    static const size_t bytes[] = {0, 1000, 1u << 20, 25u << 20, 100u << 20, 300u << 20, 1u << 30};
    int started = 0, skipped = 0;
    for (size_t i = 0; i < sizeof cpu_ms / sizeof cpu_ms[0]; i++)
        for (size_t k = 0; k < sizeof bytes / sizeof bytes[0]; k++) {
            const double c = cpu_ms[i];
            const size_t b = bytes[k];
            if (imgpu__auto_start_worth(c, b)) {
                started++;
                /* the start-up 10 s old and still running: the least it charges */
                CHECKF(!imgpu__auto_cpu_first(c, b, 0, 10000.0),
                       "%.1f ms on the CPU, %zu bytes: CUDA started, yet the CPU runs it while "
                       "the start-up is in flight", c, b);
                CHECKF(!imgpu__auto_cpu_first(c, b, 1, 0.0), "%.1f ms, %zu bytes: started, ready, "
                       "yet the CPU", c, b);
            } else {
                skipped++;
                CHECKF(imgpu__auto_cpu_first(c, b, -1, 0.0) || imgpu__auto_cpu_first(c, b, 0, 0.0),
                       "%.1f ms, %zu bytes: not started, yet not on the CPU", c, b);
            }
            /* ready: the cost rule alone; no GPU: the same, with nothing to wait for */
            CHECKF(imgpu__auto_cpu_first(c, b, 1, 0.0) == imgpu__auto_cpu_first(c, b, -1, 0.0),
                   "%.1f ms, %zu bytes: ready and none differ", c, b);
            /* the start-up charged falls as it goes on */
            CHECKF(imgpu__auto_cpu_first(c, b, 0, 0.0) >= imgpu__auto_cpu_first(c, b, 0, 200.0),
                   "%.1f ms, %zu bytes: an older start-up made the GPU less likely", c, b);
        }
    CHECKF(started > 10 && skipped > 10, "both kinds of job occur (%d started, %d not)", started, skipped);

    /* 8K (7680 x 4320) colour bicubic rotation by 30 degrees, expanded: the op's CPU cost on
     * one core over 16 threads, against 8K in (99.5 MB) and its 8811 x 7581 result out */
    imgpu_op rot = imgpu_op_rotate(30);
    rot.u.rotate.filter = IMGPU_FILTER_BICUBIC;
    int ow, oh;
    imgpu_rotate_output_size(7680, 4320, &rot.u.rotate, &ow, &oh);
    const double ms = imgpu_op_desc_of(IMGPU_OP_ROTATE)->cpu_ns(7680, 4320, 3, &rot) / 16 / 1e6;
    const size_t io = (size_t)7680 * 4320 * 3 + (size_t)ow * oh * 3;
    CHECKF(!imgpu__auto_start_worth(ms, io), "8K bicubic rotation (%.0f ms on 16 threads): CUDA "
           "started for a job the CPU runs", ms);
    CHECK(imgpu__auto_cpu_first(ms, io, 0, 250.0));
    TEST_MAIN_END();
}
