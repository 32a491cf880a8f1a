//! Byte-class bit masks over 64-byte chunks, for the word scans of several recognizers: where
//! words start is found sixteen bytes at a time with SIMD compares (SSE2 on x86_64, scalar
//! elsewhere, through `wide`), so prose without candidates costs a few instructions a byte.

use wide::u8x16;

/// Bit j describes byte j of the chunk; bytes past its end belong to no class.
#[derive(Clone, Copy, Default)]
pub(crate) struct Masks {
    /// ASCII letters.
    pub letters: u64,
    /// ASCII upper-case letters.
    pub upper: u64,
    /// ASCII digits.
    pub digits: u64,
    /// ASCII letters, digits and '_' (word bytes of code and `whole_word`).
    pub word: u64,
    /// ASCII letters and digits, and every byte of a multi-byte character (>= 0x80).
    pub alnum_or_high: u64,
    /// Bytes that can start a multi-byte letter of the Latin-1 supplement and beyond (>= 0xC3).
    pub lead: u64,
}

#[inline(always)]
fn in_range(v: u8x16, lo: u8, hi: u8) -> u8x16 {
    v.max(u8x16::splat(lo)).cmp_eq(v) & v.min(u8x16::splat(hi)).cmp_eq(v)
}

#[inline(always)]
fn bits(m: u8x16) -> u64 {
    // One bit per byte in the low 16 bits.
    u64::from(m.move_mask() as u16)
}

/// The masks of `chunk` (at most 64 bytes). Inlined always, so a caller pays only for the
/// classes it reads.
#[inline(always)]
pub(crate) fn masks(chunk: &[u8]) -> Masks {
    let mut m = Masks::default();
    for (k, part) in chunk.chunks(16).take(4).enumerate() {
        // A short last part is padded with zeros, which belong to no class. A whole part is
        // loaded as it is: the padding copy's variable length made every part a `memmove` call
        // (2.5% of the rule stage).
        let a = <[u8; 16]>::try_from(part).unwrap_or_else(|_| {
            let mut a = [0u8; 16];
            a[..part.len()].copy_from_slice(part);
            a
        });
        let v = u8x16::new(a);
        let shift = 16 * k;
        let letters = in_range(v | u8x16::splat(0x20), b'a', b'z');
        let digits = in_range(v, b'0', b'9');
        let alnum = letters | digits;
        m.letters |= bits(letters) << shift;
        m.upper |= bits(in_range(v, b'A', b'Z')) << shift;
        m.digits |= bits(digits) << shift;
        m.word |= bits(alnum | v.cmp_eq(u8x16::splat(b'_'))) << shift;
        m.alnum_or_high |= bits(alnum | v.max(u8x16::splat(0x80)).cmp_eq(v)) << shift;
        m.lead |= bits(v.max(u8x16::splat(0xC3)).cmp_eq(v)) << shift;
    }
    m
}

/// Index of the first byte in `b[from..]` within `lo..=hi`, sixteen bytes at a time: such a
/// scan touches every byte of the text, so it sets its recognizer's speed.
pub(crate) fn find_in_range(b: &[u8], from: usize, lo: u8, hi: u8) -> Option<usize> {
    let mut i = from;
    while i + 16 <= b.len() {
        let mut a = [0u8; 16];
        a.copy_from_slice(&b[i..i + 16]);
        let m = bits(in_range(u8x16::new(a), lo, hi));
        if m != 0 {
            return Some(i + m.trailing_zeros() as usize);
        }
        i += 16;
    }
    b.get(i..)?
        .iter()
        .position(|c| (lo..=hi).contains(c))
        .map(|o| i + o)
}

/// Calls `f` with the offset of every byte of `b` that `pick` selects, in order. `pick` gets
/// the chunk's masks and whether the byte before the chunk was selected by `carry_of` (so a
/// condition on the previous byte crosses chunk boundaries); `f` returns the offset from which
/// to go on (offsets below it are skipped).
#[inline(always)]
pub(crate) fn for_each(
    b: &[u8],
    pick: impl Fn(&Masks, u64) -> u64,
    carry_of: impl Fn(&Masks) -> u64,
    mut f: impl FnMut(usize) -> usize,
) {
    let mut carry = 0u64;
    let mut resume = 0usize;
    for (ci, chunk) in b.chunks(64).enumerate() {
        let m = masks(chunk);
        let mut sel = pick(&m, carry);
        carry = carry_of(&m) >> 63;
        let base = ci * 64;
        while sel != 0 {
            let i = base + sel.trailing_zeros() as usize;
            sel &= sel - 1;
            if i >= resume {
                resume = f(i).max(i + 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_agree_with_byte_tests_and_selection_crosses_chunks() {
        let text: Vec<u8> = (0..300u32).map(|i| (i * 37 % 256) as u8).collect();
        for (ci, chunk) in text.chunks(64).enumerate() {
            let m = masks(chunk);
            for (j, &c) in chunk.iter().enumerate() {
                let bit = |x: u64| x >> j & 1 == 1;
                assert_eq!(bit(m.letters), c.is_ascii_alphabetic(), "{ci}:{j}");
                assert_eq!(bit(m.upper), c.is_ascii_uppercase());
                assert_eq!(bit(m.digits), c.is_ascii_digit());
                assert_eq!(bit(m.word), c.is_ascii_alphanumeric() || c == b'_');
                assert_eq!(bit(m.alnum_or_high), c.is_ascii_alphanumeric() || c >= 0x80);
                assert_eq!(bit(m.lead), c >= 0xC3);
            }
            for j in chunk.len()..64 {
                assert_eq!(m.letters >> j & 1, 0);
            }
        }
        // Word starts, with a word running across the 64-byte boundary.
        let s = format!("{}abc def", "x".repeat(62));
        let mut got = Vec::new();
        for_each(
            s.as_bytes(),
            |m, carry| m.letters & !(m.letters << 1 | carry),
            |m| m.letters,
            |i| {
                got.push(i);
                i
            },
        );
        assert_eq!(got, vec![0, 66]);
        // The first byte in a range, from any offset, past the SIMD blocks into the tail.
        let t = format!("{}7 and Z{}9", "x".repeat(40), "y".repeat(3));
        let b = t.as_bytes();
        for from in 0..b.len() {
            for (lo, hi) in [(b'0', b'9'), (b'A', b'Z')] {
                let want = (from..b.len()).find(|&i| (lo..=hi).contains(&b[i]));
                assert_eq!(find_in_range(b, from, lo, hi), want, "{from}");
            }
        }
        assert_eq!(find_in_range(b, b.len() + 3, b'0', b'9'), None);
    }
}
