// classify.cpp — an image classifier deployed from a texc network library, the way the
// C++ deployment of TVM's tutorials does it: read an image, resize and center-crop it to
// the network's input size, normalise it as torchvision does, run the library, print the
// top-5 classes and the latency.
//
//   texc NET.tex --emit so -o libnet.so --name net     (or MODEL.onnx; --target cuda)
//   texc NET.tex --emit header -o net.h --name net
//   c++ -O2 classify.cpp -I. -L. -lnet -Wl,-rpath,'$ORIGIN' [-DHAVE_PNG -lpng] -o classify
//   ./classify IMAGE.ppm|IMAGE.png [--runs N] [--labels FILE] [--weights F.safetensors]
//              [--save-input X.npy] [--save-output Y.npy]
//
// The library's header (net.h) gives the input's shape: [1, 3, S, S] (NCHW, as torchvision
// models exported to ONNX) or [1, S, S, 3] (NHWC, as texc's own example networks).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#ifdef HAVE_PNG
#include <png.h>
#endif

#include "net.h"

namespace {

struct Image {
  int w = 0, h = 0;
  std::vector<float> rgb; // h * w * 3, in [0, 1]
};

// PPM: P6 (binary) or P3 (text), maxval up to 255 or 65535, with # comments.
bool read_ppm(const char *path, Image &img) {
  FILE *f = std::fopen(path, "rb");
  if (!f) return false;
  char magic[3] = {0};
  auto next_int = [f](int &v) {
    int c;
    while ((c = std::fgetc(f)) != EOF) {
      if (c == '#') {
        while ((c = std::fgetc(f)) != EOF && c != '\n') {}
      } else if (c > ' ') break;
    }
    if (c == EOF || c < '0' || c > '9') return false;
    v = 0;
    for (; c >= '0' && c <= '9'; c = std::fgetc(f)) v = v * 10 + (c - '0');
    return v >= 0 && v < (1 << 24);
  };
  int maxval = 0;
  bool ok = std::fread(magic, 1, 2, f) == 2 && magic[0] == 'P' && (magic[1] == '6' || magic[1] == '3') &&
            next_int(img.w) && next_int(img.h) && next_int(maxval) && maxval > 0 && maxval < 65536 &&
            img.w > 0 && img.h > 0 && (int64_t)img.w * img.h < (1 << 26);
  if (ok) {
    img.rgb.resize((size_t)img.w * img.h * 3);
    for (float &v : img.rgb) {
      int x = 0;
      if (magic[1] == '3') ok = ok && next_int(x);
      else if (maxval < 256) x = std::fgetc(f);
      else x = std::fgetc(f) << 8, x |= std::fgetc(f);
      if (x < 0 || x > maxval) ok = false;
      v = (float)x / (float)maxval;
    }
  }
  std::fclose(f);
  return ok;
}

#ifdef HAVE_PNG
bool read_png(const char *path, Image &img) {
  png_image p;
  std::memset(&p, 0, sizeof p);
  p.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&p, path)) return false;
  p.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> buf(PNG_IMAGE_SIZE(p));
  if (!png_image_finish_read(&p, nullptr, buf.data(), 0, nullptr)) return false;
  img.w = (int)p.width, img.h = (int)p.height;
  img.rgb.resize(buf.size());
  for (size_t i = 0; i < buf.size(); i++) img.rgb[i] = buf[i] / 255.0f;
  return true;
}
#endif

// Bilinear resampling (half-pixel centres) to W x H.
Image resize(const Image &in, int w, int h) {
  Image out;
  out.w = w, out.h = h;
  out.rgb.resize((size_t)w * h * 3);
  for (int y = 0; y < h; y++) {
    float sy = std::max(0.0f, (y + 0.5f) * in.h / h - 0.5f);
    int y0 = std::min((int)sy, in.h - 1), y1 = std::min(y0 + 1, in.h - 1);
    float fy = sy - y0;
    for (int x = 0; x < w; x++) {
      float sx = std::max(0.0f, (x + 0.5f) * in.w / w - 0.5f);
      int x0 = std::min((int)sx, in.w - 1), x1 = std::min(x0 + 1, in.w - 1);
      float fx = sx - x0;
      for (int c = 0; c < 3; c++) {
        auto at = [&](int yy, int xx) { return in.rgb[((size_t)yy * in.w + xx) * 3 + c]; };
        float top = at(y0, x0) * (1 - fx) + at(y0, x1) * fx, bot = at(y1, x0) * (1 - fx) + at(y1, x1) * fx;
        out.rgb[((size_t)y * w + x) * 3 + c] = top * (1 - fy) + bot * fy;
      }
    }
  }
  return out;
}

// torchvision's Resize(S / 0.875) (the shorter side) then CenterCrop(S), then
// Normalize(mean, std), in the network's layout.
std::vector<float> preprocess(const Image &img, int size, bool nchw) {
  int shorter = (int)std::lround(size / 0.875);
  int w = img.w <= img.h ? shorter : (int)((int64_t)shorter * img.w / img.h);
  int h = img.w <= img.h ? (int)((int64_t)shorter * img.h / img.w) : shorter;
  Image r = resize(img, std::max(w, size), std::max(h, size));
  int top = (int)std::lround((r.h - size) / 2.0), left = (int)std::lround((r.w - size) / 2.0);
  static const float mean[3] = {0.485f, 0.456f, 0.406f}, stdev[3] = {0.229f, 0.224f, 0.225f};
  std::vector<float> t((size_t)3 * size * size);
  for (int y = 0; y < size; y++)
    for (int x = 0; x < size; x++)
      for (int c = 0; c < 3; c++) {
        float v = (r.rgb[((size_t)(y + top) * r.w + x + left) * 3 + c] - mean[c]) / stdev[c];
        t[nchw ? ((size_t)c * size + y) * size + x : ((size_t)y * size + x) * 3 + c] = v;
      }
  return t;
}

// numpy's .npy (version 1.0) of float32 DATA with SHAPE.
bool save_npy(const char *path, const float *data, const int64_t *shape, int ndim) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) dict += std::to_string(shape[d]) + (ndim == 1 || d + 1 < ndim ? "," : ""), n *= shape[d];
  dict += "), }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::ofstream f(path, std::ios::binary);
  unsigned short len = (unsigned short)dict.size();
  f.write("\x93NUMPY\x01\x00", 8);
  f.put((char)(len & 0xff)).put((char)(len >> 8));
  f << dict;
  f.write((const char *)data, (std::streamsize)(n * sizeof(float)));
  return (bool)f;
}

std::vector<std::string> read_labels(const char *path) {
  std::vector<std::string> v;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) v.push_back(line);
  return v;
}

int usage() {
  std::fprintf(stderr, "usage: classify IMAGE.ppm|IMAGE.png [--runs N] [--labels FILE] [--weights F.safetensors]\n"
                       "                [--save-input X.npy] [--save-output Y.npy]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  const char *image = nullptr, *labels = nullptr, *weights = nullptr, *save_in = nullptr, *save_out = nullptr;
  int runs = 20;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    bool more = i + 1 < argc;
    if (a == "--runs" && more) runs = std::max(1, std::atoi(argv[++i]));
    else if (a == "--labels" && more) labels = argv[++i];
    else if (a == "--weights" && more) weights = argv[++i];
    else if (a == "--save-input" && more) save_in = argv[++i];
    else if (a == "--save-output" && more) save_out = argv[++i];
    else if (a[0] != '-' && !image) image = argv[i];
    else return usage();
  }
  if (!image || net_NUM_INPUTS != 1) return usage();

  static const int64_t in_shape[] = net_INPUT_SHAPE, out_shape[] = net_OUTPUT_SHAPE;
  bool nchw = net_INPUT_NDIM == 4 && in_shape[1] == 3;
  int hi = nchw ? 2 : 1; // the height's index; the width's is next
  if (net_INPUT_NDIM != 4 || (!nchw && in_shape[3] != 3) || in_shape[0] != 1 || in_shape[hi] != in_shape[hi + 1]) {
    std::fprintf(stderr, "classify: the network's input is not one square RGB image ([1, 3, S, S] or [1, S, S, 3])\n");
    return 1;
  }
  int size = (int)in_shape[hi];

  Image img;
  std::string path = image;
  bool png = path.size() > 4 && path.compare(path.size() - 4, 4, ".png") == 0;
#ifdef HAVE_PNG
  bool read = png ? read_png(image, img) : read_ppm(image, img);
#else
  bool read = !png && read_ppm(image, img);
  if (png) std::fprintf(stderr, "classify: built without libpng (make HAVE_PNG=1)\n");
#endif
  if (!read) {
    std::fprintf(stderr, "classify: cannot read %s (PPM P3/P6%s)\n", image, png ? " or PNG" : "");
    return 1;
  }
  std::vector<float> input = preprocess(img, size, nchw), output(net_OUTPUT_SIZE), again(net_OUTPUT_SIZE);
  if (save_in && !save_npy(save_in, input.data(), in_shape, net_INPUT_NDIM)) return 1;

  net_ctx *ctx = weights ? net_create_from(weights) : net_create();
  if (!ctx) {
    std::fprintf(stderr, "classify: %s\n", net_last_error());
    return 1;
  }
  std::vector<double> ms;
  for (int r = 0; r <= runs; r++) { // the first run warms up
    auto t0 = std::chrono::steady_clock::now();
    if (net_run(ctx, input.data(), output.data())) {
      std::fprintf(stderr, "classify: %s\n", net_last_error());
      return 1;
    }
    auto t1 = std::chrono::steady_clock::now();
    if (r) ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  net_destroy(ctx);
  // The one-shot entry point gives the same result (embedded weights only).
  if (!weights && (net(input.data(), again.data()) || std::memcmp(again.data(), output.data(), sizeof(float) * output.size()))) {
    std::fprintf(stderr, "classify: the one-shot call differs from create/run: %s\n", net_last_error());
    return 1;
  }
  if (!weights) std::printf("one-shot net() and net_create/net_run/net_destroy agree\n");
  if (save_out && !save_npy(save_out, output.data(), out_shape, net_OUTPUT_NDIM)) return 1;

  std::vector<std::string> names = labels ? read_labels(labels) : std::vector<std::string>();
  std::vector<int> order(output.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = (int)i;
  int k = std::min<int>(5, (int)order.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int a, int b) { return output[a] > output[b]; });
  std::printf("%s: %dx%d -> %s [%d, %d], top-%d:\n", image, img.w, img.h, nchw ? "NCHW" : "NHWC", size, size, k);
  for (int i = 0; i < k; i++) {
    int c = order[i];
    std::printf("  %4d  %.5f  %s\n", c, output[c], c < (int)names.size() ? names[c].c_str() : "");
  }
  std::sort(ms.begin(), ms.end());
  std::printf("latency: %.3f ms (median of %d runs, best %.3f)\n", ms[ms.size() / 2], runs, ms[0]);
  return 0;
}
