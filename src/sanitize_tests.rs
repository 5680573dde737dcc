//! Unit tests of `sanitize`.
use super::*;

#[test]
fn strips_escape_sequences_and_bidi() {
    assert_eq!(clean("ok\x1b[31mred\x07"), "ok[31mred");
    assert_eq!(clean("a\u{202E}b\u{2066}c"), "abc");
    assert_eq!(clean("tab\there"), "tab here");
    assert_eq!(clean_line("abcdef", 3), "abc…");
}
