/* onnx_internal.h — what onnx_import.c (the model, its checks, the network's text) and
 * onnx_ops.c (one node at a time) share. */
#ifndef ONNX_INTERNAL_H
#define ONNX_INTERNAL_H

#include "onnx/onnx.h"
#include "onnx.pb-c.h"

/* The newest opset of the default domain texc reads. Opsets 19 to 22 change, for the
 * operators texc imports, only element types (float8, int4, bfloat16: refused by name) and
 * add forms refused by name (Pad's wrap mode, AveragePool's dilations), Resize's
 * half_pixel_symmetric (read), and Gelu (opset 20, read). 23 to 25 add Attention,
 * RotaryEmbedding, RMSNormalization, Swish and TensorScatter (onnx_attention.c, read); 26
 * to 28 add CumProd, CausalConvWithState, LinearAttention and SwiGLU (read), BitCast (refused
 * as an unknown operator), SpaceToDepth's mode and Range's stash_type (read), and otherwise
 * element types (float6: refused by name). PyTorch's dynamo exporter writes
 * opset 18 unless told otherwise. */
#define ONNX_MAX_OPSET 28

/* ONNX element types we meet (TensorProto.DataType). */
enum {
  OT_FLOAT = 1, OT_UINT8 = 2, OT_INT8 = 3, OT_UINT16 = 4, OT_INT16 = 5, OT_INT32 = 6, OT_INT64 = 7, OT_BOOL = 9,
  OT_FLOAT16 = 10, OT_DOUBLE = 11, OT_UINT32 = 12, OT_UINT64 = 13, OT_BFLOAT16 = 16
};

/* Every float of a network is held as f32: a float16, bfloat16 or double value of the model
 * is a float (OT_FLOAT) inside the importer, its own type kept only where a Cast rounds to
 * it and where the graph's inputs and outputs are declared (docs/ONNX.md "Element types"). */
int imp_held_type(int dt);
/* X rounded to ONNX type DT (f32, f16 or bf16 precision, double as it is, integers
 * truncated, bool 0 or 1). */
double imp_round_to(int dt, double x);

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
  int declared;       /* float16 / bfloat16 / double: the model's type of a value held as f32
                         (imp_held_type; 0 for float and the rest) */
  bool fint;          /* integers (dtype OT_INT64 / OT_INT32) that TEX holds as f32, exact to 2^24:
                         what arithmetic on run-time integers makes (onnx_ops.c, int_result);
                         quantized values (OT_UINT8 / OT_INT8: onnx_quant.c, uint8 and int8
                         graph inputs) are always held so */
  const char *as_f32; /* TEX (i64 / i32) converted to f32, once made (float_in) */
  /* A DequantizeLinear's output: its quantized input, scale and zero point (NULL: 0), per
   * tensor or along axis DQ_AXIS (quantized convolutions read them: onnx_quant.c) */
  const struct Val *dq_x, *dq_s, *dq_z;
  int dq_axis;
  const char *as_u8;  /* a quantized value as u8 NHWC, channels padded to 4 (quant_u8_nhwc) */
  double as_u8_zx;    /* ... with this zero point in its padding */
  const char *as_u8_rows; /* ... as u8, its last axis padded to 4 with zeros (imp_qdense) */
  /* A sequence (SequenceEmpty, SequenceInsert, ...: onnx_control.c): its tensors, known at
   * import as the loops that build it are unrolled there; IS_SEQ with NSEQ of them */
  bool is_seq;
  struct Val **seq;
  int nseq;
} Val;

typedef struct Imp {
  const char *path;
  int opset;
  Vec vals;               /* Val*, searched by name */
  const Onnx__NodeProto *node; /* the node being imported (errors name it) */
  char *body;             /* the network's calls (BODY_LEN bytes of BODY_CAP) */
  size_t body_len, body_cap;
  char *kernels;          /* kernels the file defines (shapes of this model) */
  Vec ktext, kname;       /* their texts and names, to define each once */
  char *params;           /* the header's weight parameters */
  Vec names;              /* network names in use, in order */
  const char **name_set;  /* the same, hashed (open addressing; NULL: free slot) */
  int *name_next;         /* per slot: the next number imp_name tries for that name as a hint (0:
                             2; a hint used N times costs N tries, not N^2) */
  size_t name_cap;
  WeightSet weights;
  int ninputs;
  Define *defs;           /* -D values of symbolic dimensions */
  int ndefs;
  Define *sized;          /* symbolic dimensions the --input files give (no -D) */
  int nsized;
  char *symbolic;         /* "batch_size = 1, ..." for the header comment */
  char *guessed;          /* "h, w": those neither -D nor a file gives, taken as 1 */
  bool failed;
  bool int8;              /* quantized convolutions as integer kernels (onnx_int8_convs) */
  const Onnx__GraphProto *graph; /* the model's graph, being imported */
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
/* Float constant V as a network tensor, for an operator with no fold of constants: a Val of
 * V's shape without values whose tensor is V's weight (imp_tensor), so that the operator
 * computes from it (a call on weights alone is folded: computed once at load; the position
 * embeddings a ViT resizes). V itself stays a constant for the nodes that fold it. NULL
 * (reported: "WHAT of a constant") for integer constants. */
Val *imp_as_tensor(Imp *I, Val *v, const char *what);
/* The network tensor of rank-4 V channels last (NCHW constants permuted at import,
 * NCHW tensors through nchw_to_nhwc). */
const char *imp_tensor_nhwc(Imp *I, Val *v);
/* Axis t of a channels-last tensor holds the logical (NCHW) axis imp_nhwc_axis[t]. */
extern const int imp_nhwc_axis[4];
/* V's constant values permuted NCHW -> NHWC (malloc'd); V rank 4. */
double *imp_permute_nhwc(const Val *v);
/* Define kernel BASE (TEXT: all after the name) once; its name. */
const char *imp_kernel(Imp *I, const char *base, const char *text);
/* Append `OUT = OP(ARGS)` to the body. */
void imp_call(Imp *I, const char *out, const char *op, const char *args);
/* A generated kernel's call being written: its parameters and the call's arguments, in
 * step (zero-initialized: none yet). */
typedef struct {
  char *params, *args;
  int n;
} ImpCall;
/* Parameter PNAME of the kernel, of V's type; argument V's tensor (imp_tensor). */
void imp_call_arg(Imp *I, ImpCall *c, const char *pname, Val *v);
/* Kernel `(PARAMS) -> Y: OUT's type { STMT }` (defined once, named after BASE) called on
 * C's arguments into OUT. */
void imp_call_kernel(Imp *I, const ImpCall *c, const char *base, const Val *out, const char *stmt);

/* onnx_nn.c: ARGS and a 2-D convolution's attributes after them, ", SH = 2, PT = 1, ..." (strides
 * S, dilations D, pads P [t, l, b, r]; those at their defaults left out). */
char *imp_conv_attrs(char *args, const int64_t *s, const int64_t *d, const int64_t *p);

/* A QLinearConv's output stage, when the integer kernels compute it (onnx_quant.c
 * qlinear_conv_int): its int32 bias B (or NULL) and output scale YS. */
typedef struct QOut {
  const Val *b, *ys;
} QOut;

/* onnx_quant.c: the 2-D convolution of X by W (OIHW, a constant), strides S, dilations D,
 * pads P [t, l, b, r], as integer products (qconv2d_nhwc_pad) when X and W are dequantized
 * uint8 and int8 values and I->int8 allows: 1, its output (NHWC) in *OUT; 0: not of that
 * form; -1: an error, reported. QO: a QLinearConv's output stage (its factor divided by
 * y_scale, its bias taken from the zero-point term), NULL for a QDQ convolution. */
int imp_qconv2d(Imp *I, Val *x, Val *w, const int64_t *s, const int64_t *d, const int64_t *p, const QOut *qo, Val **out);

/* onnx_quant.c: the depthwise convolution (groups = channels, a multiple of 4) of X by W
 * ([C, 1, KH, KW]) on the u8 input (qdepthwise_conv2d_nhwc_pad: sums exact in f32), as
 * imp_qconv2d. */
int imp_qdepthwise(Imp *I, Val *x, Val *w, const int64_t *s, const int64_t *d, const int64_t *p, const QOut *qo, Val **out);
/* onnx_nn.c: Conv's 2-D convolution of X by W (OIHW), group G, strides S, dilations D, pads
 * P [t, l, b, r], bias B (or NULL) into output 0 of the node (maybe channels last: *OUT). */
bool imp_conv2d(Imp *I, Val *x, Val *w, Val *b, int64_t g, const int64_t *s, const int64_t *d, const int64_t *p, Val **out);

/* onnx_quant.c: A (rank >= 2) times the constant matrix B ([K, N]; [N, K] when TB) into O as
 * integer products (qdense) when A and B are dequantized uint8 and int8 values and I->int8
 * allows: 1; 0: not of that form. */
int imp_qdense(Imp *I, Val *a, Val *b, bool tb, Val *o);

/* onnx_ops.c: import the current node (I->node). false after an error. */
bool onnx_op(Imp *I);
/* Is OP of the default domain one that onnx_op knows? */
bool onnx_op_known(const char *op);
/* onnx_layout.c: X[0..N) (N >= 1) concatenated along AXIS (negative: from the end) into
 * output 0 of the node (Concat). false: reported. */
bool imp_concat(Imp *I, Val **x, int n, int64_t axis);
/* onnx_quant.c: is OP one of the com.microsoft operators texc imports (QLinearAdd, ...)? */
bool onnx_contrib_known(const char *op);

/* ---- onnx_ops.c: what the operator files share ------------------------------------
 * A node's inputs and attributes, kernel text, broadcasting, folding and the elementwise
 * kernels; each is described at its definition. */
#define MAX_RESULT ((int64_t)1 << 30) /* elements of one result at most: imp_shape_ok */
const Onnx__AttributeProto *imp_attr(Imp *I, const char *name);
int64_t imp_attr_i(Imp *I, const char *name, int64_t def);
double imp_attr_f(Imp *I, const char *name, double def);
const char *imp_attr_s(Imp *I, const char *name, const char *def);
/* Attribute NAME's integers into OUT; their count, or -1 when absent or longer than MAX
 * (an error, reported: the import fails). */
int imp_attr_ints(Imp *I, const char *name, int64_t *out, int max);
/* ONNX's name of element type DT (TensorProto.DataType), for messages. */
const char *imp_type_name(int dt);
/* Is S one of the N strings of LIST (IMP_ONE_OF: of the array LIST)? */
bool imp_one_of(const char *s, const char *const *list, size_t n);
#define IMP_ONE_OF(s, list) imp_one_of(s, list, sizeof(list) / sizeof((list)[0]))
/* Subgraph G (an If's branch, a Scan's body) imported in place: its initializers, then its
 * nodes (they read the enclosing graph's values by name); false: reported. */
bool imp_import_graph(Imp *I, const Onnx__GraphProto *g);
/* A new value NAME that is V (its tensor, or a copy of its constant values). */
Val *imp_alias_as(Imp *I, const char *name, const Val *v);
/* onnx_control.c: If and Scan (1 or 0, reported), else -1. */
int onnx_control_op(Imp *I, const char *op);
/* Does OP read sequences (the Sequence operators, ConcatFromSequence, Identity and the control
 * flow that carries them)? Every other operator refuses one. */
bool onnx_reads_sequences(const char *op);
/* Step T of a recurrence unrolled at import; ROWS: its position of each stepped input, one
 * along that input's axis. false: reported. */
typedef bool (*ImpStepFn)(Imp *I, void *ctx, int64_t t, Val **rows);
/* STEP for each of STEPS positions along axis AXES[j] of the M inputs XS (REV[j]: read from
 * the end), in order; the inputs are halved until one position is left, so that every step
 * reads alike (one kind of kernel for any step, log2 STEPS kinds of cut) (onnx_control.c). */
bool imp_walk_steps(Imp *I, Val **xs, const int *axes, const bool *rev, int m, int64_t steps, ImpStepFn step, void *ctx,
                    const char *hint);
/* A network tensor that no ONNX name holds, of X's kind (run-time integers stay integers,
 * masks masks; X NULL: float), shape SHAPE, named after HINT. */
Val *imp_tmp_val(Imp *I, const Val *x, const char *hint, int nd, const int64_t *shape);
/* The N values V (one rank, one shape) stacked along a new axis A (log2 N kinds of kernel):
 * a network tensor named after HINT. */
Val *imp_stack(Imp *I, Val **v, int64_t n, int a, const char *hint);
/* The values of TP as doubles (malloc'd, *N of them; floats of every width exactly,
 * integers exactly to 2^53). false: *WHY. */
bool imp_tensor_values(const Onnx__TensorProto *tp, double **out, int64_t *n, const char **why);
bool imp_attrs_known(Imp *I, const char *known);
Val *imp_in(Imp *I, int k);
int imp_nin(Imp *I);
Val *imp_const_in(Imp *I, int k, const char *what);
Val *imp_float_in(Imp *I, int k);
bool imp_one_output(Imp *I);
bool imp_two_outputs(Imp *I); /* a third output is an error */
int imp_axis_of(Imp *I, int64_t a, int r);
char *imp_flit(double v);
char *imp_dims_text(const int64_t *shape, int nd);
bool imp_run_time_int(const Val *v);
char *imp_int_at(const Val *ix, const char *name, const char *idx_text);
char *imp_ty(const Val *v);
char *imp_idx(const char *p, int nd);
Val *imp_net_out(Imp *I, int k, int nd, const int64_t *shape);
Val *imp_net_out_like(Imp *I, int k, int nd, const int64_t *shape, const Val *x);
Val *imp_int_as_f32(Imp *I, Val *v);
/* OK passed on; when true, the last value made (by imp_ew, an alias) holds integers of
 * type DT as f32 (Val.fint: run-time integers, quantized values). */
bool imp_as_int(Imp *I, bool ok, int dt);
bool imp_alias(Imp *I, Val *v);
bool imp_broadcast(Imp *I, const int64_t *a_in, int na, const int64_t *b_in, int nb, int64_t *out, int *no);
int64_t imp_bidx(const int64_t *sh, int ns, const int64_t *idxs, int no);
char *imp_baccess(const char *name, const Val *v, const int64_t *oshape, int no);
/* The most values of a constant computed at import (imp_vals; 2^31: 16 GiB as doubles);
 * the importer running (its node named when imp_vals refuses more). */
#define IMP_MAX_FOLD (INT64_C(1) << 31)
extern Imp *imp_now;
double *imp_vals(int64_t n);
Val *imp_const_out(Imp *I, int k, int dtype, int nd, const int64_t *shape, double *c);
int imp_shape_from(Imp *I, Val *v, int64_t *out);
bool imp_shape_ok(Imp *I, const int64_t *s, int nd);
bool imp_ew_to(Imp *I, const char *base, Val **x, int n, const char *expr, const int64_t *oshape, int no_in);
Val *imp_ew_nhwc_input(Imp *I, Val *x);
bool imp_ew(Imp *I, const char *base, Val **x, int n, const char *expr);
char *imp_lower(const char *s);

/* numpy's matmul of A by B (batched, broadcasting, 1-D operands; onnx_nn.c): the
 * product's shape OS (NO axes), its reduction's extent K, and the index texts of the
 * product (LHS), A and B over batch b0.., rows i, columns j, reduction k. */
typedef struct {
  int64_t os[HT_MAX_DIMS], k;
  int no;
  char *lhs, *ia, *ib;
} MatmulPlan;
/* P for A by B; false: reported (a scalar operand, inner dimensions that differ, batch
 * dimensions that do not broadcast). */
bool imp_matmul_plan(Imp *I, const Val *a, const Val *b, MatmulPlan *p);

/* onnx_nn.c and onnx_layout.c: node I->node if OP is one of the file's operators: 1 or 0
 * (reported), else -1 (onnx_op asks the next). */
int onnx_nn_op(Imp *I, const char *op);
int onnx_layout_op(Imp *I, const char *op);
/* X's index (text over i0..) at each point of X reshaped to SHAPE, within groups of paired
 * dimensions; NULL when they do not pair up. */
char *imp_reshape_index(const Val *x, const int64_t *shape, int nd);
/* Node K of G and the two after it as one channel shuffle of a channels-last value
 * (onnx_layout.c); *SKIP marks the nodes it imported; false: not that form. */
bool onnx_channel_shuffle(Imp *I, const Onnx__GraphProto *g, int k, bool *skip);
/* onnx_rnn.c: RNN, GRU, LSTM (same contract). */
int onnx_rnn_op(Imp *I, const char *op);
/* onnx_attention.c: Attention, RotaryEmbedding; -1: not one of them */
int onnx_attention_op(Imp *I, const char *op);
/* onnx_quant.c: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
 * ConvInteger, QLinearMatMul, QLinearConv; as onnx_nn_op. */
int onnx_quant_op(Imp *I, const char *op);

#endif
