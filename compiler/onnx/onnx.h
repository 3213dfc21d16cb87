/* onnx.h — models in (docs/ONNX.md): ONNX import and the tensor files around networks.
 *
 *   onnx_import.c  `texc import MODEL.onnx`: the model (protobuf-c over libonnx-dev's
 *                  onnx.proto) checked, its shape arithmetic folded, written as a `.tex`
 *                  network over stdlib operators plus the weights
 *   onnx_ops.c     one ONNX node -> network calls (and the kernels the file defines)
 *   tensor_io.c    host tensors: .npy (numpy), .safetensors (weights), .pb (TensorProto)
 *
 * Errors name the file: `texc: error: FILE: what is wrong`; nothing is written then.
 */
#ifndef ONNX_H
#define ONNX_H

#include "texc.h"

#define HT_MAX_DIMS 8

/* A host tensor of f32 (the only dtype of networks). DATA is malloc'd. */
typedef struct HostTensor {
  const char *name;
  int ndim;
  int64_t shape[HT_MAX_DIMS];
  float *data;
} HostTensor;

/* A named set of host tensors: a network's weights. */
typedef struct WeightSet {
  const char *file; /* where they came from (errors name it) */
  HostTensor *t;
  int n;
} WeightSet;

int64_t ht_numel(const HostTensor *t);
/* The tensor NAME of W, or NULL. */
HostTensor *ws_find(const WeightSet *w, const char *name);
void ws_add(WeightSet *w, HostTensor t);

/* A .npy array as stored (kernels' --input and --expect: any dtype, no conversion). */
typedef struct NpyArray {
  DType dtype;     /* DT_COUNT: a numpy dtype texc has not (u16, u64) */
  char kind;       /* numpy's: 'f', 'i', 'u' or 'b' (bool) */
  int size;        /* bytes per element */
  int ndim;
  int64_t shape[HT_MAX_DIMS];
  void *data;      /* little-endian, row-major; malloc'd */
} NpyArray;

/* tensor_io.c — each false after an error naming PATH (diag_error). */
bool npy_read_array(const char *path, NpyArray *a);
/* The shape of .npy file PATH from its header alone (the data not read); false, and nothing
 * reported, when the file is missing or its header malformed (its reader says why). */
bool npy_read_shape(const char *path, int *nd, int64_t *shape);
/* A's dtype and shape as texc writes a type, "f32[2, 3]" (numpy's name when texc has none). */
char *npy_type_text(const NpyArray *a);
/* npy_read_array converted to f32 (networks): f64 and f16 rounded, integers exact. */
bool npy_read(const char *path, HostTensor *t);
/* NDIM x SHAPE elements of DT at DATA as a .npy file (version 1.0). */
bool npy_write_array(const char *path, DType dt, int ndim, const int64_t *shape, const void *data);
bool npy_write(const char *path, const HostTensor *t);
bool safetensors_read(const char *path, WeightSet *w);
bool safetensors_write(const char *path, const WeightSet *w);
/* A serialized onnx.TensorProto (the test data of ONNX's node tests) as f32. */
bool pb_tensor_read(const char *path, HostTensor *t);
/* An input file by extension: .npy, else .pb. */
bool tensor_file_read(const char *path, HostTensor *t);

/* A TensorProto's values as f32 (its shape too; rank 0 becomes [1]). false: *WHY. */
struct Onnx__TensorProto;
bool onnx_tensor_f32(const struct Onnx__TensorProto *tp, HostTensor *t, const char **why);

/* onnx_import.c */
/* An imported model: the network's text and its weights (names as in the text). */
typedef struct OnnxImport {
  char *text;      /* the `.tex` file */
  WeightSet weights;
  int ninputs;     /* the graph's inputs: the network's first parameters */
  const char **output_names; /* per result: the graph's output name (a result's tensor may
                                be named otherwise: an alias, a conversion's `y_out`) */
} OnnxImport;

/* Import PATH. TEX_NAME is the .tex file that the text will be (its sidecar is named in the
 * header comment). A symbolic dimension (dim_param, "batch_size") takes the value of the
 * -D of its name among DEFS (marked used), else 1. false after errors (reported, naming
 * PATH). */
bool onnx_import(const char *path, const char *tex_name, Define *defs, int ndefs, OnnxImport *out);
/* Input files of the next import (`texc run MODEL.onnx --input ...`, in the graph's input
 * order): integer inputs among them are folded in as constants; onnx_input_folded(I)
 * says which, so that the others are the network's parameters in order. */
void onnx_bind_inputs(const char *const *files, int n);
bool onnx_input_folded(int i);
/* `--random-weights`: fill the stripped initializers of the next imports (a float
 * initializer without data whose doc_string is `texc:uniform SEED LO HI`; tests/models/). */
void onnx_random_weights(bool on);
/* Quantized models' convolutions (DequantizeLinear'd uint8 input and int8 filter) in the
 * next imports as integer kernels (qconv2d_nhwc_pad) rather than in f32: where the CPU has
 * a four-byte dot product (net_rewrites' int8). Off at first. */
void onnx_int8_convs(bool on);
/* Does PATH end in ".onnx"? */
bool onnx_is_model(const char *path);
/* `texc import MODEL.onnx [-o NET.tex]`: writes NET.tex and NET.safetensors. */
int onnx_import_main(const char *model, const char *out, Define *defs, int ndefs);

#endif
