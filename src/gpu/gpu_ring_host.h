/* gpu_ring_host.h - what the batch rings (gpu_encode_bc_ring.inc, gpu_encode_etc_ring.inc) share around a job's
 * submission (helper ring, issue 4): the staged input, the submit and the fence wait.
 *
 * Staged input: on a discrete device a job's texels can be written into a staging buffer in host memory, copied into
 * the device's buffer at the start of the job's command buffer, instead of being written into the device's mapped
 * memory over PCIe (vk_runtime.c's direct upload). The H100 (2026-11-27, 256 x 512^2 a batch): the host's preparation
 * is cheaper (bc1 fast 8.6 -> 5.3-5.5 ms on 16 threads; bc4 normal's prepared words 19.0-22.8 -> 10.9-11.9 ms a batch),
 * but the copy runs before the job's kernels (bc1 fast device busy 14.4 -> 20.5 ms). So the rings stage the jobs whose
 * host work bounds them (KILN_RING_STAGED AUTO: the BC ring's prepared words, the ETC ring's ETC1 at FAST) and upload
 * the others directly; KILN_RING_STAGED=0 never, =1 always (lavapipe's tests). Lost and removed: the copies on a
 * second queue of the same family (14:18 UTC: they did not overlap the kernels, the two queues took turns - the
 * kernels' timestamps then spanned the other queue's copies: bc1 fast kernels 13.5 -> 22.2 ms, and the kernel ms a
 * batch reported broke test_gpu_etc_ring's sums); importing the images' own memory (VK_EXT_external_memory_host,
 * 14:02 UTC): 7-10x slower, ~0.36 ms to pin each 1 MiB image. */
#ifndef KILN_GPU_RING_HOST_H
#define KILN_GPU_RING_HOST_H

#include "gpu/gpu_ring_trace.h"
#include "gpu/vk.h"

#include <stdlib.h>

enum { KILN__RING_STAGED_OFF = 0, KILN__RING_STAGED_ON = 1, KILN__RING_STAGED_AUTO = 2 };

/* Whether the rings stage their input: KILN_RING_STAGED=0 never, =1 always; default AUTO on discrete devices (each
 * ring decides by its jobs), else OFF (unified memory: the shaders read the mapped buffer). */
static inline int kiln__ring_staged(const kiln_gpu *gpu)
{
    const char *e = getenv("KILN_RING_STAGED");
    if (e && (e[0] == '0' || e[0] == '1')) return e[0] == '1' ? KILN__RING_STAGED_ON : KILN__RING_STAGED_OFF;
    return gpu->discrete ? KILN__RING_STAGED_AUTO : KILN__RING_STAGED_OFF;
}

/* *io at least size bytes: a device buffer and a host staging buffer (staged), or as kiln_vk_io_ensure makes it (a
 * slot keeps one io of each kind). */
static inline kiln_status kiln__ring_in_ensure(kiln_context *ctx, kiln_gpu *gpu, VkDeviceSize size, int staged, kiln_vk_io *io)
{
    if (!staged) return kiln_vk_io_ensure(ctx, gpu, size, 0, io);
    if (io->dev.buffer && io->staging.buffer && !io->direct && io->dev.size >= size && io->staging.size >= size) return KILN_OK;
    kiln_vk_io_destroy(gpu, io);
    memset(io, 0, sizeof *io);
    KILN_TRY(kiln_vk_buffer_create(ctx, gpu, size, KILN_VK_MEM_DEVICE, &io->dev));
    kiln_status st = kiln_vk_buffer_create(ctx, gpu, size, KILN_VK_MEM_UPLOAD, &io->staging);
    if (st != KILN_OK) kiln_vk_io_destroy(gpu, io);
    return st;
}

/* Ends the job's command buffer (when st, the recording's status, is KILN_OK) and submits it with its fence. On
 * failure cmd is freed. */
static inline kiln_status kiln__ring_submit(kiln_context *ctx, kiln_gpu *gpu, kiln_vk_cmd *cmd, kiln_status st)
{
    if (st == KILN_OK) st = kiln_vk_check(ctx, vkEndCommandBuffer(cmd->cb), "vkEndCommandBuffer");
    if (st == KILN_OK) {
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd->cb};
        st = kiln_vk_check(ctx, vkQueueSubmit(gpu->queue, 1, &si, cmd->fence), "vkQueueSubmit");
    }
    if (st != KILN_OK) kiln_vk_cmd_free(cmd);
    return st;
}

/* Waits for job k's fence (the GPU cannot be interrupted: on cancellation it waits, then reports) and reads its
 * timestamps from qp (4 a job at q0: top, kernels' start and end, bottom; top and bottom written only when tracing)
 * into *kernel_ms and the trace. On failure cmd is freed (else kept for the slot's next job). */
static inline kiln_status kiln__ring_wait(kiln_context *ctx, kiln_gpu *gpu, kiln_vk_cmd *cmd, VkQueryPool qp, uint32_t q0,
                                          kiln__ring_trace *tr, double *kernel_ms, uint64_t k, uint64_t in_bytes)
{
    kiln_status st = KILN_OK;
    int cancelled = 0;
    if (tr->on && vkGetFenceStatus(gpu->device, cmd->fence) == VK_NOT_READY) tr->blocked++;
    for (;;) {
        VkResult r = vkWaitForFences(gpu->device, 1, &cmd->fence, VK_TRUE, 100u * 1000u * 1000u);
        if (r == VK_SUCCESS) break;
        if (r != VK_TIMEOUT) {
            st = kiln_vk_check(ctx, r, "vkWaitForFences");
            break;
        }
        if (kiln__cancelled(ctx)) cancelled = 1;
    }
    if (st == KILN_OK && qp) {
        uint64_t ts[4];
        const int all = tr->on != 0;
        VkResult r = vkGetQueryPoolResults(gpu->device, qp, q0 + (all ? 0u : 1u), all ? 4u : 2u, sizeof ts, all ? ts : ts + 1,
                                           sizeof ts[0], VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
        if (r != VK_SUCCESS) st = kiln_vk_check(ctx, r, "vkGetQueryPoolResults");
        else {
            uint64_t mask = gpu->timestamp_bits >= 64 ? ~0ull : (1ull << gpu->timestamp_bits) - 1;
            *kernel_ms += (double)((ts[2] - ts[1]) & mask) * gpu->timestamp_period / 1e6;
            if (all) kiln__ring_trace_gpu(tr, ts, mask, gpu->timestamp_period, k, in_bytes);
        }
    }
    kiln__ring_trace_mark(tr, KRT_WAIT); /* the fence and the timestamps */
    if (st != KILN_OK) kiln_vk_cmd_free(cmd);
    if (st == KILN_OK && (cancelled || kiln__cancelled(ctx))) st = kiln__fail(ctx, KILN_ERR_CANCELLED, "cancelled");
    return st;
}

#endif
