use super::*;

fn m() -> Matrix {
    Matrix::embedded().unwrap()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

#[test]
fn runs_join_consecutive_releases() {
    let all = s(&["1.13", "2.0", "2.1", "2.2", "2.3"]);
    assert_eq!(runs(&all, &s(&["1.13", "2.0", "2.1"])), "1.13–2.1");
    assert_eq!(runs(&all, &s(&["2.0", "2.2", "2.3"])), "2.0, 2.2–2.3");
    assert_eq!(runs(&all, &s(&["2.3"])), "2.3");
    assert_eq!(runs(&all, &[]), "-");
}

#[test]
fn table_pads_each_column_to_its_widest_cell() {
    let t = table(&["a", "bb"], &[s(&["xyz", "1"]), s(&["q", "22"])]);
    assert_eq!(t, "  a    bb\n  xyz  1\n  q    22\n");
}

#[test]
fn cuda_lines_join_drivers_branches_and_builds() {
    let m = m();
    let lines = cuda_lines(&m);
    let l = lines.iter().find(|l| l.cuda == "12.8").unwrap();
    // CUDA 12.8 GA ships driver 570.26 (release notes, Table 3); R570 reports 12.8.
    assert_eq!(l.ga_linux.as_deref(), Some("570.26"));
    assert_eq!(l.branches, vec![570]);
    assert!(l.torch.contains(&"2.7".to_string()));
    assert!(
        !l.torch.contains(&"2.6".to_string()),
        "2.6 had no cu128 wheel"
    );
    assert!(l.cudnn.iter().any(|c| c.starts_with("9.10.2")));
    // 12.7 was never a toolkit: no line for it.
    assert!(!lines.iter().any(|l| l.cuda == "12.7"));
    // TensorFlow 2.16 was built with 12.3.
    let l = lines.iter().find(|l| l.cuda == "12.3").unwrap();
    assert!(l.tensorflow.contains(&"2.16".to_string()));
}

#[test]
fn arch_lines_say_which_releases_run_on_each_architecture() {
    let m = m();
    let lines = arch_lines(&m);
    let k80 = lines.iter().find(|l| l.cc == "3.7").unwrap();
    assert_eq!(k80.arch, "Kepler");
    assert!(k80.gpus.contains(&"k80".to_string()));
    assert_eq!(k80.last_driver_branch, Some(470));
    // The cu118 wheels kept sm_37 up to 2.7; 2.8 has no CUDA 11 wheel.
    assert!(k80.torch_sass.contains(&"2.7".to_string()));
    assert!(!k80.torch_sass.contains(&"2.8".to_string()));
    let rtx50 = lines.iter().find(|l| l.cc == "12.0").unwrap();
    assert_eq!(rtx50.min_driver.as_deref(), Some("570.26"));
    assert!(rtx50.torch_sass.contains(&"2.7".to_string()));
    assert!(!rtx50.torch_sass.contains(&"2.6".to_string()));
    // JAX's CUDA 13 wheels need 7.5+: not on Volta.
    let volta = lines.iter().find(|l| l.cc == "7.0").unwrap();
    assert!(volta.jax.iter().all(|j| !j.ends_with("cuda13")));
}

#[test]
fn render_prints_the_three_tables_or_one() {
    let m = m();
    let all = render(&m, None);
    for head in [
        "PyTorch:",
        "TensorFlow:",
        "JAX:",
        "Per CUDA version",
        "Per GPU architecture",
    ] {
        assert!(all.contains(head), "{head}");
    }
    let one = render(&m, Some(View::Cuda));
    assert!(one.contains("Per CUDA version") && !one.contains("PyTorch:"));
    let v = to_json(&m);
    assert_eq!(
        v["frameworks"]["torch"].as_array().unwrap().len(),
        m.pytorch.len()
    );
    assert_eq!(v["architectures"].as_array().unwrap().len(), m.ccs.len());
}
