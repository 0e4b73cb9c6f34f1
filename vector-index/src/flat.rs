//! Vectors in memory, normalised, row after row: the segments that
//! [`super::segments`] holds, and the scoring both exact scans and a
//! graph's reordering use.
//!
//! A scan of every vector is cheap while there are few (about 0.1 ms for
//! 4,096 vectors of 384 dimensions on one core) and its answer is exact, so
//! small indexes are searched this way; larger ones through a graph
//! ([`super::ann`]), whose candidates are put in order with a copy of the
//! vectors kept in rows too, at half precision.

/// A number a vector is stored as.
pub(super) trait Element: Copy {
    fn from_f32(x: f32) -> Self;
    /// Writes `src` into `dst` (of the same length) as `f32`s.
    fn to_f32s(src: &[Self], dst: &mut [f32]);
    /// Its bit pattern: rows are the same when their bits are.
    fn bits(self) -> u32;
}

impl Element for f32 {
    fn from_f32(x: f32) -> Self {
        x
    }
    fn to_f32s(src: &[Self], dst: &mut [f32]) {
        dst.copy_from_slice(src);
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

#[cfg(feature = "ann")]
impl Element for half::f16 {
    fn from_f32(x: f32) -> Self {
        half::f16::from_f32(x)
    }
    fn bits(self) -> u32 {
        u32::from(self.to_bits())
    }
    fn to_f32s(src: &[Self], dst: &mut [f32]) {
        // F16C instructions where the processor has them.
        half::slice::HalfFloatSliceExt::convert_to_f32_slice(src, dst);
    }
}

/// Vectors, each scaled to length 1 (so a dot product is the cosine
/// similarity), row after row in key order, with the key of each row (a
/// message's seq, a document's row id).
#[derive(Debug, Default, Clone)]
pub(super) struct Rows<T> {
    dims: usize,
    seqs: Vec<i64>,
    data: Vec<T>,
}

impl<T: Element> Rows<T> {
    pub(super) fn new(dims: usize) -> Rows<T> {
        Rows {
            dims,
            seqs: Vec::new(),
            data: Vec::new(),
        }
    }

    pub(super) fn dims(&self) -> usize {
        self.dims
    }

    pub(super) fn len(&self) -> usize {
        self.seqs.len()
    }

    /// The lowest key held.
    pub(super) fn first_key(&self) -> Option<i64> {
        self.seqs.first().copied()
    }

    /// The highest key held.
    pub(super) fn last_key(&self) -> Option<i64> {
        self.seqs.last().copied()
    }

    /// Splits it in two: the rows from `at` on go to the one returned.
    pub(super) fn split_off(&mut self, at: usize) -> Rows<T> {
        Rows {
            dims: self.dims,
            seqs: self.seqs.split_off(at),
            data: self.data.split_off(at * self.dims),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.seqs.is_empty()
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.data.capacity() * std::mem::size_of::<T>() + self.seqs.capacity() * 8
    }

    pub(super) fn contains(&self, seq: i64) -> bool {
        self.seqs.binary_search(&seq).is_ok()
    }

    /// Adds `(seq, vector)` rows, normalised; vectors of another length
    /// and seqs already held are skipped.
    pub(super) fn extend<'a>(&mut self, rows: impl IntoIterator<Item = (i64, &'a [f32])>) {
        for (seq, v) in rows {
            if v.len() != self.dims {
                continue;
            }
            let row = stored(v);
            // Rows come in message id order, which is seq order but for
            // hand-edited imports: those take the slow path.
            match self.seqs.last() {
                Some(&last) if seq <= last => {
                    let Err(at) = self.seqs.binary_search(&seq) else {
                        continue;
                    };
                    self.seqs.insert(at, seq);
                    let at = at * self.dims;
                    self.data.splice(at..at, row);
                }
                _ => {
                    self.seqs.push(seq);
                    self.data.extend(row);
                }
            }
        }
    }

    /// The rows, as `(seq, vector)`.
    pub(super) fn iter(&self) -> impl Iterator<Item = (i64, &[T])> {
        self.seqs
            .iter()
            .copied()
            .zip(self.data.chunks_exact(self.dims.max(1)))
    }

    pub(super) fn row(&self, seq: i64) -> Option<&[T]> {
        let i = self.seqs.binary_search(&seq).ok()?;
        self.data.get(i * self.dims..(i + 1) * self.dims)
    }

    /// Removes the rows of `keys` (keys not held are ignored).
    pub(super) fn remove(&mut self, keys: &[i64]) {
        let mut keys = keys.to_vec();
        keys.sort_unstable();
        let dims = self.dims;
        let mut kept = 0;
        for row in 0..self.seqs.len() {
            if keys.binary_search(&self.seqs[row]).is_ok() {
                continue;
            }
            if kept != row {
                self.seqs[kept] = self.seqs[row];
                self.data
                    .copy_within(row * dims..(row + 1) * dims, kept * dims);
            }
            kept += 1;
        }
        self.seqs.truncate(kept);
        self.data.truncate(kept * dims);
    }
}

/// `v` as a row holds it: scaled to length 1 (a zero vector stays zero),
/// as `T`s.
pub(super) fn stored<T: Element>(v: &[f32]) -> impl Iterator<Item = T> + '_ {
    let norm = dot(v, v).sqrt();
    let scale = if norm > 0.0 { 1.0 / norm } else { 0.0 };
    v.iter().map(move |x| T::from_f32(x * scale))
}

/// The `k` highest scores, highest first (ties: lower key first). Holds
/// at most `k` of them at a time: a search of a large block allocates for
/// its answer, not for every row it scores.
pub(super) fn best(scored: impl IntoIterator<Item = (f32, i64)>, k: usize) -> Vec<(f32, i64)> {
    /// A score ordered so that the worst kept is the heap's top.
    struct Kept((f32, i64));
    impl PartialEq for Kept {
        fn eq(&self, other: &Self) -> bool {
            self.cmp(other).is_eq()
        }
    }
    impl Eq for Kept {}
    impl PartialOrd for Kept {
        fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Kept {
        /// Greater is worse: a lower score, or the same score and a higher key.
        fn cmp(&self, other: &Self) -> std::cmp::Ordering {
            let ((a, ka), (b, kb)) = (self.0, other.0);
            b.total_cmp(&a).then(ka.cmp(&kb))
        }
    }
    if k == 0 {
        return Vec::new();
    }
    let mut kept = std::collections::BinaryHeap::with_capacity(k.min(1_024) + 1);
    for s in scored {
        if kept.len() == k {
            let mut worst = kept.peek_mut().expect("k > 0 are kept");
            if Kept(s) < *worst {
                *worst = Kept(s);
            }
        } else {
            kept.push(Kept(s));
        }
    }
    kept.into_sorted_vec()
        .into_iter()
        .map(|Kept(s)| s)
        .collect()
}

/// `v` scaled to length 1 (a zero vector stays zero).
pub fn normalised(v: &[f32]) -> Vec<f32> {
    let mut v = v.to_vec();
    normalise(&mut v);
    v
}

/// Scales `v` to length 1 in place (a zero vector stays zero).
pub fn normalise(v: &mut [f32]) {
    let norm = dot(v, v).sqrt();
    let scale = if norm > 0.0 { 1.0 / norm } else { 0.0 };
    for x in v {
        *x *= scale;
    }
}

/// The dot product, in 16 independent sums so the compiler vectorises it.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 16;
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let split = n - n % LANES;
    let mut acc = [0f32; LANES];
    for (x, y) in a[..split]
        .chunks_exact(LANES)
        .zip(b[..split].chunks_exact(LANES))
    {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let rest: f32 = a[split..].iter().zip(&b[split..]).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_keeps_what_a_full_sort_would() {
        // Scores with many ties, in a scrambled order.
        let scored: Vec<(f32, i64)> = (0..500i64)
            .map(|i| (((i * 7_919) % 23) as f32 / 4.0, (i * 104_729) % 997))
            .collect();
        let mut sorted = scored.clone();
        sorted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for k in [0, 1, 4, 37, 499, 500, 10_000] {
            assert_eq!(best(scored.clone(), k), sorted[..k.min(500)], "k = {k}");
        }
    }

    #[test]
    fn dot_handles_lengths_that_are_not_multiples_of_the_lanes() {
        let a: Vec<f32> = (0..37).map(|i| i as f32).collect();
        let expected: f32 = a.iter().map(|x| x * x).sum();
        assert_eq!(dot(&a, &a), expected);
    }
}
