//! Rows that searches read without waiting on writers: immutable
//! segments of [`Rows`], each a few hundred rows, replaced whole.
//!
//! A search takes a [`Snapshot`] (a pointer, cloned under a lock held only
//! for that) and reads it with no lock at all. A writer builds the
//! segments it changes beside the current ones (an addition copies at most
//! the last segment, a removal the segments that hold its keys) and then
//! swaps the pointer. Nothing a search reads is ever moved or freed under
//! it: a snapshot keeps its segments alive until the search drops it.

use std::sync::{Arc, Mutex, RwLock};

use super::flat::{Element, Rows, best, dot, normalised};

/// Rows a segment takes before the next one starts: an addition copies at
/// most this many (150 KB of `f32`s at 384 dimensions).
const SEGMENT: usize = 256;

/// Rows under integer keys in segments; see the module docs.
#[derive(Debug)]
pub(super) struct Segments<T> {
    dims: usize,
    /// Held only to clone or replace the pointer.
    current: RwLock<Arc<Vec<Arc<Rows<T>>>>>,
    /// One change at a time.
    writer: Mutex<()>,
}

/// The segments as they were when it was taken, in key order (no two
/// overlap).
#[derive(Debug)]
pub(super) struct Snapshot<T>(Arc<Vec<Arc<Rows<T>>>>);

impl<T: Element> Segments<T> {
    pub(super) fn new(dims: usize) -> Segments<T> {
        Segments {
            dims,
            current: RwLock::new(Arc::new(Vec::new())),
            writer: Mutex::new(()),
        }
    }

    /// The length of its vectors.
    pub(super) fn dims(&self) -> usize {
        self.dims
    }

    /// The rows as they are now.
    pub(super) fn snapshot(&self) -> Snapshot<T> {
        Snapshot(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }

    fn publish(&self, segments: Vec<Arc<Rows<T>>>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(segments);
    }

    /// Adds `(key, vector)` rows, normalised; vectors of another length
    /// and keys held already are skipped.
    pub(super) fn extend(&self, rows: &[(i64, &[f32])]) {
        let mut rows: Vec<(i64, &[f32])> = rows
            .iter()
            .filter(|(_, v)| v.len() == self.dims)
            .copied()
            .collect();
        if rows.is_empty() {
            return;
        }
        rows.sort_by_key(|(key, _)| *key);
        rows.dedup_by_key(|(key, _)| *key);
        let _one = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let mut segments = (*self.snapshot().0).clone();
        // Keys up to the last one held go into the segment whose range
        // takes them (an import out of key order, a row another process
        // committed late); the rest are appended.
        let last = segments.last().and_then(|s| s.last_key());
        let appended = rows.partition_point(|(key, _)| last.is_some_and(|last| *key <= last));
        let (inside, after) = rows.split_at(appended);
        let mut rest = inside;
        while let Some(&(key, _)) = rest.first() {
            let at = segments
                .partition_point(|s| s.last_key().is_some_and(|last| last < key))
                .min(segments.len() - 1);
            let end = segments[at].last_key();
            let take = rest
                .partition_point(|(k, _)| end.is_some_and(|end| *k <= end))
                .max(1);
            let mut changed = (*segments[at]).clone();
            changed.extend(rest[..take].iter().copied());
            rest = &rest[take..];
            // Split into segments of SEGMENT rows, the last up to twice that.
            let mut parts = vec![changed];
            while let Some(last) = parts.last_mut()
                && last.len() > 2 * SEGMENT
            {
                let upper = last.split_off(SEGMENT);
                parts.push(upper);
            }
            segments.splice(at..=at, parts.into_iter().map(Arc::new));
        }
        let mut after = after;
        if let Some(tail) = segments.last_mut()
            && tail.len() < SEGMENT
            && !after.is_empty()
        {
            let take = (SEGMENT - tail.len()).min(after.len());
            let mut filled = (**tail).clone();
            filled.extend(after[..take].iter().copied());
            *tail = Arc::new(filled);
            after = &after[take..];
        }
        for part in after.chunks(SEGMENT) {
            let mut segment = Rows::new(self.dims);
            segment.extend(part.iter().copied());
            segments.push(Arc::new(segment));
        }
        self.publish(segments);
    }

    /// Removes the rows of `keys` (keys not held are ignored).
    pub(super) fn remove(&self, keys: &[i64]) {
        if keys.is_empty() {
            return;
        }
        let mut keys = keys.to_vec();
        keys.sort_unstable();
        let _one = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let before = self.snapshot();
        let mut changed = false;
        let mut segments = Vec::with_capacity(before.0.len());
        for segment in before.0.iter() {
            let (Some(first), Some(last)) = (segment.first_key(), segment.last_key()) else {
                continue;
            };
            let lo = keys.partition_point(|k| *k < first);
            let hi = keys.partition_point(|k| *k <= last);
            let mine = &keys[lo..hi];
            if !mine.iter().any(|k| segment.contains(*k)) {
                segments.push(segment.clone());
                continue;
            }
            changed = true;
            let mut kept = (**segment).clone();
            kept.remove(mine);
            if !kept.is_empty() {
                segments.push(Arc::new(kept));
            }
        }
        if changed {
            self.publish(segments);
        }
    }

    /// How many rows it holds.
    pub(super) fn len(&self) -> usize {
        self.snapshot().len()
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.snapshot().0.iter().map(|s| s.bytes()).sum()
    }
}

impl<T: Element> Snapshot<T> {
    pub(super) fn len(&self) -> usize {
        self.0.iter().map(|s| s.len()).sum()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn segment(&self, key: i64) -> Option<&Rows<T>> {
        let at = self
            .0
            .partition_point(|s| s.last_key().is_some_and(|last| last < key));
        self.0.get(at).map(|s| &**s)
    }

    pub(super) fn contains(&self, key: i64) -> bool {
        self.segment(key).is_some_and(|s| s.contains(key))
    }

    /// The row of `key`, if held.
    pub(super) fn row(&self, key: i64) -> Option<&[T]> {
        self.segment(key)?.row(key)
    }

    /// The rows, as `(key, vector)`, in key order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (i64, &[T])> {
        self.0.iter().flat_map(|s| s.iter())
    }

    /// The `k` of `keys` most similar to `query`, with their
    /// similarities, most similar first (keys not held are dropped).
    pub(super) fn order(&self, query: &[f32], keys: &[i64], k: usize) -> Vec<(f32, i64)> {
        let q = normalised(query);
        let mut row = vec![0f32; q.len()];
        let scored = keys.iter().filter_map(|&key| {
            let r = self.segment(key)?.row(key)?;
            T::to_f32s(r, &mut row);
            Some((dot(&q, &row), key))
        });
        best(scored, k)
    }
}

impl Snapshot<f32> {
    /// The `k` rows most similar to `query` (similarity, key), most
    /// similar first (ties: the lower key first); with `keep`, only the
    /// keys it accepts.
    pub(super) fn search(
        &self,
        query: &[f32],
        k: usize,
        keep: Option<&dyn Fn(i64) -> bool>,
    ) -> Vec<(f32, i64)> {
        let Some(dims) = self.0.first().map(|s| s.dims()) else {
            return Vec::new();
        };
        if k == 0 || query.len() != dims {
            return Vec::new();
        }
        let q = normalised(query);
        let scored = self
            .iter()
            .filter(|(key, _)| keep.is_none_or(|keep| keep(*key)));
        best(scored.map(|(key, r)| (dot(&q, r), key)), k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(found: Vec<(f32, i64)>) -> Vec<i64> {
        found.into_iter().map(|(_, k)| k).collect()
    }

    #[test]
    fn finds_the_most_similar_rows_first() {
        let rows = Segments::<f32>::new(3);
        let list: [(i64, &[f32]); 6] = [
            (1, &[1.0, 0.0, 0.0]),
            (2, &[0.0, 2.0, 0.0]),
            (4, &[0.0, 0.0, 5.0]),
            (3, &[1.0, 1.0, 0.0]), // out of order: put in place
            (5, &[1.0]),           // wrong length: skipped
            (2, &[9.0, 9.0, 9.0]), // held already: skipped
        ];
        rows.extend(&list[..3]);
        rows.extend(&list[3..]);
        let all = rows.snapshot();
        assert_eq!(all.len(), 4);
        assert!(all.contains(3) && !all.contains(5));
        assert_eq!(keys(all.search(&[0.0, 3.0, 0.1], 2, None)), vec![2, 3]);
        assert_eq!(
            keys(all.search(&[1.0, 0.0, 0.0], 10, None)),
            vec![1, 3, 2, 4]
        );
        assert!(all.search(&[1.0, 0.0], 1, None).is_empty());
        assert_eq!(keys(all.order(&[0.0, 0.0, 1.0], &[1, 4, 7], 5)), vec![4, 1]);
        assert_eq!(all.search(&[1.0, 0.0, 0.0], 1, None), vec![(1.0, 1)]);
        let odd = |k: i64| k % 2 == 1;
        assert_eq!(
            keys(all.search(&[1.0, 0.0, 0.0], 10, Some(&odd))),
            vec![1, 3]
        );
        rows.remove(&[2, 9]);
        assert_eq!(rows.len(), 3);
        assert_eq!(
            keys(rows.snapshot().search(&[0.0, 3.0, 0.1], 1, None)),
            vec![3]
        );
        // The snapshot taken before the removal still reads the row.
        assert!(all.contains(2));
    }

    #[test]
    fn segments_stay_in_key_order_whatever_order_rows_come_in() {
        let rows = Segments::<f32>::new(2);
        let vector = |k: i64| [1.0, k as f32];
        // Appended in order, then keys inside held ranges, one by one and
        // in a batch, until segments split.
        let mut expected = Vec::new();
        for k in (0..3_000).step_by(3) {
            rows.extend(&[(k, &vector(k)[..])]);
            expected.push(k);
        }
        let late: Vec<i64> = (1..3_000).step_by(3).collect();
        let late_vectors: Vec<[f32; 2]> = late.iter().map(|k| vector(*k)).collect();
        let batch: Vec<(i64, &[f32])> = late
            .iter()
            .zip(&late_vectors)
            .map(|(k, v)| (*k, &v[..]))
            .rev()
            .collect();
        rows.extend(&batch);
        expected.extend(&late);
        expected.sort_unstable();
        let all = rows.snapshot();
        assert_eq!(all.iter().map(|(k, _)| k).collect::<Vec<_>>(), expected);
        assert!(all.0.iter().all(|s| s.len() <= 2 * SEGMENT));
        assert!(expected.iter().all(|k| all.contains(*k)));
        assert!(!all.contains(2) && !all.contains(5_000));
        // Removing every key of the first segments drops them.
        rows.remove(&expected[..600]);
        let left = rows.snapshot();
        assert_eq!(left.len(), expected.len() - 600);
        assert!(left.iter().all(|(k, _)| k >= expected[600]));
    }

    #[test]
    fn a_large_import_into_one_range_is_split_into_segments() {
        let rows = Segments::<f32>::new(1);
        rows.extend(&[(0, &[1.0][..]), (100_000, &[1.0][..])]);
        let late: Vec<(i64, &[f32])> = (1..3_000).map(|k| (k, &[1.0][..])).collect();
        rows.extend(&late);
        let all = rows.snapshot();
        assert_eq!(all.len(), 3_001);
        assert!(
            all.0.iter().all(|s| s.len() <= 2 * SEGMENT),
            "{:?}",
            all.0.iter().map(|s| s.len()).collect::<Vec<_>>()
        );
        let keys: Vec<i64> = all.iter().map(|(k, _)| k).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }
}
