//! Unit tests of `version`.
use super::*;

#[test]
fn driver_versions_parse_compare_and_print_as_read() {
    let a = DriverVersion::parse("580.159.04").unwrap();
    assert_eq!(a.to_string(), "580.159.04");
    let b = DriverVersion::parse("535.54.03").unwrap();
    assert!(b < a);
    assert!(DriverVersion::parse("535.104.05").unwrap() > b);
    assert_eq!(
        DriverVersion::parse("375.74").unwrap().to_string(),
        "375.74"
    );
    assert!(DriverVersion::parse("abc").is_none());
    assert!(DriverVersion::parse("580.1.2.3").is_none());
    assert!(DriverVersion::parse("").is_none());
}

#[test]
fn cuda_versions_from_text_and_api() {
    assert_eq!(CudaVersion::parse("12.4").unwrap().to_api(), 12040);
    assert_eq!(CudaVersion::parse("11040").unwrap().to_string(), "11.4");
    assert_eq!(CudaVersion::parse("12.4.127").unwrap().to_string(), "12.4");
    assert_eq!(cuda_api_to_string(12090), "12.9");
    assert_eq!(cuda_api_to_string(0), "none");
    assert!(CudaVersion::parse("twelve").is_none());
}

#[test]
fn cudnn_both_encodings() {
    assert_eq!(decode_cudnn(8907).as_deref(), Some("8.9.7"));
    assert_eq!(decode_cudnn(7605).as_deref(), Some("7.6.5"));
    assert_eq!(decode_cudnn(90100).as_deref(), Some("9.1.0"));
    assert_eq!(decode_cudnn(91900).as_deref(), Some("9.19.0"));
    assert_eq!(decode_cudnn(0), None);
}

#[test]
fn pep440_with_local_tags() {
    let v = Pep440::parse("2.1.0+cu121").unwrap();
    assert_eq!(v.release, vec![2, 1, 0]);
    assert_eq!(v.local_cuda().unwrap().to_string(), "12.1");
    let v = Pep440::parse("1.13.1+cu117.with.pypi.cudnn").unwrap();
    assert_eq!(v.local_cuda().unwrap().to_string(), "11.7");
    assert!(Pep440::parse("2.3.0+cpu").unwrap().is_cpu_tag());
    let v = Pep440::parse("2.16.0rc0").unwrap();
    assert_eq!(v.pre, Some(("rc".to_string(), 0)));
    assert!(Pep440::parse("not a version").is_none());
}

#[test]
fn dist_names_normalise() {
    assert_eq!(
        normalize_dist_name("nvidia_cuda_runtime_cu12"),
        "nvidia-cuda-runtime-cu12"
    );
    assert_eq!(normalize_dist_name("TF.Nightly"), "tf-nightly");
}
