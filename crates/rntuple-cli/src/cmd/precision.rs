//! `--half`, `--truncate` and `--quantize`: reduced-precision float fields for the commands that
//! write (`import-json`, `skim`), as ROOT's `SetHalfPrecision`, `SetTruncated`, `SetQuantized`;
//! `--streamer`: class fields written as ROOT's `RStreamerField`.

use rntuple::write::{ColumnOptions, FloatRepr};

/// The reduced-precision options of a command that writes.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct Precision {
    /// Store a float/double field as IEEE half precision (16 bits); repeatable. A field path
    /// (`muon.pt`, `jets._0`; a vector's name applies to its items).
    #[arg(long = "half", value_name = "FIELD")]
    half: Vec<String>,
    /// Keep the top BITS (10..31) of a float/double field's float32 pattern (rounds towards
    /// zero); repeatable.
    #[arg(long = "truncate", value_name = "FIELD:BITS")]
    truncate: Vec<String>,
    /// Store a float/double field as a BITS-bit integer (1..32) over [MIN, MAX]; values outside
    /// are an error; repeatable.
    #[arg(long = "quantize", value_name = "FIELD:MIN:MAX:BITS", allow_hyphen_values = true)]
    quantize: Vec<String>,
    /// Write a class field as ROOT's `RStreamerField` (each entry's object streamed whole, the
    /// class's StreamerInfo records in the file); repeatable.
    #[arg(long = "streamer", value_name = "FIELD")]
    streamer: Vec<String>,
}

impl Precision {
    /// The column options these flags ask for; a malformed flag is an error naming it.
    pub(crate) fn column_options(&self) -> Result<ColumnOptions, Box<dyn std::error::Error>> {
        let mut out = ColumnOptions::new();
        let mut add = |field: &str, r: FloatRepr, flag: &str| -> Result<(), Box<dyn std::error::Error>> {
            if field.is_empty() {
                return Err(format!("{flag}: the field name is empty").into());
            }
            r.validate().map_err(|e| format!("{flag} {field}: {e}"))?;
            out.set(field, r);
            Ok(())
        };
        for f in &self.half {
            add(f, FloatRepr::Half, "--half")?;
        }
        let bits =
            |s: &str, flag: &str, arg: &str| s.trim().parse::<u8>().map_err(|_| format!("{flag} {arg}: BITS must be a small non-negative integer, got '{s}'"));
        for a in &self.truncate {
            let (field, b) = a.rsplit_once(':').ok_or_else(|| format!("--truncate {a}: expected FIELD:BITS"))?;
            add(field, FloatRepr::Truncated { bits: bits(b, "--truncate", a)? }, "--truncate")?;
        }
        for a in &self.quantize {
            // FIELD:MIN:MAX:BITS, split from the right (the field path has no colon).
            let parts: Vec<&str> = a.rsplitn(4, ':').collect();
            let [b, max, min, field] = parts[..] else { return Err(format!("--quantize {a}: expected FIELD:MIN:MAX:BITS").into()) };
            let num = |s: &str| s.trim().parse::<f64>().map_err(|_| format!("--quantize {a}: '{s}' is not a number"));
            add(field, FloatRepr::Quantized { min: num(min)?, max: num(max)?, bits: bits(b, "--quantize", a)? }, "--quantize")?;
        }
        for f in &self.streamer {
            if f.is_empty() {
                return Err("--streamer: the field name is empty".into());
            }
            out.set_streamer(f);
        }
        Ok(out)
    }
}
