//! The synthetic model of the benchmarks (eventId, particles) and the deterministic generator of
//! its data.

/// Deterministic generator (SplitMix64) for the synthetic data pools.
struct SplitMix(u64);
impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Poisson by Knuth's multiplication method (fine for a small mean).
    fn poisson(&mut self, mean: f64) -> usize {
        let l = (-mean).exp();
        let (mut k, mut p) = (0, 1.0);
        loop {
            p *= self.uniform();
            if p <= l {
                return k;
            }
            k += 1;
        }
    }
}

/// The synthetic data, made before the timed region: 16 chunks of `particles` (Poisson(5)
/// sizes, values uniform in [0,100)), each cut from a different place of a value pool. eventId
/// is made per chunk while writing (it is the entry's global number).
pub(crate) struct SyntheticData {
    chunks: Vec<rntuple::arrow::array::ArrayRef>,
    items_per_chunk: Vec<u64>,
    schema: std::sync::Arc<rntuple::arrow::datatypes::Schema>,
}

const SYNTH_CHUNK: usize = 1 << 16;

impl SyntheticData {
    pub(crate) fn new() -> Result<Self, Box<dyn std::error::Error>> {
        use rntuple::arrow::array::{Float32Array, LargeListArray};
        use rntuple::arrow::datatypes::{DataType, Field, Schema};
        use std::sync::Arc;
        let mut rng = SplitMix(20251122);
        let pool: Vec<f32> = (0..(1 << 22)).map(|_| (rng.uniform() * 100.0) as f32).collect();
        let item = Arc::new(Field::new("_0", DataType::Float32, false));
        let mut chunks: Vec<rntuple::arrow::array::ArrayRef> = Vec::new();
        let mut items_per_chunk = Vec::new();
        for _ in 0..16 {
            let mut offsets = vec![0i64];
            for _ in 0..SYNTH_CHUNK {
                offsets.push(offsets[offsets.len() - 1] + rng.poisson(5.0) as i64);
            }
            let n = offsets[SYNTH_CHUNK] as usize;
            let start = (rng.next() as usize) % (pool.len() - n);
            let values = Float32Array::from(pool[start..start + n].to_vec());
            chunks.push(Arc::new(LargeListArray::try_new(item.clone(), rntuple::arrow::buffer::OffsetBuffer::new(offsets.into()), Arc::new(values), None)?));
            items_per_chunk.push(n as u64);
        }
        let schema = Arc::new(Schema::new(vec![Field::new("eventId", DataType::UInt64, false), Field::new("particles", DataType::LargeList(item), false)]));
        Ok(SyntheticData { chunks, items_per_chunk, schema })
    }

    /// Feeds `entries` entries with ids from `first_id` to `append`, chunk by chunk; returns
    /// the number of particle values written.
    pub(crate) fn feed(
        &self,
        first_id: u64,
        entries: u64,
        mut append: impl FnMut(&rntuple::arrow::array::RecordBatch) -> rntuple::Result<()>,
    ) -> Result<u64, Box<dyn std::error::Error + Send + Sync>> {
        use rntuple::arrow::array::{ArrayRef, RecordBatch, UInt64Array};
        use std::sync::Arc;
        let (mut done, mut items, mut k) = (0u64, 0u64, 0usize);
        while done < entries {
            let n = (entries - done).min(SYNTH_CHUNK as u64) as usize;
            let ids: ArrayRef = Arc::new(UInt64Array::from_iter_values(first_id + done..first_id + done + n as u64));
            let parts = self.chunks[k % self.chunks.len()].slice(0, n);
            items += if n == SYNTH_CHUNK {
                self.items_per_chunk[k % self.chunks.len()]
            } else {
                use rntuple::arrow::array::cast::AsArray;
                let o = parts.as_list::<i64>().value_offsets();
                (o[o.len() - 1] - o[0]) as u64
            };
            append(&RecordBatch::try_new(self.schema.clone(), vec![ids, parts])?)?;
            done += n as u64;
            k += 1;
        }
        Ok(items)
    }
}
