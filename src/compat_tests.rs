//! Unit tests of `compat`: minor-version compatibility and its PTX-JIT limit.
use super::*;

fn m() -> Matrix {
    Matrix::embedded().unwrap()
}

fn facts(m: &Matrix, v: &str, os: Os) -> DriverFacts {
    let version = DriverVersion::parse(v);
    DriverFacts {
        version,
        cuda: version.as_ref().and_then(|x| m.driver_cuda(x)),
        os,
    }
}

fn c(s: &str) -> CudaVersion {
    CudaVersion::parse(s).unwrap()
}

fn min_of(r: Runs) -> String {
    match r {
        Runs::TooOld(Some(req)) => req.driver.to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
fn minor_version_compatibility_within_a_major() {
    let m = m();
    let d = facts(&m, "535.104.05", Os::Linux); // CUDA 12.2
    assert_eq!(driver_runs(&m, &d, c("12.6"), false), Runs::Yes);
    assert_eq!(driver_runs(&m, &d, c("12.2"), false), Runs::Yes);
    // PTX built with 12.6 needs the 12.6 GA driver.
    assert_eq!(min_of(driver_runs(&m, &d, c("12.6"), true)), "560.28.03");
    // Across majors MVC does not help.
    assert_eq!(min_of(driver_runs(&m, &d, c("13.0"), false)), "580");
}

#[test]
fn older_drivers() {
    let m = m();
    let d = facts(&m, "470.82.01", Os::Linux); // CUDA 11.4
    assert_eq!(min_of(driver_runs(&m, &d, c("12.1"), false)), "525.60.13");
    assert_eq!(driver_runs(&m, &d, c("11.8"), false), Runs::Yes);
    // R450 before 450.80.02 is below CUDA 11's MVC minimum.
    let d = facts(&m, "450.51.05", Os::Linux);
    assert_eq!(min_of(driver_runs(&m, &d, c("11.8"), false)), "450.80.02");
    // CUDA 10.x has no MVC: its GA driver.
    let d = facts(&m, "418.39", Os::Linux);
    assert_eq!(min_of(driver_runs(&m, &d, c("10.2"), false)), "440.33");
}

#[test]
fn newer_drivers_run_older_builds() {
    let m = m();
    let d = facts(&m, "580.159.04", Os::Linux);
    for v in ["10.2", "11.8", "12.8", "13.0"] {
        assert_eq!(driver_runs(&m, &d, c(v), true), Runs::Yes, "{v}");
    }
}

#[test]
fn windows_drivers_use_their_own_column() {
    let m = m();
    let d = facts(&m, "551.61", Os::Windows); // R550 → CUDA 12.4
    assert_eq!(driver_runs(&m, &d, c("12.6"), false), Runs::Yes);
    assert_eq!(min_of(driver_runs(&m, &d, c("12.6"), true)), "560.76");
    // 13.x has no Windows minimum in the notes: too old, requirement unknown.
    assert_eq!(driver_runs(&m, &d, c("13.0"), false), Runs::TooOld(None));
}

#[test]
fn unknown_driver_is_unknown() {
    let m = m();
    let d = DriverFacts {
        version: None,
        cuda: None,
        os: Os::Linux,
    };
    assert_eq!(driver_runs(&m, &d, c("12.1"), false), Runs::Unknown);
}

#[test]
fn best_torch_for_a_driver_and_gpus() {
    let m = m();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // Driver 535 (12.2) with an RTX 3070: the newest release with a CUDA 12 variant → 2.14 cu126.
    let (row, v) = best_torch(&m, &facts(&m, "535.104.05", Os::Linux), &s(&["8.6"])).unwrap();
    assert_eq!((row.torch.as_str(), v.tag.as_str()), ("2.14", "cu126"));
    // Driver 580 with a GTX 1080 (6.1): cu13x dropped Pascal, cu126 still has 6.0 cubins.
    let (row, v) = best_torch(&m, &facts(&m, "580.95.05", Os::Linux), &s(&["6.1"])).unwrap();
    assert_eq!((row.torch.as_str(), v.tag.as_str()), ("2.14", "cu126"));
    // Driver 580 with an RTX 5090 (12.0): cu132.
    let (_, v) = best_torch(&m, &facts(&m, "580.95.05", Os::Linux), &s(&["12.0"])).unwrap();
    assert_eq!(v.tag, "cu132");
    // Driver 470 (11.4) with a K80 (3.7): the cu118 builds (through 2.7) still carry sm_37.
    let (row, v) = best_torch(&m, &facts(&m, "470.82.01", Os::Linux), &s(&["3.7"])).unwrap();
    assert_eq!((row.torch.as_str(), v.tag.as_str()), ("2.7", "cu118"));
}
