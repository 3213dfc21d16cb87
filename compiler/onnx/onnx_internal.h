/* onnx_internal.h — what onnx_import.c (the model, its checks, the network's text) and
 * onnx_ops.c (one node at a time) share. */
#ifndef ONNX_INTERNAL_H
#define ONNX_INTERNAL_H

#include "onnx/onnx.h"
#include "onnx.pb-c.h"

/* The newest opset of the default domain texc reads. Opsets 19 to 22 change, for the
 * operators texc imports, only element types (float8, int4, bfloat16: refused by name) and
 * add forms refused by name (Pad's wrap mode, AveragePool's dilations), Resize's
 * half_pixel_symmetric (read), and Gelu (opset 20, read). PyTorch's dynamo exporter writes
 * opset 20. */
#define ONNX_MAX_OPSET 22

/* ONNX element types we meet (TensorProto.DataType). */
enum { OT_FLOAT = 1, OT_UINT8 = 2, OT_INT8 = 3, OT_INT32 = 6, OT_INT64 = 7, OT_BOOL = 9, OT_DOUBLE = 11 };

/* A value of the graph: a constant known at import (C: its values, folded shape arithmetic
 * and weights) or a tensor of the network (TEX: its name there). A constant that a
 * network call reads becomes a weight parameter; TEX then names it too. */
typedef struct Val {
  const char *name;   /* the ONNX name */
  int dtype;          /* OT_* */
  int ndim;
  int64_t shape[HT_MAX_DIMS];
  double *c;          /* constant: numel values (malloc'd); NULL: a network tensor */
  const char *tex;
  bool param;         /* TEX is a parameter of the network (input or weight) */
  bool nhwc;          /* TEX holds the rank-4 value channels last: [N, H, W, C] */
  const char *other;  /* the value in the other layout, once made */
  bool fint;          /* integers (dtype OT_INT64 / OT_INT32) that TEX holds as f32, exact to 2^24:
                         what arithmetic on run-time integers makes (onnx_ops.c, int_result) */
  const char *as_f32; /* TEX (i64 / i32) converted to f32, once made (float_in) */
} Val;

typedef struct Imp {
  const char *path;
  int opset;
  Vec vals;               /* Val*, searched by name */
  const Onnx__NodeProto *node; /* the node being imported (errors name it) */
  char *body;             /* the network's calls */
  char *kernels;          /* kernels the file defines (shapes of this model) */
  Vec ktext, kname;       /* their texts and names, to define each once */
  char *params;           /* the header's weight parameters */
  Vec names;              /* network names in use */
  WeightSet weights;
  int ninputs;
  Define *defs;           /* -D values of symbolic dimensions */
  int ndefs;
  char *symbolic;         /* "batch_size = 1, ..." for the header comment */
  bool failed;
} Imp;

int64_t val_numel(const Val *v);
Val *imp_val(Imp *I, const char *name);
/* A new value for output K of the current node. */
Val *imp_out(Imp *I, int k, int dtype, int nd, const int64_t *shape);
/* Error at the current node: "FILE: node 'N' (Op): MSG"; false. */
bool imp_error(Imp *I, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "... not supported: WHAT"; false. */
bool imp_unsupported(Imp *I, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A fresh network name from HINT (sanitized, no keyword, unique). */
const char *imp_name(Imp *I, const char *hint);
/* The network tensor of V in the model's layout: a constant made a weight parameter on
 * first use, an NHWC value transformed back (nhwc_to_nchw) on first use. */
const char *imp_tensor(Imp *I, Val *v);
/* The network tensor of rank-4 V channels last (NCHW constants permuted at import,
 * NCHW tensors through nchw_to_nhwc). */
const char *imp_tensor_nhwc(Imp *I, Val *v);
/* V's constant values permuted NCHW -> NHWC (malloc'd); V rank 4. */
double *imp_permute_nhwc(const Val *v);
/* Define kernel BASE (TEXT: all after the name) once; its name. */
const char *imp_kernel(Imp *I, const char *base, const char *text);
/* Append `OUT = OP(ARGS)` to the body. */
void imp_call(Imp *I, const char *out, const char *op, const char *args);

/* onnx_ops.c: import the current node (I->node). false after an error. */
bool onnx_op(Imp *I);
/* Is OP of the default domain one that onnx_op knows? */
bool onnx_op_known(const char *op);

#endif
