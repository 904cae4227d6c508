//! Kubernetes resource quantities (`500m`, `1.5`, `2Gi`, `100M`, `1e3`) read
//! into whole canonical units and written back for display.
//!
//! The grammar and rounding are upstream's `resource.Quantity`
//! (k8s.io/apimachinery `pkg/api/resource/quantity.go`): a signed decimal
//! number, then a binary suffix (`Ki` … `Ei`), a decimal SI suffix (`n` `u`
//! `m` `k` `M` `G` `T` `P` `E`) or a decimal exponent (`e3`, `E-2`). An
//! amount is rounded up to the unit asked for, as `MilliValue()` and
//! `Value()` do (away from zero). Nothing here panics: a malformed or
//! overflowing quantity is a [`QuantityError`].

use std::fmt;

/// Why a quantity could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantityError {
    /// Not a quantity in upstream's grammar.
    Malformed,
    /// A quantity whose amount does not fit in an `i64` of the unit asked for.
    Overflow,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QuantityError::Malformed => "not a quantity",
            QuantityError::Overflow => "quantity out of range",
        })
    }
}

impl std::error::Error for QuantityError {}

/// Digits beyond this many make a mantissa rollcall will not hold (an `i64`
/// has 19; upstream keeps arbitrary precision but no request needs it).
const MAX_DIGITS: usize = 36;

/// A quantity as written: `mantissa × 10^exp10 × 2^exp2`, sign apart.
struct Parsed {
    negative: bool,
    mantissa: u128,
    exp10: i32,
    exp2: u32,
}

/// Reads `text` in whole units (bytes, counts), rounded up like `Value()`.
pub fn parse_units(text: &str) -> Result<i64, QuantityError> {
    scaled(&parse(text)?, 0)
}

/// Reads `text` in thousandths (millicores for cpu), rounded up like
/// `MilliValue()`.
pub fn parse_milli(text: &str) -> Result<i64, QuantityError> {
    scaled(&parse(text)?, 3)
}

fn parse(text: &str) -> Result<Parsed, QuantityError> {
    let text = text.trim();
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let number_len = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_len);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return Err(QuantityError::Malformed);
    }
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    if digits.len() > MAX_DIGITS {
        return Err(QuantityError::Overflow);
    }
    let mantissa = if digits.is_empty() {
        0
    } else {
        digits
            .parse::<u128>()
            .map_err(|_| QuantityError::Malformed)?
    };
    let (suffix_exp10, exp2) = suffix_exponents(suffix)?;
    let fraction_len = i32::try_from(fraction.len()).map_err(|_| QuantityError::Overflow)?;
    Ok(Parsed {
        negative,
        mantissa,
        exp10: suffix_exp10 - fraction_len,
        exp2,
    })
}

/// The powers of ten and of two a suffix stands for.
fn suffix_exponents(suffix: &str) -> Result<(i32, u32), QuantityError> {
    let known = match suffix {
        "" => Some((0, 0)),
        "n" => Some((-9, 0)),
        "u" => Some((-6, 0)),
        "m" => Some((-3, 0)),
        "k" => Some((3, 0)),
        "M" => Some((6, 0)),
        "G" => Some((9, 0)),
        "T" => Some((12, 0)),
        "P" => Some((15, 0)),
        "E" => Some((18, 0)),
        "Ki" => Some((0, 10)),
        "Mi" => Some((0, 20)),
        "Gi" => Some((0, 30)),
        "Ti" => Some((0, 40)),
        "Pi" => Some((0, 50)),
        "Ei" => Some((0, 60)),
        _ => None,
    };
    if let Some(exponents) = known {
        return Ok(exponents);
    }
    // A decimal exponent: `e` or `E` and a signed integer.
    let exponent = suffix
        .strip_prefix(['e', 'E'])
        .ok_or(QuantityError::Malformed)?;
    let unsigned = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return Err(QuantityError::Malformed);
    }
    let value: i32 = exponent.parse().map_err(|_| QuantityError::Overflow)?;
    if value.unsigned_abs() > 1_000 {
        return Err(QuantityError::Overflow);
    }
    Ok((value, 0))
}

/// The amount in units of `10^-unit_exp10`, rounded away from zero.
fn scaled(parsed: &Parsed, unit_exp10: i32) -> Result<i64, QuantityError> {
    if parsed.mantissa == 0 {
        return Ok(0);
    }
    let exp10 = parsed.exp10 + unit_exp10;
    let mut numerator = parsed
        .mantissa
        .checked_mul(1u128 << parsed.exp2)
        .ok_or(QuantityError::Overflow)?;
    let magnitude = if exp10 >= 0 {
        let power = 10u128
            .checked_pow(exp10.unsigned_abs())
            .ok_or(QuantityError::Overflow)?;
        numerator = numerator
            .checked_mul(power)
            .ok_or(QuantityError::Overflow)?;
        numerator
    } else {
        match 10u128.checked_pow(exp10.unsigned_abs()) {
            Some(divisor) => numerator.div_ceil(divisor),
            // Smaller than any unit, and not zero: rounds up to one.
            None => 1,
        }
    };
    let magnitude = i64::try_from(magnitude).map_err(|_| QuantityError::Overflow)?;
    Ok(if parsed.negative {
        -magnitude
    } else {
        magnitude
    })
}

/// A cpu amount in millicores as people write it: `500m`, `2`, `1.5`.
pub fn format_milli(millis: i64) -> String {
    if millis % 1000 == 0 {
        (millis / 1000).to_string()
    } else {
        format!("{millis}m")
    }
}

/// Bytes with the largest binary suffix that leaves a whole or one-decimal
/// number: `512Mi`, `1.5Gi`, `1000` (exact when whole, else one decimal,
/// for display only).
pub fn format_bytes(bytes: i64) -> String {
    const SUFFIXES: [&str; 6] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let magnitude = bytes.unsigned_abs();
    let sign = if bytes < 0 { "-" } else { "" };
    for (index, suffix) in SUFFIXES.iter().enumerate().rev() {
        let unit = 1u64 << (10 * (index + 1));
        if magnitude < unit {
            continue;
        }
        if magnitude.is_multiple_of(unit) {
            return format!("{sign}{}{suffix}", magnitude / unit);
        }
        let tenths = (u128::from(magnitude) * 10).div_ceil(u128::from(unit));
        if tenths.is_multiple_of(10) {
            return format!("{sign}{}{suffix}", tenths / 10);
        }
        return format!("{sign}{}.{}{suffix}", tenths / 10, tenths % 10);
    }
    bytes.to_string()
}

/// Bytes as an exact quantity for the API (`512Mi` when a binary suffix
/// divides it, else the plain number): what serialising writes back.
pub fn format_bytes_exact(bytes: i64) -> String {
    const SUFFIXES: [&str; 6] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    if bytes != 0 {
        for (index, suffix) in SUFFIXES.iter().enumerate().rev() {
            let unit = 1i64 << (10 * (index + 1));
            if bytes % unit == 0 {
                return format!("{}{suffix}", bytes / unit);
            }
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows from upstream's quantity tests (`quantity_test.go`
    /// `TestQuantityParse`, `TestQuantityValue`/`MilliValue` rounding up).
    #[test]
    fn parses_as_upstream_quantity_does() {
        let units = [
            ("2Gi", 2 << 30),
            ("100M", 100_000_000),
            ("128974848", 128_974_848),
            ("129e6", 129_000_000),
            ("123Mi", 123 << 20),
            ("1e3", 1_000),
            ("1E3", 1_000),
            ("1k", 1_000),
            ("1Ki", 1_024),
            ("1.5Gi", 3 << 29),
            ("0.1", 1),  // rounded up, as Value() does
            ("100m", 1), // a tenth of a byte is still a byte
            ("1n", 1),
            ("0", 0),
            ("0.0", 0),
            ("+5", 5),
            ("-5", -5),
            (".5", 1),
            ("5.", 5),
            ("1E", 1_000_000_000_000_000_000),
            ("7Ei", 7 << 60),
        ];
        for (text, want) in units {
            assert_eq!(parse_units(text), Ok(want), "{text}");
        }
        let millis = [
            ("500m", 500),
            ("1.5", 1_500),
            ("2", 2_000),
            ("0.1", 100),
            ("0.0001", 1), // upstream rounds sub-millicore requests up
            ("100u", 1),
            ("1e-3", 1),
            ("250m", 250),
            ("3900m", 3_900),
        ];
        for (text, want) in millis {
            assert_eq!(parse_milli(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn malformed_and_absurd_quantities_are_errors_not_panics() {
        for text in [
            "", "m", "abc", "1.2.3", "1x", "1Gb", "1e", "1e+", "--1", "1 Gi", "Gi", ".", "1ee3",
        ] {
            assert_eq!(parse_units(text), Err(QuantityError::Malformed), "{text:?}");
        }
        for text in [
            "9Ei",
            "99999999999999999999",
            "1e30",
            "1e999999999999",
            "123456789012345678901234567890123456789",
        ] {
            assert_eq!(parse_units(text), Err(QuantityError::Overflow), "{text:?}");
        }
        assert_eq!(
            parse_milli("9223372036854775807"),
            Err(QuantityError::Overflow)
        );
        assert_eq!(parse_units("1e-999"), Ok(1));
    }

    #[test]
    fn formats_for_display() {
        assert_eq!(format_milli(500), "500m");
        assert_eq!(format_milli(2_000), "2");
        assert_eq!(format_milli(0), "0");
        assert_eq!(format_bytes(512 << 20), "512Mi");
        assert_eq!(format_bytes(3 << 29), "1.5Gi");
        assert_eq!(format_bytes(1_000), "1000");
        assert_eq!(format_bytes(1_000_000_000), "953.7Mi");
        assert_eq!(format_bytes_exact(3 << 29), "1536Mi");
        assert_eq!(format_bytes_exact(1_000), "1000");
        assert_eq!(format_bytes_exact(0), "0");
    }
}
