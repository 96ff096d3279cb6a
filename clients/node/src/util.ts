/**
 * State k of a flat row-major batch: the `width` values from k * width (a view, no copy). For a batch of
 * vectors width is dof; for a batch of matrices width is dof * dof (the matrix row-major).
 */
export function stateOf(batch: Float64Array, k: number, width: number): Float64Array {
  if (!Number.isInteger(k) || k < 0 || (k + 1) * width > batch.length) {
    throw new RangeError(`state ${k} of width ${width} is outside a batch of ${batch.length} values`);
  }
  return batch.subarray(k * width, (k + 1) * width);
}
