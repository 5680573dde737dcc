//! See [`crate::knowledge`].
