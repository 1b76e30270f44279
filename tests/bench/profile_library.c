/* The profiling switch of a compiled model's C API (model compiled with --name net): off,
 * no node times; on, every node of the last run has a name, an op and a time inside the
 * run. Prints "nodes N, node sum X ms of run Y ms". Links libnet.a. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void* zeros(size_t i, int output) {
  int rank = output ? net_output_rank(i) : net_input_rank(i);
  const int64_t* dims = output ? net_output_dims(i) : net_input_dims(i);
  size_t n = 8; /* bytes per element at most */
  for (int d = 0; d < rank; ++d) n *= (size_t)dims[d];
  return calloc(n + 8, 1);
}

int main(void) {
  net_context* ctx = net_create(NULL);
  if (!ctx || net_error(ctx)) return 1;
  const void* in[16];
  void* out[16];
  if (net_num_inputs() > 16 || net_num_outputs() > 16) return 1;
  for (size_t i = 0; i < net_num_inputs(); ++i) in[i] = zeros(i, 0);
  for (size_t i = 0; i < net_num_outputs(); ++i) out[i] = zeros(i, 1);
  uint64_t start = 0, duration = 0;
  if (net_run(ctx, in, out) != 0 || net_node_time(ctx, 0, &start, &duration) == 0) {
    fprintf(stderr, "profiling off: a node time is reported\n");
    return 1;
  }
  if (net_set_profiling(ctx, 1) != 0) return 1;
  double t0 = now_ms();
  if (net_run(ctx, in, out) != 0) return 1;
  double run_ms = now_ms() - t0;
  double sum_ms = 0;
  uint64_t end_prev = 0;
  for (size_t i = 0; i < net_num_nodes(); ++i) {
    if (!net_node_name(i) || !net_node_op(i) || net_node_time(ctx, i, &start, &duration) != 0 || start < end_prev) {
      fprintf(stderr, "node %zu: no name, op or time, or it starts before the previous one ends\n", i);
      return 1;
    }
    end_prev = start + duration;
    sum_ms += duration / 1e6;
  }
  if (net_node_time(ctx, net_num_nodes(), &start, &duration) == 0 || sum_ms > run_ms) {
    fprintf(stderr, "node %zu exists, or the nodes take longer than the run\n", net_num_nodes());
    return 1;
  }
  net_set_profiling(ctx, 0);
  if (net_run(ctx, in, out) != 0 || net_node_time(ctx, 0, &start, &duration) == 0) {
    fprintf(stderr, "profiling turned off: a node time is still reported\n");
    return 1;
  }
  printf("nodes %zu, node sum %.3f ms of run %.3f ms\n", net_num_nodes(), sum_ms, run_ms);
  for (size_t i = 0; i < net_num_inputs(); ++i) free((void*)in[i]);
  for (size_t i = 0; i < net_num_outputs(); ++i) free(out[i]);
  net_destroy(ctx);
  return 0;
}
