/* Runs a compiled model through its C API, as an application embedding it would: only
 * NAME.h and libNAME.a (or .so). Build with -DKILN_MODEL=NAME -DKILN_MODEL_HEADER='"NAME.h"'.
 *
 *   run_library OUT_DIR INPUT_0.npy INPUT_1.npy ...
 *
 * reads each input (.npy, C order, little-endian), runs the model with run_checked, and
 * writes OUT_DIR/output_K.npy for each output K. Exits non-zero with a message on failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include KILN_MODEL_HEADER

#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define API(suffix) CAT(KILN_MODEL, suffix)

typedef API(_tensor) model_tensor;

static const char* descr_of(int dtype) {
  switch (dtype) {
    case KILN_DTYPE_F32: return "<f4";
    case KILN_DTYPE_F64: return "<f8";
    case KILN_DTYPE_F16: return "<f2";
    case KILN_DTYPE_I8: return "|i1";
    case KILN_DTYPE_U8: return "|u1";
    case KILN_DTYPE_I16: return "<i2";
    case KILN_DTYPE_I32: return "<i4";
    case KILN_DTYPE_I64: return "<i8";
    case KILN_DTYPE_BOOL: return "|b1";
    default: return NULL;
  }
}

static size_t size_of(int dtype) {
  switch (dtype) {
    case KILN_DTYPE_F64: case KILN_DTYPE_I64: return 8;
    case KILN_DTYPE_F32: case KILN_DTYPE_I32: return 4;
    case KILN_DTYPE_F16: case KILN_DTYPE_BF16: case KILN_DTYPE_I16: return 2;
    default: return 1;
  }
}

static size_t numel(int rank, const int64_t* dims) {
  size_t n = 1;
  for (int i = 0; i < rank; ++i) n *= (size_t)dims[i];
  return n;
}

/* Reads the data of an .npy file whose header must name `descr`; the shape is checked by
 * the model's run_checked, so here only the byte count must match. */
static void* read_npy(const char* path, const char* descr, size_t bytes) {
  FILE* f = fopen(path, "rb");
  unsigned char magic[10];
  if (!f || fread(magic, 1, 10, f) != 10 || memcmp(magic, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s: not an .npy file\n", path);
    exit(1);
  }
  size_t header_len = magic[8] | (magic[9] << 8);
  char* header = calloc(header_len + 1, 1);
  if (fread(header, 1, header_len, f) != header_len || !strstr(header, descr)) {
    fprintf(stderr, "%s: expected dtype %s in header %s\n", path, descr, header);
    exit(1);
  }
  free(header);
  void* data = malloc(bytes ? bytes : 1);
  if (fread(data, 1, bytes, f) != bytes) {
    fprintf(stderr, "%s: expected %zu bytes of data\n", path, bytes);
    exit(1);
  }
  fclose(f);
  return data;
}

static void write_npy(const char* path, const char* descr, int rank, const int64_t* dims, const void* data,
                      size_t bytes) {
  char header[256], shape[160] = "";
  for (int i = 0; i < rank; ++i) {
    char d[32];
    snprintf(d, sizeof d, "%lld%s", (long long)dims[i], rank == 1 ? "," : (i + 1 < rank ? ", " : ""));
    strcat(shape, d);
  }
  int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
  int total = 10 + n + 1;
  int pad = (64 - total % 64) % 64;
  FILE* f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "%s: cannot write\n", path);
    exit(1);
  }
  unsigned short len = (unsigned short)(n + pad + 1);
  fwrite("\x93NUMPY\x01\x00", 1, 8, f);
  fputc(len & 0xff, f);
  fputc(len >> 8, f);
  fwrite(header, 1, (size_t)n, f);
  for (int i = 0; i < pad; ++i) fputc(' ', f);
  fputc('\n', f);
  fwrite(data, 1, bytes, f);
  fclose(f);
}

int main(int argc, char** argv) {
  size_t n_in = API(_num_inputs)(), n_out = API(_num_outputs)();
  if ((size_t)argc != 2 + n_in) {
    fprintf(stderr, "usage: %s OUT_DIR INPUT.npy x %zu\n", argv[0], n_in);
    return 2;
  }
  model_tensor* inputs = calloc(n_in + 1, sizeof *inputs);
  model_tensor* outputs = calloc(n_out + 1, sizeof *outputs);
  for (size_t i = 0; i < n_in; ++i) {
    model_tensor* t = &inputs[i];
    t->dtype = API(_input_dtype)(i);
    t->rank = API(_input_rank)(i);
    t->dims = API(_input_dims)(i);
    t->data = read_npy(argv[2 + i], descr_of(t->dtype), numel(t->rank, t->dims) * size_of(t->dtype));
  }
  for (size_t i = 0; i < n_out; ++i) {
    model_tensor* t = &outputs[i];
    t->dtype = API(_output_dtype)(i);
    t->rank = API(_output_rank)(i);
    t->dims = API(_output_dims)(i);
    t->data = malloc(numel(t->rank, t->dims) * size_of(t->dtype) + 1);
  }
  API(_options) options;
  memset(&options, 0, sizeof options);
  options.threads = 2;
  API(_context)* ctx = API(_create)(&options);
  if (!ctx || API(_error)(ctx)) {
    fprintf(stderr, "create failed: %s\n", ctx ? API(_error)(ctx) : "out of memory");
    return 1;
  }
  /* Twice, so state left over from one run cannot go unnoticed. */
  for (int rep = 0; rep < 2; ++rep) {
    if (API(_run_checked)(ctx, inputs, n_in, outputs, n_out) != 0) {
      fprintf(stderr, "run failed: %s\n", API(_error)(ctx));
      return 1;
    }
  }
  for (size_t i = 0; i < n_out; ++i) {
    char path[4096];
    snprintf(path, sizeof path, "%s/output_%zu.npy", argv[1], i);
    model_tensor* t = &outputs[i];
    write_npy(path, descr_of(t->dtype), t->rank, t->dims, t->data, numel(t->rank, t->dims) * size_of(t->dtype));
  }
  API(_destroy)(ctx);
  for (size_t i = 0; i < n_in; ++i) free(inputs[i].data);
  for (size_t i = 0; i < n_out; ++i) free(outputs[i].data);
  free(inputs);
  free(outputs);
  return 0;
}
