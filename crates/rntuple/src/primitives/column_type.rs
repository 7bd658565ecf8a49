//! Column types of format 1.0 and their on-disk element sizes.

/// On-disk column types (format 1.0 numbering).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ColumnType {
    Bit,
    Byte,
    Char,
    Int8,
    UInt8,
    Int16,
    UInt16,
    Int32,
    UInt32,
    Int64,
    UInt64,
    Real16,
    Real32,
    Real64,
    Index32,
    Index64,
    Switch,
    SplitInt16,
    SplitUInt16,
    SplitInt32,
    SplitUInt32,
    SplitInt64,
    SplitUInt64,
    SplitReal32,
    SplitReal64,
    SplitIndex32,
    SplitIndex64,
    Real32Trunc,
    Real32Quant,
}

impl ColumnType {
    /// From the on-disk id; `None` for unknown ids (including 0x17 SplitReal16, which ROOT
    /// itself does not implement).
    pub fn from_u16(v: u16) -> Option<ColumnType> {
        use ColumnType::*;
        Some(match v {
            0x00 => Bit,
            0x01 => Byte,
            0x02 => Char,
            0x03 => Int8,
            0x04 => UInt8,
            0x05 => Int16,
            0x06 => UInt16,
            0x07 => Int32,
            0x08 => UInt32,
            0x09 => Int64,
            0x0A => UInt64,
            0x0B => Real16,
            0x0C => Real32,
            0x0D => Real64,
            0x0E => Index32,
            0x0F => Index64,
            0x10 => Switch,
            0x11 => SplitInt16,
            0x12 => SplitUInt16,
            0x13 => SplitInt32,
            0x14 => SplitUInt32,
            0x15 => SplitInt64,
            0x16 => SplitUInt64,
            0x18 => SplitReal32,
            0x19 => SplitReal64,
            0x1A => SplitIndex32,
            0x1B => SplitIndex64,
            0x1C => Real32Trunc,
            0x1D => Real32Quant,
            _ => return None,
        })
    }

    /// The on-disk id.
    pub fn to_u16(self) -> u16 {
        use ColumnType::*;
        match self {
            Bit => 0x00,
            Byte => 0x01,
            Char => 0x02,
            Int8 => 0x03,
            UInt8 => 0x04,
            Int16 => 0x05,
            UInt16 => 0x06,
            Int32 => 0x07,
            UInt32 => 0x08,
            Int64 => 0x09,
            UInt64 => 0x0A,
            Real16 => 0x0B,
            Real32 => 0x0C,
            Real64 => 0x0D,
            Index32 => 0x0E,
            Index64 => 0x0F,
            Switch => 0x10,
            SplitInt16 => 0x11,
            SplitUInt16 => 0x12,
            SplitInt32 => 0x13,
            SplitUInt32 => 0x14,
            SplitInt64 => 0x15,
            SplitUInt64 => 0x16,
            SplitReal32 => 0x18,
            SplitReal64 => 0x19,
            SplitIndex32 => 0x1A,
            SplitIndex64 => 0x1B,
            Real32Trunc => 0x1C,
            Real32Quant => 0x1D,
        }
    }

    /// The name ROOT uses (`kSplitReal32` without the `k`).
    pub fn name(self) -> &'static str {
        use ColumnType::*;
        match self {
            Bit => "Bit",
            Byte => "Byte",
            Char => "Char",
            Int8 => "Int8",
            UInt8 => "UInt8",
            Int16 => "Int16",
            UInt16 => "UInt16",
            Int32 => "Int32",
            UInt32 => "UInt32",
            Int64 => "Int64",
            UInt64 => "UInt64",
            Real16 => "Real16",
            Real32 => "Real32",
            Real64 => "Real64",
            Index32 => "Index32",
            Index64 => "Index64",
            Switch => "Switch",
            SplitInt16 => "SplitInt16",
            SplitUInt16 => "SplitUInt16",
            SplitInt32 => "SplitInt32",
            SplitUInt32 => "SplitUInt32",
            SplitInt64 => "SplitInt64",
            SplitUInt64 => "SplitUInt64",
            SplitReal32 => "SplitReal32",
            SplitReal64 => "SplitReal64",
            SplitIndex32 => "SplitIndex32",
            SplitIndex64 => "SplitIndex64",
            Real32Trunc => "Real32Trunc",
            Real32Quant => "Real32Quant",
        }
    }

    /// Fixed bits per element, or `None` for the variable-width Real32Trunc/Real32Quant.
    pub fn fixed_bits(self) -> Option<u16> {
        use ColumnType::*;
        Some(match self {
            Bit => 1,
            Byte | Char | Int8 | UInt8 => 8,
            Int16 | UInt16 | Real16 | SplitInt16 | SplitUInt16 => 16,
            Int32 | UInt32 | Real32 | Index32 | SplitInt32 | SplitUInt32 | SplitReal32 | SplitIndex32 => 32,
            Int64 | UInt64 | Real64 | Index64 | SplitInt64 | SplitUInt64 | SplitReal64 | SplitIndex64 => 64,
            Switch => 96,
            Real32Trunc | Real32Quant => return None,
        })
    }

    /// Whether this is an index (offset) column.
    pub fn is_index(self) -> bool {
        matches!(self, ColumnType::Index32 | ColumnType::Index64 | ColumnType::SplitIndex32 | ColumnType::SplitIndex64)
    }

    /// The encoding applied on disk, for `info`.
    pub fn encoding(self) -> &'static str {
        use ColumnType::*;
        match self {
            Bit => "bit-packed",
            SplitInt16 | SplitInt32 | SplitInt64 => "zigzag+split",
            SplitUInt16 | SplitUInt32 | SplitUInt64 | SplitReal32 | SplitReal64 => "split",
            SplitIndex32 | SplitIndex64 => "delta+split",
            Real32Trunc => "truncated float, bit-packed",
            Real32Quant => "quantized float, bit-packed",
            Real16 => "IEEE half",
            _ => "plain",
        }
    }
}
