//! Several entries handed over column by column (`rntuple_entry_fill_columns`): what `rntuple.hpp`'s
//! `EntryBinder` does with the entries it gathered, so that a value costs a typed push in the
//! caller's compiled code instead of a call and a type dispatch here. Everything is checked before
//! anything is appended: a call either appends all its entries or none.

use super::buffer::{wrong_c_type, wrong_kind, EntryBuf, Items, Shape, ENTRY_BATCH, ENTRY_BATCH_BYTES};
use crate::status::{CError, CResult};

/// One field's values for the entries of one call.
#[derive(Debug, Clone, Copy)]
pub struct ColumnIn<'a> {
    /// The field's slot (`rntuple_entry_field`).
    pub slot: u32,
    /// Scalars: one item per entry; collections: the entries' items back to back; strings: their
    /// UTF-8 bytes.
    pub items: Items<'a>,
    /// Collections and strings: `n + 1` offsets into `items` (entry `i` is
    /// `offsets[i]..offsets[i + 1]`); `None` for scalars.
    pub offsets: Option<&'a [i64]>,
    /// Whether the items are a string's bytes (`RNTUPLE_TYPE_STRING`) rather than `uint8_t` items.
    pub text: bool,
}

impl EntryBuf {
    /// Appends `n` whole entries given column by column: every field with a setter exactly once.
    /// Returns whether enough entries are gathered to go to the writer.
    pub fn fill_columns(&mut self, n: usize, columns: &[ColumnIn<'_>]) -> CResult<bool> {
        self.check_columns(n, columns)?;
        let mut bytes = 0;
        for c in columns {
            let Some(Some(s)) = self.slots.get_mut(c.slot as usize) else { continue };
            match c.offsets {
                None => s.values.extend_items(&c.items, 0..n),
                Some(offsets) => {
                    let (first, last) = (offsets[0] as usize, offsets[n] as usize);
                    let base = s.offsets.last().copied().unwrap_or(0) - offsets[0];
                    s.offsets.extend(offsets[1..].iter().map(|&o| base + o));
                    if c.text {
                        if let Items::U8(b) = c.items {
                            s.bytes.extend_from_slice(&b[first..last]);
                        }
                    } else {
                        s.values.extend_items(&c.items, first..last);
                    }
                }
            }
            bytes += c.items.bytes();
        }
        self.entries += n as u64;
        self.bytes += bytes;
        Ok(self.entries >= ENTRY_BATCH || self.bytes >= ENTRY_BATCH_BYTES)
    }

    /// The checks of [`EntryBuf::fill_columns`], before anything is appended.
    fn check_columns(&self, n: usize, columns: &[ColumnIn<'_>]) -> CResult<()> {
        if !self.all_settable {
            let missing: Vec<&str> = self.slots.iter().zip(&self.names).filter(|(s, _)| s.is_none()).map(|(_, (n, _))| n.as_str()).collect();
            return Err(CError::schema(format!("fields without typed setters ({}) cannot be filled entry by entry; write Arrow batches", missing.join(", "))));
        }
        if self.n_set > 0 {
            return Err(CError::state("an entry is being filled with setters: fill it before handing over columns"));
        }
        let mut seen = vec![false; self.slots.len()];
        for c in columns {
            let name = |k: u32| self.names.get(k as usize).map_or("?", |x| x.0.as_str());
            let slot = match self.slots.get(c.slot as usize) {
                Some(Some(s)) => s,
                Some(None) => return Err(CError::schema(format!("field '{}' has no typed setter", name(c.slot)))),
                None => return Err(CError::invalid(format!("field slot {} is past the {} top-level fields", c.slot, self.slots.len()))),
            };
            let seen_before = std::mem::replace(&mut seen[c.slot as usize], true);
            if seen_before {
                return Err(CError::invalid(format!("field '{}' is given twice", name(c.slot))));
            }
            let kind = match (slot.shape, c.text) {
                (Shape::String, true) => "string",
                (Shape::String, false) => return Err(wrong_kind(&self.names, c.slot, &format!("column of {}", c.items.c_type()))),
                (_, true) => return Err(wrong_kind(&self.names, c.slot, "string")),
                (Shape::Scalar, false) => "scalar",
                (Shape::List, false) => "collection",
            };
            if !c.text && !slot.values.accepts(&c.items) {
                return Err(wrong_c_type(&self.names, c.slot, slot.values.c_type(), c.items.c_type()));
            }
            match (slot.shape, c.offsets) {
                (Shape::Scalar, Some(_)) => return Err(CError::invalid(format!("field '{}': a scalar column takes no offsets", name(c.slot)))),
                (Shape::Scalar, None) if c.items.len() != n => {
                    return Err(CError::invalid(format!("field '{}': {} values for {n} entries", name(c.slot), c.items.len())));
                }
                (Shape::Scalar, None) => {}
                (_, None) => return Err(CError::null(&format!("offsets of the {kind} field '{}'", name(c.slot)))),
                (_, Some(offsets)) => check_offsets(offsets, n, c.items.len()).map_err(|why| CError::invalid(format!("field '{}': {why}", name(c.slot))))?,
            }
            if let (true, Items::U8(b), Some(o)) = (c.text, c.items, c.offsets) {
                check_text(b, o).map_err(|why| CError::invalid(format!("field '{}': {why}", name(c.slot))))?;
            }
        }
        let missing: Vec<&str> =
            seen.iter().zip(&self.slots).zip(&self.names).filter(|((seen, s), _)| !**seen && s.is_some()).map(|(_, (n, _))| n.as_str()).collect();
        if !missing.is_empty() {
            return Err(CError::invalid(format!("fields not given: {}", missing.join(", "))));
        }
        Ok(())
    }
}

/// `n + 1` offsets, non-negative and non-decreasing, the last at most `len`.
fn check_offsets(offsets: &[i64], n: usize, len: usize) -> Result<(), String> {
    if offsets.len().checked_sub(1) != Some(n) {
        return Err(format!("{} offsets for {n} entries (n + 1 expected)", offsets.len()));
    }
    if offsets[0] < 0 {
        return Err(format!("offset 0 is negative ({})", offsets[0]));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return Err(format!("offsets decrease at entry {i} ({} then {})", offsets[i], offsets[i + 1]));
    }
    if offsets[n] as u64 > len as u64 {
        return Err(format!("the last offset {} is past the {len} items", offsets[n]));
    }
    Ok(())
}

/// Every entry's bytes are UTF-8 (the offsets checked already).
fn check_text(bytes: &[u8], offsets: &[i64]) -> Result<(), String> {
    for (i, w) in offsets.windows(2).enumerate() {
        if let Err(e) = std::str::from_utf8(&bytes[w[0] as usize..w[1] as usize]) {
            return Err(format!("the string of entry {i} is not valid UTF-8 ({e})"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use rntuple::logical::typename::{parse, TypeExpr};

    fn buf() -> EntryBuf {
        let schema: Vec<(String, TypeExpr)> =
            [("n", "std::int32_t"), ("pt", "std::vector<float>"), ("tag", "std::string")].iter().map(|(n, t)| (n.to_string(), parse(t).unwrap())).collect();
        EntryBuf::new(&schema)
    }

    fn cols<'a>(n: &'a [i32], pt: &'a [f32], pt_off: &'a [i64], tag: &'a [u8], tag_off: &'a [i64]) -> [ColumnIn<'a>; 3] {
        [
            ColumnIn { slot: 0, items: Items::I32(n), offsets: None, text: false },
            ColumnIn { slot: 1, items: Items::F32(pt), offsets: Some(pt_off), text: false },
            ColumnIn { slot: 2, items: Items::U8(tag), offsets: Some(tag_off), text: true },
        ]
    }

    #[test]
    fn columns_append_after_entries_set_one_by_one() {
        let mut e = buf();
        e.set(0, 7i32).unwrap();
        e.set_vec(1, &[9.0f32]).unwrap();
        e.set_string(2, b"first").unwrap();
        e.fill().unwrap();
        // Offsets need not start at 0: only their differences count.
        let c = cols(&[1, 2, 3], &[0.0, 1.0, 2.0, 3.0], &[1, 1, 2, 4], b"abcde", &[0, 2, 2, 5]);
        assert!(!e.fill_columns(3, &c).unwrap());
        let b = e.take_batch().unwrap().unwrap();
        assert_eq!(b.num_rows(), 4);
        assert_eq!(b.column(0).as_primitive::<arrow_array::types::Int32Type>().values().to_vec(), [7, 1, 2, 3]);
        let l = b.column(1).as_list::<i64>();
        assert_eq!(l.value_offsets().to_vec(), [0, 1, 1, 2, 4]);
        assert_eq!(l.values().as_primitive::<arrow_array::types::Float32Type>().values().to_vec(), [9.0, 1.0, 2.0, 3.0]);
        let t = b.column(2).as_string::<i64>();
        assert_eq!((0..4).map(|i| t.value(i)).collect::<Vec<_>>(), ["first", "ab", "", "cde"]);
    }

    #[test]
    fn a_bad_column_appends_nothing_and_names_the_field() {
        let mut e = buf();
        let check = |e: &mut EntryBuf, c: &[ColumnIn<'_>], code: i32, text: &str| {
            let err = e.fill_columns(2, c).unwrap_err();
            assert_eq!(err.code, code, "{}", err.message);
            assert!(err.message.contains(text), "{} lacks {text}", err.message);
            assert_eq!(e.pending(), 0);
        };
        use crate::status::*;
        let good = cols(&[1, 2], &[1.0], &[0, 0, 1], b"ab", &[0, 1, 2]);
        let mut c = good;
        c[0].items = Items::I64(&[1, 2]);
        check(&mut e, &c, RNTUPLE_ERR_SCHEMA_MISMATCH, "field 'n'");
        let mut c = good;
        c[1].offsets = Some(&[0, 2, 1]);
        check(&mut e, &c, RNTUPLE_ERR_INVALID_ARGUMENT, "offsets decrease");
        let mut c = good;
        c[1].offsets = Some(&[0, 0, 5]);
        check(&mut e, &c, RNTUPLE_ERR_INVALID_ARGUMENT, "past the 1 items");
        let mut c = good;
        c[2].items = Items::U8(b"a\xff");
        check(&mut e, &c, RNTUPLE_ERR_INVALID_ARGUMENT, "entry 1 is not valid UTF-8");
        check(&mut e, &good[..2], RNTUPLE_ERR_INVALID_ARGUMENT, "fields not given: tag");
        let mut c = good;
        c[2].slot = 1;
        check(&mut e, &c, RNTUPLE_ERR_INVALID_ARGUMENT, "'pt' is given twice");
        let mut c = good;
        c[0].items = Items::I32(&[1]);
        check(&mut e, &c, RNTUPLE_ERR_INVALID_ARGUMENT, "1 values for 2 entries");
        let mut c = good;
        c[1].offsets = None;
        check(&mut e, &c, RNTUPLE_ERR_NULL_POINTER, "offsets of the collection field 'pt'");
        e.set(0, 1i32).unwrap();
        check(&mut e, &good, RNTUPLE_ERR_STATE, "being filled with setters");
    }
}
