//! Check-digit and format validators for structured identifiers (cards, IBANs, national IDs, crypto).
//!
//! Every function is pure and allocation-free except where noted, takes ASCII bytes in *compact* form
//! (separators removed; letters upper-cased unless said otherwise) and returns `false` on anything
//! malformed instead of panicking. The recognizers in `ids.rs` decide which shape goes to which check.

use sha2::{Digest, Sha256};

#[inline]
fn all_digits(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_digit)
}

#[inline]
fn dv(b: u8) -> u32 {
    u32::from(b.wrapping_sub(b'0'))
}

/// Number of a run of ASCII digits (at most 9 of them, so it cannot overflow).
fn num(s: &[u8]) -> u32 {
    s.iter()
        .fold(0u32, |a, &b| a.saturating_mul(10).saturating_add(dv(b)))
}

fn all_same(s: &[u8]) -> bool {
    s.windows(2).all(|w| w[0] == w[1])
}

fn is_leap(y: u32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// True when `y-m-d` is a real calendar date.
pub fn valid_date(y: u32, m: u32, d: u32) -> bool {
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => return false,
    };
    d >= 1 && d <= days
}

// ---------------------------------------------------------------------------------------------
// Generic check-digit schemes
// ---------------------------------------------------------------------------------------------

/// Luhn (mod 10) over ASCII digits, check digit last.
pub fn luhn_valid(d: &[u8]) -> bool {
    if d.len() < 2 || !all_digits(d) {
        return false;
    }
    let mut sum = 0u32;
    for (i, &b) in d.iter().rev().enumerate() {
        let mut v = dv(b);
        if i % 2 == 1 {
            v *= 2;
            if v > 9 {
                v -= 9;
            }
        }
        sum += v;
    }
    sum % 10 == 0
}

const VERHOEFF_D: [[u8; 10]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const VERHOEFF_P: [[u8; 10]; 8] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];

/// Verhoeff dihedral-group check, check digit last.
pub fn verhoeff_valid(d: &[u8]) -> bool {
    if d.len() < 2 || !all_digits(d) {
        return false;
    }
    let mut c = 0usize;
    for (i, &b) in d.iter().rev().enumerate() {
        c = VERHOEFF_D[c][VERHOEFF_P[i % 8][dv(b) as usize] as usize] as usize;
    }
    c == 0
}

/// ISO 7064 MOD 11,10 (used by the German tax ID), check digit last.
pub fn iso7064_mod11_10_valid(d: &[u8]) -> bool {
    if d.len() < 2 || !all_digits(d) {
        return false;
    }
    let mut p = 10u32;
    for &b in &d[..d.len() - 1] {
        let mut s = (dv(b) + p) % 10;
        if s == 0 {
            s = 10;
        }
        p = (s * 2) % 11;
    }
    let check = (11 - p) % 10;
    check == dv(d[d.len() - 1])
}

/// Weighted digit sum.
fn wsum(d: &[u8], w: &[u32]) -> u32 {
    d.iter().zip(w).map(|(&b, &w)| dv(b) * w).sum()
}

// ---------------------------------------------------------------------------------------------
// Payment cards
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CardBrand {
    Visa,
    Mastercard,
    Amex,
    Discover,
    Jcb,
    DinersClub,
    UnionPay,
    Maestro,
    Mir,
    RuPay,
    Dankort,
    Troy,
}

/// Issuer by IIN range and length (no Luhn). Ranges from the public IIN tables.
pub fn card_brand(d: &[u8]) -> Option<CardBrand> {
    use CardBrand::*;
    if !all_digits(d) || d.len() < 12 || d.len() > 19 {
        return None;
    }
    let n = d.len();
    let p2 = num(&d[..2]);
    let p3 = num(&d[..3]);
    let p4 = num(&d[..4]);
    let p6 = num(&d[..6]);
    let brand = if p4 == 5019 && n == 16 {
        Dankort
    } else if d[0] == b'4' && matches!(n, 13 | 16 | 19) {
        Visa
    } else if ((51..=55).contains(&p2) || (2221..=2720).contains(&p4)) && n == 16 {
        Mastercard
    } else if (p2 == 34 || p2 == 37) && n == 15 {
        Amex
    } else if (2200..=2204).contains(&p4) && (16..=19).contains(&n) {
        Mir
    } else if (p4 == 6011
        || (644..=649).contains(&p3)
        || p2 == 65
        || (622126..=622925).contains(&p6))
        && (16..=19).contains(&n)
    {
        Discover
    } else if p2 == 35 && (16..=19).contains(&n) {
        // JCB is assigned 3528-3589; the rest of 35xx is unassigned and generators use all of it.
        Jcb
    } else if (p4 == 1800 || p4 == 2131) && n == 15 {
        Jcb
    } else if ((300..=305).contains(&p3) || p4 == 3095 || p2 == 36 || p2 == 38 || p2 == 39)
        && (14..=19).contains(&n)
    {
        DinersClub
    } else if p2 == 62 && (16..=19).contains(&n) {
        UnionPay
    } else if (8100..=8171).contains(&p4) && (16..=19).contains(&n) {
        UnionPay
    } else if (matches!(p4, 5018 | 5020 | 5038 | 5893 | 6304 | 6759 | 6761 | 6762 | 6763 | 6390)
        || (56..=58).contains(&p2)
        // 0604 is a legacy Maestro prefix still produced by common test-data generators.
        || p4 == 604)
        && (12..=19).contains(&n)
    {
        Maestro
    } else if (p2 == 60 || p2 == 81 || p2 == 82 || p3 == 508) && n == 16 {
        RuPay
    } else if p4 == 9792 && n == 16 {
        Troy
    } else {
        return None;
    };
    Some(brand)
}

/// A payment card number: known issuer range and length, and Luhn.
pub fn is_valid_card(d: &[u8]) -> bool {
    card_brand(d).is_some() && luhn_valid(d)
}

// ---------------------------------------------------------------------------------------------
// Banking
// ---------------------------------------------------------------------------------------------

/// IBAN length per country (SWIFT IBAN registry).
pub fn iban_length(cc: &[u8]) -> Option<usize> {
    if cc.len() != 2 {
        return None;
    }
    let n = match (cc[0], cc[1]) {
        (b'A', b'D') => 24,
        (b'A', b'E') => 23,
        (b'A', b'L') => 28,
        (b'A', b'T') => 20,
        (b'A', b'Z') => 28,
        (b'B', b'A') => 20,
        (b'B', b'E') => 16,
        (b'B', b'G') => 22,
        (b'B', b'H') => 22,
        (b'B', b'I') => 27,
        (b'B', b'R') => 29,
        (b'B', b'Y') => 28,
        (b'C', b'H') => 21,
        (b'C', b'R') => 22,
        (b'C', b'Y') => 28,
        (b'C', b'Z') => 24,
        (b'D', b'E') => 22,
        (b'D', b'J') => 27,
        (b'D', b'K') => 18,
        (b'D', b'O') => 28,
        (b'E', b'E') => 20,
        (b'E', b'G') => 29,
        (b'E', b'S') => 24,
        (b'F', b'I') => 18,
        (b'F', b'K') => 18,
        (b'F', b'O') => 18,
        (b'F', b'R') => 27,
        (b'G', b'B') => 22,
        (b'G', b'E') => 22,
        (b'G', b'I') => 23,
        (b'G', b'L') => 18,
        (b'G', b'R') => 27,
        (b'G', b'T') => 28,
        (b'H', b'N') => 28,
        (b'H', b'R') => 21,
        (b'H', b'U') => 28,
        (b'I', b'E') => 22,
        (b'I', b'L') => 23,
        (b'I', b'Q') => 23,
        (b'I', b'S') => 26,
        (b'I', b'T') => 27,
        (b'J', b'O') => 30,
        (b'K', b'W') => 30,
        (b'K', b'Z') => 20,
        (b'L', b'B') => 28,
        (b'L', b'C') => 32,
        (b'L', b'I') => 21,
        (b'L', b'T') => 20,
        (b'L', b'U') => 20,
        (b'L', b'V') => 21,
        (b'L', b'Y') => 25,
        (b'M', b'C') => 27,
        (b'M', b'D') => 24,
        (b'M', b'E') => 22,
        (b'M', b'K') => 19,
        (b'M', b'N') => 20,
        (b'M', b'R') => 27,
        (b'M', b'T') => 31,
        (b'M', b'U') => 30,
        (b'N', b'I') => 28,
        (b'N', b'L') => 18,
        (b'N', b'O') => 15,
        (b'O', b'M') => 23,
        (b'P', b'K') => 24,
        (b'P', b'L') => 28,
        (b'P', b'S') => 29,
        (b'P', b'T') => 25,
        (b'Q', b'A') => 29,
        (b'R', b'O') => 24,
        (b'R', b'S') => 22,
        (b'R', b'U') => 33,
        (b'S', b'A') => 24,
        (b'S', b'C') => 31,
        (b'S', b'D') => 18,
        (b'S', b'E') => 24,
        (b'S', b'I') => 19,
        (b'S', b'K') => 24,
        (b'S', b'M') => 27,
        (b'S', b'O') => 23,
        (b'S', b'T') => 25,
        (b'S', b'V') => 28,
        (b'T', b'L') => 23,
        (b'T', b'N') => 24,
        (b'T', b'R') => 26,
        (b'U', b'A') => 29,
        (b'V', b'A') => 22,
        (b'V', b'G') => 24,
        (b'X', b'K') => 20,
        (b'Y', b'E') => 30,
        _ => return None,
    };
    Some(n)
}

/// IBAN: upper-case compact form, registry length for its country, ISO 7064 mod 97 == 1.
pub fn is_valid_iban(c: &[u8]) -> bool {
    if c.len() < 15 || c.len() > 34 {
        return false;
    }
    if !(c[0].is_ascii_uppercase() && c[1].is_ascii_uppercase()) || !all_digits(&c[2..4]) {
        return false;
    }
    if iban_length(&c[..2]) != Some(c.len()) {
        return false;
    }
    if !c[4..]
        .iter()
        .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
    {
        return false;
    }
    let mut rem = 0u32;
    for &b in c[4..].iter().chain(&c[..4]) {
        if b.is_ascii_digit() {
            rem = (rem * 10 + dv(b)) % 97;
        } else {
            rem = (rem * 100 + (b - b'A') as u32 + 10) % 97;
        }
    }
    rem == 1
}

/// US ABA routing number: 9 digits, Federal Reserve prefix, 3-7-1 weights mod 10.
pub fn is_valid_aba(d: &[u8]) -> bool {
    if d.len() != 9 || !all_digits(d) || all_same(d) {
        return false;
    }
    let p = num(&d[..2]);
    if !((p <= 12) || (21..=32).contains(&p) || (61..=72).contains(&p) || p == 80) {
        return false;
    }
    wsum(d, &[3, 7, 1, 3, 7, 1, 3, 7, 1]) % 10 == 0
}

/// SWIFT/BIC shape: 4 bank letters, 2 country letters, 2 location alnum, optional 3 branch alnum.
pub fn is_swift_format(c: &[u8]) -> bool {
    (c.len() == 8 || c.len() == 11)
        && c[..6].iter().all(u8::is_ascii_uppercase)
        && c[6..]
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && iban_length(&c[4..6]).is_some() | is_common_non_iban_country(&c[4..6])
}

fn is_common_non_iban_country(cc: &[u8]) -> bool {
    matches!(
        cc,
        b"US"
            | b"CA"
            | b"AU"
            | b"NZ"
            | b"JP"
            | b"CN"
            | b"HK"
            | b"SG"
            | b"IN"
            | b"KR"
            | b"MX"
            | b"ZA"
            | b"AR"
            | b"CL"
            | b"CO"
            | b"PE"
            | b"ID"
            | b"MY"
            | b"TH"
            | b"PH"
            | b"VN"
            | b"TW"
            | b"NG"
            | b"KE"
            | b"MA"
    )
}

// ---------------------------------------------------------------------------------------------
// United States
// ---------------------------------------------------------------------------------------------

/// US SSN: area not 000/666/9xx, group not 00, serial not 0000, and not a famous published one.
pub fn is_valid_us_ssn(d: &[u8]) -> bool {
    if d.len() != 9 || !all_digits(d) || all_same(d) {
        return false;
    }
    let area = num(&d[..3]);
    let group = num(&d[3..5]);
    let serial = num(&d[5..]);
    if area == 0 || area == 666 || area >= 900 || group == 0 || serial == 0 {
        return false;
    }
    // Woolworth wallet card, advertising and documentation numbers.
    !matches!(d, b"078051120" | b"219099999" | b"457555462" | b"123456789")
}

/// US ITIN: 9xx, group 50-65, 70-88, 90-92 or 94-99.
pub fn is_valid_us_itin(d: &[u8]) -> bool {
    if d.len() != 9 || !all_digits(d) || d[0] != b'9' {
        return false;
    }
    let g = num(&d[3..5]);
    (50..=65).contains(&g)
        || (70..=88).contains(&g)
        || (90..=92).contains(&g)
        || (94..=99).contains(&g)
}

/// US NPI: 10 digits starting 1 or 2, Luhn over "80840" + the number.
pub fn is_valid_us_npi(d: &[u8]) -> bool {
    if d.len() != 10 || !all_digits(d) || !(d[0] == b'1' || d[0] == b'2') || all_same(&d[1..9]) {
        return false;
    }
    let mut buf = [0u8; 15];
    buf[..5].copy_from_slice(b"80840");
    buf[5..].copy_from_slice(d);
    luhn_valid(&buf)
}

/// DEA registration number: 2 letters (or letter + '9') and 7 digits with the DEA check digit.
pub fn is_valid_dea(c: &[u8]) -> bool {
    if c.len() != 9 || !all_digits(&c[2..]) {
        return false;
    }
    if !b"ABCDEFGHJKLMPRSTUX".contains(&c[0]) || !(c[1].is_ascii_uppercase() || c[1] == b'9') {
        return false;
    }
    let d = &c[2..];
    let s = dv(d[0]) + dv(d[2]) + dv(d[4]) + 2 * (dv(d[1]) + dv(d[3]) + dv(d[5]));
    s % 10 == dv(d[6])
}

/// US Medicare Beneficiary Identifier (11 chars, positions constrained; letters exclude S L O I B Z).
pub fn is_valid_us_mbi(c: &[u8]) -> bool {
    if c.len() != 11 {
        return false;
    }
    let alpha = |b: u8| b.is_ascii_uppercase() && !b"SLOIBZ".contains(&b);
    let an = |b: u8| alpha(b) || b.is_ascii_digit();
    let num_ = |b: u8| b.is_ascii_digit();
    (b'1'..=b'9').contains(&c[0])
        && alpha(c[1])
        && an(c[2])
        && num_(c[3])
        && alpha(c[4])
        && an(c[5])
        && num_(c[6])
        && alpha(c[7])
        && alpha(c[8])
        && num_(c[9])
        && num_(c[10])
}

// ---------------------------------------------------------------------------------------------
// United Kingdom
// ---------------------------------------------------------------------------------------------

/// NHS number: 10 digits, mod 11 with weights 10..2 (a check of 10 means invalid).
pub fn is_valid_uk_nhs(d: &[u8]) -> bool {
    if d.len() != 10 || !all_digits(d) || all_same(d) {
        return false;
    }
    let s = wsum(d, &[10, 9, 8, 7, 6, 5, 4, 3, 2]);
    let check = (11 - s % 11) % 11;
    check != 10 && check == dv(d[9])
}

/// UK National Insurance number: prefix rules, 6 digits, suffix A-D.
pub fn is_valid_uk_nino(c: &[u8]) -> bool {
    if c.len() != 9 || !all_digits(&c[2..8]) {
        return false;
    }
    let (a, b) = (c[0], c[1]);
    if !a.is_ascii_uppercase() || !b.is_ascii_uppercase() {
        return false;
    }
    if b"DFIQUV".contains(&a) || b"DFIQUVO".contains(&b) {
        return false;
    }
    if matches!(
        &c[..2],
        b"BG" | b"GB" | b"KN" | b"NK" | b"NT" | b"TN" | b"ZZ"
    ) {
        return false;
    }
    matches!(c[8], b'A'..=b'D')
}

// ---------------------------------------------------------------------------------------------
// Europe
// ---------------------------------------------------------------------------------------------

const NIF_LETTERS: &[u8; 23] = b"TRWAGMYFPDXBNJZSQVHLCKE";

/// Spanish DNI/NIF: 7-8 digits and the mod-23 letter.
pub fn is_valid_es_nif(c: &[u8]) -> bool {
    let n = c.len();
    if !(n == 9 || n == 8) || !all_digits(&c[..n - 1]) {
        return false;
    }
    let v: u32 = num(&c[..n - 1]);
    NIF_LETTERS[(v % 23) as usize] == c[n - 1]
}

/// Spanish NIE: X/Y/Z (0/1/2), 7 digits, mod-23 letter.
pub fn is_valid_es_nie(c: &[u8]) -> bool {
    if c.len() != 9 || !all_digits(&c[1..8]) {
        return false;
    }
    let lead = match c[0] {
        b'X' => 0,
        b'Y' => 1,
        b'Z' => 2,
        _ => return false,
    };
    let v = lead * 10_000_000 + num(&c[1..8]);
    NIF_LETTERS[(v % 23) as usize] == c[8]
}

/// Italian codice fiscale: 16 chars (omocodia letters allowed in digit slots) and its check letter.
pub fn is_valid_it_fiscal_code(c: &[u8]) -> bool {
    if c.len() != 16 {
        return false;
    }
    const OMO: &[u8] = b"LMNPQRSTUV";
    let digit_slot = |b: u8| b.is_ascii_digit() || OMO.contains(&b);
    let shape = c[..6].iter().all(u8::is_ascii_uppercase)
        && digit_slot(c[6])
        && digit_slot(c[7])
        && b"ABCDEHLMPRST".contains(&c[8])
        && digit_slot(c[9])
        && digit_slot(c[10])
        && c[11].is_ascii_uppercase()
        && c[12..15].iter().all(|&b| digit_slot(b))
        && c[15].is_ascii_uppercase();
    if !shape {
        return false;
    }
    // Values of characters in odd (1st, 3rd, ...) positions; digits map like A..J.
    const ODD: [u32; 26] = [
        1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24,
        23,
    ];
    let mut s = 0u32;
    for (i, &b) in c[..15].iter().enumerate() {
        let idx = if b.is_ascii_digit() {
            (b - b'0') as usize
        } else {
            (b - b'A') as usize
        };
        s += if i % 2 == 0 { ODD[idx] } else { idx as u32 };
    }
    (b'A' + (s % 26) as u8) == c[15]
}

/// Polish PESEL: 11 digits, weights 1-3-7-9, date with century-encoded month.
pub fn is_valid_pl_pesel(d: &[u8]) -> bool {
    if d.len() != 11 || !all_digits(d) || d.iter().all(|&b| b == b'0') {
        return false;
    }
    let s = wsum(d, &[1, 3, 7, 9, 1, 3, 7, 9, 1, 3]);
    if (10 - s % 10) % 10 != dv(d[10]) {
        return false;
    }
    let yy = num(&d[..2]);
    let mm = num(&d[2..4]);
    let dd = num(&d[4..6]);
    let (century, m) = match mm {
        1..=12 => (1900, mm),
        21..=32 => (2000, mm - 20),
        41..=52 => (2100, mm - 40),
        61..=72 => (2200, mm - 60),
        81..=92 => (1800, mm - 80),
        _ => return false,
    };
    valid_date(century + yy, m, dd)
}

/// Finnish henkilötunnus `DDMMYYCZZZQ` (C = century sign), check char over DDMMYYZZZ mod 31.
pub fn is_valid_fi_hetu(c: &[u8]) -> bool {
    if c.len() != 11 || !all_digits(&c[..6]) || !all_digits(&c[7..10]) {
        return false;
    }
    let century = match c[6] {
        b'+' => 1800,
        b'-' | b'Y' | b'X' | b'W' | b'V' | b'U' => 1900,
        b'A' | b'B' | b'C' | b'D' | b'E' | b'F' => 2000,
        _ => return false,
    };
    let (dd, mm, yy) = (num(&c[..2]), num(&c[2..4]), num(&c[4..6]));
    if !valid_date(century + yy, mm, dd) {
        return false;
    }
    let mut n = 0u64;
    for &b in c[..6].iter().chain(&c[7..10]) {
        n = n * 10 + dv(b) as u64;
    }
    const CHARS: &[u8; 31] = b"0123456789ABCDEFHJKLMNPRSTUVWXY";
    CHARS[(n % 31) as usize] == c[10]
}

/// Swedish personnummer, 10 (YYMMDDNNNC) or 12 (YYYYMMDDNNNC) digits: date (day+60 for
/// samordningsnummer) and Luhn over the 10-digit form.
pub fn is_valid_se_personnummer(d: &[u8]) -> bool {
    if !all_digits(d) {
        return false;
    }
    let (ten, year) = match d.len() {
        10 => (d, 1900 + num(&d[..2])),
        12 => {
            let y = num(&d[..4]);
            if !(1800..=2099).contains(&y) {
                return false;
            }
            (&d[2..], y)
        }
        _ => return false,
    };
    let mm = num(&ten[2..4]);
    let mut dd = num(&ten[4..6]);
    if dd > 60 {
        dd -= 60;
    }
    // For the short form the century is unknown; accept Feb 29 in any year.
    let y = if d.len() == 10 { 2000 } else { year };
    valid_date(y, mm, dd) && luhn_valid(ten)
}

/// Swedish organisationsnummer (public registry number): third digit >= 2, Luhn.
pub fn is_valid_se_orgnr(d: &[u8]) -> bool {
    d.len() == 10 && all_digits(d) && d[2] >= b'2' && luhn_valid(d) && !all_same(d)
}

/// German tax ID (Steuer-IdNr): 11 digits, no leading 0, ISO 7064 MOD 11,10. The BZSt issues
/// numbers whose first ten digits repeat exactly one digit, two or three times; a number that
/// repeats several digits (`62286775983`: 6, 2, 8 and 7 twice) was never issued, whatever its
/// check digit. Ten different digits (`12345678903`, the usual documentation sample) stay
/// accepted: a pasted sample stands where a real number would, and masking it costs nothing.
pub fn is_valid_de_steuer_id(d: &[u8]) -> bool {
    if d.len() != 11 || !all_digits(d) || d[0] == b'0' {
        return false;
    }
    let mut counts = [0u8; 10];
    for &b in &d[..10] {
        counts[(b - b'0') as usize] += 1;
    }
    if counts.iter().any(|&c| c > 3) || counts.iter().filter(|&&c| c > 1).count() > 1 {
        return false;
    }
    iso7064_mod11_10_valid(d)
}

/// German health insurance number (KVNR): letter + 8 digits + check digit.
pub fn is_valid_de_kvnr(c: &[u8]) -> bool {
    if c.len() != 10 || !c[0].is_ascii_uppercase() || !all_digits(&c[1..]) {
        return false;
    }
    let l = (c[0] - b'A' + 1) as u32;
    let mut digits = [l / 10, l % 10, 0, 0, 0, 0, 0, 0, 0, 0];
    for i in 0..8 {
        digits[2 + i] = dv(c[1 + i]);
    }
    let mut s = 0;
    for (i, &v) in digits.iter().enumerate() {
        let p = v * if i % 2 == 0 { 1 } else { 2 };
        s += p / 10 + p % 10;
    }
    s % 10 == dv(c[9])
}

/// Turkish T.C. Kimlik No: 11 digits, no leading 0, two check digits.
pub fn is_valid_tr_tckn(d: &[u8]) -> bool {
    if d.len() != 11 || !all_digits(d) || d[0] == b'0' {
        return false;
    }
    let g = |i: usize| dv(d[i]) as i32;
    let odd = g(0) + g(2) + g(4) + g(6) + g(8);
    let even = g(1) + g(3) + g(5) + g(7);
    let c10 = (odd * 7 - even).rem_euclid(10);
    if c10 != g(9) {
        return false;
    }
    let s: i32 = (0..10).map(g).sum();
    s % 10 == g(10)
}

/// German pension insurance number (Rentenversicherungsnummer): 2-digit area, birth date
/// `ddmmyy` (day may carry +50 when a date's serials run out), the birth-name initial, a 2-digit
/// serial and a check digit. The letter counts as its two-digit alphabet position; weights
/// 2,1,2,5,7,1,2,1,2,1,2,1; the digit sums of the products, mod 10.
pub fn is_valid_de_rvnr(c: &[u8]) -> bool {
    if c.len() != 12 || !all_digits(&c[..8]) || !c[8].is_ascii_uppercase() || !all_digits(&c[9..]) {
        return false;
    }
    let day = num(&c[2..4]);
    let month = num(&c[4..6]);
    let day = if day > 50 { day - 50 } else { day };
    if !(1..=31).contains(&day) || !(1..=12).contains(&month) {
        return false;
    }
    let l = u32::from(c[8] - b'A' + 1);
    let mut v = [0u32; 12];
    for i in 0..8 {
        v[i] = dv(c[i]);
    }
    v[8] = l / 10;
    v[9] = l % 10;
    v[10] = dv(c[9]);
    v[11] = dv(c[10]);
    const W: [u32; 12] = [2, 1, 2, 5, 7, 1, 2, 1, 2, 1, 2, 1];
    let s: u32 = v
        .iter()
        .zip(W)
        .map(|(&x, w)| {
            let p = x * w;
            p / 10 + p % 10
        })
        .sum();
    s % 10 == dv(c[11])
}

/// German lifelong physician number (LANR): 6-digit serial, check digit, 2-digit specialty.
/// Check: serial digits weighted 4,9,4,9,4,9, sum mod 10, subtracted from 10 (10 -> 0).
pub fn is_valid_de_lanr(d: &[u8]) -> bool {
    if d.len() != 9 || !all_digits(d) || all_same(&d[..6]) {
        return false;
    }
    let s = wsum(&d[..6], &[4, 9, 4, 9, 4, 9]);
    (10 - s % 10) % 10 == dv(d[6])
}

/// German Steuernummer in the 13-digit ELSTER form: the Land code (01-16) first. Leading-zero
/// numbers that pass the EAN-13 check are read as barcodes instead.
pub fn is_de_elster_tax_number(d: &[u8]) -> bool {
    if d.len() != 13 || !all_digits(d) {
        return false;
    }
    let land = num(&d[..2]);
    (1..=16).contains(&land) && !is_valid_ean13(d) && !all_same(&d[2..])
}

/// GS1 EAN-13 check digit (weights 1,3 alternating from the left).
pub fn is_valid_ean13(d: &[u8]) -> bool {
    if d.len() != 13 || !all_digits(d) {
        return false;
    }
    let s = wsum(&d[..12], &[1, 3, 1, 3, 1, 3, 1, 3, 1, 3, 1, 3]);
    (10 - s % 10) % 10 == dv(d[12])
}

/// ICAO 9303 check digit over `c[..n-1]` (digits as values, A=10..Z=35, '<' = 0; weights 7,3,1),
/// compared with the last character. Machine-readable passport and ID card numbers carry it.
pub fn icao_check_valid(c: &[u8]) -> bool {
    let Some((&last, body)) = c.split_last() else {
        return false;
    };
    if body.is_empty() || !last.is_ascii_digit() {
        return false;
    }
    let mut s = 0u32;
    for (i, &b) in body.iter().enumerate() {
        let v = match b {
            b'0'..=b'9' => dv(b),
            b'A'..=b'Z' => u32::from(b - b'A') + 10,
            b'<' => 0,
            _ => return false,
        };
        s = s.wrapping_add(v * [7, 3, 1][i % 3]);
    }
    s % 10 == dv(last)
}

/// German passport / identity card serial: 9 characters from the vowel-free alphabet
/// (C F G H J K L M N P R T V W X Y Z and digits), a letter first, ICAO check digit last.
pub fn is_valid_de_document_number(c: &[u8]) -> bool {
    const ALPHA: &[u8] = b"CFGHJKLMNPRTVWXYZ";
    c.len() == 9
        && ALPHA.contains(&c[0])
        && c[1..8]
            .iter()
            .all(|b| b.is_ascii_digit() || ALPHA.contains(b))
        && !all_same(&c[1..8])
        && icao_check_valid(c)
}

/// UK (DVLA) driving licence number, 16 characters: 5 surname characters (padded with 9s),
/// birth decade digit, month (+50 for women), day, year digit, 2 initials (9-padded), an
/// arbitrary digit, 2 check characters.
pub fn is_uk_driving_licence(c: &[u8]) -> bool {
    if c.len() != 16 || !c[0].is_ascii_uppercase() {
        return false;
    }
    let sur = &c[..5];
    // Once the 9-padding starts it runs to the end of the surname field.
    let pad = sur.iter().position(|&b| b == b'9').unwrap_or(5);
    if !sur[..pad].iter().all(u8::is_ascii_uppercase) || !sur[pad..].iter().all(|&b| b == b'9') {
        return false;
    }
    if !all_digits(&c[5..11]) {
        return false;
    }
    let month = num(&c[6..8]);
    let day = num(&c[8..10]);
    let month_ok = (1..=12).contains(&month) || (51..=62).contains(&month);
    if !month_ok || !(1..=31).contains(&day) {
        return false;
    }
    let init_ok = c[11].is_ascii_uppercase() && (c[12].is_ascii_uppercase() || c[12] == b'9');
    init_ok && c[13].is_ascii_digit() && c[14..].iter().all(u8::is_ascii_alphanumeric)
}

/// Philippine TIN: 9 digits (12 with a branch code); the 9th digit is the first eight weighted
/// 9..2, mod 11.
pub fn is_valid_ph_tin(d: &[u8]) -> bool {
    if !(d.len() == 9 || d.len() == 12) || !all_digits(d) || all_same(&d[..9]) {
        return false;
    }
    wsum(&d[..8], &[9, 8, 7, 6, 5, 4, 3, 2]) % 11 == dv(d[8])
}

/// Digits that only count up by one ("12345678", "01234567"): placeholder, not an identifier.
pub fn is_counting_run(d: &[u8]) -> bool {
    d.len() >= 6 && all_digits(d) && d.windows(2).all(|w| w[1] == w[0] + 1)
}

// ---------------------------------------------------------------------------------------------
// Asia-Pacific, Africa, Americas
// ---------------------------------------------------------------------------------------------

/// Singapore NRIC/FIN: S/T/F/G/M + 7 digits + check letter.
pub fn is_valid_sg_nric(c: &[u8]) -> bool {
    if c.len() != 9 || !all_digits(&c[1..8]) || !c[8].is_ascii_uppercase() {
        return false;
    }
    let s = wsum(&c[1..8], &[2, 7, 6, 5, 4, 3, 2]);
    let (off, table): (u32, &[u8; 11]) = match c[0] {
        b'S' => (0, b"JZIHGFEDCBA"),
        b'T' => (4, b"JZIHGFEDCBA"),
        b'F' => (0, b"XWUTRQPNMLK"),
        b'G' => (4, b"XWUTRQPNMLK"),
        b'M' => (3, b"KLJNPQRTUWX"),
        _ => return false,
    };
    let idx = ((s + off) % 11) as usize;
    // M-series uses its own rotated table.
    let idx = if c[0] == b'M' { 10 - idx } else { idx };
    table[idx] == c[8]
}

/// Australian TFN: 8 or 9 digits, weighted mod 11.
pub fn is_valid_au_tfn(d: &[u8]) -> bool {
    if !all_digits(d) || all_same(d) {
        return false;
    }
    match d.len() {
        9 => wsum(d, &[1, 4, 3, 7, 5, 8, 6, 9, 10]) % 11 == 0,
        8 => wsum(d, &[10, 7, 8, 4, 6, 3, 5, 1]) % 11 == 0,
        _ => false,
    }
}

/// Australian Business Number (public): 11 digits, subtract 1 from the first, weighted mod 89.
pub fn is_valid_au_abn(d: &[u8]) -> bool {
    if d.len() != 11 || !all_digits(d) || d[0] == b'0' {
        return false;
    }
    const W: [u32; 11] = [10, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
    let s: u32 = d
        .iter()
        .zip(W)
        .enumerate()
        .map(|(i, (&b, w))| (dv(b) - u32::from(i == 0)) * w)
        .sum();
    s % 89 == 0
}

/// Australian Company Number (public): 9 digits, weights 8..1, complement mod 10.
pub fn is_valid_au_acn(d: &[u8]) -> bool {
    if d.len() != 9 || !all_digits(d) {
        return false;
    }
    let s = wsum(d, &[8, 7, 6, 5, 4, 3, 2, 1]);
    (10 - s % 10) % 10 == dv(d[8])
}

/// Australian Medicare card: 10 or 11 digits, first 2-6, weights 1-3-7-9 on the first 8.
pub fn is_valid_au_medicare(d: &[u8]) -> bool {
    if !(d.len() == 10 || d.len() == 11) || !all_digits(d) || !(b'2'..=b'6').contains(&d[0]) {
        return false;
    }
    wsum(d, &[1, 3, 7, 9, 1, 3, 7, 9]) % 10 == dv(d[8])
}

/// Indian PAN: 5 letters (4th = holder type), 4 digits, letter.
pub fn is_valid_in_pan(c: &[u8]) -> bool {
    c.len() == 10
        && c[..5].iter().all(u8::is_ascii_uppercase)
        && all_digits(&c[5..9])
        && c[9].is_ascii_uppercase()
        && b"ABCFGHJLPT".contains(&c[3])
}

/// Indian PAN shape without the holder-type rule.
pub fn is_in_pan_shape(c: &[u8]) -> bool {
    c.len() == 10
        && c[..5].iter().all(u8::is_ascii_uppercase)
        && all_digits(&c[5..9])
        && c[9].is_ascii_uppercase()
}

/// Aadhaar: 12 digits, first 2-9, not a palindrome, Verhoeff.
pub fn is_valid_in_aadhaar(d: &[u8]) -> bool {
    if d.len() != 12 || !all_digits(d) || d[0] < b'2' {
        return false;
    }
    let palindrome = d.iter().eq(d.iter().rev());
    !palindrome && verhoeff_valid(d)
}

/// Korean resident registration kind by its gender/century digit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KrRegistration {
    /// Citizen (RRN), digit 1-4 (9/0 for 1800s).
    Resident,
    /// Foreigner (FRN), digit 5-8.
    Foreigner,
}

/// Korean RRN/FRN `YYMMDD` + 7 digits: returns the kind and whether the legacy check digit holds
/// (numbers issued since October 2020 no longer carry one).
pub fn kr_registration(d: &[u8]) -> Option<(KrRegistration, bool)> {
    if d.len() != 13 || !all_digits(d) {
        return None;
    }
    let g = d[6];
    let (century, kind) = match g {
        b'1' | b'2' => (1900, KrRegistration::Resident),
        b'3' | b'4' => (2000, KrRegistration::Resident),
        b'5' | b'6' => (1900, KrRegistration::Foreigner),
        b'7' | b'8' => (2000, KrRegistration::Foreigner),
        _ => return None,
    };
    if !valid_date(century + num(&d[..2]), num(&d[2..4]), num(&d[4..6])) {
        return None;
    }
    let s = wsum(d, &[2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5]);
    let check = (11 - s % 11) % 10;
    Some((kind, check == dv(d[12])))
}

/// Thai national ID: 13 digits, first 1-8, a real province code, weighted mod 11.
pub fn is_valid_th_tnin(d: &[u8]) -> bool {
    if d.len() != 13 || !all_digits(d) || !(b'1'..=b'8').contains(&d[0]) || all_same(d) {
        return false;
    }
    let prov = num(&d[1..3]);
    let prov_ok =
        matches!(prov, 10..=27 | 30..=49 | 50..=58 | 60..=67 | 70..=77 | 80..=86 | 90..=96);
    if !prov_ok {
        return false;
    }
    let s = wsum(d, &[13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
    (11 - s % 11) % 10 == dv(d[12])
}

/// South African ID: YYMMDD SSSS C A Z, citizenship 0-2, Luhn.
pub fn is_valid_za_id(d: &[u8]) -> bool {
    if d.len() != 13 || !all_digits(d) || d[10] > b'2' {
        return false;
    }
    let (yy, mm, dd) = (num(&d[..2]), num(&d[2..4]), num(&d[4..6]));
    // The century is not encoded; accept the date if it is real in either.
    if !(valid_date(1900 + yy, mm, dd) || valid_date(2000 + yy, mm, dd)) {
        return false;
    }
    luhn_valid(d)
}

/// Canadian SIN: 9 digits, Luhn, first digit not 0 or 8.
pub fn is_valid_ca_sin(d: &[u8]) -> bool {
    d.len() == 9 && all_digits(d) && d[0] != b'0' && d[0] != b'8' && !all_same(d) && luhn_valid(d)
}

// ---------------------------------------------------------------------------------------------
// Crypto addresses
// ---------------------------------------------------------------------------------------------

const B58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

fn b58_value(b: u8) -> Option<u32> {
    B58.iter().position(|&c| c == b).map(|p| p as u32)
}

/// Base58Check decode into `out` (big-endian bytes, leading-zero bytes kept); `None` on bad input.
fn base58_decode(s: &[u8], out: &mut [u8; 40]) -> Option<usize> {
    if s.is_empty() || s.len() > 50 {
        return None;
    }
    // Big integer as base-256 little-endian limbs.
    let mut buf = [0u8; 40];
    let mut len = 0usize;
    for &c in s {
        let mut carry = b58_value(c)?;
        for limb in buf.iter_mut().take(len) {
            carry += (*limb as u32) * 58;
            *limb = (carry & 0xff) as u8;
            carry >>= 8;
        }
        while carry > 0 {
            if len >= buf.len() {
                return None;
            }
            buf[len] = (carry & 0xff) as u8;
            len += 1;
            carry >>= 8;
        }
    }
    let zeros = s.iter().take_while(|&&c| c == b'1').count();
    let total = zeros + len;
    if total > out.len() {
        return None;
    }
    out[..zeros].fill(0);
    for i in 0..len {
        out[zeros + i] = buf[len - 1 - i];
    }
    Some(total)
}

/// Bitcoin legacy address (P2PKH `1...` / P2SH `3...`): Base58Check, 25 bytes, version 0 or 5.
pub fn is_valid_btc_base58(s: &[u8]) -> bool {
    if !(25..=35).contains(&s.len()) || !(s[0] == b'1' || s[0] == b'3') {
        return false;
    }
    let mut out = [0u8; 40];
    let Some(n) = base58_decode(s, &mut out) else {
        return false;
    };
    if n != 25 || !(out[0] == 0 || out[0] == 5) {
        return false;
    }
    let h1 = Sha256::digest(&out[..21]);
    let h2 = Sha256::digest(h1);
    h2[..4] == out[21..25]
}

const BECH32_CHARSET: &[u8; 32] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";

fn bech32_polymod(values: impl Iterator<Item = u8>) -> u32 {
    const GEN: [u32; 5] = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
    let mut chk = 1u32;
    for v in values {
        let b = chk >> 25;
        chk = ((chk & 0x1ffffff) << 5) ^ v as u32;
        for (i, g) in GEN.iter().enumerate() {
            if (b >> i) & 1 == 1 {
                chk ^= g;
            }
        }
    }
    chk
}

/// Bitcoin segwit address (`bc1`/`tb1`): bech32 for witness v0, bech32m for v1+, valid lengths.
/// Input must be all lower case or all upper case.
pub fn is_valid_btc_bech32(s: &[u8]) -> bool {
    if s.len() < 14 || s.len() > 90 {
        return false;
    }
    let lower = s.iter().any(u8::is_ascii_lowercase);
    let upper = s.iter().any(u8::is_ascii_uppercase);
    if lower && upper {
        return false;
    }
    let mut low = [0u8; 90];
    for (i, &b) in s.iter().enumerate() {
        low[i] = b.to_ascii_lowercase();
    }
    let s = &low[..s.len()];
    let Some(sep) = s.iter().rposition(|&b| b == b'1') else {
        return false;
    };
    let hrp = &s[..sep];
    if hrp != b"bc" && hrp != b"tb" {
        return false;
    }
    let data = &s[sep + 1..];
    if data.len() < 7 {
        return false;
    }
    let mut vals = [0u8; 90];
    for (i, &b) in data.iter().enumerate() {
        match BECH32_CHARSET.iter().position(|&c| c == b) {
            Some(p) => vals[i] = p as u8,
            None => return false,
        }
    }
    let vals = &vals[..data.len()];
    let expanded = hrp
        .iter()
        .map(|b| b >> 5)
        .chain(std::iter::once(0))
        .chain(hrp.iter().map(|b| b & 31));
    let pm = bech32_polymod(expanded.chain(vals.iter().copied()));
    let version = vals[0];
    let ok_const = if version == 0 {
        pm == 1
    } else {
        pm == 0x2bc830a3
    };
    if !ok_const || version > 16 {
        return false;
    }
    // Program length: 5-bit groups after the version, minus the 6 checksum symbols.
    let prog_bits = (vals.len() - 1 - 6) * 5;
    let prog_len = prog_bits / 8;
    if !(2..=40).contains(&prog_len) {
        return false;
    }
    version != 0 || prog_len == 20 || prog_len == 32
}

/// Ethereum address shape: `0x` + 40 hex digits (EIP-55 case is not verified: that needs Keccak).
pub fn is_eth_address_format(s: &[u8]) -> bool {
    s.len() == 42
        && s[0] == b'0'
        && (s[1] == b'x' || s[1] == b'X')
        && s[2..].iter().all(u8::is_ascii_hexdigit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luhn_and_cards() {
        assert!(luhn_valid(b"4111111111111111"));
        assert!(!luhn_valid(b"4111111111111112"));
        assert!(is_valid_card(b"4111111111111111"));
        assert!(is_valid_card(b"5019717010103742")); // Dankort
        assert!(is_valid_card(b"30569309025904")); // Diners
        assert!(is_valid_card(b"6759649826438453")); // Maestro
        assert!(is_valid_card(b"378282246310005")); // Amex
        assert!(is_valid_card(b"2221000000000009")); // Mastercard 2-series
        assert!(is_valid_card(b"180016070420458")); // JCB 15
        assert!(!is_valid_card(b"1234567812345670")); // Luhn ok, no issuer
        assert!(!is_valid_card(b"4111111111111")); // Visa 13 failing Luhn
        assert_eq!(card_brand(b"371449635398431"), Some(CardBrand::Amex));
        assert_eq!(card_brand(b"3714496353984310"), None);
    }

    #[test]
    fn iban() {
        assert!(is_valid_iban(b"DE89370400440532013000"));
        assert!(is_valid_iban(b"GB82WEST12345698765432"));
        assert!(is_valid_iban(b"MT84MALT011000012345MTLCAST001S"));
        assert!(!is_valid_iban(b"GB29NWBK60161331926810"));
        assert!(!is_valid_iban(b"DE8937040044053201300")); // length
        assert!(!is_valid_iban(b"XX89370400440532013000")); // country
        assert_eq!(iban_length(b"NO"), Some(15));
    }

    #[test]
    fn us_numbers() {
        assert!(is_valid_aba(b"011000015"));
        assert!(!is_valid_aba(b"011000016"));
        assert!(!is_valid_aba(b"123400000"));
        assert!(is_valid_us_ssn(b"078051121"));
        assert!(!is_valid_us_ssn(b"078051120"));
        assert!(!is_valid_us_ssn(b"666121234"));
        assert!(!is_valid_us_ssn(b"912121234"));
        assert!(!is_valid_us_ssn(b"123001234"));
        assert!(!is_valid_us_ssn(b"123450000"));
        assert!(is_valid_us_itin(b"911701234"));
        assert!(!is_valid_us_itin(b"911891234"));
        assert!(is_valid_us_npi(b"1245319599"));
        assert!(is_valid_us_npi(b"1234567893"));
        assert!(!is_valid_us_npi(b"3234567893"));
        assert!(!is_valid_us_npi(b"1234567894"));
        assert!(is_valid_dea(b"BB1388568"));
        assert!(is_valid_dea(b"K92993548"));
        assert!(!is_valid_dea(b"BG8207031"));
        assert!(is_valid_us_mbi(b"1EG4TE5MK73"));
        assert!(!is_valid_us_mbi(b"1EG4TE5OK73"));
        assert!(!is_valid_us_mbi(b"1BG4TE5MK73"));
    }

    #[test]
    fn uk_and_europe() {
        assert!(is_valid_uk_nhs(b"9434765919"));
        assert!(!is_valid_uk_nhs(b"9434765918"));
        assert!(is_valid_uk_nino(b"AA123456B"));
        assert!(!is_valid_uk_nino(b"NT998877A"));
        assert!(!is_valid_uk_nino(b"AB1234561"));
        assert!(is_valid_es_nif(b"12345678Z"));
        assert!(is_valid_es_nif(b"1111111G"));
        assert!(!is_valid_es_nif(b"12345678A"));
        assert!(is_valid_es_nie(b"X9613851N"));
        assert!(is_valid_es_nie(b"Y8063915Z"));
        assert!(!is_valid_es_nie(b"Y8063915Q"));
        assert!(is_valid_it_fiscal_code(b"RSSMRA85T10A562S"));
        assert!(!is_valid_it_fiscal_code(b"RSSMRA85T10A562T"));
        assert!(is_valid_pl_pesel(b"44051401458"));
        assert!(!is_valid_pl_pesel(b"44051401459"));
        assert!(!is_valid_pl_pesel(b"11110021111"));
        assert!(is_valid_fi_hetu(b"131052-308T"));
        assert!(is_valid_fi_hetu(b"020594X903P"));
        assert!(!is_valid_fi_hetu(b"111111-111A"));
        assert!(is_valid_se_personnummer(b"8712202384"));
        assert!(is_valid_se_personnummer(b"199109242397"));
        assert!(!is_valid_se_personnummer(b"8712202385"));
        assert!(is_valid_se_orgnr(b"5567037485"));
        assert!(is_valid_de_steuer_id(b"12345678903"));
        assert!(!is_valid_de_steuer_id(b"98765432100"));
        assert!(!is_valid_de_steuer_id(b"11112345678"));
        assert!(is_valid_de_steuer_id(b"86095742719")); // 7 twice
        assert!(is_valid_de_steuer_id(b"65929970489")); // 9 three times
        // Check digit right, but four digits repeat: never issued.
        assert!(iso7064_mod11_10_valid(b"62286775983"));
        assert!(!is_valid_de_steuer_id(b"62286775983"));
        assert!(is_valid_de_kvnr(b"A123456780"));
        assert!(!is_valid_de_kvnr(b"A123456787"));
        assert!(is_valid_tr_tckn(b"10000000146"));
        assert!(!is_valid_tr_tckn(b"76543210780"));
    }

    #[test]
    fn apac_africa_americas() {
        assert!(is_valid_sg_nric(b"S2740116C"));
        assert!(is_valid_sg_nric(b"F2346401L"));
        assert!(is_valid_sg_nric(b"G1122144R"));
        assert!(!is_valid_sg_nric(b"G1122144L"));
        assert!(is_valid_sg_nric(b"M4332674T"));
        assert!(!is_valid_sg_nric(b"S2740116D"));
        assert!(is_valid_au_tfn(b"876543210"));
        assert!(!is_valid_au_tfn(b"876543211"));
        assert!(is_valid_au_abn(b"51824753556"));
        assert!(!is_valid_au_abn(b"52824753556"));
        assert!(is_valid_au_acn(b"005499981"));
        assert!(is_valid_au_medicare(b"2123456701"));
        assert!(is_valid_in_pan(b"ABCPD1234Z"));
        assert!(!is_valid_in_pan(b"ABCND1234Z"));
        assert!(is_valid_in_aadhaar(b"312345678909"));
        assert!(!is_valid_in_aadhaar(b"123456789012"));
        assert!(!is_valid_in_aadhaar(b"312345678908"));
        assert_eq!(
            kr_registration(b"9601211021413"),
            Some((KrRegistration::Resident, true))
        );
        assert_eq!(
            kr_registration(b"9111245678901").map(|k| k.0),
            Some(KrRegistration::Foreigner)
        );
        assert_eq!(kr_registration(b"9603030021413"), None);
        assert!(is_valid_th_tnin(b"3456789012347"));
        assert!(!is_valid_th_tnin(b"3456789012346"));
        assert!(!is_valid_th_tnin(b"1294567890124"));
        assert!(is_valid_za_id(b"8001015009087"));
        assert!(!is_valid_za_id(b"8001015009086"));
        assert!(!is_valid_za_id(b"9913326789285"));
        assert!(is_valid_ca_sin(b"130692544"));
        assert!(!is_valid_ca_sin(b"130692545"));
        assert!(!is_valid_ca_sin(b"046454286"));
    }

    #[test]
    fn crypto() {
        assert!(is_valid_btc_base58(b"16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyZ"));
        assert!(is_valid_btc_base58(b"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy"));
        assert!(!is_valid_btc_base58(b"16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyZ2"));
        assert!(!is_valid_btc_base58(b"16Yeky6GMjeNkAiNcBY7ZhrLoMSgg1BoyY"));
        assert!(is_valid_btc_bech32(
            b"BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ"
        ));
        assert!(!is_valid_btc_bech32(
            b"bc1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ"
        ));
        assert!(is_valid_btc_bech32(
            b"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
        ));
        assert!(is_valid_btc_bech32(
            b"bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"
        ));
        assert!(!is_valid_btc_bech32(
            b"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr"
        ));
        assert!(is_eth_address_format(
            b"0x52908400098527886E0F7030069857D2E4169EE7"
        ));
        assert!(!is_eth_address_format(
            b"0x52908400098527886E0F7030069857D2E4169EE"
        ));
    }

    #[test]
    fn verhoeff_and_iso() {
        assert!(verhoeff_valid(b"2363"));
        assert!(!verhoeff_valid(b"2364"));
        assert!(iso7064_mod11_10_valid(b"12345678903"));
    }

    #[test]
    fn german_and_other_new_checks() {
        assert!(is_valid_de_rvnr(b"15070649C103"));
        assert!(is_valid_de_rvnr(b"65070803A019"));
        assert!(!is_valid_de_rvnr(b"65070803A012")); // check digit
        assert!(!is_valid_de_rvnr(b"15071349C103")); // month 13
        assert!(!is_valid_de_rvnr(b"150706491103")); // no letter
        assert!(is_valid_de_lanr(b"234567701"));
        assert!(!is_valid_de_lanr(b"123456901"));
        assert!(is_de_elster_tax_number(b"0281508150123"));
        assert!(!is_de_elster_tax_number(b"1781508150001")); // Land 17
        assert!(!is_de_elster_tax_number(b"4006381333931")); // not a Land code
        assert!(is_valid_ean13(b"4006381333931"));
        assert!(is_valid_de_document_number(b"F12345671"));
        assert!(is_valid_de_document_number(b"CZ6311T03"));
        assert!(!is_valid_de_document_number(b"C01234567")); // check digit
        assert!(!is_valid_de_document_number(b"A12345678")); // vowel first
        assert!(icao_check_valid(b"L01X00T44"));
        assert!(is_uk_driving_licence(b"MORGA657054SM9IJ"));
        assert!(is_uk_driving_licence(b"SMITH862310AB1CD"));
        assert!(is_uk_driving_licence(b"LEE99709235J99AB"));
        assert!(!is_uk_driving_licence(b"MORGA613054SM9IJ")); // month 13
        assert!(!is_uk_driving_licence(b"MO9GA607054SM9IJ")); // padding then letters
        assert!(is_valid_ph_tin(b"000123456"));
        assert!(is_valid_ph_tin(b"000123456001"));
        assert!(!is_valid_ph_tin(b"000123457000"));
        assert!(!is_valid_ph_tin(b"123456789"));
        assert!(is_counting_run(b"12345678"));
        assert!(!is_counting_run(b"12803456"));
    }
}
