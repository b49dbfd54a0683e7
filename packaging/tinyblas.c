/* The few BLAS routines numpy calls, for the bundle (packaging/tinyblas.py builds it).

numpy's wheel links its core to OpenBLAS (about 22 MB, with kernels for every CPU family)
for matrix products only: dot, gemv, gemm, syrk and axpy in four number types. Margin's
search multiplies float32 matrices (the MiniLM encoder, vector scores) and never calls
LAPACK, so this library replaces OpenBLAS in the bundle: the same exported names (numpy's
ILP64 "scipy_cblas_*64_" ones), a register-blocked float and double kernel compiled twice
(AVX2 + FMA, and the baseline, chosen at load time), and plain loops for complex numbers.
The LAPACK names numpy.linalg links to are present so that numpy loads; calling one stops
the program with a message (nothing in the app does). */

#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t blasint;
enum { RowMajor = 101, ColMajor = 102 };
enum { NoTrans = 111, Trans = 112, ConjTrans = 113 };
enum { Upper = 121, Lower = 122 };

#if defined(__x86_64__) && defined(__GNUC__)
#define WIDE __attribute__((target("avx2,fma")))
#define HAS_WIDE() (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
#else
#define WIDE
#define HAS_WIDE() 0
#endif

static void *buffer(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fputs("tinyblas: out of memory\n", stderr);
        abort();
    }
    return p;
}

static blasint start(blasint n, blasint inc) { return inc < 0 ? (1 - n) * inc : 0; }

/* Real routines, for float (s) and double (d). The gemm kernel works on row-major
   matrices: op(B) * alpha is packed into a K x N block, op(A) into an M x K one when it is
   transposed, and each 4-row x 2-vector tile of C is summed in registers. */
#define KERNEL(T, P, BYTES, ATTR)                                                              \
    typedef T P##_vec __attribute__((vector_size(BYTES), aligned(sizeof(T))));                 \
    enum { P##_VL = BYTES / sizeof(T) };                                                       \
                                                                                               \
    ATTR static void P##_kernel(blasint M, blasint N, blasint K, const T *A, const T *B,      \
                                 T *C, blasint ldc) {                                          \
        const blasint W = 2 * P##_VL, PANEL = 256;                                              \
        for (blasint jc = 0; jc < N; jc += PANEL) {                                            \
            blasint je = jc + PANEL < N ? jc + PANEL : N;                                      \
            blasint i = 0;                                                                     \
            for (; i + 4 <= M; i += 4) {                                                       \
                blasint j = jc;                                                                \
                for (; j + W <= je; j += W) {                                                  \
                    P##_vec c[4][2] = {{{0}}};                                                  \
                    for (blasint p = 0; p < K; p++) {                                          \
                        P##_vec b0 = *(const P##_vec *)(B + p * N + j);                          \
                        P##_vec b1 = *(const P##_vec *)(B + p * N + j + P##_VL);                  \
                        for (int r = 0; r < 4; r++) {                                          \
                            T a = A[(i + r) * K + p];                                          \
                            c[r][0] += a * b0;                                                 \
                            c[r][1] += a * b1;                                                 \
                        }                                                                      \
                    }                                                                          \
                    for (int r = 0; r < 4; r++) {                                              \
                        T *row = C + (i + r) * ldc + j;                                        \
                        for (blasint v = 0; v < P##_VL; v++) {                                  \
                            row[v] += c[r][0][v];                                              \
                            row[v + P##_VL] += c[r][1][v];                                      \
                        }                                                                      \
                    }                                                                          \
                }                                                                              \
                for (int r = 0; r < 4; r++)                                                    \
                    for (blasint jj = j; jj < je; jj++) {                                      \
                        T s = 0;                                                               \
                        for (blasint p = 0; p < K; p++) s += A[(i + r) * K + p] * B[p * N + jj]; \
                        C[(i + r) * ldc + jj] += s;                                            \
                    }                                                                          \
            }                                                                                  \
            for (; i < M; i++)                                                                 \
                for (blasint p = 0; p < K; p++) {                                              \
                    T a = A[i * K + p];                                                        \
                    const T *b = B + p * N;                                                    \
                    T *row = C + i * ldc;                                                      \
                    for (blasint jj = jc; jj < je; jj++) row[jj] += a * b[jj];                 \
                }                                                                              \
        }                                                                                      \
    }                                                                                          \
                                                                                               \
    /* C += alpha * A * B^T row by row, when A has few rows (a question): B is read once, in \
       place, and each row of A stays in the first-level cache. */                           \
    ATTR static void P##_dots(blasint M, blasint N, blasint K, T alpha, const T *A,           \
                              blasint lda, const T *B, blasint ldb, T *C, blasint ldc) {     \
        for (blasint j = 0; j < N; j++) {                                                      \
            const T *b = B + j * ldb;                                                          \
            for (blasint i = 0; i < M; i++) {                                                  \
                const T *a = A + i * lda;                                                      \
                P##_vec acc[4] = {{0}};                                                        \
                blasint p = 0;                                                                 \
                for (; p + 4 * P##_VL <= K; p += 4 * P##_VL)                                   \
                    for (int u = 0; u < 4; u++)                                                \
                        acc[u] += *(const P##_vec *)(a + p + u * P##_VL) *                     \
                                  *(const P##_vec *)(b + p + u * P##_VL);                      \
                P##_vec all = acc[0] + acc[1] + acc[2] + acc[3];                               \
                T sum = 0;                                                                     \
                for (int v = 0; v < P##_VL; v++) sum += all[v];                                \
                for (; p < K; p++) sum += a[p] * b[p];                                         \
                C[i * ldc + j] += alpha * sum;                                                 \
            }                                                                                  \
        }                                                                                      \
    }
                                                                                          \

#define REAL(T, P)                                                                         \
    typedef T P##vec __attribute__((vector_size(16), aligned(sizeof(T))));                     \
    enum { P##VL = 16 / sizeof(T) };                                                           \
                                                                                               \
    KERNEL(T, P##wide, 32, WIDE)                                                               \
    KERNEL(T, P##narrow, 16, )                                                                 \
                                                                                               \
    static void P##dots(blasint M, blasint N, blasint K, T alpha, const T *A, blasint lda,     \
                        const T *B, blasint ldb, T *C, blasint ldc) {                          \
        if (HAS_WIDE())                                                                        \
            P##wide##_dots(M, N, K, alpha, A, lda, B, ldb, C, ldc);                            \
        else                                                                                   \
            P##narrow##_dots(M, N, K, alpha, A, lda, B, ldb, C, ldc);                          \
    }                                                                                          \
                                                                                               \
    static void P##kernel(blasint M, blasint N, blasint K, const T *A, const T *B, T *C,       \
                          blasint ldc) {                                                       \
        if (HAS_WIDE())                                                                        \
            P##wide##_kernel(M, N, K, A, B, C, ldc);                                           \
        else                                                                                   \
            P##narrow##_kernel(M, N, K, A, B, C, ldc);                                         \
    }                                                                                          \
                                                                                               \
    static void P##gemm_rows(int ta, int tb, blasint M, blasint N, blasint K, T alpha,         \
                             const T *A, blasint lda, const T *B, blasint ldb, T beta, T *C,   \
                             blasint ldc) {                                                    \
        for (blasint i = 0; i < M; i++)                                                        \
            for (blasint j = 0; j < N; j++)                                                    \
                C[i * ldc + j] = beta == 0 ? 0 : beta * C[i * ldc + j];                        \
        if (alpha == 0 || K == 0 || M == 0 || N == 0) return;                                  \
        if (ta == NoTrans && tb != NoTrans && M < 32) {                                        \
            P##dots(M, N, K, alpha, A, lda, B, ldb, C, ldc);                                   \
            return;                                                                            \
        }                                                                                      \
        T *b = buffer(sizeof(T) * K * N);                                                      \
        for (blasint p = 0; p < K; p++)                                                        \
            for (blasint j = 0; j < N; j++)                                                    \
                b[p * N + j] = alpha * (tb == NoTrans ? B[p * ldb + j] : B[j * ldb + p]);      \
        T *a = NULL;                                                                           \
        if (ta != NoTrans || lda != K) {                                                       \
            a = buffer(sizeof(T) * M * K);                                                     \
            for (blasint i = 0; i < M; i++)                                                    \
                for (blasint p = 0; p < K; p++)                                                \
                    a[i * K + p] = ta == NoTrans ? A[i * lda + p] : A[p * lda + i];            \
        }                                                                                      \
        P##kernel(M, N, K, a ? a : A, b, C, ldc);                                              \
        free(a);                                                                               \
        free(b);                                                                               \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##gemm64_(int order, int ta, int tb, blasint M, blasint N, blasint K,  \
                                  T alpha, const T *A, blasint lda, const T *B, blasint ldb,   \
                                  T beta, T *C, blasint ldc) {                                 \
        if (order == ColMajor)                                                                 \
            P##gemm_rows(tb, ta, N, M, K, alpha, B, ldb, A, lda, beta, C, ldc);                \
        else                                                                                   \
            P##gemm_rows(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);                \
    }                                                                                          \
                                                                                               \
    static T P##dot_plain(blasint n, const T *x, const T *y) {                          \
        P##vec acc[4] = {{0}};                                                                 \
        blasint i = 0;                                                                         \
        for (; i + 4 * P##VL <= n; i += 4 * P##VL)                                             \
            for (int u = 0; u < 4; u++)                                                        \
                acc[u] += *(const P##vec *)(x + i + u * P##VL) *                               \
                          *(const P##vec *)(y + i + u * P##VL);                                \
        P##vec all = acc[0] + acc[1] + acc[2] + acc[3];                                        \
        T s = 0;                                                                               \
        for (int v = 0; v < P##VL; v++) s += all[v];                                           \
        for (; i < n; i++) s += x[i] * y[i];                                                   \
        return s;                                                                              \
    }                                                                                          \
                                                                                               \
    T scipy_cblas_##P##dot64_(blasint n, const T *x, blasint incx, const T *y, blasint incy) { \
        if (n <= 0) return 0;                                                                  \
        if (incx == 1 && incy == 1) return P##dot_plain(n, x, y);                              \
        T s = 0;                                                                               \
        blasint ix = start(n, incx), iy = start(n, incy);                                      \
        for (blasint i = 0; i < n; i++, ix += incx, iy += incy) s += x[ix] * y[iy];            \
        return s;                                                                              \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##axpy64_(blasint n, T alpha, const T *x, blasint incx, T *y,          \
                                  blasint incy) {                                              \
        blasint ix = start(n, incx), iy = start(n, incy);                                      \
        for (blasint i = 0; i < n; i++, ix += incx, iy += incy) y[iy] += alpha * x[ix];        \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##gemv64_(int order, int trans, blasint M, blasint N, T alpha,         \
                                  const T *A, blasint lda, const T *x, blasint incx, T beta,   \
                                  T *y, blasint incy) {                                        \
        /* row-major with no transposition: each y is a row of A times x */                    \
        int rows = (order == RowMajor) == (trans == NoTrans);                                  \
        blasint ny = trans == NoTrans ? M : N, nx = trans == NoTrans ? N : M;                  \
        blasint iy = start(ny, incy);                                                          \
        for (blasint i = 0, k = iy; i < ny; i++, k += incy) y[k] = beta == 0 ? 0 : beta * y[k]; \
        if (alpha == 0) return;                                                                \
        blasint ix0 = start(nx, incx);                                                         \
        if (rows) {                                                                            \
            for (blasint i = 0, k = iy; i < ny; i++, k += incy)                                \
                y[k] += alpha * scipy_cblas_##P##dot64_(nx, A + i * lda, 1, x, incx);          \
        } else {                                                                               \
            for (blasint p = 0, k = ix0; p < nx; p++, k += incx)                               \
                scipy_cblas_##P##axpy64_(ny, alpha * x[k], A + p * lda, 1, y, incy);           \
        }                                                                                      \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##syrk64_(int order, int uplo, int trans, blasint N, blasint K,        \
                                  T alpha, const T *A, blasint lda, T beta, T *C,              \
                                  blasint ldc) {                                               \
        if (order == ColMajor) {                                                               \
            uplo = uplo == Upper ? Lower : Upper;                                              \
            trans = trans == NoTrans ? Trans : NoTrans;                                        \
        }                                                                                      \
        for (blasint i = 0; i < N; i++)                                                        \
            for (blasint j = (uplo == Upper ? i : 0); j < (uplo == Upper ? N : i + 1); j++) {  \
                T s = 0;                                                                       \
                if (trans == NoTrans)                                                          \
                    s = P##dot_plain(K, A + i * lda, A + j * lda);                             \
                else                                                                           \
                    for (blasint p = 0; p < K; p++) s += A[p * lda + i] * A[p * lda + j];      \
                C[i * ldc + j] = alpha * s + (beta == 0 ? 0 : beta * C[i * ldc + j]);          \
            }                                                                                  \
    }

REAL(float, s)
REAL(double, d)

/* Complex routines (numpy's complex64 and complex128 products): plain loops. */
#define COMPLEX(T, P)                                                                          \
    static T P##at(const T *M, blasint ld, int rowmajor, blasint r, blasint c) {               \
        return rowmajor ? M[r * ld + c] : M[c * ld + r];                                       \
    }                                                                                          \
                                                                                               \
    static T P##op(const T *M, blasint ld, int rowmajor, int t, blasint r, blasint c) {        \
        T v = t == NoTrans ? P##at(M, ld, rowmajor, r, c) : P##at(M, ld, rowmajor, c, r);      \
        return t == ConjTrans ? conj(v) : v;                                                   \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##gemm64_(int order, int ta, int tb, blasint M, blasint N, blasint K,  \
                                  const void *alpha, const T *A, blasint lda, const T *B,      \
                                  blasint ldb, const void *beta, T *C, blasint ldc) {          \
        int rm = order == RowMajor;                                                            \
        T al = *(const T *)alpha, be = *(const T *)beta;                                       \
        for (blasint i = 0; i < M; i++)                                                        \
            for (blasint j = 0; j < N; j++) {                                                  \
                T s = 0;                                                                       \
                for (blasint p = 0; p < K; p++)                                                \
                    s += P##op(A, lda, rm, ta, i, p) * P##op(B, ldb, rm, tb, p, j);            \
                T *c = rm ? &C[i * ldc + j] : &C[j * ldc + i];                                 \
                *c = al * s + (be == 0 ? 0 : be * *c);                                         \
            }                                                                                  \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##gemv64_(int order, int trans, blasint M, blasint N,                  \
                                  const void *alpha, const T *A, blasint lda, const T *x,      \
                                  blasint incx, const void *beta, T *y, blasint incy) {        \
        int rm = order == RowMajor;                                                            \
        T al = *(const T *)alpha, be = *(const T *)beta;                                       \
        blasint ny = trans == NoTrans ? M : N, nx = trans == NoTrans ? N : M;                  \
        blasint iy = start(ny, incy), ix0 = start(nx, incx);                                   \
        for (blasint i = 0; i < ny; i++, iy += incy) {                                         \
            T s = 0;                                                                           \
            blasint ix = ix0;                                                                  \
            for (blasint p = 0; p < nx; p++, ix += incx) s += P##op(A, lda, rm, trans, i, p) * x[ix]; \
            y[iy] = al * s + (be == 0 ? 0 : be * y[iy]);                                       \
        }                                                                                      \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##syrk64_(int order, int uplo, int trans, blasint N, blasint K,        \
                                  const void *alpha, const T *A, blasint lda, const void *beta, \
                                  T *C, blasint ldc) {                                         \
        int rm = order == RowMajor;                                                            \
        T al = *(const T *)alpha, be = *(const T *)beta;                                       \
        for (blasint i = 0; i < N; i++)                                                        \
            for (blasint j = 0; j < N; j++) {                                                  \
                if (uplo == Upper ? j < i : j > i) continue;                                   \
                T s = 0;                                                                       \
                for (blasint p = 0; p < K; p++)                                                \
                    s += trans == NoTrans                                                      \
                             ? P##at(A, lda, rm, i, p) * P##at(A, lda, rm, j, p)               \
                             : P##at(A, lda, rm, p, i) * P##at(A, lda, rm, p, j);              \
                T *c = rm ? &C[i * ldc + j] : &C[j * ldc + i];                                 \
                *c = al * s + (be == 0 ? 0 : be * *c);                                         \
            }                                                                                  \
    }                                                                                          \
                                                                                               \
    static T P##dot(blasint n, const T *x, blasint incx, const T *y, blasint incy, int cj) {   \
        T s = 0;                                                                               \
        blasint ix = start(n, incx), iy = start(n, incy);                                      \
        for (blasint i = 0; i < n; i++, ix += incx, iy += incy)                                \
            s += (cj ? conj(x[ix]) : x[ix]) * y[iy];                                           \
        return s;                                                                              \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##dotu_sub64_(blasint n, const T *x, blasint incx, const T *y,         \
                                      blasint incy, void *out) {                               \
        *(T *)out = P##dot(n, x, incx, y, incy, 0);                                            \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##dotc_sub64_(blasint n, const T *x, blasint incx, const T *y,         \
                                      blasint incy, void *out) {                               \
        *(T *)out = P##dot(n, x, incx, y, incy, 1);                                            \
    }                                                                                          \
                                                                                               \
    void scipy_cblas_##P##axpy64_(blasint n, const void *alpha, const T *x, blasint incx,      \
                                  T *y, blasint incy) {                                        \
        T al = *(const T *)alpha;                                                              \
        blasint ix = start(n, incx), iy = start(n, incy);                                      \
        for (blasint i = 0; i < n; i++, ix += incx, iy += incy) y[iy] += al * x[ix];           \
    }

COMPLEX(float complex, c)
COMPLEX(double complex, z)

/* LAPACK, which numpy.linalg links to and the app never calls. */
static void no_lapack(const char *name) {
    fprintf(stderr, "Margin's bundle has no LAPACK (%s was called)\n", name);
    abort();
}
#define NO_LAPACK(name) \
    void scipy_##name##_64_(void) { no_lapack(#name); }
#define FOUR(stem) NO_LAPACK(s##stem) NO_LAPACK(d##stem) NO_LAPACK(c##stem) NO_LAPACK(z##stem)
FOUR(copy)
FOUR(gelsd)
FOUR(gesdd)
FOUR(gesv)
FOUR(getrf)
FOUR(potrf)
FOUR(geev)
NO_LAPACK(cheevd)
NO_LAPACK(zheevd)
NO_LAPACK(ssyevd)
NO_LAPACK(dsyevd)
NO_LAPACK(dgeqrf)
NO_LAPACK(zgeqrf)
NO_LAPACK(dorgqr)
NO_LAPACK(zungqr)

/* core/search/encoder.py asks OpenBLAS for one thread: this library has only one. */
void scipy_openblas_set_num_threads64_(int threads) { (void)threads; }
