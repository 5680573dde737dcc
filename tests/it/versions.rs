//! Property tests on version normalisation: PEP 440 framework versions (with local tags and
//! pre-releases), NVIDIA driver versions, CUDA's integer encoding and cuDNN's two encodings, all
//! compared through semver.

#![allow(clippy::print_stderr, clippy::unwrap_used, clippy::expect_used)]

use gpudoctor::version::{decode_cudnn, CudaVersion, DriverVersion, Pep440};
use proptest::prelude::*;
use std::cmp::Ordering;

fn release() -> impl Strategy<Value = (u64, u64, u64)> {
    (0u64..30, 0u64..30, 0u64..200)
}

fn pre() -> impl Strategy<Value = Option<(&'static str, u64)>> {
    prop_oneof![
        Just(None),
        (prop_oneof![Just("a"), Just("b"), Just("rc")], 0u64..10).prop_map(Some),
    ]
}

fn local() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(""),
        Just("+cu121"),
        Just("+cpu"),
        Just("+cu117.with.pypi.cudnn"),
        Just("+rocm6.2")
    ]
}

proptest! {
    #[test]
    fn release_order_is_numeric_order(a in release(), b in release(), la in local(), lb in local()) {
        let va = Pep440::parse(&format!("{}.{}.{}{la}", a.0, a.1, a.2)).unwrap();
        let vb = Pep440::parse(&format!("{}.{}.{}{lb}", b.0, b.1, b.2)).unwrap();
        prop_assert_eq!(va.cmp_public(&vb), a.cmp(&b));
        prop_assert_eq!(va.to_semver().cmp_precedence(&vb.to_semver()), a.cmp(&b));
    }

    #[test]
    fn pre_releases_sort_before_their_release(r in release(), p in pre(), q in pre()) {
        let text = |p: Option<(&str, u64)>| match p {
            Some((k, n)) => format!("{}.{}.{}{k}{n}", r.0, r.1, r.2),
            None => format!("{}.{}.{}", r.0, r.1, r.2),
        };
        let rank = |p: Option<(&str, u64)>| match p {
            Some(("a", n)) => (0, n),
            Some(("b", n)) => (1, n),
            Some((_, n)) => (2, n),
            None => (3, 0),
        };
        let (vp, vq) = (Pep440::parse(&text(p)).unwrap(), Pep440::parse(&text(q)).unwrap());
        prop_assert_eq!(vp.cmp_public(&vq), rank(p).cmp(&rank(q)));
    }

    #[test]
    fn dev_releases_sort_before_alpha(r in release(), n in 0u64..5, m in 0u64..5) {
        let dev = Pep440::parse(&format!("{}.{}.{}.dev{n}", r.0, r.1, r.2)).unwrap();
        let alpha = Pep440::parse(&format!("{}.{}.{}a{m}", r.0, r.1, r.2)).unwrap();
        prop_assert_eq!(dev.cmp_public(&alpha), Ordering::Less);
    }

    #[test]
    fn local_tags_do_not_change_the_public_order(r in release(), la in local(), lb in local()) {
        let a = Pep440::parse(&format!("{}.{}.{}{la}", r.0, r.1, r.2)).unwrap();
        let b = Pep440::parse(&format!("{}.{}.{}{lb}", r.0, r.1, r.2)).unwrap();
        prop_assert_eq!(a.cmp_public(&b), Ordering::Equal);
    }

    #[test]
    fn a_fourth_release_number_still_orders(r in release(), x in 0u64..100, y in 0u64..100) {
        let a = Pep440::parse(&format!("{}.{}.{}.{x}", r.0, r.1, r.2)).unwrap();
        let b = Pep440::parse(&format!("{}.{}.{}.{y}", r.0, r.1, r.2)).unwrap();
        prop_assert_eq!(a.cmp_public(&b), x.cmp(&y));
    }

    #[test]
    fn driver_versions_print_as_read_and_order_like_semver(a in (300u32..700, 0u32..200, 0u32..100), b in (300u32..700, 0u32..200, 0u32..100)) {
        let ta = format!("{}.{}.{:02}", a.0, a.1, a.2);
        let tb = format!("{}.{}.{:02}", b.0, b.1, b.2);
        let (da, db) = (DriverVersion::parse(&ta).unwrap(), DriverVersion::parse(&tb).unwrap());
        prop_assert_eq!(da.to_string(), ta);
        prop_assert_eq!(da.cmp(&db), a.cmp(&b));
        prop_assert_eq!(da.to_semver().cmp(&db.to_semver()), a.cmp(&b));
    }

    #[test]
    fn cuda_api_encoding_round_trips(major in 1u32..30, minor in 0u32..10) {
        let c = CudaVersion { major, minor };
        prop_assert_eq!(CudaVersion::from_api(c.to_api()), Some(c));
        prop_assert_eq!(CudaVersion::parse(&c.to_string()), Some(c));
        prop_assert_eq!(CudaVersion::parse(&c.to_api().to_string()), Some(c));
    }

    #[test]
    fn cudnn_encodings(minor in 0u64..10, patch in 0u64..100, major8 in 1u64..9, minor9 in 0u64..100) {
        // Up to 8.x: major*1000 + minor*100 + patch (minor < 10).
        prop_assert_eq!(decode_cudnn(major8 * 1000 + minor * 100 + patch), Some(format!("{major8}.{minor}.{patch}")));
        // 9.x: major*10000 + minor*100 + patch.
        prop_assert_eq!(decode_cudnn(90000 + minor9 * 100 + patch), Some(format!("9.{minor9}.{patch}")));
    }
}

#[test]
fn the_examples_of_the_issue() {
    let v = |s: &str| Pep440::parse(s).unwrap();
    assert_eq!(v("2.1.0+cu121").to_semver().to_string(), "2.1.0+cu121");
    assert_eq!(v("2.16.0rc0").to_semver().to_string(), "2.16.0-rc.0");
    assert_eq!(
        v("1.13.1+cu117.with.pypi.cudnn").to_semver().to_string(),
        "1.13.1+cu117.with.pypi.cudnn"
    );
    assert_eq!(v("2.16.0rc0").cmp_public(&v("2.16.0")), Ordering::Less);
    assert_eq!(
        DriverVersion::parse("580.159.04")
            .unwrap()
            .to_semver()
            .to_string(),
        "580.159.4"
    );
    assert_eq!(CudaVersion::parse("12040").unwrap().to_string(), "12.4");
    assert_eq!(decode_cudnn(8907).as_deref(), Some("8.9.7"));
    assert_eq!(decode_cudnn(90100).as_deref(), Some("9.1.0"));
}
