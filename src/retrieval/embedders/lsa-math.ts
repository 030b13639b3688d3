/**
 * The numerics of the corpus-fit LSA embedder (docs/fusion-and-tuning.md,
 * "The LSA embedder"): a sparse matrix in CSR form, a seeded Gaussian test
 * matrix, Gram–Schmidt orthonormalisation, the cyclic Jacobi eigensolver for
 * a small symmetric matrix, and the randomized truncated SVD of
 * Halko, Martinsson & Tropp (SIAM Review 2011, algorithms 4.4 + 5.1).
 *
 * Determinism: every loop runs in a fixed order (rows, then stored entries
 * in column order; columns 0..l-1), all arithmetic is IEEE float64, and the
 * only transcendental functions are `Math.log`, `Math.cos` and `Math.sqrt`
 * (the Box–Muller draw; sqrt is correctly rounded, V8's log/cos are its
 * fdlibm ports, the same on every platform). The same input and seed give
 * the same bits on every run, at any concurrency (nothing is parallel).
 * Dense matrices are stored as arrays of columns (`Float64Array` each).
 */
import { mulberry32 } from "../../random.js";

/** Compressed sparse rows: row i's entries are `indices/values[indptr[i] .. indptr[i+1])`, column indices ascending. */
export interface CsrMatrix {
  rows: number;
  cols: number;
  indptr: Int32Array;
  indices: Int32Array;
  values: Float64Array;
}

/** A dense matrix as its columns; every column has the same length (the row count). */
export type Columns = Float64Array[];

/**
 * A rows × cols matrix of independent standard normal draws, filled column
 * by column, each draw `sqrt(−2 ln u1) · cos(2π u2)` (Box–Muller, one value a
 * pair; u1 = 1 − uniform so it is never 0) from `mulberry32(seed)`.
 */
export function gaussianColumns(rows: number, cols: number, seed: number): Columns {
  const rand = mulberry32(seed);
  const out: Columns = [];
  for (let j = 0; j < cols; j++) {
    const c = new Float64Array(rows);
    for (let i = 0; i < rows; i++) {
      const u1 = 1 - rand();
      const u2 = rand();
      c[i] = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    }
    out.push(c);
  }
  return out;
}

/** A · x for each column x of X (X has A.cols rows); result has A.rows rows. */
export function multiply(a: CsrMatrix, x: Columns): Columns {
  return x.map((col) => {
    const y = new Float64Array(a.rows);
    for (let i = 0; i < a.rows; i++) {
      let s = 0;
      for (let p = a.indptr[i] as number; p < (a.indptr[i + 1] as number); p++)
        s += (a.values[p] as number) * (col[a.indices[p] as number] as number);
      y[i] = s;
    }
    return y;
  });
}

/** Aᵀ · y for each column y of Y (Y has A.rows rows); result has A.cols rows. Accumulates row by row of A. */
export function multiplyTransposed(a: CsrMatrix, y: Columns): Columns {
  return y.map((col) => {
    const z = new Float64Array(a.cols);
    for (let i = 0; i < a.rows; i++) {
      const yi = col[i] as number;
      if (yi === 0) continue;
      for (let p = a.indptr[i] as number; p < (a.indptr[i + 1] as number); p++) {
        const t = a.indices[p] as number;
        z[t] = (z[t] as number) + (a.values[p] as number) * yi;
      }
    }
    return z;
  });
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/**
 * Orthonormalises the columns in place, left to right, by modified
 * Gram–Schmidt applied twice ("twice is enough", Giraud et al. 2005). A
 * column whose norm falls below `1e-10 ×` its norm before projection (it
 * lies in the span of the previous ones) becomes the zero column, so the
 * result spans the same space and the nonzero columns are orthonormal.
 */
export function orthonormalize(cols: Columns): Columns {
  for (let j = 0; j < cols.length; j++) {
    const v = cols[j] as Float64Array;
    const before = Math.sqrt(dot(v, v));
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < j; i++) {
        const u = cols[i] as Float64Array;
        const r = dot(u, v);
        if (r !== 0) for (let t = 0; t < v.length; t++) v[t] = (v[t] as number) - r * (u[t] as number);
      }
    }
    const norm = Math.sqrt(dot(v, v));
    if (before === 0 || norm <= 1e-10 * before) v.fill(0);
    else for (let t = 0; t < v.length; t++) v[t] = (v[t] as number) / norm;
  }
  return cols;
}

/**
 * Eigen-decomposition of a symmetric n × n matrix `s` (row-major, read only)
 * by the cyclic Jacobi method: sweeps over the pairs (p, q), p < q, in row
 * order, each rotation zeroing s[p][q] (Golub & Van Loan §8.5), until the
 * off-diagonal Frobenius norm is below 1e-15 × the matrix's norm or 100 sweeps.
 * Returns eigenvalues in descending order (ties: lower original index first)
 * and the matching unit eigenvectors as columns.
 */
export function symmetricEigen(s: Float64Array, n: number): { values: Float64Array; vectors: Columns } {
  const a = Float64Array.from(s);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  let total = 0;
  for (let i = 0; i < n * n; i++) total += (a[i] as number) * (a[i] as number);
  const tol = 1e-30 * total;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += 2 * (a[p * n + q] as number) ** 2;
    if (off <= tol) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q] as number;
        if (apq === 0) continue;
        const app = a[p * n + p] as number;
        const aqq = a[q * n + q] as number;
        const theta = (aqq - app) / (2 * apq);
        const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const sn = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p] as number;
          const akq = a[k * n + q] as number;
          a[k * n + p] = c * akp - sn * akq;
          a[k * n + q] = sn * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k] as number;
          const aqk = a[q * n + k] as number;
          a[p * n + k] = c * apk - sn * aqk;
          a[q * n + k] = sn * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p] as number;
          const vkq = v[k * n + q] as number;
          v[k * n + p] = c * vkp - sn * vkq;
          v[k * n + q] = sn * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (i, j) => (a[j * n + j] as number) - (a[i * n + i] as number) || i - j,
  );
  const values = Float64Array.from(order, (i) => a[i * n + i] as number);
  const vectors = order.map((j) => Float64Array.from({ length: n }, (_, k) => v[k * n + j] as number));
  return { values, vectors };
}

export interface RandomizedSvdOptions {
  /** Singular triplets wanted. */
  k: number;
  /** Extra test columns beyond k (Halko et al.'s p); default 10. */
  oversample?: number;
  /** Power (subspace) iterations, each re-orthonormalised; default 2. */
  powerIterations?: number;
  seed: number;
}

export interface TruncatedSvd {
  /** Singular values, descending, length r ≤ k (zero ones dropped). */
  values: Float64Array;
  /** Right singular vectors: r columns of length A.cols, each with its largest-magnitude entry positive. */
  v: Columns;
}

/**
 * The top-k right singular vectors and values of A (n × m, sparse) by the
 * randomized range finder with subspace iteration:
 *   Ω = m × l Gaussian (l = min(k + oversample, n, m), seeded);
 *   Q = orth(A Ω); repeat `powerIterations` times: Q = orth(A orth(Aᵀ Q));
 *   Z = Aᵀ Q (so B = Qᵀ A = Zᵀ); G = Zᵀ Z = B Bᵀ (l × l) = W Λ Wᵀ (Jacobi);
 *   σ_c = √λ_c, v_c = Z w_c / σ_c (c = 1..k, λ descending).
 * Singular values ≤ 1e-12 × σ_1 (rank deficiency) are dropped, so r can be
 * below k. Sign convention: each v_c is flipped so that its entry of largest
 * magnitude (lowest index on a tie) is positive. Exact when l ≥ rank(A).
 */
export function randomizedSvd(a: CsrMatrix, options: RandomizedSvdOptions): TruncatedSvd {
  const k = Math.min(options.k, a.rows, a.cols);
  const l = Math.min(k + (options.oversample ?? 10), a.rows, a.cols);
  let q = orthonormalize(multiply(a, gaussianColumns(a.cols, l, options.seed)));
  for (let it = 0; it < (options.powerIterations ?? 2); it++) {
    q = orthonormalize(multiply(a, orthonormalize(multiplyTransposed(a, q))));
  }
  const z = multiplyTransposed(a, q);
  const g = new Float64Array(l * l);
  for (let i = 0; i < l; i++) {
    for (let j = i; j < l; j++) {
      const d = dot(z[i] as Float64Array, z[j] as Float64Array);
      g[i * l + j] = d;
      g[j * l + i] = d;
    }
  }
  const eig = symmetricEigen(g, l);
  const top = Math.sqrt(Math.max(0, eig.values[0] ?? 0));
  const values: number[] = [];
  const v: Columns = [];
  for (let c = 0; c < k; c++) {
    const sigma = Math.sqrt(Math.max(0, eig.values[c] as number));
    if (!(sigma > 1e-12 * top) || sigma === 0) break;
    const w = eig.vectors[c] as Float64Array;
    const col = new Float64Array(a.cols);
    for (let j = 0; j < l; j++) {
      const wj = w[j] as number;
      if (wj === 0) continue;
      const zj = z[j] as Float64Array;
      for (let t = 0; t < a.cols; t++) col[t] = (col[t] as number) + (zj[t] as number) * wj;
    }
    let big = 0;
    for (let t = 1; t < col.length; t++) if (Math.abs(col[t] as number) > Math.abs(col[big] as number)) big = t;
    const sign = (col[big] as number) < 0 ? -1 : 1;
    for (let t = 0; t < col.length; t++) col[t] = (sign * (col[t] as number)) / sigma;
    values.push(sigma);
    v.push(col);
  }
  return { values: Float64Array.from(values), v };
}
