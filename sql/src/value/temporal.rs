//! Dates, times, timestamps and intervals written as ISO 8601 text.

use super::*;

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (H. Hinnant's `civil_from_days`).
pub(super) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// (year, month, day) to days since 1970-01-01 (`days_from_civil`).
pub(super) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub(super) fn push_date(s: &mut String, unix_days: i64) {
    let (y, m, d) = civil_from_days(unix_days);
    if y > 9999 {
        let _ = write!(s, "+{y}");
    } else if y < 0 {
        let _ = write!(s, "-{:04}", -y);
    } else {
        let _ = write!(s, "{y:04}");
    }
    let _ = write!(s, "-{m:02}-{d:02}");
}

/// `HH:MM:SS[.ffffff]` with trailing zeros of the fraction trimmed.
pub(super) fn push_time(s: &mut String, micros: i64) {
    let secs = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    let _ = write!(
        s,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    );
    push_fraction(s, frac);
}

pub(super) fn push_fraction(s: &mut String, frac_micros: i64) {
    if frac_micros != 0 {
        let digits = format!("{frac_micros:06}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
}

/// `+HH:MM[:SS]` for an offset in seconds east of UTC.
pub(super) fn push_offset(s: &mut String, east: i64) {
    let abs = east.abs();
    let _ = write!(
        s,
        "{}{:02}:{:02}",
        if east < 0 { '-' } else { '+' },
        abs / 3600,
        abs / 60 % 60
    );
    if abs % 60 != 0 {
        let _ = write!(s, ":{:02}", abs % 60);
    }
}

pub(super) fn date(pg_days: i32) -> String {
    match pg_days {
        i32::MAX => "infinity".into(),
        i32::MIN => "-infinity".into(),
        d => {
            let mut s = String::with_capacity(10);
            push_date(&mut s, i64::from(d) + PG_EPOCH_DAYS);
            s
        }
    }
}

pub(super) fn time_of_day(micros: i64) -> String {
    let mut s = String::with_capacity(15);
    push_time(&mut s, micros);
    s
}

/// Microseconds since 2000-01-01 (UTC for `timestamptz`) in ISO 8601.
pub(super) fn timestamp(pg_micros: i64, utc: bool) -> String {
    match pg_micros {
        i64::MAX => "infinity".into(),
        i64::MIN => "-infinity".into(),
        t => {
            // Work in days from PostgreSQL's epoch: shifting the microseconds
            // to 1970 would overflow near the end of the timestamp range.
            let mut s = String::with_capacity(27);
            push_date(&mut s, t.div_euclid(USECS_PER_DAY) + PG_EPOCH_DAYS);
            s.push('T');
            push_time(&mut s, t.rem_euclid(USECS_PER_DAY));
            if utc {
                s.push('Z');
            }
            s
        }
    }
}

/// An interval as PostgreSQL prints it with `IntervalStyle = iso_8601`:
/// each field keeps its own sign, zero fields are left out, zero is `PT0S`.
pub(super) fn interval(micros: i64, days: i32, months: i32) -> String {
    // PostgreSQL 17's infinite intervals.
    if months == i32::MAX && days == i32::MAX && micros == i64::MAX {
        return "infinity".into();
    }
    if months == i32::MIN && days == i32::MIN && micros == i64::MIN {
        return "-infinity".into();
    }
    let (years, months) = (months / 12, months % 12);
    let hours = micros / 3_600_000_000;
    let rest = micros - hours * 3_600_000_000;
    let minutes = rest / 60_000_000;
    let rest = rest - minutes * 60_000_000;
    let (secs, frac) = (rest / 1_000_000, rest % 1_000_000);
    if years == 0 && months == 0 && days == 0 && micros == 0 {
        return "PT0S".into();
    }
    let mut s = String::from("P");
    let part = |s: &mut String, n: i64, unit: char| {
        if n != 0 {
            let _ = write!(s, "{n}{unit}");
        }
    };
    part(&mut s, i64::from(years), 'Y');
    part(&mut s, i64::from(months), 'M');
    part(&mut s, i64::from(days), 'D');
    if micros != 0 {
        s.push('T');
    }
    part(&mut s, hours, 'H');
    part(&mut s, minutes, 'M');
    if secs != 0 || frac != 0 {
        if secs < 0 || frac < 0 {
            s.push('-');
        }
        let _ = write!(s, "{}", secs.abs());
        push_fraction(&mut s, frac.abs());
        s.push('S');
    }
    s
}
