//! Unit tests of `python`.
use super::*;

#[test]
fn dist_info_names() {
    assert_eq!(
        dist_from_dir_name("nvidia_cuda_runtime_cu12-12.9.79.dist-info").unwrap(),
        ("nvidia-cuda-runtime-cu12".into(), "12.9.79".into())
    );
    assert_eq!(
        dist_from_dir_name("torch-2.7.1.dist-info").unwrap(),
        ("torch".into(), "2.7.1".into())
    );
    assert_eq!(
        dist_from_dir_name("jax_cuda12_plugin-0.4.30.dist-info")
            .unwrap()
            .0,
        "jax-cuda12-plugin"
    );
    assert_eq!(
        dist_from_dir_name("cupy-12.0.0-py3.10.egg-info").unwrap(),
        ("cupy".into(), "12.0.0".into())
    );
    assert!(dist_from_dir_name("torch").is_none());
}

#[test]
fn deep_output_tagged_json() {
    let ok = "noise\nGPUDOCTOR_DEEP {\"result\": \"success\", \"torch\": null}\n";
    assert!(parse_deep_output(ok).unwrap().is_found());
    assert!(parse_deep_output("nothing here").is_none());
    assert!(!parse_deep_output("GPUDOCTOR_DEEP {bad").unwrap().is_found());
}
